package nettrace

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// toolOutput is what 'nettrace ARGS -o -' writes, whatever its exit status
// (3: something was left out, and the output still holds the rest).
func toolOutput(t *testing.T, args ...string) []byte {
	t.Helper()
	tool := os.Getenv("NETTRACE_CLI")
	if tool == "" {
		t.Skip("NETTRACE_CLI is not set (make check sets it to the build tree's nettrace)")
	}
	var out bytes.Buffer
	cmd := exec.Command(tool, append(args, "-o", "-")...)
	cmd.Stdout = &out
	cmd.Env = append(os.Environ(), "NETTRACE_NO_PROGRESS=1")
	_ = cmd.Run()
	return out.Bytes()
}

func TestConvertEqualsTheTool(t *testing.T) {
	for _, path := range corpusFiles(t) {
		for _, format := range []int{4, 6} {
			want := toolOutput(t, "convert", path, "--to", map[int]string{4: "v4", 6: "v6"}[format])
			var got bytes.Buffer
			if _, err := ConvertFile(path, &got, &ConvertOptions{Format: format}); err != nil &&
				!errors.Is(err, ErrTruncated) {
				t.Fatalf("%s to V%d: %v", filepath.Base(path), format, err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s to V%d: %d bytes, the tool wrote %d", filepath.Base(path), format, got.Len(), len(want))
			}
		}
	}
}

func TestSliceHoldsTheWindowsSamples(t *testing.T) {
	path := corpusFile(t, "spin-threads.nettrace")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	st, err := ConvertBytes(data, &got, &ConvertOptions{From: "100ms", To: "300ms"})
	if err != nil {
		t.Fatal(err)
	}
	if want := toolOutput(t, "slice", path, "--from", "100ms", "--to", "300ms"); !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("the slice differs from the tool's (%d against %d bytes)", got.Len(), len(want))
	}
	if st.EventsOutsideWindow == 0 || st.EventsWritten == 0 {
		t.Fatalf("stats %+v: a 200 ms window of this trace leaves events out and keeps some", st)
	}
	whole, err := Parse(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	slice, err := Parse(bytes.NewReader(got.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	defer slice.Close()
	lo, _ := whole.TimeNS("100ms")
	hi, _ := whole.TimeNS("300ms")
	var want []uint64
	for _, s := range whole.Samples {
		if int64(s.Timestamp) >= lo && int64(s.Timestamp) < hi {
			want = append(want, s.Timestamp)
		}
	}
	if len(want) == 0 || len(slice.Samples) != len(want) {
		t.Fatalf("the slice has %d samples, the window %d", len(slice.Samples), len(want))
	}
	for i, s := range slice.Samples {
		if s.Timestamp != want[i] {
			t.Fatalf("sample %d at %d, the window's at %d", i, s.Timestamp, want[i])
		}
	}
}

func TestConvertCutInputKeepsWhatWasRead(t *testing.T) {
	data, err := os.ReadFile(corpusFile(t, "spin-threads.nettrace"))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	st, err := ConvertBytes(data[:len(data)/2], &got, &ConvertOptions{Format: 6})
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("err %v, want ErrTruncated", err)
	}
	if st.EventsWritten == 0 {
		t.Fatal("nothing written of half a trace")
	}
	tr, err := Parse(bytes.NewReader(got.Bytes()))
	if err != nil {
		t.Fatalf("the output of a cut input does not read whole: %v", err)
	}
	defer tr.Close()
	if len(tr.Samples) == 0 {
		t.Fatal("the output holds no samples")
	}
	if _, err := ConvertBytes(data, &got, &ConvertOptions{Format: 5}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("format 5: %v, want ErrInvalidArgument", err)
	}
	if _, err := ConvertBytes(data, &got, &ConvertOptions{From: "2"}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("a bare number: %v, want ErrInvalidArgument", err)
	}
}
