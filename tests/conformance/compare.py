#!/usr/bin/env python3
"""libnettrace against TraceEvent, trace by trace (make conformance).

For every trace given, runs `nettrace info --json` and `nettrace samples`
beside the TraceEvent program of this folder (Conformance.dll: `info`,
`samples --ips`, `records`) and reports per file:

  * counts: every field of `info --json`, field by field, and the event
    types; fields TraceEvent cannot observe are named once, not compared;
  * samples: how many canonical lines are identical, and every frame name
    that differs, grouped by its documented reason (README.md, "Deliberate
    differences") with a count and one example.

Exit status 0 when every difference is a documented one, 1 otherwise, 2 on
a usage or tool failure.  --self-test checks the classifier on made-up
records and lines.
"""
import argparse
import bisect
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_fields  # noqa: E402  (beside this file)

# Fields of `nettrace info --json` TraceEvent keeps no count of (README.md says why).
NOT_OBSERVABLE = {
    "bytes": "TraceEvent reads the file through its own stream and keeps no byte count",
    "blocks": "blocks are parsed inside EventPipeEventSource's BlockParser and never counted",
    "stacks": "StackCache holds only the current interval's stacks and is emptied at every sequence point",
    "sequence_points": "sequence point blocks are consumed by EventCache without a count or an event",
    "unknown_blocks": "TraceEvent skips unknown V6 block kinds without counting them",
    "start_ns": "the header's sync time on the trace clock: the Oracle prints no trace-clock times to compare with",
    "end_ns": "the last event's trace-clock time: the Oracle prints no trace-clock times to compare with",
    "duration_ns": "end_ns - start_ns: the Oracle prints no trace-clock times to compare with",
}

# Reasons a frame name (or a sample's thread id) may differ; README.md explains each.
REASONS = {
    "unknown-module": "no module record for the method's module: TraceLog invents 'ManagedModule', "
                      "libnettrace prints '?' (assembly unknown)",
    "module-name-case": "TraceLog lower-cases a module's file name when a module record creates its entry "
                        "(the record comes before the module's method records); libnettrace prints the "
                        "assembly's name as the runtime wrote it",
    "return-address": "a return address (frame >= 1) on a method boundary: libnettrace looks up ip - 1 "
                      "(the call instruction), TraceLog the ip as written",
    "not-jitted-load": "a MethodLoadVerbose without the Jitted flag and no other record for the code: at the end of "
                       "a conversion TraceLog uses only Jitted loads, libnettrace every load",
    "address-reuse": "code memory reused after an unload, no rundown after it: TraceLog's end-of-trace pass "
                     "gives the address to the first load in the trace, libnettrace to the record live at the "
                     "sample's time",
    "thread-id-32bit": "a thread id above 2^32: TraceEvent's ThreadID is an int (the low 32 bits)",
}

JITTED = 0x8


class Method:
    __slots__ = ("kind", "t", "start", "size", "flags", "module", "id", "name")

    def __init__(self, r):
        self.kind, self.t, self.start, self.size = r[1], int(r[2]), int(r[3], 16), int(r[4])
        self.flags, self.module, self.id, self.name = int(r[5], 16), r[6], r[7], without_arguments(r[8])

    def holds(self, addr):
        return self.start <= addr < self.start + self.size


class Records:
    """The method and module records of a trace as TraceEvent decodes them (Conformance records)."""

    def __init__(self, rows):
        self.methods = []            # Method, in stream order
        self.first_module = {}       # module id -> index of its first module record (DomainModule excluded)
        self.first_method = {}       # module id -> index of its first method record
        for i, r in enumerate(rows):
            if r[0] == "method" and len(r) >= 9:
                m = Method(r)
                self.methods.append(m)
                self.first_method.setdefault(m.module, i)
            elif r[0] == "module" and len(r) >= 6 and not r[1].startswith("domain"):
                self.first_module.setdefault(r[3], i)
        self.by_start = sorted(self.methods, key=lambda m: m.start)
        self.starts = [m.start for m in self.by_start]
        self.max_size = max((m.size for m in self.methods), default=0)

    def covering(self, addr):
        """Every record whose [start, start + size) holds addr, in stream order."""
        out = []
        i = bisect.bisect_right(self.starts, addr) - 1
        while i >= 0 and self.starts[i] + self.max_size > addr:
            if self.by_start[i].holds(addr):
                out.append(self.by_start[i])
            i -= 1
        return sorted(out, key=self.methods.index) if len(out) > 1 else out


def without_arguments(full):
    """TraceLog's full name without the '(...)' group that ends it (as Conformance.dll strips it)."""
    if not full.endswith(")"):
        return full
    depth = 0
    for i in range(len(full) - 1, -1, -1):
        if full[i] == ")":
            depth += 1
        elif full[i] == "(":
            depth -= 1
            if depth == 0:
                return full[:i]
    return full


def same_module(om, tm):
    """Module parts that differ at most by one of the module-name reasons."""
    return om == tm or om.lower() == tm or (om == "?" and tm == "ManagedModule")


def classify(ours, theirs, ip, leaf, rec, t_ns):
    """The documented reason why frame names `ours` (libnettrace) and `theirs` (TraceLog) differ, or None.
    ip: the frame's address; leaf: frame 0; t_ns: the sample's time."""
    if ip is None or rec is None:
        return None
    hexip = "0x%x" % ip
    om, _, orest = ours.partition("!")
    tm, _, trest = theirs.partition("!")
    if orest and orest == trest:
        mods = {m.module for m in rec.covering(ip if leaf else ip - 1) if m.name == orest}
        if om == "?" and tm == "ManagedModule":
            if mods and all(mid not in rec.first_module for mid in mods):
                return "unknown-module"
        elif om != tm and om.lower() == tm:
            if mods and all(mid in rec.first_module and
                            rec.first_module[mid] < rec.first_method.get(mid, float("inf")) for mid in mods):
                return "module-name-case"
        return None
    if ours != hexip and theirs != hexip and not same_module(om, tm):
        return None
    if not leaf:
        # Ours names what holds ip - 1, TraceLog what holds ip, and no record holds both.
        below, at = rec.covering(ip - 1), rec.covering(ip)
        ours_ok = (ours == hexip and not below) or any(m.name == orest and not m.holds(ip) for m in below)
        theirs_ok = (theirs == hexip and not at) or any(m.name == trest and not m.holds(ip - 1) for m in at)
        if ours_ok and theirs_ok:
            return "return-address"
    addr = ip if leaf else ip - 1
    held = rec.covering(addr)
    if theirs == hexip or theirs == "0x%x" % addr:
        if held and all(m.kind == "load" and not m.flags & JITTED for m in held) and \
                any(m.name == orest for m in held):
            return "not-jitted-load"
        return None
    # Address reuse: ours is the load live at the sample's time, TraceLog's an earlier load unloaded before it.
    unloaded = {m.id for m in held if m.kind == "unload" and m.t <= t_ns}
    ours_rec = [m for m in held if m.name == orest and m.kind == "load" and m.t <= t_ns and m.id not in unloaded]
    theirs_rec = [m for m in held if m.name == trest and m.kind == "load" and m.id in unloaded]
    if ours_rec and theirs_rec and not any(m.kind in ("dcend", "dcstart") for m in held):
        return "address-reuse"
    return None


def run(cmd):
    """stdout (text) of cmd, and its exit status."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
    return p.stdout, p.returncode, p.stderr


def tie_order(lines):
    """Indices of lines with every run of equal timestamps sorted by text."""
    out, i = [], 0
    while i < len(lines):
        j = i
        ts = lines[i].split(" ", 1)[0]
        while j < len(lines) and lines[j].split(" ", 1)[0] == ts:
            j += 1
        out.extend(sorted(range(i, j), key=lambda k: lines[k]))
        i = j
    return out


def tie_normalise(lines):
    return [lines[i] for i in tie_order(lines)]


class FileReport:
    def __init__(self, label):
        self.label = label
        self.lines = []
        self.undocumented = 0
        self.reasons = set()

    def say(self, text):
        self.lines.append(text)

    def bad(self, text):
        self.undocumented += 1
        self.lines.append(text + "  [UNDOCUMENTED]")


def compare_counts(rep, ours, theirs, our_threads):
    """our_threads: the thread ids of nettrace's sample lines."""
    diffs = []
    documented = []
    same = 0
    for key, val in ours.items():
        if key in NOT_OBSERVABLE or key == "event_types":
            continue
        if key not in theirs:
            diffs.append("%s: nettrace %s, TraceEvent has no such field" % (key, json.dumps(val)))
        elif theirs[key] != val:
            low = {t & 0xffffffff for t in our_threads}
            if key == "sampled_threads" and our_threads and val == len(set(our_threads)) and theirs[key] == len(low) and \
                    max(our_threads) > 0xffffffff:
                documented.append("sampled_threads: nettrace %d, TraceEvent %d (thread-id-32bit: %d ids share "
                                  "their low 32 bits)" % (val, theirs[key], val - theirs[key]))
            else:
                diffs.append("%s: nettrace %s, TraceEvent %s" % (key, json.dumps(val), json.dumps(theirs[key])))
        else:
            same += 1
    ot = {(t["provider"], t["event_id"], t["version"]): t["count"] for t in ours.get("event_types", [])}
    tt = {(t["provider"], t["event_id"], t["version"]): t["count"] for t in theirs.get("event_types", [])}
    for k in sorted(set(ot) | set(tt)):
        if ot.get(k) != tt.get(k):
            diffs.append("event type %s:%d:%d: nettrace %s, TraceEvent %s" % (k[0], k[1], k[2], ot.get(k), tt.get(k)))
    if diffs:
        for d in diffs:
            rep.bad("  counts differ: " + d)
    else:
        rep.say("  counts: %d fields and %d event types identical%s" %
                (same, len(ot), "; documented difference: " + "; ".join(documented) if documented else ""))


def compare_samples(rep, ours_lines, te_lines, ips_lines, records_of):
    n = len(ours_lines)
    if n != len(te_lines):
        rep.bad("  samples: nettrace has %d lines, TraceEvent %d" % (n, len(te_lines)))
        return
    if n == 0:
        rep.say("  samples: none in either reader")
        return
    ties = 0
    if ours_lines != te_lines:
        # TraceEvent may order samples of equal timestamps differently (README.md): compare
        # each run of equal timestamps sorted, TraceLog's .ips lines following their lines.
        o2 = tie_normalise(ours_lines)
        perm = tie_order(te_lines)
        t2 = [te_lines[i] for i in perm]
        ties = sum(1 for x, y in zip(o2, ours_lines) if x != y) + sum(1 for x, y in zip(t2, te_lines) if x != y)
        if ties:
            ours_lines, te_lines, ips_lines = o2, t2, [ips_lines[i] for i in perm]
    identical = sum(1 for a, b in zip(ours_lines, te_lines) if a == b)
    text = "  samples: %d of %d lines identical" % (identical, n)
    if ties:
        text += " (after sorting %d lines within runs of equal timestamps)" % ties
    if identical == n:
        rep.say(text)
        return
    rep.say(text + "; the others differ (documented reasons, counted per frame or per thread id):")
    rec = records_of()
    by_reason = collections.OrderedDict()
    bad_examples = []
    for a, b, ipl in zip(ours_lines, te_lines, ips_lines):
        if a == b:
            continue
        ha, hb, hi = a.split(" ", 3), b.split(" ", 3), ipl.split(" ", 3)
        if len(ha) < 4 or len(hb) < 4 or ha[0] != hb[0] or ha[2] != hb[2]:
            rep.bad("  sample header differs: nettrace '%s' / TraceEvent '%s'" % (" ".join(ha[:3]), " ".join(hb[:3])))
            continue
        if ha[1] != hb[1]:
            tid = int(ha[1])
            if tid > 0xffffffff and tid & 0xffffffff == int(hb[1]):
                d = by_reason.setdefault("thread-id-32bit", [0, collections.Counter()])
                d[0] += 1
                d[1][(ha[1], hb[1])] += 1
            else:
                rep.bad("  sample thread differs at %s: nettrace %s, TraceEvent %s" % (ha[0], ha[1], hb[1]))
                continue
        fa, fb, fi = ha[3].split(";"), hb[3].split(";"), hi[3].split(";")
        if len(fa) != len(fb):
            rep.bad("  stack depth differs at %s: nettrace %d frames, TraceEvent %d" % (" ".join(ha[:2]), len(fa), len(fb)))
            continue
        last = len(fa) - 1
        for k, (x, y) in enumerate(zip(fa, fb)):
            if x == y:
                continue
            ip = int(fi[k], 16) if k < len(fi) and fi[k].startswith("0x") else None
            reason = classify(x, y, ip, k == last, rec, int(ha[0]))
            if reason is None:
                bad_examples.append((x, y, fi[k] if k < len(fi) else "?"))
                continue
            d = by_reason.setdefault(reason, [0, collections.Counter()])
            d[0] += 1
            d[1][(x, y)] += 1
    for reason, (count, pairs) in by_reason.items():
        rep.reasons.add(reason)
        (x, y), _ = pairs.most_common(1)[0]
        rep.say("    %-17s %6d (%d distinct), e.g. %s -> %s" % (reason, count, len(pairs), x, y))
    if bad_examples:
        c = collections.Counter(bad_examples)
        for (x, y, ip), k in c.most_common(10):
            rep.bad("    frame %s: nettrace %s, TraceEvent %s (%d times)" % (ip, x, y, k))
        if len(c) > 10:
            rep.bad("    ... and %d more distinct undocumented frame differences" % (len(c) - 10))


def compare_file(label, path, nettrace, conformance, tmp):
    rep = FileReport(label)
    rep.say(label)
    ours_json, ours_rc, _ = run([nettrace, "info", "--json", path])
    te_json, te_rc, te_err = run(conformance + ["info", path])
    if te_rc != 0:
        rep.bad("  TraceEvent failed: " + te_err.strip())
        return rep
    ours, theirs = json.loads(ours_json), json.loads(te_json)
    if ours["status"] == "unsupported_version" and theirs["status"] == "ok" and \
            theirs["format_version"] is not None and theirs["format_version"] < 4:
        rep.say("  refused on purpose: NetPerf (format %d) is read by TraceEvent, refused by libnettrace "
                "as unsupported_version (README.md: netperf)" % theirs["format_version"])
        return rep
    ours_s, ours_rc, ours_err = run([nettrace, "samples", path])
    if ours_rc != 0:
        rep.bad("  nettrace samples failed: " + ours_err.strip())
        return rep
    ips_path = os.path.join(tmp, "ips.txt")
    te_s, te_rc, te_err = run(conformance + ["samples", path, "--ips", ips_path])
    if te_rc != 0:
        rep.bad("  TraceEvent samples failed: " + te_err.strip())
        return rep
    with open(ips_path, encoding="utf-8") as f:
        ips = f.read().splitlines()

    ours_lines = ours_s.splitlines()
    compare_counts(rep, ours, theirs, [int(line.split(" ", 2)[1]) for line in ours_lines])

    def records_of():
        out, rc, err = run(conformance + ["records", path])
        if rc != 0:
            rep.bad("  TraceEvent records failed: " + err.strip())
            return None
        return Records([line.split("\t") for line in out.splitlines()])

    compare_samples(rep, ours_lines, te_s.splitlines(), ips, records_of)

    ours_ev, ours_rc, ours_err = run([nettrace, "events", "--json", path])
    te_ev, te_rc, te_err = run(conformance + ["events", path])
    if te_rc != 0:
        rep.bad("  TraceEvent events failed: " + te_err.strip())
        return rep
    pairs, diffs, values = compare_fields.compare(ours_ev, te_ev)
    compare_fields.report(rep, pairs, diffs, values)
    return rep


def self_test():
    """The classifier on made-up records: each rule accepts its case and refuses near misses."""
    rows = [
        ["module", "load", "1", "0xa", "0x1", "C:\\x\\Foo.dll"],
        # kind t start size flags module method-id name
        ["method", "load", "2", "0x1000", "16", "0x8", "0xa", "0x1", "Foo.T.M(int32)"],
        ["method", "load", "3", "0x1010", "16", "0x8", "0xb", "0x2", "Bar.U.N()"],
        ["method", "dcend", "4", "0x2000", "16", "0x0", "0xc", "0x3", "Baz.V.W(class System.String)"],
        ["module", "dcend", "5", "0xc", "0x2", "/x/Baz.dll"],
        ["method", "load", "6", "0x3000", "16", "0x0", "0xa", "0x4", "Foo.R2R.P()"],
        ["method", "load", "7", "0x4000", "16", "0x9", "0xa", "0x5", "dynamicClass.F()"],
        ["method", "unload", "100", "0x4000", "16", "0x9", "0xa", "0x5", "dynamicClass.F()"],
        ["method", "load", "110", "0x4000", "16", "0x9", "0xa", "0x6", "dynamicClass.G()"],
    ]
    rec = Records([r for r in rows])
    checks = [
        (classify("Foo!Foo.T.M", "foo!Foo.T.M", 0x1004, True, rec, 50), "module-name-case"),
        (classify("?!Bar.U.N", "ManagedModule!Bar.U.N", 0x1014, True, rec, 50), "unknown-module"),
        # module record after the method record: TraceLog keeps the case, so a lower-cased name is not explained
        (classify("Baz!Baz.V.W", "baz!Baz.V.W", 0x2004, True, rec, 50), None),
        (classify("Foo!Foo.T.M", "ManagedModule!Foo.T.M", 0x1004, True, rec, 50), None),
        # return address 0x1010 = end of Foo.T.M and start of Bar.U.N; 0x2010 = end with nothing after;
        # 0x1000 = start with nothing before
        (classify("Foo!Foo.T.M", "foo!Bar.U.N", 0x1010, False, rec, 50), "return-address"),
        (classify("Foo!Foo.T.M", "foo!Bar.U.N", 0x1010, True, rec, 50), None),
        (classify("Baz!Baz.V.W", "0x2010", 0x2010, False, rec, 50), "return-address"),
        (classify("0x1000", "foo!Foo.T.M", 0x1000, False, rec, 50), "return-address"),
        (classify("Foo!Foo.T.M", "Foo!Foo.T.X", 0x1004, True, rec, 50), None),
        (classify("Foo!Foo.R2R.P", "0x3004", 0x3004, True, rec, 50), "not-jitted-load"),
        (classify("Foo!Foo.T.M", "0x1004", 0x1004, True, rec, 50), None),
        # F unloaded at 100, G loaded at its address at 110
        (classify("Foo!dynamicClass.G", "foo!dynamicClass.F", 0x4004, True, rec, 120), "address-reuse"),
        (classify("Foo!dynamicClass.G", "foo!dynamicClass.F", 0x4004, True, rec, 50), None),
        (classify("Foo!dynamicClass.F", "foo!dynamicClass.G", 0x4004, True, rec, 120), None),
        (without_arguments("A.B.C(int32,method void *(int32))"), "A.B.C"),
        (without_arguments("A.B.get_Item"), "A.B.get_Item"),
        (tie_normalise(["2 1 M b", "1 1 M z", "1 1 M a"]), ["2 1 M b", "1 1 M a", "1 1 M z"]),
    ]
    failed = [(i, got, want) for i, (got, want) in enumerate(checks) if got != want]
    for i, got, want in failed:
        print("self-test %d: got %r, want %r" % (i, got, want))
    print("compare.py self-test: %d of %d checks passed" % (len(checks) - len(failed), len(checks)))
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nettrace", help="the nettrace tool")
    ap.add_argument("--conformance", help="Conformance.dll (run with dotnet)")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("traces", nargs="*", help="LABEL=PATH or PATH")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.nettrace or not a.conformance or not a.traces:
        ap.print_usage(sys.stderr)
        return 2
    conformance = ["dotnet", a.conformance]
    print("Not observable by TraceEvent (not compared): " +
          "; ".join("%s (%s)" % (k, v) for k, v in NOT_OBSERVABLE.items()))
    total_bad = 0
    summary = []
    seen = set()
    with tempfile.TemporaryDirectory(prefix="nettrace-conformance-") as tmp:
        for t in a.traces:
            label, _, path = t.partition("=") if "=" in t else (t, "", t)
            rep = compare_file(label, path, a.nettrace, conformance, tmp)
            print("\n".join(rep.lines), flush=True)
            total_bad += rep.undocumented
            seen |= rep.reasons
            summary.append((label, rep.undocumented))
    if seen:
        print("\nDocumented reasons seen (tests/conformance/README.md explains who is right):")
        for reasons in (REASONS, compare_fields.REASONS):
            for reason in reasons:
                if reason in seen:
                    print("  %-17s %s" % (reason, reasons[reason]))
    ok = sum(1 for _, b in summary if b == 0)
    print("\nconformance: %d of %d traces agree with TraceEvent up to documented differences; "
          "%d undocumented difference(s)" % (ok, len(summary), total_bad))
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
