package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"io"
	"runtime/cgo"
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
	w        io.Writer
	err      error
	panicked *callbackPanic // the writer's panic, raised again once C has returned
}

// callbackPanic is a panic caught before it could unwind through C frames
// (which would leave the library's state half-updated).
type callbackPanic struct{ value interface{} }

// catch turns a panic of the writer into a stop (deferred by goWrite).
func (ws *writeState) catch(ret *C.int) {
	if r := recover(); r != nil {
		ws.panicked = &callbackPanic{r}
		ws.err = fmt.Errorf("%w: the writer panicked: %v", ErrStopped, r)
		*ret = 1
	}
}

// repanic raises the writer's panic again, in the goroutine that called C.
func (ws *writeState) repanic() {
	if ws.panicked != nil {
		panic(ws.panicked.value)
	}
}

//export goWrite
func goWrite(h C.uintptr_t, data unsafe.Pointer, n C.size_t) (ret C.int) {
	ws := cgo.Handle(h).Value().(*writeState)
	if ws.err != nil {
		return 1
	}
	defer ws.catch(&ret)
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

// selection is the C form of which samples o covers and how they weigh (the
// one conversion, for the exports and for TopWith).
func (o *ExportOptions) selection() C.nt_export_options {
	var co C.nt_export_options
	co.filter.managed_only = C.bool(o.ManagedOnly)
	if o.ThreadID != nil {
		co.filter.has_thread, co.filter.thread_id = true, C.uint64_t(*o.ThreadID)
	}
	if o.FromNS != nil {
		co.filter.from = C.nt_time_bound{set: true, absolute: true, ns: C.int64_t(*o.FromNS)}
	}
	if o.ToNS != nil {
		co.filter.to = C.nt_time_bound{set: true, absolute: true, ns: C.int64_t(*o.ToNS)}
	}
	if o.ByTime {
		co.weight = C.NT_WEIGHT_TIME
	}
	return co
}

func (t *Trace) export(kind C.int, w io.Writer, o *ExportOptions) error {
	ct, err := t.enter()
	if err != nil {
		return err
	}
	defer t.leave()
	var co C.nt_export_options
	var name *C.char
	if o != nil {
		co = o.selection()
		if o.Name != "" {
			name = C.CString(o.Name)
			defer C.free(unsafe.Pointer(name))
			co.name = name
		}
	}
	ws := &writeState{w: w}
	h := cgo.NewHandle(ws)
	defer h.Delete()
	st := C.ntgo_export(ct, kind, &co, C.uintptr_t(h))
	ws.repanic()
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
// ("Assembly!Namespace.Type.Method", or "0x<ip>" when unresolved; code
// versions of one method share a row).
type TopEntry struct {
	Name      string
	Exclusive uint64 // samples with the method on top of the stack (ns with TopOptions.ByTime)
	Inclusive uint64 // samples with the method anywhere on the stack (once per sample; ns with ByTime)
}

// TopOptions select the samples Top counts and the order of its rows.  The
// zero value counts every sample, by exclusive samples.
type TopOptions struct {
	ByInclusive bool    // sort by inclusive samples
	ManagedOnly bool    // only samples taken in managed code
	ThreadID    *uint64 // only this thread
	FromNS      *int64  // only samples at or after this trace-clock time (ns; Trace.TimeNS reads "2s", "@<ns>")
	ToNS        *int64  // only samples before this trace-clock time (ns)
	// ByTime weighs each sample by the ns to the same thread's next sample
	// (Trace.WallNS) instead of counting it: 'nettrace top --profile wall'.
	ByTime bool
}

// Top returns the n hottest methods over every sample (n <= 0: all), by
// exclusive samples (then inclusive, then first seen): the library's
// hot-method table, the one 'nettrace top' prints.
func (t *Trace) Top(n int) []TopEntry {
	rows, _ := t.TopWith(n, TopOptions{})
	return rows
}

// TopWith is Top with options; it fails only when memory is short.
func (t *Trace) TopWith(n int, o TopOptions) ([]TopEntry, error) {
	ct, err := t.enter()
	if err != nil {
		return nil, err
	}
	defer t.leave()
	var co C.nt_top_options
	if n > 0 {
		co.rows = C.uint32_t(n)
	}
	co.by_inclusive = C.bool(o.ByInclusive)
	sel := (&ExportOptions{ManagedOnly: o.ManagedOnly, ThreadID: o.ThreadID, FromNS: o.FromNS, ToNS: o.ToNS,
		ByTime: o.ByTime}).selection()
	co.filter = sel.filter
	co.weight = sel.weight
	var top *C.nt_top
	if st := C.nt_top_build(ct, &co, &top); st != C.NT_OK {
		return nil, newError(st, 0, "")
	}
	defer C.nt_top_free(top)
	var out []TopEntry
	for _, table := range unsafe.Slice(top.tables, int(top.table_count)) {
		for _, r := range unsafe.Slice(table.rows, int(table.row_count)) {
			out = append(out, TopEntry{Name: C.GoString(r.name), Exclusive: uint64(r.exclusive),
				Inclusive: uint64(r.inclusive)})
		}
	}
	return out, nil
}
