/*
 * Reference dedispersion: the literal sum over channels of the spectra
 * delayed by the dispersion delay (D. R. Lorimer, M. Kramer, "Handbook of
 * Pulsar Astronomy", section 5.2):
 *   Y[p][d] = sum_c x'[p + round(K_DM DM_d (f_c^-2 - f_ref^-2) / tsamp)][c],
 * the delays taken from the plan's table (tr_dedisp_delay), the channels in
 * increasing order, accumulated in float32. Scrunched trials (dedisp's
 * adaptive dt, B. R. Barsdell et al., MNRAS 422, 379, 2012): the same sum
 * over the block means X_s of <transient/dedisp.h>, computed here by their
 * recursive definition from the full-rate rows.
 */
#include "dedisp/dedisp_internal.h"

void tr_dedisp_sum_ref(const tr_dedisp_sum_args *a)
{
    for (size_t k = 0; k < a->n; ++k)
        for (uint32_t d = 0; d < a->ndm; ++d) {
            const uint32_t *delay = a->delays + (size_t)d * a->nused;
            float sum = 0.0f;
            for (uint32_t j = 0; j < a->nused; ++j)
                sum += a->buf[(size_t)j * a->cap + k + delay[j]];
            a->y[k * a->ystride + d] = a->mean ? sum / (float)a->nused : sum;
        }
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* X_s[q] of one row: the full-rate spectrum when s = 1, else the mean of the
 * two halves' block means. */
static float block_mean(const float *row, int64_t first, int64_t q, uint32_t s)
{
    if (s == 1) return row[q - first];
    return (block_mean(row, first, 2 * q, s / 2) +
            block_mean(row, first, 2 * q + 1, s / 2)) *
           0.5f;
}

void tr_dedisp_scrunch_ref(const tr_dedisp_rows *r, uint32_t s, uint32_t ndm,
                           const uint32_t *delays, int64_t p0, size_t n, int mean,
                           float *y, size_t ystride)
{
    for (size_t k = 0; k < n; ++k) {
        const int64_t q = floor_div(p0 + (int64_t)k, s);
        for (uint32_t d = 0; d < ndm; ++d) {
            const uint32_t *delay = delays + (size_t)d * r->nused;
            float sum = 0.0f;
            for (uint32_t j = 0; j < r->nused; ++j)
                sum += block_mean(r->buf + (size_t)j * r->cap, r->first, q + delay[j], s);
            y[k * ystride + d] = mean ? sum / (float)r->nused : sum;
        }
    }
}
