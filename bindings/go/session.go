package nettrace

/*
#include <stdlib.h>
#include "glue.h"
*/
import "C"

import (
	"context"
	"io"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// The providers whose events the reader understands, and the keywords that
// make the runtime emit the loader and JIT events frame resolution needs.
const (
	ProviderSampleProfiler = C.NT_PROVIDER_SAMPLE_PROFILER
	ProviderRuntime        = C.NT_PROVIDER_RUNTIME

	KeywordLoader uint64 = C.NT_KEYWORD_LOADER // module and assembly load events
	KeywordJit    uint64 = C.NT_KEYWORD_JIT    // method load events
)

// DefaultBufferMB is the runtime-side event buffer a zero Config.BufferMB selects.
const DefaultBufferMB uint32 = C.NT_DEFAULT_BUFFER_MB

// DefaultMaxStreamBytes is the stream size a zero Config.MaxStreamBytes selects.
const DefaultMaxStreamBytes int64 = C.NT_DEFAULT_MAX_STREAM_BYTES

// DefaultStopTimeout bounds the stop a first Stop call starts, whatever its
// callers' contexts (a zero Config.StopTimeout selects it).
const DefaultStopTimeout = 2 * time.Minute

// Provider is one event provider to enable in a session.
type Provider struct {
	Name     string
	Keywords uint64
	// Level is the verbosity; zero selects 5 (verbose), which the
	// method-load events need.
	Level uint32
	// Arguments is the provider's filter data as "key=value;..." pairs;
	// empty sends none.
	Arguments string
}

// Config describes a tracing session.  A zero field selects its default.
type Config struct {
	// Providers defaults to the sample profiler plus the runtime's loader and
	// JIT events, which is what Parse needs to resolve stacks.
	Providers []Provider
	BufferMB  uint32 // zero selects DefaultBufferMB
	// NoRundown skips the rundown the runtime performs when the session
	// stops.  Rundown is on by default: without it, every method
	// JIT-compiled before the session started stays unresolved.
	NoRundown bool
	// MaxStreamBytes caps the bytes copied to the writer, so an endpoint that
	// never stops sending cannot fill the disk; zero selects
	// DefaultMaxStreamBytes.
	MaxStreamBytes int64
	// StopTimeout bounds the stop itself (beyond the reference); zero selects
	// DefaultStopTimeout.
	StopTimeout time.Duration
}

// Session is one running EventPipe session.
type Session struct {
	mu      sync.Mutex
	c       *C.nt_session // nil once the stop finished and released it
	handle  cgo.Handle
	sink    *writeState
	timeout time.Duration
	once    sync.Once
	done    chan struct{}
	err     error // the stop's and the copy's errors, set before done closes
	bytes   uint64
}

// deadlineOf converts ctx's deadline to the library's monotonic clock.
func deadlineOf(ctx context.Context) C.int64_t {
	d, ok := ctx.Deadline()
	if !ok {
		return C.NT_DEADLINE_NONE
	}
	left := time.Until(d)
	if left < 0 {
		left = 0
	}
	return C.nt_now_ns() + C.int64_t(left.Nanoseconds())
}

// StartTracing finds pid's diagnostics endpoint, starts an EventPipe session
// (CollectTracing2, or a later command when the configuration needs it) and
// copies the nettrace stream into w from the library's reader thread until
// the runtime closes it or Stop is called, so w must be safe to write while
// the caller does other work; it is not written after Stop returns.
//
// It returns an error matching ErrNoEndpoint (and os.ErrNotExist) while the
// process has no endpoint, so a caller may retry.  A refused request is a
// *RuntimeError.  Canceling ctx before the reply closes the connection and
// returns ctx.Err().  A *Parser is a fine w: the stream is then decoded as it
// arrives and never held.  Stop ends the session and releases it; a session
// never stopped runs until the runtime ends the stream.
func StartTracing(ctx context.Context, pid int, cfg Config, w io.Writer) (*Session, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var cc C.nt_session_config
	if n := len(cfg.Providers); n > 0 {
		provs := (*[1 << 20]C.nt_provider)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof(C.nt_provider{}))))[:n:n]
		defer func() {
			for i := range provs {
				C.free(unsafe.Pointer(provs[i].name))
				C.free(unsafe.Pointer(provs[i].arguments))
			}
			C.free(unsafe.Pointer(&provs[0]))
		}()
		for i, p := range cfg.Providers {
			provs[i].name = C.CString(p.Name)
			provs[i].keywords = C.uint64_t(p.Keywords)
			provs[i].level = C.uint32_t(p.Level)
			if p.Arguments != "" {
				provs[i].arguments = C.CString(p.Arguments)
			}
		}
		cc.providers, cc.provider_count = &provs[0], C.size_t(n)
	}
	cc.buffer_mb = C.uint32_t(cfg.BufferMB)
	cc.no_rundown = C.bool(cfg.NoRundown)
	if cfg.MaxStreamBytes > 0 {
		cc.max_stream_bytes = C.uint64_t(cfg.MaxStreamBytes)
	}
	s := &Session{sink: &writeState{w: w}, timeout: cfg.StopTimeout, done: make(chan struct{})}
	if s.timeout <= 0 {
		s.timeout = DefaultStopTimeout
	}
	s.handle = cgo.NewHandle(s.sink)
	s.c = C.ntgo_session_new(&cc, C.uintptr_t(s.handle)) // copies the configuration
	if s.c == nil {
		s.handle.Delete()
		return nil, ErrNoMemory
	}

	// ctx bounds the start: its cancellation ends the library's wait.
	var cancelled bool
	watchDone, watchExit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watchExit)
		select {
		case <-ctx.Done():
			cancelled = true
			C.nt_session_cancel(s.c)
		case <-watchDone:
		}
	}()
	st := C.nt_session_start(s.c, C.int32_t(pid), deadlineOf(ctx))
	close(watchDone)
	<-watchExit
	if st == C.NT_OK && !cancelled {
		return s, nil
	}
	if _, ok := ctx.Deadline(); ok && st == C.NT_ERR_TIMEOUT {
		// The library's deadline is ctx's, on the monotonic clock: ctx's
		// own timer fires within moments.
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
	var err error
	switch {
	case cancelled || ((st == C.NT_ERR_TIMEOUT || st == C.NT_ERR_CANCELLED) && ctx.Err() != nil):
		err = ctx.Err()
	case st == C.NT_ERR_REFUSED:
		err = &RuntimeError{HResult: uint32(C.nt_session_hresult(s.c))}
	default:
		err = newError(st, 0, C.GoString(C.nt_session_message(s.c)))
	}
	C.nt_session_free(s.c)
	s.handle.Delete()
	return nil, err
}

// Stop sends StopTracing on a second connection, waits for the stream to end
// (rundown included), and returns the stop's and the copy's errors together.
// It may be called again and by several goroutines: the stop runs once,
// detached from every caller under Config.StopTimeout, and every call waits
// for it under its own ctx.  Canceling ctx abandons the session (its
// connections are closed, the stream is cut) and ends the wait, so Stop
// never outlives its context by more than the abandoning takes.  Stop returns
// only after the reader has stopped writing: nothing is written to the
// writer after it returns, so the caller may read or close it at once.
func (s *Session) Stop(ctx context.Context) error {
	s.once.Do(func() { go s.stop() })
	select {
	case <-s.done:
		return s.err
	case <-ctx.Done():
		select {
		case <-s.done: // finished as ctx ended: the stop's own result
			return s.err
		default:
		}
		s.mu.Lock()
		if s.c != nil {
			C.nt_session_cancel(s.c)
		}
		s.mu.Unlock()
		<-s.done
		return join(ctx.Err(), s.err)
	}
}

// stop runs the library's stop once, then releases the session.
func (s *Session) stop() {
	st := C.nt_session_stop(s.c, C.nt_now_ns()+C.int64_t(s.timeout.Nanoseconds()))
	s.mu.Lock()
	var err error
	switch st {
	case C.NT_OK:
	case C.NT_ERR_STOPPED:
		// The sink stopped the session: the writer failed.
	case C.NT_ERR_CANCELLED:
		// A caller's ctx abandoned the session; that caller reports ctx.Err().
	default:
		err = newError(st, uint64(C.nt_session_bytes(s.c)), C.GoString(C.nt_session_message(s.c)))
	}
	s.bytes = uint64(C.nt_session_bytes(s.c))
	C.nt_session_free(s.c)
	s.c = nil
	s.mu.Unlock()
	s.handle.Delete()
	s.err = join(err, s.sink.err)
	close(s.done)
}

// Bytes is the number of stream bytes written to w so far.
func (s *Session) Bytes() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil {
		return uint64(C.nt_session_bytes(s.c))
	}
	return s.bytes
}
