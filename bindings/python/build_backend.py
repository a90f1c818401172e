"""A PEP 517 build backend from the standard library alone, so that
`pip install ./bindings/python` works offline with nothing to download: it
packs the pure-Python package nettrace/ into a py3-none-any wheel (and an
sdist).  The project's metadata is pyproject.toml's [project] table.

With the C library to bundle -- NETTRACE_BUNDLE_LIBRARY=path, or the
config setting bundle-library=path (`make python-wheel` passes the build
tree's) -- the wheel also holds it as nettrace/libnettrace.so.N, where the
module looks first, and is tagged for this platform instead."""
import base64
import hashlib
import io
import os
import re
import sysconfig
import tarfile
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the few keys needed, read by hand
    tomllib = None

HERE = os.path.dirname(os.path.abspath(__file__))


def _project():
    path = os.path.join(HERE, "pyproject.toml")
    if tomllib:
        with open(path, "rb") as f:
            return tomllib.load(f)["project"]
    project, section = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("["):
                section = line
            elif section == "[project]" and "=" in line:
                key, value = (x.strip() for x in line.split("=", 1))
                if value.startswith('"'):
                    project[key] = value.strip('"')
    return project


def _files():
    for root, dirs, files in os.walk(os.path.join(HERE, "nettrace")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                full = os.path.join(root, name)
                yield full, os.path.relpath(full, HERE).replace(os.sep, "/")


def _metadata(p):
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\nRequires-Python: %s\n"
            % (p["name"], p["version"], p.get("description", ""), p.get("requires-python", ">=3.8")))


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"], p["version"])


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p = _project()
    d = os.path.join(metadata_directory, _dist_info(p))
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(_metadata(p))
    return _dist_info(p)


def _bundled(config_settings):
    """(path of the library to bundle, its name in the package) or None."""
    path = (config_settings or {}).get("bundle-library") or os.environ.get("NETTRACE_BUNDLE_LIBRARY")
    if not path:
        return None
    real = os.path.realpath(path)
    m = re.match(r"(libnettrace\.so\.\d+)", os.path.basename(real)) or \
        re.match(r"(libnettrace\.\d+\.dylib)", os.path.basename(real))
    if not m or not os.path.isfile(real):
        raise ValueError("bundle-library %s is not a versioned libnettrace shared library (libnettrace.so.N...)"
                         % path)
    return real, m.group(1)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    p = _project()
    bundle = _bundled(config_settings)
    tag = "py3-none-" + re.sub(r"[-.]", "_", sysconfig.get_platform()) if bundle else "py3-none-any"
    name = "%s-%s-%s.whl" % (p["name"], p["version"], tag)
    info = _dist_info(p)
    record = []

    def add(zf, arcname, data, mode=0o644):
        zi = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
        zi.external_attr = mode << 16
        zi.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(zi, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append("%s,sha256=%s,%d" % (arcname, digest, len(data)))

    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as zf:
        for full, arcname in _files():
            with open(full, "rb") as f:
                add(zf, arcname, f.read())
        if bundle:
            with open(bundle[0], "rb") as f:
                add(zf, "nettrace/" + bundle[1], f.read(), 0o755)  # as a shared library is installed
        add(zf, info + "/METADATA", _metadata(p).encode())
        add(zf, info + "/WHEEL",
            ("Wheel-Version: 1.0\nGenerator: nettrace build_backend\nRoot-Is-Purelib: %s\nTag: %s\n"
             % ("false" if bundle else "true", tag)).encode())
        record.append(info + "/RECORD,,")
        zf.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return name


def build_sdist(sdist_directory, config_settings=None):
    p = _project()
    base = "%s-%s" % (p["name"], p["version"])
    name = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as tf:
        for rel in ("pyproject.toml", "build_backend.py", "README.md"):
            tf.add(os.path.join(HERE, rel), base + "/" + rel)
        for full, arcname in _files():
            tf.add(full, base + "/" + arcname)
        pkg = io.BytesIO(("Metadata-Version: 2.1\n" + _metadata(p).split("\n", 1)[1]).encode())
        ti = tarfile.TarInfo(base + "/PKG-INFO")
        ti.size = len(pkg.getvalue())
        tf.addfile(ti, pkg)
    return name
