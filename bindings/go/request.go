package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import "unsafe"

// RequestWindow is a window open for one request (Parser.OpenRequest): it
// takes the samples its threads (every thread when none were named) have
// from its start on, beside the continuous windows and other request
// windows, until Close hands them over.  Close it before the parser's Close,
// which releases what it holds.
type RequestWindow struct {
	p      *Parser
	id     C.nt_window_id
	FromNS int64 // its start, trace-clock ns (as Sample.TimeNS)
	closed bool
}

// windowFilter is a C filter over threads, in C memory (cgo forbids a Go
// pointer inside a struct handed to C); free releases it.
type windowFilter struct {
	f   C.nt_window_filter
	ids *C.uint64_t
}

func newWindowFilter(threads []uint64) (*windowFilter, error) {
	w := &windowFilter{}
	w.f.struct_size = C.uint32_t(unsafe.Sizeof(w.f))
	if len(threads) == 0 {
		return w, nil
	}
	w.ids = (*C.uint64_t)(C.malloc(C.size_t(len(threads)) * C.size_t(unsafe.Sizeof(C.uint64_t(0)))))
	if w.ids == nil {
		return nil, ErrNoMemory
	}
	copy(unsafe.Slice((*uint64)(unsafe.Pointer(w.ids)), len(threads)), threads)
	w.f.thread_ids = w.ids
	w.f.thread_count = C.size_t(len(threads))
	return w, nil
}

func (w *windowFilter) free() { C.free(unsafe.Pointer(w.ids)) }

// window is the parser's window object, under mu; ErrBadState without
// Windows or after Close.
func (p *Parser) window() (*C.nt_trace_window, error) {
	if p.closed || p.g == nil || !p.cb.Windows {
		return nil, ErrBadState
	}
	return C.ntgo_parser_window(p.g), nil
}

// underWindow runs fn under mu with the window object and a filter over
// threads (none: every thread).
func (p *Parser) underWindow(what string, threads []uint64, fn func(*C.nt_trace_window, *C.nt_window_filter) error) error {
	if err := p.lock(what); err != nil {
		return err
	}
	defer p.unlock()
	w, err := p.window()
	if err != nil {
		return err
	}
	f, err := newWindowFilter(threads)
	if err != nil {
		return err
	}
	defer f.free()
	return fn(w, &f.f)
}

// OpenRequest opens a request window from fromNS (trace-clock ns) on the
// given threads (OS thread ids; none: every thread).  Up to 4,096 are open
// at once (then an error matching ErrLimit).  With Windows only.
func (p *Parser) OpenRequest(fromNS int64, threads ...uint64) (*RequestWindow, error) {
	r := &RequestWindow{p: p, FromNS: fromNS}
	err := p.underWindow("OpenRequest", threads, func(w *C.nt_trace_window, f *C.nt_window_filter) error {
		return newError(C.nt_trace_window_open(w, C.int64_t(fromNS), f, &r.id), 0, "")
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Close ends the request window at toNS (trace-clock ns, exclusive) and
// returns its samples as a Trace.  Past a limit (the sample log's bytes, or
// records evicted) the trace is still returned, with an error matching
// ErrLimit.  A second Close returns ErrBadState.
func (r *RequestWindow) Close(toNS int64) (*Trace, error) {
	p := r.p
	if err := p.lock("RequestWindow.Close"); err != nil {
		return nil, err
	}
	defer p.unlock()
	if r.closed {
		return nil, ErrBadState
	}
	w, err := p.window()
	if err != nil {
		return nil, err
	}
	r.closed = true
	var ct *C.nt_trace
	st := C.nt_trace_window_close(w, r.id, C.int64_t(toNS), &ct)
	return windowTrace(ct, st)
}

// Cut returns the samples of [fromNS, toNS) on the given threads (none:
// every thread) that the flight recorder (Callbacks.Recorder) still holds,
// as a Trace; the recorder keeps them, so the same span can be cut again.
// ErrInvalidArgument without a recorder.
func (p *Parser) Cut(fromNS, toNS int64, threads ...uint64) (*Trace, error) {
	var ct *C.nt_trace
	var st C.nt_status
	err := p.underWindow("Cut", threads, func(w *C.nt_trace_window, f *C.nt_window_filter) error {
		st = C.nt_trace_window_cut(w, C.int64_t(fromNS), C.int64_t(toNS), f, &ct)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return windowTrace(ct, st)
}

// windowTrace is a window handed out (a take, a close, a cut) as a Trace with
// the status as its error: past a limit the trace comes with the error.
func windowTrace(ct *C.nt_trace, st C.nt_status) (*Trace, error) {
	err := newError(st, 0, "")
	if ct == nil {
		return nil, err
	}
	return ownedTrace(ct), err
}

// WindowStats is what a windowed parser's window object holds now and what
// its bounds did (nt_trace_window_stats): an agent's view of its own cost.
type WindowStats struct {
	Memory, MemoryPeak    uint64 // bytes held now, everything included; the most ever held
	Records, RecordBytes  uint64 // method records kept (one code extent each) and their bytes with names and index
	RecordBudget          uint64 // bytes the records may hold
	RecordsSeen           uint64 // method records the stream delivered
	RecordsRetired        uint64 // dropped because their code was unloaded
	RecordsEvicted        uint64 // dropped by the budget (a frame of theirs is then unnamed) ...
	RecordsEvictedSampled uint64 // ... of those, ones a sample had hit
	RecorderSamples       uint64 // samples the flight recorder holds
	Windows, OpenWindows  uint64 // traces handed out (takes, closes, cuts); request windows open now
	EventsDropped         uint64 // events the stream's sequence points reported lost, all windows
}

// WindowStats returns the window object's counts (with Windows, before Close).
func (p *Parser) WindowStats() (WindowStats, error) {
	var out WindowStats
	err := p.underWindow("WindowStats", nil, func(w *C.nt_trace_window, _ *C.nt_window_filter) error {
		st := C.nt_trace_window_stats{struct_size: C.uint32_t(C.sizeof_nt_trace_window_stats)}
		C.nt_trace_window_stats_get(w, &st)
		out = WindowStats{
			Memory: uint64(st.memory), MemoryPeak: uint64(st.memory_peak),
			Records:      uint64(st.records.entries),
			RecordBytes:  uint64(st.records.bytes + st.strings.bytes + st.address_index.bytes),
			RecordBudget: uint64(st.record_budget), RecordsSeen: uint64(st.records_seen),
			RecordsRetired: uint64(st.records_retired), RecordsEvicted: uint64(st.records_evicted),
			RecordsEvictedSampled: uint64(st.records_evicted_sampled),
			RecorderSamples:       uint64(st.recorder.entries),
			Windows:               uint64(st.windows), OpenWindows: uint64(st.open_windows),
			EventsDropped: uint64(st.events_dropped),
		}
		return nil
	})
	return out, err
}
