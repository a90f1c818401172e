import ctypes
import os
import subprocess
import unittest

from nettrace import _lib


class AbiTest(unittest.TestCase):
    def test_ctypes_layout_is_the_headers(self):
        tool = os.environ.get("NETTRACE_ABI_LAYOUT")
        if not tool:
            self.skipTest("NETTRACE_ABI_LAYOUT is not set (make check builds bindings/python/abi_layout)")
        c = {}
        for line in subprocess.run([tool], check=True, stdout=subprocess.PIPE).stdout.decode().splitlines():
            name, value = line.split()
            c[name] = int(value)
        mirrored = [v for k, v in vars(_lib).items()
                    if k.startswith("nt_") and isinstance(v, type) and issubclass(v, ctypes.Structure)]
        self.assertGreaterEqual(len(mirrored), 20)
        for cls in mirrored:
            name = cls.__name__
            self.assertIn(name, c, "abi_layout does not list %s" % name)
            self.assertEqual(ctypes.sizeof(cls), c[name], "sizeof(%s)" % name)
            for field, _ in cls._fields_:
                key = "%s.%s" % (name, field)
                self.assertIn(key, c, "abi_layout does not list %s" % key)
                self.assertEqual(getattr(cls, field).offset, c[key], "offsetof(%s)" % key)


if __name__ == "__main__":
    unittest.main()
