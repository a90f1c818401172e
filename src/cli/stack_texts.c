#include "cli/stack_texts.h"
#include "cli/trace_load.h"

#include <stdlib.h>
#include <string.h>

bool cli_stack_texts_init(cli_stack_texts *c, const nt_trace *t, unsigned flags, size_t budget)
{
    memset(c, 0, sizeof *c);
    c->t = t;
    c->flags = flags;
    c->budget = budget ? budget : CLI_STACK_TEXTS_BUDGET;
    c->n = t ? nt_trace_stack_count(t) : 0;
    c->lines = calloc(c->n ? c->n : 1, sizeof *c->lines);
    return c->lines != NULL;
}

const char *cli_stack_text(cli_stack_texts *c, uint32_t stack_index)
{
    if (stack_index >= c->n)
        return NULL;
    if (c->lines[stack_index])
        return c->lines[stack_index];
    free(c->passing);
    c->passing = NULL;
    char *line = cli_stack_line(c->t, stack_index, c->flags);
    if (!line)
        return NULL;
    size_t len = strlen(line) + 1;
    if (len <= c->budget - c->held) {
        c->held += len;
        return c->lines[stack_index] = line;
    }
    return c->passing = line;
}

void cli_stack_texts_free(cli_stack_texts *c)
{
    for (size_t i = 0; c->lines && i < c->n; i++)
        free(c->lines[i]);
    free(c->lines);
    free(c->passing);
    memset(c, 0, sizeof *c);
}
