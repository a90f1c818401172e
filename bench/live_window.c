/* The live soak's window-API reader (bench/live_soak.sh): a session on PID
 * fed into one nt_trace_window, a take every second, and once every ten
 * seconds a line of what the window holds (nt_trace_window_stats), the
 * parser's memory and the process's RSS.  Usage: live_window PID SECONDS. */
#include "nettrace_session.h"
#include "nettrace_trace.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct feed {
    pthread_mutex_t mu; /* the session's reader thread feeds; the main thread takes */
    nt_parser *parser;
} feed;

static int sink(void *user, const void *data, size_t len)
{
    feed *f = user;
    pthread_mutex_lock(&f->mu);
    int rc = nt_sink_parser(f->parser, data, len);
    pthread_mutex_unlock(&f->mu);
    return rc;
}

static long rss_kib(void)
{
    FILE *st = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (st && fgets(line, sizeof line, st))
        if (strncmp(line, "VmRSS:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    if (st)
        fclose(st);
    return kib;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int pid = atoi(argv[1]), seconds = atoi(argv[2]);
    nt_trace_window *w = nt_trace_window_new(NULL, NULL);
    nt_callbacks cb;
    nt_trace_window_callbacks(&cb);
    feed f = { PTHREAD_MUTEX_INITIALIZER, nt_parser_new(&cb, w, NULL, NULL) };
    nt_parser_set_lazy_names(f.parser, true);
    nt_session_config cfg = { .sink = sink, .sink_user = &f, .no_rundown = true, .max_stream_bytes = UINT64_MAX };
    nt_session *s = nt_session_new(&cfg, NULL);
    if (!w || !f.parser || !s || nt_session_start(s, pid, nt_deadline_after_ms(5000)) != NT_OK) {
        fprintf(stderr, "live_window: cannot start: %s\n", s ? nt_session_message(s) : "out of memory");
        return 1;
    }
    printf("second rss_kib window_bytes records record_bytes strings index modules retired evicted parser_bytes samples\n");
    uint64_t samples = 0;
    for (int sec = 1; sec <= seconds; sec++) {
        sleep(1);
        pthread_mutex_lock(&f.mu);
        nt_trace *t = NULL;
        nt_trace_window_take(w, &t);
        samples += t ? nt_trace_sample_count(t) : 0;
        nt_trace_free(t);
        nt_trace_window_stats ws = { 0 };
        nt_trace_window_stats_get(w, &ws);
        nt_parser_stats ps = { 0 };
        nt_parser_stats_get(f.parser, &ps);
        pthread_mutex_unlock(&f.mu);
        if (sec % 10 == 0 || sec == 1)
            printf("%d %ld %zu %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %zu %" PRIu64 "\n",
                   sec, rss_kib(), ws.memory, ws.records.entries, ws.records.bytes, ws.strings.bytes,
                   ws.address_index.bytes, ws.modules.bytes, ws.records_retired, ws.records_evicted,
                   (size_t)ps.memory, samples);
        fflush(stdout);
    }
    nt_session_stop(s, nt_deadline_after_ms(5000));
    nt_session_free(s);
    nt_parser_free(f.parser);
    nt_trace_window_free(w);
    return 0;
}
