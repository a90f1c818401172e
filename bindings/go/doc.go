// Package nettrace reads .NET EventPipe NetTrace streams into resolved
// CPU-sample stacks and attaches to a running .NET process over its
// diagnostics IPC.  It is a cgo binding of libnettrace (C), found through
// pkg-config (nettrace.pc, installed with the library; PKG_CONFIG_PATH names
// another one, as bindings/env.sh does for the build tree).  The module's
// path, libnettrace.dev/nettrace, is its name, not a download location: a
// module using it points a replace directive at a checkout (README, "Use
// it from your module").
//
// The API keeps the contracts of the pure-Go readers it replaces:
//
//   - Parse(io.Reader) returns a *Trace: samples in time order with 64-bit
//     thread ids, the managed flag and frames innermost first, named by
//     method, declaring type and assembly (samples on one stack share their
//     Frames slice); the clock frequency, pointer size, method records,
//     assembly id -> name and module id -> assembly id.
//   - ErrNotNettrace, ErrUnsupportedVersion, ErrNoEvents, ErrNoEndpoint (which
//     also matches os.ErrNotExist) and ErrStreamTooLarge work with errors.Is.
//   - A refused request is a *RuntimeError carrying the runtime's HRESULT.
//   - StartTracing(ctx, pid, cfg, w) is bound to ctx until the runtime
//     replies; (*Session).Stop(ctx) stops once however often and from however
//     many goroutines it is called, never outlives its ctx, and nothing is
//     written to w after it returns.
//   - A zero Config field selects its default: a 256 MB runtime buffer,
//     rundown on, a 1 GiB stream cap, the sample profiler plus the runtime's
//     loader and JIT events.
//
// Where libnettrace does more, the API says so:
//
//   - NetTrace V6 streams (.NET 10) are read, not refused.
//   - Parse holds the decoded trace, not the stream: memory is bounded by the
//     parser's limits, whatever the stream's size, and a stream that ends
//     early or is damaged still yields everything read before the fault,
//     together with an error carrying the byte offset (*Error).
//   - NewParser streams bytes (live IPC bytes included: a *Parser is an
//     io.Writer, so it can be StartTracing's w) into callbacks, without
//     holding the stream.
//   - A Trace exports folded stacks, speedscope and pprof, and a top-N table.
//   - Callbacks.Event and ParseEvents decode every event as 'nettrace events'
//     does; ParseProfileFile gives the event profiles and the GC timeline;
//     Frame.Name is a frame as the tool names it.
//   - Objects stay alive and whole across every call into C: Close during an
//     export, a panicking callback or a callback calling its own parser is
//     handled (the export finishes first; the parse stops and the panic
//     continues after C returns; ErrBadState), never a crash or a deadlock.
package nettrace

/*
#cgo pkg-config: nettrace
#include <nettrace.h>
*/
import "C"

// Version is the linked library's version string.
func Version() string { return C.GoString(C.nt_version()) }
