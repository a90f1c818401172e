/* C side of the Go binding: trampolines from the library's callbacks into
 * the exported Go functions (callbacks.go), and bulk copies that spare one
 * cgo call per sample. */
#ifndef NETTRACE_GO_GLUE_H
#define NETTRACE_GO_GLUE_H

#include <nettrace.h>
#include <nettrace_convert.h>
#include <nettrace_profile.h>
#include <nettrace_session.h>
#include <nettrace_trace.h>
#include <stdint.h>

/* One sample of an nt_trace, as Go builds its Sample from it. */
typedef struct ntgo_sample {
    int64_t time_ns;
    uint64_t thread_id;
    uint32_t type;
    uint32_t stack_index;
} ntgo_sample;

void ntgo_samples(const nt_trace *t, ntgo_sample *out, size_t n);

/* nt_convert (data NULL: read fd) or nt_convert_bytes into goWrite(handle). */
nt_status ntgo_convert(int fd, const void *data, size_t len, const nt_convert_options *opt, uintptr_t handle,
                       nt_convert_stats *stats);

/* One decoded field value, the union flattened for Go. */
typedef struct ntgo_field {
    const char *name;
    int kind;                /* nt_value_kind */
    bool in_array;
    int64_t i;
    uint64_t u;
    double f;
    const void *ptr;         /* string or bytes */
    size_t len;
    uint8_t guid[16];
} ntgo_field;

/* Which Go callbacks a streaming parser calls. */
enum {
    NTGO_HEADER = 1,
    NTGO_SAMPLE = 2,
    NTGO_METHOD = 4,
    NTGO_MODULE = 8,
    NTGO_ASSEMBLY = 16,
    NTGO_EVENT = 32
};

/* What a parser keeps besides calling Go: nothing, the whole trace (a
 * builder), or a trace per window (nt_trace_window). */
enum { NTGO_KEEP_NONE, NTGO_KEEP_TRACE, NTGO_KEEP_WINDOWS };

/* A parser whose callbacks go to what it keeps first, then to Go (handle). */
typedef struct ntgo_parser {
    nt_parser *parser;
    int keep_kind;
    void *keep;              /* nt_trace_builder or nt_trace_window; NULL after ntgo_parser_trace */
    nt_callbacks keep_cb;
    uintptr_t handle;
    unsigned want;
    int64_t frequency;       /* the header's, for the events' times */
    /* The events' field iteration, in C memory: a value may point into the
     * iterator, which cgo forbids for Go memory handed to C. */
    nt_field_iter it;
    ntgo_field field;
} ntgo_parser;

/* nt_field_next into an ntgo_field. */
bool ntgo_field_next(nt_field_iter *it, ntgo_field *out);

/* wcfg: with NTGO_KEEP_WINDOWS, the window object's configuration (NULL: defaults). */
ntgo_parser *ntgo_parser_new(uintptr_t handle, unsigned want, int keep_kind, const nt_limits *lim,
                             const nt_trace_window_config *wcfg);
/* Hand over the builder's trace (NULL unless NTGO_KEEP_TRACE); st is the parse's final status. */
nt_status ntgo_parser_trace(ntgo_parser *g, nt_status st, nt_trace **out);
/* Hand over the samples since the last window (NTGO_KEEP_WINDOWS). */
nt_status ntgo_parser_take_window(ntgo_parser *g, nt_trace **out);
/* The window object (NTGO_KEEP_WINDOWS; NULL otherwise): request windows and cuts are its calls. */
nt_trace_window *ntgo_parser_window(ntgo_parser *g);
void ntgo_parser_free(ntgo_parser *g);

enum { NTGO_FOLDED, NTGO_SPEEDSCOPE, NTGO_PPROF };
/* Export t to the Go io.Writer behind handle. */
nt_status ntgo_export(const nt_trace *t, int kind, const nt_export_options *opt, uintptr_t handle);

/* A session whose sink is the Go io.Writer behind handle. */
nt_session *ntgo_session_new(nt_session_config *cfg, uintptr_t handle);

#endif
