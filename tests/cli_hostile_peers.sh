#!/bin/sh
# Hostile neighbours (issue 21, items 2 and 7): sockets that another process,
# or another user (uid 12345 through setpriv, when we are root), binds under
# the name of a process's diagnostics endpoint.  `nettrace ps` must not list
# them as .NET, `collect -p` must refuse them and say why, a peer's strings
# must reach the terminal escaped, and runtimes that never answer must not
# make `ps` or `collect -n` take a second each.
set -u
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
NT=$nt
FAKE="$top_srcdir/tests/support/fake_runtime.py"
PY=/usr/bin/python3 # the system's: another user may run it (a per-user shim under /root may not)
[ -x "$PY" ] || PY=$(command -v python3) || skip "python3 runs the fake runtimes"
work=$(mktemp -d /tmp/nt-hostile-XXXXXX) || exit 1
chmod 1777 "$work" # a TMPDIR any user may write to, as /tmp is
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$work" "$checks_tmp"
}
trap cleanup EXIT

# Wait for a fake runtime's ready file (it listens then).
await() {
    for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.05; done
    echo "FAIL: the fake runtime did not start ($1)"
    exit 1
}

# A root process that is not .NET, with the shared TMPDIR.
TMPDIR="$work" sleep 60 &
victim=$!
pids="$pids $victim"
sleep 0.2

# 1. An impostor of the same user serves the victim's endpoint name.
TMPDIR="$work" "$PY" "$FAKE" plant "$victim" answer "6.6.6-impostor" "$work/ready1" &
pids="$pids $!"
await "$work/ready1"
out=$("$NT" ps 2>"$work/ps.err")
if printf '%s\n' "$out" | grep -q "^ *$victim "; then
    fail "ps lists pid $victim, whose endpoint another process serves: $out"
else
    ok "ps does not list an endpoint served by another process"
fi
grep -q "pid $victim: .*not served by that process" "$work/ps.err" || fail "ps does not say why it skipped $victim: $(cat "$work/ps.err")"
"$NT" collect -q -p "$victim" -o "$work/impostor.nettrace" --duration 1s 2>"$work/collect.err"
rc=$?
if [ $rc -ne 0 ] && grep -q "served by pid" "$work/collect.err"; then
    ok "collect -p refuses the impostor (exit $rc): $(cat "$work/collect.err")"
else
    fail "collect -p on an impostor: exit $rc, $(cat "$work/collect.err")"
fi
kill "$(echo $pids | awk '{print $NF}')" 2>/dev/null
rm -f "$work"/dotnet-diagnostic-*

# 2. Another user plants the socket (the runtime's bind() would then fail).
# exec: in a background job, $! is then the fake runtime itself (killed at the end)
second_user() { exec setpriv --reuid=12345 --regid=12345 --clear-groups "$@"; }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null 2>&1 || ! setpriv --reuid=12345 --regid=12345 --clear-groups "$PY" -c '' 2>/dev/null; then
    echo "skip: not root, no setpriv, or $PY not runnable by uid 12345: the second-user cases cannot run here"
    second=""
else
    second=yes
    (TMPDIR="$work" second_user "$PY" "$FAKE" plant "$victim" answer "6.6.6-planted" "$work/ready2") &
    pids="$pids $!"
    await "$work/ready2"
    out=$("$NT" ps 2>&1)
    if printf '%s\n' "$out" | grep -q "6.6.6-planted"; then
        fail "ps shows a socket uid 12345 planted for root's pid $victim: $out"
    else
        ok "ps ignores a socket another user planted"
    fi
    "$NT" collect -q -p "$victim" -o "$work/planted.nettrace" --duration 1s 2>"$work/collect2.err"
    rc=$?
    if [ $rc -ne 0 ] && grep -q "foreign" "$work/collect2.err"; then
        ok "collect -p refuses it (exit $rc): $(cat "$work/collect2.err")"
    else
        fail "collect -p on a planted socket: exit $rc, $(cat "$work/collect2.err")"
    fi
    [ -e "$work/planted.nettrace" ] && [ -s "$work/planted.nettrace" ] && fail "a planted stream was recorded"
fi

# 3. A peer's strings reach the terminal escaped (ps: runtime version, OS, arch, endpoint path).
TMPDIR="$work" "$PY" "$FAKE" self answer '\x1b]0;owned\x07\x1b[2J' "$work/ready3" &
esc=$!
pids="$pids $esc"
await "$work/ready3"
"$NT" ps -v >"$work/ps3.out" 2>&1
if grep -q "$(printf '\033')" "$work/ps3.out"; then
    fail "ps printed a peer's escape sequence raw: $(od -c "$work/ps3.out" | head -5)"
elif ! grep "^ *$esc " "$work/ps3.out" | grep -q '\\x1B\]0;owned'; then
    fail "ps does not show the escaped version of pid $esc: $(cat "$work/ps3.out")"
else
    ok "ps escapes a peer's runtime version, OS and architecture"
fi
kill "$esc"

# 4. Twenty runtimes that never answer (another user's, when possible): ps asks them all at once.
#    Asked one after another they take 20 s or more (a second each); the bound of 12 s sits well below
#    that and well above what the parallel query takes on a loaded two-core machine (1-5 s seen).
for i in $(seq 20); do
    if [ -n "$second" ]; then
        (TMPDIR="$work" second_user "$PY" "$FAKE" self silent x "$work/silent$i") &
    else
        TMPDIR="$work" "$PY" "$FAKE" self silent x "$work/silent$i" &
    fi
    pids="$pids $!"
done
for i in $(seq 20); do await "$work/silent$i"; done
t0=$(date +%s%N)
"$NT" ps >"$work/ps4.out" 2>&1
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
listed=$(grep -c " - .* - " "$work/ps4.out")
if [ "$ms" -gt 12000 ]; then
    fail "ps took $ms ms with 20 silent runtimes (one second each?)"
else
    ok "ps took $ms ms with 20 silent runtimes ($listed rows without an answer)"
fi

t0=$(date +%s%N)
"$NT" collect -q -n "NoSuchProgram-$$" -o "$work/none.nettrace" 2>"$work/byname.err"
rc=$?
t1=$(date +%s%N)
ms=$(( (t1 - t0) / 1000000 ))
if [ "$ms" -gt 12000 ] || [ $rc -ne 30 ]; then
    fail "collect -n with 20 silent runtimes: exit $rc after $ms ms: $(cat "$work/byname.err")"
else
    ok "collect -n looked through 20 silent runtimes in $ms ms (exit 30: no such name)"
fi

[ -f "$checks_failed" ] || ok "hostile peers handled"
finish
