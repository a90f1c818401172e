/* The pieces of a pprof profile.proto message shared by the CPU exporter
 * (export_pprof.c) and the event profiles' (profile_pprof.c): protobuf
 * encoding into small buffers, the string table, one function and one
 * location per frame name, the time fields, and Sample messages whose
 * location ids are streamed (stacks may be deep).
 *
 * Profile: 1 sample_type, 2 sample, 3 mapping, 4 location, 5 function, 6 string_table,
 *          9 time_nanos, 10 duration_nanos, 11 period_type, 12 period, 14 default_sample_type
 * ValueType: 1 type, 2 unit (string indices)
 * Sample: 1 location_id (packed, leaf first), 2 value (packed), 3 label
 * Label: 1 key, 2 str, 3 num
 * Location: 1 id, 2 mapping_id, 3 address, 4 line;  Line: 1 function_id
 * Function: 1 id, 2 name, 3 system_name, 4 filename
 * Mapping: 1 id, 2 memory_start, 3 memory_limit, 5 filename, 7 has_functions
 *
 * One mapping per module a frame resolved to (its file from the module
 * record), spanning that module's sampled methods, and one more for the
 * frames no method record covers, so every location has a mapping with a
 * file name and pprof has a "main binary" to name. */
#ifndef EX_PB_H
#define EX_PB_H

#include "export/export_gzip.h"
#include "export/export_internal.h"

typedef struct pbuf {
    unsigned char d[4096];
    size_t n;
    bool overflow;
} pbuf;

void pb_varint(pbuf *b, uint64_t v);
void pb_uint(pbuf *b, uint32_t field, uint64_t v);
void pb_bytes(pbuf *b, uint32_t field, const void *p, size_t n);
/* One top-level field holding the message in m. */
void pb_emit_msg(ex_gzip *g, uint32_t field, const pbuf *m);
/* The next entry of the string table. */
void pb_emit_string(ex_gzip *g, const char *s, size_t n);
/* A sample_type (or, with field 11, period_type) of two string indices. */
void pb_emit_value_type(ex_gzip *g, uint32_t field, uint32_t type, uint32_t unit);
/* time_nanos (the trace's wall clock at first_ns, when the header has one),
 * duration_nanos (last - first + period) and period, as one chunk. */
void pb_emit_times(ex_gzip *g, const nt_trace *t, int64_t first_ns, int64_t last_ns, int64_t period);
/* For each name i of nm: its string (index first_string + i), function i + 1
 * and location i + 1 (with the address when the frame is unresolved), then
 * the mappings (their file names after the frame names in the string table);
 * *next_string: the string index after them.  m: scratch memory. */
nt_status pb_emit_names(ex_gzip *g, cm_mem *m, const nt_trace *t, const ex_names *nm, uint32_t first_string,
                        uint32_t *next_string);

/* A Sample label: a number (num) or a string index (str). */
typedef struct pb_label {
    uint32_t key;
    bool is_num;
    uint64_t value;
} pb_label;

/* One Sample: the stack's frame ids ids[0 .. depth) (leaf first) as
 * location ids, their name indices of_frame[id] + 1; the values, the labels. */
void pb_emit_sample(ex_gzip *g, const uint32_t *ids, const uint32_t *of_frame, uint32_t depth, const int64_t *vals,
                    size_t nvals, const pb_label *labels, size_t nlabels);

#endif
