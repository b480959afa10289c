/* Minimal test harness for the C core tests: checks, counters, a seeded RNG. */
#ifndef TRANSIENT_TEST_UTIL_H
#define TRANSIENT_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int tu_passed, tu_failed;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (cond) {                                                                      \
            tu_passed++;                                                                 \
        } else {                                                                         \
            tu_failed++;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
        }                                                                                \
    } while (0)

/* The closing line test runners read; exit status follows the failures. */
static inline int tu_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tu_passed, tu_failed);
    return tu_failed ? 1 : 0;
}

/* xoshiro-style 64-bit generator (splitmix64), deterministic from a seed. */
typedef struct {
    uint64_t s;
} tu_rng;

static inline uint64_t tu_next(tu_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double tu_uniform(tu_rng *r)
{
    return (tu_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* Uniform integer in [lo, hi]. */
static inline long tu_range(tu_rng *r, long lo, long hi)
{
    return lo + (long)(tu_next(r) % (uint64_t)(hi - lo + 1));
}

/* Standard normal (Box-Muller). */
static inline double tu_gauss(tu_rng *r)
{
    double u = tu_uniform(r), v = tu_uniform(r);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

#endif /* TRANSIENT_TEST_UTIL_H */
