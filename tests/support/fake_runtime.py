#!/usr/bin/env python3
"""A fake .NET diagnostics endpoint for the hostile-neighbour tests.

fake_runtime.py self MODE TEXT READY   listen under this process's own endpoint name
fake_runtime.py plant PID MODE TEXT READY   listen under process PID's endpoint name (an impostor)

The socket goes in $TMPDIR (else /tmp), named dotnet-diagnostic-PID-KEY-socket
as a runtime names it (KEY: field 22 of /proc/PID/stat).  MODE "answer"
replies to every command with a ProcessInfo2 payload whose strings are all
TEXT (Python escapes such as \\x1b are decoded); "silent" reads and never
answers.  READY is a file written once the socket listens.
"""
import os
import select
import socket
import struct
import sys


def start_key(pid):
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return stat[stat.rindex(")") + 2:].split()[19]


def ipc_string(text):
    units = text.encode("utf-16-le") + b"\0\0"
    return struct.pack("<I", len(units) // 2) + units


def process_info2(text):
    payload = struct.pack("<Q", os.getpid()) + bytes(16)
    payload += b"".join(ipc_string(text) for _ in range(5))
    header = b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(payload), 0xFF, 0, 0)
    return header + payload


def main():
    if sys.argv[1] == "self":
        pid, mode, text, ready = os.getpid(), sys.argv[2], sys.argv[3], sys.argv[4]
    else:
        pid, mode, text, ready = int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
    text = text.encode("ascii").decode("unicode_escape")
    tmp = os.environ.get("TMPDIR") or "/tmp"
    path = f"{tmp.rstrip('/')}/dotnet-diagnostic-{pid}-{start_key(pid)}-socket"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(64)
    with open(ready, "w") as f:
        f.write(path + "\n")
    conns = []
    while True:
        readable, _, _ = select.select([srv] + conns, [], [])
        for s in readable:
            if s is srv:
                conns.append(srv.accept()[0])
                continue
            data = s.recv(65536)
            if not data:
                conns.remove(s)
                s.close()
            elif mode == "answer":
                s.sendall(process_info2(text))


if __name__ == "__main__":
    main()
