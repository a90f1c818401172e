#!/usr/bin/env python3
"""Compare `nettrace heap --json` with `dotnet-gcdump report` (10.0.750501).

dotnet-gcdump report prints, per type, "Object Bytes  Count  Type  [module]".
Its Object Bytes column is not the type's total: it is the size PerfView's
MemoryGraph keeps per type (Graph.TypeInfo.Size), the size of the first
object of that type it stored (dotnet/diagnostics 3c9f99e,
src/Tools/dotnet-gcdump/DotNetHeapDump/Graph.cs, SetNodeTypeAndSize).  So:
counts are compared exactly, a one-object type's bytes exactly, and the
summary's "GC Heap bytes" (MemoryGraph.TotalSize, the true total) against our
total_bytes.

  heap_conformance.py same OURS.json THEIRS.txt
      the same capture (our .nettrace converted by `dotnet-gcdump convert`):
      every type, exactly as above.
  heap_conformance.py stable OURS.json THEIRS.txt TYPE...
      two captures of one process (ours and `dotnet-gcdump collect`): the
      types the workload holds fixed, count and bytes (ours = count x theirs,
      the types being of one size) exactly.
  heap_conformance.py pair OURS.json THEIRS.json TYPE...
      two captures of one process, both read by nettrace heap (the second
      from dotnet-gcdump's .gcdump): the types the workload holds fixed,
      count, shallow and retained bytes exactly (no noise: the workload
      holds them still; the types the runtime allocates meanwhile, strings,
      EventPipe providers, are not compared).
"""
import json
import re
import sys


def report(path):
    total, rows = None, {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"^\s*([\d,]+)\s+GC Heap bytes", line)
        if m:
            total = int(m.group(1).replace(",", ""))
            continue
        m = re.match(r"^\s*([\d,]+)  \s*([\d,]+)  (.*?)(?:  \[(.*)\])?$", line.rstrip("\n"))
        if not m or "GC Heap" in line:
            continue
        module = m.group(4) or ""
        if re.fullmatch(r"Module\(0x[0-9a-f]+\)", module):
            module = "?"  # dotnet-gcdump did not take the module record: compare by name alone
        key = (m.group(3), module)
        if key in rows:
            raise SystemExit(f"dotnet-gcdump report lists {key} twice")
        rows[key] = (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
    if total is None:
        raise SystemExit(f"{path}: no 'GC Heap bytes' line: not a dotnet-gcdump report")
    return total, rows


def ours(path):
    d = json.load(open(path, encoding="utf-8"))
    if not d["complete"]:
        raise SystemExit(f"{path}: the snapshot is incomplete")
    return d, {(t["type"], t["module"]): t for t in d["types"]}


def same(ours_path, theirs_path):
    d, mine = ours(ours_path)
    total, theirs = report(theirs_path)
    fails = []
    if total != d["total_bytes"]:
        fails.append(f"GC Heap bytes {total}, ours {d['total_bytes']}")
    by_name = {name: t for (name, _), t in mine.items()}
    for key, (first, count) in theirs.items():
        t = by_name.get(key[0]) if key[1] == "?" else mine.get(key)
        if t is None:
            fails.append(f"{key}: in the report only")
            continue
        if t["count"] != count:
            fails.append(f"{key}: count {count}, ours {t['count']}")
        if count == 1 and t["shallow_bytes"] != first:
            fails.append(f"{key}: one object of {first} bytes, ours {t['shallow_bytes']}")
        if first > t["shallow_bytes"]:
            fails.append(f"{key}: its first object ({first} bytes) is more than our total {t['shallow_bytes']}")
    their_names = {name for (name, _) in theirs}
    for key in mine:
        if key not in theirs and key[0] not in their_names:
            fails.append(f"{key}: in ours only")
    return fails, f"{len(theirs)} types, {total} bytes"


def stable(ours_path, theirs_path, names):
    _, mine = ours(ours_path)
    _, theirs = report(theirs_path)
    by_name = {}
    for (name, _), row in theirs.items():
        by_name[name] = row
    mine_by_name = {name: t for (name, _), t in mine.items()}
    fails = []
    for name in names:
        if name not in by_name or name not in mine_by_name:
            fails.append(f"{name}: missing ({'report' if name not in by_name else 'ours'})")
            continue
        first, count = by_name[name]
        t = mine_by_name[name]
        if t["count"] != count or t["shallow_bytes"] != first * count:
            fails.append(f"{name}: report {count} x {first} bytes, ours {t['count']} objects, {t['shallow_bytes']} bytes")
    return fails, f"{len(names)} stable types"


def pair(ours_path, theirs_path, names):
    """Two `nettrace heap --json` reports (our .nettrace capture, dotnet-gcdump's .gcdump of the same
    process): the workload's types agree exactly in count, shallow and retained bytes."""
    _, mine = ours(ours_path)
    _, theirs = ours(theirs_path)
    a = {name: t for (name, _), t in mine.items()}
    b = {name: t for (name, _), t in theirs.items()}
    fails = []
    for name in names:
        if name not in a or name not in b:
            fails.append(f"{name}: missing ({'ours' if name not in a else 'the .gcdump'})")
            continue
        for k in ("count", "shallow_bytes", "retained_bytes"):
            if a[name][k] != b[name][k]:
                fails.append(f"{name}: {k} {a[name][k]} (.nettrace), {b[name][k]} (.gcdump)")
    return fails, f"{len(names)} stable types, count, shallow and retained bytes"


def main(argv):
    if len(argv) >= 4 and argv[1] == "same":
        fails, what = same(argv[2], argv[3])
    elif len(argv) >= 5 and argv[1] == "stable":
        fails, what = stable(argv[2], argv[3], argv[4:])
    elif len(argv) >= 5 and argv[1] == "pair":
        fails, what = pair(argv[2], argv[3], argv[4:])
    else:
        raise SystemExit(__doc__)
    for f in fails:
        print("FAIL:", f)
    print(("ok: " if not fails else "differences: ") + what)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
