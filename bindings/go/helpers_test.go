package nettrace

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// corpusFiles lists the repository's traces and, when present, the shared
// reference corpus (a test using it says so when it is absent).
func corpusFiles(t *testing.T) []string {
	t.Helper()
	top := os.Getenv("top_srcdir")
	if top == "" {
		top = "../.."
	}
	files, _ := filepath.Glob(filepath.Join(top, "corpus", "*.nettrace"))
	if len(files) == 0 {
		t.Fatalf("no traces in %s/corpus", top)
	}
	shared := os.Getenv("NETTRACE_SHARED_CORPUS")
	if shared == "" {
		shared = filepath.Join(top, "..", "shared", "corpus")
	}
	more, _ := filepath.Glob(filepath.Join(shared, "*.nettrace"))
	if len(more) == 0 {
		t.Logf("shared corpus %s is absent (set NETTRACE_SHARED_CORPUS): corpus/ only", shared)
	}
	return append(files, more...)
}

func corpusFile(t *testing.T, name string) string {
	t.Helper()
	top := os.Getenv("top_srcdir")
	if top == "" {
		top = "../.."
	}
	return filepath.Join(top, "corpus", name)
}

func parseFile(t *testing.T, path string) *Trace {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return tr
}

// cli runs the nettrace tool of the build tree (the C library's own
// rendering) and returns its standard output.
func cli(t *testing.T, args ...string) []byte {
	t.Helper()
	tool := os.Getenv("NETTRACE_CLI")
	if tool == "" {
		t.Skip("NETTRACE_CLI is not set (make check sets it to the build tree's nettrace)")
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(tool, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("nettrace %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return out.Bytes()
}

// frameName is a frame's name as the tool prints it.
func frameName(f Frame) string {
	if f.Method == "" && f.Type == "" && f.Assembly == "" {
		return fmt.Sprintf("0x%x", f.IP)
	}
	asm := f.Assembly
	if asm == "" {
		asm = "?"
	} else if i := strings.IndexByte(asm, ','); i >= 0 {
		asm = asm[:i]
	}
	return fmt.Sprintf("%s!%s.%s", asm, f.Type, f.Method)
}

// samplesText renders samples the way 'nettrace samples' prints them.
func samplesText(tr *Trace) []byte {
	var b bytes.Buffer
	for _, s := range tr.Samples {
		kind := "E"
		if s.Managed {
			kind = "M"
		}
		fmt.Fprintf(&b, "%d %d %s ", s.Timestamp, s.ThreadID, kind)
		if len(s.Frames) == 0 {
			b.WriteString("-")
		}
		for i := len(s.Frames) - 1; i >= 0; i-- {
			b.WriteString(frameName(s.Frames[i]))
			if i > 0 {
				b.WriteString(";")
			}
		}
		b.WriteString("\n")
	}
	return b.Bytes()
}
