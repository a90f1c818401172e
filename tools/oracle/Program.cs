// NetTrace oracle: what Microsoft.Diagnostics.Tracing.TraceEvent reads from
// each trace, written as TSV for libnettrace's tests (tests/test_oracle.c).
//
//   Oracle counts OUT.tsv LABEL=PATH...   event counts, header, methods
//   Oracle top OUTDIR LABEL=PATH...       top methods by resolved stacks
//
// LABEL is how the test finds the file: "shared/<name>" (../shared/corpus)
// or "corpus/<name>" (the project's own traces).  See tools/oracle/README.md
// for every row's meaning.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

namespace NetTraceOracle
{
    internal static class Program
    {
        private static int Main(string[] args)
        {
            if (args.Length < 3 || (args[0] != "counts" && args[0] != "top"))
            {
                Console.Error.WriteLine("usage: Oracle counts OUT.tsv LABEL=PATH... | Oracle top OUTDIR LABEL=PATH...");
                return 2;
            }
            var inputs = args.Skip(2).Select(a =>
            {
                int eq = a.IndexOf('=');
                return (label: a.Substring(0, eq), path: a.Substring(eq + 1));
            }).ToList();
            if (args[0] == "counts")
                return Counts.Write(args[1], inputs);
            return TopMethods.Write(args[1], inputs);
        }
    }

    internal static class Counts
    {
        public static int Write(string outPath, List<(string label, string path)> inputs)
        {
            var sb = new StringBuilder();
            sb.Append("# Written by tools/oracle (TraceEvent ").Append(Version()).Append("); do not edit.\n");
            sb.Append("# file\tsection\tname\tvalue\n");
            foreach (var (label, path) in inputs)
            {
                Console.Error.WriteLine($"counts: {label}");
                foreach (var row in One(label, path))
                    sb.Append(label).Append('\t').Append(row).Append('\n');
            }
            File.WriteAllText(outPath, sb.ToString());
            return 0;
        }

        public static string Version() =>
            typeof(EventPipeEventSource).Assembly
                .GetCustomAttribute<AssemblyInformationalVersionAttribute>()?.InformationalVersion?.Split('+')[0]
            ?? typeof(EventPipeEventSource).Assembly.GetName().Version.ToString();

        // Non-public state of TraceEvent's reader (no public accessor).
        private static object Private(object o, string field)
        {
            for (var t = o.GetType(); t != null; t = t.BaseType)
            {
                var f = t.GetField(field, BindingFlags.Instance | BindingFlags.NonPublic | BindingFlags.Public);
                if (f != null)
                    return f.GetValue(o);
            }
            throw new MissingFieldException(o.GetType().Name, field);
        }

        private sealed class MethodTally
        {
            public long Count;
            public ulong StartSum;    // sum of MethodStartAddress, mod 2^64
            public ulong SizeSum;     // sum of MethodSize
            public ulong NameBytes;   // UTF-8 bytes of namespace + name + signature
            public ulong IdSum;       // sum of MethodID, mod 2^64

            public void Add(MethodLoadUnloadVerboseTraceData d)
            {
                Count++;
                unchecked
                {
                    StartSum += (ulong)d.MethodStartAddress;
                    SizeSum += (ulong)(uint)d.MethodSize;
                    IdSum += (ulong)d.MethodID;
                }
                NameBytes += (ulong)(Encoding.UTF8.GetByteCount(d.MethodNamespace) +
                                     Encoding.UTF8.GetByteCount(d.MethodName) +
                                     Encoding.UTF8.GetByteCount(d.MethodSignature));
            }

            public IEnumerable<string> Rows(string name)
            {
                yield return $"method\t{name}\t{Count}";
                yield return $"method\t{name}.start_sum\t{StartSum}";
                yield return $"method\t{name}.size_sum\t{SizeSum}";
                yield return $"method\t{name}.id_sum\t{IdSum}";
                yield return $"method\t{name}.name_bytes\t{NameBytes}";
            }
        }

        private static IEnumerable<string> One(string label, string path)
        {
            var rows = new List<string>();
            long events = 0, samples = 0;
            var perType = new SortedDictionary<string, long>(StringComparer.Ordinal);
            var sampleTypes = new SortedDictionary<int, long>();
            var sampledThreads = new SortedDictionary<long, long>();
            var load = new MethodTally();
            var unload = new MethodTally();
            var dcStart = new MethodTally();
            var dcEnd = new MethodTally();
            string status = "ok";
            EventPipeEventSource source = null;
            try
            {
                // Pass 1: every event under its stream identity.  Only the
                // generic parsers are registered here, because the CLR parser
                // renames some events (GCDynamicEvent, runtime id 39, becomes
                // "GC/CommittedUsage" with a synthetic ID 65524).
                source = new EventPipeEventSource(path);
                source.Dynamic.All += _ => { };
                new SampleProfilerTraceEventParser(source).All += _ => { };
                new EventPipeTraceEventParser(source).All += _ => { };
                source.AllEvents += data =>
                {
                    events++;
                    string key = $"{data.ProviderName}:{(int)data.ID}:{data.Version}";
                    perType.TryGetValue(key, out long n);
                    perType[key] = n + 1;
                    if (data.ProviderName == "Microsoft-DotNETCore-SampleProfiler" && (int)data.ID == 0)
                    {
                        samples++;
                        // Payload: u32 sample type (1 external, 2 managed).
                        int type = data.EventDataLength >= 4 ? BitConverter.ToInt32(data.EventData(), 0) : -1;
                        sampleTypes.TryGetValue(type, out long t);
                        sampleTypes[type] = t + 1;
                        // TraceEvent's ThreadID is an int: the low 32 bits of the header's thread id.
                        long tid = (uint)data.ThreadID;
                        sampledThreads.TryGetValue(tid, out long c);
                        sampledThreads[tid] = c + 1;
                    }
                };
                source.Process();

                // Pass 2: method records as TraceEvent's CLR parsers decode them.
                using (var clr = new EventPipeEventSource(path))
                {
                    clr.Clr.MethodLoadVerbose += load.Add;
                    clr.Clr.MethodUnloadVerbose += unload.Add;
                    var rundown = new ClrRundownTraceEventParser(clr);
                    rundown.MethodDCStartVerbose += dcStart.Add;
                    rundown.MethodDCStopVerbose += dcEnd.Add;
                    clr.Process();
                }
            }
            catch (Exception e)
            {
                status = "error: " + e.GetType().Name + ": " + e.Message.Replace('\t', ' ').Replace('\n', ' ');
            }

            rows.Add($"status\tstatus\t{status}");
            if (source != null)
            {
                int fmt = (int)Private(source, "<FileFormatVersionNumber>k__BackingField");
                rows.Add($"header\tfile_format_version\t{fmt}");
                // NetPerf (format 3, .NET Core 2.x) is read by TraceEvent but not by libnettrace.
                if (fmt < 4)
                    rows.Add("status\tlibnettrace\tunsupported_version");
                rows.Add($"header\tpointer_size\t{source.PointerSize}");
                rows.Add($"header\tprocessor_count\t{source.NumberOfProcessors}");
                rows.Add($"header\tprocess_id\t{Private(source, "_processId")}");
                rows.Add($"header\tqpc_frequency\t{Private(source, "_QPCFreq")}");
                rows.Add($"header\tsync_qpc\t{Private(source, "_syncTimeQPC")}");
                var utc = (DateTime)Private(source, "_syncTimeUTC");
                rows.Add($"header\tsync_time_utc\t{utc.ToString("yyyy-MM-ddTHH:mm:ss.fff", CultureInfo.InvariantCulture)}Z");
                rows.Add($"header\tsampling_interval_ns\t{Private(source, "_expectedCPUSamplingRate")}");
                rows.Add($"count\tevents_lost\t{source.EventsLost}");
            }
            rows.Add($"count\tevents\t{events}");
            rows.Add($"count\tthread_samples\t{samples}");
            rows.Add($"count\tsampled_threads\t{sampledThreads.Count}");
            rows.Add($"count\tevent_types\t{perType.Count}");
            foreach (var kv in sampleTypes)
                rows.Add($"sample_type\t{kv.Key}\t{kv.Value}");
            foreach (var kv in sampledThreads)
                rows.Add($"thread\t{kv.Key}\t{kv.Value}");
            foreach (var r in load.Rows("load_verbose")) rows.Add(r);
            foreach (var r in unload.Rows("unload_verbose")) rows.Add(r);
            foreach (var r in dcStart.Rows("dc_start_verbose")) rows.Add(r);
            foreach (var r in dcEnd.Rows("dc_end_verbose")) rows.Add(r);
            foreach (var kv in perType)
                rows.Add($"event\t{kv.Key}\t{kv.Value}");
            source?.Dispose();
            return rows;
        }
    }

    internal static class TopMethods
    {
        public static int Write(string outDir, List<(string label, string path)> inputs)
        {
            Console.Error.WriteLine("top: not written yet");
            return 1;
        }
    }
}
