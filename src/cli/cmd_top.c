/* nettrace top FILE: hot methods by exclusive (leaf) and inclusive (anywhere
 * on the stack, once per sample) samples, overall or per thread.  Methods are
 * named as in 'nettrace samples'; a frame no method record covers is shown by
 * its address, and the header says how many frames resolved. */
#include "cli/opts.h"
#include "cli/select.h"
#include "cli/trace_load.h"
#include "common/json.h"
#include "common/text_escape.h"
#include "cli/u64map.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct names {
    char **name;        /* id -> display name */
    size_t n, cap;
    uint32_t *of_method;  /* method index -> id + 1 (0 = not yet) */
    u64map of_ip;       /* unresolved ip -> id + 1 */
    u64map of_hash;     /* name hash -> id + 1 (display names of code versions merge) */
} names;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* Id of a frame's display name; UINT32_MAX when memory is short. */
static uint32_t name_id(names *nm, const nt_frame *f)
{
    uint64_t *slot;
    if (f->method_index == NT_TRACE_NO_METHOD) {
        slot = u64map_get(&nm->of_ip, f->ip);
        if (!slot)
            return UINT32_MAX;
        if (*slot)
            return (uint32_t)*slot - 1;
    } else {
        if (nm->of_method[f->method_index])
            return nm->of_method[f->method_index] - 1;
        slot = NULL;
    }
    size_t len = nt_frame_name(f, NULL, 0) + 1;
    char *s = malloc(len);
    if (!s)
        return UINT32_MAX;
    nt_frame_name(f, s, len);
    uint64_t *hs = u64map_get(&nm->of_hash, hash_str(s));
    if (!hs) {
        free(s);
        return UINT32_MAX;
    }
    uint32_t id;
    if (*hs && strcmp(nm->name[*hs - 1], s) == 0) {
        id = (uint32_t)*hs - 1;
        free(s);
    } else {
        if (nm->n == nm->cap) {
            size_t nc = nm->cap ? nm->cap * 2 : 256;
            char **nn = realloc(nm->name, nc * sizeof *nn);
            if (!nn) {
                free(s);
                return UINT32_MAX;
            }
            nm->name = nn;
            nm->cap = nc;
        }
        id = (uint32_t)nm->n;
        nm->name[nm->n++] = s;
        if (!*hs)
            *hs = id + 1;
    }
    if (slot)
        *slot = id + 1;
    else
        nm->of_method[f->method_index] = id + 1;
    return id;
}

typedef struct row {
    uint32_t id;
    uint64_t excl, incl;
} row;

static int cmp_row_excl(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->excl != y->excl)
        return x->excl > y->excl ? -1 : 1;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_row_incl(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->incl != y->incl)
        return x->incl > y->incl ? -1 : 1;
    return cmp_row_excl(a, b);
}

static void usage(FILE *f)
{
    fputs("usage: nettrace top [OPTIONS] FILE\n"
          "       nettrace top -p PID ...   (live, per thread: see 'nettrace live-top --help')\n"
          "\n"
          "Hot methods: exclusive samples (the method was the innermost frame) and\n"
          "inclusive samples (it was anywhere on the stack), with their share of the\n"
          "samples counted.  Frames that no method record covers are shown as 0x<ip>;\n"
          "the header says what share of frames resolved.\n"
          "\n"
          "  -n, --top N        rows to print (default 20; 0 = all)\n"
          "      --inclusive    sort by inclusive samples (default: exclusive)\n"
          "      --by-thread    one table per thread\n"
          "      --json         one JSON object: the header's counts and, per table,\n"
          "                       its samples and methods with their counts\n"
          CLI_FILTER_HELP
          "  -h, --help         this help\n"
          "Names are printed with control characters and invalid UTF-8 as \\xHH.\n",
          f);
}

/* How the tables are printed: text, or the entries of a JSON "tables" array. */
typedef struct table_out {
    FILE *o;
    bool json;
    size_t tables;
} table_out;

static void print_name(FILE *o, const char *name)
{
    char small[1024];
    size_t n = nt_text_escape(small, sizeof small, name, "");
    char *big = n < sizeof small ? NULL : malloc(n + 1);
    if (big)
        nt_text_escape(big, n + 1, name, "");
    fputs(big ? big : small, o);
    free(big);
}

/* Count the selected samples per stack, then per name, and print the table. */
static int table(const nt_trace *t, names *nm, size_t top, bool by_incl, const nt_export_options *sel,
                 uint64_t *stack_w, uint32_t *seen, table_out *to)
{
    FILE *o = to->o;
    size_t ns = nt_trace_stack_count(t), n = nt_trace_sample_count(t);
    memset(stack_w, 0, (ns ? ns : 1) * sizeof *stack_w);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if (!cli_filter_keeps(sel, &s))
            continue;
        stack_w[s.stack_index]++;
        total++;
    }
    /* Every frame was named before (cmd_top), so name_id only looks up here. */
    row *rows = calloc(nm->n ? nm->n : 1, sizeof *rows);
    if (!rows)
        return -1;
    uint64_t empty = 0;
    for (size_t i = 0; i < nm->n; i++)
        rows[i] = (row){ (uint32_t)i, 0, 0 };
    for (size_t k = 0; k < ns; k++) {
        if (!stack_w[k])
            continue;
        nt_trace_stack st = nt_trace_stack_at(t, k);
        if (!st.frame_count) {
            empty += stack_w[k];
            continue;
        }
        rows[name_id(nm, &st.frames[0])].excl += stack_w[k];
        /* Inclusive: once per sample even when recursion repeats a name. */
        for (uint32_t f = 0; f < st.frame_count; f++) {
            uint32_t id = name_id(nm, &st.frames[f]);
            if (seen[id] != k + 1) {
                seen[id] = (uint32_t)k + 1;
                rows[id].incl += stack_w[k];
            }
        }
        for (uint32_t f = 0; f < st.frame_count; f++)
            seen[name_id(nm, &st.frames[f])] = 0;
    }
    if (nm->n)
        qsort(rows, nm->n, sizeof *rows, by_incl ? cmp_row_incl : cmp_row_excl);
    if (to->json) {
        fputs(to->tables++ ? ",\n    {\"thread_id\": " : "\n    {\"thread_id\": ", o);
        if (sel->has_thread)
            fprintf(o, "%" PRIu64, sel->thread_id);
        else
            fputs("null", o);
        fprintf(o, ", \"samples\": %" PRIu64 ", \"empty_stack_samples\": %" PRIu64 ", \"methods\": [", total,
                empty);
    } else {
        fprintf(o, "%10s %7s %10s %7s  %s\n", "exclusive", "share", "inclusive", "share", "method");
    }
    size_t shown = 0;
    for (size_t i = 0; i < nm->n && (top == 0 || shown < top); i++) {
        if (!rows[i].incl)
            continue;
        if (to->json) {
            fputs(shown ? ",\n      {\"name\": " : "\n      {\"name\": ", o);
            nt_json_fputs(o, nm->name[rows[i].id]);
            fprintf(o, ", \"exclusive\": %" PRIu64 ", \"inclusive\": %" PRIu64 "}", rows[i].excl, rows[i].incl);
        } else {
            fprintf(o, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  ", rows[i].excl,
                    total ? 100.0 * (double)rows[i].excl / (double)total : 0.0, rows[i].incl,
                    total ? 100.0 * (double)rows[i].incl / (double)total : 0.0);
            print_name(o, nm->name[rows[i].id]);
            fputc('\n', o);
        }
        shown++;
    }
    if (to->json) {
        fputs(shown ? "\n    ]}" : "]}", o);
        free(rows);
        return 0;
    }
    if (empty)
        fprintf(o, "%10" PRIu64 " %6.2f%% %10s %7s  (samples with an empty stack)\n", empty,
                total ? 100.0 * (double)empty / (double)total : 0.0, "", "");
    if (!total)
        fputs("(no samples)\n", o);
    free(rows);
    return 0;
}

static const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

static void print_header(FILE *o, const nt_trace_stats *ts, const cli_selected *chosen, bool filtered)
{
    if (filtered)
        fprintf(o, "samples:  %" PRIu64 " selected of %" PRIu64 " (on %" PRIu64 " of %" PRIu64 " thread%s)\n",
                chosen->samples, ts->samples, chosen->threads, ts->threads, plural(ts->threads));
    else
        fprintf(o, "samples:  %" PRIu64 " on %" PRIu64 " thread%s\n", ts->samples, ts->threads, plural(ts->threads));
    fprintf(o, "frames:   %" PRIu64 ", %" PRIu64 " resolved (%.1f%%), %" PRIu64 " unresolved (shown as 0x<ip>)\n",
            ts->frames, ts->resolved_frames,
            ts->frames ? 100.0 * (double)ts->resolved_frames / (double)ts->frames : 0.0,
            ts->frames - ts->resolved_frames);
    fprintf(o,
            "methods:  %" PRIu64 " record%s kept to name frames (read: %" PRIu64 " JIT, %" PRIu64
            " rundown, %" PRIu64 " unload event%s)\n",
            ts->method_records, plural(ts->method_records), ts->jit_records, ts->rundown_records, ts->unload_records,
            plural(ts->unload_records));
    if (ts->status == NT_ERR_TRUNCATED)
        fputs("note:     the trace is truncated; counts cover the samples read before the cut\n", o);
}

static void print_json_header(FILE *o, const char *path, const nt_trace *t, const nt_trace_stats *ts,
                              const cli_selected *chosen)
{
    fputs("{\n  \"file\": ", o);
    nt_json_fputs(o, path);
    fputs(",\n  \"status\": ", o);
    nt_json_fputs(o, nt_status_name(ts->status));
    fputs(",\n  \"message\": ", o);
    nt_json_fputs(o, ts->status == NT_OK ? NULL : nt_trace_message(t));
    fprintf(o,
            ",\n  \"samples\": %" PRIu64 ",\n  \"selected_samples\": %" PRIu64 ",\n  \"threads\": %" PRIu64
            ",\n  \"selected_threads\": %" PRIu64 ",\n  \"frames\": %" PRIu64 ",\n  \"resolved_frames\": %" PRIu64
            ",\n  \"method_records\": %" PRIu64 ",\n  \"jit_records\": %" PRIu64 ",\n  \"rundown_records\": %" PRIu64
            ",\n  \"unload_records\": %" PRIu64 ",\n  \"events_dropped\": %" PRIu64 ",\n  \"tables\": [",
            ts->samples, chosen->samples, ts->threads, chosen->threads, ts->frames, ts->resolved_frames,
            ts->method_records, ts->jit_records, ts->rundown_records, ts->unload_records, ts->events_dropped);
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, NULL, 'n' },
                                           { "inclusive", no_argument, NULL, 'i' },
                                           { "by-thread", no_argument, NULL, 'b' },
                                           { "json", no_argument, NULL, 'j' },
                                           CLI_FILTER_LONGOPTS,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    /* 'nettrace top -p PID' is the live form (cmd_top_live, the session component). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0 || strncmp(argv[i], "--pid=", 6) == 0 ||
            (strncmp(argv[i], "-p", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9'))
            return cmd_top_live(argc, argv);
    uint64_t top = 20;
    bool by_incl = false, by_thread = false, json = false;
    cli_filter filter = { 0 };
    int c, r;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!cli_u64_option("top", "-n", optarg, 0, UINT32_MAX, &top))
                return CLI_EXIT_USAGE;
            break;
        case 'i': by_incl = true; break;
        case 'b': by_thread = true; break;
        case 'j': json = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default:
            r = cli_filter_option(&filter, "top", c, optarg);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r == 0) {
                usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *path = argv[optind];
    nt_trace *t;
    int rc = cli_trace_load(path, &t);
    if (!t)
        return rc;
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    nt_export_options sel = { 0 };
    cli_filter_export(&filter, t, &sel);
    cli_selected chosen;
    if (!cli_filter_count(&filter, t, "top", &chosen)) {
        fprintf(stderr, "nettrace top: out of memory\n");
        nt_trace_free(t);
        return CLI_EXIT_ERROR;
    }
    FILE *o = stdout;
    table_out to = { o, json, 0 };
    if (json)
        print_json_header(o, path, t, &ts, &chosen);
    else
        print_header(o, &ts, &chosen, cli_filter_active(&filter));
    cli_warn_unnamed(t);
    if (!json)
        fputc('\n', o);

    names nm = { 0 };
    size_t nmeth = nt_trace_method_count(t), nstk = nt_trace_stack_count(t);
    nm.of_method = calloc(nmeth ? nmeth : 1, sizeof *nm.of_method);
    uint64_t *stack_w = calloc(nstk ? nstk : 1, sizeof *stack_w);
    uint32_t *seen = NULL;
    int err = !nm.of_method || !stack_w;
    if (!err) {
        /* Name every frame first so the 'seen' array can be sized once. */
        for (size_t k = 0; k < nstk && !err; k++) {
            nt_trace_stack st = nt_trace_stack_at(t, k);
            for (uint32_t f = 0; f < st.frame_count && !err; f++)
                err = name_id(&nm, &st.frames[f]) == UINT32_MAX;
        }
        seen = calloc(nm.n ? nm.n : 1, sizeof *seen);
        err = err || !seen;
    }
    if (!err && !by_thread) {
        err = table(t, &nm, (size_t)top, by_incl, &sel, stack_w, seen, &to);
    } else if (!err) {
        for (size_t th = 0; th < nt_trace_thread_count(t) && !err; th++) {
            uint64_t id = nt_trace_thread_id(t, th);
            if (filter.has_thread && id != filter.thread_id)
                continue;
            nt_export_options one = sel;
            one.has_thread = true;
            one.thread_id = id;
            if (!json)
                fprintf(o, "thread %" PRIu64 ":\n", id);
            err = table(t, &nm, (size_t)top, by_incl, &one, stack_w, seen, &to);
            if (!json)
                fputc('\n', o);
        }
    }
    if (json)
        fputs(to.tables ? "\n  ]\n}\n" : "]\n}\n", o);
    if (err) {
        fprintf(stderr, "nettrace: out of memory\n");
        rc = CLI_EXIT_ERROR;
    }
    for (size_t i = 0; i < nm.n; i++)
        free(nm.name[i]);
    free(nm.name);
    free(nm.of_method);
    u64map_free(&nm.of_ip);
    u64map_free(&nm.of_hash);
    free(stack_w);
    free(seen);
    nt_trace_free(t);
    return rc;
}
