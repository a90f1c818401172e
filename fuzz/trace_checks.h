/* The trace checks the trace and window harnesses share: a walk of every
 * accessor of a built trace (touching every string and frame, so that ASan
 * sees a bad pointer) with the structural invariants a trace keeps. */
#ifndef FUZZ_TRACE_CHECKS_H
#define FUZZ_TRACE_CHECKS_H

#include "nettrace_trace.h"

/* Walk t: samples in time order, each of at least one, stack and frame ids in
 * range, every frame's method record the trace's own, every name a string, and
 * the stats' sample count equal to what the samples stand for.  fz_fail on a
 * broken one. */
void fz_walk_trace(const nt_trace *t);

#endif
