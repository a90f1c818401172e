/* nettrace top FILE: hot methods by exclusive (leaf) and inclusive (anywhere
 * on the stack, once per sample) samples, overall or per thread.  Methods are
 * named as in 'nettrace samples'; a frame no method record covers is shown by
 * its address, and the header says how many frames resolved. */
#include "cli/profile_cli.h"
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
          "      --managed-only only samples taken in managed code\n"
          "      --thread ID    only this thread\n"
          "      --profile P    cpu or wall (default: the thread samples, counted), or\n"
          "                     alloc (bytes), exceptions (throws), contention (wait\n"
          "                     ns): weight by label (type and heap, lock kind) and\n"
          "                     site (leaf frame), largest first\n"
          "  -h, --help         this help\n",
          f);
}

/* Count the selected samples per stack, then per name, and print the table. */
static int table(const nt_trace *t, names *nm, size_t top, bool by_incl, bool managed_only, bool has_thread,
                 uint64_t thread, uint64_t *stack_w, uint32_t *seen, FILE *o)
{
    size_t ns = nt_trace_stack_count(t), n = nt_trace_sample_count(t);
    memset(stack_w, 0, (ns ? ns : 1) * sizeof *stack_w);
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        nt_trace_sample s = nt_trace_sample_at(t, i);
        if ((managed_only && s.type != NT_SAMPLE_MANAGED) || (has_thread && s.thread_id != thread))
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
    qsort(rows, nm->n, sizeof *rows, by_incl ? cmp_row_incl : cmp_row_excl);
    fprintf(o, "%10s %7s %10s %7s  %s\n", "exclusive", "share", "inclusive", "share", "method");
    size_t shown = 0;
    for (size_t i = 0; i < nm->n && (top == 0 || shown < top); i++) {
        if (!rows[i].incl)
            continue;
        fprintf(o, "%10" PRIu64 " %6.2f%% %10" PRIu64 " %6.2f%%  %s\n", rows[i].excl,
                total ? 100.0 * (double)rows[i].excl / (double)total : 0.0, rows[i].incl,
                total ? 100.0 * (double)rows[i].incl / (double)total : 0.0, nm->name[rows[i].id]);
        shown++;
    }
    if (empty)
        fprintf(o, "%10" PRIu64 " %6.2f%% %10s %7s  (samples with an empty stack)\n", empty,
                total ? 100.0 * (double)empty / (double)total : 0.0, "", "");
    if (!total)
        fputs("(no samples)\n", o);
    free(rows);
    return 0;
}

int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = { { "top", required_argument, NULL, 'n' },
                                           { "inclusive", no_argument, NULL, 'i' },
                                           { "by-thread", no_argument, NULL, 'b' },
                                           { "managed-only", no_argument, NULL, 'm' },
                                           { "thread", required_argument, NULL, 't' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    nt_profile_kind kind = NT_PROFILE_CPU;
    /* 'nettrace top -p PID' is the live form (cmd_top_live, the session component). */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-p") == 0 || strcmp(argv[i], "--pid") == 0 || strncmp(argv[i], "--pid=", 6) == 0 ||
            (strncmp(argv[i], "-p", 2) == 0 && argv[i][2] >= '0' && argv[i][2] <= '9'))
            return cmd_top_live(argc, argv);
    size_t top = 20;
    bool by_incl = false, by_thread = false, managed_only = false, has_thread = false;
    uint64_t thread = 0;
    int c;
    char *end;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hn:", opts, NULL)) != -1) {
        switch (c) {
        case 'n':
            top = (size_t)strtoull(optarg, &end, 10);
            if (*end || !*optarg) {
                fprintf(stderr, "nettrace top: -n wants a number\n");
                return CLI_EXIT_USAGE;
            }
            break;
        case 'i': by_incl = true; break;
        case 'b': by_thread = true; break;
        case 'm': managed_only = true; break;
        case 't':
            thread = strtoull(optarg, &end, 0);
            if (*end || !*optarg) {
                fprintf(stderr, "nettrace top: --thread wants a thread id\n");
                return CLI_EXIT_USAGE;
            }
            has_thread = true;
            break;
        case 'P':
            if (!cli_profile_parse("top", optarg, &kind))
                return CLI_EXIT_USAGE;
            break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *path = argv[optind];
    if (kind != NT_PROFILE_CPU && kind != NT_PROFILE_WALL)
        return cli_profile_top(path, kind, top ? top : SIZE_MAX, by_thread, has_thread, thread);
    nt_trace *t;
    int rc = cli_trace_load(path, &t);
    if (!t)
        return rc;
    nt_trace_stats ts;
    nt_trace_stats_get(t, &ts);
    FILE *o = stdout;
    fprintf(o, "samples:  %" PRIu64 " on %" PRIu64 " threads\n", ts.samples, ts.threads);
    fprintf(o, "frames:   %" PRIu64 ", %" PRIu64 " resolved (%.1f%%), %" PRIu64 " unresolved (shown as 0x<ip>)\n",
            ts.frames, ts.resolved_frames, ts.frames ? 100.0 * (double)ts.resolved_frames / (double)ts.frames : 0.0,
            ts.frames - ts.resolved_frames);
    fprintf(o, "methods:  %" PRIu64 " records (%" PRIu64 " JIT, %" PRIu64 " rundown, %" PRIu64 " unloads)\n",
            ts.method_records, ts.jit_records, ts.rundown_records, ts.unload_records);
    if (ts.status == NT_ERR_TRUNCATED)
        fputs("note:     the trace is truncated; counts cover the samples read before the cut\n", o);
    cli_warn_unnamed(t);
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
        err = table(t, &nm, top, by_incl, managed_only, has_thread, thread, stack_w, seen, o);
    } else if (!err) {
        for (size_t th = 0; th < nt_trace_thread_count(t) && !err; th++) {
            uint64_t id = nt_trace_thread_id(t, th);
            if (has_thread && id != thread)
                continue;
            fprintf(o, "thread %" PRIu64 ":\n", id);
            err = table(t, &nm, top, by_incl, managed_only, true, id, stack_w, seen, o);
            fputc('\n', o);
        }
    }
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
