// The TraceEvent side of the profile conformance check (compare_profiles.py),
// `Conformance profiles FILE OUTDIR`, writing OUTDIR/{alloc,exceptions,
// contention,gcs}.txt:
// the allocation, exception and contention events as TraceEvent's typed CLR
// parsers decode them, each with the stack TraceLog resolves for it, printed
// in the format of `nettrace samples --profile KIND`:
//
//   <timestamp_ns> <thread_id> <value> <label> <frames root first>
//
//   alloc       value AllocationAmount64 (AllocationAmount before V2), label
//               <soh|loh|poh|other>:<TypeName>   (GCAllocationTickTraceData)
//   exceptions  value 1, label ExceptionType     (ExceptionTraceData)
//   contention  ContentionStart/Stop paired per thread: value stop - start in
//               ns, label managed|native (ContentionFlags), ":open" for a start
//               with no stop (its value runs to the last event of the trace),
//               the start's stack                (ContentionStartTraceData, ContentionStopTraceData)
//
// and the GC timeline (one line per GCStart):
//   gc <Count> <Depth> <Reason> <Type> <start_ns> <end_ns> <suspend_begin_ns>
//      <restart_end_ns> <GenerationSize0-3 of the next GCHeapStats>
// (-1 for an absent value; the suspension is the GC's when SuspendEEStart's
// Reason is SuspendForGC or SuspendForGCPrep, as `nettrace gc` takes it).
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.Etlx;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

#pragma warning disable CS0618 // TimeStampQPC: see Program.cs

namespace NetTraceConformance
{
    internal static class Profiles
    {
        public static int Run(string[] args)
        {
            if (args.Length == 3 && args[0] == "profiles")
                return WithLog(args[1], log =>
                {
                    // One conversion, four files: alloc.txt, exceptions.txt, contention.txt, gcs.txt.
                    foreach (var kind in new[] { "alloc", "exceptions", "contention" })
                        using (var o = Create(Path.Combine(args[2], kind + ".txt")))
                            PrintEvents(log, kind, o);
                    using (var g = Create(Path.Combine(args[2], "gcs.txt")))
                        PrintGcs(log, g);
                    return 0;
                });
            return -1;
        }

        private static TextWriter Create(string path) =>
            new StreamWriter(path, false, new System.Text.UTF8Encoding(false), 1 << 16) { NewLine = "\n" };

        private static int WithLog(string path, Func<TraceLog, int> body)
        {
            string tmp = Path.Combine(Path.GetTempPath(), "nettrace-conformance-profiles-" + Environment.ProcessId);
            Directory.CreateDirectory(tmp);
            try
            {
                string etlx = Path.Combine(tmp, "trace.etlx");
                TraceLog.CreateFromEventPipeDataFile(path, etlx);
                using (var log = new TraceLog(etlx))
                    return body(log);
            }
            finally
            {
                Directory.Delete(tmp, true);
            }
        }

        private static string Frames(TraceEvent ev)
        {
            var names = new List<string>();
            for (TraceCallStack s = ev.CallStack(); s != null; s = s.Caller)
            {
                TraceCodeAddress ca = s.CodeAddress;
                names.Add(Samples.FrameName(ca, "0x" + ca.Address.ToString("x", CultureInfo.InvariantCulture)));
            }
            names.Reverse();
            return names.Count == 0 ? "-" : string.Join(";", names);
        }

        private static string Label(string s)
        {
            if (string.IsNullOrEmpty(s))
                return "?";
            // As nettrace escapes names (common/text_escape.h): separators and controls as \xHH of their UTF-8 bytes.
            var b = new System.Text.StringBuilder(s.Length);
            foreach (char c in s)
            {
                if (c == ' ' || c == ';' || c < 0x20 || c == 0x7f)
                    b.Append("\\x").Append(((int)c).ToString("X2", CultureInfo.InvariantCulture));
                else if (c >= 0x80 && c <= 0x9f)
                    b.Append("\\xC2\\x").Append(((int)c).ToString("X2", CultureInfo.InvariantCulture));
                else
                    b.Append(c);
            }
            return b.ToString();
        }

        private static string Line(long ns, int thread, long value, string label, string frames) =>
            ns.ToString(CultureInfo.InvariantCulture) + " " + ((uint)thread).ToString(CultureInfo.InvariantCulture) + " " +
            value.ToString(CultureInfo.InvariantCulture) + " " + label + " " + frames;

        private sealed class Open
        {
            public long Qpc;
            public long Ns;
            public string Label;
            public string Frames;
        }

        private static void PrintEvents(TraceLog log, string kind, TextWriter o)
        {
            long freq = (long)Program.Private(log, "_QPCFreq");
            var lines = new List<(long ns, long order, string line)>();
            var open = new Dictionary<int, Open>();
            long order = 0, lastQpc = long.MinValue;
            foreach (TraceEvent ev in log.Events)
            {
                if (ev.TimeStampQPC > lastQpc)
                    lastQpc = ev.TimeStampQPC;
                long ns = Program.TicksToNs(ev.TimeStampQPC, freq);
                if (kind == "alloc" && ev is GCAllocationTickTraceData a)
                {
                    long bytes = ev.Version >= 2 ? a.AllocationAmount64 : a.AllocationAmount;
                    int k = (int)a.AllocationKind;
                    string heap = k == 0 ? "soh" : k == 1 ? "loh" : k == 2 ? "poh" : "other";
                    string type = ev.Version >= 2 ? a.TypeName : "";
                    lines.Add((ns, order++, Line(ns, ev.ThreadID, bytes, heap + ":" + Label(type), Frames(ev))));
                }
                else if (kind == "exceptions" && ev is ExceptionTraceData x)
                {
                    lines.Add((ns, order++, Line(ns, ev.ThreadID, 1, Label(x.ExceptionType), Frames(ev))));
                }
                else if (kind == "contention" && ev is ContentionStartTraceData c)
                {
                    string label = c.ContentionFlags == ContentionFlags.Native ? "native" : "managed";
                    {
                        if (open.TryGetValue(ev.ThreadID, out var prev))
                            lines.Add((prev.Ns, order++, Line(prev.Ns, ev.ThreadID, Math.Max(0, ns - prev.Ns), prev.Label + ":open", prev.Frames)));
                        open[ev.ThreadID] = new Open { Qpc = ev.TimeStampQPC, Ns = ns, Label = label, Frames = Frames(ev) };
                    }
                }
                else if (kind == "contention" && ev is ContentionStopTraceData && open.TryGetValue(ev.ThreadID, out var st))
                {
                    {
                        open.Remove(ev.ThreadID);
                        lines.Add((st.Ns, order++, Line(st.Ns, ev.ThreadID, Math.Max(0, ns - st.Ns), st.Label, st.Frames)));
                    }
                }
            }
            long lastNs = Program.TicksToNs(lastQpc, freq);
            foreach (var kv in open)
                lines.Add((kv.Value.Ns, order++, Line(kv.Value.Ns, kv.Key, Math.Max(0, lastNs - kv.Value.Ns), kv.Value.Label + ":open", kv.Value.Frames)));
            lines.Sort((p, q) => p.ns != q.ns ? p.ns.CompareTo(q.ns) : p.order.CompareTo(q.order));
            foreach (var l in lines)
            {
                o.Write(l.line);
                o.Write('\n');
            }
        }

        private sealed class Suspension
        {
            public bool ForGc;
            public long Begin = -1;
        }

        // Matched per thread, as `nettrace gc` does: the suspending thread
        // starts, ends and reports its GC and restarts the runtime.
        private static void PrintGcs(TraceLog log, TextWriter o)
        {
            long freq = (long)Program.Private(log, "_QPCFreq");
            // count depth reason type start end suspend restart g0 g1 g2 g3, and the thread
            var gcs = new List<(long[] v, int thread)>();
            var susp = new Dictionary<int, Suspension>();
            foreach (TraceEvent ev in log.Events)
            {
                long ns = Program.TicksToNs(ev.TimeStampQPC, freq);
                switch (ev)
                {
                    case GCSuspendEETraceData s:
                        susp[ev.ThreadID] = new Suspension
                        {
                            ForGc = s.Reason == GCSuspendEEReason.SuspendForGC || s.Reason == GCSuspendEEReason.SuspendForGCPrep,
                            Begin = ns,
                        };
                        break;
                    case GCStartTraceData g:
                        susp.TryGetValue(ev.ThreadID, out var su);
                        gcs.Add((new long[] { g.Count, g.Depth, (long)g.Reason, (long)g.Type, ns, -1, su != null && su.ForGc ? su.Begin : -1, -1, -1, -1, -1, -1 }, ev.ThreadID));
                        break;
                    case GCEndTraceData e:
                        for (int i = gcs.Count - 1; i >= 0 && i >= gcs.Count - 64; i--)
                            if (gcs[i].v[0] == e.Count)
                            {
                                if (gcs[i].v[5] < 0)
                                    gcs[i].v[5] = ns;
                                break;
                            }
                        break;
                    case GCHeapStatsTraceData h:
                        for (int i = gcs.Count - 1; i >= 0 && i >= gcs.Count - 64; i--)
                            if (gcs[i].thread == ev.ThreadID && gcs[i].v[5] >= 0)
                            {
                                var g = gcs[i].v;
                                if (g[8] < 0)
                                {
                                    g[8] = h.GenerationSize0;
                                    g[9] = h.GenerationSize1;
                                    g[10] = h.GenerationSize2;
                                    g[11] = h.GenerationSize3;
                                }
                                break;
                            }
                        break;
                    default:
                        if (ev.ProviderGuid == Microsoft.Diagnostics.Tracing.Parsers.ClrTraceEventParser.ProviderGuid && (int)ev.ID == 3 &&
                            susp.TryGetValue(ev.ThreadID, out var sr) && sr.ForGc)
                        {
                            for (int i = gcs.Count - 1; i >= 0 && i >= gcs.Count - 64; i--)
                                if (gcs[i].thread == ev.ThreadID && gcs[i].v[6] == sr.Begin && gcs[i].v[7] < 0)
                                    gcs[i].v[7] = ns;
                            sr.ForGc = false;
                        }
                        break;
                }
            }
            var ordered = new List<long[]>();
            for (int i = 0; i < gcs.Count; i++)
                ordered.Add(gcs[i].v);
            // Stable by start time: List.Sort is not stable, so the index breaks ties.
            var idx = new List<int>();
            for (int i = 0; i < ordered.Count; i++)
                idx.Add(i);
            idx.Sort((a, b) => ordered[a][4] != ordered[b][4] ? ordered[a][4].CompareTo(ordered[b][4]) : a.CompareTo(b));
            foreach (int i in idx)
                o.Write("gc " + string.Join(" ", Array.ConvertAll(ordered[i], v => v.ToString(CultureInfo.InvariantCulture))) + "\n");
        }
    }
}
