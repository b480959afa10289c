/* The core's thread pool (lib/core/common/pool.h): every task runs once per
 * run, for any number of tasks and threads, run after run; a NULL pool runs
 * the tasks in order on the caller; bad sizes fail with a message. */
#include <math.h>

#include "common/pool.h"
#include "common/test_util.h"

#include <stdlib.h>

#define MAX_TASKS 1000

typedef struct {
    int hits[MAX_TASKS];
    size_t order[MAX_TASKS];
    size_t norder; /* only for the NULL pool (one thread) */
} tally;

static void count_task(void *arg, size_t t)
{
    tally *y = (tally *)arg;
    y->hits[t]++;
    /* some work of varying length, so that the threads interleave */
    volatile double s = 0.0;
    for (size_t i = 0; i < (t * 7919) % 2000; i++)
        s += (double)i;
}

static void order_task(void *arg, size_t t)
{
    tally *y = (tally *)arg;
    y->order[y->norder++] = t;
}

static void test_create(void)
{
    tr_pool *p = (tr_pool *)&p;
    tr_error err;
    CHECK(tr_pool_create(0, "test", &p, &err) == TR_ERR_INVALID && p == NULL &&
              err.code == TR_ERR_INVALID && strstr(err.message, "test:"),
          "0 threads refused: %s", err.message);
    CHECK(tr_pool_create(1, "test", &p, &err) == TR_OK && p && err.code == TR_OK,
          "1 thread: %s", err.message);
    CHECK(tr_pool_threads(p) == 1, "1 thread: %u", tr_pool_threads(p));
    tr_pool_destroy(p);
    CHECK(tr_pool_threads(NULL) == 1, "NULL pool: 1 thread");
    tr_pool_destroy(NULL);
}

static void test_runs(uint32_t nthreads)
{
    tr_pool *p = NULL;
    tr_error err;
    CHECK(tr_pool_create(nthreads, "test", &p, &err) == TR_OK && p, "%u threads: %s",
          nthreads, err.message);
    if (!p) return;
    CHECK(tr_pool_threads(p) == nthreads, "%u threads: %u", nthreads, tr_pool_threads(p));
    static const size_t sizes[] = {0, 1, 2, 3, 5, 17, 64, MAX_TASKS};
    tally *y = (tally *)calloc(1, sizeof *y);
    int bad = 0; /* runs in which a task did not run exactly once */
    for (int rep = 0; rep < 20; rep++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
            const size_t k = sizes[s];
            memset(y->hits, 0, sizeof y->hits);
            tr_pool_run(p, count_task, y, k);
            for (size_t t = 0; t < MAX_TASKS; t++)
                if (y->hits[t] != (t < k ? 1 : 0)) {
                    bad++;
                    break;
                }
        }
    CHECK(bad == 0, "%u threads: %d runs with a task not run once", nthreads, bad);
    free(y);
    tr_pool_destroy(p);
}

static void test_null_pool(void)
{
    tally *y = (tally *)calloc(1, sizeof *y);
    tr_pool_run(NULL, order_task, y, 10);
    int in_order = y->norder == 10;
    for (size_t t = 0; t < y->norder; t++)
        in_order &= y->order[t] == t;
    CHECK(in_order, "NULL pool: the tasks in order on the caller");
    free(y);
}

int main(void)
{
    test_create();
    test_runs(2);
    test_runs(4);
    test_runs(9);
    test_null_pool();
    return tu_finish("test_pool");
}
