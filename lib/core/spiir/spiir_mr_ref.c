/*
 * Multirate SPIIR filter bank, reference variant (section 2.2 of X. Guo,
 * Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of low-latency
 * gravitational wave searches using Maxwell-microarchitecture GPUs", figure 1):
 * complex double throughout, one full-rate sample at a time.
 *
 * At full-rate sample i, for every level L with i a multiple of 2^L (index
 * m = i / 2^L at that level):
 *   1. top down:  x_L[m] = sum_k g[k] x_{L-1}[2m - k]              (decimate)
 *   2. bottom up: S_L[m] = 2 dt sum_l y_l[m] + sum_k 2 p[k] s[m - k]  (filter,
 *      with y_l[m] = a1'_l y_l[m-1] + b0'_l x_L[m - d'_l], and s the zero-
 *      stuffed S_{L+1}: s[2j] = S_{L+1}[j], s[odd] = 0)            (upsample, add)
 * and the output is S_0[i], rounded to float once. Values before the stream
 * starts are zero. The rescaled filters and the taps come from the plan
 * (spiir_mr.c). This is the oracle of the multirate variants.
 */
#include "spiir/spiir_mr.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const tr_spiir_bank *bank; /* the level's filters at its rate, or NULL */
    double *x;                 /* ring of x_L: 2 x xsize (re, im) */
    size_t xsize;              /* power of two > max(DEC_TAPS, max delay) */
    double *y;                 /* filter states: 2 x filters */
    double *S;                 /* ring of S_L: [SSIZE][nt][2] */
} level;

#define SSIZE 32 /* > INT_TAPS / 2 + 1 rows of S_{L+1} needed at once */

struct tr_spiir_mr_ref {
    const tr_spiir_mr_plan *p;
    int cplx;
    level lv[TR_SPIIR_MAX_LEVEL + 1];
    uint64_t pos; /* full-rate samples so far */
};

void tr_spiir_mr_ref_destroy(tr_spiir_mr_ref *r)
{
    if (!r) return;
    for (int l = 0; l <= TR_SPIIR_MAX_LEVEL; l++) {
        free(r->lv[l].x);
        free(r->lv[l].y);
        free(r->lv[l].S);
    }
    free(r);
}

tr_spiir_mr_ref *tr_spiir_mr_ref_create(const tr_spiir_mr_plan *p, int complex_input)
{
    tr_spiir_mr_ref *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->p = p;
    r->cplx = complex_input;
    for (int l = 0; l < p->nlev; l++) {
        level *v = &r->lv[l];
        v->bank = p->sub[l];
        size_t need = TR_SPIIR_MR_DEC_TAPS;
        if (v->bank && (size_t)v->bank->max_delay + 1 > need)
            need = (size_t)v->bank->max_delay + 1;
        v->xsize = 1;
        while (v->xsize < need)
            v->xsize <<= 1;
        v->x = calloc(2 * v->xsize, sizeof(double));
        v->S = calloc((size_t)SSIZE * p->ntemplates * 2, sizeof(double));
        v->y = v->bank ? calloc((size_t)v->bank->total * 2, sizeof(double)) : NULL;
        if (!v->x || !v->S || (v->bank && !v->y)) {
            tr_spiir_mr_ref_destroy(r);
            return NULL;
        }
    }
    return r;
}

void tr_spiir_mr_ref_reset(tr_spiir_mr_ref *r)
{
    for (int l = 0; l < r->p->nlev; l++) {
        level *v = &r->lv[l];
        memset(v->x, 0, 2 * v->xsize * sizeof(double));
        memset(v->S, 0, (size_t)SSIZE * r->p->ntemplates * 2 * sizeof(double));
        if (v->y) memset(v->y, 0, (size_t)v->bank->total * 2 * sizeof(double));
    }
    r->pos = 0;
}

/* x_L[j] (zero for j < 0). */
static const double *xat(const level *v, int64_t j, const double *zero)
{
    return j < 0 ? zero : &v->x[2 * ((size_t)j & (v->xsize - 1))];
}

void tr_spiir_mr_ref_run(tr_spiir_mr_ref *r, const float *xr, const float *xi, size_t n,
                         float *snr)
{
    const tr_spiir_mr_plan *p = r->p;
    const uint32_t nt = p->ntemplates;
    const double zero[2] = {0.0, 0.0};
    for (size_t k = 0; k < n; k++) {
        const uint64_t i = r->pos + k;
        /* 1. Input and decimation, top down. */
        double *x0 = &r->lv[0].x[2 * (i & (r->lv[0].xsize - 1))];
        x0[0] = xr[k];
        x0[1] = xi ? xi[k] : 0.0;
        for (int l = 1; l < p->nlev; l++) {
            if (i & (((uint64_t)1 << l) - 1)) break; /* no sample at this level now */
            const int64_t m = (int64_t)(i >> l);
            const level *up = &r->lv[l - 1];
            double acc_re = 0.0, acc_im = 0.0;
            for (int t = 0; t < TR_SPIIR_MR_DEC_TAPS; t++) {
                const double *u = xat(up, 2 * m - t, zero);
                acc_re += p->dec[t] * u[0];
                acc_im += p->dec[t] * u[1];
            }
            double *xl = &r->lv[l].x[2 * ((size_t)m & (r->lv[l].xsize - 1))];
            xl[0] = acc_re;
            xl[1] = acc_im;
        }
        /* 2. Filters and upsampling, bottom up. */
        for (int l = p->nlev - 1; l >= 0; l--) {
            if (i & (((uint64_t)1 << l) - 1)) continue;
            const int64_t m = (int64_t)(i >> l);
            level *v = &r->lv[l];
            double *Sm = &v->S[((size_t)m % SSIZE) * nt * 2];
            for (uint32_t t = 0; t < nt; t++) {
                double s_re = 0.0, s_im = 0.0;
                if (v->bank) {
                    const tr_spiir_bank *b = v->bank;
                    for (uint64_t f = b->first[t]; f < b->first[t + 1]; f++) {
                        const tr_spiir_filter *q = &b->filters[f];
                        const double *u = xat(v, m - q->delay, zero);
                        double *y = &v->y[2 * f];
                        const double y_re = q->a1_re * y[0] - q->a1_im * y[1] +
                                            (q->b0_re * u[0] - q->b0_im * u[1]);
                        const double y_im = q->a1_re * y[1] + q->a1_im * y[0] +
                                            (q->b0_re * u[1] + q->b0_im * u[0]);
                        y[0] = y_re;
                        y[1] = y_im;
                        s_re += y_re;
                        s_im += y_im;
                    }
                    s_re *= 2.0 * p->dt;
                    s_im *= 2.0 * p->dt;
                }
                if (l + 1 < p->nlev) {
                    const level *dn = &r->lv[l + 1];
                    for (int tp = 0; tp < TR_SPIIR_MR_INT_TAPS; tp++) {
                        const int64_t q = m - tp; /* s[q] = S_{L+1}[q / 2] for even q */
                        if (q < 0 || (q & 1)) continue;
                        const double *u = &dn->S[((size_t)(q / 2) % SSIZE) * nt * 2];
                        s_re += 2.0 * p->itp[tp] * u[2 * t];
                        s_im += 2.0 * p->itp[tp] * u[2 * t + 1];
                    }
                }
                Sm[2 * t] = s_re;
                Sm[2 * t + 1] = s_im;
                if (l == 0) {
                    snr[(k * nt + t) * 2] = (float)s_re;
                    snr[(k * nt + t) * 2 + 1] = (float)s_im;
                }
            }
        }
    }
    r->pos += n;
}
