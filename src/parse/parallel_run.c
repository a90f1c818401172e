/* nt_parse_parallel: the parts decoded by jobs threads (the calling one
 * among them), at most jobs + 1 parts ahead of delivery so that memory
 * stays bounded; delivery, and so every callback, on the calling thread,
 * which decodes a part itself whenever the next one to deliver is not ready. */
#include "common/abi.h"
#include "parse/parallel_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct pp_run {
    nt_parallel *pp;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_decode;  /* the next part nobody has taken */
    size_t delivered;    /* parts delivered */
    size_t window;       /* parts taken beyond the delivered ones, at most */
    bool *ready;         /* by part: decoded */
    bool stop;
} pp_run;

/* Take the next part to decode if the window allows (mu held); SIZE_MAX if none. */
static size_t take(pp_run *r)
{
    if (r->next_decode >= r->pp->nparts || r->next_decode >= r->delivered + r->window)
        return SIZE_MAX;
    return r->next_decode++;
}

static void decode_one(pp_run *r, size_t k)
{
    pthread_mutex_unlock(&r->mu);
    nt_parallel_decode(r->pp, k);
    pthread_mutex_lock(&r->mu);
    r->ready[k] = true;
    pthread_cond_broadcast(&r->cv);
}

static void *worker(void *arg)
{
    pp_run *r = arg;
    pthread_mutex_lock(&r->mu);
    while (!r->stop) {
        size_t k = take(r);
        if (k != SIZE_MAX)
            decode_one(r, k);
        else if (r->next_decode >= r->pp->nparts)
            break;
        else
            pthread_cond_wait(&r->cv, &r->mu);
    }
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

static uint32_t default_jobs(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > (long)NT_DEFAULT_PARALLEL_MAX_JOBS ? NT_DEFAULT_PARALLEL_MAX_JOBS : (uint32_t)n;
}

/* Deliver every part on this thread, decoding whatever is next while waiting. */
static nt_status deliver_all(pp_run *r)
{
    nt_status s = NT_OK;
    pthread_mutex_lock(&r->mu);
    for (size_t k = 0; k < r->pp->nparts && s == NT_OK; k++) {
        while (!r->ready[k]) {
            size_t j = take(r);
            if (j != SIZE_MAX)
                decode_one(r, j);
            else
                pthread_cond_wait(&r->cv, &r->mu);
        }
        pthread_mutex_unlock(&r->mu);
        s = nt_parallel_deliver(r->pp, k);
        pthread_mutex_lock(&r->mu);
        r->delivered = k + 1;
        pthread_cond_broadcast(&r->cv);
    }
    r->stop = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    return s;
}

static nt_status run(nt_parallel *pp, uint32_t jobs)
{
    pp_run r = { .pp = pp, .window = (size_t)jobs + 1 };
    r.ready = cm_mem_alloc(&pp->mem, pp->nparts * sizeof *r.ready);
    if (!r.ready)
        return NT_ERR_NOMEM;
    memset(r.ready, 0, pp->nparts * sizeof *r.ready);
    pthread_mutex_init(&r.mu, NULL);
    pthread_cond_init(&r.cv, NULL);
    pthread_t th[NT_DEFAULT_PARALLEL_MAX_JOBS];
    uint32_t started = 0;
    size_t want = pp->nparts > 1 ? jobs - 1 : 0;
    while (started < want && started < NT_DEFAULT_PARALLEL_MAX_JOBS &&
           pthread_create(&th[started], NULL, worker, &r) == 0) /* fewer threads when the system refuses more */
        started++;
    nt_status s = deliver_all(&r);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_cond_destroy(&r.cv);
    pthread_mutex_destroy(&r.mu);
    cm_mem_free(&pp->mem, r.ready, pp->nparts * sizeof *r.ready);
    return s;
}

nt_status nt_parse_parallel(const void *data, size_t len, const nt_index *ix, const nt_callbacks *cb, void *user,
                            const nt_parallel_options *opt, nt_parallel **out, char *msg, size_t msg_size)
{
    if (out)
        *out = NULL;
    if (msg && msg_size)
        msg[0] = '\0';
    nt_parallel *pp = NULL;
    nt_status s = nt_parallel_new(data, len, ix, cb, user, opt, &pp);
    if (s != NT_OK) {
        if (msg && msg_size)
            snprintf(msg, msg_size, "%s", nt_status_describe(s));
        return s;
    }
    uint32_t jobs = pp->jobs ? pp->jobs : default_jobs();
    if (jobs > NT_DEFAULT_PARALLEL_MAX_JOBS)
        jobs = NT_DEFAULT_PARALLEL_MAX_JOBS;
    s = run(pp, jobs);
    if (msg && msg_size)
        snprintf(msg, msg_size, "%s", pp->cur ? nt_parser_message(pp->cur) : nt_status_describe(s));
    if (out)
        *out = pp;
    else
        nt_parallel_free(pp);
    return s;
}
