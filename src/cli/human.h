/* Numbers in the tool's human text (one convention, nettrace(1) "NUMBERS"):
 * counts and exact byte or ns values grouped by three with commas
 * (82,945), sizes also in binary units (KiB, MiB, GiB: powers of 1024),
 * durations in s / ms / us (time_opt.h's cli_format_duration).  Machine
 * formats (--json, samples, folded, pprof, speedscope) keep raw numbers.
 *
 * Each formatter returns its text by value, so it can be an argument of
 * the printf that writes it: fprintf(o, "%s", cli_count(n).s). */
#ifndef CLI_HUMAN_H
#define CLI_HUMAN_H

#include <stdint.h>

typedef struct cli_num {
    char s[40];
} cli_num;

/* 1234567 -> "1,234,567" */
cli_num cli_count(uint64_t v);
/* A signed count: -1234 -> "-1,234" */
cli_num cli_count_signed(int64_t v);
/* A fixed-point value with its integer part grouped: 1995.8543, 3 -> "1,995.854" */
cli_num cli_fixed(double v, int decimals);
/* A size: "512 B", "3.4 KiB", "94.6 MiB", "1.2 GiB" */
cli_num cli_bytes(uint64_t bytes);
/* ns as ms with 3 decimals, grouped: 1937962590 -> "1,937.963" */
cli_num cli_ms(int64_t ns);

#endif
