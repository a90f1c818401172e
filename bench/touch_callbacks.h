/* The parser callbacks both benchmarks run with (bench_parse, bench_ours):
 * each reads what it is given, as a consumer would, so the compiler cannot
 * drop the parser's work, and the event callback counts events so a run can
 * be checked against another reader's count. */
#ifndef BENCH_TOUCH_CALLBACKS_H
#define BENCH_TOUCH_CALLBACKS_H

#include "nettrace.h"

#include <stdint.h>

extern volatile uint64_t bench_sink;
extern uint64_t bench_events;
/* Every callback set. */
extern const nt_callbacks bench_touch_all;

#endif
