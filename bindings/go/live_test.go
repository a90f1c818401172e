package nettrace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// liveTarget is the LiveTarget workload (tests/workloads/LiveTarget, built
// by bindings/live_prepare): two threads spinning in Alpha.SpinAlpha and
// Beta.SpinBeta, compiled before it prints "ready".
type liveTarget struct {
	cmd         *exec.Cmd
	pid         int
	alpha, beta uint64
}

func startLive(t *testing.T) *liveTarget {
	t.Helper()
	dll := os.Getenv("NETTRACE_LIVE_TARGET")
	if dll == "" {
		t.Skip("NETTRACE_LIVE_TARGET is not set: no dotnet to run the LiveTarget workload (see go_test.sh)")
	}
	cmd := exec.Command("dotnet", dll, "60")
	cmd.Env = append(os.Environ(), "DOTNET_CLI_TELEMETRY_OPTOUT=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lt := &liveTarget{cmd: cmd, pid: cmd.Process.Pid}
	t.Cleanup(lt.kill)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("LiveTarget exited before it was ready")
			}
			f := strings.Fields(line)
			if len(f) == 3 && f[0] == "thread" {
				id, _ := strconv.ParseUint(f[2], 10, 64)
				if f[1] == "alpha" {
					lt.alpha = id
				} else {
					lt.beta = id
				}
			}
			if len(f) == 2 && f[0] == "ready" {
				go func() {
					for range lines {
					}
				}()
				return lt
			}
		case <-timeout:
			t.Fatal("LiveTarget was not ready within 20 s")
		}
	}
}

// kill ends the workload and removes the diagnostics socket a killed
// runtime leaves behind.
func (lt *liveTarget) kill() {
	lt.cmd.Process.Kill()
	lt.cmd.Wait()
	for _, dir := range []string{os.Getenv("TMPDIR"), "/tmp"} {
		if dir == "" {
			continue
		}
		socks, _ := filepath.Glob(filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-*-socket", lt.pid)))
		for _, s := range socks {
			os.Remove(s)
		}
	}
}

// syncBuffer is a writer safe to read while the session writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte{}, s.b.Bytes()...)
}

// leafCounts counts managed samples per (thread, leaf method).
func leafCounts(tr *Trace, tid uint64, method string) (hits, total int) {
	for _, s := range tr.Samples {
		if s.ThreadID != tid || !s.Managed || len(s.Frames) == 0 {
			continue
		}
		total++
		if s.Frames[0].Method == method {
			hits++
		}
	}
	return hits, total
}

// fakeEndpoint listens where the library looks for this test process's
// diagnostics socket (TMPDIR from its environment at exec, the start key
// from /proc/self/stat) and answers each connection with reply (nil: reads
// and never answers).
func fakeEndpoint(t *testing.T, reply func(conn net.Conn)) {
	t.Helper()
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc/self/stat: ", err)
	}
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
	key := fields[19] // field 22 (starttime); fields here start at field 3
	dir := "/tmp"
	env, _ := os.ReadFile("/proc/self/environ")
	for _, kv := range bytes.Split(env, []byte{0}) {
		if bytes.HasPrefix(kv, []byte("TMPDIR=")) && len(kv) > 7 {
			dir = string(kv[7:])
		}
	}
	path := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", os.Getpid(), key))
	os.Remove(path)
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close(); os.Remove(path) })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if reply != nil {
					reply(conn)
				} else {
					buf := make([]byte, 4096)
					for {
						if _, err := conn.Read(buf); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
}

// ipcError is the runtime's error reply: the header with command set and id
// 0xFF, then the HRESULT.
func ipcError(hr uint32) []byte {
	b := append([]byte("DOTNET_IPC_V1\x00"), 0, 0, 0xFF, 0xFF, 0, 0)
	binary.LittleEndian.PutUint16(b[14:], 24)
	return binary.LittleEndian.AppendUint32(b, hr)
}

func readRequest(conn net.Conn) {
	hdr := make([]byte, 20)
	if _, err := conn.Read(hdr); err != nil {
		return
	}
	rest := make([]byte, int(binary.LittleEndian.Uint16(hdr[14:]))-20)
	for len(rest) > 0 {
		n, err := conn.Read(rest)
		if err != nil {
			return
		}
		rest = rest[n:]
	}
}
