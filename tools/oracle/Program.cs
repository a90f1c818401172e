// NetTrace oracle: what Microsoft.Diagnostics.Tracing.TraceEvent reads from
// each trace, written as TSV for libnettrace's tests (tests/test_oracle.c).
//
//   Oracle counts OUT.tsv LABEL=PATH...   event counts, header, methods
//   Oracle top OUT.tsv LABEL=PATH...      top methods by resolved stacks
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
using Microsoft.Diagnostics.Tracing.Etlx;

namespace NetTraceOracle
{
    internal static class Program
    {
        private static int Main(string[] args)
        {
            if (args.Length < 3 || (args[0] != "counts" && args[0] != "top"))
            {
                Console.Error.WriteLine("usage: Oracle counts OUT.tsv LABEL=PATH... | Oracle top OUT.tsv LABEL=PATH...");
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
                NetTraceShared.Parsers.RegisterGeneric(source);
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
        private const int Top = 30;
        private const string Unknown = "?";

        private sealed class Tally
        {
            public long Exclusive, Inclusive;
        }

        public static int Write(string outPath, List<(string label, string path)> inputs)
        {
            string tmp = Path.Combine(Path.GetTempPath(), "nettrace-oracle-" + Environment.ProcessId);
            Directory.CreateDirectory(tmp);
            var sb = new StringBuilder();
            sb.Append("# Written by tools/oracle (TraceEvent ").Append(Counts.Version()).Append(" TraceLog); do not edit.\n");
            sb.Append("# file\tkind\tmodule\tmethod\texclusive\tinclusive\n");
            sb.Append("# kind samples: exclusive = thread samples, inclusive = samples with a stack\n");
            sb.Append("# kind frames: exclusive = frames of all samples, inclusive = frames without a method\n");
            try
            {
                foreach (var (label, path) in inputs)
                {
                    Console.Error.WriteLine($"top: {label}");
                    string rows = One(label, path, Path.Combine(tmp, Path.GetFileName(path) + ".etlx"));
                    if (rows != null)
                        sb.Append(rows);
                }
            }
            finally
            {
                Directory.Delete(tmp, true);
            }
            File.WriteAllText(outPath, sb.ToString());
            return 0;
        }

        // null when the file has no thread samples (or TraceLog cannot read it).
        private static string One(string label, string path, string etlx)
        {
            try
            {
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
            }
            catch (Exception e)
            {
                Console.Error.WriteLine($"top: TraceLog cannot read {path}: {e.Message}");
                return null;
            }
            var tally = new Dictionary<(string module, string method), Tally>();
            long samples = 0, withStack = 0, frames = 0, unresolved = 0;
            using (var log = new TraceLog(etlx))
            {
                foreach (TraceEvent ev in log.Events)
                {
                    if (ev.ProviderName != "Microsoft-DotNETCore-SampleProfiler" || (int)ev.ID != 0)
                        continue;
                    samples++;
                    TraceCallStack stack = ev.CallStack();
                    if (stack == null)
                        continue;
                    withStack++;
                    var onStack = new HashSet<(string, string)>();
                    bool leaf = true;
                    for (; stack != null; stack = stack.Caller)
                    {
                        frames++;
                        string module = stack.CodeAddress.ModuleName;
                        string method = stack.CodeAddress.FullMethodName;
                        if (string.IsNullOrEmpty(method))
                            unresolved++;
                        var key = (string.IsNullOrEmpty(module) ? Unknown : module,
                                   string.IsNullOrEmpty(method) ? Unknown : method);
                        if (!tally.TryGetValue(key, out Tally t))
                            tally[key] = t = new Tally();
                        if (leaf)
                            t.Exclusive++;
                        leaf = false;
                        if (onStack.Add(key))
                            t.Inclusive++; // once per sample, however often it recurs
                    }
                }
            }
            if (samples == 0)
                return null;

            var all = tally.ToList();
            var chosen = new HashSet<(string, string)>();
            Pick(all, kv => kv.Value.Exclusive, chosen);
            Pick(all, kv => kv.Value.Inclusive, chosen);
            var rows = all.Where(kv => chosen.Contains(kv.Key))
                          .OrderByDescending(kv => kv.Value.Exclusive)
                          .ThenByDescending(kv => kv.Value.Inclusive)
                          .ThenBy(kv => kv.Key.module, StringComparer.Ordinal)
                          .ThenBy(kv => kv.Key.method, StringComparer.Ordinal);

            var sb = new StringBuilder();
            sb.Append($"{label}\tsamples\t-\t-\t{samples}\t{withStack}\n");
            sb.Append($"{label}\tframes\t-\t-\t{frames}\t{unresolved}\n");
            foreach (var kv in rows)
                sb.Append(label).Append("\tmethod\t").Append(kv.Key.module).Append('\t').Append(kv.Key.method).Append('\t')
                  .Append(kv.Value.Exclusive).Append('\t').Append(kv.Value.Inclusive).Append('\n');
            return sb.ToString();
        }

        // The first Top entries by the given count (non-zero), plus every
        // entry tied with the last one, so the set does not depend on how
        // ties are broken.
        private static void Pick(List<KeyValuePair<(string module, string method), Tally>> all,
                                 Func<KeyValuePair<(string module, string method), Tally>, long> count,
                                 HashSet<(string, string)> chosen)
        {
            var sorted = all.Where(kv => count(kv) > 0).OrderByDescending(count).ToList();
            if (sorted.Count == 0)
                return;
            long cut = count(sorted[Math.Min(Top, sorted.Count) - 1]);
            foreach (var kv in sorted)
            {
                if (count(kv) < cut)
                    break;
                chosen.Add(kv.Key);
            }
        }
    }
}
