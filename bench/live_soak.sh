#!/usr/bin/env bash
# The live soak (part of `make bench`; bench/README.md): a churning .NET
# service (bench/live_soak/ChurnService: dynamic methods, compiled regexes, a
# collectible AssemblyLoadContext loaded and unloaded, thousands of stack
# shapes) read for LIVE_SOAK_MINUTES minutes at once by
#   nettrace top -p PID --interval 1   (the window API: one take a second)
#   TraceEvent 4.0.0's real-time TraceLog, every sample's stack resolved
#   the same with TraceLog.TrimLiveSessionState() once a second
# and each reader's RSS tabled once a minute (the service's too).
# Environment: NETTRACE (the built tool), BENCH_WORK (build and output folder),
# LIVE_SOAK_MINUTES (default 10).  Skips (exit 77) without dotnet.
set -u
minutes=${LIVE_SOAK_MINUTES:-10}
nt=${NETTRACE:?}
work=${BENCH_WORK:?}/live_soak
src=$(cd "$(dirname "$0")" && pwd)/live_soak
command -v dotnet >/dev/null || { echo "SKIP: live soak: dotnet is not on PATH"; exit 77; }
mkdir -p "$work"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
for p in ChurnService TraceLogReader; do
    mkdir -p "$work/$p"
    cp "$src/$p/"*.cs "$src/$p/"*.csproj "$work/$p/"
    (cd "$work/$p" && dotnet build -c Release -o out -nodeReuse:false -p:UseSharedCompilation=false >build.log 2>&1) ||
        { echo "live soak: $p did not build (see $work/$p/build.log)"; exit 1; }
done
secs=$((minutes * 60))
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo -; }
dotnet "$work/ChurnService/out/ChurnService.dll" $((secs + 120)) >"$work/service.log" 2>&1 &
svc=$!
for _ in $(seq 100); do grep -q ready "$work/service.log" && break; sleep 0.1; done
"$nt" top -p "$svc" --interval 1 --duration "$secs" -n 5 >"$work/top.log" 2>"$work/top.err" &
top=$!
dotnet "$work/TraceLogReader/out/TraceLogReader.dll" "$svc" "$secs" >"$work/tracelog.log" 2>&1 &
tl=$!
dotnet "$work/TraceLogReader/out/TraceLogReader.dll" "$svc" "$secs" trim >"$work/tracelog-trim.log" 2>&1 &
tlt=$!
printf '%-7s %14s %14s %20s %14s\n' minute "top -p KiB" "TraceLog KiB" "TraceLog+trim KiB" "service KiB" | tee "$work/rss.txt"
for m in $(seq 0 "$minutes"); do
    [ "$m" -gt 0 ] && sleep 60
    printf '%-7s %14s %14s %20s %14s\n' "$m" "$(rss $top)" "$(rss $tl)" "$(rss $tlt)" "$(rss $svc)" | tee -a "$work/rss.txt"
done
wait "$top"; rc_top=$?
wait "$tl" "$tlt"
kill "$svc" 2>/dev/null; wait "$svc" 2>/dev/null
echo "top -p exit $rc_top; its last refresh:"; grep -A3 '^methods:' "$work/top.log" | tail -4
echo "TraceLog (minute rss samples frames named):"; tail -2 "$work/tracelog.log"
echo "TraceLog + TrimLiveSessionState:"; tail -2 "$work/tracelog-trim.log"
[ "$rc_top" -eq 0 ]
