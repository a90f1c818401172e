/* Test helper: write a stream with nt_writer into memory, and record every
 * parser callback with deep copies so tests can compare what they wrote
 * with what came back. */
#ifndef TEST_WRITER_REC_H
#define TEST_WRITER_REC_H

#include "nettrace_writer.h"

typedef struct rec_event {
    nt_event ev;            /* desc, stack and payload pointers replaced by copies below */
    uint32_t desc_version, desc_opcode, desc_level;
    uint64_t desc_keywords;
    nt_event_kind desc_kind;
    uint8_t *payload;
    uint32_t stack_count;
    uint64_t *stack_ips;
} rec_event;

typedef struct rec_meta {
    nt_event_desc d;        /* strings and fields copied */
} rec_meta;

typedef struct rec_sp {
    nt_sequence_point sp;
    nt_sp_thread *threads;
} rec_sp;

typedef struct rec {
    nt_trace_info info;
    int traces;
    rec_meta *meta; size_t nmeta;
    rec_event *ev; size_t nev;
    nt_sample *samples; size_t nsamples;
    nt_method *methods; size_t nmethods;
    nt_module *modules; size_t nmodules;
    nt_assembly *assemblies; size_t nassemblies;
    rec_sp *sps; size_t nsps;
    size_t nstacks;
    nt_parser_stats stats;
    nt_status status;
    char msg[256];
} rec;

/* Parse data (in chunks of `chunk` bytes, 0 = whole) into r. */
nt_status rec_parse(rec *r, const uint8_t *data, size_t len, size_t chunk);
void rec_free(rec *r);

/* A writer into a fresh membuf (opt NULL = defaults). */
nt_writer *rec_writer(nt_membuf *out, const nt_writer_options *opt);

#endif

/* Write one of every typed event (samples of every type, every method,
 * module and assembly form and version) with o, parse it back in every
 * chunking given, and assert each typed callback has the written fields. */
void rec_check_typed_roundtrip(const nt_writer_options *o);

/* Count the differences between two recordings in everything a consumer
 * sees, except the format version and byte offsets (names the first one in
 * *what when non-NULL). */
size_t rec_compare(const rec *a, const rec *b, const char **what);
