/* The conversion engine (nettrace_convert.h): parser callbacks driving a
 * writer.  From the top down, each unit calling only the ones below it:
 * convert_io.c (the public entry points: options, the read, the outcome),
 * convert.c (the parser's callbacks: header, events, sequence points, the
 * slice's window), convert_meta.c (source metadata ids to output ids, with
 * the V6 label-list variants and the output's metadata flushes). */
#ifndef CV_CONVERT_INTERNAL_H
#define CV_CONVERT_INTERNAL_H

#include "common/addr_set.h"
#include "nettrace_convert.h"
#include "common/alloc.h"
#include "common/hash.h"
#include "common/map.h"

/* One output metadata id for a source description: a base (as the source
 * defined it) or a variant (the base with a label list's overrides). */
typedef struct cv_meta {
    uint32_t src_id, dst_id;
    uint32_t base;          /* index of the base in metas (its own for a base) */
    uint32_t next;          /* index + 1 of the next variant with the same hash, 0 = none */
    uint32_t version, opcode, level;
    uint64_t keywords;
} cv_meta;

typedef struct cv_conv {
    uint32_t format;        /* the output's: 4 or 6 (0 until the input's header when it is the input's own) */
    bool uncompressed;
    nt_sink_fn out;
    void *out_user;
    const nt_allocator *alloc;
    const nt_parser *parser; /* the input's clock, for the window */
    nt_writer *w;
    cm_mem mem;             /* the maps' and metas' allocations */
    cm_map base;            /* source metadata id -> index + 1 in metas of its base */
    cm_map variants;        /* variant_hash -> index + 1 in metas of the first variant with it */
    cm_hash_key hash_key;   /* per run: the source cannot aim variants at one hash */
    cv_meta *metas;
    size_t nmetas, cap;
    int64_t last_timestamp;
    uint64_t last_capture_thread; /* a slice's previous event's */
    /* A slice: the window as given, and on the trace clock (ns) once the header is read. */
    bool window;
    nt_time_bound from, to;
    int64_t from_ns, to_ns;
    /* A slice's first pass (convert_frames.c): the code addresses of the window's stacks, sorted, once each. */
    bool frames_known;
    cm_addr_set frames;
    nt_convert_stats st;    /* the counts */
    nt_status fail;         /* the output's failure (the callbacks stopped the parse), NT_OK while none */
    char err[256];          /* its description */
} cv_conv;

/* The failure of the writer as the conversion's: its status and message; 1 (stop). */
int cv_fail_writer(cv_conv *c);
/* Out of memory in the conversion's own tables; 1 (stop). */
int cv_fail_nomem(cv_conv *c);

/* Define a source metadata record (the metadata callback). */
int cv_define_base(cv_conv *c, const nt_event_desc *d, uint32_t *dst);
/* The output metadata id of an event's (possibly overridden) description, defined on first use. */
int cv_out_id(cv_conv *c, const nt_event *ev, uint32_t *dst);
/* After a flush of the output's metadata: every description is defined again on use. */
void cv_forget_metadata(cv_conv *c);
/* The conversion's tables released. */
void cv_meta_free(cv_conv *c);

/* A slice's first pass over the input (fd from where it is, rewound after, or the len bytes at data): the
 * window's code addresses; frames_known stays false when the input cannot be read twice or memory is short. */
void cv_frames_collect(cv_conv *c, int fd, const void *data, size_t len, const nt_convert_options *o);
/* Whether a method record of code [start, start + size) names a frame of the window (true when unknown). */
bool cv_frames_need(const cv_conv *c, uint64_t start, uint32_t size);
void cv_frames_free(cv_conv *c);

/* The parser callbacks that drive c's writer. */
void cv_callbacks(nt_callbacks *cb);

#endif
