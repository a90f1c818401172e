using System;
using System.Collections.Generic;
using LibNetTrace.Native;

namespace LibNetTrace;

/// <summary>The names of a trace's frames and stacks, each made once: a frame's
/// name by its frame id, a stack's root-first list by its stack index (samples
/// on one stack share it).  Thread-safe: a race makes a name twice, never a wrong one.</summary>
internal sealed unsafe class FrameNames
{
    private readonly NativeHandle _t;
    private string?[]? _frames;
    private IReadOnlyList<string>?[]? _stacks;

    internal FrameNames(NativeHandle trace) => _t = trace;

    /// <summary>Stack stackIndex's names, root first (the caller holds a lease on the trace).</summary>
    internal IReadOnlyList<string> Stack(uint stackIndex)
    {
        var stacks = _stacks ??= new IReadOnlyList<string>?[(int)Lib.nt_trace_stack_count(_t.Ptr)];
        IReadOnlyList<string>? names = stacks[stackIndex];
        if (names != null)
            return names;
        nt_trace_stack st = Lib.nt_trace_stack_at(_t.Ptr, stackIndex);
        var list = new string[st.frame_count];
        for (uint k = 0; k < st.frame_count; k++)
            list[st.frame_count - 1 - k] = Frame(st.frame_ids[k]);
        return stacks[stackIndex] = Array.AsReadOnly(list);
    }

    /// <summary>Frame id's name as nt_frame_name_ex makes it (flags 0).</summary>
    internal string Frame(uint id)
    {
        var frames = _frames ??= new string?[(int)Lib.nt_trace_frame_count(_t.Ptr)];
        return frames[id] ??= Name(Lib.nt_trace_frame_at(_t.Ptr, id), 0);
    }

    internal static string Name(nt_frame* f, uint flags)
    {
        byte* small = stackalloc byte[512];
        nuint n = Lib.nt_frame_name_ex(f, flags, small, 512);
        if (n < 512)
            return System.Text.Encoding.UTF8.GetString(small, (int)n);
        var big = new byte[(int)n + 1];
        fixed (byte* b = big)
        {
            Lib.nt_frame_name_ex(f, flags, b, (nuint)big.Length);
            return System.Text.Encoding.UTF8.GetString(b, (int)n);
        }
    }
}
