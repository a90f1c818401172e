/* The LiveTarget workload for the tests that attach to a real runtime: build
 * it once per build tree, start it, learn its threads' OS ids; and a small
 * trace analysis that names each thread's hottest method. */
#ifndef TEST_LIVE_TARGET_H
#define TEST_LIVE_TARGET_H

#include "nettrace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct live_target {
    pid_t pid;            /* the runtime's pid as we see it */
    pid_t launcher;       /* the process we started (== pid unless in a namespace) */
    int alpha_tid;
    int beta_tid;
    int out_fd;           /* the workload's stdout */
    char socket[1024];    /* its diagnostics socket, removed after a kill */
} live_target;

/* NULL when the workload is built (or was already); otherwise why the tests
 * must skip (no dotnet) — a failed build with dotnet present fails instead. */
const char *live_prepare(void);
/* The same for another workload, tests/workloads/NAME: dll gets its NAME.dll. */
const char *live_prepare_workload(const char *name, char *dll, size_t size);
/* The built workload's directory. */
const char *live_build_dir(void);
/* Start it; it lives `seconds` at most. */
bool live_start(live_target *t, int seconds);
/* The same inside a new PID and mount namespace (unshare -p -f --mount-proc);
 * false with *why set when that is not possible here. */
bool live_start_in_namespace(live_target *t, int seconds, const char **why);
/* Start it and return at once (its endpoint may not exist yet; no thread ids). */
bool live_spawn(live_target *t, int seconds);
void live_kill(live_target *t);

/* Per-thread hottest method from a parse (methods, modules, assemblies and
 * managed samples collected through the parser's callbacks). */
typedef struct live_method {
    uint64_t start, size, module_id;
    char *type, *name;
} live_method;

typedef struct live_analysis {
    live_method *methods;
    size_t nmethods, cap;
    uint64_t module_ids[256], module_asm[256];
    size_t nmodules;
    uint64_t asm_ids[256];
    char *asm_names[256];
    size_t nasm;
    uint64_t tids[2];                /* the threads of interest */
    uint64_t *ips[2];                /* their managed samples' top IPs */
    size_t nips[2], ipcap[2];
    uint64_t samples;
} live_analysis;

void live_analysis_init(live_analysis *a, uint64_t alpha_tid, uint64_t beta_tid);
void live_analysis_callbacks(nt_callbacks *cb);
/* The hottest method of thread i (0 alpha, 1 beta): "Type.Name [Assembly]",
 * written to out; false when the thread has no resolvable samples. */
bool live_analysis_top(const live_analysis *a, int i, char *out, size_t size, double *share);
void live_analysis_free(live_analysis *a);
/* Parse a file through the analysis; returns the parser's final status. */
nt_status live_analyse_file(const char *path, live_analysis *a);

#endif
