#!/usr/bin/env python3
"""Generate src/parse/clr_event_table.c, the built-in runtime event table, from the
runtime's event manifest (ClrEtwAll.man, MIT, in the dotnet runtime sources).

    tools/gen_clr_events.py MANIFEST [MANIFEST...] [-o src/parse/clr_event_table.c] [--check]

The manifest is not kept in this repository; fetch a copy (see SOURCE below
for the ones the committed table came from) and run this script on it.  With
several manifests, a later one's event replaces an earlier one's of the same
provider, id and version, so a newer manifest alone gives a superset.  Only
facts pass into the table: provider names, event ids, versions, symbols,
task and opcode names, and each template's field names and types, in this
project's own layout (clr_event_table.h).  --check compares the output with
the committed file instead of writing it (exit 1 when they differ).

Two providers are not in the manifest: the sample profiler and the
EventPipe provider, whose single events the runtime writes from its own C
sources; their layouts are listed in EXTRA below.
"""
import argparse
import hashlib
import re
import sys
import xml.etree.ElementTree as ET

# The manifests the committed table was generated from, in order: the last
# dotnet/coreclr copy, then the events and templates dotnet/runtime added
# since (an excerpt of the runtime's copy at the commit named, with every
# runtime and rundown event that the coreclr copy lacks; the private provider
# is as in the coreclr copy).
SOURCE = ("dotnet/coreclr src/vm/ClrEtwAll.man at 92a61c430e2b433f2b42190cb8ee5ee9170ad365 "
          "+ the runtime and rundown events added by dotnet/runtime src/coreclr/vm/ClrEtwAll.man "
          "at 68813511f6a4855bd2f2b1605ae19418680ae7de")

NS = "{http://schemas.microsoft.com/win/2004/08/events}"

# Provider order fixes the table's sort order; unknown providers are appended.
PROVIDERS = [
    "Microsoft-Windows-DotNETRuntime",
    "Microsoft-Windows-DotNETRuntimeRundown",
    "Microsoft-Windows-DotNETRuntimeStress",
    "Microsoft-Windows-DotNETRuntimePrivate",
    "Microsoft-DotNETCore-EventPipe",
    "Microsoft-DotNETCore-SampleProfiler",
]

# (provider, id, version, symbol, task, opcode, [(field, inType)])
EXTRA = [
    ("Microsoft-DotNETCore-SampleProfiler", 0, 0, "ThreadSample", "", "", [("Type", "win:UInt32")]),
    ("Microsoft-DotNETCore-EventPipe", 1, 0, "ProcessInfo", "", "", [("CommandLine", "win:UnicodeString")]),
]

TYPES = {
    "win:Boolean": "NT_TYPE_BOOLEAN32",
    "win:Int8": "NT_TYPE_SBYTE",
    "win:UInt8": "NT_TYPE_BYTE",
    "win:Int16": "NT_TYPE_INT16",
    "win:UInt16": "NT_TYPE_UINT16",
    "win:Int32": "NT_TYPE_INT32",
    "win:UInt32": "NT_TYPE_UINT32",
    "win:HexInt32": "NT_TYPE_UINT32",
    "win:Int64": "NT_TYPE_INT64",
    "win:UInt64": "NT_TYPE_UINT64",
    "win:HexInt64": "NT_TYPE_UINT64",
    "win:Float": "NT_TYPE_SINGLE",
    "win:Double": "NT_TYPE_DOUBLE",
    "win:GUID": "NT_TYPE_GUID",
    "win:UnicodeString": "NT_TYPE_STRING",
    "win:AnsiString": "NT_TYPE_ANSI_STRING",
    "win:Pointer": "NT_TYPE_POINTER",
    "win:Binary": "NT_TYPE_BINARY",
}

MAX_REF = 32  # PS_SCHEMA_MAX_REF


def opcode_name(op):
    return op[4:] if op.startswith("win:") else op


def template_fields(tmpl, where):
    """Pre-order (name, type, elem, depth, ref, fixed) rows of a template."""
    rows = []

    def count_of(attr, siblings, what):
        if attr is None:
            return 0, 0
        if re.fullmatch(r"[0-9]+", attr):
            return 0, int(attr)
        if attr not in siblings:
            sys.exit(f"{where}: {what} refers to {attr!r}, not an earlier field")
        idx = siblings[attr]
        if idx >= MAX_REF:
            sys.exit(f"{where}: {what} refers to field {idx}, beyond PS_SCHEMA_MAX_REF")
        return idx + 1, 0

    def walk(elem, depth, siblings):
        for child in elem:
            tag = child.tag.replace(NS, "")
            if tag == "data":
                name, t = child.get("name"), child.get("inType")
                if t not in TYPES:
                    sys.exit(f"{where}: field {name} has unknown type {t}")
                count = child.get("count")
                length = child.get("length")
                if count is not None:
                    ref, fixed = count_of(count, siblings, name)
                    rows.append((name, "NT_TYPE_ARRAY", TYPES[t], depth, ref, fixed))
                elif t == "win:Binary":
                    ref, fixed = count_of(length, siblings, name)
                    rows.append((name, TYPES[t], "0", depth, ref, fixed))
                else:
                    rows.append((name, TYPES[t], "0", depth, 0, 0))
                siblings[name] = len(rows) - 1
            elif tag == "struct":
                name = child.get("name")
                count = child.get("count")
                if count is not None:
                    ref, fixed = count_of(count, siblings, name)
                    rows.append((name, "NT_TYPE_ARRAY", "NT_TYPE_OBJECT", depth, ref, fixed))
                else:
                    rows.append((name, "NT_TYPE_OBJECT", "0", depth, 0, 0))
                walk(child, depth + 1, {})
    walk(tmpl, 0, {})
    return rows


def load(paths):
    by_key = {}
    for path in paths:
        for e in load_one(path):
            by_key[(e[0], e[1], e[2])] = e
    events = list(by_key.values())
    for p, i, v, sym, task, op, fields in EXTRA:
        rows = [(n, TYPES[t], "0", 0, 0, 0) for n, t in fields]
        events.append((p, i, v, sym, task, op, rows))
    return events


def load_one(path):
    root = ET.parse(path).getroot()
    events = []  # (provider, id, version, symbol, task, opcode, rows)
    for prov in root.iter(NS + "provider"):
        pname = prov.get("name")
        templates = {t.get("tid"): t for t in prov.iter(NS + "template")}
        for ev in prov.iter(NS + "event"):
            tid = ev.get("template")
            where = f"{pname} event {ev.get('value')} v{ev.get('version', '0')}"
            rows = template_fields(templates[tid], where) if tid else []
            events.append((pname, int(ev.get("value")), int(ev.get("version", "0")), ev.get("symbol"),
                           ev.get("task", ""), opcode_name(ev.get("opcode", "")), rows))
    return events


def c_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(events, manifest_shas):
    provs = list(PROVIDERS)
    for e in events:
        if e[0] not in provs:
            provs.append(e[0])
    events.sort(key=lambda e: (provs.index(e[0]), e[1], e[2]))
    seen = set()
    for e in events:
        key = (e[0], e[1], e[2])
        if key in seen:
            sys.exit(f"{key} defined twice")
        seen.add(key)
    # identical field lists are stored once
    layouts, layout_at = [], {}
    for e in events:
        key = tuple(e[6])
        if key and key not in layout_at:
            layout_at[key] = sum(len(l) for l in layouts)
            layouts.append(key)
    out = []
    w = out.append
    w("/* The runtime event table: GENERATED by tools/gen_clr_events.py, do not edit.")
    w(" * Source: " + SOURCE)
    for sha in manifest_shas:
        w(" * manifest sha256 " + sha)
    w(" * plus the sample profiler and EventPipe provider events listed in the")
    w(" * generator.  Facts only: names, ids, versions and field layouts (see")
    w(" * clr_event_table.h). */")
    w('#include "parse/clr_event_table.h"')
    w("")
    w("const char ps_schema_source[] = " + c_str(SOURCE) + ";")
    w("")
    w("const char *const ps_schema_providers[] = {")
    for p in provs:
        w("    " + c_str(p) + ",")
    w("};")
    w("const size_t ps_schema_provider_count = %d;" % len(provs))
    w("")
    w("#define A NT_TYPE_ARRAY")
    w("#define O NT_TYPE_OBJECT")
    w("static const ps_schema_field F[] = {")
    for l in layouts:
        cells = []
        for name, t, el, depth, ref, fixed in l:
            el = {"NT_TYPE_OBJECT": "O", "0": "0"}.get(el, el)
            t = {"NT_TYPE_ARRAY": "A", "NT_TYPE_OBJECT": "O"}.get(t, t)
            cells.append("{%s,%s,%s,%d,%d,%d}" % (c_str(name), t, el, depth, ref, fixed))
        w("    " + ", ".join(cells) + ",")
    w("};")
    w("#undef A")
    w("#undef O")
    w("")
    w("const struct nt_schema ps_schemas[] = {")
    for p, i, v, sym, task, op, rows in events:
        fields = "F + %d" % layout_at[tuple(rows)] if rows else "0"
        w("    {%s, %s, %s, %d, %d, %d, %d, %s}," % (c_str(sym), c_str(task), c_str(op), provs.index(p), i, v,
                                                   len(rows), fields))
    w("};")
    w("const size_t ps_schema_count = %d;" % len(events))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", nargs="+")
    ap.add_argument("-o", "--output", default="src/parse/clr_event_table.c")
    ap.add_argument("--check", action="store_true", help="compare with OUTPUT instead of writing it")
    a = ap.parse_args()
    shas = []
    for m in a.manifest:
        with open(m, "rb") as f:
            shas.append(hashlib.sha256(f.read()).hexdigest())
    text = render(load(a.manifest), shas)
    if a.check:
        with open(a.output) as f:
            same = f.read() == text
        print(("%s matches %s" if same else "%s differs from what %s generates") % (a.output, " ".join(a.manifest)))
        return 0 if same else 1
    with open(a.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
