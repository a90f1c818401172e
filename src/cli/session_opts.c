/* Provider specs and Ctrl-C handling for the commands that attach. */
#include "cli/session_opts.h"
#include "cli/cli.h"
#include "cli/opts.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_process_list(const char *cmd, nt_process_entry **list, size_t *n)
{
    nt_status st = nt_process_list(list, n, NULL);
    if (st == NT_OK)
        return CLI_EXIT_OK;
    fprintf(stderr, "nettrace %s: cannot list processes: %s\n", cmd, nt_status_describe(st));
    return cli_exit_code(st);
}

bool cli_parse_pid(const char *s, int32_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v <= 0 || v > INT32_MAX)
        return false;
    *pid = (int32_t)v;
    return true;
}

bool cli_parse_providers(const char *spec, cli_providers *out, char *err, size_t errsize)
{
    memset(out, 0, sizeof *out);
    out->storage = strdup(spec);
    if (!out->storage) {
        snprintf(err, errsize, "out of memory");
        return false;
    }
    char *save = NULL;
    for (char *item = strtok_r(out->storage, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        if (out->count == CLI_MAX_PROVIDERS) {
            snprintf(err, errsize, "more than %d providers", CLI_MAX_PROVIDERS);
            return false;
        }
        nt_provider *p = &out->list[out->count++];
        memset(p, 0, sizeof *p);
        /* Arguments may contain ':' themselves: split at most three times. */
        char *fields[4] = { item, NULL, NULL, NULL };
        for (int i = 1; i < 4; i++) {
            char *c = strchr(fields[i - 1], ':');
            if (!c)
                break;
            *c = 0;
            fields[i] = c + 1;
        }
        p->name = fields[0];
        if (!*p->name) {
            snprintf(err, errsize, "a provider has an empty name");
            return false;
        }
        if (fields[1] && *fields[1]) {
            if (!cli_parse_u64(fields[1], UINT64_MAX, &p->keywords)) {
                snprintf(err, errsize, "provider %s: bad keywords '%s'", p->name, fields[1]);
                return false;
            }
        }
        if (fields[2] && *fields[2]) {
            uint64_t lv;
            if (!cli_parse_u64(fields[2], 255, &lv)) {
                snprintf(err, errsize, "provider %s: bad level '%s'", p->name, fields[2]);
                return false;
            }
            p->level = lv ? (uint32_t)lv : NT_LEVEL_LOG_ALWAYS; /* a level written 0 is sent as 0 */
        }
        p->arguments = fields[3];
    }
    if (out->count == 0) {
        snprintf(err, errsize, "no providers in '%s'", spec);
        return false;
    }
    return true;
}

void cli_providers_free(cli_providers *p)
{
    free(p->storage);
    p->storage = NULL;
}

static int g_pipe[2] = { -1, -1 };
static volatile sig_atomic_t g_count;
static nt_session *volatile g_session;
static volatile sig_atomic_t g_starting;

static void on_signal(int sig)
{
    (void)sig;
    int saved = errno;
    g_count++;
    if (g_count == 1) {
        char c = 1;
        ssize_t r = write(g_pipe[1], &c, 1);
        (void)r;
    }
    /* While starting there is nothing to stop cleanly: the first Ctrl-C cancels. */
    if ((g_count > 1 || g_starting) && g_session)
        nt_session_cancel(g_session); /* writes one eventfd: safe here */
    errno = saved;
}

void cli_interrupts_install(void)
{
    if (g_pipe[0] < 0 && pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        g_pipe[0] = g_pipe[1] = -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

void cli_interrupts_session(nt_session *s) { g_session = s; }
void cli_start_guard_begin(nt_session *s)
{
    g_session = s;
    g_starting = true;
    if (g_count > 0)
        nt_session_cancel(s); /* a Ctrl-C that came before (looking for the endpoint) */
}

void cli_start_guard_end(void) { g_starting = false; }
int cli_interrupt_fd(void) { return g_pipe[0]; }
int cli_interrupt_count(void) { return g_count; }
