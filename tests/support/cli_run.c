#include "cli_run.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    size_t n = 0, cap = 0;
    if (f) {
        for (;;) {
            if (cap - n < 4096) {
                char *t = realloc(s, cap = cap * 2 + 65536);
                if (!t)
                    break;
                s = t;
            }
            size_t got = fread(s + n, 1, cap - n - 1, f);
            if (!got)
                break;
            n += got;
        }
        fclose(f);
    }
    if (!s)
        s = calloc(1, 1);
    else
        s[n] = 0;
    if (len)
        *len = n;
    unlink(path);
    return s;
}

cli_run cli_run_nettrace(const char *const *args, bool keep)
{
    cli_run r = { -1, 0, NULL, 0, NULL };
    char out_path[64], err_path[64];
    snprintf(out_path, sizeof out_path, "/tmp/nt-cli-run-out-%d", (int)getpid());
    snprintf(err_path, sizeof err_path, "/tmp/nt-cli-run-err-%d", (int)getpid());
    const char *top = getenv("top_builddir");
    char exe[512];
    snprintf(exe, sizeof exe, "%s/nettrace", top ? top : ".");
    const char *argv[32] = { exe };
    int argc = 1;
    for (; *args && argc < 31; args++)
        argv[argc++] = *args;
    argv[argc] = NULL;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return r;
    if (pid == 0) {
        int o = open(keep ? out_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
            _exit(126);
        /* Under ASan, freed memory waits in a quarantine (256 MB) that would count as the tool's. */
        const char *asan = getenv("ASAN_OPTIONS");
        char opts[1024];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=1", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid)
        return r;
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    r.rss_kb = ru.ru_maxrss;
    if (keep)
        r.out = slurp(out_path, &r.out_len);
    r.err = slurp(err_path, NULL);
    return r;
}

void cli_run_free(cli_run *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}
