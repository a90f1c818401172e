package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"io"
	"runtime/cgo"
	"sort"
	"unsafe"
)

// ExportOptions select the samples an export covers and how they weigh.  The
// zero value exports every sample, each counting one.
type ExportOptions struct {
	ManagedOnly bool    // only samples taken in managed code
	ThreadID    *uint64 // only this thread
	FromNS      *int64  // only samples at or after this trace-clock time (ns)
	ToNS        *int64  // only samples before this trace-clock time (ns)
	// ByTime weighs each sample by the time to the same thread's next sample
	// (the last one by the sampling interval) instead of counting it once.
	ByTime bool
	Name   string // profile name (speedscope); "" selects "nettrace"
}

// writeState is what the C writer trampoline reaches through its handle.
type writeState struct {
	w   io.Writer
	err error
}

//export goWrite
func goWrite(h C.uintptr_t, data unsafe.Pointer, n C.size_t) C.int {
	ws := cgo.Handle(h).Value().(*writeState)
	if ws.err != nil {
		return 1
	}
	if n == 0 {
		return 0
	}
	// io.Writer must not retain the slice, so the library's memory is lent.
	if _, err := ws.w.Write(unsafe.Slice((*byte)(data), int(n))); err != nil {
		ws.err = err
		return 1
	}
	return 0
}

func (t *Trace) export(kind C.int, w io.Writer, o *ExportOptions) error {
	if t.c == nil {
		return ErrBadState
	}
	var co C.nt_export_options
	var name *C.char
	if o != nil {
		co.managed_only = C.bool(o.ManagedOnly)
		if o.ThreadID != nil {
			co.has_thread, co.thread_id = true, C.uint64_t(*o.ThreadID)
		}
		if o.FromNS != nil {
			co.has_from, co.from_ns = true, C.int64_t(*o.FromNS)
		}
		if o.ToNS != nil {
			co.has_to, co.to_ns = true, C.int64_t(*o.ToNS)
		}
		if o.ByTime {
			co.weight = C.NT_WEIGHT_TIME
		}
		if o.Name != "" {
			name = C.CString(o.Name)
			defer C.free(unsafe.Pointer(name))
			co.name = name
		}
	}
	ws := &writeState{w: w}
	h := cgo.NewHandle(ws)
	defer h.Delete()
	st := C.ntgo_export(t.c, kind, &co, C.uintptr_t(h))
	if ws.err != nil {
		return ws.err
	}
	return newError(st, 0, "")
}

// WriteFolded writes folded stacks ("root;...;leaf weight\n", for
// flamegraph.pl), identical stacks merged, sorted.
func (t *Trace) WriteFolded(w io.Writer, o *ExportOptions) error {
	return t.export(C.NTGO_FOLDED, w, o)
}

// WriteSpeedscope writes a speedscope JSON profile, one sampled profile per thread.
func (t *Trace) WriteSpeedscope(w io.Writer, o *ExportOptions) error {
	return t.export(C.NTGO_SPEEDSCOPE, w, o)
}

// WritePprof writes a gzipped pprof profile.proto with sample counts and wall time.
func (t *Trace) WritePprof(w io.Writer, o *ExportOptions) error {
	return t.export(C.NTGO_PPROF, w, o)
}

// TopEntry is one row of Top: a method by its display name
// ("Assembly!Namespace.Type.Method", or "0x<ip>" when unresolved).
type TopEntry struct {
	Name      string
	Exclusive uint64 // samples with the method on top of the stack
	Inclusive uint64 // samples with the method anywhere on the stack (once per sample)
}

// Top returns the n hottest methods over every sample (n <= 0: all), by
// exclusive samples, then inclusive, then name.  Code versions of one
// method (tiered re-JIT) count as one.
func (t *Trace) Top(n int) []TopEntry {
	if t.c == nil {
		return nil
	}
	perStack := make([]uint64, int(C.nt_trace_stack_count(t.c)))
	for i, c := 0, int(C.nt_trace_sample_count(t.c)); i < c; i++ {
		perStack[C.nt_trace_sample_at(t.c, C.size_t(i)).stack_index]++
	}
	rows := map[string]*TopEntry{}
	nameOf := map[uint64]string{} // method index + 1, or ip for unresolved frames (high bit set)
	buf := make([]byte, 256)
	seen := map[string]bool{}
	for si, count := range perStack {
		if count == 0 {
			continue
		}
		st := C.nt_trace_stack_at(t.c, C.size_t(si))
		if st.frame_count == 0 {
			continue
		}
		for k := range seen {
			delete(seen, k)
		}
		for j, f := range unsafe.Slice(st.frames, int(st.frame_count)) {
			key := uint64(f.method_index) + 1
			if f.method_index == C.NT_TRACE_NO_METHOD {
				key = uint64(f.ip) | 1<<63
			}
			name, ok := nameOf[key]
			if !ok {
				need := int(C.nt_frame_name(&f, nil, 0)) + 1
				if need > len(buf) {
					buf = make([]byte, need)
				}
				C.nt_frame_name(&f, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)))
				name = string(buf[:need-1])
				nameOf[key] = name
			}
			row := rows[name]
			if row == nil {
				row = &TopEntry{Name: name}
				rows[name] = row
			}
			if j == 0 {
				row.Exclusive += count
			}
			if !seen[name] {
				seen[name] = true
				row.Inclusive += count
			}
		}
	}
	out := make([]TopEntry, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if a.Exclusive != b.Exclusive {
			return a.Exclusive > b.Exclusive
		}
		if a.Inclusive != b.Inclusive {
			return a.Inclusive > b.Inclusive
		}
		return a.Name < b.Name
	})
	if n > 0 && n < len(out) {
		out = out[:n]
	}
	return out
}
