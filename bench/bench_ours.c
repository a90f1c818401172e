/* bench_ours: libnettrace's side of the TraceEvent benchmark
 * (bench/traceevent.sh), one job per process so bench_run measures each
 * alone, as it does TraceEvent's.
 *
 *   bench_ours parse FILE   the parser reads every event of FILE with every
 *                           callback set, each touching its arguments (what
 *                           EventPipeEventSource does with a handler on every
 *                           event); prints "events N"
 *   bench_ours fields FILE  the parser reads every event and every value of
 *                           every event's payload fields is decoded and
 *                           touched (what a TraceEvent AllEvents handler
 *                           reading every PayloadValue(i) does); prints
 *                           "events N values N"
 *   bench_ours parse-lazy FILE   the same with lazy names (nt_parser_set_lazy_names):
 *                           method names touched as UTF-16 spans, converted by nobody
 *   bench_ours parse-bare FILE   no callback set: the parser's own cost
 *                           (events counted from nt_parser_stats_get)
 *   bench_ours trace FILE   what nt_trace_from_file does (parse, aggregate, resolve
 *                           every frame to its method record), then every
 *                           sample's frames walked and each frame's resolved
 *                           names touched (what TraceLog + walking each
 *                           sample's CallStack for CodeAddress.FullMethodName
 *                           and ModuleName does: strings made once per method,
 *                           read per frame); prints "samples N frames N"
 *
 * Both feed the parser FILE mapped (mmap), 1 MiB at a time, each MiB
 * dropped from the mapping once parsed so that about 1 MiB of the file is
 * resident at once: the parser's own cost, without a copy.  BENCH_READ=1 in
 * the environment reads with read() in 1 MiB chunks into a cache-line-aligned
 * buffer instead, the way nt_trace_from_file does (about 2 ms more per
 * 100 MB on the benchmark machine; see bench/README.md).  BENCH_MEMORY=1
 * prints the trace's own memory figures (nt_trace_stats) on standard error. */
#include "touch_callbacks.h"
#include "nettrace_profile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (1u << 20)

/* Feed the whole of FILE to p; returns the parser's final status, or
 * NT_ERR_IO (with a message) when the file cannot be read. */
static nt_status feed_file(nt_parser *p, const char *path)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(path);
        if (fd >= 0)
            close(fd);
        return NT_ERR_IO;
    }
    nt_status s = NT_OK;
    const char *mode = getenv("BENCH_READ");
    if (!(mode && strcmp(mode, "1") == 0) && S_ISREG(st.st_mode) && st.st_size > 0) {
        /* The whole file mapped, read in order (the kernel maps pages ahead
         * of the faults), each 1 MiB dropped from the mapping once parsed so
         * that little of it is resident at a time.  Fastest of the ways
         * tried: 1 MiB windows with MAP_POPULATE took 15% more CPU. */
        size_t len = (size_t)st.st_size;
        uint8_t *m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            perror(path);
            close(fd);
            return NT_ERR_IO;
        }
        madvise(m, len, MADV_SEQUENTIAL);
        for (size_t off = 0; s == NT_OK && off < len; off += CHUNK) {
            size_t n = len - off < CHUNK ? len - off : CHUNK;
            s = nt_parser_feed(p, m + off, n);
            madvise(m + off, n, MADV_DONTNEED);
        }
        munmap(m, len);
    } else {
        /* Cache-line aligned, as nt_trace_from_file's buffer: read() into a
         * buffer 16 bytes past a line costs twice as much here. */
        uint8_t *buf = aligned_alloc(64, CHUNK);
        ssize_t n;
        while (buf && s == NT_OK && (n = read(fd, buf, CHUNK)) > 0)
            s = nt_parser_feed(p, buf, (size_t)n);
        free(buf);
    }
    close(fd);
    return s == NT_OK ? nt_parser_finish(p) : s;
}

static int do_parse(const char *path, bool lazy_names, bool bare)
{
    nt_parser *p = nt_parser_new(bare ? NULL : &bench_touch_all, NULL, NULL, NULL);
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        return 1;
    }
    nt_parser_set_lazy_names(p, lazy_names);
    nt_status st = feed_file(p, path);
    if (bare) {
        nt_parser_stats stats;
        nt_parser_stats_get(p, &stats);
        bench_events = stats.events;
    }
    nt_parser_free(p);
    if (st != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, nt_status_name(st));
        return 1;
    }
    printf("events %llu\n", (unsigned long long)bench_events);
    return 0;
}

static uint64_t field_values;

static int touch_fields(void *user, const nt_event *ev)
{
    (void)user;
    bench_events++;
    nt_field_iter it;
    nt_field_value v;
    nt_event_fields_begin(ev, &it);
    while (nt_field_next(&it, &v)) {
        field_values++;
        bench_sink += v.kind == NT_VALUE_STRING ? (uint64_t)v.v.str.len + (uint8_t)v.v.str.ptr[0] : v.v.u;
    }
    bench_sink += it.leftover;
    return 0;
}

static int do_fields(const char *path)
{
    nt_callbacks cb = { .event = touch_fields };
    nt_parser *p = nt_parser_new(&cb, NULL, NULL, NULL);
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        return 1;
    }
    nt_status st = feed_file(p, path);
    nt_parser_free(p);
    if (st != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, nt_status_name(st));
        return 1;
    }
    printf("events %llu values %llu\n", (unsigned long long)bench_events, (unsigned long long)field_values);
    return 0;
}

/* With BENCH_MEMORY set: the trace's own memory figures on standard error
 * (standard output is compared with TraceEvent's). */
static void report_memory(const nt_trace *t)
{
    if (!getenv("BENCH_MEMORY"))
        return;
    nt_trace_stats st;
    nt_trace_stats_get(t, &st);
    fprintf(stderr, "trace memory %zu peak %zu stacks %llu frames %zu\n", st.memory, st.memory_peak,
            (unsigned long long)st.stacks, nt_trace_frame_count(t));
}

/* nt_trace_from_file's work, through the builder so the file is read the
 * same way as for do_parse. */
static int do_trace(const char *path)
{
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    nt_callbacks cb;
    nt_trace_builder_callbacks(&cb);
    nt_parser *p = b ? nt_parser_new(&cb, b, NULL, NULL) : NULL;
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        nt_trace_builder_free(b);
        return 1;
    }
    nt_status st = feed_file(p, path);
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, st, &t);
    if (st != NT_OK || fs != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, st != NT_OK ? nt_parser_message(p) : nt_status_name(fs));
        nt_parser_free(p);
        nt_trace_free(t);
        return 1;
    }
    nt_parser_free(p);
    uint64_t frames = 0;
    size_t n = nt_trace_sample_count(t);
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        for (uint32_t k = 0; k < s.frame_count; k++) {
            const nt_frame *f = nt_trace_frame_at(t, s.frame_ids[k]);
            /* Like .Length of TraceEvent's cached strings: O(1) per frame. */
            bench_sink += (uint8_t)f->method->name[0] + (uint8_t)f->method->declaring_type[0] +
                      (uint8_t)f->method->assembly[0];
            frames++;
        }
    }
    printf("samples %zu frames %llu\n", n, (unsigned long long)frames);
    report_memory(t);
    nt_trace_free(t);
    return 0;
}

/* The event profiles: build an nt_profile (allocation ticks, exceptions,
 * contention merged per stack, thread and label, stacks resolved), touch the
 * names of every record's frames, and print the totals TraceEvent's side
 * prints for the same aggregation. */
static int do_profiles(const char *path)
{
    static const nt_profile_options events_only = { .events_only = true };
    nt_profile_builder *b = nt_profile_builder_new(&events_only, NULL);
    nt_callbacks cb;
    nt_profile_builder_callbacks(&cb);
    nt_parser *p = b ? nt_parser_new(&cb, b, NULL, NULL) : NULL;
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        nt_profile_builder_free(b);
        return 1;
    }
    nt_status st = feed_file(p, path);
    nt_profile *pr = NULL;
    nt_status fs = nt_profile_builder_finish(b, p, st, &pr);
    if (st != NT_OK || fs != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, st != NT_OK ? nt_parser_message(p) : nt_status_name(fs));
        nt_parser_free(p);
        nt_profile_free(pr);
        return 1;
    }
    nt_parser_free(p);
    const nt_trace *t = nt_profile_trace(pr);
    for (size_t i = 0; i < nt_profile_record_count(pr); i++) {
        nt_trace_stack s = nt_trace_stack_at(t, nt_profile_record_at(pr, i).stack_index);
        for (uint32_t k = 0; k < s.frame_count; k++)
            bench_sink += (uint8_t)nt_trace_frame_at(t, s.frame_ids[k])->method->name[0] + (uint8_t)nt_trace_frame_at(t, s.frame_ids[k])->method->assembly[0];
    }
    report_memory(t);
    nt_profile_totals a, e, c;
    nt_profile_totals_get(pr, NT_PROFILE_ALLOC, &a);
    nt_profile_totals_get(pr, NT_PROFILE_EXCEPTIONS, &e);
    nt_profile_totals_get(pr, NT_PROFILE_CONTENTION, &c);
    printf("alloc %llu %lld exceptions %llu contention %llu %lld\n", (unsigned long long)a.events, (long long)a.value,
           (unsigned long long)e.events, (unsigned long long)(c.events - c.open), (long long)c.value);
    nt_profile_free(pr);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "profiles") == 0)
        return do_profiles(argv[2]);
    if (argc == 3 && strcmp(argv[1], "parse") == 0)
        return do_parse(argv[2], false, false);
    if (argc == 3 && strcmp(argv[1], "parse-lazy") == 0)
        return do_parse(argv[2], true, false);
    if (argc == 3 && strcmp(argv[1], "parse-bare") == 0)
        return do_parse(argv[2], false, true);
    if (argc == 3 && strcmp(argv[1], "trace") == 0)
        return do_trace(argv[2]);
    if (argc == 3 && strcmp(argv[1], "fields") == 0)
        return do_fields(argv[2]);
    fprintf(stderr, "usage: bench_ours parse|parse-lazy|parse-bare|fields|trace|profiles FILE\n");
    return 2;
}
