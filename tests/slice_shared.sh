#!/bin/sh
# nettrace slice over the shared reference traces (tests/slice_windows.sh
# shared): SKIP, exit 77, when ../shared/corpus is absent.
exec sh "${top_srcdir:-.}/tests/slice_windows.sh" shared
