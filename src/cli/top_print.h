/* The hot-method tables as 'nettrace top' prints them, for a file and for a
 * live process alike. */
#ifndef NT_CLI_TOP_PRINT_H
#define NT_CLI_TOP_PRINT_H

#include "nettrace_trace.h"

#include <stdio.h>

/* The lines above the tables: samples and threads, how many frames
 * resolved, the method records, and a note when the stream was cut. */
void cli_top_print_header(FILE *o, const nt_trace *t);
/* Every table of top; with by_thread each under a "thread ID:" line. */
void cli_top_print(FILE *o, const nt_top *top, bool by_thread);

#endif
