"""Event names and payload fields: `nettrace events --json` against
`Conformance events` (TraceEvent's name, PayloadNames and PayloadValue(i)).

Events are paired by (time_ns, low 32 bits of the thread id, provider, event
id), in order within equal keys.  For each pair the field names and values
are compared after the normalisation README.md describes; every difference
is counted by (provider, event, kind) and must match a DOCUMENTED rule, or
the run fails.
"""
import fnmatch
import json
import math

RUNTIME_PROVIDERS = ("Microsoft-Windows-DotNETRuntime", "Microsoft-Windows-DotNETRuntimeRundown",
                     "Microsoft-Windows-DotNETRuntimePrivate", "Microsoft-Windows-DotNETRuntimeStress",
                     "Microsoft-DotNETCore-EventPipe", "Microsoft-DotNETCore-SampleProfiler")

# (kind pattern, provider pattern, our event name pattern, reason).  Kinds:
# name (event names differ), name-opcode (TraceEvent's name is ours plus
# "/<opcode>"), order (same fields, another order), te-only:F (a field
# TraceEvent adds), ours-only:F (a payload field TraceEvent does not list),
# value:F (values differ), signed:F (the same bits, TraceEvent's field is
# signed), version, unpaired-ours / unpaired-te (no event to pair with).
# README.md says who is right for each reason.
RT = "Microsoft-Windows-DotNETRuntime*"
DOCUMENTED = [
    ("name", RT, "*", "runtime-names"),
    ("name", "Microsoft-DotNETCore-*", "*", "runtime-names"),
    ("name-opcode", "*", "*", "opcode-suffix"),
    ("te-only:flag", "Workloads-EventFields", "Reals", "bool8-as-bool32"),
    ("order", RT, "Assembly*_V1", "te-order"),
    ("order", RT, "GCStart_V2", "te-order"),
    ("signed:*", RT, "*", "te-signed"),
    ("te-only:ModuleILFileName", RT, "Module*_V2", "te-derived"),
    ("te-only:OptimizationTier", RT, "Method*Verbose_V[12]", "te-derived"),
    ("value:MethodFlags", RT, "Method*Verbose_V[12]", "te-derived"),
    ("te-only:TotalHeapSize", RT, "GCHeapStats_V[12]", "te-derived"),
    ("te-only:TotalPromoted", RT, "GCHeapStats_V[12]", "te-derived"),
    ("te-only:Depth", RT, "GCHeapStats_V[12]", "te-derived"),
    ("te-only:TypeName", RT, "FinalizeObject", "te-derived"),
    ("te-only:ConcurrentCompactMechanisms", RT, "GCPerHeapHistory_V3", "te-derived"),
    ("value:CompactMechanisms", RT, "GCPerHeapHistory_V3", "te-derived"),
    ("value:ExpandMechanisms", RT, "GCPerHeapHistory_V3", "te-derived"),
    ("te-only:ReJITID", RT, "Method*Verbose_V1", "te-absent-default"),
    ("te-only:ObjectSize", RT, "GCAllocationTick_V3", "te-absent-default"),
    ("te-only:GenerationSize4", RT, "GCHeapStats_V1", "te-absent-default"),
    ("te-only:TotalPromotedSize4", RT, "GCHeapStats_V1", "te-absent-default"),
    ("te-only:CondemnReasons[01]", RT, "GCGlobalHeapHistory_V2", "te-absent-default"),
    ("te-only:Count", RT, "GCGlobalHeapHistory_V2", "te-absent-default"),
    ("te-only:MemoryPressure", RT, "GCPerHeapHistory_V3", "te-absent-default"),
    ("te-only:LockID", RT, "ContentionStart_V1", "te-absent-default"),
    ("te-only:AssociatedObjectID", RT, "ContentionStart_V1", "te-absent-default"),
    ("te-only:LockOwnerThreadID", RT, "ContentionStart_V1", "te-absent-default"),
    ("ours-only:Reserved1", RT, "*Module*", "te-omits"),
    ("ours-only:ClrInstanceID", RT, "Module*_V2", "te-omits"),
    ("ours-only:*", RT, "IncreaseMemoryPressure", "te-omits"),
    ("ours-only:*", RT, "DecreaseMemoryPressure", "te-omits"),
    ("ours-only:ILVersionID", RT, "Method*ILToNativeMap_V1", "te-omits"),
    ("ours-only:ILOffsets", RT, "Method*ILToNativeMap*", "te-omits-arrays"),
    ("ours-only:NativeOffsets", RT, "Method*ILToNativeMap*", "te-omits-arrays"),
    ("ours-only:Values", RT, "*", "te-omits-arrays"),
    ("te-only:TypeID_0", RT, "BulkType", "te-omits-arrays"),
    ("te-only:TypeName_0", RT, "BulkType", "te-omits-arrays"),
    ("ours-only:Bytes", RT, "GCMarkWithType", "te-renamed"),
    ("te-only:Promoted", RT, "GCMarkWithType", "te-renamed"),
    ("value:*", RT, "MethodDetails", "te-misread"),
    ("unpaired-ours", RT, "GCDynamicEvent", "te-renumbered"),
    ("unpaired-te", RT, "GC/CommittedUsage", "te-renumbered"),
]


def reason_for(kind, provider, name):
    for k, p, n, why in DOCUMENTED:
        if fnmatch.fnmatchcase(kind, k) and fnmatch.fnmatchcase(provider, p) and fnmatch.fnmatchcase(name, n):
            return why
    return None


def norm(v):
    """Comparable form of a JSON value from either side."""
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, (int, float)):
        f = float(v)
        return int(v) if isinstance(v, int) else (int(f) if f.is_integer() and abs(f) < 2**63 else f)
    if isinstance(v, str):
        return v.lower() if len(v) == 36 and v.count("-") == 4 else v
    if isinstance(v, list):
        return [norm(x) for x in v]
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    return v


def chars_to_string(v):
    """An array of UTF-16 code units, as TraceEvent shows a char[]: a string."""
    if isinstance(v, list) and v and all(isinstance(x, int) and 0 <= x < 0x10000 for x in v):
        try:
            return b"".join(x.to_bytes(2, "little") for x in v).decode("utf-16-le", errors="replace")
        except ValueError:
            return None
    return None


def same(ours, theirs):
    a, b = norm(ours), norm(theirs)
    if a == b:
        return True
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=0, abs_tol=0)
    if isinstance(b, str) and chars_to_string(ours) == theirs:
        return True
    if isinstance(b, str) and len(b) == 1 and isinstance(a, int) and a == ord(b):
        return True  # a Char: TraceEvent's char, our UTF-16 code unit
    if isinstance(b, str) and b.startswith("0x") and isinstance(a, list) and \
            all(isinstance(x, int) and 0 <= x < 256 for x in a):
        return "0x" + bytes(a).hex() == b  # a byte array: TraceEvent's byte[], our array of Byte
    return False


def load_lines(text):
    return [json.loads(line) for line in text.split("\n") if line]


def compare(ours_text, te_text):
    """Returns (pairs compared, {(provider, name, kind): [count, example]},
    (field values compared, of them equal))."""
    ours = load_lines(ours_text)
    theirs = load_lines(te_text)
    queues = {}
    for t in theirs:
        queues.setdefault((t["time_ns"], t["thread"], t["provider"], t["event_id"]), []).append(t)
    diffs = {}

    def note(o, kind, example):
        key = (o["provider"], o["name"], kind)
        d = diffs.setdefault(key, [0, example])
        d[0] += 1

    pairs = compared = equal = 0
    for o in ours:
        q = queues.get((o["time_ns"], o["thread"] & 0xFFFFFFFF, o["provider"], o["event_id"]))
        if not q:
            note(o, "unpaired-ours", f"t={o['time_ns']}")
            continue
        t = q.pop(0)
        pairs += 1
        if o["version"] != t["version"]:
            note(o, "version", f"{o['version']} vs {t['version']}")
        if o["name"] != t["event_name"]:
            op = t["opcode"] or ""
            base = o["name"][:-len(op)] if op and o["name"].endswith(op) else o["name"]
            opcode_suffix = o["provider"] not in RUNTIME_PROVIDERS and \
                (t["event_name"].startswith(o["name"] + "/") or t["event_name"] == base + "/" + op)
            note(o, "name-opcode" if opcode_suffix else "name", f"{o['name']} vs {t['event_name']}")
        our_names = list(o["fields"].keys())
        te_names = t["names"]
        te_vals = dict(zip(te_names, t["values"]))
        if our_names != te_names and sorted(our_names) == sorted(te_names):
            note(o, "order", f"{our_names} vs {te_names}")
        for n in te_names:
            if n not in o["fields"]:
                note(o, "te-only:" + n, repr(te_vals[n])[:80])
        for n in our_names:
            if n not in te_vals:
                note(o, "ours-only:" + n, repr(o["fields"][n])[:80])
                continue
            compared += 1
            if same(o["fields"][n], te_vals[n]):
                equal += 1
            else:
                a, b = o["fields"][n], te_vals[n]
                signed = isinstance(a, int) and isinstance(b, int) and b < 0 <= a and (a - b) in (2**8, 2**16, 2**32, 2**64)
                note(o, ("signed:" if signed else "value:") + n, f"{a!r:.60} vs {b!r:.60}")
    for q in queues.values():
        for t in q:
            key = (t["provider"], t["event_name"], "unpaired-te")
            d = diffs.setdefault(key, [0, f"t={t['time_ns']} id={t['event_id']}"])
            d[0] += 1
    return pairs, diffs, (compared, equal)


def report(rep, pairs, diffs, values):
    """Adds the comparison of one trace to rep (a FileReport): the count of
    events compared, the documented differences counted by reason, and every
    undocumented one as a failure."""
    by_reason = {}
    for (prov, name, kind), (count, example) in sorted(diffs.items()):
        why = reason_for(kind, prov, name)
        if why is None:
            rep.bad(f"    {prov} {name} {kind}: {count} (e.g. {example})")
            continue
        rep.reasons.add(why)
        r = by_reason.setdefault(why, [0, []])
        r[0] += count
        r[1].append(f"{name} {kind}")
    rep.say(f"  fields: {pairs} events compared (name, PayloadNames, PayloadValue); "
            f"{values[1]} of {values[0]} values of fields both list are equal")
    for why, (count, where) in sorted(by_reason.items()):
        more = f" and {len(where) - 3} more" if len(where) > 3 else ""
        rep.say(f"    {why}: {count} in {len(where)} event/field(s): {'; '.join(where[:3])}{more}")

REASONS = {
    "runtime-names": "runtime events: TraceEvent's names are its parsers' Task/Opcode (GC/Start), ours the manifest symbols",
    "opcode-suffix": "EventSource events with an opcode: TraceEvent names them <task>/<opcode>, we give the metadata's name",
    "bool8-as-bool32": "a self-describing EventSource writes a bool in 1 byte that the metadata calls Boolean (4): "
                       "we stop with an error at that field, TraceEvent reads past it",
    "te-order": "TraceEvent's class lists the payload's fields in another order",
    "te-signed": "TraceEvent declares a manifest-unsigned field signed: same bits",
    "te-derived": "TraceEvent adds or rewrites a field computed from others (not in the payload)",
    "te-absent-default": "TraceEvent lists a newer version's field with a default value for an older payload",
    "te-omits": "TraceEvent does not list a payload field",
    "te-omits-arrays": "TraceEvent does not list a payload's arrays (or only their first element)",
    "te-renamed": "TraceEvent names a payload field other than the manifest",
    "te-misread": "TraceEvent's template reads the payload at other offsets than the manifest's layout",
    "te-renumbered": "TraceEvent reports runtime event 39 (GCDynamicEvent) as GC/CommittedUsage, id 65524",
}
