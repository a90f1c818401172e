// bench_go: the Go package's reading speed on the same bytes in memory, and
// (built with -tags dotnetdiag) the pure-Go reader
// github.com/pyroscope-io/dotnetdiag in the same process.  Built and run by
// bench/go/bench_go.sh, which supplies that reader's source from outside
// this repository.
//
// Jobs, each run -runs times (best wall time kept):
//
//	dd-decode   dotnetdiag: every block decoded (event, metadata, stack and
//	            sequence-point handlers set, doing nothing)
//	nt-decode   nettrace.NewParser with no callbacks: every block decoded
//	dd-samples  dotnetdiag with its SampleProfiler: resolved stacks, summed
//	            per stack (profiler.Samples())
//	nt-parse    nettrace.Parse: the resolved trace as Go values
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"libnettrace.dev/nettrace"
)

type job struct {
	name string
	run  func(data []byte) (string, error) // returns what it read, to print
}

// jobs: the dotnetdiag jobs (dotnetdiag.go) come before ours.
var jobs = []job{
	{"nt-decode", func(data []byte) (string, error) {
		p, err := nettrace.NewParser(nettrace.Callbacks{})
		if err != nil {
			return "", err
		}
		if _, err := p.Write(data); err != nil {
			return "", err
		}
		return "", p.Close()
	}},
	{"nt-parse", func(data []byte) (string, error) {
		t, err := nettrace.Parse(bytes.NewReader(data))
		if t == nil {
			return "", err
		}
		defer t.Close()
		return fmt.Sprintf("%d samples", len(t.Samples)), err
	}},
}

func measure(j job, data []byte, runs int) (best time.Duration, alloc uint64, what string, err error) {
	for i := 0; i < runs; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		what, err = j.run(data)
		d := time.Since(start)
		runtime.ReadMemStats(&after)
		if err != nil {
			return 0, 0, what, err
		}
		if i == 0 || d < best {
			best = d
		}
		alloc = after.TotalAlloc - before.TotalAlloc
	}
	return best, alloc, what, nil
}

func main() {
	runs := flag.Int("runs", 5, "runs of each job (best wall time kept)")
	flag.Parse()
	fmt.Printf("%-56s %-10s %9s %9s %10s  %s\n", "trace", "job", "ms", "MiB/s", "alloc MiB", "read")
	for _, path := range flag.Args() {
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		times := map[string]time.Duration{}
		for _, j := range jobs {
			best, alloc, what, err := measure(j, data, *runs)
			name := filepath.Base(path)
			if err != nil {
				fmt.Printf("%-56s %-10s fails: %v\n", name, j.name, err)
				continue
			}
			times[j.name] = best
			mibs := float64(len(data)) / (1 << 20) / best.Seconds()
			fmt.Printf("%-56s %-10s %9.2f %9.1f %10.1f  %s\n", name, j.name,
				float64(best.Microseconds())/1000, mibs, float64(alloc)/(1<<20), what)
		}
		for _, pair := range [][2]string{{"dd-decode", "nt-decode"}, {"dd-samples", "nt-parse"}} {
			if a, b := times[pair[0]], times[pair[1]]; a > 0 && b > 0 {
				fmt.Printf("%-56s %-10s %.2fx (%s / %s time)\n", filepath.Base(path), "ratio",
					a.Seconds()/b.Seconds(), pair[0], pair[1])
			}
		}
	}
}
