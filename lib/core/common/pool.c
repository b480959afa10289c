/*
 * Thread pool (common/pool.h). The workers sleep on a condition variable
 * between runs; a run hands out task indices under the mutex, so a worker
 * that wakes late simply finds no task left.
 */
#define _POSIX_C_SOURCE 200809L

#include "common/pool.h"

#include "common/core_util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct tr_pool {
    pthread_t *workers;
    uint32_t nworkers;
    pthread_mutex_t mu;
    pthread_cond_t go;   /* a run started, or quit */
    pthread_cond_t done; /* the last task of a run finished */
    /* the run in progress */
    tr_pool_fn fn;
    void *arg;
    size_t ntasks, next, finished;
    uint64_t gen; /* runs started */
    int quit;
};

/* Take the next task of the run in progress; the mutex is held. */
static int take(tr_pool *p, size_t *task)
{
    if (p->next >= p->ntasks) return 0;
    *task = p->next++;
    return 1;
}

/* Run tasks until none is left; called and returns with the mutex held. */
static void work(tr_pool *p)
{
    size_t t;
    while (take(p, &t)) {
        const tr_pool_fn fn = p->fn;
        void *arg = p->arg;
        pthread_mutex_unlock(&p->mu);
        fn(arg, t);
        pthread_mutex_lock(&p->mu);
        if (++p->finished == p->ntasks) pthread_cond_signal(&p->done);
    }
}

static void *worker_main(void *arg)
{
    tr_pool *p = (tr_pool *)arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (p->gen == seen && !p->quit)
            pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->gen;
        work(p);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Join the workers started so far and free everything. */
static void teardown(tr_pool *p)
{
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (uint32_t i = 0; i < p->nworkers; i++)
        pthread_join(p->workers[i], NULL);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
    free(p->workers);
    free(p);
}

tr_status tr_pool_create(uint32_t nthreads, const char *who, tr_pool **out, tr_error *err)
{
    *out = NULL;
    if (nthreads < 1)
        return tr_fail(err, TR_ERR_INVALID, "%s: a pool needs at least 1 thread", who);
    tr_pool *p = (tr_pool *)calloc(1, sizeof *p);
    if (p && nthreads > 1)
        p->workers = (pthread_t *)malloc((nthreads - 1) * sizeof *p->workers);
    if (!p || (nthreads > 1 && !p->workers)) {
        free(p);
        return tr_fail(err, TR_ERR_NOMEM, "%s: cannot allocate a pool of %u threads", who,
                       nthreads);
    }
    const int mu = pthread_mutex_init(&p->mu, NULL) == 0;
    const int go = mu && pthread_cond_init(&p->go, NULL) == 0;
    const int done = go && pthread_cond_init(&p->done, NULL) == 0;
    if (!done) {
        if (go) pthread_cond_destroy(&p->go);
        if (mu) pthread_mutex_destroy(&p->mu);
        free(p->workers);
        free(p);
        return tr_fail(err, TR_ERR_NOMEM, "%s: cannot create the pool's mutex", who);
    }
    for (uint32_t i = 0; i + 1 < nthreads; i++) {
        const int rc = pthread_create(&p->workers[i], NULL, worker_main, p);
        if (rc != 0) {
            teardown(p);
            return tr_fail(err, TR_ERR_NOMEM, "%s: cannot start thread %u of %u: %s", who,
                           i + 2, nthreads, strerror(rc));
        }
        p->nworkers++;
    }
    *out = p;
    tr_clear(err);
    return TR_OK;
}

void tr_pool_destroy(tr_pool *p)
{
    if (p) teardown(p);
}

uint32_t tr_pool_threads(const tr_pool *p)
{
    return p ? p->nworkers + 1 : 1;
}

void tr_pool_run(tr_pool *p, tr_pool_fn fn, void *arg, size_t ntasks)
{
    if (!p || p->nworkers == 0 || ntasks < 2) {
        for (size_t t = 0; t < ntasks; t++)
            fn(arg, t);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->ntasks = ntasks;
    p->next = p->finished = 0;
    p->gen++;
    pthread_cond_broadcast(&p->go);
    work(p);
    while (p->finished < p->ntasks)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
