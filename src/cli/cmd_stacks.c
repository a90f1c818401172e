/* nettrace stacks FILE --format folded|speedscope|pprof [-o OUT]: export the
 * resolved stacks for flame graphs and profile viewers. */
#include "cli/opts.h"
#include "cli/profile_cli.h"
#include "cli/select.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fputs("usage: nettrace stacks [OPTIONS] FILE\n"
          "\n"
          "Export the sampled stacks of a trace with frames named from its own method\n"
          "records.  FILE may be - for standard input.\n"
          "\n"
          "  -f, --format F     folded (default): 'root;...;leaf weight' lines for\n"
          "                       flamegraph.pl, identical stacks merged\n"
          "                     speedscope: JSON, one sampled profile per thread,\n"
          "                       busiest first, weighted by time (ns) unless\n"
          "                       --weight samples\n"
          "                     pprof: gzipped profile.proto (samples and wall time)\n"
          "                       for go tool pprof, Pyroscope, Parca\n"
          "                     html: one self-contained page (no network): an\n"
          "                       interactive flame graph / icicle with search,\n"
          "                       zoom and a thread selector; open it in a browser\n"
          "  -o, --output OUT   write to OUT instead of standard output (never FILE\n"
          "                       itself; OUT is replaced only when complete)\n"
          CLI_FORCE_HELP
          "      --weight W     samples (default for folded and pprof): each sample\n"
          "                       counts 1\n"
          "                     time: ns to the thread's next sample (the last one\n"
          "                       weighs the trace's sampling interval)\n"
          "      --profile P    thread-time (default; cpu is its old name), managed-cpu\n"
          "                     (= --managed-only), wall (= --weight time), or an event\n"
          "                     profile: alloc (bytes; pprof alloc_space/bytes and\n"
          "                     alloc_objects/count), exceptions (count), contention\n"
          "                     (wait ns; pprof delay/nanoseconds, contentions/count)\n"
          "      --by-count     event profiles: weigh by events, not bytes / wait\n"
          "      --by-label     event profiles: the type (and heap) or lock kind as the\n"
          "                     root frame (folded, speedscope)\n"
          CLI_MESSAGES_HELP CLI_SIGNATURES_HELP CLI_FILTER_HELP
          "                     (event profiles: not --managed-only; --from/--to count\n"
          "                     each event by its time, a contention wait by its start)\n"
          "  -h, --help         this help\n",
          f);
}

typedef nt_status (*trace_export_fn)(const nt_trace *, const nt_export_options *, nt_sink_fn, void *);

/* The thread samples' exporter of a --format, NULL when there is none. */
static trace_export_fn trace_exporter(const char *format)
{
    static const struct { const char *name; trace_export_fn fn; } formats[] = {
        { "folded", nt_export_folded }, { "speedscope", nt_export_speedscope },
        { "pprof", nt_export_pprof },   { "html", nt_export_html },
    };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(format, formats[i].name) == 0)
            return formats[i].fn;
    return NULL;
}

int cmd_stacks(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                           { "output", required_argument, NULL, 'o' },
                                           { "weight", required_argument, NULL, 'w' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           { "profile", required_argument, NULL, 'P' },
                                           { "by-count", no_argument, NULL, 'c' },
                                           { "by-label", no_argument, NULL, 'l' },
                                           { "messages", no_argument, NULL, 'M' },
                                           CLI_FILTER_LONGOPTS,
                                           CLI_FORCE_LONGOPT,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    const char *format = "folded", *output = NULL;
    nt_export_options eo = { 0 };
    cli_filter filter = { 0 };
    nt_profile_export_options po = { 0 };
    nt_profile_kind kind = NT_PROFILE_CPU;
    bool weight_given = false, messages = false;
    cli_out_rules rules = { .cmd = "stacks", .input_count = 1 };
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hf:o:", opts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'o': output = optarg; break;
        case 'S': eo.signatures = true; break;
        case 'w':
            if (strcmp(optarg, "samples") == 0)
                eo.weight = NT_WEIGHT_SAMPLES, weight_given = true;
            else if (strcmp(optarg, "time") == 0)
                eo.weight = NT_WEIGHT_TIME, weight_given = true;
            else {
                fprintf(stderr, "nettrace stacks: --weight is 'samples' or 'time'\n");
                return CLI_EXIT_USAGE;
            }
            break;
        case 'P':
            if (!cli_profile_parse("stacks", optarg, &kind, &filter.managed_only))
                return CLI_EXIT_USAGE;
            break;
        case 'c': po.by_count = true; break;
        case 'l': po.with_label = true; break;
        case 'M': messages = true; break;
        case CLI_OPT_FORCE: rules.force = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default:
            if (!cli_filter_option_or_usage(&filter, "stacks", c, optarg, usage))
                return CLI_EXIT_USAGE;
        }
    }
    if (!cli_profile_messages_fit("stacks", kind, messages))
        return CLI_EXIT_USAGE;
    if (kind == NT_PROFILE_WALL) {
        if (weight_given && eo.weight != NT_WEIGHT_TIME) {
            fprintf(stderr, "nettrace stacks: --profile wall weighs by time: not --weight samples\n");
            return CLI_EXIT_USAGE;
        }
        eo.weight = NT_WEIGHT_TIME;
        weight_given = true;
    }
    if (kind != NT_PROFILE_CPU && kind != NT_PROFILE_WALL) {
        const char *path = cli_file_operand(argc, argv, usage);
        if (!path)
            return CLI_EXIT_USAGE;
        cli_profile_select ps = { .kind = kind, .messages = messages };
        if (!cli_profile_filter(&filter, "stacks", &ps))
            return CLI_EXIT_USAGE;
        const char *base = strrchr(path, '/');
        po.signatures = eo.signatures;
        po.name = base ? base + 1 : path;
        rules.inputs = &path;
        return cli_profile_stacks(path, format, output, &rules, &ps, &po);
    }
    trace_export_fn export = trace_exporter(format);
    if (!export) {
        fprintf(stderr, "nettrace stacks: unknown format '%s' (folded, speedscope, pprof, html)\n", format);
        return CLI_EXIT_USAGE;
    }
    /* Speedscope: real time on the time-order view's axis, not the sample index. */
    if (export == nt_export_speedscope && !weight_given)
        eo.weight = NT_WEIGHT_TIME;
    const char *path = cli_file_operand(argc, argv, usage);
    if (!path)
        return CLI_EXIT_USAGE;
    if (export == nt_export_pprof && (!output || strcmp(output, "-") == 0) && isatty(1)) {
        fprintf(stderr, "nettrace stacks: pprof output is binary: use -o FILE or redirect standard output\n");
        return CLI_EXIT_USAGE;
    }
    const char *base = strrchr(path, '/');
    eo.name = base ? base + 1 : path;
    nt_trace *t;
    /* Folded and pprof need counts per stack only, unless a time window cuts samples. */
    bool count = export != nt_export_speedscope && !filter.from.set && !filter.to.set;
    int rc = cli_trace_load_window(path, count, &filter, &t);
    if (!t)
        return rc;
    cli_warn_unnamed(t);
    cli_filter_export(&filter, &eo);
    cli_selected sel;
    if (!cli_filter_count(&filter, t, "stacks", &sel)) {
        fprintf(stderr, "nettrace stacks: out of memory\n");
        nt_trace_free(t);
        return CLI_EXIT_ERROR;
    }
    cli_output out;
    rules.inputs = &path;
    if (!cli_output_open(&out, output, &rules)) {
        nt_trace_free(t);
        return CLI_EXIT_ERROR;
    }
    rc = cli_output_close(&out, export(t, &eo, cli_write_file, &out), rc);
    nt_trace_free(t);
    return rc;
}
