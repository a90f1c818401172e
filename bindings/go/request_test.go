package nettrace

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Request windows and the flight recorder over a trace fed in chunks: each
// holds exactly the samples of its span on its threads, as the whole trace
// has them, named as the whole trace names them.
func TestRequestWindowsAndRecorder(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := parseFile(t, path)
	n := len(want.Samples)
	if n < 30 {
		t.Fatalf("%s has %d samples", path, n)
	}
	from, to := int64(want.Samples[n/3].Timestamp), int64(want.Samples[2*n/3].Timestamp)
	tid := want.Samples[n/2].ThreadID
	inSpan, onThread := 0, 0
	for _, s := range want.Samples {
		if int64(s.Timestamp) >= from && int64(s.Timestamp) < to {
			inSpan++
			if s.ThreadID == tid {
				onThread++
			}
		}
	}
	if onThread == 0 || onThread == inSpan {
		t.Fatalf("the span holds %d samples, %d of thread %d: no test of the filter", inSpan, onThread, tid)
	}

	if _, err := NewParser(Callbacks{Recorder: time.Second}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a recorder without Windows: %v", err)
	}
	p, err := NewParser(Callbacks{Windows: true, Recorder: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	all, err := p.OpenRequest(from)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := p.OpenRequest(from, tid)
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off < len(whole); off += 4096 {
		end := min(off+4096, len(whole))
		if _, err := p.Write(whole[off:end]); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, tr *Trace, err error, count int, only uint64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		defer tr.Close()
		if len(tr.Samples) != count {
			t.Fatalf("%s holds %d samples, the trace %d in its span", what, len(tr.Samples), count)
		}
		for _, s := range tr.Samples {
			if int64(s.Timestamp) < from || int64(s.Timestamp) >= to || (only != 0 && s.ThreadID != only) {
				t.Fatalf("%s holds a sample at %d ns of thread %d", what, s.Timestamp, s.ThreadID)
			}
		}
		rows := tr.Top(5)
		names := ""
		for _, r := range rows {
			names += r.Name + ";"
		}
		if !strings.Contains(names, "Spinner.Spin") {
			t.Fatalf("%s: the spinning method is not among its hot methods: %s", what, names)
		}
	}
	tr, err := all.Close(to)
	check("the request window of every thread", tr, err, inSpan, 0)
	tr, err = mine.Close(to)
	check("the request window of one thread", tr, err, onThread, tid)
	if _, err := mine.Close(to); !errors.Is(err, ErrBadState) {
		t.Fatalf("a second Close: %v", err)
	}
	tr, err = p.Cut(from, to, tid)
	check("a cut of one thread", tr, err, onThread, tid)
	tr, err = p.Cut(from, to, tid)
	check("the same cut again (the recorder keeps its samples)", tr, err, onThread, tid)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.OpenRequest(from); !errors.Is(err, ErrBadState) {
		t.Fatalf("OpenRequest after Close: %v", err)
	}

	q, err := NewParser(Callbacks{Windows: true})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.Cut(from, to); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a cut without a recorder: %v", err)
	}
	k, err := NewParser(Callbacks{KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.OpenRequest(from); !errors.Is(err, ErrBadState) {
		t.Fatalf("OpenRequest without Windows: %v", err)
	}
}

// What the runtime dropped is said: by the whole trace, and by a request
// window of the span the losses fall in (the window counts each thread's
// gaps as the parser finds them).
func TestEventsDroppedAreSaid(t *testing.T) {
	path := filepath.Join(filepath.Dir(corpusFile(t, "spin-threads.nettrace")), "seeds", "v6_drops.nettrace")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	whole := parseFile(t, path)
	if whole.EventsDropped != 7 {
		t.Fatalf("the whole trace says %d events were dropped, nettrace info 7", whole.EventsDropped)
	}
	p, err := NewParser(Callbacks{Windows: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	r, err := p.OpenRequest(math.MinInt64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(data); err != nil {
		t.Fatal(err)
	}
	tr, err := r.Close(math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if tr.EventsDropped != whole.EventsDropped || len(tr.Samples) != len(whole.Samples) {
		t.Fatalf("a request window of the whole stream: %d samples, %d dropped; the trace %d, %d",
			len(tr.Samples), tr.EventsDropped, len(whole.Samples), whole.EventsDropped)
	}
}

// The window object's counts follow what it was asked and what it holds.
func TestWindowStats(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewParser(Callbacks{Windows: true, Recorder: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r, err := p.OpenRequest(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Write(data); err != nil {
		t.Fatal(err)
	}
	st, err := p.WindowStats()
	if err != nil {
		t.Fatal(err)
	}
	want := parseFile(t, path)
	if st.OpenWindows != 1 || st.Windows != 0 || st.RecordsSeen == 0 || st.Records == 0 ||
		st.RecorderSamples != uint64(len(want.Samples)) || st.Memory == 0 || st.Memory > st.MemoryPeak ||
		st.RecordBytes == 0 || st.RecordBytes > st.RecordBudget {
		t.Fatalf("after the stream, one request open: %+v (the trace has %d samples)", st, len(want.Samples))
	}
	tr, err := r.Close(math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	tr.Close()
	w, err := p.TakeWindow()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	after, err := p.WindowStats()
	if err != nil {
		t.Fatal(err)
	}
	if after.OpenWindows != 0 || after.Windows != 2 || after.MemoryPeak < st.MemoryPeak {
		t.Fatalf("after a close and a take: %+v", after)
	}
	p.Close()
	if _, err := p.WindowStats(); !errors.Is(err, ErrBadState) {
		t.Fatalf("WindowStats after Close: %v", err)
	}
}

// A record budget bounds what the windows keep, and the stats say what it cost.
func TestRecordBudget(t *testing.T) {
	data, err := os.ReadFile(corpusFile(t, "spin-threads.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewParser(Callbacks{RecordBudget: 1 << 20}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a record budget without Windows: %v", err)
	}
	stats := func(budget uint64) WindowStats {
		p, err := NewParser(Callbacks{Windows: true, RecordBudget: budget})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := p.Write(data); err != nil {
			t.Fatal(err)
		}
		st, err := p.WindowStats()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	free := stats(0)
	budget := free.RecordBytes / 4
	tight := stats(budget)
	if free.RecordsEvicted != 0 || tight.RecordBudget != budget || tight.RecordBytes > budget ||
		tight.RecordsEvicted == 0 || tight.Records >= free.Records {
		t.Fatalf("a budget of %d bytes: %+v; unbounded: %+v", budget, tight, free)
	}
}
