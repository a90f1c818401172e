/* Output lines of nettrace events in time order, in bounded memory.
 *
 * Without stacks, lines are held between sequence points (every event before
 * one is older than it) and written sorted; at most hold_max bytes of them
 * (the reorder buffer).  Past that the held lines are written and the rest of
 * the interval goes out as it comes, in stream order, until the next
 * sequence point (ev_lines_end says when this starts, for the caller to say so).
 *
 * With stacks every line waits for the end of the stream (the rundown names
 * the frames): the lines are spooled to an unlinked temporary file, and only
 * their places (40 bytes a line) stay in memory.  Either way one line holds at
 * most hold_max bytes in memory while it is written. */
#ifndef CLI_EVENT_LINES_H
#define CLI_EVENT_LINES_H

#include "common/alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The reorder buffer's default size, bytes of lines. */
#define EV_LINES_DEFAULT_HOLD (64u << 20)

typedef struct ev_line {
    int64_t timestamp;
    uint64_t seq;      /* stream order, for ties */
    uint64_t off;      /* in the memory stream, or with a spool in the spool */
    size_t len;
    bool has_stack;    /* gets a stack when flushed with a stack source */
    bool json;         /* a JSON object: the stack goes in as a member */
} ev_line;

typedef struct ev_lines {
    FILE *mem;         /* open_memstream over buf: the line being written, and the held ones */
    char *buf;
    size_t buf_len;
    FILE *spool;       /* with stacks: tmpfile() the lines move to from mem */
    uint64_t spooled;  /* bytes moved to the spool */
    ev_line *v;        /* allocated through mem_v */
    size_t n, cap;
    cm_mem mem_v;
    uint64_t seq;
    long start;        /* where the line being written began in mem */
    uint64_t hold_max; /* bytes of lines held in memory */
    bool streaming;    /* past hold_max: lines go out as they come until the next sequence point */
    uint64_t produced; /* bytes of every line made so far, stacks included once written */
    FILE *out;
} ev_lines;

typedef enum ev_line_result {
    EV_LINE_OK,
    EV_LINE_FAILED,    /* memory short or writing failed */
    EV_LINE_UNORDERED, /* fine, and the reorder buffer just filled: stream order until the next sequence point */
} ev_line_result;

/* hold_max 0 = EV_LINES_DEFAULT_HOLD; spool: every line waits for ev_lines_flush_stacks.
 * False when memory is short or no temporary file can be made. */
bool ev_lines_init(ev_lines *l, FILE *out, uint64_t hold_max, bool spool);
/* Start a line with this timestamp: returns the stream to write it to. */
FILE *ev_lines_begin(ev_lines *l, int64_t timestamp);
/* The position in that stream the line may not pass: room bytes from its
 * start, and never more than the reorder buffer holds. */
long ev_lines_limit(const ev_lines *l, uint64_t room);
/* Forget the line begun last (it passed its limit). */
void ev_lines_drop(ev_lines *l);
/* Mark the line begun last as one that gets a stack (see ev_lines_flush_stacks). */
void ev_lines_mark_stack(ev_lines *l, bool json);
/* End the line begun last (a newline is added). */
ev_line_result ev_lines_end(ev_lines *l);
/* At a sequence point: write every held line sorted by (timestamp, stream order). */
bool ev_lines_flush(ev_lines *l);
/* At the end: the same, appending to the k-th marked line (in that order) the
 * stack stack_of(ctx, k) gives: " stack=..." to text, ,"stack":"..." to JSON.
 * Stops before a line would take produced past max_produced (*over set). */
bool ev_lines_flush_stacks(ev_lines *l, const char *(*stack_of)(void *ctx, size_t k), void *ctx,
                           uint64_t max_produced, bool *over);
void ev_lines_free(ev_lines *l);

#endif
