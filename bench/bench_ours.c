/* bench_ours: libnettrace's side of the TraceEvent benchmark
 * (bench/traceevent.sh), one job per process so bench_run measures each
 * alone, as it does TraceEvent's.
 *
 *   bench_ours parse FILE   the parser reads every event of FILE with every
 *                           callback set, each touching its arguments (what
 *                           EventPipeEventSource does with a handler on every
 *                           event); prints "events N"
 *   bench_ours trace FILE   nt_trace_from_file (parse, aggregate, resolve
 *                           every frame to its method record), then every
 *                           sample's frames walked and each frame's resolved
 *                           names touched (what TraceLog + walking each
 *                           sample's CallStack for CodeAddress.FullMethodName
 *                           and ModuleName does: strings made once per method,
 *                           read per frame); prints "samples N frames N"
 *
 * FILE is read with read() in 1 MiB chunks, as a reader of a file would. */
#include "nettrace_trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHUNK (1u << 20)

static volatile uint64_t g_sink;
static uint64_t g_events;

static int cb_trace(void *u, const nt_trace_info *t) { (void)u; g_sink += (uint64_t)t->qpc_frequency; return 0; }
static int cb_meta(void *u, const nt_event_desc *d) { (void)u; g_sink += d->event_id + strlen(d->provider); return 0; }
static int cb_event(void *u, const nt_event *e)
{
    (void)u;
    g_events++;
    g_sink += (uint64_t)e->timestamp + e->payload_size + e->thread_id;
    return 0;
}
static int cb_stack(void *u, const nt_stack *s) { (void)u; g_sink += s->count ? s->ips[0] : 0; return 0; }
static int cb_sample(void *u, const nt_sample *s) { (void)u; g_sink += s->thread_id + (uint64_t)s->time_ns; return 0; }
static int cb_method(void *u, const nt_method *m) { (void)u; g_sink += m->start_address + strlen(m->name); return 0; }
static int cb_module(void *u, const nt_module *m) { (void)u; g_sink += m->module_id; return 0; }
static int cb_assembly(void *u, const nt_assembly *a) { (void)u; g_sink += a->assembly_id; return 0; }
static int cb_sp(void *u, const nt_sequence_point *sp) { (void)u; g_sink += sp->thread_count; return 0; }

static const nt_callbacks ALL = { cb_trace, cb_meta, cb_event, cb_stack, cb_sample,
                                  cb_method, cb_module, cb_assembly, cb_sp };

static int do_parse(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 1;
    }
    uint8_t *buf = malloc(CHUNK);
    nt_parser *p = nt_parser_new(&ALL, NULL, NULL, NULL);
    if (!buf || !p) {
        fprintf(stderr, "bench_ours: out of memory\n");
        return 1;
    }
    nt_status st = NT_OK;
    ssize_t n;
    while (st == NT_OK && (n = read(fd, buf, CHUNK)) > 0)
        st = nt_parser_feed(p, buf, (size_t)n);
    if (st == NT_OK)
        st = nt_parser_finish(p);
    close(fd);
    nt_parser_free(p);
    free(buf);
    if (st != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, nt_status_name(st));
        return 1;
    }
    printf("events %llu\n", (unsigned long long)g_events);
    return 0;
}

static int do_trace(const char *path)
{
    nt_trace *t = NULL;
    char msg[256];
    nt_status st = nt_trace_from_file(path, NULL, &t, msg, sizeof msg);
    if (st != NT_OK) {
        fprintf(stderr, "bench_ours: %s: %s\n", path, msg);
        nt_trace_free(t);
        return 1;
    }
    uint64_t frames = 0;
    size_t n = nt_trace_sample_count(t);
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        for (uint32_t k = 0; k < s.frame_count; k++) {
            const nt_frame *f = &s.frames[k];
            /* Like .Length of TraceEvent's cached strings: O(1) per frame. */
            g_sink += (uint8_t)f->method[0] + (uint8_t)f->type[0] + (uint8_t)f->assembly[0];
            frames++;
        }
    }
    printf("samples %zu frames %llu\n", n, (unsigned long long)frames);
    nt_trace_free(t);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "parse") == 0)
        return do_parse(argv[2]);
    if (argc == 3 && strcmp(argv[1], "trace") == 0)
        return do_trace(argv[2]);
    fprintf(stderr, "usage: bench_ours parse|trace FILE\n");
    return 2;
}
