/* Hand-made profiler streams for the aggregator tests: samples, stacks and
 * method/module/assembly records in the order and timing a test needs. */
#ifndef TEST_TRACE_BUILD_H
#define TEST_TRACE_BUILD_H

#include "streams.h"

#include <stdint.h>

/* Metadata ids the builder defines. */
enum { MD_SAMPLE = 1, MD_LOAD, MD_UNLOAD, MD_DCEND, MD_MODULE, MD_ASSEMBLY };

typedef struct pb {
    tb b;
    uint32_t ptr;
    uint32_t seq;
    /* the current event block */
    size_t block_pos;
    tb_event prev;
    bool in_block;
} pb;

/* Header (pointer size, clock frequency) and the metadata of every kind above. */
void pb_begin(pb *p, uint32_t pointer_size, int64_t freq);
/* One stack block defining ids first.. for the given stacks. */
void pb_stacks(pb *p, uint32_t first_id, uint32_t count, const uint64_t *const *ips, const uint32_t *depths);
/* One stack block defining stack id 1 as the single frame ip. */
void pb_one_frame_stack(pb *p, uint64_t ip);
void pb_sample(pb *p, uint64_t thread, uint32_t stack_id, int64_t ts, uint32_t type);
void pb_method(pb *p, uint32_t md, int64_t ts, uint64_t method_id, uint64_t module_id, uint64_t start,
               uint32_t size, const char *ns, const char *name);
void pb_module(pb *p, int64_t ts, uint64_t module_id, uint64_t assembly_id, const char *il_path);
void pb_assembly(pb *p, int64_t ts, uint64_t assembly_id, const char *name);
/* Close the open event block (events go into one block until then). */
void pb_flush(pb *p);
/* A sequence point (stack ids restart after it). */
void pb_sp(pb *p, int64_t ts);
/* Close everything and write the end-of-stream tag. */
void pb_end(pb *p);

#endif
