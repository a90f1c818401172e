/* The samples of the last seconds of a live stream, kept raw (time, thread,
 * type, ActivityId, instruction pointers) so that a window can be cut out of
 * them after the fact: the flight recorder and the request windows
 * (window.c).  Chunks in arrival order; whole chunks are dropped, oldest
 * first, when they fall out of the span the owner keeps or past the byte
 * bound (sample_log.c). */
#ifndef TR_SAMPLE_LOG_H
#define TR_SAMPLE_LOG_H

#include "nettrace.h"
#include "common/alloc.h"

/* A logged sample; its ips[nframes] follow it. */
typedef struct sl_sample {
    int64_t ticks, time_ns;
    uint64_t thread_id;
    uint32_t type, nframes;
    nt_event_labels labels;    /* zero when the sample came without an event */
} sl_sample;

typedef struct sl_log {
    cm_mem *mem;
    char **chunks;             /* chunks[0] is the oldest */
    size_t nchunks, chunks_cap;
    uint64_t bytes, samples;   /* held now */
    uint64_t max_bytes;
    int64_t dropped_through_ns; /* the newest time among dropped samples; INT64_MIN: none dropped */
} sl_log;

void sl_init(sl_log *l, cm_mem *mem, uint64_t max_bytes);
void sl_free(sl_log *l);
/* False when memory is short (the sample is not logged). */
bool sl_append(sl_log *l, const nt_sample *s);
/* Drop the chunks whose samples are all older than keep_from_ns (INT64_MAX: all). */
void sl_trim(sl_log *l, int64_t keep_from_ns);
/* fn on each logged sample with from_ns <= time < to_ns, in arrival order; a non-zero return stops it. */
int sl_each(const sl_log *l, int64_t from_ns, int64_t to_ns, int (*fn)(void *user, const sl_sample *s,
                                                                        const uint64_t *ips),
            void *user);
/* The span of the held samples' times; false when none are held. */
bool sl_span(const sl_log *l, int64_t *from_ns, int64_t *to_ns);
/* The lowest ticks of a held sample (INT64_MAX when none). */
int64_t sl_min_ticks(const sl_log *l);

#endif
