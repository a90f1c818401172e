/* nettrace top -p PID: the hot methods of a running process, refreshed every
 * interval: 'nettrace top' (the same options, columns and names) over the
 * samples of the last interval, from the session's bytes as they arrive.
 *
 * Names for methods compiled before the session started would only come with
 * the rundown at stop.  So beside the sampling session a second, rundown-only
 * session is started and stopped at once: its rundown (MethodDCEnd records of
 * every compiled method) arrives within the first interval and names the
 * older methods; methods compiled later are named by the sampling session's
 * own JIT events.  Both streams feed one nt_trace_window from one poll loop.
 *
 * --profile alloc|exceptions|contention: the session turns on that profile's
 * providers (the collect table), the window is a profile window, and each
 * refresh prints 'nettrace top --profile' of the window's events. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "cli/profile_presets.h"
#include "cli/session_opts.h"
#include "cli/top_print.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct live_stream {
    nt_session *session;
    nt_parser *parser;
    bool ended;
    nt_status status;
} live_stream;

static void top_usage(FILE *f)
{
    fputs("usage: nettrace top -p PID | -n NAME [OPTIONS]\n"
          "\n"
          "Live hot methods of a running process: 'nettrace top' over the samples of\n"
          "the last interval, with the same columns, redrawn every interval.  Ctrl-C\n"
          "stops (the session is abandoned: no rundown is needed).\n"
          "\n"
          "  -p, --pid PID        the process to attach to\n"
          "  -n, --name NAME      the one .NET process of this name (see 'nettrace ps')\n"
          "  -i, --interval T     refresh every T (seconds, or with a unit: 500ms;\n"
          "                         at least 100 ms; default 2 s)\n"
          "  -d, --duration T     stop after T, connecting included (default: until\n"
          "                         Ctrl-C or the target ends)\n"
          "      --top N          rows per table (default 20; 0 = all; -n N, a number,\n"
          "                         is its old spelling)\n"
          "      --inclusive      sort by inclusive samples (default: exclusive)\n"
          "      --by-thread      one table per thread\n"
          "      --managed-only   only samples taken in managed code\n"
          "      --thread ID      only this thread\n"
          "      --profile P      thread-time (default; cpu is its old name);\n"
          "                         managed-cpu: only samples in managed code; wall: the\n"
          "                         samples weighed by the ns to\n"
          "                         their thread's next sample (a thread's last one in\n"
          "                         the interval: the sampling interval); or alloc,\n"
          "                         exceptions, contention: the\n"
          "                         allocation sites, throw sites or lock waits of the\n"
          "                         last interval by type (lock kind) and site, per\n"
          "                         thread with --by-thread, as 'nettrace top --profile'\n"
          "                         prints a file's; the session turns on that\n"
          "                         profile's providers (see 'nettrace collect --help')\n"
          "      --buffer-mb N    the runtime's session buffer, 1..65535 MB (default 256)\n"
          "      --no-rundown-first  do not start with a short rundown session (code\n"
          "                         compiled before attaching then stays unnamed until\n"
          "                         it is compiled again)\n"
          "  -h, --help           this help\n",
          f);
}

/* deadline_ns bounds the start: the connect counts in --duration. */
static bool open_stream(live_stream *ls, nt_trace_window *win, bool events, const nt_endpoint *ep,
                        const nt_session_config *base, const char *what, int64_t deadline_ns)
{
    nt_callbacks cb = NT_STRUCT_INIT(nt_callbacks); /* sized: the window's sequence_gap counts loss per thread */
    if (events)
        nt_profile_window_callbacks(&cb);
    else
        nt_trace_window_callbacks(&cb);
    ls->parser = nt_parser_new(&cb, win, NULL, NULL);
    nt_session_config cfg = *base;
    cfg.sink = nt_sink_parser;
    cfg.sink_user = ls->parser;
    cfg.caller_pumps = true;
    /* The view holds one interval, whatever has passed: no cap on the stream's total (documented: until Ctrl-C). */
    cfg.max_stream_bytes = UINT64_MAX;
    ls->session = ls->parser ? nt_session_new(&cfg, NULL) : NULL;
    if (!ls->session) {
        fprintf(stderr, "nettrace top: out of memory\n");
        return false;
    }
    /* Ctrl-C while starting cancels at once (session_opts.h). */
    cli_start_guard_begin(ls->session);
    nt_status st = nt_session_start_endpoint(ls->session, ep, deadline_ns);
    cli_start_guard_end();
    cli_interrupts_session(NULL);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace top: %s session: %s\n", what, nt_session_message(ls->session));
        ls->status = st;
        return false;
    }
    return true;
}

static void close_stream(live_stream *ls)
{
    nt_session_free(ls->session);
    nt_parser_free(ls->parser);
    memset(ls, 0, sizeof *ls);
}

static void pump(live_stream *ls)
{
    if (ls->session && !ls->ended)
        ls->status = nt_session_pump(ls->session, &ls->ended);
}

static void title(bool tty, int32_t pid, double interval_s)
{
    if (tty)
        fputs("\033[H\033[J", stdout);
    time_t now = time(NULL);
    struct tm tm;
    char when[32];
    strftime(when, sizeof when, "%H:%M:%S", localtime_r(&now, &tm));
    printf("nettrace top  pid %" PRId32 "  %s  last %.1f s\n", pid, when, interval_s);
}

/* One stderr line for a window that lost events (the runtime's buffers were full or the session fell
 * behind): how many, and the threads that lost most, so a thin view is not mistaken for an idle one. */
static void report_loss(const nt_trace_window *win)
{
    nt_window_loss l = NT_STRUCT_INIT(nt_window_loss);
    nt_trace_window_loss_get(win, &l);
    if (!l.dropped)
        return;
    fprintf(stderr, "nettrace top: this window lost %" PRIu64 " events in %" PRIu64 " gaps on %" PRIu64 " thread%s (",
            l.dropped, l.gaps, l.thread_count, l.thread_count == 1 ? "" : "s");
    /* The three that lost most, most first (ties: the lower thread id, the rows' order). */
    const nt_thread_loss *most[3] = { NULL, NULL, NULL };
    for (uint64_t i = 0; i < l.thread_count; i++) {
        const nt_thread_loss *r = &l.threads[i];
        for (int k = 0; k < 3; k++) {
            if (!most[k] || r->dropped > most[k]->dropped) {
                for (int j = 2; j > k; j--)
                    most[j] = most[j - 1];
                most[k] = r;
                break;
            }
        }
    }
    uint64_t shown = 0;
    for (int k = 0; k < 3 && most[k]; k++, shown++)
        fprintf(stderr, "%sthread %" PRIu64 ": %" PRIu64, k ? ", " : "", most[k]->thread_id, most[k]->dropped);
    if (shown < l.thread_count)
        fprintf(stderr, ", %" PRIu64 " more", l.thread_count - shown);
    fputs(")\n", stderr);
}

/* One refresh of an event profile: the window's profile as 'nettrace top --profile' prints a file's. */
static int render_profile(nt_trace_window *win, nt_profile_kind kind, const nt_top_options *to, double interval_s,
                          bool tty, int32_t pid, bool *warned)
{
    nt_profile *p;
    nt_status st = nt_profile_window_take(win, &p);
    if (!p) {
        fprintf(stderr, "nettrace top: %s\n", nt_status_describe(st));
        return cli_exit_code(st);
    }
    title(tty, pid, interval_s);
    cli_profile_select ps = { .kind = kind, .has_thread = to->filter.has_thread, .thread_id = to->filter.thread_id };
    bool ok = cli_profile_top_print(stdout, p, &ps, to->rows ? to->rows : SIZE_MAX, to->by_thread);
    if (!tty)
        puts("");
    fflush(stdout);
    nt_profile_free(p);
    if (!ok)
        return cli_exit_code(NT_ERR_NOMEM);
    report_loss(win);
    if (st == NT_ERR_LIMIT && !*warned) {
        fprintf(stderr, "nettrace top: %s\n", nt_status_describe(st));
        *warned = true;
    }
    return st == NT_OK || st == NT_ERR_LIMIT ? CLI_EXIT_OK : cli_exit_code(st);
}

/* One refresh: the window's trace as 'nettrace top' prints a file's. */
static int render(nt_trace_window *win, const nt_top_options *to, double interval_s, bool tty, int32_t pid,
                  bool *warned)
{
    nt_trace *t;
    nt_status st = nt_trace_window_take(win, &t);
    if (!t) {
        fprintf(stderr, "nettrace top: %s\n", nt_status_describe(st));
        return cli_exit_code(st);
    }
    nt_top *top;
    if (nt_top_build(t, to, &top) != NT_OK) {
        nt_trace_free(t);
        fprintf(stderr, "nettrace top: out of memory\n");
        return cli_exit_code(NT_ERR_NOMEM);
    }
    title(tty, pid, interval_s);
    cli_top_print_header(stdout, t, NULL);
    cli_filter threads = { .has_thread = to->filter.has_thread, .thread_id = to->filter.thread_id };
    cli_top_print_profile(stdout, t, &threads, to->filter.managed_only, to->weight == NT_WEIGHT_TIME);
    fputc('\n', stdout);
    cli_top_print(stdout, top, to->by_thread, to->weight == NT_WEIGHT_TIME);
    if (!tty)
        puts("");
    fflush(stdout);
    nt_top_free(top);
    report_loss(win);
    if (st == NT_ERR_LIMIT && !*warned) {
        const char *why = nt_trace_message(t);
        fprintf(stderr, "nettrace top: %s\n",
                *why ? why : "more method records than the window's budget holds: records no sample needed were evicted "
                                   "(frames whose record went show as 0x<ip>)");
        *warned = true;
    }
    nt_trace_free(t);
    /* Names that no longer fit are a limit, not a failure: the view goes on. */

    return st == NT_OK || st == NT_ERR_LIMIT ? CLI_EXIT_OK : cli_exit_code(st);
}

/* What the command line asks for. */
typedef struct live_args {
    int32_t pid;
    const char *name;          /* -n NAME / --name: the process to find by name */
    double interval, duration; /* seconds; duration 0: until Ctrl-C or the target ends */
    long buffer_mb;
    nt_top_options to;
    bool rundown_first;
    nt_profile_kind kind;
} live_args;

/* The options into a; -1 when the command goes on, else its exit code. */
static int parse_args(int argc, char **argv, live_args *a)
{
    static const struct option opts[] = {
        { "pid", required_argument, NULL, 'p' },
        { "interval", required_argument, NULL, 'i' },
        { "duration", required_argument, NULL, 'd' },
        { "top", required_argument, NULL, 'r' },
        { "name", required_argument, NULL, 'N' },
        { "inclusive", no_argument, NULL, 'I' },
        { "by-thread", no_argument, NULL, 'B' },
        { "managed-only", no_argument, NULL, 'm' },
        { "thread", required_argument, NULL, 'T' },
        { "buffer-mb", required_argument, NULL, 'b' },
        { "no-rundown-first", no_argument, NULL, 'R' },
        { "profile", required_argument, NULL, 'P' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    *a = (live_args){ .interval = 2, .to = { .rows = 20 }, .rundown_first = true, .kind = NT_PROFILE_CPU };
    int c;
    uint64_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:i:n:d:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (!cli_pid_option("top", optarg, &a->pid))
                return CLI_EXIT_USAGE;
            break;
        case 'i':
        case 'd': {
            int64_t ns;
            if (!cli_duration_option("top", c == 'i' ? "--interval" : "--duration", optarg, 1000000000,
                                     10000000ll * 1000000000, &ns))
                return CLI_EXIT_USAGE;
            if (c == 'i' && ns < 100000000) {
                fprintf(stderr, "nettrace top: --interval is at least 100ms, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            *(c == 'i' ? &a->interval : &a->duration) = (double)ns / 1e9;
            break;
        }
        case 'n':
        case 'r':
        case 'N':
            if (c != 'r' && (c == 'N' || !cli_top_n_is_rows(optarg))) {
                a->name = optarg;
                break;
            }
            if (!cli_u64_option("top", c == 'n' ? "-n" : "--top", optarg, 0, UINT32_MAX, &v))
                return CLI_EXIT_USAGE;
            a->to.rows = (uint32_t)v;
            break;
        case 'b':
            if (!cli_u64_option("top", "--buffer-mb", optarg, 1, 65535, &v))
                return CLI_EXIT_USAGE;
            a->buffer_mb = (long)v;
            break;
        case 'T':
            if (!cli_u64_option("top", "--thread", optarg, 0, UINT64_MAX, &a->to.filter.thread_id))
                return CLI_EXIT_USAGE;
            a->to.filter.has_thread = true;
            break;
        case 'I': a->to.by_inclusive = true; break;
        case 'B': a->to.by_thread = true; break;
        case 'm': a->to.filter.managed_only = true; break;
        case 'R': a->rundown_first = false; break;
        case 'P':
            if (!cli_profile_parse("top", optarg, &a->kind, &a->to.filter.managed_only))
                return CLI_EXIT_USAGE;
            a->to.weight = a->kind == NT_PROFILE_WALL ? NT_WEIGHT_TIME : NT_WEIGHT_SAMPLES;
            break;
        case 'h': top_usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if ((a->pid == 0) == (a->name == NULL) || optind != argc) {
        fprintf(stderr, "%s: %s; '%s --help' lists the options\n", argv[0],
                optind != argc ? "no FILE with -p or -n NAME (a live process is the input)"
                               : "give the process with -p PID or -n NAME",
                argv[0]);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* The rundown-only session beside the sampling one; on failure names come
 * at the end only, and rs stays closed. */
static void open_rundown(live_stream *rs, nt_trace_window *win, bool events, const nt_endpoint *ep,
                         int64_t connect_by)
{
    /* Only the rundown matters here: one cheap provider, stopped at once. */
    static const nt_provider loader = { .name = NT_PROVIDER_RUNTIME, .keywords = NT_KEYWORD_LOADER, .level = 4 };
    nt_session_config rcfg = { 0 };
    memset(&rcfg, 0, sizeof rcfg);
    rcfg.providers = &loader;
    rcfg.provider_count = 1;
    rcfg.buffer_mb = 16;
    rcfg.no_stackwalk = false;
    if (open_stream(rs, win, events, ep, &rcfg, "rundown", connect_by))
        nt_session_request_stop(rs->session);
    else
        close_stream(rs);
}

/* Pump both streams and redraw every interval until the target ends,
 * Ctrl-C or --duration (until); the exit code. */
static int live_loop(const live_args *a, nt_trace_window *win, live_stream *main_s, live_stream *rundown_s,
                     int64_t until)
{
    bool events = a->kind != NT_PROFILE_CPU && a->kind != NT_PROFILE_WALL;
    bool tty = isatty(1), warned = false, drawn = false;
    int rc = CLI_EXIT_OK;
    int64_t last = nt_now_ns();
    int64_t next = last + (int64_t)(a->interval * 1e9);
    while (!main_s->ended && cli_interrupt_count() == 0) {
        struct pollfd pf[3];
        int n = 0;
        pf[n++] = (struct pollfd){ .fd = cli_interrupt_fd(), .events = POLLIN };
        pf[n++] = (struct pollfd){ .fd = nt_session_fd(main_s->session), .events = POLLIN };
        if (rundown_s->session && !rundown_s->ended)
            pf[n++] = (struct pollfd){ .fd = nt_session_fd(rundown_s->session), .events = POLLIN };
        int64_t wake = next < until ? next : until;
        int64_t ms = (wake - nt_now_ns()) / 1000000 + 1;
        poll(pf, (nfds_t)n, ms < 0 ? 0 : ms > 1000 ? 1000 : (int)ms);
        pump(main_s);
        pump(rundown_s);
        if (rundown_s->session && rundown_s->ended) {
            nt_parser_finish(rundown_s->parser);
            close_stream(rundown_s);
        }
        int64_t now = nt_now_ns();
        /* --duration counts the connect too: its end draws the interval so far when no refresh did, or
         * when at least half an interval has passed since the last. */
        bool ending = now >= until && (!drawn || now - last >= (int64_t)(a->interval * 0.5e9));
        if (now >= next || ending) {
            double shown_s = (double)(now - last) / 1e9;
            rc = events ? render_profile(win, a->kind, &a->to, shown_s, tty, a->pid, &warned)
                        : render(win, &a->to, shown_s, tty, a->pid, &warned);
            if (rc != CLI_EXIT_OK)
                break;
            drawn = true;
            last = now;
            while (next <= now)
                next += (int64_t)(a->interval * 1e9);
        }
        if (now >= until)
            break;
    }
    if (main_s->ended && cli_interrupt_count() == 0 && cli_process_gone(a->pid, 1000))
        fprintf(stderr, "nettrace top: process %" PRId32 " exited\n", a->pid);
    else if (rc == CLI_EXIT_OK && main_s->ended && main_s->status != NT_OK) {
        fprintf(stderr, "nettrace top: the session ended: %s (%s)\n", nt_status_name(main_s->status),
                nt_session_message(main_s->session));
        rc = cli_exit_code(main_s->status);
    }
    return rc;
}

int cmd_top_live(int argc, char **argv)
{
    live_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.name && (rc = cli_pid_by_name("top", a.name, &a.pid, 0)) != CLI_EXIT_OK)
        return rc;
    rc = CLI_EXIT_OK;
    /* --duration counts from here, connecting included. */
    int64_t start = nt_now_ns();
    int64_t until = a.duration > 0 ? start + (int64_t)(a.duration * 1e9) : NT_DEADLINE_NONE;
    int64_t connect_by = nt_deadline_after_ms(10000) < until ? nt_deadline_after_ms(10000) : until;
    nt_endpoint ep;
    nt_status st = nt_endpoint_find(a.pid, &ep);
    if (st != NT_OK) {
        fprintf(stderr, "nettrace top: process %" PRId32 " has no diagnostics endpoint (%s)\n", a.pid,
                cli_endpoint_reason(ep.reason));
        return cli_exit_code(st);
    }
    bool events = a.kind != NT_PROFILE_CPU && a.kind != NT_PROFILE_WALL;
    nt_trace_window *win = events ? nt_profile_window_new(NULL, NULL) : nt_trace_window_new(NULL, NULL);
    if (!win) {
        fprintf(stderr, "nettrace top: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    cli_interrupts_install();
    live_stream main_s, rundown_s;
    memset(&main_s, 0, sizeof main_s);
    memset(&rundown_s, 0, sizeof rundown_s);
    nt_session_config cfg = { 0 };
    memset(&cfg, 0, sizeof cfg);
    cfg.buffer_mb = (uint32_t)a.buffer_mb;
    cli_providers providers = { .count = 0 };
    if (events) {
        char err[256];
        if (!cli_profile_providers(cli_profile_name(a.kind), &providers, err, sizeof err)) {
            fprintf(stderr, "nettrace top: %s\n", err);
            rc = CLI_EXIT_USAGE;
            goto out;
        }
        cfg.providers = providers.list;
        cfg.provider_count = providers.count;
    }
    if (!open_stream(&main_s, win, events, &ep, &cfg, events ? "profile" : "sampling", connect_by)) {
        rc = main_s.status != NT_OK ? cli_exit_code(main_s.status) : CLI_EXIT_ERROR;
        goto out;
    }
    if (a.rundown_first)
        open_rundown(&rundown_s, win, events, &ep, connect_by);
    rc = live_loop(&a, win, &main_s, &rundown_s, until);
out:
    /* No rundown wanted at the end: abandon rather than stop. */
    if (main_s.session)
        nt_session_cancel(main_s.session);
    if (rundown_s.session)
        nt_session_cancel(rundown_s.session);
    close_stream(&main_s);
    close_stream(&rundown_s);
    nt_trace_window_free(win);
    return rc;
}
