#!/usr/bin/env python3
"""The event profiles against TraceEvent, trace by trace (make conformance).

For every LABEL=PATH given, reads the allocation ticks, exceptions and
contention waits with `nettrace samples --profile KIND` and with TraceEvent's
typed parsers and TraceLog stacks (`Conformance profiles FILE OUTDIR`,
tests/conformance/Profiles.cs), and the GC timeline with `nettrace gc --json`
and TraceEvent's GCStart/GCEnd/GCHeapStats/SuspendEE/RestartEE.  Per trace
and profile it reports: events, the totals per label (bytes / throws / wait
ns and counts), the weights per (label, stack), and whole lines.

Totals and counts must be equal.  Per-stack weights must be equal, or equal
once frame names are compared the way compare.py documents for samples
(module-name-case: TraceLog lower-cases some module names; unknown-module:
TraceLog's ManagedModule where we print ?) -- reported as such.  Anything
else is an undocumented difference and fails the run.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

KINDS = ("alloc", "exceptions", "contention")
# GCStart Reason and Type names as `nettrace gc` prints them (nt_gc_reason_name).
REASONS = ["AllocSmall", "Induced", "LowMemory", "Empty", "AllocLarge", "OutOfSpaceSOH", "OutOfSpaceLOH",
           "InducedNotForced", "Internal", "InducedLowMemory", "InducedCompacting", "LowMemoryHost", "PMFullGC",
           "LowMemoryHostBlocking"]
TYPES = ["blocking", "background", "foreground"]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def parse_lines(text):
    out = []
    for line in text.splitlines():
        ts, tid, value, label, frames = line.split(" ", 4)
        out.append((int(ts), int(tid), int(value), label, frames))
    return out


def normalize(frames):
    """Frame names as compare.py's module-name-case and unknown-module rules see them."""
    return ";".join(f.replace("ManagedModule!", "?!", 1).lower() for f in frames.split(";"))


def weights(lines, norm=False):
    w = collections.defaultdict(lambda: [0, 0])
    for _, _, value, label, frames in lines:
        k = (label, normalize(frames) if norm else frames)
        w[k][0] += 1
        w[k][1] += value
    return w


def totals(lines):
    t = collections.defaultdict(lambda: [0, 0])
    for _, _, value, label, _ in lines:
        t[label][0] += 1
        t[label][1] += value
    return t


def compare_kind(kind, ours, theirs, report):
    """Returns the number of undocumented differences."""
    bad = 0
    if not ours and not theirs:
        return 0
    same_lines = sum(1 for a, b in zip(ours, theirs) if a == b)
    to, tt = totals(ours), totals(theirs)
    labels_equal = to == tt
    wo, wt = weights(ours), weights(theirs)
    stacks_equal = wo == wt
    note = ""
    if not stacks_equal and weights(ours, True) == weights(theirs, True):
        note = " (equal once module names are compared as compare.py documents: module-name-case / unknown-module)"
    elif not stacks_equal:
        bad += 1
    if not labels_equal or len(ours) != len(theirs):
        bad += 1
    total_o = sum(v[1] for v in to.values())
    report.append(f"  {kind}: {len(ours)} events (TraceEvent {len(theirs)}), {len(to)} labels, total {total_o}"
                  f" {'=' if labels_equal else '!='} TraceEvent's per label; {len(wo)} (label, stack) weights"
                  f" {'identical' if stacks_equal else 'differ' + note}; {same_lines} of {len(ours)} lines identical")
    if not labels_equal:
        for label in sorted(set(to) | set(tt)):
            if to.get(label) != tt.get(label):
                report.append(f"    [UNDOCUMENTED] {label}: nettrace {to.get(label)} TraceEvent {tt.get(label)}")
    elif not stacks_equal and not note:
        diff = [k for k in set(wo) | set(wt) if wo.get(k) != wt.get(k)]
        for k in sorted(diff)[:5]:
            report.append(f"    [UNDOCUMENTED] {k[0]} {k[1][:160]}: nettrace {wo.get(k)} TraceEvent {wt.get(k)}")
    return bad


def compare_gcs(ours_json, theirs_text, report):
    ours = []
    for g in json.loads(ours_json)["gcs"]:
        def n(v):
            return -1 if v is None else v
        ours.append((g["number"], g["generation"], g["reason"], g["type"], g["start_ns"], n(g["end_ns"]),
                     n(g["suspend_begin_ns"]), n(g["restart_end_ns"])) + tuple(g["generation_sizes"][:4]))
    theirs = []
    for line in theirs_text.splitlines():
        v = [int(x) for x in line.split()[1:]]
        reason = REASONS[v[2]] if 0 <= v[2] < len(REASONS) else "Other"
        gtype = TYPES[v[3]] if 0 <= v[3] < len(TYPES) else "other"
        theirs.append((v[0], v[1], reason, gtype) + tuple(v[4:12]))
    if not ours and not theirs:
        return 0
    same = sum(1 for a, b in zip(ours, theirs) if a == b)
    ok = len(ours) == len(theirs) and same == len(ours)
    report.append(f"  gc: {len(ours)} GCs (TraceEvent {len(theirs)}); {same} identical in number, generation, reason,"
                  f" type, start/end, suspension start, restart end and generation sizes 0-3")
    if not ok:
        for a, b in zip(ours, theirs):
            if a != b:
                report.append(f"    [UNDOCUMENTED] nettrace {a} TraceEvent {b}")
                break
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nettrace", required=True)
    ap.add_argument("--conformance", required=True, help="Conformance.dll")
    ap.add_argument("traces", nargs="+", help="LABEL=PATH")
    a = ap.parse_args()
    bad_total = 0
    compared = 0
    for spec in a.traces:
        label, path = spec.split("=", 1)
        rc, info, _ = run([a.nettrace, "info", "--json", path])
        try:
            status = json.loads(info)["status"]
        except (ValueError, KeyError):
            status = "unreadable"
        if status == "unsupported_version":
            continue  # the netperf file: refused on purpose (compare.py reports it)
        report = [label]
        with tempfile.TemporaryDirectory() as tmp:
            rc, _, err = run(["dotnet", a.conformance, "profiles", path, tmp])
            if rc != 0:
                print(f"{label}\n  [UNDOCUMENTED] TraceEvent failed: {err.strip()[:300]}")
                bad_total += 1
                continue
            bad = 0
            for kind in KINDS:
                rc, ours, err = run([a.nettrace, "samples", "--profile", kind, path])
                with open(os.path.join(tmp, kind + ".txt"), encoding="utf-8") as f:
                    theirs = f.read()
                bad += compare_kind(kind, parse_lines(ours), parse_lines(theirs), report)
            rc, ours, _ = run([a.nettrace, "gc", "--json", path])
            with open(os.path.join(tmp, "gcs.txt"), encoding="utf-8") as f:
                bad += compare_gcs(ours, f.read(), report)
        if len(report) > 1:
            compared += 1
            print("\n".join(report))
        bad_total += bad
    print(f"conformance (profiles): {compared} traces with allocation ticks, exceptions, contention or GCs;"
          f" {bad_total} undocumented difference(s)")
    return 1 if bad_total else 0


if __name__ == "__main__":
    sys.exit(main())
