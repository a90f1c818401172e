/* LiveTarget build/start and the per-thread hottest-method analysis. */
#include "live_target.h"

#include "nettrace_session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char g_dir[1024];

static bool on_path(const char *prog)
{
    const char *path = getenv("PATH");
    if (!path)
        return false;
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    char *save = NULL;
    for (char *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char full[4200];
        snprintf(full, sizeof full, "%s/%s", *d ? d : ".", prog);
        if (access(full, X_OK) == 0)
            return true;
    }
    return false;
}

static time_t mtime_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_mtime : 0;
}

const char *live_build_dir(void)
{
    if (!g_dir[0]) {
        const char *top = getenv("top_builddir");
        char cwd[900];
        if (!top || !*top)
            top = getcwd(cwd, sizeof cwd) ? cwd : ".";
        snprintf(g_dir, sizeof g_dir, "%s/tests/workloads-build/LiveTarget", top);
    }
    return g_dir;
}

/* Build tests/workloads/NAME into DIR/out once per tree (DIR: the build
 * tree's tests/workloads-build/NAME).  NULL when built, else why not. */
static const char *prepare(const char *name, const char *dir)
{
    static char why[1300];
    if (!on_path("dotnet"))
        return "dotnet is not on PATH: the tests against a real .NET runtime cannot run here";
    const char *src_top = getenv("top_srcdir");
    if (!src_top || !*src_top)
        src_top = ".";
    char src[1024];
    snprintf(src, sizeof src, "%s/tests/workloads/%s", src_top, name);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) {
        snprintf(why, sizeof why, "cannot create %s", dir);
        return why;
    }
    /* One build per tree even with tests running in parallel. */
    char lock[1100];
    snprintf(lock, sizeof lock, "%s/.lock", dir);
    int lfd = open(lock, O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (lfd < 0 || flock(lfd, LOCK_EX) != 0) {
        snprintf(why, sizeof why, "cannot lock %s", lock);
        return why;
    }
    char dll[1100], prog[1100], proj[1100];
    snprintf(dll, sizeof dll, "%s/out/%s.dll", dir, name);
    snprintf(prog, sizeof prog, "%s/Program.cs", src);
    snprintf(proj, sizeof proj, "%s/%s.csproj", src, name);
    time_t built = mtime_of(dll);
    const char *result = NULL;
    if (!built || built < mtime_of(prog) || built < mtime_of(proj)) {
        fprintf(stderr, "live tests: building the %s workload in %s\n", name, dir);
        snprintf(cmd, sizeof cmd,
                 "cp '%s' '%s' '%s/' && cd '%s' && "
                 "DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 "
                 "dotnet build -c Release -o out -nodeReuse:false -p:UseSharedCompilation=false "
                 "> build.log 2>&1",
                 prog, proj, dir, dir);
        if (system(cmd) != 0 || !mtime_of(dll)) {
            snprintf(why, sizeof why, "BUILD FAILED: see %s/build.log", dir);
            result = why;
        }
    }
    flock(lfd, LOCK_UN);
    close(lfd);
    return result;
}

const char *live_prepare(void) { return prepare("LiveTarget", live_build_dir()); }

const char *live_prepare_workload(const char *name, char *dll, size_t size)
{
    const char *top = getenv("top_builddir");
    char cwd[900], dir[1100];
    if (!top || !*top)
        top = getcwd(cwd, sizeof cwd) ? cwd : ".";
    snprintf(dir, sizeof dir, "%s/tests/workloads-build/%s", top, name);
    snprintf(dll, size, "%s/out/%s.dll", dir, name);
    return prepare(name, dir);
}

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A killed runtime leaves its socket behind: note it while it lives, so
 * live_kill can remove it (ours only).  A namespaced target's socket is seen
 * through /proc/<pid>/root, which vanishes with it: keep the path inside. */
static void note_socket(live_target *t)
{
    nt_endpoint ep;
    if (nt_endpoint_find(t->pid, &ep) != NT_OK)
        return;
    const char *p = ep.path;
    if (strncmp(p, "/proc/", 6) == 0 && (p = strstr(p, "/root/")) != NULL)
        p += 5;
    else
        p = ep.path;
    snprintf(t->socket, sizeof t->socket, "%s", p);
}

static bool start_with(live_target *t, int seconds, bool namespaced)
{
    memset(t, 0, sizeof *t);
    t->out_fd = -1;
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) != 0)
        return false;
    char dll[1100], secs[16];
    snprintf(dll, sizeof dll, "%s/out/LiveTarget.dll", live_build_dir());
    snprintf(secs, sizeof secs, "%d", seconds);
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        dup2(pfd[1], 1);
        setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
        if (namespaced)
            execlp("unshare", "unshare", "-p", "-f", "--mount-proc", "dotnet", dll, secs, (char *)NULL);
        else
            execlp("dotnet", "dotnet", dll, secs, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    t->pid = pid;
    t->launcher = pid;
    t->out_fd = pfd[0];
    /* Read lines until "ready" (15 s at most: a cold runtime on a busy machine). */
    char buf[4096];
    size_t len = 0;
    int64_t until = now_ms() + 15000;
    bool ready = false;
    while (!ready && now_ms() < until) {
        struct pollfd pf = { .fd = t->out_fd, .events = POLLIN };
        if (poll(&pf, 1, 200) <= 0)
            continue;
        ssize_t n = read(t->out_fd, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = 0;
        char *line;
        if ((line = strstr(buf, "thread alpha ")))
            t->alpha_tid = atoi(line + 13);
        if ((line = strstr(buf, "thread beta ")))
            t->beta_tid = atoi(line + 12);
        ready = strstr(buf, "ready ") != NULL && strchr(strstr(buf, "ready "), '\n');
    }
    if (!ready || !t->alpha_tid || !t->beta_tid) {
        live_kill(t);
        return false;
    }
    if (namespaced) {
        /* unshare forked the runtime: it is unshare's only child. */
        char path[64], kids[64] = "";
        snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)pid, (int)pid);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(kids, sizeof kids, f))
                kids[0] = 0;
            fclose(f);
        }
        t->pid = (pid_t)atoi(kids);
        if (t->pid <= 0) {
            t->pid = pid;
            live_kill(t);
            return false;
        }
    }
    note_socket(t);
    return true;
}

bool live_start(live_target *t, int seconds) { return start_with(t, seconds, false); }

bool live_start_in_namespace(live_target *t, int seconds, const char **why)
{
    if (!on_path("unshare")) {
        *why = "unshare is not on PATH: cannot start a target in its own PID namespace";
        return false;
    }
    if (system("unshare -p -f --mount-proc true >/dev/null 2>&1") != 0) {
        *why = "unshare -p -f --mount-proc is not permitted here (needs root or user namespaces)";
        return false;
    }
    if (!start_with(t, seconds, true)) {
        *why = "the LiveTarget workload did not start inside a new PID namespace";
        return false;
    }
    return true;
}

bool live_spawn(live_target *t, int seconds)
{
    memset(t, 0, sizeof *t);
    t->out_fd = -1;
    char dll[1100], secs[16];
    snprintf(dll, sizeof dll, "%s/out/LiveTarget.dll", live_build_dir());
    snprintf(secs, sizeof secs, "%d", seconds);
    pid_t pid = fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 1);
        execlp("dotnet", "dotnet", dll, secs, (char *)NULL);
        _exit(127);
    }
    t->pid = t->launcher = pid;
    return true;
}

void live_kill(live_target *t)
{
    if (t->pid > 0 && !t->socket[0])
        note_socket(t);
    if (t->pid > 0) {
        kill(t->pid, SIGKILL);
        if (t->launcher != t->pid) {
            kill(t->launcher, SIGKILL);
            waitpid(t->launcher, NULL, 0);
        } else {
            waitpid(t->pid, NULL, 0);
        }
        if (t->socket[0])
            unlink(t->socket);
        t->socket[0] = 0;
        t->pid = 0;
    }
    if (t->out_fd >= 0) {
        close(t->out_fd);
        t->out_fd = -1;
    }
}

/* ---- analysis ---- */

void live_analysis_init(live_analysis *a, uint64_t alpha_tid, uint64_t beta_tid)
{
    memset(a, 0, sizeof *a);
    a->tids[0] = alpha_tid;
    a->tids[1] = beta_tid;
}

static int an_method(void *user, const nt_method *m)
{
    live_analysis *a = user;
    if (m->which == NT_RECORD_UNLOAD || !m->start_address)
        return 0;
    if (a->nmethods == a->cap) {
        size_t ncap = a->cap ? a->cap * 2 : 1024;
        live_method *n = realloc(a->methods, ncap * sizeof *n);
        if (!n)
            return 1;
        a->methods = n;
        a->cap = ncap;
    }
    live_method *lm = &a->methods[a->nmethods++];
    lm->start = m->start_address;
    lm->size = m->size;
    lm->module_id = m->module_id;
    lm->type = strdup(m->declaring_type ? m->declaring_type : "");
    lm->name = strdup(m->name ? m->name : "");
    return 0;
}

static int an_module(void *user, const nt_module *m)
{
    live_analysis *a = user;
    if (a->nmodules < 256) {
        a->module_ids[a->nmodules] = m->module_id;
        a->module_asm[a->nmodules++] = m->assembly_id;
    }
    return 0;
}

static int an_assembly(void *user, const nt_assembly *as)
{
    live_analysis *a = user;
    if (a->nasm < 256) {
        a->asm_ids[a->nasm] = as->assembly_id;
        a->asm_names[a->nasm++] = strdup(as->name ? as->name : "");
    }
    return 0;
}

static int an_sample(void *user, const nt_sample *s)
{
    live_analysis *a = user;
    a->samples++;
    if (s->type != NT_SAMPLE_MANAGED || !s->stack || s->stack->count == 0)
        return 0;
    for (int i = 0; i < 2; i++) {
        if (s->thread_id != a->tids[i])
            continue;
        if (a->nips[i] == a->ipcap[i]) {
            size_t ncap = a->ipcap[i] ? a->ipcap[i] * 2 : 1024;
            uint64_t *n = realloc(a->ips[i], ncap * sizeof *n);
            if (!n)
                return 1;
            a->ips[i] = n;
            a->ipcap[i] = ncap;
        }
        a->ips[i][a->nips[i]++] = s->stack->ips[0];
    }
    return 0;
}

void live_analysis_callbacks(nt_callbacks *cb)
{
    memset(cb, 0, sizeof *cb);
    cb->method = an_method;
    cb->module = an_module;
    cb->assembly = an_assembly;
    cb->sample = an_sample;
}

static const live_method *resolve(const live_analysis *a, uint64_t ip)
{
    for (size_t i = 0; i < a->nmethods; i++)
        if (ip >= a->methods[i].start && ip < a->methods[i].start + a->methods[i].size)
            return &a->methods[i];
    return NULL;
}

static const char *assembly_of(const live_analysis *a, uint64_t module_id)
{
    for (size_t i = 0; i < a->nmodules; i++) {
        if (a->module_ids[i] != module_id)
            continue;
        for (size_t k = 0; k < a->nasm; k++)
            if (a->asm_ids[k] == a->module_asm[i])
                return a->asm_names[k];
    }
    return "";
}

bool live_analysis_top(const live_analysis *a, int t, char *out, size_t size, double *share)
{
    /* Count by method (pointer identity after resolution). */
    const live_method *best = NULL;
    size_t best_count = 0, total = a->nips[t];
    const live_method **res = calloc(total ? total : 1, sizeof *res);
    if (!res)
        return false;
    for (size_t i = 0; i < total; i++)
        res[i] = resolve(a, a->ips[t][i]);
    for (size_t i = 0; i < total; i++) {
        if (!res[i])
            continue;
        size_t c = 0;
        /* Code versions of one method (tiers, OSR) count together. */
        for (size_t k = 0; k < total; k++)
            c += res[k] && (res[k] == res[i] || (strcmp(res[k]->name, res[i]->name) == 0 &&
                                                 strcmp(res[k]->type, res[i]->type) == 0));
        if (c > best_count) {
            best_count = c;
            best = res[i];
        }
    }
    free(res);
    if (!best)
        return false;
    snprintf(out, size, "%s.%s [%s]", best->type, best->name, assembly_of(a, best->module_id));
    if (share)
        *share = (double)best_count / (double)total;
    return true;
}

void live_analysis_free(live_analysis *a)
{
    for (size_t i = 0; i < a->nmethods; i++) {
        free(a->methods[i].type);
        free(a->methods[i].name);
    }
    free(a->methods);
    for (size_t i = 0; i < a->nasm; i++)
        free(a->asm_names[i]);
    free(a->ips[0]);
    free(a->ips[1]);
}

nt_status live_analyse_file(const char *path, live_analysis *a)
{
    nt_callbacks cb = { 0 };
    live_analysis_callbacks(&cb);
    nt_parser *p = nt_parser_new(&cb, a, NULL, NULL);
    if (!p)
        return NT_ERR_NOMEM;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        nt_parser_free(p);
        return NT_ERR_IO;
    }
    char buf[65536];
    ssize_t n;
    nt_status st = NT_OK;
    while (st == NT_OK && (n = read(fd, buf, sizeof buf)) > 0)
        st = nt_parser_feed(p, buf, (size_t)n);
    close(fd);
    st = nt_parser_finish(p);
    nt_parser_free(p);
    return st;
}
