package nettrace

/*
#include "glue.h"
*/
import "C"

import (
	"io"
	"time"
	"unsafe"
)

// Event is one decoded event, as 'nettrace events --json' prints it: the
// library's field iterator, the payload's fields in order.
type Event struct {
	TimeNS   int64 // nanoseconds on the trace clock
	ThreadID uint64
	Provider string
	EventID  uint32
	Version  uint32
	Name     string // "GCStart_V2", an EventSource event's own name, or ""
	Fields   []Field
	// Error says why the payload stopped decoding early ("" when it did
	// not), at ErrorOffset in the payload; Leftover counts the payload bytes
	// no field covered (a newer event version's additions).
	Error       string
	ErrorOffset uint32
	Leftover    uint32
	Offset      uint64 // byte offset of the event in the stream
}

// Field is one decoded field.  Value is an int64 (signed integers), uint64
// (unsigned, pointers, chars), bool, float64, string, []byte (win:Binary,
// Decimal), GUID, FileTime, []Field (a struct) or []interface{} (an array).
type Field struct {
	Name  string
	Value interface{}
}

// GUID is a GUID field's 16 bytes in the payload's (Windows) layout.
type GUID [16]byte

// String is the usual form, "00000000-0000-0000-0000-000000000000".
func (g GUID) String() string {
	const hex = "0123456789abcdef"
	// The first three groups are little-endian in the Windows layout.
	order := [16]int{3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15}
	out := make([]byte, 0, 36)
	for i, j := range order {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out = append(out, '-')
		}
		out = append(out, hex[g[j]>>4], hex[g[j]&15])
	}
	return string(out)
}

// FileTime is a DateTime field: a Windows FILETIME, 100 ns ticks since
// 1601-01-01 UTC.
type FileTime int64

// Time is the FILETIME as a time.Time (UTC).
func (ft FileTime) Time() time.Time {
	const fromUnix = 11644473600 // seconds from 1601-01-01 to 1970-01-01
	return time.Unix(int64(ft)/10000000-fromUnix, int64(ft)%10000000*100).UTC()
}

// Field returns the value of the first top-level field called name.
func (e *Event) Field(name string) (interface{}, bool) {
	for _, f := range e.Fields {
		if f.Name == name {
			return f.Value, true
		}
	}
	return nil, false
}

// ParseEvents decodes every event of the stream r, in stream order, into
// fn, holding no more than the parser's chunk.  It returns fn's first error,
// r's, or the stream's (an *Error with the byte offset, after fn has seen
// every event before the fault; ErrTruncated when the stream ended early).
func ParseEvents(r io.Reader, fn func(e *Event) error) error {
	p, err := NewParser(Callbacks{Event: fn})
	if err != nil {
		return err
	}
	if _, err := io.Copy(p, r); err != nil {
		p.Close()
		return err
	}
	return p.Close()
}

//export goOnEvent
func goOnEvent(h C.uintptr_t, ev *C.nt_event, frequency C.int64_t, it *C.nt_field_iter, f *C.ntgo_field) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	return p.deliver(p.cb.Event(decodeEvent(ev, frequency, it, f)))
}

// decodeEvent copies an event the parser hands a callback into Go values,
// iterating its fields with it and f (C memory).
func decodeEvent(ev *C.nt_event, frequency C.int64_t, it *C.nt_field_iter, f *C.ntgo_field) *Event {
	e := &Event{ThreadID: uint64(ev.thread_id), Name: C.GoString(C.nt_event_name(ev)), Offset: uint64(ev.offset),
		TimeNS: int64(ev.timestamp)}
	if frequency > 0 {
		e.TimeNS = int64(C.nt_ticks_to_ns(ev.timestamp, frequency))
	}
	if d := ev.desc; d != nil {
		e.Provider, e.EventID, e.Version = C.GoString(d.provider), uint32(d.event_id), uint32(d.version)
	}
	C.nt_event_fields_begin(ev, it)
	e.Fields, _ = decodeFields(it, f, false)
	if it.status != C.NT_OK {
		e.Error, e.ErrorOffset = C.GoString(it.message), uint32(it.error_offset)
	} else {
		e.Leftover = uint32(it.leftover)
	}
	return e
}

// decodeFields reads values up to the end of the current struct or array
// (or of the top level): as []Field, or as an array's elements.
func decodeFields(it *C.nt_field_iter, f *C.ntgo_field, elements bool) ([]Field, []interface{}) {
	var fields []Field
	var elems []interface{}
	for C.ntgo_field_next(it, f) {
		name := C.GoString(f.name) // before f is reused by a nested struct or array
		var v interface{}
		switch f.kind {
		case C.NT_VALUE_STRUCT_END, C.NT_VALUE_ARRAY_END:
			return fields, elems
		case C.NT_VALUE_STRUCT_BEGIN:
			v, _ = decodeFields(it, f, false)
		case C.NT_VALUE_ARRAY_BEGIN:
			_, sub := decodeFields(it, f, true)
			if sub == nil {
				sub = []interface{}{}
			}
			v = sub
		default:
			v = scalar(f)
		}
		if elements {
			elems = append(elems, v)
		} else {
			fields = append(fields, Field{Name: name, Value: v})
		}
	}
	return fields, elems
}

func scalar(f *C.ntgo_field) interface{} {
	switch f.kind {
	case C.NT_VALUE_INT:
		return int64(f.i)
	case C.NT_VALUE_UINT:
		return uint64(f.u)
	case C.NT_VALUE_BOOL:
		return f.u != 0
	case C.NT_VALUE_FLOAT:
		return float64(f.f)
	case C.NT_VALUE_GUID:
		return GUID(*(*[16]byte)(unsafe.Pointer(&f.guid[0])))
	case C.NT_VALUE_DATETIME:
		return FileTime(f.i)
	case C.NT_VALUE_STRING:
		return C.GoStringN((*C.char)(f.ptr), C.int(f.len))
	case C.NT_VALUE_BINARY:
		return C.GoBytes(f.ptr, C.int(f.len))
	}
	return nil
}
