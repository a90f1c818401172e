/* convert and slice: the tool's side of nt_convert (cli/convert_run.h). */
#include "cli/convert_run.h"
#include "cli/cli.h"
#include "cli/opts.h"
#include "cli/progress.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <string.h>

typedef struct run_out {
    FILE *f;
    int err;          /* the first failed write's errno */
} run_out;

static int sink(void *user, const void *data, size_t len)
{
    run_out *o = user;
    errno = 0;
    if (fwrite(data, 1, len, o->f) == len)
        return 0;
    o->err = errno ? errno : EIO;
    return -1;
}

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    cli_progress_update(done, total, 1);
}

/* Flush and close the output, kept when keep; false (with the reason said
 * once) when a write failed. */
static bool close_output(const char *cmd, cli_out_file *file, run_out *o, const char *path, bool keep)
{
    errno = 0;
    bool ok = fflush(o->f) == 0 && !ferror(o->f);
    int e = errno;
    if (o->f != stdout && fclose(o->f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok && !o->err) /* (a failed write was reported already) */
        fprintf(stderr, "nettrace %s: %s: %s\n", cmd, path, strerror(e ? e : EIO));
    return cli_out_file_close(file, cmd, ok && keep) && ok;
}

/* What the conversion left out, said; whether it left anything out. */
static bool say_losses(const char *cmd, const nt_convert_stats *st)
{
    if (st->events_without_metadata)
        fprintf(stderr, "nettrace %s: %" PRIu64 " events without metadata were left out\n", cmd,
                st->events_without_metadata);
    if (st->fieldless_metadata)
        fprintf(stderr, "nettrace %s: %" PRIu64 " metadata records lost field descriptions the output cannot hold\n",
                cmd, st->fieldless_metadata);
    return st->events_without_metadata || st->fieldless_metadata;
}

/* The status said; the exit status and whether the output is kept. */
static int say_outcome(const char *cmd, const char *in_path, const char *out_path, nt_status s,
                       const nt_convert_stats *st, const run_out *o, bool *keep)
{
    *keep = false;
    if (st->output_failed) {
        if (o->err)
            fprintf(stderr, "nettrace %s: %s: %s\n", cmd, out_path, strerror(o->err));
        else
            fprintf(stderr, "nettrace %s: %s\n", cmd, st->message);
        return CLI_EXIT_ERROR;
    }
    int rc = CLI_EXIT_OK;
    if (s == NT_ERR_IO && st->os_error) {
        fprintf(stderr, "nettrace %s: %s: %s\n", cmd, in_path, strerror(st->os_error));
        rc = CLI_EXIT_ERROR;
    } else if (s == NT_ERR_TRUNCATED) {
        /* A truncated input still gives a complete output of what was read. */
        fprintf(stderr, "nettrace %s: warning: %s (the output holds what was read)\n", cmd, st->message);
        rc = cli_exit_code(s);
        *keep = true;
    } else if (s != NT_OK && st->events_written) {
        fprintf(stderr, "nettrace %s: %s (the output holds the %" PRIu64 " events read before it)\n", cmd,
                st->message, st->events_written);
        rc = cli_exit_code(s);
        *keep = true;
    } else if (s != NT_OK) {
        fprintf(stderr, "nettrace %s: %s\n", cmd, st->message);
        rc = cli_exit_code(s);
    } else {
        *keep = true;
    }
    if (say_losses(cmd, st) && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_INCOMPLETE;
    return rc;
}

int cli_convert_run(const char *cmd, const char *in_path, const char *out_path, bool force,
                    const nt_convert_options *opt)
{
    cli_out_rules rules = { .cmd = cmd, .inputs = &in_path, .input_count = 1, .force = force };
    cli_out_file file;
    if (!cli_out_file_open(&file, out_path, &rules))
        return CLI_EXIT_ERROR;
    out_path = file.path;
    run_out o = { .f = cli_out_file_owned(&file) ? fdopen(file.fd, "wb") : stdout };
    if (!o.f) {
        fprintf(stderr, "nettrace %s: %s: %s\n", cmd, out_path, strerror(errno));
        cli_out_file_close(&file, cmd, false);
        return CLI_EXIT_ERROR;
    }
    if (cli_out_file_owned(&file))
        file.fd = -1; /* the stream owns it */
    char why[256];
    int fd = cli_open_input(in_path, why, sizeof why);
    if (fd < 0) {
        fprintf(stderr, "nettrace %s: %s\n", cmd, why);
        close_output(cmd, &file, &o, out_path, false);
        return CLI_EXIT_ERROR;
    }
    nt_feed_options feed = { .progress = on_progress };
    nt_convert_options co = *opt;
    co.feed = &feed;
    nt_convert_stats st = { .struct_size = sizeof st };
    cli_progress_start();
    cli_progress_phase("reading");
    nt_status s = nt_convert(fd, &co, sink, &o, &st);
    cli_progress_clear();
    cli_close_input(fd);
    bool keep;
    int rc = say_outcome(cmd, in_path, out_path, s, &st, &o, &keep);
    if (!close_output(cmd, &file, &o, out_path, keep))
        rc = CLI_EXIT_ERROR;
    return rc;
}

bool cli_convert_format(const char *cmd, const char *flag, const char *arg, uint32_t *format)
{
    if (strcmp(arg, "v4") == 0 || strcmp(arg, "v5") == 0 || strcmp(arg, "4") == 0)
        *format = 4;
    else if (strcmp(arg, "v6") == 0 || strcmp(arg, "6") == 0)
        *format = 6;
    else {
        fprintf(stderr, "nettrace %s: --%s must be v4 or v6, not '%s'\n", cmd, flag, arg);
        return false;
    }
    return true;
}

int cli_convert_args(const cli_convert_command *c, int argc, char **argv, cli_convert_request *a)
{
    static const struct option SHARED[] = { { "output", required_argument, NULL, 'o' },
                                            CLI_FORCE_LONGOPT,
                                            { "help", no_argument, NULL, 'h' } };
    enum { SHARED_COUNT = sizeof SHARED / sizeof SHARED[0] };
    struct option opts[CLI_CONVERT_OWN_MAX + SHARED_COUNT + 1] = { { 0 } };
    size_t n = 0;
    while (n < CLI_CONVERT_OWN_MAX && c->own[n].name) {
        opts[n] = c->own[n];
        n++;
    }
    memcpy(opts + n, SHARED, sizeof SHARED);
    char shorts[32];
    snprintf(shorts, sizeof shorts, "%so:h", c->own_short);
    *a = (cli_convert_request){ .o = { .struct_size = sizeof a->o } };
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
        switch (ch) {
        case 'o': a->out_path = optarg; break;
        case CLI_OPT_FORCE: a->force = true; break;
        case 'h': c->usage(stdout); return CLI_EXIT_OK;
        case '?': return cli_usage_hint(argv[0]);
        default:
            if (!c->own_option(ch, optarg, &a->o))
                return CLI_EXIT_USAGE;
        }
    }
    a->in_path = optind == argc - 1 ? argv[optind] : NULL;
    return -1;
}
