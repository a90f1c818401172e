package nettrace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// The reference's session contracts, on a fake endpoint (deterministic
// replies) and on a real .NET process (the LiveTarget workload).

func TestNoEndpointMatchesNotExist(t *testing.T) {
	// This test process is not a .NET runtime: it has no endpoint.
	_, err := StartTracing(context.Background(), os.Getpid(), Config{}, &bytes.Buffer{})
	if !errors.Is(err, ErrNoEndpoint) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("error %v: want ErrNoEndpoint, also matching os.ErrNotExist", err)
	}
	if !errors.Is(ErrNoEndpoint, os.ErrNotExist) {
		t.Fatal("ErrNoEndpoint does not match os.ErrNotExist")
	}
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusNoEndpoint {
		t.Fatalf("%#v is not an *Error with StatusNoEndpoint", err)
	}
}

func TestRefusalIsRuntimeError(t *testing.T) {
	fakeEndpoint(t, func(conn net.Conn) {
		readRequest(conn)
		conn.Write(ipcError(0x80131384))
	})
	_, err := StartTracing(context.Background(), os.Getpid(), Config{}, &bytes.Buffer{})
	var re *RuntimeError
	if !errors.As(err, &re) || re.HResult != 0x80131384 {
		t.Fatalf("error %v: want a *RuntimeError with HRESULT 0x80131384", err)
	}
	if !errors.Is(err, ErrRefused) {
		t.Fatal("a *RuntimeError should match ErrRefused")
	}
}

func TestStartIsBoundToContext(t *testing.T) {
	fakeEndpoint(t, nil) // accepts, never replies
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := StartTracing(ctx, os.Getpid(), Config{}, &bytes.Buffer{})
	if err != context.DeadlineExceeded {
		t.Fatalf("error %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("StartTracing returned %v after its deadline", d)
	}
	ctx, cancel = context.WithCancel(context.Background())
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	if _, err = StartTracing(ctx, os.Getpid(), Config{}, &bytes.Buffer{}); err != context.Canceled {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err = StartTracing(ctx, os.Getpid(), Config{}, &bytes.Buffer{}); err != context.Canceled {
		t.Fatalf("an already cancelled ctx: %v", err)
	}
}

// A zero Config: the sample profiler, loader and JIT events, rundown on, so
// the spinning methods compiled before the session started are named.
func TestLiveDefaultConfig(t *testing.T) {
	if DefaultBufferMB != 256 || DefaultMaxStreamBytes != 1<<30 {
		t.Fatalf("defaults: %d MB buffer, %d bytes cap", DefaultBufferMB, DefaultMaxStreamBytes)
	}
	lt := startLive(t)
	var w syncBuffer
	s := startTracing(t, lt.pid, Config{}, &w)
	time.Sleep(1500 * time.Millisecond)
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.Bytes() != uint64(w.Len()) {
		t.Fatalf("Bytes() %d, the writer holds %d", s.Bytes(), w.Len())
	}
	tr, err := Parse(bytes.NewReader(w.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, c := range []struct {
		tid    uint64
		method string
	}{{lt.alpha, "SpinAlpha"}, {lt.beta, "SpinBeta"}} {
		hits, total := leafCounts(tr, c.tid, c.method)
		if total == 0 || hits*2 < total {
			t.Fatalf("thread %d: %s is the leaf of %d of %d managed samples", c.tid, c.method, hits, total)
		}
	}
}

// Stop from several goroutines: one stop, the same result for each, and
// nothing written after any returns; a later Stop returns at once.
func TestLiveStopConcurrent(t *testing.T) {
	lt := startLive(t)
	var w syncBuffer
	s := startTracing(t, lt.pid, Config{}, &w)
	time.Sleep(500 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	lens := make([]int, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			errs[i] = s.Stop(ctx)
			lens[i] = w.Len()
		}(i)
	}
	wg.Wait()
	for i := range errs {
		if errs[i] != nil || lens[i] != lens[0] {
			t.Fatalf("Stop %d: %v, writer at %d bytes (first: %d)", i, errs[i], lens[i], lens[0])
		}
	}
	time.Sleep(300 * time.Millisecond)
	if w.Len() != lens[0] {
		t.Fatalf("written after Stop returned: %d -> %d bytes", lens[0], w.Len())
	}
	start := time.Now()
	if err := s.Stop(context.Background()); err != nil || time.Since(start) > time.Second {
		t.Fatalf("a later Stop: %v after %v", err, time.Since(start))
	}
	if _, err := Parse(bytes.NewReader(w.Bytes())); err != nil {
		t.Fatalf("the stopped stream is complete: %v", err)
	}
}

// Stop never outlives its ctx: an expired ctx abandons the session.
func TestLiveStopBoundToContext(t *testing.T) {
	lt := startLive(t)
	var w syncBuffer
	s := startTracing(t, lt.pid, Config{}, &w)
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	err := s.Stop(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stop: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Stop took %v with a cancelled ctx", d)
	}
	n := w.Len()
	time.Sleep(300 * time.Millisecond)
	if w.Len() != n {
		t.Fatal("written after Stop returned")
	}
}

func TestLiveStreamCap(t *testing.T) {
	lt := startLive(t)
	var w syncBuffer
	const capBytes = 16 << 10
	s := startTracing(t, lt.pid, Config{MaxStreamBytes: capBytes}, &w)
	time.Sleep(1500 * time.Millisecond)
	err := s.Stop(context.Background())
	if !errors.Is(err, ErrStreamTooLarge) {
		t.Fatalf("Stop: %v, want ErrStreamTooLarge", err)
	}
	if w.Len() > capBytes {
		t.Fatalf("%d bytes written past the %d cap", w.Len(), capBytes)
	}
}

// A failing writer: its error comes back from Stop.
func TestLiveWriterError(t *testing.T) {
	lt := startLive(t)
	s := startTracing(t, lt.pid, Config{}, failingWriter{})
	time.Sleep(300 * time.Millisecond)
	if err := s.Stop(context.Background()); !errors.Is(err, errReader) {
		t.Fatalf("Stop: %v, want the writer's error", err)
	}
}

// A rejected provider: the runtime's HRESULT in a *RuntimeError.
func TestLiveRefused(t *testing.T) {
	lt := startLive(t)
	cfg := Config{Providers: []Provider{{Name: ProviderRuntime, Keywords: KeywordJit | KeywordLoader, Level: 9}}}
	_, err := StartTracing(context.Background(), lt.pid, cfg, &bytes.Buffer{})
	var re *RuntimeError
	if !errors.As(err, &re) || re.HResult != 0x80131384 {
		t.Fatalf("error %v: want a *RuntimeError with BAD_ENCODING (level 9 is out of range)", err)
	}
}

// The live bytes go straight into a streaming parser: no stream is held.
func TestLiveIntoParser(t *testing.T) {
	lt := startLive(t)
	var mu sync.Mutex
	samples := 0
	p, err := NewParser(Callbacks{
		Sample:    func(*StreamSample) error { mu.Lock(); samples++; mu.Unlock(); return nil },
		KeepTrace: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := startTracing(t, lt.pid, Config{}, p)
	time.Sleep(time.Second)
	mu.Lock()
	during := samples
	mu.Unlock()
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if during == 0 {
		t.Fatal("no sample was parsed while the session ran")
	}
	tr := p.Trace()
	defer tr.Close()
	if hits, total := leafCounts(tr, lt.alpha, "SpinAlpha"); total == 0 || hits*2 < total {
		t.Fatalf("alpha: SpinAlpha is the leaf of %d of %d managed samples", hits, total)
	}
}

// Windows of a live session: the caller takes them while the session's
// reader writes; together they hold every sample.
func TestLiveWindows(t *testing.T) {
	lt := startLive(t)
	var mu sync.Mutex
	samples := 0
	p, err := NewParser(Callbacks{
		Sample:  func(*StreamSample) error { mu.Lock(); samples++; mu.Unlock(); return nil },
		Windows: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	s := startTracing(t, lt.pid, Config{}, p)
	total, nonEmpty := 0, 0
	for i := 0; i < 5; i++ {
		time.Sleep(300 * time.Millisecond)
		w, err := p.TakeWindow()
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Samples) > 0 {
			nonEmpty++
		}
		total += len(w.Samples)
		w.Close()
	}
	if err := s.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	w, err := p.TakeWindow()
	if err != nil {
		t.Fatal(err)
	}
	total += len(w.Samples)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if nonEmpty < 2 || total != samples {
		t.Fatalf("%d windows with samples; %d samples in windows, %d parsed", nonEmpty, total, samples)
	}
	// The rundown at stop names the spinners in the last window.
	if hits, all := leafCounts(w, lt.alpha, "SpinAlpha"); all > 0 && hits*2 < all {
		t.Fatalf("last window: SpinAlpha is the leaf of %d of %d alpha samples", hits, all)
	}
}

func startTracing(t *testing.T, pid int, cfg Config, w io.Writer) *Session {
	t.Helper()
	s, err := StartTracing(context.Background(), pid, cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
