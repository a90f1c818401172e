#!/bin/sh
# Line coverage of the parser sources reached by the fuzz corpus:
#   fuzz/coverage.sh HARNESS...          (run by make fuzz-coverage)
# Builds each harness's replay driver with clang source-based coverage,
# replays corpus/fuzz/<corpus> and its regressions (plus $FUZZ_WORK/<harness>/corpus
# when a campaign left one), merges the profiles and prints llvm-cov's report
# for the parser sources.  Output in ./fuzz-coverage/.
set -eu
src=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
cc=${CC_COV:-clang}
profdata=$(command -v llvm-profdata || command -v llvm-profdata-14)
cov=$(command -v llvm-cov || command -v llvm-cov-14)
out=fuzz-coverage
rm -rf "$out"
mkdir -p "$out"
parser_sources="src/parser.c src/blocks.c src/blocks_v6.c src/clr_events.c src/metadata.c src/stacks.c src/utf16.c"
lib=$(ls "$src"/src/*.c)
objs=""
for h in "$@"; do
    case $h in
    parser_limits) c=parser_limits ;;
    ipc_reply) c=ipc_reply ;;
    *) c=parser ;;
    esac
    bin=$out/replay_$h
    # shellcheck disable=SC2086
    $cc -std=c11 -O1 -g -fprofile-instr-generate -fcoverage-mapping -D_GNU_SOURCE -I. -I"$src/include" \
        -I"$src/src" -I"$src/tests/support" -o "$bin" "$src/fuzz/replay_main.c" "$src/fuzz/fuzz_$h.c" \
        "$src/fuzz/fuzz_common.c" "$src/tests/support/support.c" $lib -lm -lpthread ${COV_LIBS:--lz} 
    dirs="$src/corpus/fuzz/$c"
    [ -d "$src/corpus/fuzz/regressions/$c" ] && dirs="$dirs $src/corpus/fuzz/regressions/$c"
    [ -n "${FUZZ_WORK:-}" ] && [ -d "$FUZZ_WORK/$h/corpus" ] && dirs="$dirs $FUZZ_WORK/$h/corpus"
    # shellcheck disable=SC2086
    LLVM_PROFILE_FILE="$out/$h.profraw" "$bin" $dirs
    objs="$objs -object $bin"
done
"$profdata" merge -sparse "$out"/*.profraw -o "$out/all.profdata"
first=$(echo "$objs" | awk '{print $2}')
rest=$(echo "$objs" | cut -d' ' -f4-)
files=""
for f in $parser_sources; do files="$files $src/$f"; done
# shellcheck disable=SC2086
"$cov" report "$first" $rest -instr-profile="$out/all.profdata" $files | tee "$out/report.txt"
# shellcheck disable=SC2086
"$cov" show "$first" $rest -instr-profile="$out/all.profdata" -show-line-counts-or-regions $files \
    > "$out/lines.txt"
echo "coverage: report in $out/report.txt, annotated sources in $out/lines.txt"
