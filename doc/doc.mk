# Manual pages: nettrace(1) for the tool, libnettrace(3) for the library.
dist_man_MANS += doc/nettrace.1 doc/libnettrace.3
EXTRA_DIST += doc/design.md
EXTRA_DIST += doc/library.md doc/performance.md doc/quality.md doc/internals.md
