package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"io"
	"runtime"
	"time"
	"unsafe"
)

// Frame is a resolved instruction in a sampled stack.  A frame whose address
// no method record covers keeps its IP and has empty names.
type Frame struct {
	IP       uint64
	Method   string // the method name
	Type     string // the declaring type's full name
	Assembly string // the fully qualified assembly name
	// Name is the frame as the tool names it (top, stacks, samples):
	// "SimpleAssemblyName!Type.Method", or "0x<ip>" when unresolved.
	Name string
}

// Sample is one thread sample.
type Sample struct {
	Timestamp uint64 // nanoseconds on the trace clock
	ThreadID  uint64
	// Managed is true when the thread was running managed code, false when it
	// was in native code.
	Managed bool
	// Frames is the stack, innermost first.  Samples on one stack share this
	// slice, so callers must not modify it.
	Frames []Frame
}

// Method is a method-load record that sampled instruction addresses resolve
// against (one code extent of one method: tiered re-JIT gives a method
// several).
type Method struct {
	StartAddress uint64
	Size         uint64
	Namespace    string // the declaring type's full name
	Name         string
	ModuleID     uint64
	Assembly     string
	// Beyond the reference.
	MethodID  uint64
	Signature string
}

// Header is the trace's header (beyond the reference).
type Header struct {
	FormatMajor      uint32 // 4 for NetTrace V4/V5, 6 for V6
	FormatMinor      uint32
	SyncTime         time.Time // wall clock (UTC) when the trace started
	SyncTicks        int64     // trace clock value at SyncTime
	ProcessID        uint32
	ProcessorCount   uint32
	SamplingInterval time.Duration // the sample profiler's period
}

// Trace is the samples and symbols of a nettrace stream.
type Trace struct {
	TimestampFrequency uint64 // the trace clock's ticks per second
	PointerSize        int
	Samples            []Sample // ordered by timestamp
	Methods            []Method
	Assemblies         map[uint64]string // assembly ID to fully qualified name
	Modules            map[uint64]uint64 // module ID to assembly ID
	// EventsDropped counts the events the runtime dropped while tracing
	// (gaps in the sequence numbers): samples and method records may be
	// missing.  A window's: those of its window; a request window's or a
	// cut's: those of its span on its threads.
	EventsDropped uint64

	Header Header

	c      *C.nt_trace // the library's trace, for the exports and tables
	own    *owner      // frees c (or the Profile c belongs to) once no call uses it
	closed bool        // Close was called on this Trace (under own.mu)
	// borrowed: c belongs to a Profile, which frees it (own is the Profile's)
	borrowed bool
	stacks   [][]Frame // frames of each resolved stack (nt_trace_stack_at), shared by samples and records
}

// enter starts a call that hands the library's trace to C: ErrBadState once
// the trace (or its profile) is closed.  Every enter is paired with a
// deferred leave, which keeps t -- and so the trace -- alive until the C
// call has returned.
func (t *Trace) enter() (*C.nt_trace, error) {
	if t.own == nil {
		return nil, ErrBadState
	}
	t.own.mu.Lock()
	closed := t.closed
	t.own.mu.Unlock()
	if closed || !t.own.acquire() {
		return nil, ErrBadState
	}
	return t.c, nil
}

func (t *Trace) leave() {
	t.own.release()
	runtime.KeepAlive(t)
}

// Parse reads a NetTrace V4, V5 or V6 stream (what the runtime streams over
// its diagnostics IPC, dotnet-trace writes and .NET 10 records) from r.
//
// Unlike a reader that loads the stream, Parse holds only what it decoded:
// memory stays bounded by the parser's limits, so an untrusted reader does
// not need an io.LimitReader for memory's sake.  When the stream is damaged
// or ends early (or r fails), Parse returns the trace of everything read
// before the fault together with the error (an *Error carrying the byte
// offset, or r's error); it returns a nil trace only when not even the
// stream's header could be read.
func Parse(r io.Reader) (*Trace, error) {
	p, err := newParser(nil, 0, C.NTGO_KEEP_TRACE)
	if err != nil {
		return nil, err
	}
	defer p.free()
	buf := make([]byte, 1<<20)
	var readErr error
	for p.err == nil {
		n, err := r.Read(buf)
		if n > 0 {
			p.feed(buf[:n])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			readErr = err
			break
		}
	}
	if readErr != nil {
		return p.trace(C.NT_ERR_IO, readErr)
	}
	return p.trace(p.finish(), nil)
}

// newTrace copies the library's trace into Go values: every method record's
// strings once, every distinct frame once (stacks hold the library's frame
// ids), every distinct stack's frames once (samples share them).  The caller
// sets its owner.
func newTrace(ct *C.nt_trace) *Trace {
	t := &Trace{
		TimestampFrequency: uint64(C.nt_trace_frequency(ct)),
		PointerSize:        int(C.nt_trace_pointer_size(ct)),
		Assemblies:         map[uint64]string{},
		Modules:            map[uint64]uint64{},
		c:                  ct,
	}
	if h := C.nt_trace_header(ct); h != nil {
		t.Header = newHeader(h)
	}
	st := C.nt_trace_stats{struct_size: C.uint32_t(C.sizeof_nt_trace_stats)}
	C.nt_trace_stats_get(ct, &st)
	t.EventsDropped = uint64(st.events_dropped)
	nm := int(C.nt_trace_method_count(ct))
	t.Methods = make([]Method, nm)
	for i := range t.Methods {
		m := C.nt_trace_method_at(ct, C.size_t(i))
		t.Methods[i] = Method{
			StartAddress: uint64(m.start_address), Size: uint64(m.size),
			Namespace: C.GoString(m.declaring_type), Name: C.GoString(m.name),
			ModuleID: uint64(m.module_id), Assembly: C.GoString(m.assembly),
			MethodID: uint64(m.method_id), Signature: C.GoString(m.signature),
		}
	}
	for i, n := 0, int(C.nt_trace_assembly_count(ct)); i < n; i++ {
		a := C.nt_trace_assembly_at(ct, C.size_t(i))
		t.Assemblies[uint64(a.assembly_id)] = C.GoString(a.name)
	}
	for i, n := 0, int(C.nt_trace_module_count(ct)); i < n; i++ {
		m := C.nt_trace_module_at(ct, C.size_t(i))
		t.Modules[uint64(m.module_id)] = uint64(m.assembly_id)
	}
	byID := make([]Frame, int(C.nt_trace_frame_count(ct)))
	for id := range byID {
		f := C.nt_trace_frame_at(ct, C.uint32_t(id))
		byID[id].IP = uint64(f.ip)
		byID[id].Name = libFrameName(f)
		if idx := f.method_index; idx != C.NT_TRACE_NO_METHOD {
			m := &t.Methods[idx]
			byID[id].Method, byID[id].Type, byID[id].Assembly = m.Name, m.Namespace, m.Assembly
		}
	}
	stacks := make([][]Frame, int(C.nt_trace_stack_count(ct)))
	for i := range stacks {
		st := C.nt_trace_stack_at(ct, C.size_t(i))
		if st.frame_count == 0 {
			continue
		}
		ids := unsafe.Slice(st.frame_ids, int(st.frame_count))
		frames := make([]Frame, len(ids))
		for j, id := range ids {
			frames[j] = byID[id]
		}
		stacks[i] = frames
	}
	t.stacks = stacks
	if n := int(C.nt_trace_sample_count(ct)); n > 0 {
		raw := make([]C.ntgo_sample, n)
		C.ntgo_samples(ct, &raw[0], C.size_t(n))
		t.Samples = make([]Sample, n)
		for i := range raw {
			r := &raw[i]
			t.Samples[i] = Sample{
				Timestamp: uint64(r.time_ns), ThreadID: uint64(r.thread_id),
				Managed: r._type == C.NT_SAMPLE_MANAGED, Frames: stacks[r.stack_index],
			}
		}
	}
	return t
}

// ownedTrace is newTrace for a library trace the Trace frees.
func ownedTrace(ct *C.nt_trace) *Trace {
	t := newTrace(ct)
	t.own = newOwner(func() { C.nt_trace_free(ct) })
	return t
}

// libFrameName is the library's display name of a frame (nt_frame_name).
func libFrameName(f *C.nt_frame) string {
	var small [256]C.char
	n := C.nt_frame_name(f, &small[0], C.size_t(len(small)))
	if int(n) < len(small) {
		return C.GoString(&small[0])
	}
	big := make([]C.char, int(n)+1)
	C.nt_frame_name(f, &big[0], C.size_t(len(big)))
	return C.GoString(&big[0])
}

func newHeader(h *C.nt_trace_info) Header {
	st := h.sync_time_utc
	return Header{
		FormatMajor: uint32(h.format_major), FormatMinor: uint32(h.format_minor),
		SyncTime: time.Date(int(st.year), time.Month(st.month), int(st.day), int(st.hour), int(st.minute),
			int(st.second), int(st.milliseconds)*int(time.Millisecond), time.UTC),
		SyncTicks: int64(h.sync_qpc), ProcessID: uint32(h.process_id),
		ProcessorCount:   uint32(h.processor_count),
		SamplingInterval: time.Duration(h.sampling_interval_ns),
	}
}

// Close releases the library's copy of the trace, which the exports read;
// the Go fields stay valid and later exports return ErrBadState.  A call
// still under way (an export, from another goroutine or whose writer calls
// Close) finishes first: the last one frees the copy.  A Profile's trace is
// released with its Profile.  A finalizer releases a trace never closed.
func (t *Trace) Close() error {
	if t.own == nil {
		return nil
	}
	t.own.mu.Lock()
	already := t.closed
	t.closed = true
	t.own.mu.Unlock()
	if !already && !t.borrowed {
		t.own.close()
	}
	return nil
}
