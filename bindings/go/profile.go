package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"
)

// ProfileOptions select what ParseProfileFile keeps.  The zero value keeps
// every event, throws of one type merged whatever their messages.
type ProfileOptions struct {
	// From and To keep only the events at or after From and before To, each
	// by its own time (a contention wait by its start); spelled as
	// 'nettrace --from/--to' take them ("2s", "+1.5ms", "@864741168641");
	// "" leaves that end open.
	From, To string
	// ExceptionMessages makes an exception's message part of its record's
	// key (ProfileRecord.Message), as 'nettrace top --messages'.
	ExceptionMessages bool
	KeepEvents        bool // one record per event (memory grows with events)
	EventsOnly        bool // keep no thread samples
}

// ProfileRecord is the events of one stack, thread and label merged.
type ProfileRecord struct {
	Kind     string // "alloc", "exceptions" or "contention"
	ThreadID uint64
	Label    string // allocated type / exception type / "" for contention
	Message  string // the exception's message with ExceptionMessages, else ""
	Heap     uint32 // alloc: 0 soh, 1 loh, 2 poh, 3 other; contention: ContentionFlags
	Open     bool   // contention: a start with no stop in the stream
	Value    int64  // bytes, throws or wait ns
	Count    int64  // events merged
	TimeNS   int64  // the first event's trace-clock time
	Frames   []Frame
}

// ProfileTotals are one kind's totals (in the window).
type ProfileTotals struct {
	Events, Records, Open, UnpairedStops, WithoutStack uint64
	Value                                              int64
}

// GC is one GC of the timeline ('nettrace gc'), from GCStart to the end of
// its pause.  Times are trace-clock ns and sizes bytes, -1 where the event
// that gives them was absent.
type GC struct {
	Number, Generation uint32
	Reason             string // "AllocSmall", "Induced", ...
	Type               string // "blocking", "background", "foreground"
	ThreadID           uint64
	StartNS, EndNS     int64
	SuspendBeginNS     int64
	SuspendEndNS       int64
	RestartEndNS       int64
	SuspensionNS       int64 // the threads' suspension
	PauseNS            int64 // the threads' stop
	HeapBefore         int64
	HeapAfter          int64
	Promoted           int64
	GenerationSizes    [5]int64 // gen0, gen1, gen2, LOH, POH
}

// Profile is the event records of a trace beside its CPU samples (Trace,
// valid until Close).
type Profile struct {
	Trace   *Trace
	Records []ProfileRecord
	GCs     []GC // the GC timeline, in order of start time
	c       *C.nt_profile
	own     *owner // frees c, with its trace, once no call uses either
}

var profileKinds = map[string]C.nt_profile_kind{
	"alloc": C.NT_PROFILE_ALLOC, "exceptions": C.NT_PROFILE_EXCEPTIONS, "contention": C.NT_PROFILE_CONTENTION,
}

// ParseProfileFile reads a trace file into its allocation, exception and
// contention records.  A damaged stream returns what was read with the error.
func ParseProfileFile(path string, o ProfileOptions) (*Profile, error) {
	var co C.nt_profile_options
	var err error
	if co.from, err = parseBound(o.From); err != nil {
		return nil, err
	}
	if co.to, err = parseBound(o.To); err != nil {
		return nil, err
	}
	co.exception_messages = C.bool(o.ExceptionMessages)
	co.keep_events, co.events_only = C.bool(o.KeepEvents), C.bool(o.EventsOnly)
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var msg [512]C.char
	var cp *C.nt_profile
	st := C.nt_profile_from_file(cpath, &co, &cp, &msg[0], C.size_t(len(msg)))
	err = newError(st, 0, C.GoString(&msg[0]))
	if cp == nil {
		if err == nil {
			err = fmt.Errorf("%w: no profile", ErrNoMemory)
		}
		return nil, err
	}
	tr := newTrace(C.nt_profile_trace(cp))
	tr.borrowed = true
	tr.own = newOwner(func() { C.nt_profile_free(cp) })
	p := &Profile{Trace: tr, c: cp, own: tr.own}
	names := map[C.nt_profile_kind]string{}
	for k, v := range profileKinds {
		names[v] = k
	}
	for i, n := 0, int(C.nt_profile_record_count(cp)); i < n; i++ {
		r := C.nt_profile_record_at(cp, C.size_t(i))
		p.Records = append(p.Records, ProfileRecord{
			Kind: names[r.kind], ThreadID: uint64(r.thread_id), Label: C.GoString(r.label),
			Message: C.GoString(r.message), Heap: uint32(r.heap), Open: bool(r.open), Value: int64(r.value),
			Count: int64(r.count), TimeNS: int64(r.time_ns), Frames: tr.stacks[r.stack_index],
		})
	}
	p.GCs = profileGCs(cp)
	return p, err
}

func profileGCs(cp *C.nt_profile) []GC {
	out := make([]GC, int(C.nt_profile_gc_count(cp)))
	for i := range out {
		g := C.nt_profile_gc_at(cp, C.size_t(i))
		out[i] = GC{Number: uint32(g.number), Generation: uint32(g.generation),
			Reason: C.GoString(C.nt_gc_reason_name(g.reason)), Type: C.GoString(C.nt_gc_type_name(g._type)),
			ThreadID: uint64(g.thread_id), StartNS: int64(g.start_ns), EndNS: int64(g.end_ns),
			SuspendBeginNS: int64(g.suspend_begin_ns), SuspendEndNS: int64(g.suspend_end_ns),
			RestartEndNS: int64(g.restart_end_ns), SuspensionNS: int64(g.suspension_ns),
			PauseNS: int64(g.pause_ns), HeapBefore: int64(g.heap_before), HeapAfter: int64(g.heap_after),
			Promoted: int64(g.promoted)}
		for j := range out[i].GenerationSizes {
			out[i].GenerationSizes[j] = int64(g.gen_size[j])
		}
	}
	return out
}

// Totals returns the totals of kind ("alloc", "exceptions", "contention").
func (p *Profile) Totals(kind string) (ProfileTotals, error) {
	k, ok := profileKinds[kind]
	if !ok {
		return ProfileTotals{}, fmt.Errorf("%w: no profile kind %q", ErrInvalidArgument, kind)
	}
	if p.own == nil || !p.own.acquire() {
		return ProfileTotals{}, ErrBadState
	}
	defer p.leave()
	var t C.nt_profile_totals
	C.nt_profile_totals_get(p.c, k, &t)
	return ProfileTotals{Events: uint64(t.events), Records: uint64(t.records), Open: uint64(t.open),
		UnpairedStops: uint64(t.unpaired_stops), WithoutStack: uint64(t.without_stack),
		Value: int64(t.value)}, nil
}

func (p *Profile) leave() {
	p.own.release()
	runtime.KeepAlive(p)
}

// Close releases the library's profile and its trace (after a call of
// either still under way); the Go fields stay valid.  A finalizer releases
// a profile when neither it nor its Trace is referenced any more.
func (p *Profile) Close() error {
	if p.own != nil {
		p.own.close()
	}
	return nil
}
