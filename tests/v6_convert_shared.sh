#!/bin/sh
# nettrace convert's round trips over the shared reference traces
# (tests/test_v6_convert.sh shared): SKIP, exit 77, when ../shared/corpus is absent.
exec sh "${top_srcdir:-.}/tests/test_v6_convert.sh" shared
