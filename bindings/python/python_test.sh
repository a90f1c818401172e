#!/bin/sh
# make check: the Python module's tests (unittest) on the library built for
# the bindings (bindings.mk), the corpus traces and a real .NET process (the
# LiveTarget workload), and the README's Python example as written.
set -u
. "$top_srcdir/bindings/env.sh"
PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "SKIP: $PYTHON is not installed"
    exit 77
fi
nt_bind_live_target || exit 1
NETTRACE_ABI_LAYOUT="$top_builddir/bindings/python/abi_layout"
export NETTRACE_ABI_LAYOUT
"$PYTHON" -m unittest discover -v -s "$top_srcdir/bindings/python/tests" -t "$top_srcdir/bindings/python" || exit 1
sh "$top_srcdir/bindings/readme_example.sh" python || exit 1

# pip install ./bindings/python works offline (build_backend.py, standard
# library only); the installed copy is the one imported.
site="$top_builddir/bindings/python-work/site"
rm -rf "$site"
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "pip install check skipped: $PYTHON has no pip module"
    exit 0
fi
"$PYTHON" -m pip install -q --no-cache-dir --no-index --disable-pip-version-check --target "$site" \
    "$top_srcdir/bindings/python" 2>&1 | grep -v 'Running pip as the .root. user' || true
PYTHONPATH="$site" "$PYTHON" -c '
import os, sys, nettrace
assert nettrace.__file__.startswith(sys.argv[1]), nettrace.__file__
assert len(nettrace.open(os.path.join(sys.argv[2], "corpus", "call-tree.nettrace"))) > 0
print("ok: pip installed the module into", sys.argv[1])' "$site" "$top_srcdir" || exit 1
