/* Version, status names, limits defaults and clock conversion. */
#include "common/abi.h"
#include "common/limits.h"
#include "common/status.h"

#include <stdio.h>
#include <string.h>

const char *nt_version(void) { return NT_VERSION_STRING; }

unsigned nt_version_number(void) { return NT_VERSION_NUMBER; }

/* A status's short name or its sentence, both from the one status table. */
static const char *status_text(nt_status s, bool sentence)
{
    switch (s) {
#define CM_STATUS_TEXT_(sym, num, name, desc) case sym: return sentence ? desc : name;
        NT_STATUS_MAP(CM_STATUS_TEXT_)
#undef CM_STATUS_TEXT_
    }
    return sentence ? "unknown status" : "unknown";
}

const char *nt_status_name(nt_status s) { return status_text(s, false); }

const char *nt_status_describe(nt_status s) { return status_text(s, true); }

/* Each limit with its default, once, for both functions below. */
#define CM_LIMITS_MAP_(X)                                                                                    \
    X(max_block_bytes, NT_DEFAULT_MAX_BLOCK_BYTES)                                                          \
    X(max_metadata, NT_DEFAULT_MAX_METADATA)                                                                \
    X(max_metadata_bytes, NT_DEFAULT_MAX_METADATA_BYTES)                                                    \
    X(max_fields, NT_DEFAULT_MAX_FIELDS)                                                                    \
    X(max_stacks, NT_DEFAULT_MAX_STACKS)                                                                    \
    X(max_stack_frames, NT_DEFAULT_MAX_STACK_FRAMES)                                                        \
    X(max_threads, NT_DEFAULT_MAX_THREADS)                                                                  \
    X(max_array_elements, NT_DEFAULT_MAX_ARRAY_ELEMENTS)                                                    \
    X(max_field_depth, NT_DEFAULT_MAX_FIELD_DEPTH)

/* What a trace and an event profile may hold, with their defaults. */
#define CM_TRACE_LIMITS_MAP_(X)                                                                              \
    X(max_samples, NT_DEFAULT_MAX_SAMPLES)                                                                  \
    X(max_frames, NT_DEFAULT_MAX_FRAMES)                                                                    \
    X(max_variants, NT_DEFAULT_MAX_VARIANTS)                                                                \
    X(max_threads, NT_DEFAULT_MAX_TRACE_THREADS)                                                            \
    X(max_gcs, NT_DEFAULT_MAX_GCS)                                                                          \
    X(max_labels, NT_DEFAULT_MAX_LABELS)

size_t cm_failure_text(char *msg, size_t size, size_t what_max, nt_status s, const char *fmt, va_list ap)
{
    char what[CM_FAILURE_WHAT_MAX];
    vsnprintf(what, what_max < sizeof what ? what_max : sizeof what, fmt, ap);
    int n = snprintf(msg, size, "%s: %s", nt_status_name(s), what);
    if (n < 0)
        return 0;
    return (size_t)n < size ? (size_t)n : size - 1;
}

static void limits_defaults(nt_limits *lim)
{
    memset(lim, 0, sizeof *lim);
#define CM_LIMIT_DEFAULT_(field, value) lim->field = value;
    CM_LIMITS_MAP_(CM_LIMIT_DEFAULT_)
#undef CM_LIMIT_DEFAULT_
}

void nt_limits_default(nt_limits *lim)
{
    nt_limits d;
    limits_defaults(&d);
    ABI_OUT(nt_limits, lim, &d);
}

void cm_limits_resolve(nt_limits *out, const nt_limits *given)
{
    limits_defaults(out);
    if (!given)
        return;
#define CM_LIMIT_TAKE_(field, value) if (given->field) out->field = given->field;
    CM_LIMITS_MAP_(CM_LIMIT_TAKE_)
#undef CM_LIMIT_TAKE_
}

void cm_trace_limits_resolve(nt_trace_limits *out, const nt_trace_limits *given)
{
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
#define CM_LIMIT_DEFAULT_(field, value) out->field = value;
    CM_TRACE_LIMITS_MAP_(CM_LIMIT_DEFAULT_)
#undef CM_LIMIT_DEFAULT_
    if (!given)
        return;
#define CM_LIMIT_TAKE_(field, value) if (given->field) out->field = given->field;
    CM_TRACE_LIMITS_MAP_(CM_LIMIT_TAKE_)
#undef CM_LIMIT_TAKE_
}

int64_t nt_ticks_to_ns(int64_t ticks, int64_t frequency)
{
    if (frequency <= 0)
        return 0;
    if (frequency == 1000000000) /* a nanosecond clock (Linux, macOS): the ticks are the time */
        return ticks;
    /* Common clocks (1 GHz on Linux and macOS, 10 MHz on Windows) divide 1e9:
     * one multiplication instead of a 128-bit division per sample. */
    if (1000000000 % frequency == 0) {
        int64_t m = 1000000000 / frequency;
        if (ticks > INT64_MAX / m)
            return INT64_MAX;
        if (ticks < INT64_MIN / m)
            return INT64_MIN;
        return ticks * m;
    }
    /* Two 64-bit divisions while r * 1e9 fits: q = floor(t / f), r in [0, f). */
    if (frequency < (INT64_MAX / 1000000000)) {
        int64_t q = ticks / frequency, r = ticks % frequency;
        if (r < 0) {
            q -= 1;
            r += frequency;
        }
        if (q <= INT64_MAX / 1000000000 - 1 && q >= INT64_MIN / 1000000000)
            return q * 1000000000 + (r * 1000000000) / frequency;
    }
#if defined(__SIZEOF_INT128__)
    __extension__ typedef __int128 i128;
    i128 num = (i128)ticks * 1000000000;
    i128 q = num / frequency;
    if (num % frequency != 0 && num < 0)
        q -= 1; /* floor, not truncation */
    if (q > INT64_MAX)
        return INT64_MAX;
    if (q < INT64_MIN)
        return INT64_MIN;
    return (int64_t)q;
#else
    /* floor(t * 1e9 / f) via q = floor(t / f), r = t - q f in [0, f). */
    int64_t q = ticks / frequency, r = ticks % frequency;
    if (r < 0) {
        q -= 1;
        r += frequency;
    }
    if (q > INT64_MAX / 1000000000)
        return INT64_MAX;
    if (q < INT64_MIN / 1000000000)
        return INT64_MIN;
    /* r * 1e9 may overflow for frequencies above ~9.2e9: split 1e9 = 1e5 * 1e4. */
    uint64_t ur = (uint64_t)r, uf = (uint64_t)frequency;
    uint64_t a = ur * 100000u;          /* < f * 1e5 */
    uint64_t qa = a / uf, ra = a % uf;  /* r*1e5 = qa f + ra */
    uint64_t frac = qa * 10000u + (ra * 10000u) / uf;
    int64_t base = q * 1000000000;
    if (base > INT64_MAX - (int64_t)frac)
        return INT64_MAX;
    return base + (int64_t)frac;
#endif
}
