/* The text of resolved stacks as samples lines print them (cli_stack_line),
 * made once per distinct stack while the texts held stay within a budget,
 * and made per use past it: a trace of many distinct deep stacks with long
 * names costs time then, not memory (samples, samples --profile, events --stacks). */
#ifndef CLI_STACK_TEXTS_H
#define CLI_STACK_TEXTS_H

#include "nettrace_trace.h"

#include <stdbool.h>
#include <stddef.h>

/* Bytes of stack text kept for reuse. */
#define CLI_STACK_TEXTS_BUDGET (16u << 20)

typedef struct cli_stack_texts {
    const nt_trace *t;
    unsigned flags;      /* nt_frame_name_ex flags */
    char **lines;        /* per stack index, NULL until made (and kept) */
    size_t n;
    size_t held, budget; /* bytes kept; at most budget (0 = CLI_STACK_TEXTS_BUDGET) */
    char *passing;       /* the last text made past the budget, freed by the next call */
} cli_stack_texts;

bool cli_stack_texts_init(cli_stack_texts *c, const nt_trace *t, unsigned flags, size_t budget);
/* Stack stack_index's text, valid until the next call; NULL when memory is short. */
const char *cli_stack_text(cli_stack_texts *c, uint32_t stack_index);
void cli_stack_texts_free(cli_stack_texts *c);

#endif
