#!/usr/bin/env bash
# Re-record the project's own traces (corpus/*.nettrace) with the local .NET
# SDK.  Builds the workloads in tests/workloads/ with `dotnet build -c Release`,
# runs each under EventPipe and writes the trace beside this script.
#
#   corpus/record.sh                 record every trace
#   corpus/record.sh spin-threads    record one (spin-threads, call-tree,
#                                    spin-threads-dotnet-trace, event-fields, event-sources,
#                                    profile-alloc, profile-exceptions,
#                                    profile-contention, profile-gc,
#                                    heap-shape, heap-shape-grown,
#                                    heap-shape-gcdump, heap-shape-grown-gcdump)
#
# Environment: DURATION_MS (default 2000) is the workload's run time;
# DOTNET_TRACE (default: dotnet-trace on PATH or ~/.dotnet/tools) is used only
# for spin-threads-dotnet-trace; NETTRACE (default: nettrace in the top directory, the tool of this
# current build tree) records the profile-* traces.  Recordings differ run to run (timing, ids,
# addresses): update corpus/README.md and regenerate tests/expected with
# tools/oracle/run.sh after re-recording.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
workloads="$top/tests/workloads"
duration=${DURATION_MS:-2000}
max_bytes=$((2 * 1024 * 1024))

# Sample profiler (1 ms), JIT (0x10) + Loader (0x8) at Verbose; rundown is on
# by default for file output (DOTNET_EventPipeRundown=1) and gives the
# MethodDCEndVerbose records for everything still loaded at exit.
runtime_providers='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:18:5'

build() {
    dotnet build -c Release --nologo -v quiet "$workloads/$1/$1.csproj" >/dev/null
}

check_size() {
    local size
    size=$(stat -c %s "$1")
    if [ "$size" -ge "$max_bytes" ]; then
        echo "record.sh: $1 is $size bytes (limit $max_bytes): lower DURATION_MS" >&2
        exit 1
    fi
    echo "wrote $1 ($size bytes)"
}

# record_env NAME WORKLOAD EXTRA_PROVIDERS: file output through the runtime's
# own environment variables (no IPC; rundown at process exit).
record_env() {
    local out="$here/$1.nettrace" providers="$runtime_providers"
    [ -n "$3" ] && providers="$providers,$3"
    build "$2"
    rm -f "$out"
    DOTNET_EnableEventPipe=1 \
    DOTNET_EventPipeOutputPath="$out" \
    DOTNET_EventPipeConfig="$providers" \
    DOTNET_EventPipeRundown=1 \
        dotnet "$workloads/$2/bin/Release/net10.0/$2.dll" "$duration"
    check_size "$out"
}

# record_dotnet_trace NAME WORKLOAD EXTRA_PROVIDERS: the same providers
# through dotnet-trace, which starts the child on a diagnostic port and copies
# the IPC stream to the file (rundown when the session is stopped).
record_dotnet_trace() {
    local out="$here/$1.nettrace" providers="$runtime_providers" tool
    [ -n "$3" ] && providers="$providers,$3"
    tool=${DOTNET_TRACE:-$(command -v dotnet-trace || echo "$HOME/.dotnet/tools/dotnet-trace")}
    build "$2"
    rm -f "$out"
    # With --providers given and no --profile, dotnet-trace 10 enables only
    # the listed providers (checked: the trace holds the same event types as
    # the environment-variable recording).
    "$tool" collect --providers "$providers" --format NetTrace -o "$out" \
        -- dotnet "$workloads/$2/bin/Release/net10.0/$2.dll" "$duration" >/dev/null
    check_size "$out"
}

# record_collect NAME WORKLOAD PROVIDERS: attach to the running workload with
# this project's own `nettrace collect` (built in the top directory) for
# COLLECT_S seconds while it runs for DURATION_MS + 1500 ms; rundown when the
# session stops.
record_collect() {
    local out="$here/$1.nettrace" nt="$top/nettrace" pid
    [ -x "$nt" ] || { echo "record.sh: build nettrace first (make nettrace)" >&2; exit 1; }
    build "$2"
    rm -f "$out"
    dotnet "$workloads/$2/bin/Release/net10.0/$2.dll" $((duration + 1500)) >/dev/null &
    pid=$!
    "$nt" collect -p "$pid" --wait 10 --duration "${COLLECT_S:-2.5}" -q -o "$out" --providers "$3"
    wait "$pid"
    check_size "$out"
}

# record_sources: the well-known EventSources only (no sampling, no rundown):
# System.Runtime's EventCounters every second, the workload's Meter through
# System.Diagnostics.Metrics, TplEventSource's task events; the payload
# decoder's table is checked against them (tests/test_payload_sources.c).
record_sources() {
    local out="$here/event-sources.nettrace"
    build EventSources
    rm -f "$out"
    DOTNET_EnableEventPipe=1 DOTNET_EventPipeOutputPath="$out" DOTNET_EventPipeRundown=0 \
    DOTNET_EventPipeConfig='System.Runtime:0:5:EventCounterIntervalSec=1,System.Diagnostics.Metrics:0x3:5:SessionId=nt;Metrics=Workloads.EventSources;RefreshInterval=1;MaxTimeSeries=100;MaxHistograms=10,System.Threading.Tasks.TplEventSource:0x3:5' \
        dotnet "$workloads/EventSources/bin/Release/net10.0/EventSources.dll" 2500 >/dev/null
    check_size "$out"
}

# record_profile NAME MODE PROFILES: ProfileLoad MODE under our own
# `nettrace collect --profile PROFILES` (IPC; rundown when the session is
# stopped).  The workload waits for a go file, so the session sees its whole
# round, and for a quit file, so the runtime is alive for the rundown.
record_profile() {
    local out="$here/$1.nettrace" dir log pid cpid tool=${NETTRACE:-$top/nettrace}
    build ProfileLoad
    dir=$(mktemp -d)
    log="$dir/log"
    rm -f "$out"
    dotnet "$workloads/ProfileLoad/bin/Release/net10.0/ProfileLoad.dll" "$2" --go "$dir/go" --quit "$dir/quit" >"$log" &
    pid=$!
    for _ in $(seq 1 300); do grep -q '^ready' "$log" && break; sleep 0.1; done
    "$tool" collect -q -p "$pid" -o "$out" --providers Workloads-Profiles:0:5 --profile "$3" &
    cpid=$!
    # The stream's first bytes mean the session is running.
    for _ in $(seq 1 300); do [ -s "$out" ] && break; sleep 0.05; done
    sleep 0.3
    touch "$dir/go"
    for _ in $(seq 1 600); do grep -q '^done' "$log" && break; sleep 0.1; done
    sleep 0.3
    kill -INT "$cpid"
    wait "$cpid"
    touch "$dir/quit"
    wait "$pid"
    rm -rf "$dir"
    check_size "$out"
}

# record_heap FILE SCALE CAPTURE...: a heap snapshot of HeapShape SCALE into
# corpus/heap/FILE, taken once the workload says it is ready by CAPTURE -p PID
# -o FILE (corpus/heap/, apart: the tests that take every corpus/*.nettrace
# want samples).
record_heap() {
    local out="$here/heap/$1" scale=$2 dir log pid
    shift 2
    build HeapShape
    dir=$(mktemp -d)
    log="$dir/log"
    rm -f "$out"
    dotnet "$workloads/HeapShape/bin/Release/net10.0/HeapShape.dll" "$scale" 30000 >"$log" &
    pid=$!
    for _ in $(seq 1 300); do grep -q '^ready' "$log" && break; sleep 0.1; done
    "$@" -p "$pid" -o "$out" >/dev/null
    kill "$pid"
    wait "$pid" || true
    rm -rf "$dir"
    check_size "$out"
}

# record_gcdump NAME SCALE: with this project's own `nettrace gcdump`, a .nettrace.
record_gcdump() { record_heap "$1.nettrace" "$2" "${NETTRACE:-$top/nettrace}" gcdump -q; }

# record_dotnet_gcdump NAME SCALE: the same snapshot as dotnet-gcdump writes it
# (a .gcdump, PerfView's serialized MemoryGraph).  DOTNET_GCDUMP (default:
# dotnet-gcdump on PATH or ~/.dotnet/tools) is dotnet-gcdump 10.0.750501
# (`dotnet tool install --tool-path DIR dotnet-gcdump --version 10.0.750501`).
record_dotnet_gcdump() {
    record_heap "$1.gcdump" "$2" \
        "${DOTNET_GCDUMP:-$(command -v dotnet-gcdump || echo "$HOME/.dotnet/tools/dotnet-gcdump")}" collect
}

want() { [ $# -eq 0 ] || [[ " $* " == *" $TARGET "* ]]; }

# GC 0x1, Loader 0x8, JIT 0x10, Contention 0x4000, Exception 0x8000,
# Threading 0x10000; TplEventSource Tasks 0x2 + TaskTransfer 0x1.
fields_providers='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x1C019:5,System.Threading.Tasks.TplEventSource:0x3:5,Workloads-EventFields:0:5'

for TARGET in spin-threads call-tree spin-threads-dotnet-trace event-fields event-sources profile-alloc profile-exceptions \
    profile-contention profile-gc heap-shape heap-shape-grown heap-shape-gcdump heap-shape-grown-gcdump; do
    want "$@" || continue
    case $TARGET in
        spin-threads) record_env spin-threads SpinThreads Workloads-SpinThreads:0:5 ;;
        call-tree) record_env call-tree CallTree "" ;;
        spin-threads-dotnet-trace)
            record_dotnet_trace spin-threads-dotnet-trace SpinThreads Workloads-SpinThreads:0:5 ;;
        event-fields) record_collect event-fields EventFields "$fields_providers" ;;
        event-sources) record_sources ;;
        profile-alloc) record_profile profile-alloc alloc cpu,alloc ;;
        profile-exceptions) record_profile profile-exceptions throw cpu,exceptions ;;
        profile-contention) record_profile profile-contention contention cpu,contention ;;
        profile-gc) record_profile profile-gc gc cpu,gc ;;
        heap-shape) record_gcdump shape 1 ;;
        heap-shape-grown) record_gcdump shape-grown 2 ;;
        heap-shape-gcdump) record_dotnet_gcdump shape 1 ;;
        heap-shape-grown-gcdump) record_dotnet_gcdump shape-grown 2 ;;
    esac
done
dotnet --list-runtimes | grep Microsoft.NETCore.App
