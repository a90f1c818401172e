/* nettrace stacks FILE --format folded|speedscope|pprof [-o OUT]: export the
 * resolved stacks for flame graphs and profile viewers. */
#include "cli/progress.h"
#include "cli/select.h"
#include "cli/trace_load.h"

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
          "  -o, --output OUT   write to OUT instead of standard output\n"
          "      --weight W     samples (default for folded and pprof): each sample\n"
          "                       counts 1\n"
          "                     time: ns to the thread's next sample (the last one\n"
          "                       weighs the trace's sampling interval)\n"
          CLI_SIGNATURES_HELP CLI_FILTER_HELP
          "  -h, --help         this help\n",
          f);
}

typedef struct out_file {
    FILE *f;
    uint64_t written;
} out_file;

static int write_file(void *user, const void *data, size_t len)
{
    out_file *o = user;
    o->written += len;
    cli_progress_update(o->written, 0, 1);
    return fwrite(data, 1, len, o->f) == len ? 0 : -1;
}

int cmd_stacks(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, NULL, 'f' },
                                           { "output", required_argument, NULL, 'o' },
                                           { "weight", required_argument, NULL, 'w' },
                                           { "signatures", no_argument, NULL, 'S' },
                                           CLI_FILTER_LONGOPTS,
                                           { "help", no_argument, NULL, 'h' },
                                           { NULL, 0, NULL, 0 } };
    const char *format = "folded", *output = NULL;
    nt_export_options eo = { 0 };
    cli_filter filter = { 0 };
    bool weight_given = false;
    int c, r;
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
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default:
            r = cli_filter_option(&filter, "stacks", c, optarg);
            if (r < 0)
                return CLI_EXIT_USAGE;
            if (r == 0) {
                usage(stderr);
                return CLI_EXIT_USAGE;
            }
        }
    }
    nt_status (*export)(const nt_trace *, const nt_export_options *, nt_sink_fn, void *);
    if (strcmp(format, "folded") == 0)
        export = nt_export_folded;
    else if (strcmp(format, "speedscope") == 0) {
        export = nt_export_speedscope;
        /* Real time on the time-order view's axis, not the sample index. */
        if (!weight_given)
            eo.weight = NT_WEIGHT_TIME;
    }
    else if (strcmp(format, "pprof") == 0)
        export = nt_export_pprof;
    else {
        fprintf(stderr, "nettrace stacks: unknown format '%s' (folded, speedscope, pprof)\n", format);
        return CLI_EXIT_USAGE;
    }
    if (optind != argc - 1) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *path = argv[optind];
    if (export == nt_export_pprof && (!output || strcmp(output, "-") == 0) && isatty(1)) {
        fprintf(stderr, "nettrace stacks: pprof output is binary: use -o FILE or redirect standard output\n");
        return CLI_EXIT_USAGE;
    }
    const char *base = strrchr(path, '/');
    eo.name = base ? base + 1 : path;
    nt_trace *t;
    /* Folded and pprof need counts per stack only, unless a time window cuts samples. */
    bool count = export != nt_export_speedscope && !filter.from.set && !filter.to.set;
    int rc = cli_trace_load(path, count, &t);
    if (!t)
        return rc;
    cli_warn_unnamed(t);
    cli_filter_export(&filter, t, &eo);
    cli_selected sel;
    if (!cli_filter_count(&filter, t, "stacks", &sel)) {
        fprintf(stderr, "nettrace stacks: out of memory\n");
        nt_trace_free(t);
        return CLI_EXIT_ERROR;
    }
    FILE *out = stdout;
    if (output && strcmp(output, "-") != 0) {
        out = fopen(output, "wb");
        if (!out) {
            fprintf(stderr, "nettrace: %s: %s\n", output, strerror(errno));
            nt_trace_free(t);
            return CLI_EXIT_ERROR;
        }
    }
    cli_progress_phase("writing");
    out_file of = { out, 0 };
    nt_status s = export(t, &eo, write_file, &of);
    cli_progress_clear();
    if (fflush(out) != 0)
        s = NT_ERR_IO;
    if (out != stdout && fclose(out) != 0)
        s = NT_ERR_IO;
    if (s != NT_OK) {
        fprintf(stderr, "nettrace: writing %s failed: %s\n", output ? output : "standard output",
                nt_status_describe(s));
        rc = CLI_EXIT_ERROR;
    }
    nt_trace_free(t);
    return rc;
}
