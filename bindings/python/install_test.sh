#!/bin/sh
# make check: the Python module as a user installs it.  pip install
# ./bindings/python works offline (build_backend.py, standard library only);
# the installed module finds the library with nothing set but what pkg-config
# reads, runs the README's example, says what to do when no library is found,
# and a wheel with the library bundled (make python-wheel) needs nothing at all.
set -u
. "$top_srcdir/bindings/env.sh"
PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
    echo "SKIP: $PYTHON is not installed"
    exit 77
fi
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "SKIP: $PYTHON has no pip module"
    exit 77
fi
work="$top_builddir/bindings/python-work/install"
rm -rf "$work"
mkdir -p "$work" || exit 1
pip_quiet() {
    "$PYTHON" -m pip "$@" -q --no-cache-dir --no-index --disable-pip-version-check 2>&1 |
        grep -v 'Running pip as the .root. user'
}
# A user's environment: none of the test settings that point at the build tree.
as_user() {
    env -u NETTRACE_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$1" PKG_CONFIG_PATH="$2" PKG_CONFIG_LIBDIR="$2" \
        "$PYTHON" -c "$3" "$top_srcdir" "${4:-}"
}
fail() { echo "FAIL: $*"; exit 1; }

# 1. pip install, then the library through pkg-config (the build tree's nettrace.pc).
pip_quiet install --target "$work/site" "$top_srcdir/bindings/python"
as_user "$work/site" "$nt_bind_pcdir" '
import os, sys, nettrace
assert nettrace.__file__.startswith(os.environ["PYTHONPATH"]), nettrace.__file__
assert os.path.dirname(nettrace.library_path()) == sys.argv[2], (nettrace.library_path(), sys.argv[2])
assert len(nettrace.open(os.path.join(sys.argv[1], "corpus", "call-tree.nettrace"))) > 0
print("ok: the pip-installed module found", nettrace.library_path(), "through pkg-config")' "$nt_bind_libdir" ||
    fail "the pip-installed module did not find the library through pkg-config"
# ... and runs the README's example as written.
env -u NETTRACE_LIBRARY PYTHONPATH="$work/site" sh "$top_srcdir/bindings/readme_example.sh" python ||
    fail "the README's Python example with the pip-installed module"

# 2. No library anywhere: an ImportError that says what to do (unless this
# machine has libnettrace installed, which the search would rightly find).
if ldconfig -p 2>/dev/null | grep -q 'libnettrace\.so' || ls /usr/local/lib*/libnettrace.so* >/dev/null 2>&1; then
    echo "no-library check skipped: this machine has libnettrace installed"
else
    as_user "$work/site" /nonexistent '
try:
    import nettrace
except ImportError as e:
    msg = str(e)
    for hint in ("NETTRACE_LIBRARY", "PKG_CONFIG_PATH", "make install", "make python-wheel", "libnettrace.so"):
        assert hint in msg, (hint, msg)
    print("ok: without a library:", msg[:90], "...")
else:
    raise SystemExit("imported without a library: " + nettrace.library_path())' ||
        fail "no ImportError that says what to do without a library"
fi
env NETTRACE_LIBRARY=/nonexistent/libnettrace.so.2 PYTHONPATH="$work/site" "$PYTHON" -c '
try:
    import nettrace
except ImportError as e:
    assert "/nonexistent/libnettrace.so.2" in str(e), str(e)
    print("ok: a NETTRACE_LIBRARY that does not load is named")
else:
    raise SystemExit("a wrong NETTRACE_LIBRARY was ignored")' || fail "a wrong NETTRACE_LIBRARY"

# 3. A wheel with the library bundled: it loads with no setting at all.
NETTRACE_BUNDLE_LIBRARY="$nt_bind_libdir/libnettrace.so" \
    pip_quiet wheel --no-deps -w "$work/dist" "$top_srcdir/bindings/python"
set -- "$work"/dist/nettrace-*-py3-none-linux_*.whl
[ -f "$1" ] || fail "no platform wheel with the library bundled in $work/dist"
pip_quiet install --target "$work/site-bundled" "$1"
as_user "$work/site-bundled" /nonexistent '
import os, sys, nettrace
here = os.path.dirname(nettrace.__file__)
assert os.path.dirname(nettrace.library_path()) == here, nettrace.library_path()
assert len(nettrace.open(os.path.join(sys.argv[1], "corpus", "call-tree.nettrace"))) > 0
print("ok: the wheel", os.path.basename(sys.argv[2]), "loads its bundled", os.path.basename(nettrace.library_path()))' \
    "$1" || fail "the wheel's bundled library"
