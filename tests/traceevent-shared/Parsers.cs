// The TraceEvent parsers our three TraceEvent programs register, written once
// and compiled into each (tools/oracle, tests/conformance, bench/traceevent
// list this file in their csproj).  Registering a parser is what makes
// TraceEvent decode (and, for the CLR parser, rename) its events, so which
// set a program registers decides what it compares.
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace NetTraceShared
{
    internal static class Parsers
    {
        // Only the generic parsers: every event keeps its stream identity
        // (the CLR parser renames some, e.g. runtime event 39 GCDynamicEvent
        // becomes GC/CommittedUsage with the synthetic id 65524).
        public static void RegisterGeneric(EventPipeEventSource source)
        {
            source.Dynamic.All += _ => { };
            new SampleProfilerTraceEventParser(source).All += _ => { };
            new EventPipeTraceEventParser(source).All += _ => { };
        }

        // Every parser that has typed payloads for a runtime trace: the
        // runtime, rundown, private, sample-profiler and EventPipe providers,
        // and the dynamic (EventSource) one, so PayloadNames/PayloadValue are
        // TraceEvent's typed view of every event.
        public static void RegisterTyped(EventPipeEventSource source)
        {
            source.Clr.All += _ => { };
            new ClrRundownTraceEventParser(source).All += _ => { };
            new ClrPrivateTraceEventParser(source).All += _ => { };
            new SampleProfilerTraceEventParser(source).All += _ => { };
            new EventPipeTraceEventParser(source).All += _ => { };
            source.Dynamic.All += _ => { };
        }
    }
}
