using System;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>One event as the parser hands it to <see cref="ParserOptions.OnEvent"/>:
/// valid only during that call (a ref struct, so it cannot be kept).  Strings
/// are made when asked for; the payload and stack are spans over the parser's memory.</summary>
public readonly unsafe ref struct TraceEvent
{
    private readonly nt_event* _ev;
    private readonly void* _parser;

    internal TraceEvent(nt_event* ev, void* parser)
    {
        _ev = ev;
        _parser = parser;
    }

    /// <summary>The provider's name ("" when the metadata id was never defined).</summary>
    public string Provider => _ev->desc == null ? "" : Lib.Text(_ev->desc->provider);
    /// <summary>The event's name: its metadata's, else the runtime table's ("GCStart_V2"), else "".</summary>
    public string Name => _ev->desc == null ? "" : Lib.Text(_ev->desc->name);
    /// <summary>The runtime table's task ("GarbageCollection"), or "".</summary>
    public string TaskName => _ev->desc == null ? "" : Lib.Text(_ev->desc->task_name);
    /// <summary>The runtime table's opcode ("Start"), or "".</summary>
    public string OpcodeName => _ev->desc == null ? "" : Lib.Text(_ev->desc->opcode_name);
    /// <summary>The event id.</summary>
    public int EventId => _ev->desc == null ? 0 : (int)_ev->desc->event_id;
    /// <summary>The payload version.</summary>
    public int Version => _ev->desc == null ? 0 : (int)_ev->desc->version;
    /// <summary>The provider keywords of the event.</summary>
    public ulong Keywords => _ev->desc == null ? 0 : _ev->desc->keywords;
    /// <summary>The thread the event is about.</summary>
    public long ThreadId => (long)_ev->thread_id;
    /// <summary>The thread that wrote it.</summary>
    public long CaptureThreadId => (long)_ev->capture_thread_id;
    /// <summary>Ticks of the trace clock.</summary>
    public long Ticks => _ev->timestamp;
    /// <summary>Its time in ns of the trace clock (as samples' times are).</summary>
    public long TimestampNs => Lib.nt_parser_time_ns(_parser, _ev->timestamp);
    /// <summary>Byte offset of the event in the stream.</summary>
    public long Offset => (long)_ev->offset;
    /// <summary>The activity id.</summary>
    public Guid ActivityId => new(new ReadOnlySpan<byte>(_ev->activity_id, 16));
    /// <summary>The related activity id.</summary>
    public Guid RelatedActivityId => new(new ReadOnlySpan<byte>(_ev->related_activity_id, 16));
    /// <summary>The raw payload.</summary>
    public ReadOnlySpan<byte> Payload => new(_ev->payload, (int)_ev->payload_size);
    /// <summary>The stack's addresses, innermost first (empty when the event has none).</summary>
    public ReadOnlySpan<ulong> Stack => _ev->stack == null ? default : new(_ev->stack->ips, (int)_ev->stack->count);

    /// <summary>The decoded payload fields, in payload order (structs and arrays
    /// as begin / end values around their members).  A payload that does not fit
    /// its layout ends the enumeration; <see cref="FieldEnumerator.Status"/> then says why.</summary>
    public FieldEnumerator Fields => new(_ev);

    /// <summary>The first top-level field called name.</summary>
    public bool TryGetField(string name, out Field field)
    {
        foreach (Field f in Fields)
            if (f.Depth == 0 && f.NameEquals(name))
            {
                field = f;
                return true;
            }
        field = default;
        return false;
    }
}

/// <summary>What a decoded value holds (nt_value_kind).</summary>
public enum FieldKind
{
    /// <summary>Signed integer: <see cref="Field.Int64"/>.</summary>
    Int = 1,
    /// <summary>Unsigned integer (also pointers and UTF-16 chars): <see cref="Field.UInt64"/>.</summary>
    UInt,
    /// <summary>Boolean: <see cref="Field.Boolean"/>.</summary>
    Bool,
    /// <summary>Single or double: <see cref="Field.Double"/>.</summary>
    Float,
    /// <summary>A GUID: <see cref="Field.Guid"/>.</summary>
    Guid,
    /// <summary>FILETIME: <see cref="Field.DateTime"/>.</summary>
    DateTime,
    /// <summary>A string: <see cref="Field.String"/> (or <see cref="Field.Utf8"/>).</summary>
    String,
    /// <summary>Raw bytes: <see cref="Field.Bytes"/>.</summary>
    Binary,
    /// <summary>A struct begins; its fields follow one level deeper.</summary>
    StructBegin,
    /// <summary>A struct ends.</summary>
    StructEnd,
    /// <summary>An array begins (<see cref="Field.Count"/> elements follow).</summary>
    ArrayBegin,
    /// <summary>An array ends.</summary>
    ArrayEnd,
}

/// <summary>One decoded value, valid during the event's callback.</summary>
public readonly unsafe ref struct Field
{
    private readonly nt_field_value _v;
    internal Field(nt_field_value v) => _v = v;

    /// <summary>The field's name (an array's elements carry the array's).</summary>
    public string Name => Lib.Text(_v.name);
    internal bool NameEquals(string s) => MemoryMarshal.CreateReadOnlySpanFromNullTerminated(_v.name).SequenceEqual(System.Text.Encoding.UTF8.GetBytes(s));
    /// <summary>What the value holds.</summary>
    public FieldKind Kind => (FieldKind)_v.kind;
    /// <summary>0 for top-level fields, +1 inside each struct or array.</summary>
    public int Depth => (int)_v.depth;
    /// <summary>Position among its siblings.</summary>
    public int Index => (int)_v.index;
    /// <summary>Begin / end values: fields or elements.</summary>
    public int Count => (int)_v.count;
    /// <summary>Payload offset where the value starts.</summary>
    public int Offset => (int)_v.offset;
    /// <summary>A signed value.</summary>
    public long Int64 => _v.v.i;
    /// <summary>An unsigned value.</summary>
    public ulong UInt64 => _v.v.u;
    /// <summary>A boolean.</summary>
    public bool Boolean => _v.v.u != 0;
    /// <summary>A floating-point value.</summary>
    public double Double => _v.v.f;
    /// <summary>A GUID in the payload's layout.</summary>
    public Guid Guid
    {
        get
        {
            nt_field_union u = _v.v;
            return new Guid(new ReadOnlySpan<byte>(&u, 16));
        }
    }
    /// <summary>A FILETIME as UTC.</summary>
    public DateTime DateTime => System.DateTime.FromFileTimeUtc(_v.v.i);
    /// <summary>A string's UTF-8 bytes.</summary>
    public ReadOnlySpan<byte> Utf8 => Kind == FieldKind.String ? new(_v.v.ptr, (int)_v.v.len) : default;
    /// <summary>A string.</summary>
    public string String => System.Text.Encoding.UTF8.GetString(Utf8);
    /// <summary>Raw bytes.</summary>
    public ReadOnlySpan<byte> Bytes => Kind == FieldKind.Binary ? new(_v.v.ptr, (int)_v.v.len) : default;

    /// <summary>The value as text (numbers invariant), for dumps.</summary>
    public override string ToString() => Kind switch
    {
        FieldKind.Int => Int64.ToString(System.Globalization.CultureInfo.InvariantCulture),
        FieldKind.UInt => UInt64.ToString(System.Globalization.CultureInfo.InvariantCulture),
        FieldKind.Bool => Boolean ? "true" : "false",
        FieldKind.Float => Double.ToString("R", System.Globalization.CultureInfo.InvariantCulture),
        FieldKind.Guid => Guid.ToString(),
        FieldKind.DateTime => DateTime.ToString("o", System.Globalization.CultureInfo.InvariantCulture),
        FieldKind.String => String,
        FieldKind.Binary => Convert.ToHexString(Bytes),
        _ => Kind.ToString(),
    };
}

/// <summary>The enumeration of one event's fields (nt_event_fields_begin / nt_field_next).</summary>
public unsafe ref struct FieldEnumerator
{
    private nt_field_iter _it;
    private nt_field_value _cur;
    private readonly nt_event* _ev;
    private bool _started;

    internal FieldEnumerator(nt_event* ev)
    {
        _ev = ev;
        _it = default;
        _cur = default;
        _started = false;
    }

    /// <summary>For foreach.</summary>
    public FieldEnumerator GetEnumerator() => this;

    /// <summary>The current value.</summary>
    public Field Current => new(_cur);

    /// <summary>Advance; false at the end or on a payload that does not fit its layout.</summary>
    public bool MoveNext()
    {
        nt_field_iter* it = (nt_field_iter*)Unsafe.AsPointer(ref _it);
        if (!_started)
        {
            _started = true;
            if (Lib.nt_event_fields_begin(_ev, it) != NetTraceException.Ok)
                return false;
        }
        fixed (nt_field_value* v = &_cur)
            return Lib.nt_field_next(it, v) != 0;
    }

    /// <summary>"ok", or why the enumeration stopped early ("malformed", "limit_exceeded").</summary>
    public string Status => NetTraceException.StatusName(_it.status);
    /// <summary>Payload offset of the error.</summary>
    public int ErrorOffset => (int)_it.error_offset;
    /// <summary>After the end: payload bytes no field covered.</summary>
    public int Leftover => (int)_it.leftover;
}

/// <summary>A thread sample as the parser reads it (addresses, not names), valid during the callback.</summary>
public readonly unsafe ref struct RawSample
{
    private readonly nt_sample* _s;
    internal RawSample(nt_sample* s) => _s = s;

    /// <summary>Trace-clock ns.</summary>
    public long TimestampNs => _s->time_ns;
    /// <summary>The sampled thread.</summary>
    public long ThreadId => (long)_s->thread_id;
    /// <summary>Managed, external or other.</summary>
    public SampleKind Kind => Sample.KindOf(_s->type);
    /// <summary>The stack's addresses, innermost first.</summary>
    public ReadOnlySpan<ulong> Stack => _s->stack == null ? default : new(_s->stack->ips, (int)_s->stack->count);
}
