/*
 * Sensitivity predictor against brute force: the paper's correctness test of
 * section 4.1. A noise-free rectangular pulse of amplitude C / sqrt(S)
 * (mu = 0, sigma = 1) is slid over every relevant start offset; every boxcar
 * of the plan that overlaps it is evaluated directly in double; the best S/N
 * per offset must lie between the predicted RSNR_min (eq. 31) and RSNR_max
 * (eq. 24), the best over offsets must equal RSNR_max, and the extremes must
 * equal tr_boxcar_predict_exact. Done for BD-32, BD-16, BD-8, AstroAccelerate's
 * list, IG(1), IG(2), IG(3), ideal, and random configurations; then through
 * the search object's CPU variants (reference and optimized,
 * tr_boxcar_process with random chunks).
 *
 * Usage: test_boxcar_predict                 the tests
 *        test_boxcar_predict --dump FILE [LEND]
 *            writes a CSV of predicted and measured (noise-free model) RSNR,
 *            losses, cumulative mean losses, width and time errors for the
 *            paper's six configurations, S = 1..LEND (default 4096), for
 *            docs/plots/plot_boxcar_loss.py.
 */
#include <transient/boxcar.h>
#include <transient/boxcar_predict.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "boxcar/boxcar_plan.h"
#include "common/test_util.h"

#define C_SNR 16.0 /* the paper's normalisation constant */

typedef struct {
    double max, min;     /* best S/N over offsets, worst over offsets (/ C) */
    uint32_t wmax, wmin; /* width of the detection at those offsets */
    double tmax, tmin;   /* signed time error (boxcar centre - pulse centre) / S */
} measure_t;

static tr_boxcar_plan *make_plan(tr_boxcar_algorithm alg, uint32_t maxw,
                                 const uint32_t *list, uint32_t nlist, uint32_t depth,
                                 uint32_t layers)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = alg;
    c.max_width = maxw;
    for (uint32_t i = 0; i < nlist; i++)
        c.widths[i] = list[i];
    if (nlist) c.nwidths = nlist;
    c.depth = depth;
    c.layers = layers;
    tr_error err;
    tr_boxcar_plan *p = tr_boxcar_plan_create(&c, &err);
    CHECK(p != NULL, "plan: %s", err.message);
    return p;
}

static uint32_t max_stride(const tr_boxcar_plan *p)
{
    uint32_t s = 1;
    for (uint32_t i = 0; i < tr_boxcar_plan_stages(p); i++)
        if (tr_boxcar_plan_stage(p, i)->stride > s)
            s = tr_boxcar_plan_stage(p, i)->stride;
    return s;
}

/*
 * Brute force: pulse of width S at absolute start base + t for t in
 * [0, period); the data array holds the pulse (amplitude C/sqrt(S)) and
 * zeros; every boxcar (p, L) of the plan that overlaps the pulse is summed
 * from the array in double (difference of double prefix sums of the data)
 * and divided by sqrt(L). The detection is
 * the highest S/N (first in evaluation order on ties, then earliest start).
 */
static measure_t brute(const tr_boxcar_plan *p, uint32_t S, double *x, double *P,
                       size_t nx)
{
    const uint32_t period = max_stride(p), lend = tr_boxcar_plan_lend(p);
    const int64_t base = ((int64_t)lend / period + 2) * period;
    measure_t m = {0.0, INFINITY, 0, 0, 0.0, 0.0};
    const double A = C_SNR / sqrt((double)S);
    for (uint32_t t = 0; t < period; t++) {
        const int64_t t0 = base + t;
        if ((size_t)(t0 + S + lend) > nx) return m;
        for (int64_t i = t0; i < t0 + S; i++)
            x[i] = A;
        /* prefix sums of the data in double around the pulse: P[j - lo] =
         * sum of x[lo .. j-1] */
        const int64_t lo = t0 - lend, hi = t0 + S + lend;
        P[0] = 0.0;
        for (int64_t j = lo; j < hi; j++)
            P[j - lo + 1] = P[j - lo] + x[j];
        double best = -1.0, tbest = 0.0;
        uint32_t wbest = 0;
        for (uint32_t i = 0; i < tr_boxcar_plan_stages(p); i++) {
            const tr_boxcar_stage *s = tr_boxcar_plan_stage(p, i);
            for (uint32_t k = 0; k < s->nwidths; k++) {
                const int64_t L = s->width_first + (int64_t)k * s->width_step;
                int64_t p0 = t0 - L + 1;
                p0 = ((p0 + s->stride - 1) / s->stride) * s->stride; /* p0 > 0 */
                for (int64_t q = p0; q < t0 + S; q += s->stride) {
                    const double sum = P[q + L - lo] - P[q - lo];
                    const double snr = sum / sqrt((double)L);
                    /* values within 1e-13 count as equal (the double sums
                     * of A are not exact): the first one stays */
                    if (snr > best * (1.0 + 1e-13)) {
                        best = snr;
                        wbest = (uint32_t)L;
                        tbest = ((double)q + 0.5 * L - (double)t0 - 0.5 * S) / S;
                    }
                }
            }
        }
        for (int64_t i = t0; i < t0 + S; i++)
            x[i] = 0.0;
        best /= C_SNR;
        /* the first offset with the extreme value (within 1e-13) is reported */
        if (best > m.max * (1.0 + 1e-13)) m.max = best, m.wmax = wbest, m.tmax = tbest;
        if (best < m.min * (1.0 - 1e-13)) m.min = best, m.wmin = wbest, m.tmin = tbest;
    }
    return m;
}

/* The same detections from the analytic coverage of the lattice points next
 * to the pulse (fast; used by --dump, checked against brute force). */
static measure_t model(const uint32_t *w, const uint32_t *sep, uint32_t nb, uint32_t S)
{
    uint32_t period = 1, maxw = 1;
    for (uint32_t k = 0; k < nb; k++) {
        if (sep[k] > period) period = sep[k];
        if (w[k] > maxw) maxw = w[k];
    }
    const int64_t base = ((int64_t)maxw / period + 2) * period;
    /* widths whose best case (eq. 23) is below eq. 31 never win */
    double bound = 0.0;
    for (uint32_t k = 0; k < nb; k++) {
        const double b = tr_boxcar_rsnr_min_single(S, w[k], sep[k]);
        if (b > bound) bound = b;
    }
    measure_t m = {0.0, INFINITY, 0, 0, 0.0, 0.0};
    for (uint32_t t = 0; t < period; t++) {
        const int64_t t0 = base + t;
        double best = -1.0, tbest = 0.0;
        uint32_t wbest = 0;
        for (uint32_t k = 0; k < nb; k++) {
            if (tr_boxcar_rsnr_max_single(S, w[k]) < bound * (1.0 - 1e-9)) continue;
            const int64_t L = w[k], s = sep[k];
            /* coverage is a trapezoid in q: check the lattice points around
             * both ends of its plateau, earliest first */
            int64_t cands[4];
            const int64_t a = t0 < t0 + S - L ? t0 : t0 + S - L;
            const int64_t b = t0 < t0 + S - L ? t0 + S - L : t0;
            cands[0] = (a / s) * s;
            cands[1] = cands[0] + s;
            cands[2] = (b / s) * s;
            cands[3] = cands[2] + s;
            for (int c = 0; c < 4; c++) {
                const int64_t q = cands[c];
                const int64_t lo = q > t0 ? q : t0, hi = q + L < t0 + S ? q + L : t0 + S;
                const double snr =
                    (hi > lo ? (double)(hi - lo) : 0.0) / sqrt((double)L * S);
                const double tq = ((double)q + 0.5 * L - (double)t0 - 0.5 * S) / S;
                if (snr > best * (1.0 + 1e-13) || (fabs(snr - best) <= 1e-13 * best &&
                                                   (uint32_t)L == wbest && tq < tbest)) {
                    best = snr;
                    wbest = (uint32_t)L;
                    tbest = tq;
                }
            }
        }
        /* the first offset with the extreme value (within 1e-13) is reported */
        if (best > m.max * (1.0 + 1e-13)) m.max = best, m.wmax = wbest, m.tmax = tbest;
        if (best < m.min * (1.0 - 1e-13)) m.min = best, m.wmin = wbest, m.tmin = tbest;
    }
    return m;
}

typedef struct {
    const char *name;
    tr_boxcar_algorithm alg;
    uint32_t list[8], nlist, depth, layers;
} config_t;

static const config_t PAPER[] = {
    {"BD-32", TR_BOXCAR_BOXDIT, {32}, 1, 0, 0},
    {"BD-16", TR_BOXCAR_BOXDIT, {16}, 1, 0, 0},
    {"BD-8", TR_BOXCAR_BOXDIT, {8}, 1, 0, 0},
    {"IG(3)", TR_BOXCAR_IGRID, {0}, 0, 3, 0},
    {"IG(2)", TR_BOXCAR_IGRID, {0}, 0, 2, 0},
    {"IG(1)", TR_BOXCAR_IGRID, {0}, 0, 1, 0},
};

/* Every S in 1..smax (step 1) or a dense sample. */
static void check_plan(const char *name, const tr_boxcar_plan *p, uint32_t smax,
                       uint32_t step, int *n_better)
{
    const uint32_t lend = tr_boxcar_plan_lend(p);
    const uint32_t nb = tr_boxcar_plan_list(p, NULL, NULL, 0);
    uint32_t *w = malloc(nb * sizeof *w), *sep = malloc(nb * sizeof *sep);
    tr_boxcar_plan_list(p, w, sep, nb);
    double *pmax = malloc(smax * sizeof(double)), *pmin = malloc(smax * sizeof(double));
    double *emax = malloc(smax * sizeof(double)), *emin = malloc(smax * sizeof(double));
    CHECK(tr_boxcar_predict_plan(p, smax, pmax, pmin, NULL, NULL, NULL, NULL) == TR_OK,
          "predict");
    CHECK(tr_boxcar_predict_exact(w, sep, nb, smax, emax, emin, NULL) == TR_OK, "exact");
    const size_t nx = 8 * (size_t)lend + 8 * (size_t)smax + 4096;
    double *x = calloc(nx, sizeof *x), *P = malloc((nx + 1) * sizeof *P);
    int bad_hi = 0, bad_lo = 0, bad_ex = 0, bad_model = 0;
    for (uint32_t S = 1; S <= smax; S += (S < 64 ? 1 : step)) {
        const measure_t b = brute(p, S, x, P, nx);
        const measure_t md = model(w, sep, nb, S);
        if (fabs(b.max - pmax[S - 1]) > 1e-12) {
            if (bad_hi++ < 3)
                fprintf(stderr, "%s S %u: measured max %.15f predicted %.15f\n", name, S,
                        b.max, pmax[S - 1]);
        }
        if (b.min < pmin[S - 1] - 1e-12 || b.min > b.max) {
            if (bad_lo++ < 3)
                fprintf(stderr, "%s S %u: measured min %.15f below predicted %.15f\n",
                        name, S, b.min, pmin[S - 1]);
        }
        if (fabs(b.min - emin[S - 1]) > 1e-12 || fabs(b.max - emax[S - 1]) > 1e-12) {
            if (bad_ex++ < 3)
                fprintf(stderr, "%s S %u: brute %.15f %.15f exact %.15f %.15f\n", name, S,
                        b.min, b.max, emin[S - 1], emax[S - 1]);
        }
        if (fabs(b.min - md.min) > 1e-12 || fabs(b.max - md.max) > 1e-12 ||
            b.wmax != md.wmax || b.wmin != md.wmin || fabs(b.tmin - md.tmin) > 1e-12 ||
            fabs(b.tmax - md.tmax) > 1e-12) {
            if (bad_model++ < 3)
                fprintf(
                    stderr,
                    "%s S %u: brute (%g %u %g | %g %u %g) model (%g %u %g | %g %u %g)\n",
                    name, S, b.max, b.wmax, b.tmax, b.min, b.wmin, b.tmin, md.max,
                    md.wmax, md.tmax, md.min, md.wmin, md.tmin);
        }
        if (b.min > pmin[S - 1] + 1e-12) (*n_better)++;
    }
    CHECK(bad_hi == 0, "%s: measured RSNR_max differs from eq. 24 at %d widths", name,
          bad_hi);
    CHECK(bad_lo == 0, "%s: measured RSNR_min below eq. 31 at %d widths", name, bad_lo);
    CHECK(bad_ex == 0, "%s: brute force differs from predict_exact at %d widths", name,
          bad_ex);
    CHECK(bad_model == 0, "%s: brute force differs from the lattice model at %d widths",
          name, bad_model);
    free(x);
    free(P);
    free(w);
    free(sep);
    free(pmax);
    free(pmin);
    free(emax);
    free(emin);
}

static void test_paper_configs(void)
{
    int better = 0;
    for (size_t i = 0; i < sizeof PAPER / sizeof PAPER[0]; i++) {
        const config_t *c = &PAPER[i];
        tr_boxcar_plan *p =
            make_plan(c->alg, 256, c->list, c->nlist, c->depth, c->layers);
        if (!p) continue;
        check_plan(c->name, p, tr_boxcar_plan_lend(p), 1, &better);
        tr_boxcar_plan_destroy(p);
        /* larger L_end: a dense sample of widths */
        p = make_plan(c->alg, 2048, c->list, c->nlist, c->depth, c->layers);
        if (!p) continue;
        check_plan(c->name, p, tr_boxcar_plan_lend(p), 211, &better);
        tr_boxcar_plan_destroy(p);
    }
    /* section 4.2.1: the true worst case is often better than eq. 31 */
    CHECK(better > 100, "measured worst case better than eq. 31 at only %d widths",
          better);
    printf("measured worst case better than eq. 31 at %d of the tested widths\n", better);
    /* AstroAccelerate's list, ideal */
    const uint32_t aa[5] = {32, 16, 16, 16, 8};
    tr_boxcar_plan *p = make_plan(TR_BOXCAR_BOXDIT, 1000, aa, 5, 0, 0);
    check_plan("BD-AA", p, tr_boxcar_plan_lend(p), 7, &better);
    tr_boxcar_plan_destroy(p);
    p = make_plan(TR_BOXCAR_IDEAL, 96, NULL, 0, 0, 0);
    check_plan("ideal", p, 200, 1, &better);
    /* ideal: no loss up to L_max */
    double r[200];
    tr_boxcar_predict_plan(p, 200, NULL, r, NULL, NULL, NULL, NULL);
    CHECK(fabs(r[0] - 1) < 1e-15 && fabs(r[95] - 1) < 1e-15 &&
              fabs(r[191] - sqrt(0.5)) < 1e-15,
          "ideal: %g %g %g", r[0], r[95], r[191]);
    tr_boxcar_plan_destroy(p);
}

static void test_random_configs(void)
{
    tu_rng r = {71};
    int better = 0;
    for (int it = 0; it < 12; it++) {
        uint32_t list[8], n = (uint32_t)tu_range(&r, 1, 4);
        for (uint32_t i = 0; i < n; i++)
            list[i] = 2 * (uint32_t)tu_range(&r, 1, 12);
        const uint32_t maxw = (uint32_t)tu_range(&r, 1, 400);
        tr_boxcar_plan *p;
        char name[64];
        if (it % 2) {
            const uint32_t d = (uint32_t)tu_range(&r, 1, 3);
            const uint32_t layers = 1u << tu_range(&r, 0, 5);
            p = make_plan(TR_BOXCAR_IGRID, maxw, NULL, 0, d, layers);
            snprintf(name, sizeof name, "IG(%u) P %u max %u", d, layers, maxw);
        } else {
            p = make_plan(TR_BOXCAR_BOXDIT, maxw, list, n, 0, 0);
            snprintf(name, sizeof name, "BD list[0] %u n %u max %u", list[0], n, maxw);
        }
        if (!p) continue;
        check_plan(name, p, tr_boxcar_plan_lend(p) + 20, 3, &better);
        tr_boxcar_plan_destroy(p);
    }
}

/* The formulas on small hand-checked cases. */
static void test_formulas(void)
{
    /* paper Figure 33: L = 5, Ls = 3, S = 4: worst coverage 3 */
    CHECK(fabs(tr_boxcar_rsnr_min_single(4, 5, 3) - 3.0 / sqrt(20.0)) < 1e-15, "fig. 33");
    CHECK(fabs(tr_boxcar_rsnr_max_single(4, 5) - sqrt(0.8)) < 1e-15, "eq. 23 S < L");
    CHECK(fabs(tr_boxcar_rsnr_max_single(8, 2) - 0.5) < 1e-15, "eq. 23 S > L");
    CHECK(tr_boxcar_rsnr_max_single(7, 7) == 1.0, "eq. 23 S = L");
    CHECK(fabs(tr_boxcar_rsnr_min_single(2, 5, 3) - sqrt(0.4)) < 1e-15, "S <= L - Ls");
    CHECK(fabs(tr_boxcar_rsnr_min_single(8, 5, 3) - sqrt(5.0 / 8)) < 1e-15,
          "S >= L + Ls");
    /* stride 1: no loss from position */
    for (uint32_t S = 1; S < 40; S++)
        CHECK(fabs(tr_boxcar_rsnr_min_single(S, 9, 1) - tr_boxcar_rsnr_max_single(S, 9)) <
                  1e-15,
              "Ls = 1, S %u", S);
    /* eq. 30 is the exact worst case of a single width: the true minimum
     * over positions of one width's lattice, for every separation (with the
     * coverage clamped at 0 where Ls > L leaves gaps; there the paper's
     * formula, which assumes full coverage, goes negative) */
    int bad30 = 0, gaps = 0;
    for (uint32_t L = 1; L <= 40; L++)
        for (uint32_t Ls = 1; Ls <= 32; Ls *= 2) {
            uint32_t w1[1] = {L}, s1[1] = {Ls};
            double mx[100], mn[100];
            tr_boxcar_predict_exact(w1, s1, 1, 100, mx, mn, NULL);
            for (uint32_t S = 1; S <= 100; S++) {
                const double e = tr_boxcar_rsnr_min_single(S, L, Ls);
                bad30 += fabs(e - mn[S - 1]) > 1e-12 ||
                         fabs(tr_boxcar_rsnr_max_single(S, L) - mx[S - 1]) > 1e-12;
                gaps += mn[S - 1] == 0.0;
            }
        }
    CHECK(bad30 == 0 && gaps > 0,
          "eq. 30 differs from the exact single-width worst case "
          "at %d cases (%d gap cases)",
          bad30, gaps);
    double psi[4] = {0.0, 0.1, 0.2, 0.3}, mean[4];
    tr_boxcar_cumulative_mean(psi, 4, mean);
    CHECK(fabs(mean[3] - 0.15) < 1e-15 && mean[0] == 0.0, "eq. 19 mean");
    uint32_t w[2] = {1, 2}, s[2] = {1, 0};
    double out[3];
    CHECK(tr_boxcar_predict(w, s, 2, 3, out, NULL, NULL, NULL, NULL, NULL) ==
              TR_ERR_INVALID,
          "separation 0");
    CHECK(tr_boxcar_predict(w, s, 0, 3, out, NULL, NULL, NULL, NULL, NULL) ==
              TR_ERR_INVALID,
          "nb 0");
    s[1] = 3;
    CHECK(tr_boxcar_predict_exact(w, s, 2, 3, out, NULL, NULL) == TR_ERR_INVALID,
          "exact needs powers of two");
    CHECK(tr_boxcar_predict_plan(NULL, 3, out, NULL, NULL, NULL, NULL, NULL) ==
              TR_ERR_INVALID,
          "NULL plan");
    /* losses and the mean agree with the bounds */
    s[1] = 2;
    double mx[3], mn[3], p1[3], pw[3], m1[3], mw[3];
    tr_boxcar_predict(w, s, 2, 3, mx, mn, p1, pw, m1, mw);
    CHECK(p1[2] == 1.0 - mx[2] && pw[2] == 1.0 - mn[2] &&
              fabs(m1[2] - (p1[0] + p1[1] + p1[2]) / 3) < 1e-15,
          "losses");
}

/*
 * Through the search object: the pulses of one width in separate segments
 * of one stream (segments 2 L_end + period apart, so no boxcar sees two),
 * FIXED normalisation mu = 0, sigma = 1, random chunks; the best S/N of each
 * segment must lie within [eq. 31, eq. 24] and the extremes over offsets
 * must equal the exact noise-free ones (within float32 rounding and the
 * optimized variant's documented tolerance).
 */
static void object_check(const char *name, tr_boxcar_config cfg, tr_variant variant,
                         uint32_t smax, uint32_t step)
{
    tu_rng r = {91};
    cfg.backend = TR_BACKEND_CPU;
    cfg.variant = variant;
    cfg.nchan = 1;
    cfg.norm = tr_boxcar_norm_config_default();
    cfg.norm.mode = TR_BOXCAR_NORM_FIXED;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&cfg, &err);
    CHECK(q != NULL, "%s: create: %s", name, err.message);
    if (!q) return;
    const tr_boxcar_plan *p = tr_boxcar_get_plan(q);
    const uint32_t period = max_stride(p), lend = tr_boxcar_plan_lend(p);
    const uint32_t lat = tr_boxcar_latency(q);
    double *pmax = malloc(smax * sizeof(double)), *pmin = malloc(smax * sizeof(double));
    tr_boxcar_predict_plan(p, smax, pmax, pmin, NULL, NULL, NULL, NULL);
    double *emax = malloc(smax * sizeof(double)), *emin = malloc(smax * sizeof(double));
    {
        const uint32_t nb = tr_boxcar_plan_list(p, NULL, NULL, 0);
        uint32_t *w = malloc(nb * sizeof *w), *sep = malloc(nb * sizeof *sep);
        tr_boxcar_plan_list(p, w, sep, nb);
        tr_boxcar_predict_exact(w, sep, nb, smax, emax, emin, NULL);
        free(w);
        free(sep);
    }
    /* float32 input (the amplitude rounded) and float32 output: ~1e-7
     * relative even for the double-accumulating reference */
    const double tol =
        variant == TR_VARIANT_REFERENCE ? 1e-6 : 1e-6 + 4.0 * TR_BOXCAR_FAST_TOL(lend);
    int bad = 0;
    for (uint32_t S = 1; S <= smax; S += (S < 32 ? 1 : step)) {
        /* segment length: multiple of period, > 2 lend + S */
        const size_t seg = ((2 * (size_t)lend + S + period) / period + 1) * period;
        const size_t n = seg * period + lat;
        float *x = calloc(n, sizeof *x), *y = malloc(n * sizeof *y);
        int32_t *wd = malloc(n * sizeof *wd);
        for (uint32_t t = 0; t < period; t++)
            for (uint32_t i = 0; i < S; i++)
                x[t * seg + lend + t + i] = (float)(C_SNR / sqrt((double)S));
        tr_boxcar_reset(q);
        size_t k = 0;
        while (k < n) {
            size_t m = (size_t)tu_range(&r, 1, 3000);
            if (m > n - k) m = n - k;
            CHECK(tr_boxcar_process(q, x + k, m, y + k, wd + k) == TR_OK, "process: %s",
                  tr_boxcar_last_error(q));
            k += m;
        }
        /* y[k] is position k - lat */
        double lo = INFINITY, hi = 0.0;
        for (uint32_t t = 0; t < period; t++) {
            double best = -INFINITY;
            for (size_t pos = t * seg; pos < (t + 1) * seg; pos++)
                if (y[pos + lat] > best) best = y[pos + lat];
            best /= C_SNR;
            if (best < lo) lo = best;
            if (best > hi) hi = best;
        }
        /* within the bounds, and equal to the exact noise-free extremes */
        if (fabs(hi - pmax[S - 1]) > tol || lo < pmin[S - 1] - tol ||
            fabs(hi - emax[S - 1]) > tol || fabs(lo - emin[S - 1]) > tol) {
            if (bad++ < 3)
                fprintf(
                    stderr, "%s %s S %u: measured [%.9f, %.9f] predicted [%.9f, %.9f]\n",
                    name, tr_variant_name(variant), S, lo, hi, pmin[S - 1], pmax[S - 1]);
        }
        free(x);
        free(y);
        free(wd);
    }
    CHECK(bad == 0, "%s %s: outside the predicted bounds at %d widths", name,
          tr_variant_name(variant), bad);
    free(pmax);
    free(pmin);
    free(emax);
    free(emin);
    tr_boxcar_destroy(q);
}

static void test_object(void)
{
    for (size_t i = 0; i < sizeof PAPER / sizeof PAPER[0]; i++) {
        const config_t *c = &PAPER[i];
        tr_boxcar_config cfg = tr_boxcar_config_default();
        cfg.algorithm = c->alg;
        cfg.max_width = 300;
        for (uint32_t k = 0; k < c->nlist; k++)
            cfg.widths[k] = c->list[k];
        if (c->nlist) cfg.nwidths = c->nlist;
        cfg.depth = c->depth ? c->depth : 1;
        cfg.layers = c->layers;
        object_check(c->name, cfg, TR_VARIANT_REFERENCE, 300, 13);
        object_check(c->name, cfg, TR_VARIANT_FAST, 300, 13);
    }
}

/* ---- --dump: the data of the loss figures ---- */
static int dump(const char *path, uint32_t lend_req)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    fprintf(f, "config,S,lend,pred_rsnr_max,pred_rsnr_min,psi_1,psi_w,mean_psi_1,"
               "mean_psi_w,meas_rsnr_max,meas_rsnr_min,meas_psi_1,meas_psi_w,"
               "mean_meas_psi_1,mean_meas_psi_w,width_err_best,time_err_best,"
               "width_err_worst,time_err_worst\n");
    for (size_t i = 0; i < sizeof PAPER / sizeof PAPER[0]; i++) {
        const config_t *c = &PAPER[i];
        tr_boxcar_plan *p =
            make_plan(c->alg, lend_req, c->list, c->nlist, c->depth, c->layers);
        if (!p) return 1;
        const uint32_t lend = tr_boxcar_plan_lend(p), n = lend;
        const uint32_t nb = tr_boxcar_plan_list(p, NULL, NULL, 0);
        uint32_t *w = malloc(nb * sizeof *w), *sep = malloc(nb * sizeof *sep);
        tr_boxcar_plan_list(p, w, sep, nb);
        double *a[6];
        for (int k = 0; k < 6; k++)
            a[k] = malloc(n * sizeof(double));
        tr_boxcar_predict_plan(p, n, a[0], a[1], a[2], a[3], a[4], a[5]);
        double m1 = 0.0, mw = 0.0;
        for (uint32_t S = 1; S <= n; S++) {
            const measure_t m = model(w, sep, nb, S);
            m1 += 1.0 - m.max;
            mw += 1.0 - m.min;
            fprintf(f,
                    "%s,%u,%u,%.10f,%.10f,%.10f,%.10f,%.10f,%.10f,%.10f,%.10f,%.10f,"
                    "%.10f,%.10f,%.10f,%.6f,%.6f,%.6f,%.6f\n",
                    c->name, S, lend, a[0][S - 1], a[1][S - 1], a[2][S - 1], a[3][S - 1],
                    a[4][S - 1], a[5][S - 1], m.max, m.min, 1.0 - m.max, 1.0 - m.min,
                    m1 / S, mw / S, ((double)m.wmax - S) / S, m.tmax,
                    ((double)m.wmin - S) / S, m.tmin);
        }
        for (int k = 0; k < 6; k++)
            free(a[k]);
        free(w);
        free(sep);
        tr_boxcar_plan_destroy(p);
    }
    fclose(f);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "--dump") == 0)
        return dump(argv[2], argc >= 4 ? (uint32_t)atoi(argv[3]) : 4096);
    test_formulas();
    test_paper_configs();
    test_random_configs();
    test_object();
    return tu_finish("test_boxcar_predict");
}
