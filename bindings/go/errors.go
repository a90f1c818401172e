package nettrace

/*
#include <nettrace.h>
#include <nettrace_session.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
)

// Status is a libnettrace status code; the numbers are the C library's.
type Status int

// The status codes (nt_status).
const (
	StatusOK                 Status = C.NT_OK
	StatusNotNettrace        Status = C.NT_ERR_NOT_NETTRACE
	StatusUnsupportedVersion Status = C.NT_ERR_UNSUPPORTED_VERSION
	StatusNoEvents           Status = C.NT_ERR_NO_EVENTS
	StatusMalformed          Status = C.NT_ERR_MALFORMED
	StatusTruncated          Status = C.NT_ERR_TRUNCATED
	StatusLimit              Status = C.NT_ERR_LIMIT
	StatusNoMemory           Status = C.NT_ERR_NOMEM
	StatusStopped            Status = C.NT_ERR_STOPPED
	StatusInvalidArgument    Status = C.NT_ERR_INVALID_ARG
	StatusIO                 Status = C.NT_ERR_IO
	StatusNoEndpoint         Status = C.NT_ERR_NO_ENDPOINT
	StatusRefused            Status = C.NT_ERR_REFUSED
	StatusTimeout            Status = C.NT_ERR_TIMEOUT
	StatusCancelled          Status = C.NT_ERR_CANCELLED
	StatusStreamCap          Status = C.NT_ERR_STREAM_CAP
	StatusProtocol           Status = C.NT_ERR_PROTOCOL
	StatusBadState           Status = C.NT_ERR_STATE
)

// String is the status's short stable name ("truncated", "malformed", ...).
func (s Status) String() string { return C.GoString(C.nt_status_name(C.nt_status(s))) }

// Describe is the library's one-line description of the status.
func (s Status) Describe() string { return C.GoString(C.nt_status_describe(C.nt_status(s))) }

// sentinel is an error value that also matches another error with errors.Is.
type sentinel struct {
	msg  string
	also error
}

func (e *sentinel) Error() string { return e.msg }

func (e *sentinel) Is(target error) bool { return e.also != nil && target == e.also }

// The sentinel errors.  Every error the package returns for a status wraps
// the sentinel of that status, so errors.Is(err, ErrTruncated) works on an
// *Error, a *RuntimeError matches ErrRefused, and so on.
var (
	// ErrNotNettrace means the stream does not start with the NetTrace magic.
	ErrNotNettrace = errors.New("nettrace: not a nettrace stream")
	// ErrUnsupportedVersion means a NetTrace version this library does not
	// read (V4, V5 and V6 are read) or a stream not starting with its header.
	ErrUnsupportedVersion = errors.New("nettrace: unsupported nettrace format version")
	// ErrNoEvents means the stream holds a header and no blocks at all.
	ErrNoEvents = errors.New("nettrace: stream has no event or stack blocks")
	// ErrNoEndpoint means the process has no diagnostics endpoint: it is not a
	// .NET process, has not created its endpoint yet, or has diagnostics
	// disabled.  It also matches os.ErrNotExist.
	ErrNoEndpoint error = &sentinel{"nettrace: no diagnostics endpoint for the process", os.ErrNotExist}
	// ErrStreamTooLarge means the endpoint sent more than Config.MaxStreamBytes;
	// the connection was closed and the writer holds a truncated stream.
	ErrStreamTooLarge = errors.New("nettrace: stream exceeds the byte cap")

	// Beyond the reference: one sentinel for each other status.
	ErrMalformed       = errors.New("nettrace: malformed stream")
	ErrTruncated       = errors.New("nettrace: the stream ended early")
	ErrLimit           = errors.New("nettrace: a configured limit was exceeded")
	ErrNoMemory        = errors.New("nettrace: out of memory")
	ErrStopped         = errors.New("nettrace: stopped by a callback")
	ErrInvalidArgument = errors.New("nettrace: invalid argument")
	ErrIO              = errors.New("nettrace: input/output error")
	ErrRefused         = errors.New("nettrace: the runtime refused the request")
	ErrTimeout         = errors.New("nettrace: the deadline passed")
	ErrCancelled       = errors.New("nettrace: cancelled")
	ErrProtocol        = errors.New("nettrace: the peer broke the diagnostics protocol")
	ErrBadState        = errors.New("nettrace: the call is not valid in the object's current state")
)

var sentinels = map[Status]error{
	StatusNotNettrace: ErrNotNettrace, StatusUnsupportedVersion: ErrUnsupportedVersion,
	StatusNoEvents: ErrNoEvents, StatusMalformed: ErrMalformed, StatusTruncated: ErrTruncated,
	StatusLimit: ErrLimit, StatusNoMemory: ErrNoMemory, StatusStopped: ErrStopped,
	StatusInvalidArgument: ErrInvalidArgument, StatusIO: ErrIO, StatusNoEndpoint: ErrNoEndpoint,
	StatusRefused: ErrRefused, StatusTimeout: ErrTimeout, StatusCancelled: ErrCancelled,
	StatusStreamCap: ErrStreamTooLarge, StatusProtocol: ErrProtocol, StatusBadState: ErrBadState,
}

// Error is a failure the library reported: its status, the byte offset of
// the stream it refers to (for a truncated stream, where the incomplete unit
// began) and the library's message, which names the offset too.
type Error struct {
	Status  Status
	Offset  uint64
	Message string
}

func (e *Error) Error() string { return "nettrace: " + e.Message }

// Unwrap returns the sentinel of the status (ErrTruncated, ErrMalformed, ...).
func (e *Error) Unwrap() error { return sentinels[e.Status] }

func newError(st C.nt_status, offset uint64, msg string) error {
	if st == C.NT_OK {
		return nil
	}
	if msg == "" {
		msg = Status(st).Describe()
	}
	return &Error{Status: Status(st), Offset: offset, Message: msg}
}

// RuntimeError is the runtime's error reply to a request, such as a refused
// session or a provider it rejects.
type RuntimeError struct {
	// HResult is the runtime's failure code, zero when the reply carried none.
	HResult uint32
}

func (e *RuntimeError) Error() string {
	if name := C.nt_hresult_name(C.uint32_t(e.HResult)); name != nil {
		return fmt.Sprintf("nettrace: the runtime refused the request: HRESULT 0x%08X (%s)", e.HResult, C.GoString(name))
	}
	return fmt.Sprintf("nettrace: the runtime refused the request: HRESULT 0x%08X", e.HResult)
}

// Unwrap makes a *RuntimeError match ErrRefused.
func (e *RuntimeError) Unwrap() error { return ErrRefused }

// joined is several errors reported together (errors.Join arrived after the
// Go release this package supports); errors.Is and errors.As see each.
type joined []error

func join(errs ...error) error {
	var out joined
	for _, e := range errs {
		if e != nil {
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

func (j joined) Error() string {
	s := j[0].Error()
	for _, e := range j[1:] {
		s += "; " + e.Error()
	}
	return s
}

func (j joined) Is(target error) bool {
	for _, e := range j {
		if errors.Is(e, target) {
			return true
		}
	}
	return false
}

func (j joined) As(target interface{}) bool {
	for _, e := range j {
		if errors.As(e, target) {
			return true
		}
	}
	return false
}
