// The TraceEvent side of libnettrace's conformance check (make conformance):
// what Microsoft.Diagnostics.Tracing.TraceEvent reads from a trace, printed in
// the formats of the nettrace tool so that tests/conformance/compare.py can
// put the two side by side.
//
//   Conformance info FILE                 like `nettrace info --json FILE`
//   Conformance samples FILE [--ips OUT]  like `nettrace samples FILE`, frames
//                                         resolved by TraceLog; --ips also
//                                         writes the same lines with every
//                                         frame as its raw 0x<ip>
//   Conformance events FILE               every event with its name, PayloadNames
//                                         and PayloadValue(i) as JSON lines
//                                         (Fields.cs), like `nettrace events --json`
//   Conformance records FILE              the method and module records as
//                                         TraceEvent's CLR parsers decode them
//                                         (TSV), for explaining a frame name
//                                         that differs
//
// Every value is TraceEvent's: public API where it exposes one, its internal
// fields (by reflection) where it keeps a value but offers no accessor, and
// null where TraceEvent never holds the value at all.  README.md lists which
// is which.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Reflection;
using System.Text;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

// TimeStampQPC is the raw trace clock of an event; TraceEvent marks it
// "discouraged" in favour of TimeStampRelativeMSec, a double in ms since the
// session start, which cannot carry nanoseconds of a clock counting since boot.
#pragma warning disable CS0618

namespace NetTraceConformance
{
    internal static class Program
    {
        private static int Main(string[] args)
        {
            try
            {
                if (args.Length == 2 && args[0] == "info")
                    return Info.Print(args[1]);
                if ((args.Length == 2 || (args.Length == 4 && args[2] == "--ips")) && args[0] == "samples")
                    return Samples.Print(args[1], args.Length == 4 ? args[3] : null);
                if (args.Length == 2 && args[0] == "records")
                    return Records.Print(args[1]);
                if (args.Length == 2 && args[0] == "events")
                    return Fields.Print(args[1]);
                int rc = Profiles.Run(args);
                if (rc >= 0)
                    return rc;
            }
            catch (Exception e)
            {
                Console.Error.WriteLine($"conformance: {args[1]}: {e.GetType().Name}: {e.Message}");
                return 1;
            }
            Console.Error.WriteLine("usage: Conformance info FILE | samples FILE [--ips OUT] | records FILE | events FILE | profiles FILE OUTDIR");
            return 2;
        }

        public const string SampleProfiler = "Microsoft-DotNETCore-SampleProfiler";

        // Non-public state of TraceEvent's reader (no public accessor).
        public static object Private(object o, string field)
        {
            for (var t = o.GetType(); t != null; t = t.BaseType)
            {
                var f = t.GetField(field, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
                if (f != null)
                    return f.GetValue(o);
            }
            throw new MissingFieldException(o.GetType().Name, field);
        }

        // Our clock rule: floor(ticks * 10^9 / frequency), exact.
        public static long TicksToNs(long ticks, long frequency)
        {
            if (frequency <= 0)
                return 0;
            Int128 num = (Int128)ticks * 1000000000;
            Int128 q = num / frequency;
            if (num % frequency != 0 && num < 0)
                q -= 1;
            return (long)q;
        }

        public static TextWriter Stdout()
        {
            var w = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
            w.NewLine = "\n";
            return w;
        }
    }

    // `nettrace info --json`: same keys, same order, same value formats.
    internal static class Info
    {
        private sealed class EventType
        {
            public string Provider;
            public int Id, Version;
            public long Count;
        }

        public static int Print(string path)
        {
            long events = 0, samples = 0, methods = 0, modules = 0, assemblies = 0;
            var types = new Dictionary<(string, int, int), EventType>();
            var sampledThreads = new HashSet<uint>();
            string status = "ok", message = null;
            EventPipeEventSource source = null;
            try
            {
                // Pass 1: every event under its stream identity.  Only the
                // generic parsers: the CLR parser renames some events (runtime
                // 39 GCDynamicEvent becomes GC/CommittedUsage, id 65524).
                source = new EventPipeEventSource(path);
                NetTraceShared.Parsers.RegisterGeneric(source);
                source.AllEvents += data =>
                {
                    events++;
                    var key = (data.ProviderName, (int)data.ID, (int)data.Version);
                    if (!types.TryGetValue(key, out EventType t))
                        types[key] = t = new EventType { Provider = data.ProviderName, Id = (int)data.ID, Version = data.Version };
                    t.Count++;
                    if (data.ProviderName == Program.SampleProfiler && (int)data.ID == 0)
                    {
                        samples++;
                        sampledThreads.Add((uint)data.ThreadID); // TraceEvent's ThreadID is an int
                    }
                };
                source.Process();

                // Pass 2: the method, module and assembly records TraceEvent's
                // CLR parsers decode (our "methods", "modules", "assemblies").
                using (var clr = new EventPipeEventSource(path))
                {
                    var rundown = new ClrRundownTraceEventParser(clr);
                    clr.Clr.MethodLoadVerbose += _ => methods++;
                    clr.Clr.MethodUnloadVerbose += _ => methods++;
                    rundown.MethodDCStartVerbose += _ => methods++;
                    rundown.MethodDCStopVerbose += _ => methods++;
                    clr.Clr.LoaderModuleLoad += _ => modules++;
                    clr.Clr.LoaderModuleUnload += _ => modules++;
                    clr.Clr.LoaderDomainModuleLoad += _ => modules++;
                    rundown.LoaderModuleDCStart += _ => modules++;
                    rundown.LoaderModuleDCStop += _ => modules++;
                    rundown.LoaderDomainModuleDCStart += _ => modules++;
                    rundown.LoaderDomainModuleDCStop += _ => modules++;
                    clr.Clr.LoaderAssemblyLoad += _ => assemblies++;
                    clr.Clr.LoaderAssemblyUnload += _ => assemblies++;
                    rundown.LoaderAssemblyDCStart += _ => assemblies++;
                    rundown.LoaderAssemblyDCStop += _ => assemblies++;
                    clr.Process();
                }
            }
            catch (Exception e)
            {
                status = "error";
                message = e.GetType().Name + ": " + e.Message;
            }

            var o = Program.Stdout();
            o.Write("{\n  \"status\": " + Str(status) + ",\n  \"message\": " + Str(message));
            if (source != null)
            {
                var utc = (DateTime)Program.Private(source, "_syncTimeUTC");
                o.Write(",\n  \"format_version\": " + (int)Program.Private(source, "<FileFormatVersionNumber>k__BackingField"));
                o.Write(",\n  \"pointer_size\": " + source.PointerSize);
                o.Write(",\n  \"process_id\": " + (uint)(int)Program.Private(source, "_processId"));
                o.Write(",\n  \"processor_count\": " + source.NumberOfProcessors);
                o.Write(",\n  \"qpc_frequency\": " + (long)Program.Private(source, "_QPCFreq"));
                o.Write(",\n  \"sync_qpc\": " + (long)Program.Private(source, "_syncTimeQPC"));
                o.Write(",\n  \"sync_time_utc\": \"" + utc.ToString("yyyy-MM-ddTHH:mm:ss.fff", CultureInfo.InvariantCulture) + "Z\"");
                o.Write(",\n  \"sampling_interval_ns\": " + (int)Program.Private(source, "_expectedCPUSamplingRate"));
            }
            else
            {
                o.Write(",\n  \"format_version\": null,\n  \"pointer_size\": null,\n  \"process_id\": null," +
                        "\n  \"processor_count\": null,\n  \"qpc_frequency\": null,\n  \"sync_qpc\": null," +
                        "\n  \"sync_time_utc\": null,\n  \"sampling_interval_ns\": null");
            }
            // bytes, blocks, stacks, sequence_points and unknown_blocks: TraceEvent
            // keeps no count of them (README.md says why), so null.
            int metadata = source == null ? 0 : ((System.Collections.ICollection)Program.Private(source, "_eventMetadataDictionary")).Count;
            o.Write(",\n  \"bytes\": null,\n  \"blocks\": null");
            o.Write(",\n  \"events\": " + events + ",\n  \"metadata\": " + metadata + ",\n  \"stacks\": null,\n  \"sequence_points\": null");
            o.Write(",\n  \"samples\": " + samples + ",\n  \"methods\": " + methods + ",\n  \"modules\": " + modules);
            o.Write(",\n  \"assemblies\": " + assemblies + ",\n  \"sampled_threads\": " + sampledThreads.Count);
            o.Write(",\n  \"events_dropped\": " + (source == null ? "null" : source.EventsLost.ToString(CultureInfo.InvariantCulture)));
            o.Write(",\n  \"unknown_blocks\": null");
            var sorted = new List<EventType>(types.Values);
            sorted.Sort((a, b) =>
            {
                int c = string.CompareOrdinal(a.Provider, b.Provider);
                if (c != 0)
                    return c;
                return a.Id != b.Id ? a.Id.CompareTo(b.Id) : a.Version.CompareTo(b.Version);
            });
            o.Write(",\n  \"event_types\": [");
            for (int i = 0; i < sorted.Count; i++)
                o.Write((i > 0 ? ",\n" : "\n") + "    {\"provider\": " + Str(sorted[i].Provider) + ", \"event_id\": " + sorted[i].Id +
                        ", \"version\": " + sorted[i].Version + ", \"count\": " + sorted[i].Count + "}");
            o.Write(sorted.Count > 0 ? "\n  ]" : "]");
            o.Write(",\n  \"truncated_at\": null\n}\n");
            o.Flush();
            source?.Dispose();
            return 0;
        }

        // JSON string, escaped as nettrace's json_string does.
        private static string Str(string s)
        {
            if (s == null)
                return "null";
            var sb = new StringBuilder();
            Fields.Str(sb, s);
            return sb.ToString();
        }
    }

    // `nettrace samples`: one line per thread sample in TraceLog's order,
    //   <timestamp_ns> <thread_id> <M|E|?> <frames root first joined by ';'>
    internal static class Samples
    {
        public static int Print(string path, string ipsPath)
        {
            string tmp = Path.Combine(Path.GetTempPath(), "nettrace-conformance-" + Environment.ProcessId);
            Directory.CreateDirectory(tmp);
            try
            {
                string etlx = Path.Combine(tmp, "trace.etlx");
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
                using (var log = new TraceLog(etlx))
                {
                    long freq = (long)Program.Private(log, "_QPCFreq");
                    var o = Program.Stdout();
                    TextWriter ips = null;
                    if (ipsPath != null)
                        ips = new StreamWriter(ipsPath, false, new UTF8Encoding(false), 1 << 16) { NewLine = "\n" };
                    var names = new List<string>();
                    var addrs = new List<string>();
                    foreach (TraceEvent ev in log.Events)
                    {
                        if (ev.ProviderName != Program.SampleProfiler || (int)ev.ID != 0)
                            continue;
                        // Payload: u32 sample type (1 external, 2 managed); shorter = no type.
                        int type = ev.EventDataLength >= 4 ? BitConverter.ToInt32(ev.EventData(), 0) : 0;
                        char kind = type == 2 ? 'M' : type == 1 ? 'E' : '?';
                        string head = Program.TicksToNs(ev.TimeStampQPC, freq).ToString(CultureInfo.InvariantCulture) + " " +
                                      ((uint)ev.ThreadID).ToString(CultureInfo.InvariantCulture) + " " + kind + " ";
                        names.Clear();
                        addrs.Clear();
                        for (TraceCallStack s = ev.CallStack(); s != null; s = s.Caller)
                        {
                            TraceCodeAddress ca = s.CodeAddress;
                            string hex = "0x" + ca.Address.ToString("x", CultureInfo.InvariantCulture);
                            addrs.Add(hex);
                            names.Add(FrameName(ca, hex));
                        }
                        names.Reverse(); // TraceLog walks leaf to root; we print root first
                        addrs.Reverse();
                        o.Write(head);
                        o.Write(names.Count == 0 ? "-" : string.Join(";", names));
                        o.Write('\n');
                        if (ips != null)
                        {
                            ips.Write(head);
                            ips.Write(addrs.Count == 0 ? "-" : string.Join(";", addrs));
                            ips.Write('\n');
                        }
                    }
                    o.Flush();
                    ips?.Dispose();
                }
            }
            finally
            {
                Directory.Delete(tmp, true);
            }
            return 0;
        }

        // <module>!<FullMethodName without its argument list>, or 0x<ip>.
        public static string FrameName(TraceCodeAddress ca, string hex)
        {
            string full = ca.FullMethodName;
            if (string.IsNullOrEmpty(full))
                return hex;
            string module = ca.ModuleName;
            return (string.IsNullOrEmpty(module) ? "?" : module) + "!" + WithoutArguments(full);
        }

        // TraceLog appends the signature from its first '(' (the argument
        // list); drop the balanced "(...)" group that ends the name.
        public static string WithoutArguments(string full)
        {
            if (!full.EndsWith(")", StringComparison.Ordinal))
                return full;
            int depth = 0;
            for (int i = full.Length - 1; i >= 0; i--)
            {
                if (full[i] == ')')
                    depth++;
                else if (full[i] == '(' && --depth == 0)
                    return full.Substring(0, i);
            }
            return full;
        }
    }

    // The loader records in stream order, tab-separated, for explaining a
    // frame name that differs:
    //   method <kind> <timestamp_ns> <start> <size> <flags> <module id> <method id> <TraceLog's full name>
    //   module <kind> <timestamp_ns> <module id> <assembly id> <IL path>
    // kind: load, unload, dcstart, dcend (MethodLoadVerbose, MethodUnloadVerbose,
    // MethodDCStartVerbose, MethodDCEndVerbose; ModuleLoad, ModuleUnload,
    // ModuleDCStart, ModuleDCEnd), "domain" + kind for the DomainModule forms.  The full name is TraceLog's own
    // (TraceLog.GetFullName, internal, called by reflection).
    internal static class Records
    {
        public static int Print(string path)
        {
            var fullName = typeof(TraceLog).GetMethod("GetFullName", BindingFlags.NonPublic | BindingFlags.Static, null,
                                                      new[] { typeof(MethodLoadUnloadVerboseTraceData) }, null);
            var o = Program.Stdout();
            using (var clr = new EventPipeEventSource(path))
            {
                long freq = (long)Program.Private(clr, "_QPCFreq");
                string Ns(TraceEvent d) => Program.TicksToNs(d.TimeStampQPC, freq).ToString(CultureInfo.InvariantCulture);
                string Hex(ulong v) => "0x" + v.ToString("x", CultureInfo.InvariantCulture);
                void Method(string kind, MethodLoadUnloadVerboseTraceData d) =>
                    o.Write("method\t" + kind + "\t" + Ns(d) + "\t" + Hex((ulong)d.MethodStartAddress) + "\t" +
                            ((uint)d.MethodSize).ToString(CultureInfo.InvariantCulture) + "\t" + Hex((uint)d.MethodFlags) + "\t" +
                            Hex((ulong)d.ModuleID) + "\t" + Hex((ulong)d.MethodID) + "\t" +
                            (string)fullName.Invoke(null, new object[] { d }) + "\n");
                void Row(string kind, TraceEvent d, long module, long assembly, string il) =>
                    o.Write("module\t" + kind + "\t" + Ns(d) + "\t" + Hex((ulong)module) + "\t" + Hex((ulong)assembly) + "\t" + il + "\n");
                void Module(string kind, ModuleLoadUnloadTraceData d) => Row(kind, d, d.ModuleID, d.AssemblyID, d.ModuleILPath);
                void DomainModule(string kind, DomainModuleLoadUnloadTraceData d) =>
                    Row("domain" + kind, d, d.ModuleID, d.AssemblyID, d.ModuleILPath);
                var rundown = new ClrRundownTraceEventParser(clr);
                clr.Clr.MethodLoadVerbose += d => Method("load", d);
                clr.Clr.MethodUnloadVerbose += d => Method("unload", d);
                rundown.MethodDCStartVerbose += d => Method("dcstart", d);
                rundown.MethodDCStopVerbose += d => Method("dcend", d);
                clr.Clr.LoaderModuleLoad += d => Module("load", d);
                clr.Clr.LoaderModuleUnload += d => Module("unload", d);
                clr.Clr.LoaderDomainModuleLoad += d => DomainModule("load", d);
                rundown.LoaderModuleDCStart += d => Module("dcstart", d);
                rundown.LoaderModuleDCStop += d => Module("dcend", d);
                rundown.LoaderDomainModuleDCStart += d => DomainModule("dcstart", d);
                rundown.LoaderDomainModuleDCStop += d => DomainModule("dcend", d);
                clr.Process();
            }
            o.Flush();
            return 0;
        }
    }
}
