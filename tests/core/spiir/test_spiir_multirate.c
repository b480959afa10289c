/*
 * Multirate SPIIR filter bank (multirate = 1): the resampling filters'
 * measured ripple, the accuracy bound against the ideal multirate output and
 * against the single-rate output delayed by the latency, latency formula and
 * alignment, chunking invariance (bit for bit, chunk size 1 included), the
 * optimized variants against the reference, the non-finite policy and invalid
 * configurations.
 *
 * Usage: test_spiir_multirate          CPU variants
 *        test_spiir_multirate --gpu    CUDA FAST and PAPER (77 = skipped)
 */
#include <transient/spiir.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spiir/spiir_mr.h"
#include "common/test_util.h"
#include "spiir_test_compare.h"

#define SKIP 77
#define PI   3.14159265358979323846

static const double DT = 1.0 / 4096;

/* ---- helpers ------------------------------------------------------------- */

typedef struct {
    const char *name;
    tr_backend backend;
    tr_variant variant;
} variant_t;

static const variant_t REF = {"reference", TR_BACKEND_CPU, TR_VARIANT_REFERENCE};
static const variant_t FAST = {"cpu-fast", TR_BACKEND_CPU, TR_VARIANT_FAST};
static const variant_t CUDA_FAST = {"cuda-fast", TR_BACKEND_CUDA, TR_VARIANT_FAST};
static const variant_t CUDA_PAPER = {"cuda-paper", TR_BACKEND_CUDA, TR_VARIANT_PAPER};

/* Filter n samples in chunks of random size in [1, chunk_max] (0: one call). */
static int run(const tr_spiir_bank *b, const variant_t *v, int multirate, int cplx,
               const float *x, size_t n, float *snr, size_t chunk_max, size_t batch,
               tu_rng *r, int64_t *latency, uint64_t *nonfinite)
{
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = v->backend;
    cfg.variant = v->variant;
    cfg.complex_input = cplx;
    cfg.multirate = multirate;
    if (batch) cfg.batch = batch;
    tr_error err;
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    if (!q) {
        fprintf(stderr, "%s: create failed: %s\n", v->name, err.message);
        return -1;
    }
    const size_t per = (size_t)tr_spiir_bank_templates(b) * 2, w = cplx ? 2 : 1;
    int rc = 0;
    for (size_t pos = 0; pos < n && rc == 0;) {
        size_t k = chunk_max ? (size_t)tu_range(r, 1, (long)chunk_max) : n - pos;
        if (k > n - pos) k = n - pos;
        if (tr_spiir_process(q, x + pos * w, k, snr + pos * per) != TR_OK) {
            fprintf(stderr, "%s: process: %s\n", v->name, tr_spiir_last_error(q));
            rc = -1;
        }
        pos += k;
    }
    if (latency) *latency = tr_spiir_latency(q);
    if (nonfinite) *nonfinite = tr_spiir_nonfinite(q);
    tr_spiir_destroy(q);
    return rc;
}

/* ||a - b|| / ||b|| over rows [k0, k1) of nt complex values; a lags by `lag`
 * rows: a[k] is compared with b[k - lag]. */
static double rel_rms_rows(const float *a, const float *b, uint32_t nt, size_t k0,
                           size_t k1, int64_t lag)
{
    double num = 0.0, den = 0.0;
    for (size_t k = k0; k < k1; k++) {
        const float *pa = a + k * nt * 2, *pb = b + (size_t)((int64_t)k - lag) * nt * 2;
        for (uint32_t i = 0; i < nt * 2; i++) {
            const double d = (double)pa[i] - (double)pb[i];
            num += d * d;
            den += (double)pb[i] * (double)pb[i];
        }
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

static int same_bits(const float *a, const float *b, size_t n)
{
    return memcmp(a, b, n * sizeof(float)) == 0;
}

/* |H(f)| of real taps at f cycles per sample. */
static double response(const double *h, int n, double f)
{
    double re = 0.0, im = 0.0;
    for (int k = 0; k < n; k++) {
        re += h[k] * cos(2.0 * PI * f * k);
        im -= h[k] * sin(2.0 * PI * f * k);
    }
    return hypot(re, im);
}

/* Largest |H - 1| on [0, 0.2] (passband) and |H| on [0.3, 0.5] (stopband). */
static void ripple(const double *h, int n, double *pass, double *stop)
{
    *pass = 0.0;
    *stop = 0.0;
    for (int i = 0; i <= 4000; i++) {
        const double fp = 0.2 * i / 4000.0, fs = 0.3 + 0.2 * i / 4000.0;
        const double e = fabs(response(h, n, fp) - 1.0), s = response(h, n, fs);
        if (e > *pass) *pass = e;
        if (s > *stop) *stop = s;
    }
}

/* Random filter of level L: pole frequency uniform in [-fmax, fmax] (cycles
 * per full-rate sample), gap at the level's rate log-uniform in [g0, g1]. */
static tr_spiir_filter random_filter(tu_rng *r, int L, double fmax, double g0, double g1,
                                     int32_t max_delay)
{
    tr_spiir_filter f;
    const double M = (double)(1 << L);
    const double gl = exp(log(g0) + (log(g1) - log(g0)) * tu_uniform(r));
    const double mag = pow(1.0 - gl, 1.0 / M); /* |a1|^M = 1 - gl */
    const double th = 2.0 * PI * fmax * (2.0 * tu_uniform(r) - 1.0);
    f.a1_re = mag * cos(th);
    f.a1_im = mag * sin(th);
    const double g = sqrt(gl / M); /* matched-filter-like gains */
    f.b0_re = g * tu_gauss(r);
    f.b0_im = g * tu_gauss(r);
    f.delay = (int32_t)tu_range(r, 0, max_delay);
    f.level = L;
    return f;
}

/* Levels each template uses (bit L: level L), cycled over the templates:
 * levels without filters in between, templates without filters at a level. */
static const unsigned SPARSE[5] = {0x04, 0x10, 0x34, 0x20, 0x02};

/* nt templates, per template `per` filters at each level 0..lmax (sparse: only
 * at the levels of SPARSE[t % 5] that are <= lmax, at least one). */
static tr_spiir_bank *level_bank(tu_rng *r, uint32_t nt, int lmax, int per, double fband,
                                 double g0, double g1, int32_t max_delay, int sparse)
{
    const uint32_t nf = (uint32_t)((lmax + 1) * per);
    tr_spiir_filter *f = malloc((size_t)nt * nf * sizeof *f);
    uint32_t *counts = malloc(nt * sizeof *counts);
    size_t k = 0;
    for (uint32_t t = 0; t < nt; t++) {
        unsigned mask = sparse ? SPARSE[t % 5] & ((2u << lmax) - 1) : ~0u;
        if (!mask) mask = 1u << lmax;
        counts[t] = 0;
        for (uint32_t i = 0; i < nf; i++) {
            const int L = (int)(i / (uint32_t)per);
            if (!(mask >> L & 1)) continue;
            /* fband < 0: each level's own band, 0.3 of its rate */
            const double fm = fband > 0 ? fband : 0.3 / (double)(1 << L);
            f[k++] = random_filter(r, L, fm, g0, g1, max_delay);
            counts[t]++;
        }
    }
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(f, counts, nt, DT, &err);
    CHECK(b != NULL, "bank: %s", err.message);
    free(f);
    free(counts);
    return b;
}

/* ---- resampling filters ------------------------------------------------- */

static double g_dec_pass, g_dec_stop, g_int_pass, g_int_stop;

static void test_taps(void)
{
    tr_spiir_filter f = {0.5, 0.0, 1.0, 0.0, 0, 1};
    uint32_t one = 1;
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(&f, &one, 1, DT, &err);
    tr_spiir_mr_plan *p = tr_spiir_mr_plan_create(b, &err);
    CHECK(p != NULL, "plan: %s", err.message);
    if (!p) return;
    ripple(p->dec, TR_SPIIR_MR_DEC_TAPS, &g_dec_pass, &g_dec_stop);
    ripple(p->itp, TR_SPIIR_MR_INT_TAPS, &g_int_pass, &g_int_stop);
    printf("decimator %d taps: passband ripple %.2e, stopband %.1f dB\n",
           TR_SPIIR_MR_DEC_TAPS, g_dec_pass, 20 * log10(g_dec_stop));
    printf("interpolator %d taps: passband ripple %.2e, stopband %.1f dB\n",
           TR_SPIIR_MR_INT_TAPS, g_int_pass, 20 * log10(g_int_stop));
    CHECK(g_dec_stop <= pow(10.0, -99.5 / 20), "decimator stopband %.1f dB",
          20 * log10(g_dec_stop));
    CHECK(g_dec_pass <= 2e-5, "decimator passband ripple %.2e", g_dec_pass);
    CHECK(g_int_stop <= pow(10.0, -60.0 / 20), "interpolator stopband %.1f dB",
          20 * log10(g_int_stop));
    CHECK(g_int_pass <= 1e-3, "interpolator passband ripple %.2e", g_int_pass);
    /* Half-band structure: symmetric, centre 1/2, even distances zero. */
    int ok = p->dec[TR_SPIIR_MR_DEC_DELAY] == 0.5 && p->itp[TR_SPIIR_MR_INT_DELAY] == 0.5;
    for (int j = 1; j <= TR_SPIIR_MR_DEC_DELAY; j++) {
        ok &= p->dec[TR_SPIIR_MR_DEC_DELAY - j] == p->dec[TR_SPIIR_MR_DEC_DELAY + j];
        if (j % 2 == 0) ok &= p->dec[TR_SPIIR_MR_DEC_DELAY + j] == 0.0;
    }
    for (int j = 1; j <= TR_SPIIR_MR_INT_DELAY; j++) {
        ok &= p->itp[TR_SPIIR_MR_INT_DELAY - j] == p->itp[TR_SPIIR_MR_INT_DELAY + j];
        if (j % 2 == 0) ok &= p->itp[TR_SPIIR_MR_INT_DELAY + j] == 0.0;
    }
    CHECK(ok, "half-band structure of the resampling filters");
    /* Rescaled filter: a1^2, delay and gain (level 1, delay 0: latency 55,
     * c = 0 + 55 - 56 = -1, d' = 0, phi = 1, b0' = 2 b0 a1). */
    CHECK(p->latency == 55, "latency %lld", (long long)p->latency);
    const tr_spiir_filter *q = tr_spiir_bank_filter(p->sub[1], 0, 0);
    CHECK(q && q->a1_re == 0.25 && q->a1_im == 0.0 && q->delay == 0 && q->b0_re == 1.0,
          "rescaled filter a1 %g delay %d b0 %g", q ? q->a1_re : -1, q ? q->delay : -1,
          q ? q->b0_re : -1);
    tr_spiir_mr_plan_destroy(p);
    tr_spiir_bank_destroy(b);
}

/* ---- latency ------------------------------------------------------------ */

static void test_latency_formula(void)
{
    struct {
        int level;
        int32_t delay;
        int64_t want;
    } cases[] = {{0, 0, 0},    {1, 0, 55},   {1, 55, 0},  {2, 10, 155},
                 {6, 0, 3465}, {6, 4000, 0}, {3, 384, 1}, {16, 0, 55 * 65535}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tr_spiir_filter f[2] = {{0.5, 0.1, 1.0, 0.0, 3, 0},
                                {0.2, 0.1, 1.0, 0.0, cases[i].delay, cases[i].level}};
        uint32_t cnt = 2;
        tr_error err;
        tr_spiir_bank *b = tr_spiir_bank_create(f, &cnt, 1, DT, &err);
        tr_spiir_config cfg = tr_spiir_config_default();
        cfg.backend = TR_BACKEND_CPU;
        cfg.multirate = 1;
        cfg.variant = TR_VARIANT_REFERENCE;
        tr_spiir *q = tr_spiir_create(&cfg, b, &err);
        CHECK(q && tr_spiir_latency(q) == cases[i].want,
              "level %d delay %d: latency %lld, want %lld", cases[i].level,
              cases[i].delay, q ? (long long)tr_spiir_latency(q) : -1LL,
              (long long)cases[i].want);
        tr_spiir_destroy(q);
        cfg.multirate = 0;
        q = tr_spiir_create(&cfg, b, &err);
        CHECK(q && tr_spiir_latency(q) == 0, "single rate: latency 0");
        tr_spiir_destroy(q);
        tr_spiir_bank_destroy(b);
    }
}

/* ---- accuracy ------------------------------------------------------------- */

/* Complex exponentials: x[n] = sum_k A_k exp(i w_k n). */
typedef struct {
    double w, re, im;
} tone;

/* Steady-state output of template t for the tones: single rate delayed by
 * `lag` (ideal = 0), or the ideal multirate bank (resamplers with flat
 * passbands; ideal = 1), evaluated at full-rate sample n. */
static void steady(const tr_spiir_bank *b, const tr_spiir_mr_plan *p, int ideal,
                   const tone *tn, int ntones, int64_t lag, uint32_t t, double n,
                   double *zr, double *zi)
{
    const int64_t gdsum = TR_SPIIR_MR_DEC_DELAY + TR_SPIIR_MR_INT_DELAY;
    double sr = 0.0, si = 0.0;
    for (int k = 0; k < ntones; k++) {
        const double w = tn[k].w;
        double hr = 0.0, hi = 0.0;
        if (!ideal) {
            for (uint64_t l = b->first[t]; l < b->first[t + 1]; l++) {
                const tr_spiir_filter *f = &b->filters[l];
                /* b e^{-iw(d + lag)} / (1 - a e^{-iw}) */
                const double er = cos(w), ei = -sin(w);
                const double dr = 1.0 - (f->a1_re * er - f->a1_im * ei);
                const double di = -(f->a1_re * ei + f->a1_im * er);
                const double ph = -w * (double)(f->delay + lag);
                const double nr = f->b0_re * cos(ph) - f->b0_im * sin(ph);
                const double ni = f->b0_re * sin(ph) + f->b0_im * cos(ph);
                const double dd = dr * dr + di * di;
                hr += (nr * dr + ni * di) / dd;
                hi += (ni * dr - nr * di) / dd;
            }
        } else {
            for (int L = 0; L < p->nlev; L++) {
                const tr_spiir_bank *s = p->sub[L];
                if (!s) continue;
                const double M = (double)(1 << L), wl = w * M;
                for (uint64_t l = s->first[t]; l < s->first[t + 1]; l++) {
                    const tr_spiir_filter *f = &s->filters[l];
                    const double er = cos(wl), ei = -sin(wl);
                    const double dr = 1.0 - (f->a1_re * er - f->a1_im * ei);
                    const double di = -(f->a1_re * ei + f->a1_im * er);
                    const double ph =
                        -w * ((double)f->delay * M + (double)gdsum * (M - 1));
                    const double nr = f->b0_re * cos(ph) - f->b0_im * sin(ph);
                    const double ni = f->b0_re * sin(ph) + f->b0_im * cos(ph);
                    const double dd = dr * dr + di * di;
                    hr += (nr * dr + ni * di) / dd;
                    hi += (ni * dr - nr * di) / dd;
                }
            }
        }
        const double xr = tn[k].re * cos(w * n) - tn[k].im * sin(w * n);
        const double xi = tn[k].re * sin(w * n) + tn[k].im * cos(w * n);
        sr += hr * xr - hi * xi;
        si += hr * xi + hi * xr;
    }
    *zr = 2.0 * DT * sr;
    *zi = 2.0 * DT * si;
}

static void fill_steady(const tr_spiir_bank *b, const tr_spiir_mr_plan *p, int ideal,
                        const tone *tn, int ntones, int64_t lag, size_t n, float *out)
{
    const uint32_t nt = b->ntemplates;
    for (size_t k = 0; k < n; k++)
        for (uint32_t t = 0; t < nt; t++) {
            double zr, zi;
            steady(b, p, ideal, tn, ntones, lag, t, (double)k, &zr, &zi);
            out[(k * nt + t) * 2] = (float)zr;
            out[(k * nt + t) * 2 + 1] = (float)zi;
        }
}

/*
 * Bank: filters at levels 0..lmax, pole frequencies inside the lowest level's
 * passband, narrow poles; the input is a sum of tones at pole frequencies (the
 * regime of a matched filter: each filter mostly answers at its own frequency).
 * Bound on the multirate output against the ideal multirate bank (flat
 * resamplers): each of the lmax decimation and interpolation stages on a
 * path adds at most its passband ripple, each interpolation stage an image
 * at most its stopband level:  R = lmax (dec_pass + int_pass + int_stop).
 * Against the single-rate output delayed by the latency the bound adds the
 * filters' own aliasing A = |ideal - single| / |single| (computed here
 * analytically; a property of the bank): A + R (1 + A).
 */
static void test_accuracy(int cplx, const variant_t *v, int sparse)
{
    tu_rng r = {0x5151 + (uint64_t)cplx + 16 * (uint64_t)sparse};
    const int lmax = 3;
    const uint32_t nt = 5;
    const double fband = 0.9 * 0.3 / (1 << lmax); /* inside level 3's passband */
    tr_spiir_bank *b = level_bank(&r, nt, lmax, 3, fband, 3e-3, 1e-2, 300, sparse);
    tr_error err;
    tr_spiir_mr_plan *p = tr_spiir_mr_plan_create(b, &err);
    const size_t n = 40000, k0 = 30000; /* > 10 time constants of every filter */
    /* Tones at 12 pole frequencies (both signs for real input: cos). */
    tone tn[24];
    int ntones = 0;
    for (int k = 0; k < 12; k++) {
        const tr_spiir_filter *f = &b->filters[tu_range(&r, 0, (long)b->total - 1)];
        const double w = atan2(f->a1_im, f->a1_re) * 0.0 +
                         2.0 * PI * fband * (2.0 * tu_uniform(&r) - 1.0);
        const double ph = 2.0 * PI * tu_uniform(&r);
        /* the tone sits on the pole of a random filter most of the time */
        const double wp = tu_uniform(&r) < 0.7 ? atan2(f->a1_im, f->a1_re) : w;
        if (cplx) {
            tn[ntones++] = (tone){wp, cos(ph), sin(ph)};
        } else {
            tn[ntones++] = (tone){wp, 0.5 * cos(ph), 0.5 * sin(ph)};
            tn[ntones++] = (tone){-wp, 0.5 * cos(ph), -0.5 * sin(ph)};
        }
    }
    const size_t w = cplx ? 2 : 1, vals = n * nt * 2;
    float *x = malloc(n * w * sizeof *x);
    for (size_t k = 0; k < n; k++) {
        double xr = 0.0, xi = 0.0;
        for (int j = 0; j < ntones; j++) {
            xr += tn[j].re * cos(tn[j].w * k) - tn[j].im * sin(tn[j].w * k);
            xi += tn[j].re * sin(tn[j].w * k) + tn[j].im * cos(tn[j].w * k);
        }
        if (cplx) {
            x[2 * k] = (float)xr;
            x[2 * k + 1] = (float)xi;
        } else {
            x[k] = (float)xr;
        }
    }
    float *sr = malloc(vals * sizeof *sr), *mr = malloc(vals * sizeof *mr);
    float *ideal = malloc(vals * sizeof *ideal), *ss = malloc(vals * sizeof *ss);
    int64_t lat = -1;
    CHECK(run(b, &REF, 0, cplx, x, n, sr, 0, 0, &r, NULL, NULL) == 0, "single rate");
    CHECK(run(b, v, 1, cplx, x, n, mr, 0, 0, &r, &lat, NULL) == 0, "multirate %s",
          v->name);
    CHECK(lat == p->latency && lat > 0, "latency %lld (plan %lld)", (long long)lat,
          (long long)p->latency);
    fill_steady(b, p, 1, tn, ntones, 0, n, ideal);
    fill_steady(b, p, 0, tn, ntones, lat, n, ss);
    /* The analytic model is right: the single-rate output matches it. */
    const double e_model = rel_rms_rows(sr, ss, nt, k0, n - (size_t)lat, -lat);
    const double A = rel_rms_rows(ideal, ss, nt, k0, n, 0);
    const double R = lmax * (g_dec_pass + g_int_pass + g_int_stop);
    const double e_ideal = rel_rms_rows(mr, ideal, nt, k0, n, 0);
    const double e_single = rel_rms_rows(mr, sr, nt, k0, n, lat);
    const double e_early = rel_rms_rows(mr, sr, nt, k0, n, lat - 1);
    const double e_late = rel_rms_rows(mr, sr, nt, k0, n, lat + 1);
    printf("%s %s%s: latency %lld, model %.1e, aliasing A %.2e, bound R %.2e; "
           "|mr - ideal| %.2e, |mr - single| %.2e (bound %.2e), lag -1/+1: %.1e/%.1e\n",
           v->name, cplx ? "complex" : "real", sparse ? " sparse" : "", (long long)lat,
           e_model, A, R, e_ideal, e_single, A + R * (1 + A) + 1e-5, e_early, e_late);
    CHECK(e_model < 1e-4, "single rate vs the analytic steady state: %.2e", e_model);
    CHECK(A < 0.02, "the bank respects its levels' bands: aliasing %.2e", A);
    CHECK(e_ideal <= R + 1e-5, "multirate vs ideal multirate %.2e > bound %.2e", e_ideal,
          R + 1e-5);
    CHECK(e_single <= A + R * (1 + A) + 1e-5, "multirate vs single rate %.2e > %.2e",
          e_single, A + R * (1 + A) + 1e-5);
    CHECK(e_early > 4 * e_single && e_late > 4 * e_single,
          "aligned at the latency: %.2e vs %.2e / %.2e", e_single, e_early, e_late);
    free(x);
    free(sr);
    free(mr);
    free(ideal);
    free(ss);
    tr_spiir_mr_plan_destroy(p);
    tr_spiir_bank_destroy(b);
}

/* ---- all level 0: multirate is the single-rate bank ------------------------ */

static void test_level0(void)
{
    tu_rng r = {77};
    tr_spiir_bank *b = level_bank(&r, 7, 0, 9, -1, 1e-3, 0.1, 200, 0);
    const size_t n = 3000, vals = n * 7 * 2;
    float *x = malloc(n * sizeof *x), *a = malloc(vals * 4), *c = malloc(vals * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)tu_gauss(&r);
    const variant_t *vs[2] = {&REF, &FAST};
    for (int i = 0; i < 2; i++) {
        int64_t lat = -1;
        run(b, vs[i], 0, 0, x, n, a, 0, 0, &r, NULL, NULL);
        run(b, vs[i], 1, 0, x, n, c, 0, 0, &r, &lat, NULL);
        CHECK(lat == 0 && same_bits(a, c, vals), "%s: level-0 bank, multirate = single",
              vs[i]->name);
    }
    free(x);
    free(a);
    free(c);
    tr_spiir_bank_destroy(b);
}

/* ---- variants and chunking ------------------------------------------------- */

/* Random bank over levels 0..5 (each level's filters in its own band), white
 * noise input: variant against the reference, and chunking bit for bit. */
static void test_variant(const variant_t *v, int cplx, int sparse)
{
    tu_rng r = {0xabc + (uint64_t)cplx + 16 * (uint64_t)sparse};
    const uint32_t nt = 6;
    tr_spiir_bank *b = level_bank(&r, nt, 5, 4, -1, 1e-3, 0.05, 2500, sparse);
    const size_t n = 9000, w = cplx ? 2 : 1, vals = n * nt * 2;
    float *x = malloc(n * w * sizeof *x);
    for (size_t i = 0; i < n * w; i++)
        x[i] = (float)(tu_gauss(&r) + 0.3 * sin(1e-5 * (double)i * (double)i));
    float *ref = malloc(vals * 4), *one = malloc(vals * 4), *chunked = malloc(vals * 4);
    CHECK(run(b, &REF, 1, cplx, x, n, ref, 0, 0, &r, NULL, NULL) == 0, "reference");
    CHECK(run(b, v, 1, cplx, x, n, one, 0, 0, &r, NULL, NULL) == 0, "%s", v->name);
    const double e = rel_rms(one, ref, vals);
    printf("%s %s%s vs reference: rel rms %.2e\n", v->name, cplx ? "complex" : "real",
           sparse ? " sparse" : "", e);
    CHECK(e < (v->variant == TR_VARIANT_REFERENCE ? 0.0 : 1e-4) || (e == 0.0),
          "%s vs reference %.2e", v->name, e);
    /* Random chunks and device batches; then chunk size 1 on a prefix. */
    for (int rep = 0; rep < 3; rep++) {
        const size_t cmax = rep == 0 ? 7 : (rep == 1 ? 300 : 5000);
        const size_t batch =
            v->backend == TR_BACKEND_CUDA ? (size_t)tu_range(&r, 1, 3000) : 0;
        const float *base = one; /* one call, default batch */
        CHECK(run(b, v, 1, cplx, x, n, chunked, cmax, batch, &r, NULL, NULL) == 0,
              "chunked run");
        const int same = same_bits(chunked, base, vals);
        CHECK(v->variant == TR_VARIANT_PAPER || same,
              "%s: chunks up to %zu, batch %zu: not bit-identical (rel %.2e)", v->name,
              cmax, batch, rel_rms(chunked, base, vals));
    }
    const size_t n1 = 700;
    CHECK(run(b, v, 1, cplx, x, n1, chunked, 1, v->backend == TR_BACKEND_CUDA ? 1 : 0, &r,
              NULL, NULL) == 0,
          "chunk size 1");
    CHECK(v->variant == TR_VARIANT_PAPER || same_bits(chunked, one, n1 * nt * 2),
          "%s: chunk size 1 not bit-identical", v->name);
    free(x);
    free(ref);
    free(one);
    free(chunked);
    tr_spiir_bank_destroy(b);
}

/* ---- non-finite input and invalid configurations --------------------------- */

static void test_nonfinite(const variant_t *v)
{
    tu_rng r = {99};
    tr_spiir_bank *b = level_bank(&r, 3, 3, 2, -1, 1e-3, 0.05, 100, 0);
    const size_t n = 2000, vals = n * 3 * 2;
    float *x = malloc(n * sizeof *x), *y = malloc(vals * 4), *z = malloc(vals * 4);
    for (size_t i = 0; i < n; i++)
        x[i] = (float)tu_gauss(&r);
    x[10] = NAN;
    x[500] = INFINITY;
    x[501] = -INFINITY;
    uint64_t bad = 0;
    CHECK(run(b, v, 1, 0, x, n, y, 0, 0, &r, NULL, &bad) == 0, "run");
    CHECK(bad == 3, "%s: %llu non-finite counted", v->name, (unsigned long long)bad);
    int fin = 1;
    for (size_t i = 0; i < vals; i++)
        fin &= isfinite(y[i]) != 0;
    CHECK(fin, "%s: output finite", v->name);
    x[10] = x[500] = x[501] = 0.0f;
    run(b, v, 1, 0, x, n, z, 0, 0, &r, NULL, NULL);
    CHECK(same_bits(y, z, vals), "%s: non-finite samples read as zero", v->name);
    free(x);
    free(y);
    free(z);
    tr_spiir_bank_destroy(b);
}

static void test_invalid(void)
{
    tr_spiir_filter f[2] = {{0.5, 0.1, 1.0, 0.0, TR_SPIIR_MAX_DELAY, 0},
                            {0.2, 0.1, 1.0, 0.0, 0, 16}};
    uint32_t cnt = 2;
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(f, &cnt, 1, DT, &err);
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.multirate = 2;
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    CHECK(!q && err.code == TR_ERR_INVALID && strstr(err.message, "multirate"),
          "multirate = 2 rejected: %s", err.message);
    cfg.multirate = 1;
    q = tr_spiir_create(&cfg, b, &err);
    CHECK(!q && err.code == TR_ERR_INVALID && strstr(err.message, "latency"),
          "delay plus latency too long rejected: %s", err.message);
    tr_spiir_bank_destroy(b);
}

/* ---- main ------------------------------------------------------------------ */

static int gpu_usable(void)
{
    tr_spiir_filter f = {0.5, 0.0, 1.0, 0.0, 0, 1};
    uint32_t one = 1;
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(&f, &one, 1, DT, &err);
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CUDA;
    cfg.multirate = 1;
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    const int ok = q != NULL;
    if (!q) fprintf(stderr, "no usable GPU: %s\n", err.message);
    tr_spiir_destroy(q);
    tr_spiir_bank_destroy(b);
    return ok;
}

int main(int argc, char **argv)
{
    const int gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    test_taps();
    if (gpu) {
        if (!gpu_usable()) return SKIP;
        for (int cplx = 0; cplx < 2; cplx++) {
            test_accuracy(cplx, &CUDA_FAST, 0);
            test_accuracy(cplx, &CUDA_FAST, 1);
            for (int sp = 0; sp < 2; sp++) {
                test_variant(&CUDA_FAST, cplx, sp);
                test_variant(&CUDA_PAPER, cplx, sp);
            }
        }
        test_nonfinite(&CUDA_FAST);
        return tu_finish("test_spiir_multirate --gpu");
    }
    test_latency_formula();
    test_level0();
    for (int cplx = 0; cplx < 2; cplx++) {
        for (int sp = 0; sp < 2; sp++) {
            test_accuracy(cplx, &REF, sp);
            test_accuracy(cplx, &FAST, sp);
            test_variant(&REF, cplx, sp);
            test_variant(&FAST, cplx, sp);
        }
    }
    test_nonfinite(&REF);
    test_nonfinite(&FAST);
    test_invalid();
    return tu_finish("test_spiir_multirate");
}
