package nettrace

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// RecordEvent says which runtime event a method, module or assembly record
// came from.
type RecordEvent uint32

// The record events.
const (
	RecordLoad    RecordEvent = 0 // a load (for methods: JIT compilation)
	RecordUnload  RecordEvent = 1
	RecordDCStart RecordEvent = 2 // rundown at the session's start
	RecordDCEnd   RecordEvent = 3 // rundown at the session's stop
)

// StreamSample is a thread sample as the parser reads it.  IPs (innermost
// first) is valid only during the callback: copy what you keep.
type StreamSample struct {
	Timestamp int64 // trace clock ticks
	TimeNS    int64 // nanoseconds on the trace clock
	ThreadID  uint64
	Managed   bool
	IPs       []uint64
	Offset    uint64 // byte offset of the event in the stream
}

// MethodRecord is a method load, unload or rundown record.
type MethodRecord struct {
	Event        RecordEvent
	MethodID     uint64
	ModuleID     uint64
	StartAddress uint64
	Size         uint32
	Flags        uint32
	Namespace    string // the declaring type's full name
	Name         string
	Signature    string
	Timestamp    int64
}

// ModuleRecord is a module load, unload or rundown record.
type ModuleRecord struct {
	Event      RecordEvent
	ModuleID   uint64
	AssemblyID uint64
	ILPath     string
	NativePath string
}

// AssemblyRecord is an assembly load, unload or rundown record.
type AssemblyRecord struct {
	Event      RecordEvent
	AssemblyID uint64
	Name       string // fully qualified
}

// Callbacks receive what a streaming Parser reads, in stream order, from
// inside Write (and Close).  Every member may be nil.  A callback that
// returns an error stops the parse: Write returns that error.  A callback
// that panics stops the parse too, and the panic continues from Write (or
// Close) once the library has returned: the parser is then stopped, its
// error matching ErrStopped.  A callback may call Offset; Write, Close and
// TakeWindow called from a callback return ErrBadState.
type Callbacks struct {
	Header   func(h Header, frequency int64, pointerSize int) error
	Sample   func(s *StreamSample) error
	Method   func(m *MethodRecord) error
	Module   func(m *ModuleRecord) error
	Assembly func(a *AssemblyRecord) error
	// Event receives every event decoded ('nettrace events': the library's
	// field iterator); *Event is the callback's to keep.
	Event func(e *Event) error
	// KeepTrace makes the parser also build the trace Parse returns, which
	// Trace hands over after Close.
	KeepTrace bool
	// Windows makes the parser keep the samples since the last TakeWindow,
	// resolved against every record seen since the stream began: a live
	// session's hot methods, window by window, in bounded memory.  It
	// excludes KeepTrace.  The parser then also serves request windows
	// (OpenRequest) beside the continuous ones.
	Windows bool
	// Recorder, with Windows, keeps the samples of the last Recorder of
	// trace time (at most 16 MiB of them) for Cut: a flight recorder.
	Recorder time.Duration
	// RecordBudget, with Windows, bounds the bytes the kept method records
	// (with their names and address index) may hold; past it, records no
	// sample has hit are evicted first (WindowStats counts them).  0: 64 MiB.
	RecordBudget uint64
}

// Parser reads a stream pushed to it in chunks of any size: the bytes are
// decoded as they arrive and never held, so a live session's bytes go
// straight into it (a *Parser is an io.Writer).  Write, Close and
// TakeWindow may be called from different goroutines (a session's reader
// writes while the caller takes windows); they run one at a time.
type Parser struct {
	mu sync.Mutex // Write, Close and TakeWindow may run on different goroutines
	// holder is the goroutine holding mu, kept only for a parser with Go
	// callbacks (0 otherwise): a callback calling its own parser is refused
	// instead of waiting for itself.
	holder       atomic.Int64
	hasCallbacks bool
	panicked     *callbackPanic // a callback's panic, raised again when C has returned
	g            *C.ntgo_parser
	cb           Callbacks
	handle       cgo.Handle
	err          error // sticky: the first failure
	cbErr        error // what a callback returned
	closed       bool
	t            *Trace
	sample       StreamSample
}

// NewParser returns a parser that calls cb.  Close releases it.
func NewParser(cb Callbacks) (*Parser, error) {
	want := C.uint(0)
	if cb.Header != nil {
		want |= C.NTGO_HEADER
	}
	if cb.Sample != nil {
		want |= C.NTGO_SAMPLE
	}
	if cb.Method != nil {
		want |= C.NTGO_METHOD
	}
	if cb.Module != nil {
		want |= C.NTGO_MODULE
	}
	if cb.Assembly != nil {
		want |= C.NTGO_ASSEMBLY
	}
	if cb.Event != nil {
		want |= C.NTGO_EVENT
	}
	keep := C.int(C.NTGO_KEEP_NONE)
	switch {
	case cb.KeepTrace && cb.Windows:
		return nil, ErrInvalidArgument
	case cb.KeepTrace:
		keep = C.NTGO_KEEP_TRACE
	case cb.Windows:
		keep = C.NTGO_KEEP_WINDOWS
	}
	if cb.Recorder < 0 || ((cb.Recorder > 0 || cb.RecordBudget > 0) && !cb.Windows) {
		return nil, ErrInvalidArgument
	}
	return newParser(&cb, want, keep)
}

func newParser(cb *Callbacks, want C.uint, keep C.int) (*Parser, error) {
	p := &Parser{hasCallbacks: want != 0}
	if cb != nil {
		p.cb = *cb
	}
	p.handle = cgo.NewHandle(p)
	wcfg := C.nt_trace_window_config{struct_size: C.uint32_t(C.sizeof_nt_trace_window_config)}
	if cb != nil {
		wcfg.recorder_ns = C.uint64_t(cb.Recorder.Nanoseconds())
		wcfg.record_budget = C.uint64_t(cb.RecordBudget)
	}
	p.g = C.ntgo_parser_new(C.uintptr_t(p.handle), want, keep, nil, &wcfg)
	if p.g == nil {
		p.handle.Delete()
		return nil, ErrNoMemory
	}
	return p, nil
}

func (p *Parser) feed(b []byte) {
	if len(b) == 0 || p.err != nil {
		return
	}
	st := C.nt_parser_feed(p.g.parser, unsafe.Pointer(&b[0]), C.size_t(len(b)))
	if st != C.NT_OK {
		p.fail(st)
	}
	p.repanic()
}

// repanic raises a callback's panic again, now that C has returned.
func (p *Parser) repanic() {
	if v := p.panicked; v != nil {
		p.panicked = nil
		panic(v.value)
	}
}

// catch turns a callback's panic into a stop (deferred by the callbacks).
func (p *Parser) catch(ret *C.int) {
	if r := recover(); r != nil {
		p.panicked = &callbackPanic{r}
		p.cbErr = fmt.Errorf("%w: a callback panicked: %v", ErrStopped, r)
		*ret = 1
	}
}

// lock takes mu for what (a method's name); ErrBadState when the caller is
// one of this parser's callbacks, which already runs under mu.
func (p *Parser) lock(what string) error {
	if p.mu.TryLock() {
		p.markHolder()
		return nil
	}
	if p.reentered() {
		return fmt.Errorf("%w: %s called from inside one of the parser's callbacks", ErrBadState, what)
	}
	p.mu.Lock()
	p.markHolder()
	return nil
}

func (p *Parser) markHolder() {
	if p.hasCallbacks {
		p.holder.Store(goroutineID())
	}
}

func (p *Parser) unlock() {
	p.holder.Store(0)
	p.mu.Unlock()
}

// reentered: the calling goroutine holds mu, so runs in a callback.
func (p *Parser) reentered() bool {
	return p.hasCallbacks && p.holder.Load() == goroutineID()
}

func (p *Parser) fail(st C.nt_status) {
	if p.err != nil {
		return
	}
	if st == C.NT_ERR_STOPPED && p.cbErr != nil {
		p.err = p.cbErr
		return
	}
	p.err = newError(st, uint64(C.nt_parser_error_offset(p.g.parser)), C.GoString(C.nt_parser_message(p.g.parser)))
}

// finish declares the end of input and returns the final status.
func (p *Parser) finish() C.nt_status {
	st := C.nt_parser_finish(p.g.parser)
	if st != C.NT_OK {
		p.fail(st)
	}
	p.repanic()
	return st
}

// trace hands over the kept trace; err (a reader's failure) replaces the
// parser's error when given.
func (p *Parser) trace(st C.nt_status, err error) (*Trace, error) {
	if err == nil {
		err = p.err
	}
	var ct *C.nt_trace
	C.ntgo_parser_trace(p.g, st, &ct)
	if ct == nil {
		return nil, err
	}
	return ownedTrace(ct), err
}

func (p *Parser) free() {
	if p.g != nil {
		C.ntgo_parser_free(p.g)
		p.g = nil
		p.handle.Delete()
	}
}

// Write feeds the next bytes of the stream.  It returns len(b) while the
// stream is good so far; after a failure every call returns the same error
// (an *Error with the byte offset, or the error a callback returned).
func (p *Parser) Write(b []byte) (int, error) {
	if err := p.lock("Write"); err != nil {
		return 0, err
	}
	defer p.unlock()
	if p.closed {
		return 0, ErrBadState
	}
	p.feed(b)
	if p.err != nil {
		return 0, p.err
	}
	return len(b), nil
}

// Offset is the number of bytes consumed so far.
func (p *Parser) Offset() uint64 {
	if p.reentered() { // a callback: the parser is paused under its caller's lock
		return uint64(C.nt_parser_offset(p.g.parser))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.g == nil {
		return 0
	}
	return uint64(C.nt_parser_offset(p.g.parser))
}

// Close declares the end of the stream and releases the parser.  It returns
// nil for a complete stream, an error matching ErrTruncated when the stream
// ended early (everything complete was delivered), ErrNoEvents for a header
// without events, or the parse's earlier error.
func (p *Parser) Close() error {
	if err := p.lock("Close"); err != nil {
		return err
	}
	defer p.unlock()
	if p.closed {
		return p.err
	}
	p.closed = true
	// Released even when a callback's panic leaves finish.
	defer p.free()
	st := p.finish()
	if p.cb.KeepTrace {
		p.t, _ = p.trace(st, nil)
	}
	return p.err
}

// TakeWindow returns the samples read since the previous call (with
// Windows) as a Trace, resolved against every method, module and assembly
// record read since the stream began, and starts a new window.  When memory
// ran short the window's samples are lost (ErrNoMemory); past the record
// limit the trace is still returned with an error matching ErrLimit.
func (p *Parser) TakeWindow() (*Trace, error) {
	if err := p.lock("TakeWindow"); err != nil {
		return nil, err
	}
	defer p.unlock()
	if p.closed || p.g == nil || !p.cb.Windows {
		return nil, ErrBadState
	}
	var ct *C.nt_trace
	st := C.ntgo_parser_take_window(p.g, &ct)
	return windowTrace(ct, st)
}

// Trace returns the trace built from the stream (with KeepTrace, after
// Close): what was read before a failure, nil if even the header was missing.
func (p *Parser) Trace() *Trace { return p.t }

func parserOf(h C.uintptr_t) *Parser { return cgo.Handle(h).Value().(*Parser) }

// deliver runs a callback and turns its error into the C stop code.
func (p *Parser) deliver(err error) C.int {
	if err != nil {
		p.cbErr = err
		return 1
	}
	return 0
}

//export goOnHeader
func goOnHeader(h C.uintptr_t, info *C.nt_trace_info) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	return p.deliver(p.cb.Header(newHeader(info), int64(info.qpc_frequency), int(info.pointer_size)))
}

//export goOnSample
func goOnSample(h C.uintptr_t, s *C.nt_sample) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	ss := &p.sample
	*ss = StreamSample{Timestamp: int64(s.timestamp), TimeNS: int64(s.time_ns), ThreadID: uint64(s.thread_id),
		Managed: s._type == C.NT_SAMPLE_MANAGED}
	if s.stack != nil && s.stack.count > 0 {
		ss.IPs = unsafe.Slice((*uint64)(unsafe.Pointer(s.stack.ips)), int(s.stack.count))
	}
	if s.event != nil {
		ss.Offset = uint64(s.event.offset)
	}
	return p.deliver(p.cb.Sample(ss))
}

//export goOnMethod
func goOnMethod(h C.uintptr_t, m *C.nt_method) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	return p.deliver(p.cb.Method(&MethodRecord{
		Event: RecordEvent(m.which), MethodID: uint64(m.method_id), ModuleID: uint64(m.module_id),
		StartAddress: uint64(m.start_address), Size: uint32(m.size), Flags: uint32(m.flags),
		Namespace: C.GoString(m.declaring_type), Name: C.GoString(m.name),
		Signature: C.GoString(m.signature), Timestamp: int64(m.timestamp),
	}))
}

//export goOnModule
func goOnModule(h C.uintptr_t, m *C.nt_module) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	return p.deliver(p.cb.Module(&ModuleRecord{
		Event: RecordEvent(m.which), ModuleID: uint64(m.module_id), AssemblyID: uint64(m.assembly_id),
		ILPath: C.GoString(m.il_path), NativePath: C.GoString(m.native_path),
	}))
}

//export goOnAssembly
func goOnAssembly(h C.uintptr_t, a *C.nt_assembly) (ret C.int) {
	p := parserOf(h)
	defer p.catch(&ret)
	return p.deliver(p.cb.Assembly(&AssemblyRecord{
		Event: RecordEvent(a.which), AssemblyID: uint64(a.assembly_id), Name: C.GoString(a.name),
	}))
}
