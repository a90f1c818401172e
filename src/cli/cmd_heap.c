/* nettrace heap FILE: a heap snapshot's type table (count, shallow and
 * retained bytes), its largest retainers, paths from the roots, the diff of
 * two snapshots, and the dominator tree as a flame graph. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "common/json.h"
#include "common/text_escape.h"
#include "nettrace_heap.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace heap [OPTIONS] FILE\n"
          "       nettrace heap --diff [OPTIONS] OLD NEW\n"
          "\n"
          "Read the heap snapshot in FILE (- for standard input; a .nettrace from\n"
          "'nettrace gcdump', or any trace with a heap dump's GC: keywords 0x1980001\n"
          "on Microsoft-Windows-DotNETRuntime) and print its type table: objects,\n"
          "shallow bytes and retained bytes (what the type's objects keep alive: a\n"
          "dominator tree from a virtual root above the GC roots) per type, largest\n"
          "first.  Types are named as dotnet-gcdump report names them.\n"
          "\n"
          "  -n, --top N          rows to print (default 30, with --json all; 0 = all)\n"
          "  -s, --sort K         shallow (default), retained or count\n"
          "      --retainers      the N objects that retain the most, then the types\n"
          "                       by retained bytes\n"
          "      --paths WHAT     the shortest reference path from a root to the object\n"
          "                       at address 0xADDR, or to the N objects of type WHAT\n"
          "                       closest to a root\n"
          "      --diff           compare OLD and NEW per type: count and bytes before,\n"
          "                       after and the change, largest growth first\n"
          "  -f, --format F       the dominator tree as a flame graph: folded, speedscope,\n"
          "                       pprof or html (one self-contained page) (root kind,\n"
          "                       then the dominators' types; a frame's total is what\n"
          "                       it retains)\n"
          "  -o, --output OUT     with -f: write to OUT instead of standard output;\n"
          "                       refused when OUT exists or is the snapshot read\n"
          "      --force        with -o: replace an existing OUT (never the input)\n"
          "      --by-count       with -f: weigh by objects instead of bytes\n"
          "      --json           one JSON object; its \"types\" member lists\n"
          "                       {\"type\",\"count\",\"shallow_bytes\",\"retained_bytes\"}\n"
          "  -h, --help           this help\n",
          f);
}

typedef struct heap_args {
    uint64_t top;
    bool top_given;
    nt_heap_order order;
    bool retainers, diff, json, by_count, force;
    const char *paths, *format, *output;
} heap_args;

/* A name from the trace, escaped for one text column. */
static void put_name(FILE *f, const char *s)
{
    char buf[2048];
    size_t n = cm_text_escape(buf, sizeof buf, s, "");
    fputs(buf, f);
    if (n >= sizeof buf)
        fputs("...", f);
}

static nt_heap *load(const char *path, int *rc)
{
    nt_heap *h = NULL;
    char msg[512] = "";
    nt_status s = strcmp(path, "-") == 0 ? nt_heap_from_fd(0, NULL, &h, msg, sizeof msg)
                                         : nt_heap_from_file(path, NULL, &h, msg, sizeof msg);
    if (!h) {
        fprintf(stderr, "nettrace heap: %s: %s\n", path, msg[0] ? msg : nt_status_describe(s));
        *rc = cli_exit_code(s);
        return NULL;
    }
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    if (!st.gc_found) {
        fprintf(stderr, "nettrace heap: %s holds no heap snapshot (no induced gen-2 GC with heap data; "
                        "record one with 'nettrace gcdump')\n", path);
        nt_heap_free(h);
        *rc = CLI_EXIT_ERROR;
        return NULL;
    }
    if (s != NT_OK)
        fprintf(stderr, "nettrace heap: %s: %s (the snapshot holds what was read before)\n", path, msg);
    else if (!st.complete)
        fprintf(stderr, "nettrace heap: %s: %s\n", path, nt_heap_message(h));
    *rc = s == NT_OK ? CLI_EXIT_OK : cli_exit_code(s);
    return h;
}

static void summary(FILE *f, nt_heap *h)
{
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    char source[40];
    if (st.format == NT_HEAP_FROM_GCDUMP) /* a .gcdump keeps no GC number */
        snprintf(source, sizeof source, "from a .gcdump");
    else
        snprintf(source, sizeof source, "GC #%u", st.gc_number);
    fprintf(f, "heap: %" PRIu64 " objects, %" PRIu64 " bytes, %" PRIu64 " references, %" PRIu64
               " roots, %s, %s\n",
            st.objects, st.total_bytes, st.edges, st.roots, source,
            st.complete ? "complete" : "INCOMPLETE (see the warning above)");
    if (st.unreachable)
        fprintf(f, "      %" PRIu64 " objects no root reaches (filed under [unreachable])\n", st.unreachable);
    if (st.edges_unresolved)
        fprintf(f, "      %" PRIu64 " references to addresses outside the snapshot (not followed)\n",
                st.edges_unresolved);
}

static void print_table(FILE *f, const nt_heap_table *t, uint64_t top)
{
    fprintf(f, "%16s %16s %10s  %s\n", "Retained bytes", "Shallow bytes", "Count", "Type [module]");
    size_t n = top && top < t->count ? (size_t)top : t->count;
    for (size_t i = 0; i < n; i++) {
        const nt_heap_type_row *r = &t->rows[i];
        fprintf(f, "%16" PRIu64 " %16" PRIu64 " %10" PRIu64 "  ", r->retained_bytes, r->shallow_bytes, r->count);
        put_name(f, r->name);
        if (r->module[0]) {
            fputs("  [", f);
            put_name(f, r->module);
            fputc(']', f);
        }
        fputc('\n', f);
    }
    if (n < t->count)
        fprintf(f, "(%zu more types: -n 0 prints all)\n", t->count - n);
}

static void json_table(FILE *f, nt_heap *h, const nt_heap_table *t, const char *path, uint64_t top)
{
    nt_heap_stats st = { 0 };
    nt_heap_stats_get(h, &st);
    fputs("{\"file\":", f);
    cm_json_fputs(f, path);
    fprintf(f, ",\"format\":\"%s\"", st.format == NT_HEAP_FROM_GCDUMP ? "gcdump" : "nettrace");
    fprintf(f, ",\"complete\":%s,\"gc_number\":%u,\"objects\":%" PRIu64 ",\"total_bytes\":%" PRIu64
               ",\"references\":%" PRIu64 ",\"roots\":%" PRIu64 ",\"unreachable_objects\":%" PRIu64
               ",\"unresolved_references\":%" PRIu64 ",\"lost_events\":%" PRIu64 ",\"types\":[",
            st.complete ? "true" : "false", st.gc_number, st.objects, st.total_bytes, st.edges, st.roots,
            st.unreachable, st.edges_unresolved, st.events_dropped);
    size_t n = top && top < t->count ? (size_t)top : t->count;
    for (size_t i = 0; i < n; i++) {
        const nt_heap_type_row *r = &t->rows[i];
        fputs(i ? ",\n{\"type\":" : "\n{\"type\":", f);
        cm_json_fputs(f, r->name);
        fputs(",\"module\":", f);
        cm_json_fputs(f, r->module);
        fprintf(f, ",\"count\":%" PRIu64 ",\"shallow_bytes\":%" PRIu64 ",\"retained_bytes\":%" PRIu64 "}", r->count,
                r->shallow_bytes, r->retained_bytes);
    }
    fputs("]}\n", f);
}

static void print_object(FILE *f, nt_heap *h, uint32_t i)
{
    nt_heap_object o = nt_heap_object_at(h, i);
    fprintf(f, "0x%016" PRIx64 " %12" PRIu64 " %14" PRIu64 "  ", o.address, o.size, nt_heap_retained(h, i));
    put_name(f, nt_heap_type_name(h, o.type));
    fputc('\n', f);
}

static int retainers(nt_heap *h, const heap_args *a)
{
    size_t n = a->top ? (size_t)a->top : nt_heap_object_count(h);
    uint32_t *top = malloc((n ? n : 1) * sizeof *top);
    if (!top) {
        fprintf(stderr, "nettrace heap: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    size_t got = nt_heap_top_retainers(h, top, n);
    printf("Objects by retained bytes:\n%-18s %12s %14s  %s\n", "Address", "Shallow", "Retained", "Type");
    for (size_t k = 0; k < got; k++)
        print_object(stdout, h, top[k]);
    free(top);
    nt_heap_table *t;
    if (nt_heap_type_table(h, NT_HEAP_BY_RETAINED, &t) != NT_OK) {
        fprintf(stderr, "nettrace heap: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    printf("\nTypes by retained bytes:\n");
    print_table(stdout, t, a->top);
    nt_heap_table_free(t);
    return CLI_EXIT_OK;
}

static void print_path(nt_heap *h, uint32_t obj)
{
    uint32_t *path = NULL;
    size_t len = 0, root = 0;
    nt_status s = nt_heap_path(h, obj, NULL, 0, &len, &root);
    if (s == NT_ERR_LIMIT && (path = malloc(len * sizeof *path)) != NULL)
        s = nt_heap_path(h, obj, path, len, &len, &root);
    if (s == NT_ERR_INVALID_ARG) {
        printf("no root reaches 0x%" PRIx64 " (it is garbage the GC had not yet freed, or reached only "
               "through a root the snapshot does not hold)\n", nt_heap_object_at(h, obj).address);
        return;
    }
    if (s != NT_OK) {
        printf("path to 0x%" PRIx64 ": %s\n", nt_heap_object_at(h, obj).address, nt_status_describe(s));
        free(path);
        return;
    }
    nt_heap_root r = nt_heap_root_at(h, root);
    printf("%s", nt_heap_root_kind_name(r.kind));
    if (r.name[0]) {
        putchar(' ');
        put_name(stdout, r.name);
    }
    printf(" (%zu objects)\n", len);
    for (size_t k = 0; k < len; k++) {
        fputs("  ", stdout);
        print_object(stdout, h, path[k]);
    }
    free(path);
}

static int paths(nt_heap *h, const heap_args *a)
{
    uint64_t addr;
    if (strncmp(a->paths, "0x", 2) == 0 && cli_parse_u64(a->paths, UINT64_MAX, &addr)) {
        uint32_t i;
        if (!nt_heap_find(h, addr, &i)) {
            fprintf(stderr, "nettrace heap: no object at 0x%" PRIx64 " in the snapshot\n", addr);
            return CLI_EXIT_ERROR;
        }
        if (nt_heap_dominators(h) != NT_OK)
            return CLI_EXIT_ERROR;
        printf("%-20s %12s %14s  %s\n", "  Address", "Shallow", "Retained", "Type");
        print_path(h, i);
        return CLI_EXIT_OK;
    }
    size_t n = a->top ? (size_t)a->top : 10;
    uint32_t *objs = malloc(n * sizeof *objs);
    if (!objs || nt_heap_dominators(h) != NT_OK) {
        free(objs);
        fprintf(stderr, "nettrace heap: out of memory\n");
        return CLI_EXIT_ERROR;
    }
    size_t got = nt_heap_objects_of_type(h, a->paths, objs, n);
    if (got == 0) {
        fprintf(stderr, "nettrace heap: no object of type '%s' in the snapshot (names as the type table prints "
                        "them)\n", a->paths);
        free(objs);
        return CLI_EXIT_ERROR;
    }
    printf("%-20s %12s %14s  %s\n", "  Address", "Shallow", "Retained", "Type");
    for (size_t k = 0; k < got; k++) {
        if (k)
            putchar('\n');
        print_path(h, objs[k]);
    }
    free(objs);
    return CLI_EXIT_OK;
}

static int flame(nt_heap *h, const char *path, const heap_args *a)
{
    nt_status (*export)(nt_heap *, const nt_heap_export_options *, nt_sink_fn, void *);
    if (strcmp(a->format, "folded") == 0)
        export = nt_heap_export_folded;
    else if (strcmp(a->format, "speedscope") == 0)
        export = nt_heap_export_speedscope;
    else if (strcmp(a->format, "pprof") == 0)
        export = nt_heap_export_pprof;
    else if (strcmp(a->format, "html") == 0)
        export = nt_heap_export_html;
    else {
        fprintf(stderr, "nettrace heap: unknown format '%s' (folded, speedscope, pprof, html)\n", a->format);
        return CLI_EXIT_USAGE;
    }
    if (export == nt_heap_export_pprof && (!a->output || strcmp(a->output, "-") == 0) && isatty(1)) {
        fprintf(stderr, "nettrace heap: pprof output is binary: use -o FILE or redirect standard output\n");
        return CLI_EXIT_USAGE;
    }
    /* A flame graph is cheap to make again: an existing file of any kind is left alone unless --force. */
    cli_output o;
    const char *inputs[] = { path };
    cli_out_rules rules = { .cmd = "heap", .inputs = inputs, .input_count = 1, .force = a->force,
                            .keep_existing = true };
    if (!cli_output_open(&o, a->output, &rules))
        return CLI_EXIT_ERROR;
    nt_heap_export_options eo = { 0 };
    eo.by_count = a->by_count;
    nt_status s = export(h, &eo, cli_write_file, &o);
    return cli_output_close(&o, s, s == NT_OK ? CLI_EXIT_OK : CLI_EXIT_ERROR);
}

static int diff(const char *old_path, const char *new_path, const heap_args *a)
{
    int rc = CLI_EXIT_OK, rc2 = CLI_EXIT_OK;
    nt_heap *before = load(old_path, &rc), *after = before ? load(new_path, &rc2) : NULL;
    nt_heap_table *ta = NULL, *tb = NULL;
    nt_heap_diff *d = NULL;
    if (!before || !after) {
        nt_heap_free(before);
        return before ? rc2 : rc;
    }
    if (nt_heap_type_table(before, NT_HEAP_BY_SHALLOW, &ta) != NT_OK ||
        nt_heap_type_table(after, NT_HEAP_BY_SHALLOW, &tb) != NT_OK || nt_heap_diff_tables(ta, tb, &d) != NT_OK) {
        fprintf(stderr, "nettrace heap: out of memory\n");
        rc = CLI_EXIT_ERROR;
    } else {
        size_t n = a->top && a->top < d->count ? (size_t)a->top : d->count;
        if (a->json)
            fputs("{\"old\":", stdout), cm_json_fputs(stdout, old_path), fputs(",\"new\":", stdout),
                cm_json_fputs(stdout, new_path), fputs(",\"types\":[", stdout);
        else
            printf("%12s %12s %12s %14s %14s %14s  %s\n", "Count old", "Count new", "Change", "Bytes old",
                   "Bytes new", "Change", "Type");
        for (size_t i = 0; i < n; i++) {
            const nt_heap_diff_row *r = &d->rows[i];
            if (a->json) {
                fputs(i ? ",\n{\"type\":" : "\n{\"type\":", stdout);
                cm_json_fputs(stdout, r->name);
                printf(",\"count_before\":%" PRIu64 ",\"count_after\":%" PRIu64 ",\"count_delta\":%" PRId64
                       ",\"bytes_before\":%" PRIu64 ",\"bytes_after\":%" PRIu64 ",\"bytes_delta\":%" PRId64
                       ",\"retained_before\":%" PRIu64 ",\"retained_after\":%" PRIu64 "}",
                       r->count_before, r->count_after, r->count_delta, r->bytes_before, r->bytes_after,
                       r->bytes_delta, r->retained_before, r->retained_after);
                continue;
            }
            printf("%12" PRIu64 " %12" PRIu64 " %+12" PRId64 " %14" PRIu64 " %14" PRIu64 " %+14" PRId64 "  ",
                   r->count_before, r->count_after, r->count_delta, r->bytes_before, r->bytes_after, r->bytes_delta);
            put_name(stdout, r->name);
            putchar('\n');
        }
        if (a->json)
            fputs("]}\n", stdout);
        else if (n < d->count)
            printf("(%zu more types: -n 0 prints all)\n", d->count - n);
    }
    nt_heap_diff_free(d);
    nt_heap_table_free(ta);
    nt_heap_table_free(tb);
    nt_heap_free(before);
    nt_heap_free(after);
    return rc != CLI_EXIT_OK ? rc : rc2;
}

static int parse(int argc, char **argv, heap_args *a)
{
    static const struct option opts[] = { { "top", required_argument, NULL, 'n' },
                                           { "sort", required_argument, NULL, 's' },
                                           { "retainers", no_argument, NULL, 'R' },
                                           { "paths", required_argument, NULL, 'P' },
                                           { "diff", no_argument, NULL, 'D' },
                                           { "format", required_argument, NULL, 'f' },
                                           { "output", required_argument, NULL, 'o' },
                                           { "by-count", no_argument, NULL, 'c' },
                                           { "json", no_argument, NULL, 'j' },
                                           CLI_FORCE_LONGOPT,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:s:f:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            if (!cli_u64_option("heap", "--top", optarg, 0, UINT32_MAX, &a->top))
                return CLI_EXIT_USAGE;
            a->top_given = true;
            break;
        case 's':
            if (strcmp(optarg, "shallow") == 0)
                a->order = NT_HEAP_BY_SHALLOW;
            else if (strcmp(optarg, "retained") == 0)
                a->order = NT_HEAP_BY_RETAINED;
            else if (strcmp(optarg, "count") == 0)
                a->order = NT_HEAP_BY_COUNT;
            else {
                fprintf(stderr, "nettrace heap: --sort is shallow, retained or count\n");
                return CLI_EXIT_USAGE;
            }
            break;
        case 'R': a->retainers = true; break;
        case 'P': a->paths = optarg; break;
        case 'D': a->diff = true; break;
        case 'f': a->format = optarg; break;
        case 'o': a->output = optarg; break;
        case 'c': a->by_count = true; break;
        case 'j': a->json = true; break;
        case CLI_OPT_FORCE: a->force = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (a->json && !a->top_given)
        a->top = 0; /* the JSON lists every type unless -n says otherwise */
    int modes = a->retainers + (a->paths != NULL) + a->diff + (a->format != NULL);
    if (modes > 1) {
        fprintf(stderr, "nettrace heap: --retainers, --paths, --diff and --format are one at a time\n");
        return CLI_EXIT_USAGE;
    }
    if (a->json && (a->retainers || a->paths || a->format)) {
        fprintf(stderr, "nettrace heap: --json is for the type table and --diff\n");
        return CLI_EXIT_USAGE;
    }
    if ((a->output || a->by_count || a->force) && !a->format) {
        fprintf(stderr, "nettrace heap: -o, --force and --by-count go with -f\n");
        return CLI_EXIT_USAGE;
    }
    return -1;
}

int cmd_heap(int argc, char **argv)
{
    heap_args a = { .top = 30 };
    int rc = parse(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (a.diff) {
        if (argc - optind != 2) {
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        return diff(argv[optind], argv[optind + 1], &a);
    }
    const char *path = cli_file_operand(argc, argv, usage);
    if (!path)
        return CLI_EXIT_USAGE;
    nt_heap *h = load(path, &rc);
    if (!h)
        return rc;
    int out;
    if (a.retainers)
        out = retainers(h, &a);
    else if (a.paths)
        out = paths(h, &a);
    else if (a.format)
        out = flame(h, path, &a);
    else {
        nt_heap_table *t;
        if (nt_heap_type_table(h, a.order, &t) != NT_OK) {
            fprintf(stderr, "nettrace heap: out of memory\n");
            nt_heap_free(h);
            return CLI_EXIT_ERROR;
        }
        if (a.json)
            json_table(stdout, h, t, path, a.top);
        else {
            summary(stdout, h);
            print_table(stdout, t, a.top);
        }
        nt_heap_table_free(t);
        out = CLI_EXIT_OK;
    }
    nt_heap_free(h);
    return out != CLI_EXIT_OK ? out : rc;
}
