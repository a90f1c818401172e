#!/usr/bin/env python3
"""The tool on a terminal (a pseudo-terminal made here): the progress line of a
job that runs over half a second, erased at the end; and `collect -- PROGRAM`
stopped by Ctrl-C typed on the terminal (the live counter shows first; the
stop is clean, with rundown; the program is ended and its end reported).
Exit 77 (skip) only for a named reason."""
import os, pty, select, signal, subprocess, sys, time

top = os.environ.get("top_builddir", ".")
src = os.environ.get("top_srcdir", ".")
nt = os.path.join(top, "nettrace")
fails = []


def run_on_pty(argv, stdin_fd=None, on_output=None, timeout=60):
    """Run argv on a new pseudo-terminal (its controlling terminal), standard
    output to a file; returns (exit status, what the terminal got, stdout)."""
    out_path = f"/tmp/nt-pty-{os.getpid()}.out"
    pid, master = pty.fork()
    if pid == 0:
        if stdin_fd is not None:
            os.dup2(stdin_fd, 0)
        fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.execv(argv[0], argv)
    tty = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r, _, _ = select.select([master], [], [], 0.2)
        if master in r:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the terminal's last user is gone
                break
            if not chunk:
                break
            tty += chunk
            if on_output:
                on_output(tty, master)
    else:
        os.kill(pid, signal.SIGKILL)
        fails.append(f"{argv[1]} did not end in {timeout} s")
    _, status = os.waitpid(pid, 0)
    os.close(master)
    stdout = open(out_path, "rb").read()
    os.unlink(out_path)
    return os.waitstatus_to_exitcode(status), tty, stdout


# --- progress: a read that takes over half a second (a slow pipe) ---------------
trace = os.path.join(src, "corpus", "call-tree.nettrace")
data = open(trace, "rb").read()
env = dict(os.environ)
env.pop("NETTRACE_NO_PROGRESS", None)
os.environ.clear()
os.environ.update(env)
r, w = os.pipe()
if os.fork() == 0:
    os.close(r)
    os.write(w, data[: len(data) // 2])
    time.sleep(1.2)  # the job is over half a second old when the rest arrives
    os.write(w, data[len(data) // 2:])
    os._exit(0)
os.close(w)
rc, tty, stdout = run_on_pty([nt, "samples", "-"], stdin_fd=r)
os.close(r)
os.wait()
want = subprocess.run([nt, "samples", trace], capture_output=True).stdout
if rc != 0:
    fails.append(f"samples - on a terminal exited {rc}")
if b"reading" not in tty:
    fails.append(f"no progress line on the terminal: {tty!r}")
if not tty.endswith(b"\r\x1b[K"):
    fails.append(f"the progress line is not erased at the end: {tty[-40:]!r}")
if stdout != want:
    fails.append("the progress line changed standard output")
quiet = subprocess.run([nt, "samples", trace], capture_output=True).stderr
if b"reading" in quiet:
    fails.append("progress drawn although standard error is not a terminal")
print("ok: progress" if not fails else "FAIL: progress")

# --- collect -- PROGRAM, Ctrl-C on the terminal ---------------------------------
dll = os.path.join(top, "tests", "workloads-build", "StartupTarget", "out", "StartupTarget.dll")
if subprocess.run(["sh", "-c", "command -v dotnet"], capture_output=True).returncode != 0:
    print("SKIP (part): dotnet is not on PATH: collect with Ctrl-C on a terminal not run")
else:
    if not os.path.exists(dll):
        # the live tests build it; build it here the same way when they have not run yet
        d = os.path.dirname(os.path.dirname(dll))
        os.makedirs(d, exist_ok=True)
        for f in ("Program.cs", "StartupTarget.csproj"):
            open(os.path.join(d, f), "wb").write(open(os.path.join(src, "tests/workloads/StartupTarget", f), "rb").read())
        subprocess.run("DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 dotnet build -c Release -o out "
                       "-nodeReuse:false -p:UseSharedCompilation=false > build.log 2>&1", shell=True, cwd=d)
    if not os.path.exists(dll):
        fails.append("the StartupTarget workload did not build")
    else:
        out = os.path.join(os.path.dirname(dll), f"pty-{os.getpid()}.nettrace")
        sent = [False]

        def ctrl_c_after_counter(buf, master):
            if not sent[0] and b" events" in buf and b"MiB, " in buf:
                sent[0] = True
                os.write(master, b"\x03")  # the terminal's Ctrl-C: SIGINT to nettrace's process group

        rc, tty, _ = run_on_pty([nt, "collect", "-o", out, "--", "dotnet", dll, "60000"],
                                on_output=ctrl_c_after_counter, timeout=90)
        text = tty.decode("utf-8", "replace")
        if not sent[0]:
            fails.append(f"no live counter before Ctrl-C: {text!r}")
        if rc != 0:
            fails.append(f"collect stopped by Ctrl-C exited {rc}: {text!r}")
        if "stopping (rundown" not in text or "wrote " not in text:
            fails.append(f"no clean stop: {text!r}")
        if "was killed by signal" not in text and "exited with status" not in text:
            fails.append(f"the program's end is not reported: {text!r}")
        info = subprocess.run([nt, "info", "--json", out], capture_output=True, text=True)
        if info.returncode != 0 or '"status": "ok"' not in info.stdout:
            fails.append(f"the trace does not read cleanly: {info.stdout[:200]} {info.stderr}")
        top_out = subprocess.run([nt, "top", "-n", "3", out], capture_output=True, text=True).stdout
        if "StartupTarget.Program.SpinInMain" not in top_out:
            fails.append(f"SpinInMain is not among the hot methods: {top_out}")
        if os.path.exists(out):
            os.unlink(out)
        print("ok: collect with Ctrl-C" if not fails else "FAIL: collect with Ctrl-C")

for f in fails:
    print("FAIL:", f)
sys.exit(1 if fails else 0)
