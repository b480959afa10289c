/*
 * CPU fast dedispersion: the reference's sum (dedisp_ref.c) cache-blocked in
 * tiles of DEDISP_TD trials x DEDISP_TT samples, SIMD along time, tiles spread
 * over the thread pool.
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012), section 3 (the direct algorithm; its tiling of
 * trials x samples keeps the rows of neighbouring trials, which overlap, in
 * cache).
 *
 * A tile's accumulators stay in L1 while every used channel is added to them
 * in increasing order: element-wise float additions in the reference's order,
 * so the bits are the reference's whatever the SIMD width.
 */
#include "common/simd.h"
#include "dedisp/dedisp_internal.h"

#include <string.h>

#define DEDISP_TD 8u   /* trials per tile */
#define DEDISP_TT 512u /* samples per tile */

/* acc[t] += row[t], t < len. */
typedef void (*add_row_fn)(float *acc, const float *row, size_t len);

typedef struct {
    tr_simd_kernel info;
    add_row_fn add_row;
} add_kernel;

static void add_row_generic(float *acc, const float *row, size_t len)
{
    for (size_t t = 0; t < len; ++t)
        acc[t] += row[t];
}

#ifdef TR_X86
TR_AVX2 static void add_row_avx2(float *acc, const float *row, size_t len)
{
    size_t t = 0;
    for (; t + 8 <= len; t += 8)
        _mm256_storeu_ps(
            acc + t, _mm256_add_ps(_mm256_loadu_ps(acc + t), _mm256_loadu_ps(row + t)));
    for (; t < len; ++t)
        acc[t] += row[t];
}
#endif

static const add_kernel kernels[] = {
    {{"generic", 0, 0}, add_row_generic},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2, 0}, add_row_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

const char *tr_dedisp_cpu_kernel(void)
{
    return ((const add_kernel *)tr_simd_get(&table))->info.name;
}

int tr_dedisp_cpu_select(const char *name)
{
    return tr_simd_select(&table, name);
}

typedef struct {
    const tr_dedisp_sum_args *a;
    add_row_fn add_row;
    size_t ntime; /* time tiles */
} job;

static void tile(void *arg, size_t task)
{
    const job *jb = (const job *)arg;
    const tr_dedisp_sum_args *a = jb->a;
    const uint32_t d0 = (uint32_t)(task / jb->ntime) * DEDISP_TD;
    const size_t t0 = (task % jb->ntime) * DEDISP_TT;
    const uint32_t nd = a->ndm - d0 < DEDISP_TD ? a->ndm - d0 : DEDISP_TD;
    const size_t len = a->n - t0 < DEDISP_TT ? a->n - t0 : DEDISP_TT;
    float acc[DEDISP_TD][DEDISP_TT];
    for (uint32_t d = 0; d < nd; ++d)
        memset(acc[d], 0, len * sizeof(float));
    for (uint32_t j = 0; j < a->nused; ++j) {
        const float *row = a->buf + (size_t)j * a->cap + t0;
        for (uint32_t d = 0; d < nd; ++d)
            jb->add_row(acc[d], row + a->delays[(size_t)(d0 + d) * a->nused + j], len);
    }
    const float n = (float)a->nused;
    for (size_t t = 0; t < len; ++t) {
        float *y = a->y + (t0 + t) * a->ystride + d0;
        for (uint32_t d = 0; d < nd; ++d)
            y[d] = a->mean ? acc[d][t] / n : acc[d][t];
    }
}

void tr_dedisp_sum_fast(const tr_dedisp_sum_args *a)
{
    if (a->n == 0) return;
    job jb;
    jb.a = a;
    jb.add_row = ((const add_kernel *)tr_simd_get(&table))->add_row;
    jb.ntime = (a->n + DEDISP_TT - 1) / DEDISP_TT;
    const size_t ntrial = (a->ndm + DEDISP_TD - 1) / DEDISP_TD;
    tr_pool_run(a->pool, tile, &jb, ntrial * jb.ntime);
}
