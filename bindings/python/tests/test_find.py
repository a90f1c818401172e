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
        # libnettrace.so links to the current build (libnettrace.so.3.0.0);
        # an older build's files may linger beside it.
        built = os.path.basename(os.path.realpath(os.path.join(build, "bindings", ".libs", "libnettrace.so")))
        self.assertTrue(built.startswith(_find.NAMES[0] + "."),
                        "the build made %s: update _find.SONAME_MAJOR" % built)
