import os
import unittest

from nettrace import _find


class FindTest(unittest.TestCase):
    def test_soname_is_the_builds(self):
        # The search asks for libnettrace.so.N by the library's ABI number: a
        # bumped version (configure.ac's NT_LT_VERSION) must bump SONAME_MAJOR.
        build = os.environ.get("top_builddir")
        if not build:
            self.skipTest("top_builddir is not set (make check sets it)")
        libs = os.path.join(build, "bindings", ".libs")
        found = sorted(n for n in os.listdir(libs) if n.startswith("libnettrace.so."))
        self.assertIn(_find.NAMES[0], found, "the build made %s: update _find.SONAME_MAJOR" % found)
