/*
 * Fuzz input as a parameter stream (tests/fuzz): a target takes its
 * configuration from the first bytes (each value mapped into the range the
 * target explores), then its chunk sizes from a generator seeded by the
 * input, and reads the rest as samples. Running out of bytes gives zeros, so
 * every input is a valid parameter set and libFuzzer's mutations stay
 * meaningful.
 */
#ifndef TRANSIENT_FUZZ_INPUT_H
#define TRANSIENT_FUZZ_INPUT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const uint8_t *p;
    size_t n;
    uint64_t chunk_state; /* chunk size generator */
} fz_input;

static inline fz_input fz_open(const uint8_t *data, size_t size)
{
    fz_input in = {data, size, 0x9e3779b97f4a7c15ULL};
    return in;
}

static inline uint32_t fz_u32(fz_input *in)
{
    uint8_t b[4] = {0, 0, 0, 0};
    const size_t k = in->n < 4 ? in->n : 4;
    memcpy(b, in->p, k);
    in->p += k;
    in->n -= k;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
           (uint32_t)b[3] << 24;
}

/* A value in lo..hi. */
static inline uint32_t fz_range(fz_input *in, uint32_t lo, uint32_t hi)
{
    return lo + fz_u32(in) % (hi - lo + 1);
}

/* Any float bit pattern: NaN, infinities and denormals included. */
static inline float fz_f32(fz_input *in)
{
    const uint32_t u = fz_u32(in);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The rest of the input as floats (a copy: the input need not be aligned);
 * *n floats, NULL when none. */
static inline float *fz_floats(fz_input *in, size_t *n)
{
    *n = in->n / sizeof(float);
    float *x = *n ? (float *)malloc(*n * sizeof(float)) : NULL;
    if (x) memcpy(x, in->p, *n * sizeof(float));
    in->p += *n * sizeof(float);
    in->n -= *n * sizeof(float);
    return x;
}

/* Seed the chunk sizes from one input word. */
static inline void fz_seed_chunks(fz_input *in)
{
    in->chunk_state ^= fz_u32(in);
}

/* Next chunk size in 1..max (1 is frequent: the hardest chunking). */
static inline size_t fz_chunk(fz_input *in, size_t max)
{
    uint64_t z = (in->chunk_state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z ^= z >> 27;
    return (z & 3) == 0 ? 1 : 1 + (size_t)(z >> 8) % max;
}

/* A broken promise of the API (not a memory error): stop with a message so
 * that libFuzzer saves the input. */
#define FZ_REQUIRE(cond)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond);                   \
            abort();                                                                     \
        }                                                                                \
    } while (0)

#endif /* TRANSIENT_FUZZ_INPUT_H */
