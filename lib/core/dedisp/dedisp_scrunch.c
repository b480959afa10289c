/*
 * Time scrunching of the CPU fast variant (dedisp's adaptive dt: B. R.
 * Barsdell et al., "Accelerating incoherent dedispersion", MNRAS 422, 379,
 * 2012; <transient/dedisp.h> defines the output): the block means X_s of
 * the history, one level from the previous (X_2s[q] = (X_s[2q] + X_s[2q+1])
 * * 0.5f, the definition's tree, so the reference's bits), then the fast sum
 * over the coarse rows with coarse delays, each coarse output copied to the
 * full-rate positions of its block.
 */
#include "dedisp/dedisp_internal.h"

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

void tr_dedisp_scrunch_level(const tr_dedisp_rows *prev, tr_dedisp_rows *out, float *dst,
                             size_t dst_cap)
{
    /* the blocks q whose halves 2q, 2q + 1 both lie in prev */
    const int64_t lo = floor_div(prev->first + 1, 2);
    const int64_t hi = floor_div(prev->first + (int64_t)prev->cols, 2);
    const size_t cols = hi > lo ? (size_t)(hi - lo) : 0;
    const size_t off = (size_t)(2 * lo - prev->first);
    for (uint32_t j = 0; j < prev->nused; ++j) {
        const float *src = prev->buf + (size_t)j * prev->cap + off;
        float *row = dst + (size_t)j * dst_cap;
        for (size_t i = 0; i < cols; ++i)
            row[i] = (src[2 * i] + src[2 * i + 1]) * 0.5f;
    }
    out->buf = dst;
    out->cap = dst_cap;
    out->nused = prev->nused;
    out->first = lo;
    out->cols = cols;
}

void tr_dedisp_scrunch_fast(const tr_dedisp_rows *level, uint32_t s, uint32_t ndm,
                            const uint32_t *delays, int64_t p0, size_t n, int mean,
                            tr_pool *pool, float *tmp, float *y, size_t ystride)
{
    if (n == 0) return;
    const int64_t qa = floor_div(p0, s), qb = floor_div(p0 + (int64_t)n - 1, s);
    tr_dedisp_sum_args a;
    a.buf = level->buf + (qa - level->first);
    a.cap = level->cap;
    a.nused = level->nused;
    a.ndm = ndm;
    a.delays = delays;
    a.n = (size_t)(qb - qa + 1);
    a.mean = mean;
    a.y = tmp;
    a.ystride = ndm;
    a.pool = pool;
    tr_dedisp_sum_fast(&a);
    for (size_t k = 0; k < n; ++k) {
        const float *v = tmp + (size_t)(floor_div(p0 + (int64_t)k, s) - qa) * ndm;
        float *o = y + k * ystride;
        for (uint32_t d = 0; d < ndm; ++d)
            o[d] = v[d];
    }
}
