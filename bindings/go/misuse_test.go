package nettrace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// gcWriter collects garbage while an export writes to it: a trace the caller
// no longer references must stay alive until the export returns.
type gcWriter struct{ n int }

func (w *gcWriter) Write(b []byte) (int, error) {
	w.n++
	if w.n%8 == 1 {
		runtime.GC()
	}
	_ = make([]byte, 1<<16)
	return len(b), nil
}

func readCorpus(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(corpusFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// parseBytes returns a trace nothing else references (the finalizer's prey).
func parseBytes(t *testing.T, data []byte) *Trace {
	t.Helper()
	tr, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func TestExportKeepsTheTraceAlive(t *testing.T) {
	data := readCorpus(t, "spin-threads-dotnet-trace.nettrace")
	for i := 0; i < 5; i++ {
		w := &gcWriter{}
		if err := parseBytes(t, data).WriteSpeedscope(w, nil); err != nil {
			t.Fatal(err)
		}
		if w.n == 0 {
			t.Fatal("the export wrote nothing")
		}
	}
}

// TestCallsKeepTheTraceAlive runs every call that hands the C trace to the
// library while other goroutines collect garbage.
func TestCallsKeepTheTraceAlive(t *testing.T) {
	data := readCorpus(t, "spin-threads-dotnet-trace.nettrace")
	path := corpusFile(t, "spin-threads-dotnet-trace.nettrace")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	// 300 rounds: the calls before runtime.KeepAlive crashed in 3 of 3 runs.
	for i := 0; i < 300; i++ {
		if rows, err := parseBytes(t, data).TopWith(5, TopOptions{ByTime: true}); err != nil || len(rows) == 0 {
			t.Fatalf("TopWith: %v, %d rows", err, len(rows))
		}
		if w, err := parseBytes(t, data).WallNS(); err != nil || len(w) == 0 {
			t.Fatalf("WallNS: %v", err)
		}
		if _, err := parseBytes(t, data).TimeNS("+1ms"); err != nil {
			t.Fatalf("TimeNS: %v", err)
		}
		p, err := ParseProfileFile(path, ProfileOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Totals("alloc"); err != nil {
			t.Fatalf("Totals: %v", err)
		}
	}
}

// slowWriter lets Close run while the export is inside the library.
type slowWriter struct {
	started chan struct{}
	once    sync.Once
}

func (w *slowWriter) Write(b []byte) (int, error) {
	w.once.Do(func() { close(w.started) })
	time.Sleep(time.Millisecond)
	return len(b), nil
}

func TestCloseDuringAnExport(t *testing.T) {
	tr := parseBytes(t, readCorpus(t, "spin-threads-dotnet-trace.nettrace"))
	w := &slowWriter{started: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- tr.WriteFolded(w, nil) }()
	<-w.started
	if err := tr.Close(); err != nil {
		t.Fatalf("Close during an export: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the export Close overlapped: %v", err)
	}
	if err := tr.WriteFolded(io.Discard, nil); !errors.Is(err, ErrBadState) {
		t.Fatalf("an export after Close: %v, want ErrBadState", err)
	}
	if _, err := tr.TopWith(3, TopOptions{}); !errors.Is(err, ErrBadState) {
		t.Fatalf("TopWith after Close: %v, want ErrBadState", err)
	}
}

func TestCloseInsideTheExportsWriter(t *testing.T) {
	tr := parseBytes(t, readCorpus(t, "spin-threads-dotnet-trace.nettrace"))
	var buf bytes.Buffer
	closer := writerFunc(func(b []byte) (int, error) {
		tr.Close()
		return buf.Write(b)
	})
	if err := tr.WriteFolded(closer, nil); err != nil {
		t.Fatalf("the export Close ran inside: %v", err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("Spinner.Spin")) {
		t.Fatal("the export is incomplete")
	}
}

func TestProfileTraceOutlivesNoProfile(t *testing.T) {
	p, err := ParseProfileFile(corpusFile(t, "spin-threads-dotnet-trace.nettrace"), ProfileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tr := p.Trace
	w := &slowWriter{started: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- tr.WriteFolded(w, nil) }()
	<-w.started
	p.Close()
	if err := <-done; err != nil {
		t.Fatalf("the export the profile's Close overlapped: %v", err)
	}
	if _, err := p.Totals("alloc"); !errors.Is(err, ErrBadState) {
		t.Fatalf("Totals after Close: %v, want ErrBadState", err)
	}
	if err := tr.WriteFolded(io.Discard, nil); !errors.Is(err, ErrBadState) {
		t.Fatalf("the profile's trace after its Close: %v, want ErrBadState", err)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func TestCallbackPanicStopsTheParse(t *testing.T) {
	data := readCorpus(t, "spin-threads-dotnet-trace.nettrace")
	seen := 0
	p, err := NewParser(Callbacks{KeepTrace: true, Sample: func(s *StreamSample) error {
		seen++
		if seen == 3 {
			panic("boom")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := func() (r interface{}) {
		defer func() { r = recover() }()
		p.Write(data)
		return nil
	}()
	if got != "boom" {
		t.Fatalf("the callback's panic came out as %v, want boom", got)
	}
	if seen != 3 {
		t.Fatalf("%d samples after the panic's stop, want 3", seen)
	}
	// The parser stopped cleanly: the panic is its error, not a damaged stream.
	_, werr := p.Write(data)
	cerr := p.Close()
	for _, err := range []error{werr, cerr} {
		if err == nil || errors.Is(err, ErrMalformed) || !errors.Is(err, ErrStopped) ||
			!strings.Contains(err.Error(), "panic") {
			t.Fatalf("after a callback's panic: %v, want a stop naming the panic", err)
		}
	}
	if tr := p.Trace(); tr == nil || len(tr.Samples) < 2 {
		t.Fatal("the samples read before the panic are lost")
	}
	// And the library is whole: the same stream parses.
	q, _ := NewParser(Callbacks{Sample: func(*StreamSample) error { return nil }})
	if _, err := q.Write(data); err != nil {
		t.Fatalf("the stream after another parser's panic: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
}

// reentered runs fn with a deadline: a re-entrant call must fail, not hang.
func reentered(t *testing.T, what string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s inside a callback deadlocked", what)
		return nil
	}
}

func TestReentrantCallsAreRefused(t *testing.T) {
	data := readCorpus(t, "spin-threads-dotnet-trace.nettrace")
	var r *RequestWindow // the request a callback tries to close
	calls := map[string]func(p *Parser) error{
		"TakeWindow":          func(p *Parser) error { _, err := p.TakeWindow(); return err },
		"OpenRequest":         func(p *Parser) error { _, err := p.OpenRequest(0); return err },
		"Cut":                 func(p *Parser) error { _, err := p.Cut(0, 1); return err },
		"RequestWindow.Close": func(p *Parser) error { _, err := r.Close(1); return err },
		"Write":               func(p *Parser) error { _, err := p.Write(data[:64]); return err },
		"Close":               func(p *Parser) error { return p.Close() },
		"Offset":              func(p *Parser) error { p.Offset(); return nil },
	}
	for name, call := range calls {
		var inner error
		var p *Parser
		p, _ = NewParser(Callbacks{Windows: true, Recorder: time.Second, Sample: func(*StreamSample) error {
			inner = call(p)
			return inner
		}})
		r, _ = p.OpenRequest(0)
		err := reentered(t, name, func() error { _, err := p.Write(data); return err })
		if name == "Offset" {
			if err != nil {
				t.Fatalf("Offset inside a callback: %v", err)
			}
		} else if !errors.Is(inner, ErrBadState) || !errors.Is(err, ErrBadState) {
			t.Fatalf("%s inside a callback: %v (Write: %v), want ErrBadState", name, inner, err)
		}
		// A request whose close was refused is still open: it closes now.
		if tr, err := r.Close(1); err != nil || tr == nil {
			t.Fatalf("closing the request after %s was refused: %v", name, err)
		}
		p.Close()
	}
}

// TestOtherGoroutinesWait: a call from another goroutine while a callback
// runs is not re-entrant: it waits its turn.
func TestOtherGoroutinesWait(t *testing.T) {
	data := readCorpus(t, "spin-threads-dotnet-trace.nettrace")
	var once sync.Once
	inside, release := make(chan struct{}), make(chan struct{})
	p, _ := NewParser(Callbacks{Windows: true, Sample: func(*StreamSample) error {
		once.Do(func() { close(inside); <-release })
		return nil
	}})
	fed := make(chan error, 1)
	go func() { _, err := p.Write(data); fed <- err }()
	<-inside
	took := make(chan error, 1)
	go func() { _, err := p.TakeWindow(); took <- err }()
	time.Sleep(10 * time.Millisecond)
	close(release)
	if err := <-fed; err != nil {
		t.Fatal(err)
	}
	if err := <-took; err != nil {
		t.Fatalf("TakeWindow from another goroutine: %v", err)
	}
	p.Close()
}
