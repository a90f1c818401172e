/* A self-contained HTML flame graph: one file holding the page, its script
 * and the data (no network, no server), over weighted stacks of named
 * frames in groups (threads) -- the records the folded exporters write, or
 * any other tree of weights (a heap's dominator tree, paths root first).
 * Streamed, in this order: open (title and the weights' unit), the names
 * (index = order written), the groups (a label and a total each, busiest
 * first), the stacks (group index, weight, name indices root first; an
 * empty stack is weight on the root), close.  Strings go through the one
 * JSON writer with '<', '>' and '&' escaped as well, so no name from a trace
 * can end the data's <script> element. */
#ifndef EX_FLAME_HTML_H
#define EX_FLAME_HTML_H

#include "export/export_internal.h"

/* flame_page.c: the page before and after the data, NULL-terminated lines. */
extern const char *const EX_FLAME_HEAD[];
extern const char *const EX_FLAME_TAIL[];

void ex_flame_open(ex_out *o, const char *title, const char *unit);
void ex_flame_name(ex_out *o, bool first, const char *name);
void ex_flame_groups(ex_out *o);
void ex_flame_group(ex_out *o, bool first, const char *label, int64_t total);
void ex_flame_stacks(ex_out *o);
void ex_flame_stack_begin(ex_out *o, bool first, uint32_t group, int64_t weight);
void ex_flame_stack_frame(ex_out *o, uint32_t name);
void ex_flame_stack_end(ex_out *o);
void ex_flame_close(ex_out *o);

#endif
