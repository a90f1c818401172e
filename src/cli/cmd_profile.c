/* --profile alloc|exceptions|contention for samples, top and stacks: the
 * event profiles of a trace file (cpu and wall are the commands' own sample
 * paths).  The per-event dump, one line per event in time order:
 *   <timestamp_ns> <thread_id> <value> <label> <frames>
 * value: bytes (alloc), 1 (exceptions), wait ns (contention); label: alloc
 * <heap>:<type> (heap soh, loh, poh, other), exceptions <type>, contention
 * managed|native, with ":open" for a start that had no stop; with
 * --messages an exception's label is <type>:<message> when it has one; a label is
 * escaped as names are (common/text_escape.h, ' ' a separator), an empty one
 * is '?'; frames as `nettrace samples`. */
#include "cli/profile_cli.h"
#include "cli/human.h"
#include "cli/site.h"
#include "cli/stack_texts.h"
#include "common/sat.h"
#include "common/sort.h"
#include "common/text_escape.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool cli_profile_parse(const char *cmd, const char *arg, nt_profile_kind *k, bool *managed_only)
{
    /* The sample profiler samples every thread, running or blocked: its
     * samples are thread time (dotnet-trace's dotnet-sampled-thread-time),
     * and only those in managed code show that the thread ran. */
    if (strcmp(arg, "thread-time") == 0 || strcmp(arg, "managed-cpu") == 0) {
        *k = NT_PROFILE_CPU;
        *managed_only |= arg[0] == 'm';
        return true;
    }
    if (strcmp(arg, "cpu") == 0)
        fprintf(stderr, "nettrace %s: --profile cpu is now called thread-time (its samples include blocked "
                        "threads); --profile managed-cpu counts only samples in managed code\n", cmd);
    if (nt_profile_kind_parse(arg, k))
        return true;
    fprintf(stderr, "nettrace %s: --profile is thread-time, managed-cpu, wall, alloc, exceptions or contention\n",
            cmd);
    return false;
}

const char *cli_profile_name(nt_profile_kind k)
{
    return k == NT_PROFILE_CPU ? "thread-time" : nt_profile_kind_name(k);
}

/* The label into buf, cut to size: escaped as the dump's field, or (human,
 * top's table) quoted when it holds a space. */
static void label_field(const nt_profile_record *r, char *buf, size_t size, bool human)
{
    const char *l = *r->label ? r->label : "?";
    char raw[1024];
    if (r->kind == NT_PROFILE_ALLOC)
        snprintf(raw, sizeof raw, "%s:%s", nt_alloc_heap_name((nt_alloc_heap)r->heap), l);
    else if (r->kind == NT_PROFILE_CONTENTION)
        snprintf(raw, sizeof raw, "%s%s", r->heap == 1 ? "native" : "managed", r->open ? ":open" : "");
    else if (*r->message)
        snprintf(raw, sizeof raw, "%s:%s", l, r->message);
    else
        snprintf(raw, sizeof raw, "%s", l);
    if (human)
        cm_text_quote(buf, size, raw);
    else
        cm_text_escape(buf, size, raw, CLI_SAMPLES_SEPARATORS);
}

bool cli_profile_messages_fit(const char *cmd, nt_profile_kind k, bool messages)
{
    if (messages && k != NT_PROFILE_EXCEPTIONS) {
        fprintf(stderr, "nettrace %s: --messages labels exceptions: it needs --profile exceptions\n", cmd);
        return false;
    }
    return true;
}

bool cli_profile_filter(const cli_filter *f, const char *cmd, cli_profile_select *ps)
{
    if (f->managed_only) {
        fprintf(stderr, "nettrace %s: --managed-only selects thread samples; an event profile takes --thread, "
                        "--from and --to\n", cmd);
        return false;
    }
    ps->has_thread = f->has_thread;
    ps->thread_id = f->thread_id;
    ps->from = f->from;
    ps->to = f->to;
    return true;
}

/* A trace without any event of kind k: say what it holds instead and which
 * collect profile records the events. */
static void say_none(const nt_profile *p, nt_profile_kind k, const char *cmd)
{
    static const char *const events[] = { "", "", "GCAllocationTick", "ExceptionThrown", "ContentionStart/Stop" };
    nt_profile_totals a = { 0 }, e = { 0 }, c = { 0 };
    nt_profile_totals_get(p, NT_PROFILE_ALLOC, &a);
    nt_profile_totals_get(p, NT_PROFILE_EXCEPTIONS, &e);
    nt_profile_totals_get(p, NT_PROFILE_CONTENTION, &c);
    fprintf(stderr,
            "nettrace %s: the trace holds no %s events, so the %s profile is empty; it holds %" PRIu64
            " allocation ticks, %" PRIu64 " throws, %" PRIu64 " lock waits and %zu GCs "
            "('nettrace collect --profile %s' records %s events)\n",
            cmd, events[k], nt_profile_kind_name(k), a.events, e.events, c.events, nt_profile_gc_count(p),
            nt_profile_kind_name(k), events[k]);
}

/* The profile of path as the selection ps builds it (its window applied per
 * event by the builder); when a window leaves none of the kind's events, says
 * on stderr where the trace's events lie.  The exit code; *out NULL when
 * there is no profile. */
static int load(const char *path, const cli_profile_select *ps, bool keep_events, const char *cmd, nt_profile **out)
{
    nt_profile_options po = { .keep_events = keep_events, .from = ps->from, .to = ps->to,
                              .exception_messages = ps->messages };
    int rc = cli_profile_load(path, &po, out);
    nt_profile_totals tot = { 0 };
    if (!*out)
        return rc;
    nt_profile_totals_get(*out, ps->kind, &tot);
    if (tot.events)
        return rc;
    if (!ps->from.set && !ps->to.set) {
        say_none(*out, ps->kind, cmd);
        return rc;
    }
    int64_t start = cli_trace_start_ns(nt_trace_header(nt_profile_trace(*out))), first, last;
    nt_profile_span(*out, &first, &last);
    char a[32], b[32];
    cli_format_duration(a, sizeof a, first - start);
    cli_format_duration(b, sizeof b, last - start);
    fprintf(stderr, "nettrace %s: --from/--to select no %s events; the trace's events lie between +%s and +%s "
                    "after its start\n", cmd, nt_profile_kind_name(ps->kind), a, b);
    return rc;
}

static int by_time(const void *a, const void *b, void *ctx)
{
    int64_t tx = nt_profile_record_at(ctx, *(const size_t *)a).timestamp;
    int64_t ty = nt_profile_record_at(ctx, *(const size_t *)b).timestamp;
    return (tx > ty) - (tx < ty);
}

int cli_profile_samples(const char *path, const cli_profile_select *ps)
{
    nt_profile *p;
    int rc = load(path, ps, true, "samples", &p);
    if (!p)
        return rc;
    const nt_trace *t = nt_profile_trace(p);
    size_t n = nt_profile_record_count(p), m = 0;
    size_t *order = malloc((n ? 2 * n : 1) * sizeof *order);
    cli_stack_texts lines;
    bool have_lines = cli_stack_texts_init(&lines, t, ps->name_flags, 0);
    if (!order || !have_lines) {
        fprintf(stderr, "nettrace: out of memory\n");
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.kind == ps->kind && (!ps->has_thread || r.thread_id == ps->thread_id))
            order[m++] = i;
    }
    int64_t origin = ps->relative ? cli_trace_start_ns(nt_trace_header(t)) : 0;
    cm_merge_sort(order, order + m, m, sizeof *order, by_time, p); /* stable: ties in stream order */
    for (size_t j = 0; j < m; j++) {
        nt_profile_record r = nt_profile_record_at(p, order[j]);
        const char *line = cli_stack_text(&lines, r.stack_index);
        if (!line) {
            fprintf(stderr, "nettrace: out of memory\n");
            rc = CLI_EXIT_ERROR;
            break;
        }
        char label[4096];
        label_field(&r, label, sizeof label, false);
        printf("%" PRId64 " %" PRIu64 " %" PRId64 " %s %s\n", cm_sat_sub(r.time_ns, origin), r.thread_id, r.value, label,
               line);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "nettrace: writing standard output failed\n");
        rc = CLI_EXIT_ERROR;
    }
out:
    cli_stack_texts_free(&lines);
    free(order);
    nt_profile_free(p);
    return rc;
}

/* top: weight per (label, leaf frame[, thread]), largest first. */
typedef struct top_row {
    char *key;       /* "label\tleaf" */
    uint64_t thread;
    int64_t value, count;
} top_row;

static int row_by_key(const void *a, const void *b)
{
    const top_row *x = a, *y = b;
    int d = strcmp(x->key, y->key);
    return d ? d : x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int row_by_value(const void *a, const void *b)
{
    const top_row *x = a, *y = b;
    if (x->value != y->value)
        return x->value > y->value ? -1 : 1;
    return row_by_key(a, b);
}

static const char *value_unit(nt_profile_kind k)
{
    return k == NT_PROFILE_ALLOC ? "bytes" : k == NT_PROFILE_CONTENTION ? "wait_ms" : "throws";
}

/* A row's value in value_unit's unit: bytes and throws counted, waits in ms. */
static cli_num row_value(nt_profile_kind k, int64_t v)
{
    return k == NT_PROFILE_CONTENTION ? cli_ms(v) : cli_count_signed(v);
}

/* The table's first line: what the rows add up to, in units a person reads. */
static void print_total(FILE *o, nt_profile_kind kind, int64_t events, int64_t total, const nt_profile_totals *tot)
{
    fprintf(o, "%s: %s events, ", nt_profile_kind_name(kind), cli_count_signed(events).s);
    if (kind == NT_PROFILE_ALLOC) {
        fprintf(o, "%s bytes (%s)", cli_count_signed(total).s, cli_bytes(total > 0 ? (uint64_t)total : 0).s);
    } else if (kind == NT_PROFILE_CONTENTION) {
        char d[32];
        cli_format_duration(d, sizeof d, total);
        fprintf(o, "%s waiting (%s open, %s stops without a start)", d, cli_count(tot->open).s,
                cli_count(tot->unpaired_stops).s);
    } else {
        fprintf(o, "%s throws", cli_count_signed(total).s);
    }
}

int cli_profile_top(const char *path, const cli_profile_select *ps, size_t top, bool by_thread)
{
    nt_profile *p;
    int rc = load(path, ps, false, "top", &p);
    if (!p)
        return rc;
    if (!cli_profile_top_print(stdout, p, ps, top, by_thread))
        rc = CLI_EXIT_ERROR;
    nt_profile_free(p);
    return rc;
}

/* The rows being gathered: one per record (its site), or with --inclusive
 * one per distinct frame of its stack. */
typedef struct top_rows {
    top_row *rows;
    size_t count, cap;
} top_rows;

static bool add_row(top_rows *tr, const char *label, const nt_frame *f, unsigned name_flags, uint64_t thread,
                    const nt_profile_record *r)
{
    if (tr->count == tr->cap) {
        size_t cap = tr->cap ? 2 * tr->cap : 64;
        top_row *grown = realloc(tr->rows, cap * sizeof *grown);
        if (!grown)
            return false;
        tr->rows = grown;
        tr->cap = cap;
    }
    char *frame = f ? cli_frame_text(f, name_flags, "") : strdup("-");
    size_t len = strlen(label) + (frame ? strlen(frame) : 0) + 2;
    top_row *row = &tr->rows[tr->count];
    if (!frame || !(row->key = malloc(len))) {
        free(frame);
        return false;
    }
    snprintf(row->key, len, "%s\t%s", label, frame);
    free(frame);
    row->thread = thread;
    row->value = r->value;
    row->count = r->count;
    tr->count++;
    return true;
}

/* A record's rows: its site (the leaf with raw_leaf), or every distinct frame of its stack. */
static bool record_rows(top_rows *tr, const nt_trace *t, const nt_profile_record *r, const cli_profile_select *ps,
                        uint64_t thread)
{
    nt_trace_stack st = nt_trace_stack_at(t, r->stack_index);
    char label[4096] = "";
    if (!ps->inclusive)
        label_field(r, label, sizeof label, true);
    if (!st.frame_count)
        return add_row(tr, label, NULL, 0, thread, r);
    if (!ps->inclusive) {
        uint32_t at = cli_site_index(t, st, ps->raw_leaf);
        return add_row(tr, label, nt_trace_frame_at(t, st.frame_ids[at]), ps->name_flags, thread, r);
    }
    for (uint32_t i = 0; i < st.frame_count; i++) {
        bool again = false; /* a recursive frame counts once per event */
        for (uint32_t j = 0; j < i && !again; j++)
            again = st.frame_ids[j] == st.frame_ids[i];
        if (!again && !add_row(tr, "", nt_trace_frame_at(t, st.frame_ids[i]), ps->name_flags, thread, r))
            return false;
    }
    return true;
}

bool cli_profile_top_print(FILE *o, const nt_profile *p, const cli_profile_select *ps, size_t top, bool by_thread)
{
    nt_profile_kind kind = ps->kind;
    const nt_trace *t = nt_profile_trace(p);
    bool ok = true;
    size_t n = nt_profile_record_count(p);
    top_rows tr = { NULL, 0, 0 };
    int64_t total = 0, events = 0;
    for (size_t i = 0; i < n; i++) {
        nt_profile_record r = nt_profile_record_at(p, i);
        if (r.kind != kind || (ps->has_thread && r.thread_id != ps->thread_id))
            continue;
        if (!record_rows(&tr, t, &r, ps, by_thread ? r.thread_id : 0)) {
            fprintf(stderr, "nettrace: out of memory\n");
            ok = false;
            break;
        }
        total += r.value;
        events += r.count;
    }
    top_row *rows = tr.rows;
    size_t m = tr.count;
    if (m)
        qsort(rows, m, sizeof *rows, row_by_key);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (k && row_by_key(&rows[k - 1], &rows[i]) == 0) {
            rows[k - 1].value += rows[i].value;
            rows[k - 1].count += rows[i].count;
            free(rows[i].key);
            continue;
        }
        rows[k++] = rows[i];
    }
    if (k)
        qsort(rows, k, sizeof *rows, row_by_value);
    nt_profile_totals tot = { 0 };
    nt_profile_totals_get(p, kind, &tot);
    print_total(o, kind, events, total, &tot);
    const char *what = ps->inclusive ? "method (anywhere on the stack: inclusive)"
                       : ps->raw_leaf ? "label  site (leaf frame)"
                                      : "label  site (innermost frame outside the runtime's dispatch and waits)";
    fprintf(o, "\n%14s %8s %6s  %s%s\n", value_unit(kind), "events", "%", by_thread ? "thread  " : "", what);
    for (size_t i = 0; i < k && i < top; i++) {
        char *tab = strchr(rows[i].key, '\t');
        *tab = 0;
        fprintf(o, "%14s %8s %5.1f%%  ", row_value(kind, rows[i].value).s, cli_count_signed(rows[i].count).s,
               total ? 100.0 * (double)rows[i].value / (double)total : 0.0);
        if (by_thread)
            fprintf(o, "%" PRIu64 "  ", rows[i].thread);
        if (ps->inclusive)
            fprintf(o, "%s\n", tab + 1);
        else
            fprintf(o, "%s  %s\n", rows[i].key, tab + 1);
    }
    for (size_t i = 0; i < k; i++)
        free(rows[i].key);
    free(rows);
    return ok;
}


int cli_profile_stacks(const char *path, const char *format, const char *output, const cli_out_rules *rules,
                       const cli_profile_select *ps, nt_profile_export_options *eo)
{
    eo->kind = ps->kind;
    eo->filter.has_thread = ps->has_thread;
    eo->filter.thread_id = ps->thread_id;
    nt_status (*export)(const nt_profile *, const nt_profile_export_options *, nt_sink_fn, void *);
    if (strcmp(format, "folded") == 0)
        export = nt_profile_export_folded;
    else if (strcmp(format, "speedscope") == 0)
        export = nt_profile_export_speedscope;
    else if (strcmp(format, "pprof") == 0)
        export = nt_profile_export_pprof;
    else if (strcmp(format, "html") == 0)
        export = nt_profile_export_html;
    else {
        fprintf(stderr, "nettrace stacks: unknown format '%s' (folded, speedscope, pprof, html)\n", format);
        return CLI_EXIT_USAGE;
    }
    if (export == nt_profile_export_pprof && (!output || strcmp(output, "-") == 0) && isatty(1)) {
        fprintf(stderr, "nettrace stacks: pprof output is binary: use -o FILE or redirect standard output\n");
        return CLI_EXIT_USAGE;
    }
    nt_profile *p;
    int rc = load(path, ps, false, "stacks", &p);
    if (!p)
        return rc;
    cli_output out;
    if (!cli_output_open(&out, output, rules)) {
        nt_profile_free(p);
        return CLI_EXIT_ERROR;
    }
    rc = cli_output_close(&out, export(p, eo, cli_write_file, &out), rc);
    nt_profile_free(p);
    return rc;
}
