/* Progress on a terminal for a whole job, across its phases: reading (a bar
 * when the size is known), then resolving, then writing.  Nothing is drawn
 * before the job has run half a second, nor when standard error is not a
 * terminal, nor with NETTRACE_NO_PROGRESS set; the line is erased when the
 * job ends or a message follows.  One job per process (the tool runs one). */
#ifndef CLI_PROGRESS_H
#define CLI_PROGRESS_H

#include <stdint.h>

/* The job starts (its clock starts at the first call). */
void cli_progress_start(void);
/* A phase with a label ("reading", "resolving frames", "writing"). */
void cli_progress_phase(const char *label);
/* done of total units of the current phase (total 0: unknown); bytes says
 * whether the units are bytes (shown in MB). */
void cli_progress_update(uint64_t done, uint64_t total, int bytes);
/* Erase the line (before other output to standard error, and at the end). */
void cli_progress_clear(void);

#endif
