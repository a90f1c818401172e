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

#include "trace/trace_internal.h"

/* flame_page.c: the page before and after the data, NULL-terminated lines. */
extern const char *const TR_FLAME_HEAD[];
extern const char *const TR_FLAME_TAIL[];

void tr_flame_open(tr_out *o, const char *title, const char *unit);
void tr_flame_name(tr_out *o, bool first, const char *name);
void tr_flame_groups(tr_out *o);
void tr_flame_group(tr_out *o, bool first, const char *label, int64_t total);
void tr_flame_stacks(tr_out *o);
void tr_flame_stack_begin(tr_out *o, bool first, uint32_t group, int64_t weight);
void tr_flame_stack_frame(tr_out *o, uint32_t name);
void tr_flame_stack_end(tr_out *o);
void tr_flame_close(tr_out *o);

#endif
