/*
 * Multirate SPIIR filter bank (section 2.2 of X. Guo, Q. Chu, S. K. Chung,
 * Z. Du, L. Wen, "Acceleration of low-latency gravitational wave searches
 * using Maxwell-microarchitecture GPUs"): the plan (resampling filters, the
 * filters of each level rescaled to its rate, the latency) and the optimized
 * CPU variant.
 *
 * Rescaling a filter to level L (M = 2^L). Let D_L = DEC_DELAY (M - 1) and
 * U_L = INT_DELAY (M - 1) be the group delays (in full-rate samples) of the
 * decimation chain down to level L and of the interpolation chain back up, so
 * that x_L[m] ~ x[m M - D_L] (low-passed) and the level-L sum at index m lands
 * on full-rate sample m M + U_L. The output is meant to equal the single-rate
 * output delayed by the latency T: out[n] = z[n - T]. For a filter (a, b, d)
 * the wanted contribution at m M + U_L is
 *   sum_{j >= d} b a^(j - d) x[m M + U_L - T - j],
 * and a level-L filter y'[m] = a' y'[m-1] + b' x_L[m - d'] gives
 *   sum_{i >= 0} b' a'^i x[(m - d' - i) M - D_L],
 * i.e. the terms j = d + phi + i M with phi = d' M - c, c = d + T - D_L - U_L.
 * With a band-limited input the full-rate sum over j equals M times the sum
 * over every M-th j (any phase), so a' = a^M, b' = M b a^phi, and d' = ceil(c / M)
 * (phi in [0, M): the coarse samples sit at most M - 1 full-rate samples after
 * the filter's start). T is the smallest value that keeps every d' >= 0:
 * T = max(0, max over filters of level L >= 1 of (D_L + U_L - (M - 1) - d)).
 * Level-0 filters keep (a, b) and get the delay d + T.
 *
 * Optimized CPU variant: the stream is cut into blocks of at most `block`
 * full-rate samples. Per block: the input is cleaned into x_0, each level is
 * decimated from the one above (symmetric pairs of taps, fixed order), each
 * level's filters run in a level object (spiir_level.h: the optimized kernels
 * of spiir_cpu.c) writing that level's own sums, and from the lowest level up the
 * interpolated sums are added (fixed order). Histories of x_L (XHIST samples)
 * and of S_L (SHIST rows) carry over between blocks, so the output does not
 * depend on how the stream is cut into calls.
 */
#include "spiir/spiir_mr.h"

#include "common/core_util.h"
#include "spiir/spiir_level.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- design ------------------------------------------------------------ */

/* Modified Bessel function of the first kind, order 0 (power series). */
static double bessel_i0(double x)
{
    double sum = 1.0, term = 1.0;
    const double q = 0.25 * x * x;
    for (int k = 1; k < 200; k++) {
        term *= q / ((double)k * (double)k);
        sum += term;
        if (term < 1e-18 * sum) break;
    }
    return sum;
}

void tr_spiir_mr_halfband(double *taps, int n, double beta)
{
    const int c = (n - 1) / 2;
    const double pi = 3.14159265358979323846;
    const double i0b = bessel_i0(beta);
    for (int k = 0; k < n; k++) {
        const int j = k - c;
        if (j == 0) {
            taps[k] = 0.5;
        } else if (j % 2 == 0) {
            taps[k] = 0.0; /* sinc(j / 2) = 0 exactly */
        } else {
            const double r = (double)j / (double)c;
            const double w = bessel_i0(beta * sqrt(1.0 - r * r)) / i0b;
            taps[k] = sin(0.5 * pi * j) / (pi * j) * w; /* 0.5 sinc(j / 2) w */
        }
    }
}

typedef struct {
    double re, im;
} cplx;

static cplx cmul(cplx a, cplx b)
{
    cplx r = {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
    return r;
}

/* a^e for e >= 0 by binary powering in double. */
static cplx cpow_int(cplx a, int64_t e)
{
    cplx r = {1.0, 0.0};
    while (e > 0) {
        if (e & 1) r = cmul(r, a);
        a = cmul(a, a);
        e >>= 1;
    }
    return r;
}

void tr_spiir_mr_plan_destroy(tr_spiir_mr_plan *p)
{
    if (!p) return;
    for (int l = 0; l <= TR_SPIIR_MAX_LEVEL; l++)
        tr_spiir_bank_destroy(p->sub[l]);
    free(p);
}

tr_spiir_mr_plan *tr_spiir_mr_plan_create(const tr_spiir_bank *bank, tr_error *err)
{
    tr_spiir_mr_plan *p = calloc(1, sizeof *p);
    tr_spiir_filter *f = NULL;
    uint32_t *counts = NULL;
    if (!p) goto nomem;
    p->ntemplates = bank->ntemplates;
    p->dt = bank->dt;
    tr_spiir_mr_halfband(p->dec, TR_SPIIR_MR_DEC_TAPS, 0.1102 * (100.0 - 8.7));
    tr_spiir_mr_halfband(p->itp, TR_SPIIR_MR_INT_TAPS, 0.1102 * (60.0 - 8.7));
    const int64_t gd = TR_SPIIR_MR_DEC_DELAY + TR_SPIIR_MR_INT_DELAY;
    int maxl = 0;
    int64_t lat = 0;
    for (uint64_t i = 0; i < bank->total; i++) {
        const tr_spiir_filter *q = &bank->filters[i];
        if (q->level > maxl) maxl = q->level;
        if (q->level > 0) {
            const int64_t m1 = ((int64_t)1 << q->level) - 1;
            const int64_t need = gd * m1 - m1 - q->delay;
            if (need > lat) lat = need;
        }
    }
    p->nlev = maxl + 1;
    p->latency = lat;

    f = malloc((size_t)(bank->total + bank->ntemplates) * sizeof *f);
    counts = malloc((size_t)bank->ntemplates * sizeof *counts);
    if (!f || !counts) goto nomem;
    for (int L = 0; L < p->nlev; L++) {
        const int64_t M = (int64_t)1 << L;
        uint64_t nf = 0, real = 0;
        for (uint32_t t = 0; t < bank->ntemplates; t++) {
            counts[t] = 0;
            for (uint64_t i = bank->first[t]; i < bank->first[t + 1]; i++) {
                const tr_spiir_filter *q = &bank->filters[i];
                if (q->level != L) continue;
                tr_spiir_filter *o = &f[nf++];
                *o = *q;
                o->level = 0;
                const int64_t c = (int64_t)q->delay + lat - gd * (M - 1);
                const int64_t dl = L == 0 ? c : (c >= 0 ? (c + M - 1) / M : -((-c) / M));
                const int64_t phi = dl * M - c; /* in [0, M) */
                if (dl > TR_SPIIR_MAX_DELAY) {
                    tr_fail(err, TR_ERR_INVALID,
                            "spiir: multirate: delay %lld of a level-%d filter plus the "
                            "latency %lld exceeds %d samples",
                            (long long)q->delay, L, (long long)lat, TR_SPIIR_MAX_DELAY);
                    goto fail;
                }
                const cplx a = {q->a1_re, q->a1_im}, b = {q->b0_re, q->b0_im};
                const cplx aM = cpow_int(a, M);
                const cplx g = cmul(b, cpow_int(a, phi));
                o->a1_re = aM.re;
                o->a1_im = aM.im;
                o->b0_re = (double)M * g.re;
                o->b0_im = (double)M * g.im;
                o->delay = (int32_t)dl;
                counts[t]++;
                real++;
            }
            if (counts[t] == 0) { /* a silent filter: exact zeros */
                tr_spiir_filter *o = &f[nf++];
                memset(o, 0, sizeof *o);
                counts[t] = 1;
            }
        }
        if (real == 0) continue;
        p->sub[L] = tr_spiir_bank_create(f, counts, bank->ntemplates, bank->dt, err);
        if (!p->sub[L]) goto fail;
    }
    free(f);
    free(counts);
    tr_clear(err);
    return p;
nomem:
    tr_fail(err, TR_ERR_NOMEM, "spiir: multirate: cannot allocate the plan");
fail:
    free(f);
    free(counts);
    tr_spiir_mr_plan_destroy(p);
    return NULL;
}

/* ---- optimized CPU variant --------------------------------------------- */

#define XH     TR_SPIIR_MR_XHIST
#define SH     TR_SPIIR_MR_SHIST
#define DC     TR_SPIIR_MR_DEC_DELAY
#define IC     TR_SPIIR_MR_INT_DELAY
#define DPAIRS ((TR_SPIIR_MR_DEC_DELAY + 1) / 2) /* odd distances 1, 3, .., DC */
#define IPAIRS ((TR_SPIIR_MR_INT_DELAY + 1) / 2)

struct tr_spiir_mr_cpu {
    const tr_spiir_mr_plan *p;
    int C;       /* floats per input sample */
    uint32_t nt; /* templates */
    size_t block;
    tr_spiir_level *lev[TR_SPIIR_MAX_LEVEL + 1]; /* NULL: no filters at that level */
    float *xb[TR_SPIIR_MAX_LEVEL + 1];  /* x_L: XH history + new samples, C each */
    float *sb[TR_SPIIR_MAX_LEVEL + 1];  /* L >= 1: SH history rows + new rows of S_L */
    float *tmp;                         /* one row of nt complex values */
    size_t cap[TR_SPIIR_MAX_LEVEL + 1]; /* new samples per block, at most */
    float dec[DPAIRS], dec0;            /* g[DC - j] for odd j; g[DC] */
    float itp[IPAIRS];                  /* 2 p[IC - j] for odd j */
    uint64_t pos;
};

void tr_spiir_mr_cpu_destroy(tr_spiir_mr_cpu *c)
{
    if (!c) return;
    for (int l = 0; l <= TR_SPIIR_MAX_LEVEL; l++) {
        tr_spiir_level_destroy(c->lev[l]);
        free(c->xb[l]);
        free(c->sb[l]);
    }
    free(c->tmp);
    free(c);
}

tr_spiir_mr_cpu *tr_spiir_mr_cpu_create(const tr_spiir_mr_plan *p, int complex_input,
                                        tr_error *err)
{
    tr_spiir_mr_cpu *c = calloc(1, sizeof *c);
    if (!c) goto nomem;
    c->p = p;
    c->C = complex_input ? 2 : 1;
    c->nt = p->ntemplates;
    /* Blocks such that level 1's rows take about 16 MiB. */
    const size_t row = (size_t)c->nt * 2 * sizeof(float);
    c->block = 4096;
    while (c->block > 64 && (c->block / 2) * row > ((size_t)16 << 20))
        c->block /= 2;
    c->dec0 = (float)p->dec[DC];
    for (int j = 0; j < DPAIRS; j++)
        c->dec[j] = (float)p->dec[DC - (2 * j + 1)];
    for (int j = 0; j < IPAIRS; j++)
        c->itp[j] = (float)(2.0 * p->itp[IC - (2 * j + 1)]);
    c->tmp = malloc(row);
    if (!c->tmp) goto nomem;
    for (int l = 0; l < p->nlev; l++) {
        c->cap[l] = (c->block >> l) + 1;
        c->xb[l] = calloc((XH + c->cap[l]) * (size_t)c->C, sizeof(float));
        if (!c->xb[l]) goto nomem;
        if (l > 0) {
            c->sb[l] = calloc((SH + c->cap[l]) * (size_t)c->nt * 2, sizeof(float));
            if (!c->sb[l]) goto nomem;
        }
        if (p->sub[l]) {
            c->lev[l] =
                tr_spiir_level_create(p->sub[l], complex_input, TR_VARIANT_FAST, err);
            if (!c->lev[l]) goto fail;
        }
    }
    return c;
nomem:
    tr_fail(err, TR_ERR_NOMEM, "spiir: multirate: cannot allocate the CPU buffers");
fail:
    tr_spiir_mr_cpu_destroy(c);
    return NULL;
}

void tr_spiir_mr_cpu_reset(tr_spiir_mr_cpu *c)
{
    for (int l = 0; l < c->p->nlev; l++) {
        if (c->lev[l]) tr_spiir_level_reset(c->lev[l]);
        memset(c->xb[l], 0, (XH + c->cap[l]) * (size_t)c->C * sizeof(float));
        if (c->sb[l])
            memset(c->sb[l], 0, (SH + c->cap[l]) * (size_t)c->nt * 2 * sizeof(float));
    }
    c->pos = 0;
}

/* x_{l+1}[m] for the block's new m: symmetric pairs of taps, fixed order. */
static void decimate(const tr_spiir_mr_cpu *c, int l, uint64_t s_hi, uint64_t s_lo,
                     size_t n_lo)
{
    const int C = c->C;
    const float *x = c->xb[l];
    float *y = c->xb[l + 1] + (size_t)XH * C;
    for (size_t j = 0; j < n_lo; j++) {
        /* row of x_l[2m - DC] in xb[l]: x_l[i] sits at row i - (s_hi - XH) */
        const size_t r = (size_t)(2 * (s_lo + j) - DC + XH - s_hi);
        for (int k = 0; k < C; k++) {
            float acc = c->dec0 * x[r * C + k];
            for (int q = 0; q < DPAIRS; q++) {
                const size_t d = (size_t)(2 * q + 1);
                acc += c->dec[q] * (x[(r - d) * C + k] + x[(r + d) * C + k]);
            }
            y[j * C + k] = acc;
        }
    }
}

/* out rows (level l, new samples) += interpolated S_{l+1}. */
static void interpolate_add(tr_spiir_mr_cpu *c, uint64_t s_hi, size_t n_hi,
                            const float *S, uint64_t s_lo, float *out)
{
    const size_t w = (size_t)c->nt * 2;
    float *tmp = c->tmp;
    for (size_t j = 0; j < n_hi; j++) {
        const uint64_t n = s_hi + j;
        float *o = out + j * w;
        /* S_{l+1}[m] sits at row m - (s_lo - SH) */
        if ((n - IC) % 2 == 0) { /* odd n: the centre tap alone, 2 p[IC] = 1 */
            const float *a = S + (size_t)((int64_t)(n - IC) / 2 + SH - (int64_t)s_lo) * w;
            for (size_t i = 0; i < w; i++)
                o[i] += a[i];
        } else {
            for (size_t i = 0; i < w; i++)
                tmp[i] = 0.0f;
            for (int q = 0; q < IPAIRS; q++) {
                const int64_t d = 2 * q + 1;
                const float wq = c->itp[q];
                const float *a =
                    S + (size_t)(((int64_t)n - IC + d) / 2 + SH - (int64_t)s_lo) * w;
                const float *b =
                    S + (size_t)(((int64_t)n - IC - d) / 2 + SH - (int64_t)s_lo) * w;
                for (size_t i = 0; i < w; i++)
                    tmp[i] += wq * (a[i] + b[i]);
            }
            for (size_t i = 0; i < w; i++)
                o[i] += tmp[i];
        }
    }
}

static void run_block(tr_spiir_mr_cpu *c, const float *x, size_t n, float *snr,
                      uint64_t *nonfinite)
{
    const tr_spiir_mr_plan *p = c->p;
    const int C = c->C;
    const size_t w = (size_t)c->nt * 2;
    uint64_t s[TR_SPIIR_MAX_LEVEL + 1];
    size_t m[TR_SPIIR_MAX_LEVEL + 1];
    for (int l = 0; l < p->nlev; l++) {
        s[l] = tr_spiir_mr_count(c->pos, l);
        m[l] = (size_t)(tr_spiir_mr_count(c->pos + n, l) - s[l]);
    }
    /* x_0: cleaned input. */
    uint64_t bad = 0;
    float *x0 = c->xb[0] + (size_t)XH * C;
    for (size_t i = 0; i < n * (size_t)C; i++) {
        const float v = tr_spiir_clean(x[i]);
        bad += v != x[i];
        x0[i] = v;
    }
    *nonfinite += bad;
    for (int l = 0; l + 1 < p->nlev; l++)
        decimate(c, l, s[l], s[l + 1], m[l + 1]);
    /* Each level's own sums (the input's non-finite values are counted above). */
    for (int l = 0; l < p->nlev; l++) {
        float *out = l == 0 ? snr : c->sb[l] + (size_t)SH * w;
        uint64_t none = 0;
        if (c->lev[l])
            tr_spiir_level_run(c->lev[l], c->xb[l] + (size_t)XH * C, m[l], out, &none);
        else
            memset(out, 0, m[l] * w * sizeof(float));
    }
    /* From the lowest level up. */
    for (int l = p->nlev - 2; l >= 0; l--) {
        float *out = l == 0 ? snr : c->sb[l] + (size_t)SH * w;
        interpolate_add(c, s[l], m[l], c->sb[l + 1], s[l + 1], out);
    }
    /* Histories for the next block. */
    for (int l = 0; l < p->nlev; l++) {
        memmove(c->xb[l], c->xb[l] + m[l] * C, (size_t)XH * C * sizeof(float));
        if (l > 0) memmove(c->sb[l], c->sb[l] + m[l] * w, (size_t)SH * w * sizeof(float));
    }
    c->pos += n;
}

void tr_spiir_mr_cpu_run(tr_spiir_mr_cpu *c, const float *x, size_t n, float *snr,
                         uint64_t *nonfinite)
{
    const size_t w = (size_t)c->nt * 2;
    for (size_t done = 0; done < n;) {
        const size_t k = n - done < c->block ? n - done : c->block;
        run_block(c, x + done * (size_t)c->C, k, snr + done * w, nonfinite);
        done += k;
    }
}
