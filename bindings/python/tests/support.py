"""What the tests share: corpus paths, the tool's output, the live workload."""
import glob
import os
import re
import subprocess
import time
import unittest

TOP = os.environ.get("top_srcdir") or os.path.join(os.path.dirname(__file__), "..", "..", "..")


def corpus(name):
    return os.path.join(TOP, "corpus", name)


def corpus_files():
    files = sorted(glob.glob(os.path.join(TOP, "corpus", "*.nettrace")))
    shared = os.environ.get("NETTRACE_SHARED_CORPUS") or os.path.join(TOP, "..", "shared", "corpus")
    more = sorted(glob.glob(os.path.join(shared, "*.nettrace")))
    if not more:
        print("shared corpus %s is absent (set NETTRACE_SHARED_CORPUS): corpus/ only" % shared)
    return files + more


def cli(*args):
    """The build tree's nettrace tool: the C library's own rendering."""
    tool = os.environ.get("NETTRACE_CLI")
    if not tool:
        raise unittest.SkipTest("NETTRACE_CLI is not set (make check sets it to the build tree's nettrace)")
    return subprocess.run([tool] + list(args), check=True, stdout=subprocess.PIPE).stdout


def samples_text(trace):
    """Samples rendered the way 'nettrace samples' prints them."""
    lines = []
    for s in trace.samples():
        names = []
        for f in reversed(s.frames):
            if not (f.method or f.type or f.assembly):
                names.append("0x%x" % f.ip)
            else:
                names.append("%s!%s.%s" % (f.assembly.split(",")[0] or "?", f.type, f.method))
        lines.append("%d %d %s %s\n" % (s.time_ns, s.thread_id, "M" if s.managed else "E",
                                         ";".join(names) or "-"))
    return "".join(lines).encode()


class LiveTarget:
    """The LiveTarget workload (tests/workloads/LiveTarget): threads alpha and
    beta spin in Alpha.SpinAlpha and Beta.SpinBeta, compiled before "ready"."""

    def __init__(self):
        dll = os.environ.get("NETTRACE_LIVE_TARGET")
        if not dll:
            raise unittest.SkipTest("NETTRACE_LIVE_TARGET is not set: no dotnet to run the LiveTarget workload")
        env = dict(os.environ, DOTNET_CLI_TELEMETRY_OPTOUT="1")
        self.proc = subprocess.Popen(["dotnet", dll, "60"], stdout=subprocess.PIPE, env=env)
        self.pid = self.proc.pid
        self.alpha = self.beta = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline().decode()
            if not line:
                break
            m = re.match(r"thread (alpha|beta) (\d+)", line)
            if m:
                setattr(self, m.group(1), int(m.group(2)))
            if line.startswith("ready"):
                return
        self.kill()
        raise AssertionError("LiveTarget was not ready within 20 s")

    def kill(self):
        self.proc.kill()
        self.proc.wait()
        self.proc.stdout.close()
        # A killed runtime leaves its diagnostics socket behind.
        for d in {os.environ.get("TMPDIR") or "/tmp", "/tmp"}:
            for sock in glob.glob(os.path.join(d, "dotnet-diagnostic-%d-*-socket" % self.pid)):
                os.remove(sock)


def leaf_share(trace, tid, method):
    hits = total = 0
    for s in trace.samples():
        if s.thread_id == tid and s.managed and s.frames:
            total += 1
            hits += s.frames[0].method == method
    return hits, total
