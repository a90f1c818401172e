package nettrace

import (
	"bytes"
	"runtime"
	"strconv"
	"sync"
)

// owner frees a library object (a trace, or a profile and its trace) once
// nothing uses it.  Every call that hands the object to C holds a use for
// its duration; Close only marks the object closed, and the last use under
// way frees it.  So Close may race an export, or run inside the export's
// own writer, without freeing memory the library is reading, and a
// finalizer (set on the owner, which the Go values using it keep
// reachable) never runs during a call.
type owner struct {
	mu     sync.Mutex
	users  int
	closed bool
	free   func() // nil once run
}

func newOwner(free func()) *owner {
	o := &owner{free: free}
	runtime.SetFinalizer(o, (*owner).close)
	return o
}

// acquire starts a use; false once the object is closed.
func (o *owner) acquire() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return false
	}
	o.users++
	return true
}

// release ends a use; the last one after close frees the object.
func (o *owner) release() {
	o.mu.Lock()
	o.users--
	free := o.takeFree()
	o.mu.Unlock()
	if free != nil {
		free()
	}
}

// close marks the object closed and frees it now unless a use is under way.
func (o *owner) close() {
	o.mu.Lock()
	o.closed = true
	free := o.takeFree()
	o.mu.Unlock()
	if free != nil {
		free()
		runtime.SetFinalizer(o, nil)
	}
}

// takeFree hands over the free function when its time has come (o.mu held).
func (o *owner) takeFree() func() {
	if !o.closed || o.users > 0 || o.free == nil {
		return nil
	}
	f := o.free
	o.free = nil
	return f
}

// goroutineID is the calling goroutine's number, read from the header of its
// stack trace ("goroutine 18 [running]:").  Go gives no other way to tell a
// callback calling back into its own parser (which would deadlock on the
// parser's lock) from another goroutine waiting its turn; it is read only
// when a parser with callbacks is locked, not per callback.
func goroutineID() int64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	if i := bytes.IndexByte(b, ' '); i > 0 {
		b = b[:i]
	}
	id, _ := strconv.ParseInt(string(b), 10, 64)
	return id
}
