/*
 * Reference dedispersion: the literal sum over channels of the spectra
 * delayed by the dispersion delay (D. R. Lorimer, M. Kramer, "Handbook of
 * Pulsar Astronomy", section 5.2):
 *   Y[p][d] = sum_c x'[p + round(K_DM DM_d (f_c^-2 - f_ref^-2) / tsamp)][c],
 * the delays taken from the plan's table (tr_dedisp_delay), the channels in
 * increasing order, accumulated in float32.
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
            a->y[k * a->ndm + d] = a->mean ? sum / (float)a->nused : sum;
        }
}
