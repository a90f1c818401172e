/* Provider specs and Ctrl-C handling for the commands that attach. */
#include "cli/keywords.h"
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

const char *cli_endpoint_reason(nt_endpoint_reason r)
{
    switch (r) {
    case NT_ENDPOINT_NO_PROCESS: return "no process has that pid";
    case NT_ENDPOINT_NO_SOCKET:
        return "no diagnostics socket: not a .NET process, its runtime still starting (--wait T waits), or "
               "DOTNET_EnableDiagnostics=0";
    case NT_ENDPOINT_STALE: return "only the sockets of an earlier process with that pid are left";
    case NT_ENDPOINT_NO_ACCESS: return "its environment is not readable: another user's process (run as that user)";
    case NT_ENDPOINT_FOREIGN:
        return "foreign: the only socket under its endpoint's name belongs to another user, who may have "
               "planted it";
    default: return "no endpoint found";
    }
}

bool cli_pid_option(const char *cmd, const char *arg, int32_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (errno || *end || end == arg || v <= 0 || v > INT32_MAX) {
        fprintf(stderr, "nettrace %s: -p wants a process id, not '%s'\n", cmd, arg);
        return false;
    }
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
        if (fields[1] && *fields[1] && !cli_keywords_parse(p->name, fields[1], &p->keywords, err, errsize))
            return false;
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

/* Whether NAME names the process: its comm, its program's file name or its entry assembly (pi: what its
 * runtime said, nt_process_info_get_many). */
static bool name_matches(const nt_process_entry *pe, nt_process_info *pi, nt_status st, const char *name)
{
    if (st == NT_ERR_NO_ENDPOINT)
        return false; /* not served by the process itself */
    if (strcmp(pe->command, name) == 0)
        return true;
    if (strcmp(pi->entrypoint_assembly, name) == 0)
        return true;
    /* "dotnet app.dll" or "./app": the file names of the first two words */
    char *save = NULL;
    int words = 0;
    for (char *w = strtok_r(pi->command_line, " ", &save); w && words < 2; w = strtok_r(NULL, " ", &save), words++) {
        char *base = strrchr(w, '/');
        base = base ? base + 1 : w;
        size_t n = strlen(name);
        if (strcmp(base, name) == 0 || (strncmp(base, name, n) == 0 && strcmp(base + n, ".dll") == 0))
            return true;
    }
    return false;
}

/* The processes of list matching name (every runtime asked at once, so one
 * that never answers costs the second once): their count, the last one's pid
 * in *pid, and their pids in pids; -1 when memory is short. */
static long matching(const nt_process_entry *list, size_t n, const char *name, int32_t *pid, char *pids, size_t size)
{
    nt_process_info *pi = calloc(n ? n : 1, sizeof *pi);
    nt_status *st = calloc(n ? n : 1, sizeof *st);
    nt_endpoint *eps = calloc(n ? n : 1, sizeof *eps);
    long found = -1;
    if (pi && st && eps) {
        for (size_t i = 0; i < n; i++)
            eps[i] = list[i].endpoint;
        nt_process_info_get_many(eps, n, pi, st, nt_deadline_after_ms(1000));
        found = 0;
        for (size_t i = 0; i < n; i++) {
            if (!name_matches(&list[i], &pi[i], st[i], name))
                continue;
            *pid = list[i].pid;
            size_t len = strlen(pids);
            snprintf(pids + len, size - len, "%s%d", found ? ", " : "", (int)list[i].pid);
            found++;
        }
    }
    free(pi);
    free(st);
    free(eps);
    return found;
}

int cli_pid_by_name(const char *cmd, const char *name, int32_t *pid, int64_t wait_until)
{
    nt_process_entry *list;
    size_t n;
    int rc;
again:
    rc = cli_process_list(cmd, &list, &n);
    if (rc != CLI_EXIT_OK)
        return rc;
    char pids[256] = "";
    long found = matching(list, n, name, pid, pids, sizeof pids);
    nt_process_list_free(list, NULL);
    if (found < 0) {
        fprintf(stderr, "nettrace %s: out of memory\n", cmd);
        return CLI_EXIT_ERROR;
    }
    if (found == 1)
        return CLI_EXIT_OK;
    if (!found && nt_now_ns() < wait_until && cli_interrupt_count() == 0) {
        usleep(100 * 1000);
        goto again;
    }
    if (!found) {
        fprintf(stderr, "nettrace %s: no .NET process named '%s' (see 'nettrace ps')\n", cmd, name);
        return cli_exit_code(NT_ERR_NO_ENDPOINT);
    }
    fprintf(stderr, "nettrace %s: %ld processes are named '%s' (pids %s): pick one with -p\n", cmd, found, name,
            pids);
    return CLI_EXIT_USAGE;
}


bool cli_process_gone(int32_t pid, int wait_ms)
{
    for (int waited = 0;; waited += 20) {
        if (kill(pid, 0) != 0 && errno == ESRCH)
            return true;
        if (waited >= wait_ms)
            return false;
        usleep(20 * 1000);
    }
}
