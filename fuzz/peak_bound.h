/* The most memory a parser may hold under given limits, from each table's
 * growth rule: tables at twice their limit (doubling), the gather buffer at
 * one block, the UTF-8 scratch at twice the bound for one block's payload,
 * the metadata arena at twice its budget plus its chunk granularity.  Used by
 * the limits harness and the hostile-input suite to check memory_peak. */
#ifndef FUZZ_PEAK_BOUND_H
#define FUZZ_PEAK_BOUND_H

#include "parse/context.h"

static inline size_t fuzz_at_least(size_t a, size_t b) { return a > b ? a : b; }

static inline size_t fuzz_peak_bound(const nt_limits *l)
{
    size_t block = l->max_block_bytes;
    size_t total = sizeof(nt_parser);
    total += block;                                                          /* gather buffer */
    total += 2 * (4 * block + 16) + 1024; /* string scratch: a V6 name copied and repaired (4 bytes a byte) */
    total += fuzz_at_least(16, 2 * (size_t)l->max_metadata) * sizeof(nt_event_desc);
    total += fuzz_at_least(64, 4 * (size_t)l->max_metadata) * sizeof(uint32_t);
    total += 2 * (size_t)PS_META_DIRECT_IDS * sizeof(uint32_t);                /* direct metadata slots */
    total += 2 * (size_t)l->max_metadata_bytes + 2 * 65536 + 4096;           /* arena */
    total += fuzz_at_least(16, 2 * (size_t)l->max_fields) * sizeof(ps_raw_field);
    total += fuzz_at_least(16, 2 * (size_t)l->max_stacks) * sizeof(nt_stack); /* the stack table holds the nt_stack it hands out */
    total += fuzz_at_least(16, 2 * (size_t)l->max_stack_frames) * sizeof(uint64_t);
    total += fuzz_at_least(64, 8 * (size_t)l->max_threads) * sizeof(ps_thread_entry); /* a table a quarter full, and the old one while rehashing */
    total += fuzz_at_least(16, 2 * (block / 12 + 1)) * sizeof(nt_sp_thread);
    return total;
}

#endif
