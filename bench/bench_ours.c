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
 *   bench_ours trace-warm FILE RUNS   the trace job RUNS times in this one
 *                           process; prints per run
 *                           "run I wall S cpu S samples N frames N" (wall:
 *                           CLOCK_MONOTONIC, cpu: getrusage user + system),
 *                           as BenchTraceEvent tracelog-warm does for TraceLog,
 *                           then "parse S resolve S walk S": the CPU time of
 *                           each phase (see trace_once), and "bare S": the CPU
 *                           time of parse-bare with lazy names, run after
 *                           each run (not in its times), the job's floor
 *
 * Every job feeds the parser FILE mapped (mmap), 1 MiB at a time, each MiB
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
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

/* The parser over FILE, every callback touching its arguments or (bare)
 * none; the events counted in bench_events.  Returns 0, or 1 with a
 * message. */
static int parse_once(const char *path, bool lazy_names, bool bare)
{
    nt_parser *p = nt_parser_new(bare ? NULL : &bench_touch_all, NULL, NULL, NULL);
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        return 1;
    }
    nt_parser_set_lazy_names(p, lazy_names);
    nt_status st = feed_file(p, path);
    if (bare) {
        nt_parser_stats stats = { 0 };
        nt_parser_stats_get(p, &stats);
        bench_events = stats.events;
    }
    nt_parser_free(p);
    if (st != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, nt_status_name(st));
        return 1;
    }
    return 0;
}

static int do_parse(const char *path, bool lazy_names, bool bare)
{
    if (parse_once(path, lazy_names, bare) != 0)
        return 1;
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
    nt_trace_stats st = { 0 };
    nt_trace_stats_get(t, &st);
    fprintf(stderr, "trace memory %zu peak %zu stacks %llu frames %zu\n", st.memory, st.memory_peak,
            (unsigned long long)st.stacks, nt_trace_frame_count(t));
}

static double mono_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* User + system time of this process (all threads), as bench_run reads a
 * child's and TraceEvent's side reads its own (getrusage). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

/* The file read with lazy names (as nt_trace_from_file and
 * nt_profile_from_file do: the builder converts only the names it keeps)
 * into builder b through its callbacks cb; the read's status in *st.  The
 * parser, or NULL (memory short, said) when b or the parser is missing. */
static nt_parser *read_into(const char *path, void *b, const nt_callbacks *cb, nt_status *st)
{
    nt_parser *p = b ? nt_parser_new(cb, b, NULL, NULL) : NULL;
    if (!p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        return NULL;
    }
    nt_parser_set_lazy_names(p, true);
    *st = feed_file(p, path);
    return p;
}

/* After the builder's finish: frees the parser; 1 with the reason when the
 * read (st) or the finish (fs) failed, else 0. */
static int read_failed(const char *path, nt_parser *p, nt_status st, nt_status fs)
{
    int failed = st != NT_OK || fs != NT_OK;
    if (failed)
        fprintf(stderr, "bench_ours: %s: %s\n", path, st != NT_OK ? nt_parser_message(p) : nt_status_name(fs));
    nt_parser_free(p);
    return failed;
}

/* The names of a stack's frames touched, like .Length of TraceEvent's cached
 * FullMethodName and ModuleName: O(1) per frame.  Summed in a local, added
 * to the volatile sink once per stack by the caller (a load and a store of
 * the sink per frame cost 5% of the 100 MB job's instructions; TraceEvent's
 * side sums the same way). */
static uint64_t touch_frames(const nt_trace *t, const uint32_t *ids, uint32_t n)
{
    uint64_t sum = 0;
    for (uint32_t k = 0; k < n; k++) {
        const nt_trace_method *m = nt_trace_frame_at(t, ids[k])->method;
        sum += (uint8_t)m->name[0] + (uint8_t)m->declaring_type[0] + (uint8_t)m->assembly[0];
    }
    return sum;
}

/* The CPU seconds of trace_once's three phases. */
typedef struct phase_cpu {
    double parse;   /* the file parsed, stacks interned, records kept aside */
    double resolve; /* nt_trace_builder_finish: sort, resolve, write the frames */
    double walk;    /* every sample's frames walked, the trace freed */
} phase_cpu;

/* nt_trace_from_file's work, through the builder so the file is read the
 * same way as for do_parse, then every sample's frames walked; the counts go
 * to *samples and *frames, each phase's CPU time to *ph.  Returns 0, or 1
 * with a message. */
static int trace_once(const char *path, size_t *samples, uint64_t *frames, phase_cpu *ph)
{
    double c0 = cpu_seconds();
    nt_trace_builder *b = nt_trace_builder_new(NULL);
    nt_callbacks cb = { 0 };
    nt_trace_builder_callbacks(&cb);
    nt_status st;
    nt_parser *p = read_into(path, b, &cb, &st);
    if (!p) {
        nt_trace_builder_free(b);
        return 1;
    }
    double c1 = cpu_seconds();
    nt_trace *t = NULL;
    nt_status fs = nt_trace_builder_finish(b, p, st, &t);
    if (read_failed(path, p, st, fs)) {
        nt_trace_free(t);
        return 1;
    }
    double c2 = cpu_seconds();
    uint64_t nframes = 0;
    size_t n = nt_trace_sample_count(t);
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        bench_sink += touch_frames(t, s.frame_ids, s.frame_count);
        nframes += s.frame_count;
    }
    *samples = n;
    *frames = nframes;
    report_memory(t);
    nt_trace_free(t);
    double c3 = cpu_seconds();
    *ph = (phase_cpu){ c1 - c0, c2 - c1, c3 - c2 };
    return 0;
}

static int do_trace(const char *path)
{
    size_t samples;
    uint64_t frames;
    phase_cpu ph;
    if (trace_once(path, &samples, &frames, &ph) != 0)
        return 1;
    printf("samples %zu frames %llu\n", samples, (unsigned long long)frames);
    return 0;
}

/* The resolved job RUNS times in this process (the page cache, the
 * allocator and the code warm after the first), one line per run with its
 * wall and CPU time, the format BenchTraceEvent tracelog-warm prints. */
static int do_trace_warm(const char *path, const char *runs_arg)
{
    int runs = atoi(runs_arg);
    if (runs < 1) {
        fprintf(stderr, "bench_ours: trace-warm: RUNS must be a positive number, not '%s'\n", runs_arg);
        return 2;
    }
    for (int r = 1; r <= runs; r++) {
        size_t samples;
        uint64_t frames;
        phase_cpu ph;
        double t0 = mono_seconds(), c0 = cpu_seconds();
        if (trace_once(path, &samples, &frames, &ph) != 0)
            return 1;
        double t1 = mono_seconds(), c1 = cpu_seconds();
        /* The floor the job stands on, outside its times: the parser alone,
         * no callbacks, names lazy, fed the same way. */
        if (parse_once(path, true, true) != 0)
            return 1;
        double c2 = cpu_seconds();
        printf("run %d wall %.6f cpu %.6f samples %zu frames %llu parse %.6f resolve %.6f walk %.6f bare %.6f\n", r,
               t1 - t0, c1 - c0, samples, (unsigned long long)frames, ph.parse, ph.resolve, ph.walk, c2 - c1);
    }
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
    nt_callbacks cb = { 0 };
    nt_profile_builder_callbacks(&cb);
    nt_status st;
    nt_parser *p = read_into(path, b, &cb, &st);
    if (!p) {
        nt_profile_builder_free(b);
        return 1;
    }
    nt_profile *pr = NULL;
    nt_status fs = nt_profile_builder_finish(b, p, st, &pr);
    if (read_failed(path, p, st, fs)) {
        nt_profile_free(pr);
        return 1;
    }
    const nt_trace *t = nt_profile_trace(pr);
    for (size_t i = 0; i < nt_profile_record_count(pr); i++) {
        nt_trace_stack s = nt_trace_stack_at(t, nt_profile_record_at(pr, i).stack_index);
        bench_sink += touch_frames(t, s.frame_ids, s.frame_count);
    }
    report_memory(t);
    nt_profile_totals a = { 0 }, e = { 0 }, c = { 0 };
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
    if (argc == 4 && strcmp(argv[1], "trace-warm") == 0)
        return do_trace_warm(argv[2], argv[3]);
    if (argc == 3 && strcmp(argv[1], "fields") == 0)
        return do_fields(argv[2]);
    fprintf(stderr, "usage: bench_ours parse|parse-lazy|parse-bare|fields|trace|profiles FILE\n"
                    "       bench_ours trace-warm FILE RUNS\n");
    return 2;
}
