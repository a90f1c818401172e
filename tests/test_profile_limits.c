/* What an event profile holds is bounded by named limits (issue 21, item 10):
 * GCs in the timeline, distinct labels (allocated type names, exception
 * types and messages), threads in GC suspensions, in contention waits and
 * among the sampled ones.  Each breach is NT_ERR_LIMIT naming the limit in
 * the message, and the profile still holds what came before it. */
#include <criterion/criterion.h>

#include "nettrace_profile.h"
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t define(nt_writer *w, uint32_t id, uint32_t version)
{
    nt_event_desc d = { .provider = NT_PROVIDER_RUNTIME, .event_id = id, .version = version, .level = 4 };
    uint32_t md;
    cr_assert_eq(nt_writer_define(w, &d, &md), NT_OK, "%s", nt_writer_message(w));
    return md;
}

static void event(nt_writer *w, uint32_t md, uint64_t thread, int64_t ts, const void *payload, uint32_t size)
{
    nt_writer_event e = { .metadata_id = md, .thread_id = thread, .timestamp = ts, .payload = payload,
                          .payload_size = size };
    cr_assert_eq(nt_writer_write_event(w, &e), NT_OK, "%s", nt_writer_message(w));
}

typedef enum what { GCS, LABELS, SUSPENSIONS, CONTENTIONS, SAMPLES } what;

/* n events of one kind, each new: a GC, a type name, a thread. */
static nt_membuf make(what k, uint32_t n)
{
    nt_membuf out = { 0 };
    nt_writer *w = nt_writer_new(NULL, nt_membuf_write, &out, NULL);
    cr_assert(w);
    uint32_t md = k == GCS ? define(w, 1, 1) : k == LABELS ? define(w, 10, 2) : k == SUSPENSIONS ? define(w, 9, 1)
                  : k == CONTENTIONS ? define(w, 81, 0) : 0;
    for (uint32_t i = 0; i < n; i++) {
        uint8_t p[64] = { 0 };
        switch (k) {
        case GCS: /* GCStart V1: Count, Depth, Reason, Type, ClrInstanceID */
            memcpy(p, &i, 4);
            event(w, md, 5, 100 + i, p, 18);
            break;
        case LABELS: { /* GCAllocationTick V2: ..., TypeName "T<i>" (UTF-16) at 26, HeapIndex */
            char name[16];
            int len = snprintf(name, sizeof name, "T%u", i);
            for (int c = 0; c < len; c++)
                p[26 + 2 * c] = (uint8_t)name[c];
            event(w, md, 5, 100 + i, p, 26 + 2 * (uint32_t)len + 2 + 4);
            break;
        }
        case SUSPENSIONS: /* GCSuspendEEBegin V1: Reason u32, Count u32, ClrInstanceID u16 */
            event(w, md, 1000 + i, 100 + i, p, 10);
            break;
        case CONTENTIONS: /* ContentionStart V0: flags u8, ClrInstanceID u16 */
            event(w, md, 1000 + i, 100 + i, p, 3);
            break;
        case SAMPLES: {
            nt_writer_event hdr = { .thread_id = 1000 + i, .timestamp = 100 + i };
            cr_assert_eq(nt_writer_sample(w, &hdr, NT_SAMPLE_MANAGED), NT_OK);
            break;
        }
        }
    }
    cr_assert_eq(nt_writer_finish(w), NT_OK, "%s", nt_writer_message(w));
    nt_writer_free(w);
    return out;
}

static nt_status build(const nt_membuf *in, const nt_trace_limits *lim, nt_profile **p, char *msg, size_t size)
{
    nt_trace_options to = { .trace_limits = lim };
    nt_profile_options po = { .trace = &to };
    return nt_profile_from_buffer(in->data, in->len, &po, p, msg, size);
}

/* Under the limit the profile builds; one over, NT_ERR_LIMIT naming `field`, the profile delivered. */
static void check(what k, const nt_trace_limits *lim, uint32_t max, const char *field)
{
    char msg[256];
    nt_profile *p = NULL;
    nt_membuf fits = make(k, max), over = make(k, max + 50);
    cr_assert_eq(build(&fits, lim, &p, msg, sizeof msg), NT_OK, "%s: %s", field, msg);
    nt_profile_free(p);
    p = NULL;
    cr_assert_eq(build(&over, lim, &p, msg, sizeof msg), NT_ERR_LIMIT, "%s: %s", field, msg);
    cr_expect(strstr(msg, field), "the message names %s: %s", field, msg);
    cr_assert(p, "%s: what was read before the limit is delivered", field);
    if (k == GCS)
        cr_expect_eq(nt_profile_gc_count(p), max);
    if (k == LABELS) {
        nt_profile_totals at;
        nt_profile_totals_get(p, NT_PROFILE_ALLOC, &at);
        cr_expect_eq(at.events, max);
    }
    nt_profile_free(p);
    nt_membuf_free(&fits);
    nt_membuf_free(&over);
}

Test(profile_limits, gcs_labels_and_threads_are_bounded_by_named_limits)
{
    nt_trace_limits lim = { .struct_size = sizeof lim, .max_gcs = 300, .max_labels = 300, .max_threads = 300 };
    check(GCS, &lim, 300, "max_gcs");
    check(LABELS, &lim, 300, "max_labels");
    check(SUSPENSIONS, &lim, 300, "max_threads");
    check(CONTENTIONS, &lim, 300, "max_threads");
    check(SAMPLES, &lim, 300, "max_threads");
}

Test(profile_limits, the_gc_default_bounds_never_ended_gcs)
{
    /* GCStarts that never end cost 160 bytes each without a limit (1 M of them: 283 MB) */
    check(GCS, NULL, NT_DEFAULT_MAX_GCS, "max_gcs");
}
