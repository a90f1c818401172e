package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"io"
	"os"
	"runtime/cgo"
	"unsafe"
)

// ConvertOptions say what Convert writes.  The zero value converts the whole
// trace into its own format version.
type ConvertOptions struct {
	Format       int  // 4 (V4/V5) or 6; 0: the input's own
	Uncompressed bool // uncompressed event headers
	// From and To cut a slice [From, To) of the events, each as 'nettrace
	// --from/--to' read it: "2s", "+1.5ms" after the trace's start, or
	// "@864741168641" (trace-clock ns); "" leaves that end open.
	From, To string
}

// ConvertStats are the counts of a conversion (nt_convert_stats).
type ConvertStats struct {
	EventsWritten         uint64
	EventsWithoutMetadata uint64 // left out: their metadata was never defined
	FieldlessMetadata     uint64 // records written without a field list the output cannot hold
	MetadataFlushes       uint64 // sequence points added to keep a V6 output's metadata readable
	EventsOutsideWindow   uint64 // a slice's events left out
	RecordsOutsideWindow  uint64 // method, module and assembly records kept from outside the window
	InputBytes            uint64
	OutputBytes           uint64
}

// ConvertFile writes the trace at path again into w, as o says (nil: the
// defaults), through the library's nt_convert.  A damaged or cut input
// still gives w a complete trace of what was read before the damage, and
// returns the input's *Error (ErrTruncated, ErrMalformed, ...).
func ConvertFile(path string, w io.Writer, o *ConvertOptions) (ConvertStats, error) {
	f, err := os.Open(path)
	if err != nil {
		return ConvertStats{}, err
	}
	defer f.Close()
	return convert(int(f.Fd()), nil, w, o)
}

// ConvertBytes is ConvertFile over a trace in memory.
func ConvertBytes(data []byte, w io.Writer, o *ConvertOptions) (ConvertStats, error) {
	if data == nil {
		data = []byte{}
	}
	return convert(-1, data, w, o)
}

// options is the C form of o.
func (o *ConvertOptions) options() (C.nt_convert_options, error) {
	co := C.nt_convert_options{struct_size: C.uint32_t(C.sizeof_nt_convert_options)}
	if o == nil {
		return co, nil
	}
	co.format = C.uint32_t(o.Format)
	co.uncompressed = C.bool(o.Uncompressed)
	for _, end := range []struct {
		s   string
		out *C.nt_time_bound
	}{{o.From, &co.from}, {o.To, &co.to}} {
		if end.s == "" {
			continue
		}
		cs := C.CString(end.s)
		ok := C.nt_time_bound_parse(cs, end.out)
		C.free(unsafe.Pointer(cs))
		if !ok {
			return co, fmt.Errorf("%w: bad time %q: give a unit (2s, +1.5ms, 250us) or '@' and trace-clock ns",
				ErrInvalidArgument, end.s)
		}
	}
	return co, nil
}

func convert(fd int, data []byte, w io.Writer, o *ConvertOptions) (ConvertStats, error) {
	co, err := o.options()
	if err != nil {
		return ConvertStats{}, err
	}
	ws := &writeState{w: w}
	h := cgo.NewHandle(ws)
	defer h.Delete()
	cst := C.nt_convert_stats{struct_size: C.uint32_t(C.sizeof_nt_convert_stats)}
	var st C.nt_status
	if data != nil {
		var p unsafe.Pointer
		if len(data) > 0 {
			p = unsafe.Pointer(&data[0])
		} else {
			p = unsafe.Pointer(&[1]byte{}) // nt_convert_bytes reads data NULL as "read fd"
		}
		st = C.ntgo_convert(-1, p, C.size_t(len(data)), &co, C.uintptr_t(h), &cst)
	} else {
		st = C.ntgo_convert(C.int(fd), nil, 0, &co, C.uintptr_t(h), &cst)
	}
	ws.repanic()
	stats := ConvertStats{
		EventsWritten: uint64(cst.events_written), EventsWithoutMetadata: uint64(cst.events_without_metadata),
		FieldlessMetadata: uint64(cst.fieldless_metadata), MetadataFlushes: uint64(cst.metadata_flushes),
		EventsOutsideWindow: uint64(cst.events_outside_window), RecordsOutsideWindow: uint64(cst.records_outside_window),
		InputBytes: uint64(cst.input_bytes), OutputBytes: uint64(cst.output_bytes),
	}
	if ws.err != nil {
		return stats, ws.err
	}
	return stats, newError(st, uint64(cst.error_offset), C.GoString(&cst.message[0]))
}
