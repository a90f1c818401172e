package nettrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The contract table of the reference package, one test each:
//
//	Parse: samples ordered by time                     TestParseSamplesInTimeOrder
//	Parse: 64-bit thread ids, managed flag, frames
//	  innermost first named by method/type/assembly     TestParseMatchesTheLibrary, TestParseNamesFrames
//	Parse: samples on one stack share their Frames      TestSamplesShareFrames
//	Trace: frequency, pointer size, methods,
//	  assemblies, module -> assembly                    TestTraceTables
//	ErrNotNettrace / ErrUnsupportedVersion /
//	  ErrNoEvents with errors.Is                        TestParseErrors
//	ErrNoEndpoint, also os.ErrNotExist                  TestNoEndpointMatchesNotExist
//	*RuntimeError with the HRESULT                      TestRefusalIsRuntimeError, TestLiveRefused
//	StartTracing bound to ctx until the reply           TestStartIsBoundToContext
//	Config zero values = defaults (providers,
//	  rundown on, 256 MB, 1 GiB)                        TestLiveDefaultConfig
//	Stop: once, from several goroutines, each under
//	  its ctx; nothing written after it returns         TestLiveStopConcurrent, TestLiveStopBoundToContext
//	Stop returns the copy's error                       TestLiveWriterError
//	ErrStreamTooLarge at Config.MaxStreamBytes          TestLiveStreamCap
//	Beyond: truncated stream -> what was read + offset  TestParseTruncated
//	Beyond: V6 streams read                             TestParseV6
//	Beyond: streaming parser, any chunking              TestParserChunking, TestParserCallbackError
//	Beyond: live bytes straight into a Parser           TestLiveIntoParser
//	Beyond: windows of a live stream                    TestParserWindows, TestLiveWindows
//	Beyond: request windows, the flight recorder        TestRequestWindowsAndRecorder
//	Beyond: exports and top                             TestExportsMatchTheTool, TestTop,
//	                                                    TestTopWallAndWindowMatchTheTool
//	Beyond: event profiles (window, messages)           TestProfileMessagesAndWindow

func TestParseSamplesInTimeOrder(t *testing.T) {
	for _, path := range corpusFiles(t) {
		tr := parseFile(t, path)
		for i := 1; i < len(tr.Samples); i++ {
			if tr.Samples[i].Timestamp < tr.Samples[i-1].Timestamp {
				t.Fatalf("%s: sample %d at %d precedes sample %d at %d", path, i,
					tr.Samples[i].Timestamp, i-1, tr.Samples[i-1].Timestamp)
			}
		}
		tr.Close()
	}
}

// Every sample -- time, 64-bit thread id, managed flag, every frame's names,
// innermost first -- is what the library's own tool prints.
func TestParseMatchesTheLibrary(t *testing.T) {
	for _, path := range corpusFiles(t) {
		tr := parseFile(t, path)
		want := cli(t, "samples", path)
		if got := samplesText(tr); !bytes.Equal(got, want) {
			gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
			for i := range gl {
				if i >= len(wl) || gl[i] != wl[i] {
					t.Fatalf("%s: line %d differs:\n got %.300s\nwant %.300s", path, i+1, gl[i], wl[min(i, len(wl)-1)])
				}
			}
			t.Fatalf("%s: %d lines, the tool printed %d", path, len(gl), len(wl))
		}
		tr.Close()
	}
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// corpus/README.md: in spin-threads.nettrace two threads spin in
// AlphaSpinner.SpinAlpha and BetaSpinner.SpinBeta, managed code.
func TestParseNamesFrames(t *testing.T) {
	tr := parseFile(t, corpusFile(t, "spin-threads.nettrace"))
	defer tr.Close()
	leaf := map[string]uint64{} // method -> thread
	threads := map[uint64]bool{}
	for _, s := range tr.Samples {
		threads[s.ThreadID] = true
		if s.Managed && len(s.Frames) > 0 {
			f := s.Frames[0]
			if f.Method == "SpinAlpha" || f.Method == "SpinBeta" {
				if !strings.HasSuffix(f.Type, "Spinner") || !strings.HasPrefix(f.Assembly, "SpinThreads,") {
					t.Fatalf("leaf frame %+v: type or assembly wrong", f)
				}
				leaf[f.Method] = s.ThreadID
			}
		}
	}
	if leaf["SpinAlpha"] == 0 || leaf["SpinBeta"] == 0 || leaf["SpinAlpha"] == leaf["SpinBeta"] {
		t.Fatalf("SpinAlpha and SpinBeta should be leaves on two threads: %v", leaf)
	}
	if len(threads) < 3 {
		t.Fatalf("%d threads, want the main thread and two workers", len(threads))
	}
	var external bool
	for _, s := range tr.Samples {
		external = external || !s.Managed
	}
	if !external {
		t.Fatal("no sample outside managed code (the main thread waits in Thread.Join)")
	}
}

func TestSamplesShareFrames(t *testing.T) {
	tr := parseFile(t, corpusFile(t, "call-tree.nettrace"))
	defer tr.Close()
	byStack := map[string]*Frame{}
	shared := 0
	for _, s := range tr.Samples {
		if len(s.Frames) == 0 {
			continue
		}
		var key strings.Builder
		for _, f := range s.Frames {
			key.WriteString(f.Method)
			key.WriteString(strings.Repeat(" ", 1))
			key.WriteString(string(rune(f.IP % 1000)))
		}
		if first, ok := byStack[key.String()]; ok {
			if first != &s.Frames[0] {
				t.Fatal("two samples on one stack have separate frame slices")
			}
			shared++
		} else {
			byStack[key.String()] = &s.Frames[0]
		}
	}
	if shared == 0 {
		t.Fatal("no two samples on the same stack in call-tree.nettrace")
	}
}

func TestTraceTables(t *testing.T) {
	tr := parseFile(t, corpusFile(t, "call-tree.nettrace"))
	defer tr.Close()
	// corpus/README.md: Linux clock in ns, 64-bit pointers.
	if tr.TimestampFrequency != 1000000000 || tr.PointerSize != 8 {
		t.Fatalf("frequency %d, pointer size %d", tr.TimestampFrequency, tr.PointerSize)
	}
	if tr.Header.FormatMajor != 4 || tr.Header.SamplingInterval.Milliseconds() != 1 || tr.Header.SyncTime.Year() < 2020 {
		t.Fatalf("header %+v", tr.Header)
	}
	if len(tr.Methods) == 0 || len(tr.Assemblies) == 0 || len(tr.Modules) == 0 {
		t.Fatalf("%d methods, %d assemblies, %d modules", len(tr.Methods), len(tr.Assemblies), len(tr.Modules))
	}
	named := 0
	for _, m := range tr.Methods {
		if m.Name == "" || m.StartAddress == 0 {
			t.Fatalf("method record %+v", m)
		}
		// The record's assembly is the one its module maps to.
		if asm, ok := tr.Modules[m.ModuleID]; ok {
			if tr.Assemblies[asm] != m.Assembly {
				t.Fatalf("method %s: assembly %q, module %d maps to %q", m.Name, m.Assembly, m.ModuleID, tr.Assemblies[asm])
			}
			named++
		}
	}
	if named == 0 {
		t.Fatal("no method's module is in the module table")
	}
}

func TestParseErrors(t *testing.T) {
	whole, err := os.ReadFile(corpusFile(t, "call-tree.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
		want error
	}{
		{"not nettrace", []byte("this is not a trace at all, just some text"), ErrNotNettrace},
		{"empty", nil, ErrNotNettrace},
		// The Trace object asks for reader version 5.
		{"unsupported", withByte(whole[:4096], 39, 5), ErrUnsupportedVersion},
		// A V7 header ("Nettrace", 0, major 7, minor 0).
		{"v7", append([]byte("Nettrace\x00\x00\x00\x00\x07\x00\x00\x00\x00\x00\x00\x00"), whole[40:200]...), ErrUnsupportedVersion},
		{"no events", headerOnly(t, whole), ErrNoEvents},
	}
	for _, c := range cases {
		tr, err := Parse(bytes.NewReader(c.data))
		if !errors.Is(err, c.want) {
			t.Errorf("%s: error %v, want %v", c.name, err, c.want)
			continue
		}
		var e *Error
		if !errors.As(err, &e) || e.Message == "" {
			t.Errorf("%s: %T is not an *Error with a message", c.name, err)
		}
		// No trace without a header; a header without events gives an empty one.
		if (tr == nil) != (c.want != ErrNoEvents) || (tr != nil && len(tr.Samples) != 0) {
			t.Errorf("%s: trace %v", c.name, tr)
		}
	}
}

func withByte(b []byte, at int, v byte) []byte {
	out := append([]byte{}, b...)
	out[at] = v
	return out
}

// headerOnly is a stream's header and end marker without any block: the
// Trace object ends where the first block object begins.
func headerOnly(t *testing.T, whole []byte) []byte {
	t.Helper()
	var end uint64
	p, err := NewParser(Callbacks{Header: func(Header, int64, int) error { return errStopHere }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= len(whole); i++ {
		if _, err := p.Write(whole[i-1 : i]); err != nil {
			end = uint64(i)
			break
		}
	}
	p.Close()
	if end == 0 {
		t.Fatal("the header callback never ran")
	}
	// The header callback runs once the Trace object is read; the null
	// tag (end of stream) is a single 1 byte.
	out := append([]byte{}, whole[:end]...)
	return append(out, 1)
}

var errStopHere = errors.New("stop here")

func TestParseTruncated(t *testing.T) {
	whole, err := os.ReadFile(corpusFile(t, "spin-threads.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	full, err := Parse(bytes.NewReader(whole))
	if err != nil {
		t.Fatal(err)
	}
	// Samples fill the stream's first fifth; the rundown follows them.
	cut := len(whole) / 6
	tr, err := Parse(bytes.NewReader(whole[:cut]))
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Offset == 0 || e.Offset > uint64(cut) || !strings.Contains(e.Message, fmt.Sprint(e.Offset)) {
		t.Fatalf("error %#v: want the offset where the incomplete block began", err)
	}
	if tr == nil || len(tr.Samples) == 0 || len(tr.Samples) >= len(full.Samples) {
		t.Fatalf("a truncated stream gives what was read before the cut")
	}
	// A reader that fails: its error, and what was read.
	tr, err = Parse(io.MultiReader(bytes.NewReader(whole[:cut]), failing{}))
	if !errors.Is(err, errReader) || tr == nil || len(tr.Samples) == 0 {
		t.Fatalf("failing reader: %v", err)
	}
	// Damaged bytes: an error, never a crash, and samples before the damage kept.
	for _, at := range []int{cut, cut + 1000, len(whole) - 200} {
		bad := append([]byte{}, whole...)
		for i := at; i < at+64 && i < len(bad); i++ {
			bad[i] ^= 0xA5
		}
		if tr, err := Parse(bytes.NewReader(bad)); tr == nil && err == nil {
			t.Fatalf("damage at %d: no trace and no error", at)
		}
	}
}

var errReader = errors.New("the disk went away")

type failing struct{}

func (failing) Read([]byte) (int, error) { return 0, errReader }

// The reference refuses V6; the library reads it: the corpus traces
// converted to V6 by the tool give the same samples.
func TestParseV6(t *testing.T) {
	src := corpusFile(t, "spin-threads.nettrace")
	v6 := filepath.Join(t.TempDir(), "v6.nettrace")
	cli(t, "convert", src, "--to", "v6", "-o", v6)
	a, b := parseFile(t, src), parseFile(t, v6)
	if b.Header.FormatMajor != 6 {
		t.Fatalf("converted trace is format %d", b.Header.FormatMajor)
	}
	if !bytes.Equal(samplesText(a), samplesText(b)) {
		t.Fatal("the V6 trace's samples differ from the V4 trace's")
	}
}

func TestParserChunking(t *testing.T) {
	whole, err := os.ReadFile(corpusFile(t, "spin-threads-dotnet-trace.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	want := parseFile(t, corpusFile(t, "spin-threads-dotnet-trace.nettrace"))
	for _, chunk := range []int{1, 7, 4096, len(whole)} {
		var n, methods int
		var ips int
		p, err := NewParser(Callbacks{
			Sample:    func(s *StreamSample) error { n++; ips += len(s.IPs); return nil },
			Method:    func(m *MethodRecord) error { methods++; return nil },
			KeepTrace: true,
		})
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(whole); off += chunk {
			end := off + chunk
			if end > len(whole) {
				end = len(whole)
			}
			if k, err := p.Write(whole[off:end]); err != nil || k != end-off {
				t.Fatalf("chunk %d at %d: %d, %v", chunk, off, k, err)
			}
		}
		if err := p.Close(); err != nil {
			t.Fatal(err)
		}
		if n != len(want.Samples) || methods == 0 || ips == 0 {
			t.Fatalf("chunk %d: %d samples (want %d), %d methods, %d ips", chunk, n, len(want.Samples), methods, ips)
		}
		if !bytes.Equal(samplesText(p.Trace()), samplesText(want)) {
			t.Fatalf("chunk %d: the kept trace differs from Parse's", chunk)
		}
	}
}

// Windows: the samples since the last window, named from every record seen
// since the stream began; together the windows hold every sample.
func TestParserWindows(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := parseFile(t, path)
	if _, err := NewParser(Callbacks{Windows: true, KeepTrace: true}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("Windows with KeepTrace: %v", err)
	}
	p, err := NewParser(Callbacks{Windows: true})
	if err != nil {
		t.Fatal(err)
	}
	total, windows := 0, 0
	var last *Trace
	for off := 0; off < len(whole); off += 16 << 10 {
		end := off + 16<<10
		if end > len(whole) {
			end = len(whole)
		}
		if _, err := p.Write(whole[off:end]); err != nil {
			t.Fatal(err)
		}
		w, err := p.TakeWindow()
		if err != nil {
			t.Fatal(err)
		}
		if len(w.Samples) > 0 {
			windows++
			last = w
		}
		total += len(w.Samples)
		for i := 1; i < len(w.Samples); i++ {
			if w.Samples[i].Timestamp < w.Samples[i-1].Timestamp {
				t.Fatal("a window's samples are not in time order")
			}
		}
	}
	if total != len(want.Samples) || windows < 3 {
		t.Fatalf("%d samples over %d windows, the trace has %d", total, windows, len(want.Samples))
	}
	if rows := last.Top(3); len(rows) == 0 || !strings.Contains(rows[0].Name+rows[1].Name+rows[2].Name, "Spinner.Spin") {
		t.Fatalf("the last window's hot methods are not named: %+v", rows)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.TakeWindow(); !errors.Is(err, ErrBadState) {
		t.Fatalf("TakeWindow after Close: %v", err)
	}
}

func TestParserCallbackError(t *testing.T) {
	whole, err := os.ReadFile(corpusFile(t, "call-tree.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	mine := errors.New("enough")
	n := 0
	p, _ := NewParser(Callbacks{Sample: func(*StreamSample) error {
		n++
		if n == 10 {
			return mine
		}
		return nil
	}})
	if _, err := p.Write(whole); err != mine {
		t.Fatalf("Write: %v, want the callback's error", err)
	}
	if _, err := p.Write(whole); err != mine {
		t.Fatalf("the error is not sticky: %v", err)
	}
	if err := p.Close(); err != mine || n != 10 {
		t.Fatalf("Close: %v after %d samples", err, n)
	}
}

func TestExportsMatchTheTool(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	tr := parseFile(t, path)
	defer tr.Close()
	for _, c := range []struct {
		format string
		write  func(io.Writer, *ExportOptions) error
	}{{"folded", tr.WriteFolded}, {"speedscope", tr.WriteSpeedscope}, {"pprof", tr.WritePprof}} {
		var b bytes.Buffer
		// The tool names the profile after the file.
		if err := c.write(&b, &ExportOptions{Name: filepath.Base(path)}); err != nil {
			t.Fatal(err)
		}
		// The library's default weight is the sample count; the tool's speedscope default is time.
		if want := cli(t, "stacks", "-f", c.format, "--weight", "samples", path); !bytes.Equal(b.Bytes(), want) {
			t.Fatalf("%s: %d bytes, the tool wrote %d", c.format, b.Len(), len(want))
		}
	}
	var b bytes.Buffer
	if err := tr.WriteFolded(&b, &ExportOptions{ManagedOnly: true, ByTime: true}); err != nil {
		t.Fatal(err)
	}
	if want := cli(t, "stacks", "--managed-only", "--weight", "time", path); !bytes.Equal(b.Bytes(), want) {
		t.Fatal("folded, managed only, by time: differs from the tool")
	}
	// A failing writer's error comes back.
	if err := tr.WriteSpeedscope(failingWriter{}, nil); err != errReader {
		t.Fatalf("failing writer: %v", err)
	}
	tr.Close()
	if err := tr.WriteFolded(&b, nil); !errors.Is(err, ErrBadState) {
		t.Fatalf("export after Close: %v", err)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errReader }

func TestTop(t *testing.T) {
	tr := parseFile(t, corpusFile(t, "spin-threads.nettrace"))
	defer tr.Close()
	top := tr.Top(0)
	var excl, withFrames uint64
	for _, r := range top {
		excl += r.Exclusive
		if r.Inclusive < r.Exclusive {
			t.Fatalf("%s: inclusive %d < exclusive %d", r.Name, r.Inclusive, r.Exclusive)
		}
	}
	for _, s := range tr.Samples {
		if len(s.Frames) > 0 {
			withFrames++
		}
	}
	if excl != withFrames {
		t.Fatalf("exclusive counts sum to %d, %d samples have frames", excl, withFrames)
	}
	// The three hottest: the two spinners and the main thread's Thread.Join.
	three := tr.Top(3)
	if len(three) != 3 {
		t.Fatalf("Top(3) gave %d rows", len(three))
	}
	spinners := 0
	for _, r := range three {
		if strings.HasPrefix(r.Name, "SpinThreads!Workloads.SpinThreads.") && strings.Contains(r.Name, "Spinner.Spin") {
			spinners++
		}
	}
	if spinners != 2 {
		t.Fatalf("the spinners should be among the three hottest methods: %+v", three)
	}
	// Options: one thread, by inclusive samples.
	tid := tr.Samples[len(tr.Samples)-1].ThreadID
	rows, err := tr.TopWith(0, TopOptions{ThreadID: &tid, ByInclusive: true})
	if err != nil || len(rows) == 0 || rows[0].Inclusive < rows[len(rows)-1].Inclusive {
		t.Fatalf("one thread by inclusive: %v, %+v", err, rows)
	}
	var threadSamples, threadExcl uint64
	for _, s := range tr.Samples {
		if s.ThreadID == tid && len(s.Frames) > 0 {
			threadSamples++
		}
	}
	for _, r := range rows {
		threadExcl += r.Exclusive
	}
	if threadExcl != threadSamples {
		t.Fatalf("the thread's exclusive counts sum to %d, it has %d samples with frames", threadExcl, threadSamples)
	}
	// The tool's table lists the same methods.
	out := string(cli(t, "top", "-n", "3", corpusFile(t, "spin-threads.nettrace")))
	for _, r := range three {
		if !strings.Contains(out, r.Name) {
			t.Fatalf("nettrace top does not list %s:\n%s", r.Name, out)
		}
	}
}
