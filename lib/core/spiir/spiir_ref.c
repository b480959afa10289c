/*
 * SPIIR filter bank, reference variant: equations 7 and 8 of Guo et al.,
 *   y[k, l] = a1[l] y[k-1, l] + b0[l] x[k - d[l]]
 *   z[k]    = 2 dt sum_l y[k, l]
 * one sample, one template, one filter at a time, in complex double (kept as
 * explicit real and imaginary parts). The output is rounded to float once.
 * This is the oracle every other variant is tested against.
 */
#include "spiir/spiir_variants.h"

#include <stdlib.h>
#include <string.h>

struct tr_spiir_ref {
    const tr_spiir_bank *bank; /* owned by the object, outlives this */
    double *y;                 /* 2 x total: filter states (re, im) */
};

tr_spiir_ref *tr_spiir_ref_create(const tr_spiir_bank *bank)
{
    tr_spiir_ref *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->bank = bank;
    r->y = calloc((size_t)bank->total * 2, sizeof *r->y);
    if (!r->y) {
        free(r);
        return NULL;
    }
    return r;
}

void tr_spiir_ref_destroy(tr_spiir_ref *r)
{
    if (!r) return;
    free(r->y);
    free(r);
}

void tr_spiir_ref_reset(tr_spiir_ref *r)
{
    memset(r->y, 0, (size_t)r->bank->total * 2 * sizeof *r->y);
}

void tr_spiir_ref_run(tr_spiir_ref *r, const float *xr, const float *xi, size_t pos,
                      size_t n, float *snr)
{
    const tr_spiir_bank *b = r->bank;
    const uint32_t nt = b->ntemplates;
    for (size_t k = 0; k < n; k++) {
        for (uint32_t t = 0; t < nt; t++) {
            double sum_re = 0.0, sum_im = 0.0;
            for (uint64_t l = b->first[t]; l < b->first[t + 1]; l++) {
                const tr_spiir_filter *f = &b->filters[l];
                const size_t at = pos + k - (size_t)f->delay; /* x[k - d] */
                const double x_re = xr[at], x_im = xi ? xi[at] : 0.0;
                double *y = &r->y[2 * l];
                /* y = a1 y + b0 x */
                const double y_re = f->a1_re * y[0] - f->a1_im * y[1] +
                                    (f->b0_re * x_re - f->b0_im * x_im);
                const double y_im = f->a1_re * y[1] + f->a1_im * y[0] +
                                    (f->b0_re * x_im + f->b0_im * x_re);
                y[0] = y_re;
                y[1] = y_im;
                sum_re += y_re;
                sum_im += y_im;
            }
            float *z = &snr[(k * nt + t) * 2];
            z[0] = (float)(2.0 * b->dt * sum_re);
            z[1] = (float)(2.0 * b->dt * sum_im);
        }
    }
}
