/* The core's run-time SIMD dispatch (lib/core/common/simd.h) on a table of
 * its own: the automatic choice is the last supported entry that may be
 * chosen automatically, by name only supported entries, and concurrent first
 * uses agree. */
#include <math.h>

#include "common/simd.h"
#include "common/test_util.h"

#include <pthread.h>

/* A feature no CPU reports. */
#define MISSING (1u << 30)

typedef struct {
    tr_simd_kernel info;
    int id;
} entry;

static const entry entries[] = {
    {{"generic", 0, 0}, 0},
    {{"plain", 0, 0}, 1},
    {{"by_name", 0, 1}, 2},
    {{"future", MISSING, 0}, 3},
};

static int chosen_id(tr_simd_table *t)
{
    return ((const entry *)tr_simd_get(t))->id;
}

static void test_choice(void)
{
    tr_simd_table t = TR_SIMD_TABLE(entries);
    CHECK(t.count == 4 && t.size == sizeof(entry), "table of %zu entries", t.count);
    CHECK(chosen_id(&t) == 1, "automatic: the last supported, not named-only: %d",
          chosen_id(&t));
    CHECK(tr_simd_select(&t, "by_name") == 1 && chosen_id(&t) == 2, "named-only by name");
    CHECK(tr_simd_select(&t, "generic") == 1 && chosen_id(&t) == 0, "generic by name");
    CHECK(tr_simd_select(&t, "future") == 0 && chosen_id(&t) == 0,
          "unsupported refused, choice kept");
    CHECK(tr_simd_select(&t, "nonsense") == 0 && chosen_id(&t) == 0,
          "unknown refused, choice kept");
    CHECK(tr_simd_select(&t, NULL) == 1 && chosen_id(&t) == 1, "NULL: the best again");
    CHECK((tr_cpu_features() & MISSING) == 0, "no CPU has the missing feature");
}

/* The first uses come from several threads at once. */
typedef struct {
    tr_simd_table *t;
    int id;
} racer;

static void *race(void *arg)
{
    racer *r = (racer *)arg;
    r->id = chosen_id(r->t);
    return NULL;
}

static void test_race(void)
{
    enum { N = 8 };
    for (int rep = 0; rep < 20; rep++) {
        tr_simd_table t = TR_SIMD_TABLE(entries);
        pthread_t th[N];
        racer r[N];
        int started = 0;
        for (int i = 0; i < N; i++) {
            r[i].t = &t;
            r[i].id = -1;
            if (pthread_create(&th[i], NULL, race, &r[i]) == 0) started |= 1 << i;
        }
        int same = 1;
        for (int i = 0; i < N; i++) {
            if (started >> i & 1) pthread_join(th[i], NULL);
            same &= !(started >> i & 1) || r[i].id == 1;
        }
        CHECK(same, "rep %d: concurrent first uses choose the same entry", rep);
    }
}

int main(void)
{
    test_choice();
    test_race();
    return tu_finish("test_simd");
}
