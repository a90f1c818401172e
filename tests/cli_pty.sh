#!/bin/sh
# The tool on a pseudo-terminal: progress and collect with Ctrl-C (tests/cli_pty.py).
if ! command -v python3 >/dev/null 2>&1; then
    echo "SKIP: python3 is absent, the pseudo-terminal test cannot run"
    exit 77
fi
exec python3 "${top_srcdir:-.}/tests/cli_pty.py"
