// `Conformance events FILE`: every event TraceEvent reads, with its name and
// PayloadNames / PayloadValue(i), one JSON object a line, for comparing with
// `nettrace events --json` (tests/conformance/compare_fields.py).
//
// Every parser TraceEvent has for an EventPipe trace is subscribed, so each
// event comes with the template TraceEvent itself would choose: the CLR,
// rundown and private parsers' hand-written classes for runtime events, the
// dynamic parser for EventSource events, the sample profiler and EventPipe
// parsers for theirs.  Values are written as JSON after this normalisation
// (README.md): enums as their integer, floats in round-trip form (NaN and
// infinities as null), GUIDs as 8-4-4-4-12 lower case, DateTime as ISO 8601
// UTC with 100 ns digits, byte[] as 0x-hex, arrays as JSON arrays, structs
// (dictionaries) as objects, lone surrogates as U+FFFD.  A value TraceEvent
// throws on is written as {"exception": "..."}.
using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Text;
using Microsoft.Diagnostics.Tracing;
using Microsoft.Diagnostics.Tracing.EventPipe;
using Microsoft.Diagnostics.Tracing.Parsers;
using Microsoft.Diagnostics.Tracing.Parsers.Clr;

#pragma warning disable CS0618 // TimeStampQPC: see Program.cs

namespace NetTraceConformance
{
    internal static class Fields
    {
        public static int Print(string path)
        {
            var o = Program.Stdout();
            using (var source = new EventPipeEventSource(path))
            {
                NetTraceShared.Parsers.RegisterTyped(source);
                long freq = 0;
                var sb = new StringBuilder();
                source.AllEvents += data =>
                {
                    if (freq == 0)
                        freq = (long)Program.Private(source, "_QPCFreq");
                    sb.Clear();
                    sb.Append("{\"time_ns\":").Append(Program.TicksToNs(data.TimeStampQPC, freq).ToString(CultureInfo.InvariantCulture));
                    sb.Append(",\"thread\":").Append(((uint)data.ThreadID).ToString(CultureInfo.InvariantCulture));
                    sb.Append(",\"provider\":"); Str(sb, data.ProviderName);
                    sb.Append(",\"event_id\":").Append(((int)data.ID).ToString(CultureInfo.InvariantCulture));
                    sb.Append(",\"version\":").Append(data.Version.ToString(CultureInfo.InvariantCulture));
                    sb.Append(",\"event_name\":"); Str(sb, data.EventName);
                    sb.Append(",\"task\":"); Str(sb, data.TaskName);
                    sb.Append(",\"opcode\":"); Str(sb, data.OpcodeName);
                    sb.Append(",\"names\":[");
                    string[] names = data.PayloadNames ?? new string[0];
                    for (int i = 0; i < names.Length; i++)
                    {
                        if (i > 0)
                            sb.Append(',');
                        Str(sb, names[i]);
                    }
                    sb.Append("],\"values\":[");
                    for (int i = 0; i < names.Length; i++)
                    {
                        if (i > 0)
                            sb.Append(',');
                        object v;
                        try
                        {
                            v = data.PayloadValue(i);
                        }
                        catch (Exception e)
                        {
                            sb.Append("{\"exception\":");
                            Str(sb, e.GetType().Name);
                            sb.Append('}');
                            continue;
                        }
                        Value(sb, v);
                    }
                    sb.Append("]}");
                    o.Write(sb.ToString());
                    o.Write('\n');
                };
                source.Process();
            }
            o.Flush();
            return 0;
        }

        private static void Value(StringBuilder sb, object v)
        {
            switch (v)
            {
            case null: sb.Append("null"); return;
            case string s: Str(sb, s); return;
            case bool b: sb.Append(b ? "true" : "false"); return;
            case Enum e:
                if (Convert.GetTypeCode(e) == TypeCode.UInt64)
                    sb.Append(Convert.ToUInt64(e, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture));
                else
                    sb.Append(Convert.ToInt64(e, CultureInfo.InvariantCulture).ToString(CultureInfo.InvariantCulture));
                return;
            case char c: Str(sb, c.ToString()); return;
            case float f: Real(sb, f); return;
            case double d: Real(sb, d); return;
            case Guid g: Str(sb, g.ToString("D")); return;
            case DateTime t:
                Str(sb, t.ToUniversalTime().ToString("yyyy-MM-ddTHH:mm:ss.fffffff", CultureInfo.InvariantCulture) + "Z");
                return;
            case byte[] bytes:
                sb.Append("\"0x");
                foreach (byte x in bytes)
                    sb.Append(x.ToString("x2", CultureInfo.InvariantCulture));
                sb.Append('"');
                return;
            case IDictionary<string, object> dict:
                sb.Append('{');
                bool first = true;
                foreach (var kv in dict)
                {
                    if (!first)
                        sb.Append(',');
                    first = false;
                    Str(sb, kv.Key);
                    sb.Append(':');
                    Value(sb, kv.Value);
                }
                sb.Append('}');
                return;
            case IEnumerable list:
                sb.Append('[');
                bool firstItem = true;
                foreach (object x in list)
                {
                    if (!firstItem)
                        sb.Append(',');
                    firstItem = false;
                    Value(sb, x);
                }
                sb.Append(']');
                return;
            case IFormattable n:
                string text = n.ToString(null, CultureInfo.InvariantCulture);
                if (text.Length == 0)
                    Str(sb, v.GetType().Name); // never seen; keeps the line valid JSON
                else
                    sb.Append(text);
                return;
            default:
                Str(sb, v.ToString());
                return;
            }
        }

        private static void Real(StringBuilder sb, double d)
        {
            if (double.IsNaN(d) || double.IsInfinity(d))
                sb.Append("null");
            else
                sb.Append(d.ToString("R", CultureInfo.InvariantCulture));
        }

        // A JSON string literal; lone surrogates become U+FFFD, as libnettrace's
        // UTF-8 has them.  The one JSON string writer of this program.
        internal static void Str(StringBuilder sb, string s)
        {
            if (s == null)
            {
                sb.Append("null");
                return;
            }
            sb.Append('"');
            for (int i = 0; i < s.Length; i++)
            {
                char ch = s[i];
                if (char.IsHighSurrogate(ch) && i + 1 < s.Length && char.IsLowSurrogate(s[i + 1]))
                {
                    sb.Append(ch).Append(s[++i]);
                    continue;
                }
                if (char.IsSurrogate(ch))
                {
                    sb.Append('\uFFFD');
                    continue;
                }
                switch (ch)
                {
                case '"': sb.Append("\\\""); break;
                case '\\': sb.Append("\\\\"); break;
                case '\n': sb.Append("\\n"); break;
                case '\r': sb.Append("\\r"); break;
                case '\t': sb.Append("\\t"); break;
                default:
                    if (ch < 0x20)
                        sb.Append("\\u").Append(((int)ch).ToString("x4", CultureInfo.InvariantCulture));
                    else
                        sb.Append(ch);
                    break;
                }
            }
            sb.Append('"');
        }
    }
}
