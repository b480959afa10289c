/*
 * A pool of worker threads that runs a function over a number of tasks and
 * waits for them (not installed). The calling thread works on the tasks too,
 * so a pool of n threads starts n - 1 workers. Which thread runs which task is
 * not fixed: a task must depend only on its index, not on the thread.
 */
#ifndef TRANSIENT_POOL_H
#define TRANSIENT_POOL_H

#include <transient/common.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_pool tr_pool;

/* Task `task` (0 <= task < ntasks) of a tr_pool_run. */
typedef void (*tr_pool_fn)(void *arg, size_t task);

/* A pool that runs tasks on nthreads >= 1 threads, the caller's included.
 * Fails (and sets *out to NULL) with TR_ERR_INVALID for nthreads = 0 and with
 * TR_ERR_NOMEM when memory or a thread cannot be had; the message starts with
 * `who`. */
tr_status tr_pool_create(uint32_t nthreads, const char *who, tr_pool **out,
                         tr_error *err);

/* Stop the workers and free the pool; NULL is allowed. */
void tr_pool_destroy(tr_pool *p);

/* Threads that run tasks (1 for a NULL pool). */
uint32_t tr_pool_threads(const tr_pool *p);

/* Run fn(arg, t) for t = 0 .. ntasks - 1 and return when all are done. With a
 * NULL pool the caller runs them in order. One run at a time per pool. */
void tr_pool_run(tr_pool *p, tr_pool_fn fn, void *arg, size_t ntasks);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_POOL_H */
