package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// TimeNS places a window end, spelled as 'nettrace --from/--to' take it and
// read by the library (nt_time_bound_parse), on the trace clock: "2s",
// "+1.5ms", "250us" after the trace's start (its header's sync time), or
// "@864741168641" absolute.  A bare "2" has no unit and "" is no time: both
// are refused (ErrInvalidArgument).
func (t *Trace) TimeNS(s string) (int64, error) {
	ct, err := t.enter()
	if err != nil {
		return 0, err
	}
	defer t.leave()
	b, err := parseBound(s)
	if err == nil && s == "" {
		err = fmt.Errorf("%w: no time given", ErrInvalidArgument)
	}
	if err != nil {
		return 0, err
	}
	return int64(C.nt_time_bound_resolve(&b, C.nt_trace_header(ct))), nil
}

// parseBound reads a window end with the library's parser; "" is an open end.
func parseBound(s string) (C.nt_time_bound, error) {
	var b C.nt_time_bound
	if s == "" {
		return b, nil
	}
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	if !C.nt_time_bound_parse(cs, &b) {
		return b, fmt.Errorf("%w: bad time %q: give a unit, relative to the trace's start (2s, +1.5ms, 250us, "+
			"40ns, 3m), or '@' and trace-clock ns (@864741168641)", ErrInvalidArgument, s)
	}
	return b, nil
}

// WallNS returns each sample's wall weight, in Samples order: the ns to the
// same thread's next sample (the sampling interval for its last) -- the
// weight of TopOptions.ByTime and ExportOptions.ByTime.
func (t *Trace) WallNS() ([]int64, error) {
	ct, err := t.enter()
	if err != nil {
		return nil, err
	}
	defer t.leave()
	n := int(C.nt_trace_sample_count(ct))
	out := make([]int64, n)
	if n == 0 {
		return out, nil
	}
	if st := C.nt_trace_wall_ns(ct, (*C.int64_t)(unsafe.Pointer(&out[0]))); st != C.NT_OK {
		return nil, newError(st, 0, "")
	}
	return out, nil
}
