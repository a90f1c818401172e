#!/bin/sh
# tests/cli_parallel.sh over the shared reference traces: SKIP, exit 77, when
# ../shared/corpus is absent.
exec sh "${top_srcdir:-.}/tests/cli_parallel.sh" shared
