#!/usr/bin/env python3
"""Write the gcdump harness's seeds (corpus/fuzz/gcdump/): small .gcdump files
in the layout doc/gcdump-format.md gives, each a heap shape the reader must
handle: roots of every pseudo-node kind, a cycle and a self reference, an
explicit size, a size class, an undefined node, a thread static.

    tools/gcdump_seeds.py DIR
"""
import os
import struct
import sys


def i32(v):
    return struct.pack("<i", v)


def i64(v):
    return struct.pack("<Q", v)


def string(s):
    if s is None:
        return i32(-1)
    b = s.encode("utf-8")
    return i32(len(s)) + b  # the seeds' names are ASCII: one byte per UTF-16 unit


def cint(v):
    """PerfView's compressed Int32: 7-bit groups, most significant first."""
    groups = 1
    while groups < 5:
        shift = 32 - 7 * groups
        if ((v << shift) & 0xFFFFFFFF) >> shift == v & (0xFFFFFFFF >> shift) and \
                (-(1 << (7 * groups - 1)) <= v < (1 << (7 * groups - 1))):
            break
        groups += 1
    out = bytearray()
    for g in range(groups - 1, 0, -1):
        out.append(((v >> (7 * g)) & 0x7F) | 0x80)
    out.append(v & 0x7F)
    return bytes(out)


def type_header(name, version, min_reader):
    return b"\x04\x04\x01" + i32(version) + i32(min_reader) + string(name) + b"\x06"


def gcdump(types, nodes, root=0):
    """types: [(name, size, module)]; nodes: [(type, size or None, address, [children])] (None: undefined)."""
    out = bytearray(string("!FastSerialization.1"))
    out += type_header("GCHeapDump", 10, 8) + type_header("Graphs.MemoryGraph", 1, 0)
    out += i64(sum(n[1] or types[n[0]][1] for n in nodes if n)) + i32(root) + i32(len(types))
    for name, size, module in types:
        out += string(name) + i32(size) + string(module)
    blob = bytearray(cint(0) + cint(0))  # the UNDEFINED node at label 0
    labels = []
    for i, n in enumerate(nodes):
        if n is None:
            labels.append(0)
            continue
        t, size, _, children = n
        labels.append(len(blob))
        blob += cint(t * 2 + (1 if size is not None else 0))
        if size is not None:
            blob += cint(size)
        blob += cint(len(children))
        for c in children:
            blob += cint(c - i)
    out += i32(len(nodes)) + b"".join(i32(x) for x in labels)
    out += i32(len(blob)) + blob
    out += i32(len(nodes)) + b"".join(i64(n[2] if n else 0x9000 + i) for i, n in enumerate(nodes))
    out += b"\x08\x01\x06"  # tagged Is64Bit, the graph's end
    out += b"\x01" + struct.pack("<ff", 1.0, 1.0) + b"\x01"  # Is64Bit, multipliers, no JSHeapInfo
    return bytes(out)


MOD = "/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12/System.Private.CoreLib.dll"
PSEUDO = ["[.NET Roots]", "[static vars]", "[static var App.Holder.Items]", "[local vars]", "[other roots]",
          "[strong Handles]", "[pinning Handles]", "[finalizer Handles]", "[Dependent Handles]",
          "[thread static vars]", "[static var App.Holder.Tls]", "[COM/WinRT Objects]", "[other Handles]"]


def types_with(extra):
    return [("UNDEFINED", 0, None)] + [(p, 0, None) for p in PSEUDO] + extra


def P(name):
    """The type index of a pseudo-node's type."""
    return PSEUDO.index(name) + 1


def seeds():
    base = len(PSEUDO) + 1
    t = types_with([("App.Node", 24, "/app/App.dll"), ("System.Byte[] (Bytes > 10K)", 20024, MOD),
                    ("System.String", 30, MOD), ("App.Node[]", 56, "/app/App.dll")])
    node, big, text, arr = base, base + 1, base + 2, base + 3
    # 0-6 pseudo-nodes; 7 Node[] -> 8, 9; 8 Node -> 9 (a cycle) and itself; 9 Node -> 8 and big;
    # 11 a string of an explicit size on the stack; 12 a string held by a strong handle, 13 a Node only
    # by a dependent handle
    shape = [(P("[.NET Roots]"), None, 0, [1, 3, 4]), (P("[static vars]"), None, 0, [2]),
             (P("[static var App.Holder.Items]"), None, 0, [7]), (P("[local vars]"), None, 0, [11]),
             (P("[other roots]"), None, 0, [5, 6]), (P("[strong Handles]"), None, 0, [12]),
             (P("[Dependent Handles]"), None, 0, [13]),
             (arr, None, 0x1000, [8, 9]), (node, None, 0x1040, [9, 8]), (node, None, 0x1058, [8, 10]),
             (big, None, 0x2000, []), (text, 46, 0x7000, []), (text, None, 0x7100, []), (node, None, 0x7200, [])]
    yield "shape", gcdump(t, shape)
    # a thread static; a node never defined, referenced by an object and by a root
    tls = [(P("[.NET Roots]"), None, 0, [1, 3]), (P("[thread static vars]"), None, 0, [2]),
           (P("[static var App.Holder.Tls]"), None, 0, [4, 6]), (P("[local vars]"), None, 0, [5]),
           (node, None, 0x3000, [6, 5]), (node, None, 0x3018, []), None]
    yield "undefined-and-tls", gcdump(t, tls)
    # a list of 40 nodes held by a finalizer handle
    lst = [(P("[.NET Roots]"), None, 0, [1]), (P("[finalizer Handles]"), None, 0, [2])] + \
        [(node, None, 0x5000 + 24 * k, [3 + k] if k < 39 else []) for k in range(40)]
    yield "list", gcdump(t, lst)


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    os.makedirs(argv[1], exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(data)
        print(f"wrote {name} ({len(data)} bytes)")


if __name__ == "__main__":
    main(sys.argv)
