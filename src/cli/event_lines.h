/* Output lines gathered between sequence points and written in time order. */
#ifndef NT_CLI_EVENT_LINES_H
#define NT_CLI_EVENT_LINES_H

#include "common/alloc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct ev_line {
    int64_t timestamp;
    uint64_t seq;      /* stream order, for ties */
    size_t off, len;   /* in the memory stream */
    bool has_stack;    /* gets a stack when flushed with a stack source */
    bool json;         /* a JSON object: the stack goes in as a member */
} ev_line;

typedef struct ev_lines {
    FILE *mem;         /* open_memstream over buf */
    char *buf;
    size_t buf_len;
    ev_line *v;        /* allocated through mem_v */
    size_t n, cap;
    nt_mem mem_v;
    uint64_t seq;
    long start;        /* where the line being written began */
} ev_lines;

bool ev_lines_init(ev_lines *l);
/* Start a line with this timestamp: returns the stream to write it to. */
FILE *ev_lines_begin(ev_lines *l, int64_t timestamp);
/* Mark the line begun last as one that gets a stack (see ev_lines_flush_stacks). */
void ev_lines_mark_stack(ev_lines *l, bool json);
/* End the line begun last (a newline is added).  false when memory is short. */
bool ev_lines_end(ev_lines *l);
/* Write every gathered line sorted by (timestamp, stream order) and forget them. */
bool ev_lines_flush(ev_lines *l, FILE *out);
/* The same, appending to the k-th marked line (in that order) the stack
 * stack_of(ctx, k) gives: " stack=..." to text, ,"stack":"..." to JSON. */
bool ev_lines_flush_stacks(ev_lines *l, FILE *out, const char *(*stack_of)(void *ctx, size_t k), void *ctx);
void ev_lines_free(ev_lines *l);

#endif
