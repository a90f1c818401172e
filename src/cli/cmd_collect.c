/* nettrace collect -p PID: attach to a running .NET process and write its
 * EventPipe stream to a .nettrace file.  Ctrl-C (or --duration) stops the
 * session cleanly, rundown included, so the file's frames resolve; a second
 * Ctrl-C abandons it, leaving a truncated file whose complete blocks read. */
#include "cli/cli.h"
#include "cli/profile_presets.h"
#include "cli/session_opts.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void collect_usage(FILE *f)
{
    fputs("usage: nettrace collect -p PID [-o FILE] [--duration S] [--providers LIST]\n"
          "                        [--profile NAME[,NAME]] [--buffer-mb N] [--no-rundown] [--max-bytes N]\n"
          "                        [--connect-timeout S] [--stop-timeout S] [--wait S] [-q]\n"
          "  LIST is Name[:keywords[:level[:args]]],...  (default: the sample profiler\n"
          "  and the runtime's loader+JIT keywords at verbose level)\n"
          "  --wait S keeps looking for the process's endpoint for S seconds (a runtime\n"
          "  that is still starting has none yet).\n"
          "  Ctrl-C stops cleanly (with rundown); a second Ctrl-C abandons the session.\n",
          f);
    fputs("  --profile turns on what each named profile needs (added to --providers; one\n"
          "  provider named twice gets both keyword sets and the higher level):\n", f);
    cli_profile_table_print(f);
}

int cmd_collect(int argc, char **argv)
{
    static const struct option opts[] = {
        { "pid", required_argument, NULL, 'p' },
        { "output", required_argument, NULL, 'o' },
        { "duration", required_argument, NULL, 'd' },
        { "providers", required_argument, NULL, 'P' },
        { "profile", required_argument, NULL, 'F' },
        { "buffer-mb", required_argument, NULL, 'b' },
        { "no-rundown", no_argument, NULL, 'R' },
        { "max-bytes", required_argument, NULL, 'm' },
        { "connect-timeout", required_argument, NULL, 'c' },
        { "stop-timeout", required_argument, NULL, 's' },
        { "wait", required_argument, NULL, 'w' },
        { "quiet", no_argument, NULL, 'q' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int32_t pid = 0;
    const char *output = NULL, *profile = NULL;
    double duration = 0, connect_timeout = 10, stop_timeout = 60, wait_endpoint = 0;
    cli_providers providers = { .count = 0 };
    nt_session_config cfg;
    memset(&cfg, 0, sizeof cfg);
    bool quiet = false;
    char err[256];
    int c, rc = CLI_EXIT_USAGE;
    optind = 1;
    while ((c = getopt_long(argc, argv, "p:o:d:qh", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'p':
            if (!cli_parse_pid(optarg, &pid)) {
                fprintf(stderr, "nettrace collect: bad pid '%s'\n", optarg);
                goto out;
            }
            break;
        case 'o': output = optarg; break;
        case 'd':
        case 'c':
        case 's':
        case 'w':
            if (!cli_parse_seconds(optarg, c == 'd'   ? &duration
                                       : c == 'c' ? &connect_timeout
                                       : c == 's' ? &stop_timeout
                                                  : &wait_endpoint)) {
                fprintf(stderr, "nettrace collect: bad number of seconds '%s'\n", optarg);
                goto out;
            }
            break;
        case 'P':
            cli_providers_free(&providers);
            if (!cli_parse_providers(optarg, &providers, err, sizeof err)) {
                fprintf(stderr, "nettrace collect: --providers: %s\n", err);
                goto out;
            }
            break;
        case 'F': profile = optarg; break;
        case 'b':
            errno = 0;
            cfg.buffer_mb = (uint32_t)strtoul(optarg, &end, 10);
            if (errno || *end || cfg.buffer_mb == 0) {
                fprintf(stderr, "nettrace collect: bad --buffer-mb '%s'\n", optarg);
                goto out;
            }
            break;
        case 'R': cfg.no_rundown = true; break;
        case 'm':
            errno = 0;
            cfg.max_stream_bytes = strtoull(optarg, &end, 10);
            if (errno || *end || cfg.max_stream_bytes == 0) {
                fprintf(stderr, "nettrace collect: bad --max-bytes '%s'\n", optarg);
                goto out;
            }
            break;
        case 'q': quiet = true; break;
        case 'h':
            collect_usage(stdout);
            rc = CLI_EXIT_OK;
            goto out;
        default: collect_usage(stderr); goto out;
        }
    }
    if (pid == 0 || optind != argc) {
        collect_usage(stderr);
        goto out;
    }
    if (profile && !cli_profile_providers(profile, &providers, err, sizeof err)) {
        fprintf(stderr, "nettrace collect: --profile: %s\n", err);
        goto out;
    }
    if (providers.count) {
        cfg.providers = providers.list;
        cfg.provider_count = providers.count;
    }
    char defname[64];
    if (!output) {
        snprintf(defname, sizeof defname, "trace-%" PRId32 ".nettrace", pid);
        output = defname;
    }

    nt_endpoint ep;
    nt_status st = nt_endpoint_find(pid, &ep);
    /* No endpoint yet may mean a runtime that is still starting: retry. */
    int64_t wait_until = nt_deadline_after_ms((int64_t)(wait_endpoint * 1000));
    while (st == NT_ERR_NO_ENDPOINT && ep.reason != NT_ENDPOINT_NO_PROCESS && wait_endpoint > 0 &&
           nt_now_ns() < wait_until) {
        usleep(50 * 1000);
        st = nt_endpoint_find(pid, &ep);
    }
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: process %" PRId32 " has no diagnostics endpoint (%s)\n", pid,
                nt_endpoint_reason_name(ep.reason));
        rc = cli_exit_code(st);
        goto out;
    }
    int fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "nettrace collect: %s: %s\n", output, strerror(errno));
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    cfg.sink = nt_sink_fd;
    cfg.sink_user = &fd;
    nt_session *s = nt_session_new(&cfg, NULL);
    if (!s) {
        fprintf(stderr, "nettrace collect: out of memory\n");
        close(fd);
        rc = CLI_EXIT_ERROR;
        goto out;
    }
    cli_interrupts_install();
    cli_interrupts_session(s);
    st = nt_session_start_endpoint(s, &ep, nt_deadline_after_ms((int64_t)(connect_timeout * 1000)));
    if (st != NT_OK) {
        fprintf(stderr, "nettrace collect: %s\n", nt_session_message(s));
        rc = cli_exit_code(st);
        cli_interrupts_session(NULL);
        nt_session_free(s);
        close(fd);
        goto out;
    }
    if (!quiet)
        fprintf(stderr, "nettrace collect: pid %" PRId32 " -> %s (Ctrl-C to stop%s)\n", pid, output,
                duration > 0 ? " early" : "");

    /* Run until the duration passes, Ctrl-C, or the stream ends by itself. */
    int64_t until = duration > 0 ? nt_deadline_after_ms((int64_t)(duration * 1000)) : NT_DEADLINE_NONE;
    for (;;) {
        st = nt_session_wait(s, nt_now_ns());
        if (st != NT_ERR_TIMEOUT)
            break;
        if (until != NT_DEADLINE_NONE && nt_now_ns() >= until)
            break;
        struct pollfd pf = { .fd = cli_interrupt_fd(), .events = POLLIN };
        int ms = 200;
        if (until != NT_DEADLINE_NONE) {
            int64_t left = (until - nt_now_ns()) / 1000000 + 1;
            if (left < ms)
                ms = left < 0 ? 0 : (int)left;
        }
        if (poll(&pf, 1, ms) > 0 || cli_interrupt_count() > 0)
            break;
    }
    if (st == NT_ERR_TIMEOUT) {
        if (!quiet)
            fprintf(stderr, "nettrace collect: stopping (rundown; Ctrl-C again to abandon)...\n");
        st = nt_session_stop(s, nt_deadline_after_ms((int64_t)(stop_timeout * 1000)));
    }
    cli_interrupts_session(NULL);
    uint64_t bytes = nt_session_bytes(s);
    if (st == NT_OK) {
        if (!quiet)
            fprintf(stderr, "nettrace collect: wrote %" PRIu64 " bytes to %s\n", bytes, output);
        rc = CLI_EXIT_OK;
    } else {
        fprintf(stderr, "nettrace collect: %s after %" PRIu64 " bytes (%s): %s\n", nt_status_name(st), bytes,
                output, nt_session_message(s));
        rc = cli_exit_code(st);
    }
    nt_session_free(s);
    if (close(fd) != 0) {
        fprintf(stderr, "nettrace collect: %s: %s\n", output, strerror(errno));
        rc = CLI_EXIT_ERROR;
    }
out:
    cli_providers_free(&providers);
    return rc;
}
