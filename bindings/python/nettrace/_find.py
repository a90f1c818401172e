"""Finding the C library the module binds, or saying what to do without it.

Looked for in this order, the first that loads wins:
  1. NETTRACE_LIBRARY, a path (when set, it must load: no fallback hides a typo);
  2. a copy bundled in the package (a wheel built by `make python-wheel`);
  3. the libdir pkg-config gives for nettrace.pc (the installed library's, or
     any PKG_CONFIG_PATH names);
  4. the dynamic loader's own search (ld.so.cache, LD_LIBRARY_PATH);
  5. the usual library folders (/usr/local/lib ... , where `make install`
     puts it before ldconfig has run).
"""
import ctypes
import os
import subprocess
import sys

# The library's ABI version (the soname's number: configure.ac's
# NT_LT_VERSION current - age); test_find.py checks it against the build.
SONAME_MAJOR = 3
if sys.platform == "darwin":
    NAMES = ("libnettrace.%d.dylib" % SONAME_MAJOR, "libnettrace.dylib")
else:
    NAMES = ("libnettrace.so.%d" % SONAME_MAJOR, "libnettrace.so")
USUAL_DIRS = ("/usr/local/lib", "/usr/local/lib64", "/usr/lib/%s-linux-gnu" % os.uname().machine, "/usr/lib64",
              "/usr/lib", "/opt/homebrew/lib")
HERE = os.path.dirname(os.path.abspath(__file__))


def _pkg_config_libdir(tried):
    try:
        r = subprocess.run(["pkg-config", "--variable=libdir", "nettrace"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=10)
    except (OSError, subprocess.SubprocessError) as e:
        tried.append("pkg-config: %s" % (e.strerror if isinstance(e, OSError) and e.strerror else e))
        return None
    libdir = r.stdout.decode(errors="replace").strip()
    if r.returncode != 0 or not libdir:
        tried.append("pkg-config: no nettrace.pc on its path (PKG_CONFIG_PATH=%s)"
                     % os.environ.get("PKG_CONFIG_PATH", ""))
        return None
    return libdir


def _candidates(tried):
    """(path or bare name, where it came from), in the order of the search."""
    for name in NAMES[:1]:
        yield os.path.join(HERE, name), "bundled in the package"
    libdir = _pkg_config_libdir(tried)
    if libdir:
        for name in NAMES:
            yield os.path.join(libdir, name), "pkg-config's libdir"
    for name in NAMES[:1]:
        yield name, "the dynamic loader's search path"
    for d in USUAL_DIRS:
        for name in NAMES:
            yield os.path.join(d, name), "a usual library folder"


def load():
    """(ctypes.CDLL, its path); ImportError saying what to do when none loads."""
    explicit = os.environ.get("NETTRACE_LIBRARY")
    if explicit:
        try:
            return ctypes.CDLL(explicit), explicit
        except OSError as e:
            raise ImportError("nettrace: NETTRACE_LIBRARY=%s does not load: %s. Point it at libnettrace's "
                              "shared library (%s) or unset it to search for the installed one."
                              % (explicit, e, NAMES[0])) from None
    tried = []
    for path, source in _candidates(tried):
        if os.sep in path and not os.path.exists(path):
            continue
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            tried.append("%s (%s): %s" % (path, source, e))
    raise ImportError(
        "nettrace: the C library libnettrace (%s) was not found. Looked in: the package itself, pkg-config's "
        "libdir for nettrace.pc, the dynamic loader's path and %s%s. Either install libnettrace "
        "(./configure && make && sudo make install && sudo ldconfig), or set PKG_CONFIG_PATH to the folder "
        "holding its nettrace.pc, or set NETTRACE_LIBRARY=/path/to/%s, or install a wheel with the library "
        "bundled (make python-wheel in a libnettrace build tree)."
        % (NAMES[0], ", ".join(USUAL_DIRS), "".join("; " + t for t in tried), NAMES[0]))
