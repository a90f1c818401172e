/* The parallel parse's object (nettrace_parallel.h), shared by its units:
 * parallel_plan.c cuts the stream into parts from its index,
 * parallel_part.c parses one part (any thread) and delivers it in order
 * (one thread), parallel_run.c runs both on threads the library starts. */
#ifndef PS_PARSE_PARALLEL_INTERNAL_H
#define PS_PARSE_PARALLEL_INTERNAL_H

#include "nettrace_parallel.h"
#include "parse/plog.h"

enum { PP_PLANNED = 0, PP_DECODING, PP_DECODED, PP_DELIVERED };

/* A thread-table row as the comparison of two parsers' states sees it. */
typedef struct pp_thread {
    uint64_t key, os_tid, os_pid;
    uint32_t last_seq, dropped;
} pp_thread;

/* A block a part reads before its own: where it is and its index position. */
typedef struct pp_block {
    uint64_t offset, end;
    size_t index; /* position in the index */
} pp_block;

/* The sizes of a parser's tables that the parse before a part decides. */
typedef struct pp_tables {
    size_t meta_count, meta_bytes;
    uint32_t stacks, interval;
    bool v6;
} pp_tables;

typedef struct pp_part {
    size_t first_block;   /* index position of its first own block (0 for part 0) */
    uint64_t start, end;  /* its own bytes */
    uint64_t sp_end;      /* end of the sequence point at `end` that the next part starts after (last part: end) */
    int state;
    nt_parser *p;         /* its parser, then (once delivered exactly) the stream's */
    cm_mem logmem;        /* the log's other allocations, counted apart from the parser's */
    ps_plog log;
    nt_parser_stats base; /* the parser's counts after reading the blocks before the part */
    pp_thread *start_threads; /* its thread table after them, by key */
    size_t nstart_threads;
    pp_tables start_tables;
    void *cpart;          /* its consumer (nt_parallel_consumer.part_new), which took its callbacks; NULL: the log did */
    bool usable;          /* primed, framed where the index said, the log complete */
    uint64_t primed;      /* blocks read before its own */
} pp_part;

struct nt_parallel {
    cm_mem mem;
    const uint8_t *data;
    size_t len;
    nt_limits lim;
    nt_allocator alloc;
    bool have_alloc, lazy;
    uint32_t jobs;
    nt_callbacks cb;      /* what delivery calls, and so what the parts keep */
    void *user;
    nt_parallel_consumer consumer; /* per-part consumers, when have_consumer */
    bool have_consumer;
    ps_plog_pool pool;
    uint64_t header_end;  /* the stream's start through its Trace object or block */
    pp_block *prime;      /* metadata, thread, remove-thread and sequence-point blocks, in order */
    size_t nprime;
    pp_part *parts;
    size_t nparts, parts_cap;
    /* delivery */
    size_t next;          /* the next part to deliver */
    nt_parser *cur;       /* the stream's state after the parts delivered (one of the parts' parsers) */
    struct nt_field_ctx fctx; /* what replayed events point to */
    nt_status status;     /* sticky: the first failure delivered */
    nt_parallel_stats st;
};

/* Cut the stream (parallel_plan.c); false when memory is short. */
bool pp_plan(nt_parallel *pp, const nt_index *ix, uint64_t part_bytes);

#endif
