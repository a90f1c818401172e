/* nettrace events FILE: every event in time order, one a line, with its
 * decoded payload fields.  Events are gathered between sequence points
 * (every event before one is older than it) and written sorted by
 * timestamp, ties in stream order, in a bounded reorder buffer
 * (cli/event_lines.h); the output per byte of input is bounded too. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/event_census.h"
#include "cli/event_format.h"
#include "cli/event_lines.h"
#include "cli/event_stacks.h"
#include "cli/time_opt.h"
#include "cli/trace_load.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace events [--json] [--provider NAME] [--event NAME|ID] [--thread ID]\n"
          "                       [--from T] [--to T] [--stacks] [--max-output-ratio N]\n"
          "                       [--reorder-bytes N] [--absolute] FILE\n"
          "\n"
          "Print every event in time order (ties in stream order), one a line:\n"
          "  <time_s> <thread_id> <provider> <event name> <field>=<value> ...\n"
          "time_s: seconds since the trace's start (as --from/--to count), to the ns;\n"
          "values as in JSON (strings quoted, arrays [..], structs {..}), except that\n"
          "pointers and HRESULTs are hex (0x7f12..., 0x80131509).  Runtime events\n"
          "are named and decoded from the built-in table of the runtime's event manifest,\n"
          "EventSource events from their own metadata.  A payload that does not fit its\n"
          "layout shows the fields before the damage and !error=\"...\" at its offset;\n"
          "bytes a newer event version appended show as !leftover=N.\n"
          "\n"
          "  --json           one JSON object a line: time_ns, thread, provider, event_id,\n"
          "                   version, name, fields {..} (leftover, error, error_offset\n"
          "                   when they apply; time_ns on the trace clock, numbers\n"
          "                   decimal); always valid UTF-8\n"
          "  --absolute       text times in trace-clock ns instead of s since the start\n"
          "  --provider NAME  only events of this provider (any case)\n"
          "  --event NAME|ID  only this event: its id, or its name (any case) with or\n"
          "                   without the _V<n> version suffix (GCStart matches\n"
          "                   GCStart_V2)\n"
          "A filter that keeps no event says so on standard error, with the providers\n"
          "and events the trace holds.\n"
          "  --thread ID      only events about this thread\n"
          "  --from T, --to T only events at or after / before T: relative to the trace's\n"
          "                   start with a unit (2s, +1.5ms, 250us, 40ns, 3m) or, after\n"
          "                   '@', trace-clock ns (@864741168641)\n"
          "  --max-output-ratio N  stop with an error (exit 16) once the output passes\n"
          "                   1 MiB plus N bytes per byte of input read (default 1024)\n"
          "  --reorder-bytes N  bytes of lines held to sort them between two sequence\n"
          "                   points (default 67108864; also the longest line); past it\n"
          "                   the rest of the interval is written in stream order, said\n"
          "                   on standard error\n"
          "  --stacks         add each event's stack, frames root first joined by ';' and\n"
          "                   named as by nettrace samples (stack=... or \"stack\"); the\n"
          "                   output then waits for the end of the trace, whose rundown\n"
          "                   names the frames, in an unlinked temporary file ($TMPDIR)\n"
          "  -h, --help       this help\n",
          f);
}

typedef struct events_run {
    ev_filter filter;
    cli_time from, to;     /* --from / --to as given; resolved once the header says where the trace starts */
    bool json;
    bool absolute;         /* --absolute: text times on the trace clock (ns) */
    int64_t origin_ns;     /* the trace's start, text times' zero */
    int64_t frequency;
    ev_lines lines;
    FILE *out;
    bool failed;
    bool with_stacks;
    ev_stacks stacks;
    ev_census census;      /* what the trace holds, for a filter that keeps nothing */
    uint64_t max_ratio;    /* --max-output-ratio */
    bool unordered_said;   /* the reorder buffer filled once: said on standard error */
    char limit_msg[256];   /* why the output stopped early, when it did */
} events_run;

/* Output allowed once `read` bytes of input are read: a floor, so that a
 * small trace prints whole, plus max_ratio bytes per byte read. */
#define EV_OUTPUT_FLOOR (1u << 20)

static uint64_t output_allowed(const events_run *r, uint64_t read)
{
    if (read > (UINT64_MAX - EV_OUTPUT_FLOOR) / r->max_ratio)
        return UINT64_MAX;
    return EV_OUTPUT_FLOOR + read * r->max_ratio;
}

/* Stop the parse: the output reached a limit at the event at byte `at`. */
static int over_limit(events_run *r, uint64_t at, bool by_ratio)
{
    if (by_ratio)
        snprintf(r->limit_msg, sizeof r->limit_msg,
                 "the output reached its limit of 1 MiB plus %" PRIu64 " bytes per byte read (%" PRIu64
                 " bytes) at the event at byte %" PRIu64 "; --max-output-ratio raises it",
                 r->max_ratio, r->lines.produced, at);
    else
        snprintf(r->limit_msg, sizeof r->limit_msg,
                 "the event at byte %" PRIu64 " makes a line longer than the reorder buffer's %" PRIu64
                 " bytes; --reorder-bytes raises it",
                 at, r->lines.hold_max);
    return 1;
}

static int on_trace(void *user, const nt_trace_info *info)
{
    events_run *r = user;
    r->frequency = info->qpc_frequency;
    r->origin_ns = cli_trace_start_ns(info);
    r->filter.has_from = r->from.set;
    r->filter.has_to = r->to.set;
    r->filter.from_ns = nt_time_bound_resolve(&r->from, info);
    r->filter.to_ns = nt_time_bound_resolve(&r->to, info);
    return r->with_stacks ? r->stacks.bcb.trace(r->stacks.b, info) : 0;
}

/* With --stacks the trace builder sees the records that name frames. */
static int on_method(void *user, const nt_method *m)
{
    events_run *r = user;
    return r->stacks.bcb.method(r->stacks.b, m);
}

static int on_module(void *user, const nt_module *m)
{
    events_run *r = user;
    return r->stacks.bcb.module(r->stacks.b, m);
}

static int on_assembly(void *user, const nt_assembly *a)
{
    events_run *r = user;
    return r->stacks.bcb.assembly(r->stacks.b, a);
}

static int on_event(void *user, const nt_event *ev)
{
    events_run *r = user;
    int64_t ns = nt_ticks_to_ns(ev->timestamp, r->frequency);
    bool keep = ev_filter_match(&r->filter, ev, ns);
    ev_census_add(&r->census, ev, keep);
    if (!keep)
        return 0;
    uint64_t allowed = output_allowed(r, ev->offset + ev->payload_size);
    if (r->lines.produced >= allowed)
        return over_limit(r, ev->offset, true);
    uint64_t room = allowed - r->lines.produced;
    FILE *m = ev_lines_begin(&r->lines, ev->timestamp);
    if (!m)
        return r->failed = true;
    long limit = ev_lines_limit(&r->lines, room);
    bool fit = r->json ? ev_format_json(m, ev, ns, limit) : ev_format_text(m, ev, ns, r->origin_ns, r->absolute, limit);
    if (!fit) {
        ev_lines_drop(&r->lines);
        return over_limit(r, ev->offset, room <= r->lines.hold_max);
    }
    if (r->with_stacks && ev->stack) {
        ev_lines_mark_stack(&r->lines, r->json);
        if (!ev_stacks_add(&r->stacks, ev, ns))
            return r->failed = true;
    }
    ev_line_result lr = ev_lines_end(&r->lines);
    if (lr == EV_LINE_UNORDERED && !r->unordered_said) {
        r->unordered_said = true;
        fprintf(stderr,
                "nettrace events: more than %" PRIu64 " bytes of lines between two sequence points (at the event"
                " at byte %" PRIu64 "): until the next one, lines are in stream order, not time order"
                " (--reorder-bytes raises the buffer)\n",
                r->lines.hold_max, ev->offset);
    }
    return lr == EV_LINE_FAILED ? (r->failed = true) : 0;
}

static int on_sequence_point(void *user, const nt_sequence_point *sp)
{
    events_run *r = user;
    if (r->with_stacks) /* everything waits for the rundown */
        return r->stacks.bcb.sequence_point(r->stacks.b, sp);
    return ev_lines_flush(&r->lines) ? 0 : (r->failed = true);
}

/* The lines still held once the stream has been read (s: how it read), with
 * their stacks when asked for; false when writing them failed. */
static bool flush_lines(events_run *r, nt_parser *p, nt_status s)
{
    if (!r->with_stacks)
        return ev_lines_flush(&r->lines);
    nt_status bs = ev_stacks_finish(&r->stacks, p, s);
    if (bs != NT_OK && bs != s)
        fprintf(stderr, "nettrace: naming the stacks: %s\n", nt_status_describe(bs));
    bool over = false;
    bool flushed = ev_lines_flush_stacks(&r->lines, ev_stacks_line, &r->stacks,
                                         output_allowed(r, nt_parser_offset(p)), &over);
    if (over && !r->limit_msg[0])
        snprintf(r->limit_msg, sizeof r->limit_msg,
                 "the output with its stacks reached its limit of 1 MiB plus %" PRIu64
                 " bytes per byte read (%" PRIu64 " bytes); --max-output-ratio raises it",
                 r->max_ratio, r->lines.produced);
    return flushed;
}

int cmd_events(int argc, char **argv)
{
    static const struct option opts[] = { { "json", no_argument, NULL, 'j' },
                                           { "provider", required_argument, NULL, 'p' },
                                           { "event", required_argument, NULL, 'e' },
                                           { "thread", required_argument, NULL, 't' },
                                           { "from", required_argument, NULL, 'F' },
                                           { "to", required_argument, NULL, 'T' },
                                           { "stacks", no_argument, NULL, 'S' },
                                           { "absolute", no_argument, NULL, 'a' },
                                           { "max-output-ratio", required_argument, NULL, 'R' },
                                           { "reorder-bytes", required_argument, NULL, 'B' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    events_run r;
    memset(&r, 0, sizeof r);
    r.frequency = 1000000000;
    r.max_ratio = 1024;
    uint64_t hold = EV_LINES_DEFAULT_HOLD;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'j': r.json = true; break;
        case 'S': r.with_stacks = true; break;
        case 'a': r.absolute = true; break;
        case 'p': r.filter.provider = optarg; break;
        case 'e': r.filter.event = optarg; break;
        case 't': {
            if (!cli_parse_u64(optarg, UINT64_MAX, &r.filter.thread)) {
                fprintf(stderr, "nettrace events: --thread wants a thread id, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            r.filter.has_thread = true;
            break;
        }
        case 'F':
        case 'T':
            if (!cli_time_option("events", c == 'F' ? "--from" : "--to", optarg, c == 'F' ? &r.from : &r.to))
                return CLI_EXIT_USAGE;
            break;
        case 'R':
            if (!cli_u64_option("events", "--max-output-ratio", optarg, 1, UINT32_MAX, &r.max_ratio))
                return CLI_EXIT_USAGE;
            break;
        case 'B':
            if (!cli_u64_option("events", "--reorder-bytes", optarg, 4096, (uint64_t)1 << 40, &hold))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    const char *path = cli_file_operand(argc, argv, usage);
    if (!path)
        return CLI_EXIT_USAGE;
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    r.out = stdout;
    if (!ev_lines_init(&r.lines, stdout, hold, r.with_stacks)) {
        ev_lines_free(&r.lines);
        fprintf(stderr, r.with_stacks ? "nettrace events: no temporary file for the lines that wait for the stacks: %s\n"
                                      : "nettrace: out of memory\n",
                strerror(errno));
        return CLI_EXIT_ERROR;
    }
    nt_callbacks cb = { .trace = on_trace, .event = on_event, .sequence_point = on_sequence_point };
    if (r.with_stacks) {
        cb.method = on_method;
        cb.module = on_module;
        cb.assembly = on_assembly;
    }
    nt_parser *p = r.with_stacks && !ev_stacks_init(&r.stacks) ? NULL : nt_parser_new(&cb, &r, NULL, NULL);
    if (!p) {
        ev_stacks_free(&r.stacks);
        ev_lines_free(&r.lines);
        fprintf(stderr, "nettrace: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    char err[256];
    nt_status s = cli_feed_path_window(p, path, &r.from, &r.to, err, sizeof err);
    /* what was read before any damage is still printed */
    bool flushed = flush_lines(&r, p, s);
    int rc = CLI_EXIT_OK;
    if (r.limit_msg[0]) {
        fprintf(stderr, "nettrace events: %s: %s\n", path, r.limit_msg);
        rc = cli_exit_code(NT_ERR_LIMIT);
    } else if (r.failed || !flushed) {
        fprintf(stderr, "nettrace: out of memory or output failed\n");
        rc = CLI_EXIT_ERROR;
    } else if (s == NT_ERR_IO) {
        fprintf(stderr, "nettrace: %s\n", err);
        rc = CLI_EXIT_ERROR;
    } else if (s != NT_OK) {
        fprintf(stderr, "nettrace: %s: %s\n", path, nt_parser_message(p));
        rc = cli_exit_code(s);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nettrace: writing standard output failed\n");
        rc = CLI_EXIT_ERROR;
    }
    ev_census_explain(&r.census, &r.filter, stderr);
    ev_census_free(&r.census);
    nt_parser_free(p);
    ev_stacks_free(&r.stacks);
    ev_lines_free(&r.lines);
    return rc;
}
