/* bench_run: time and peak memory of a command, the same way for every
 * program the TraceEvent benchmark compares (bench/traceevent.sh).
 *
 *   bench_run [-n RUNS] [-o OUT] -- COMMAND [ARG...]
 *
 * Runs COMMAND RUNS times (default 3), one after the other, each a fresh
 * process; its standard output goes to OUT (rewritten by every run; default
 * /dev/null), its standard error to ours.  Wall time is CLOCK_MONOTONIC from
 * fork to wait4(); peak memory is the child's ru_maxrss from wait4() (peak
 * resident set, KiB on Linux); CPU time is its user + system time from the
 * same rusage (all its threads).  Prints one line:
 *
 *   best S median S peak_kib K runs N cpu S
 *
 * (peak: the largest of the runs; cpu: the least).  Exits non-zero if any
 * run failed. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 100

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run: returns 0 and fills *secs, *peak_kib, *cpu, or -1. */
static int run_once(char **argv, const char *out, double *secs, long *peak_kib, double *cpu)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0) {
        perror("bench_run: fork");
        return -1;
    }
    if (pid == 0) {
        int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
            perror(out);
            _exit(126);
        }
        close(fd);
        execvp(argv[0], argv);
        fprintf(stderr, "bench_run: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int status;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            perror("bench_run: wait4");
            return -1;
        }
    }
    *secs = now() - t0;
    *peak_kib = ru.ru_maxrss;
    *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_run: %s failed (%s %d)\n", argv[0], WIFEXITED(status) ? "exit" : "signal",
                WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 3;
    const char *out = "/dev/null";
    int opt;
    while ((opt = getopt(argc, argv, "+n:o:")) != -1) {
        switch (opt) {
        case 'n': runs = atoi(optarg); break;
        case 'o': out = optarg; break;
        default: goto usage;
        }
    }
    if (optind >= argc || runs < 1 || runs > MAX_RUNS)
        goto usage;
    double t[MAX_RUNS];
    long peak = 0;
    double cpu_least = 0;
    for (int r = 0; r < runs; r++) {
        long kib;
        double cpu;
        if (run_once(argv + optind, out, &t[r], &kib, &cpu) != 0)
            return 1;
        if (kib > peak)
            peak = kib;
        if (r == 0 || cpu < cpu_least)
            cpu_least = cpu;
    }
    qsort(t, (size_t)runs, sizeof t[0], cmp_double);
    double median = runs % 2 ? t[runs / 2] : (t[runs / 2 - 1] + t[runs / 2]) / 2;
    printf("best %.4f median %.4f peak_kib %ld runs %d cpu %.4f\n", t[0], median, peak, runs, cpu_least);
    return 0;
usage:
    fprintf(stderr, "usage: bench_run [-n RUNS] [-o OUT] -- COMMAND [ARG...]\n");
    return 2;
}
