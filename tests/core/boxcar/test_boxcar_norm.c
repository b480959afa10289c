/*
 * Boxcar S/N normalisation: the robust estimate against direct two-pass double
 * computations, outlier rejection, the windowed streaming values (history
 * merge, warm-up), chunking invariance, non-finite samples, LEVELS on white
 * and red noise (interpolation between powers of two), FIXED values and
 * tables, the running-median baseline against brute force, invalid configs.
 */
#include <transient/boxcar_norm.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/test_util.h"

static int close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * (fabs(b) > 1e-300 ? fabs(b) : 1.0);
}

/* Direct iterative clipping of v (finite values only): marks kept[], returns
 * count; independent of the library's code path. */
static size_t direct_clip(const double *v, size_t n, double k, int iters, int correct,
                          unsigned char *kept)
{
    for (size_t i = 0; i < n; i++)
        kept[i] = 1;
    size_t prev = n + 1;
    const double f = (k > 0 && correct) ? tr_boxcar_norm_clip_factor(k) : 1.0;
    for (int it = 0; it < iters; it++) {
        double s = 0;
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (kept[i]) s += v[i], m++;
        const double mean = s / m;
        double q = 0;
        for (size_t i = 0; i < n; i++)
            if (kept[i]) q += (v[i] - mean) * (v[i] - mean);
        if (k <= 0 || m == prev) return m;
        prev = m;
        const double sd = sqrt(q / m) / f;
        for (size_t i = 0; i < n; i++)
            kept[i] = fabs(v[i] - mean) <= k * sd;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += kept[i];
    return m;
}

/* Two-pass mean and population sigma of the kept values. */
static void two_pass(const double *v, const unsigned char *kept, size_t n, double *mean,
                     double *sd)
{
    double s = 0;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (!kept || kept[i]) s += v[i], m++;
    *mean = s / m;
    double q = 0;
    for (size_t i = 0; i < n; i++)
        if (!kept || kept[i]) q += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(q / m);
}

static void test_clip_factor(void)
{
    CHECK(fabs(tr_boxcar_norm_clip_factor(2.0) - 0.879626) < 1e-5, "f(2) = %.6f",
          tr_boxcar_norm_clip_factor(2.0));
    CHECK(fabs(tr_boxcar_norm_clip_factor(3.0) - 0.986578) < 1e-5, "f(3) = %.6f",
          tr_boxcar_norm_clip_factor(3.0));
    CHECK(tr_boxcar_norm_clip_factor(50.0) == 1.0, "f(50)");
}

static void test_robust(void)
{
    tu_rng r = {11};
    const size_t n = 20000;
    float *x = malloc(n * sizeof *x);
    double *d = malloc(n * sizeof *d);
    unsigned char *kept = malloc(n);
    /* offset far from zero: a one-pass sum of squares would lose digits */
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(1000.0 + 2.0 * tu_gauss(&r));
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    double mean, sd, em, es;
    size_t used;
    CHECK(tr_boxcar_norm_robust(x, n, 1, 0.0, 1, 0, &mean, &sd, &used) == TR_OK,
          "robust");
    two_pass(d, NULL, n, &em, &es);
    CHECK(close_rel(mean, em, 1e-13) && close_rel(sd, es, 1e-11) && used == n,
          "plain: %.15g %.15g vs %.15g %.15g", mean, sd, em, es);

    /* 2% outliers of +50 sigma: the plain sigma is inflated, the robust not */
    for (size_t i = 0; i < n; i += 50)
        x[i] += 100.0f;
    for (size_t i = 0; i < n; i++)
        d[i] = x[i];
    two_pass(d, NULL, n, &em, &es);
    CHECK(es > 5.0, "outliers inflate the plain sigma: %g", es);
    for (int correct = 0; correct <= 1; correct++) {
        CHECK(tr_boxcar_norm_robust(x, n, 1, 3.0, 16, correct, &mean, &sd, &used) ==
                  TR_OK,
              "robust");
        size_t m = direct_clip(d, n, 3.0, 17, correct, kept);
        two_pass(d, kept, n, &em, &es);
        if (correct) es /= tr_boxcar_norm_clip_factor(3.0);
        CHECK(used == m && close_rel(mean, em, 1e-12) && close_rel(sd, es, 1e-10),
              "clipped (correct %d): %zu %.12g %.12g vs %zu %.12g %.12g", correct, used,
              mean, sd, m, em, es);
        CHECK(fabs(mean - 1000.0) < 0.1 && fabs(sd - 2.0) < (correct ? 0.06 : 0.12),
              "robust near truth (correct %d): %g %g", correct, mean, sd);
        CHECK(used < n - n / 50 + 1, "outliers dropped: used %zu", used);
    }
    /* the correction matters at 2 sigma: uncorrected sigma ~0.88 of truth */
    for (size_t i = 0; i < n; i++)
        x[i] = (float)tu_gauss(&r);
    tr_boxcar_norm_robust(x, n, 1, 2.0, 50, 0, &mean, &sd, &used);
    CHECK(sd < 0.9, "uncorrected 2-sigma clip biased low: %g", sd);
    tr_boxcar_norm_robust(x, n, 1, 2.0, 50, 1, &mean, &sd, &used);
    CHECK(fabs(sd - 1.0) < 0.04, "corrected 2-sigma clip: %g", sd);
    /* stride and non-finite values */
    x[4] = NAN;
    x[6] = INFINITY;
    CHECK(tr_boxcar_norm_robust(x, n / 2, 2, 0.0, 1, 0, &mean, &sd, &used) == TR_OK &&
              used == n / 2 - 2,
          "stride 2 skips non-finite: used %zu", used);
    float bad[3] = {NAN, NAN, INFINITY};
    CHECK(tr_boxcar_norm_robust(bad, 3, 1, 3.0, 4, 1, &mean, &sd, &used) ==
              TR_ERR_INVALID,
          "no finite value");
    CHECK(tr_boxcar_norm_robust(x, n, 0, 3.0, 4, 1, NULL, NULL, NULL) == TR_ERR_INVALID,
          "stride 0");
    free(x);
    free(d);
    free(kept);
}

/* Run q over x (n samples, nchan) in chunks from rng (max chunk cmax; 0 = all). */
static void run_chunks(tr_boxcar_norm *q, const float *x, size_t n, uint32_t nchan,
                       float *y, tu_rng *r, long cmax)
{
    size_t k = 0;
    while (k < n) {
        size_t m = cmax ? (size_t)tu_range(r, 1, cmax) : n - k;
        if (m > n - k) m = n - k;
        CHECK(tr_boxcar_norm_process(q, x + k * nchan, m, y + k * nchan) == TR_OK,
              "process");
        k += m;
    }
}

/* WHITE streaming: values of window j = merge of the clipped windows j-H..j-1,
 * window 0's its own clipped values (first_own; warm-up values without). */
static void test_white_stream(void)
{
    tu_rng r = {21};
    const uint32_t C = 3, W = 256, H = 2;
    const size_t nw = 6, n = nw * W;
    float *x = malloc(n * C * sizeof *x), *y = malloc(n * C * sizeof *y);
    for (size_t i = 0; i < n; i++)
        for (uint32_t c = 0; c < C; c++) {
            double v = 5.0 * c + (1.0 + c) * tu_gauss(&r);
            if (tu_uniform(&r) < 0.01) v += 40.0 * (1.0 + c); /* outliers */
            x[i * C + c] = (float)v;
        }
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.window = W;
    cfg.history = H;
    cfg.reject_sigma = 3.0;
    cfg.init_mean = 0.5;
    cfg.init_sigma = 2.0;
    tr_error err;
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, C, 64, n, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return;
    {
        tr_boxcar_norm_config c0 = cfg;
        c0.first_own = 0;
        tr_boxcar_norm *q0 = tr_boxcar_norm_create(&c0, C, 64, n, &err);
        CHECK(q0 != NULL, "create: %s", err.message);
        run_chunks(q0, x, n, C, y, &r, 0);
        for (uint32_t c = 0; q0 && c < C; c++) {
            double mu, sd;
            /* warm-up in window 0 */
            CHECK(tr_boxcar_norm_stats(q0, 7, c, 9, &mu, &sd) == TR_OK, "stats");
            CHECK(close_rel(mu, 9 * 0.5, 1e-15) && close_rel(sd, 3 * 2.0, 1e-15),
                  "warm-up values %g %g", mu, sd);
            CHECK(!tr_boxcar_norm_ready(q0, 7, c) && tr_boxcar_norm_ready(q0, W, c),
                  "ready");
        }
        CHECK(tr_boxcar_norm_first_measured(q0) == 0, "first_own 0 measures no window 0");
        tr_boxcar_norm_destroy(q0);
    }
    run_chunks(q, x, n, C, y, &r, 0);
    CHECK(tr_boxcar_norm_position(q) == n, "position");
    CHECK(tr_boxcar_norm_first_measured(q) == W, "window 0 measured on W samples");
    double *d = malloc(H * W * sizeof *d);
    unsigned char *kept = malloc(H * W);
    for (uint32_t c = 0; c < C; c++) {
        double mu, sd;
        CHECK(tr_boxcar_norm_ready(q, 7, c) && tr_boxcar_norm_ready(q, W, c), "ready");
        for (size_t j = 0; j < nw; j++) {
            /* direct: clip each earlier window alone (window 0: itself), two-pass
             * on the union */
            size_t m = 0;
            const size_t j0 = j >= H ? j - H : 0, j1 = j ? j : 1;
            for (size_t w = j0; w < j1; w++) {
                double *v = d + m;
                for (uint32_t i = 0; i < W; i++)
                    v[i] = x[(w * W + i) * C + c];
                direct_clip(v, W, 3.0, 17, 1, kept + m);
                m += W;
            }
            double em, es;
            two_pass(d, kept, m, &em, &es);
            es /= tr_boxcar_norm_clip_factor(3.0);
            for (uint32_t L = 1; L <= 64; L *= 4) {
                tr_boxcar_norm_stats(q, j * W + (L % W), c, L, &mu, &sd);
                CHECK(close_rel(mu, L * em, 1e-12) && close_rel(sd, sqrt(L) * es, 1e-10),
                      "window %zu chan %u L %u: %.12g %.12g vs %.12g %.12g", j, c, L, mu,
                      sd, L * em, sqrt(L) * es);
            }
        }
    }
    CHECK(tr_boxcar_norm_rejected(q) > 0, "outliers counted");
    /* float table agrees with the double query */
    uint32_t widths[3] = {1, 5, 33};
    float fm[3], fs[3];
    CHECK(tr_boxcar_norm_table(q, 3 * W + 1, 2, widths, 3, fm, fs) == TR_OK, "table");
    for (int i = 0; i < 3; i++) {
        double mu, sd;
        tr_boxcar_norm_stats(q, 3 * W + 1, 2, widths[i], &mu, &sd);
        CHECK(fm[i] == (float)mu && fs[i] == (float)sd, "table entry %d", i);
    }
    /* out of range queries */
    CHECK(tr_boxcar_norm_stats(q, n + W, 0, 1, NULL, NULL) == TR_ERR_INVALID,
          "future window");
    CHECK(tr_boxcar_norm_stats(q, 0, C, 1, NULL, NULL) == TR_ERR_INVALID, "channel");
    CHECK(tr_boxcar_norm_stats(q, 0, 0, 0, NULL, NULL) == TR_ERR_INVALID, "width 0");
    tr_boxcar_norm_destroy(q);
    /* a small lookback forgets old windows */
    q = tr_boxcar_norm_create(&cfg, C, 64, 10, &err);
    run_chunks(q, x, n, C, y, &r, 0);
    CHECK(tr_boxcar_norm_stats(q, 0, 0, 1, NULL, NULL) == TR_ERR_INVALID,
          "window 0 forgotten with lookback 10");
    CHECK(tr_boxcar_norm_stats(q, n - 11, 0, 1, NULL, NULL) == TR_OK, "lookback kept");
    tr_boxcar_norm_destroy(q);
    free(d);
    free(kept);
    free(x);
    free(y);
}

/* Outputs and values bit-identical for every chunking; NaN/Inf policy. */
static void test_chunking_nonfinite(void)
{
    tu_rng r = {31};
    const uint32_t C = 2, W = 64;
    const size_t n = 1000;
    float *x = malloc(n * C * sizeof *x);
    float *y0 = malloc(n * C * sizeof *y0), *y1 = malloc(n * C * sizeof *y1);
    size_t nbad = 0;
    for (size_t i = 0; i < n * C; i++) {
        x[i] = (float)(3.0 + tu_gauss(&r) + 0.002 * (double)(i / C));
        if (tu_uniform(&r) < 0.01) x[i] = (i & 1) ? NAN : -INFINITY, nbad++;
    }
    for (int mode = 0; mode < 2; mode++)
        for (int bl = 0; bl < 2; bl++) {
            tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
            cfg.mode = mode ? TR_BOXCAR_NORM_LEVELS : TR_BOXCAR_NORM_WHITE;
            cfg.window = W;
            cfg.history = 3;
            cfg.baseline = bl ? TR_BOXCAR_BASELINE_MEDIAN : TR_BOXCAR_BASELINE_NONE;
            cfg.baseline_window = 33;
            tr_error err;
            tr_boxcar_norm *a = tr_boxcar_norm_create(&cfg, C, 16, n, &err);
            tr_boxcar_norm *b = tr_boxcar_norm_create(&cfg, C, 16, n, &err);
            CHECK(a && b, "create: %s", err.message);
            if (!a || !b) return;
            run_chunks(a, x, n, C, y0, &r, 0);
            for (long cmax = 1; cmax <= 300; cmax *= 7) {
                tr_boxcar_norm_reset(b);
                run_chunks(b, x, n, C, y1, &r, cmax);
                CHECK(memcmp(y0, y1, n * C * sizeof *y0) == 0,
                      "mode %d baseline %d chunks <= %ld: output differs", mode, bl,
                      cmax);
                int same = 1;
                for (size_t p = 0; p < n; p += 13)
                    for (uint32_t c = 0; c < C; c++)
                        for (uint32_t L = 1; L <= 40; L += 13) {
                            double m0, s0, m1, s1;
                            tr_boxcar_norm_stats(a, p, c, L, &m0, &s0);
                            tr_boxcar_norm_stats(b, p, c, L, &m1, &s1);
                            same &= m0 == m1 && s0 == s1;
                        }
                CHECK(same, "mode %d baseline %d chunks <= %ld: values differ", mode, bl,
                      cmax);
                CHECK(tr_boxcar_norm_nonfinite(b) == nbad,
                      "non-finite counted %llu vs %zu",
                      (unsigned long long)tr_boxcar_norm_nonfinite(b), nbad);
            }
            /* replaced by the input mean in effect, finite everywhere but in
             * window 0, whose non-finite samples are NaN (first_own) */
            int fin = 1, repl = 1;
            for (size_t i = 0; i < n * C; i++) {
                if (i / C < W) {
                    fin &= isfinite(x[i]) ? isfinite(y0[i]) != 0 : isnan(y0[i]) != 0;
                    continue;
                }
                fin &= isfinite(y0[i]) != 0;
                if (!isfinite(x[i])) {
                    double mu;
                    tr_boxcar_norm_stats(a, i / C, (uint32_t)(i % C), 1, &mu, NULL);
                    repl &= y0[i] == (float)mu;
                }
            }
            CHECK(fin && repl, "mode %d baseline %d: non-finite replaced by the mean",
                  mode, bl);
            /* statistics stay sane */
            double mu, sd;
            tr_boxcar_norm_stats(a, n - 1, 0, 1, &mu, &sd);
            CHECK(isfinite(mu) && sd > 0.5 && sd < 1.6, "mode %d baseline %d: sigma %g",
                  mode, bl, sd);
            if (bl) CHECK(fabs(mu) < 0.5, "baseline removed: mean %g", mu);
            tr_boxcar_norm_destroy(a);
            tr_boxcar_norm_destroy(b);
        }
    /* empty input */
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, 1, 1, 0, NULL);
    CHECK(q && tr_boxcar_norm_process(q, NULL, 0, NULL) == TR_OK &&
              tr_boxcar_norm_position(q) == 0,
          "empty input");
    CHECK(tr_boxcar_norm_process(q, NULL, 3, NULL) == TR_ERR_INVALID &&
              strlen(tr_boxcar_norm_last_error(q)) > 0,
          "NULL buffers");
    tr_boxcar_norm_destroy(q);
    free(x);
    free(y0);
    free(y1);
}

/* Threads sharing the channels (cfg.threads): the same cleaned samples,
 * values, non-finite and rejection counts as one thread, for long calls (which
 * use the threads) and random chunkings, WHITE, LEVELS and FIXED, with NaN/Inf
 * and a channel whose first windows have no finite value. */
static void test_threads_c(uint32_t C, uint32_t nthreads, uint64_t lookback)
{
    tu_rng r = {515 + C};
    const uint32_t W = 256;
    const size_t n = C < 4 ? 140000 : 40000; /* >= 2^17 values: threads */
    float *x = malloc(n * C * sizeof *x);
    float *y0 = malloc(n * C * sizeof *y0), *y1 = malloc(n * C * sizeof *y1);
    for (size_t i = 0; i < n * C; i++) {
        x[i] = (float)(1.0 + (double)(i % C) + tu_gauss(&r));
        if (tu_uniform(&r) < 0.003) x[i] = (i & 1) ? NAN : INFINITY;
        if (tu_uniform(&r) < 0.002) x[i] += 40.0f; /* outliers to reject */
        if (i % C == 3 && i / C < 3 * W) x[i] = NAN;
    }
    for (int mode = 0; mode < 3; mode++) {
        tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
        cfg.mode = mode == 0 ? TR_BOXCAR_NORM_WHITE
                             : (mode == 1 ? TR_BOXCAR_NORM_LEVELS : TR_BOXCAR_NORM_FIXED);
        cfg.window = W;
        cfg.history = 3;
        cfg.threads = 1;
        tr_error err;
        tr_boxcar_norm *a = tr_boxcar_norm_create(&cfg, C, 64, lookback, &err);
        cfg.threads = nthreads;
        tr_boxcar_norm *b = tr_boxcar_norm_create(&cfg, C, 64, lookback, &err);
        cfg.threads = 0;
        tr_boxcar_norm *d = tr_boxcar_norm_create(&cfg, C, 64, lookback, &err);
        CHECK(a && b && d, "threads: create: %s", err.message);
        if (a && b && d) {
            run_chunks(a, x, n, C, y0, &r, 0);
            for (int rep = 0; rep < 3; rep++) {
                tr_boxcar_norm *q = rep == 2 ? d : b;
                tr_boxcar_norm_reset(q);
                run_chunks(q, x, n, C, y1, &r, rep == 0 ? 0 : 30000);
                CHECK(memcmp(y0, y1, n * C * sizeof *y0) == 0,
                      "threads: mode %d rep %d: output differs", mode, rep);
                CHECK(tr_boxcar_norm_nonfinite(q) == tr_boxcar_norm_nonfinite(a) &&
                          tr_boxcar_norm_rejected(q) == tr_boxcar_norm_rejected(a),
                      "threads: mode %d rep %d: counts %llu/%llu vs %llu/%llu", mode, rep,
                      (unsigned long long)tr_boxcar_norm_nonfinite(q),
                      (unsigned long long)tr_boxcar_norm_rejected(q),
                      (unsigned long long)tr_boxcar_norm_nonfinite(a),
                      (unsigned long long)tr_boxcar_norm_rejected(a));
                int same = 1;
                for (size_t p = lookback >= n ? 0 : n - lookback; p < n; p += 97)
                    for (uint32_t c = 0; c < C; c++) {
                        double m0, s0, m1, s1;
                        tr_boxcar_norm_stats(a, p, c, 1 + (uint32_t)(p % 50), &m0, &s0);
                        tr_boxcar_norm_stats(q, p, c, 1 + (uint32_t)(p % 50), &m1, &s1);
                        same &= m0 == m1 && s0 == s1 &&
                                tr_boxcar_norm_ready(a, p, c) ==
                                    tr_boxcar_norm_ready(q, p, c);
                    }
                CHECK(same, "threads: C %u mode %d rep %d: values differ", C, mode, rep);
            }
        }
        tr_boxcar_norm_destroy(a);
        tr_boxcar_norm_destroy(b);
        tr_boxcar_norm_destroy(d);
    }
    free(x);
    free(y0);
    free(y1);
}

/* Threads sharing the channels (fewer threads than channels) and the windows
 * of a long call (more threads than channels; also with few windows' values
 * kept, so that a call is done in several rounds). */
static void test_threads(void)
{
    test_threads_c(7, 3, 40000);
    test_threads_c(1, 4, 40000);
    test_threads_c(2, 5, 40000);
    test_threads_c(1, 3, 0);
    test_threads_c(3, 8, 300);
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.threads = TR_BOXCAR_NORM_MAX_THREADS + 1;
    tr_error err;
    CHECK(tr_boxcar_norm_create(&cfg, 2, 8, 0, &err) == NULL &&
              strstr(err.message, "threads"),
          "threads above the limit refused");
}

/* Exact variance of a sum of L consecutive samples of AR(1) with unit innovations. */
static double ar1_var_sum(double a, uint32_t L)
{
    const double vx = 1.0 / (1.0 - a * a);
    double s = L;
    double ad = 1.0;
    for (uint32_t d = 1; d < L; d++) {
        ad *= a;
        s += 2.0 * (L - d) * ad;
    }
    return vx * s;
}

static void test_levels(void)
{
    tu_rng r = {41};
    const uint32_t W = 8192, C = 2;
    const size_t n = 4 * (size_t)W;
    float *x = malloc(n * C * sizeof *x), *y = malloc(n * C * sizeof *y);
    const double a = 0.8; /* channel 1 red (AR(1)), channel 0 white, sigma 2 */
    double prev = 0.0;
    for (size_t i = 0; i < n; i++) {
        x[i * C] = (float)(1.0 + 2.0 * tu_gauss(&r));
        prev = a * prev + tu_gauss(&r);
        x[i * C + 1] = (float)prev;
    }
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.mode = TR_BOXCAR_NORM_LEVELS;
    cfg.window = W;
    cfg.history = 3;
    cfg.reject_sigma = 0.0; /* exact comparison with direct sliding sums first */
    tr_error err;
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, C, 100, n, &err);
    CHECK(q != NULL, "create levels: %s", err.message);
    if (!q) return;
    CHECK(tr_boxcar_norm_levels(q) == 8, "levels K+1 = %u (2^7 = 128 >= 100)",
          tr_boxcar_norm_levels(q));
    run_chunks(q, x, n, C, y, &r, 5000);
    /* direct: sums of width 2^k inside each of windows 0..2 at every multiple
     * of max(1, 2^k / 8), two-pass */
    double *d = malloc(3 * (size_t)W * sizeof *d);
    for (uint32_t c = 0; c < C; c++)
        for (uint32_t k = 0; k < 8; k++) {
            const uint32_t w = 1u << k;
            size_t m = 0;
            for (size_t win = 0; win < 3; win++)
                for (uint32_t i = 0; i + w <= W; i += (w >= 16 ? w / 8 : 1)) {
                    double s = 0;
                    for (uint32_t t = 0; t < w; t++)
                        s += x[(win * W + i + t) * C + c];
                    d[m++] = s;
                }
            double em, es, mu, sd;
            two_pass(d, NULL, m, &em, &es);
            tr_boxcar_norm_stats(q, 3 * (uint64_t)W + 5, c, w, &mu, &sd);
            CHECK(close_rel(mu, em, 1e-9) && close_rel(sd, es, 1e-9),
                  "chan %u level %u: %.12g %.12g vs %.12g %.12g", c, k, mu, sd, em, es);
        }
    /* white channel: every width near eq. 5; red channel: near the exact
     * AR(1) variance, including widths between powers of two */
    const uint32_t Ls[] = {1, 3, 6, 12, 24, 48, 96, 100, 128, 200};
    int white_bad = 0, red_bad = 0;
    for (size_t i = 0; i < sizeof Ls / sizeof Ls[0]; i++) {
        const uint32_t L = Ls[i];
        double mu, sd;
        tr_boxcar_norm_stats(q, 3 * (uint64_t)W, 0, L, &mu, &sd);
        if (fabs(sd / (2.0 * sqrt(L)) - 1.0) > 0.06 || fabs(mu / L - 1.0) > 0.1)
            white_bad++, fprintf(stderr, "white L %u: mu %g sigma %g\n", L, mu, sd);
        tr_boxcar_norm_stats(q, 3 * (uint64_t)W, 1, L, &mu, &sd);
        const double ex = sqrt(ar1_var_sum(a, L));
        /* log-linear interpolation of the per-sample variance: a few % error */
        if (fabs(sd / ex - 1.0) > 0.12)
            red_bad++, fprintf(stderr, "red L %u: sigma %g exact %g\n", L, sd, ex);
    }
    CHECK(white_bad == 0, "white levels off at %d widths", white_bad);
    CHECK(red_bad == 0, "red levels off at %d widths", red_bad);
    /* the white-noise scaling would be far off on red noise: the test can fail */
    {
        double mu, sd;
        tr_boxcar_norm_stats(q, 3 * (uint64_t)W, 1, 1, &mu, &sd);
        CHECK(sqrt(64.0) * sd < 0.5 * sqrt(ar1_var_sum(a, 64)),
              "eq. 5 underestimates red noise at L = 64");
    }
    tr_boxcar_norm_destroy(q);
    /* levels capped by the window: 2^K <= W / 8 */
    cfg.window = 64;
    q = tr_boxcar_norm_create(&cfg, 1, 1000, 0, &err);
    CHECK(q && tr_boxcar_norm_levels(q) == 4, "levels capped: %u",
          q ? tr_boxcar_norm_levels(q) : 0);
    tr_boxcar_norm_destroy(q);
    /* LEVELS with rejection still near truth on white noise with sparse
     * outliers (dense ones would contaminate most wide sums) */
    cfg.window = W;
    cfg.reject_sigma = 3.0;
    for (size_t i = 0; i < n; i += 1999)
        x[i * C] += 200.0f;
    q = tr_boxcar_norm_create(&cfg, C, 64, n, &err);
    run_chunks(q, x, n, C, y, &r, 0);
    for (uint32_t L = 1; L <= 64; L *= 2) {
        double mu, sd;
        tr_boxcar_norm_stats(q, n - 1, 0, L, &mu, &sd);
        CHECK(fabs(sd / (2.0 * sqrt(L)) - 1.0) < 0.15, "robust level L %u sigma %g", L,
              sd);
    }
    tr_boxcar_norm_destroy(q);
    free(d);
    free(x);
    free(y);
}

static void test_fixed(void)
{
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.mode = TR_BOXCAR_NORM_FIXED;
    double means[2] = {1.0, -2.0}, sigmas[2] = {0.5, 3.0};
    cfg.fixed_means = means;
    cfg.fixed_sigmas = sigmas;
    tr_error err;
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, 2, 8, 0, &err);
    CHECK(q != NULL, "fixed: %s", err.message);
    means[0] = 99.0; /* copied at create */
    double mu, sd;
    tr_boxcar_norm_stats(q, 12345, 0, 4, &mu, &sd);
    CHECK(mu == 4.0 && sd == 1.0, "fixed chan 0: %g %g", mu, sd);
    tr_boxcar_norm_stats(q, 0, 1, 9, &mu, &sd);
    CHECK(mu == -18.0 && sd == 9.0, "fixed chan 1: %g %g", mu, sd);
    float x[4] = {1, NAN, 2, 3}, y[4];
    tr_boxcar_norm_process(q, x, 2, y);
    CHECK(y[1] == -2.0f && y[0] == 1.0f && tr_boxcar_norm_nonfinite(q) == 1,
          "fixed: NaN replaced by the channel mean");
    CHECK(tr_boxcar_norm_ready(q, 0, 0), "fixed is always ready");
    tr_boxcar_norm_destroy(q);
    /* per-width table, white extrapolation past its end */
    double tmu[3] = {0.1, 0.3, 0.5}, tsd[3] = {1.0, 1.5, 2.0};
    cfg = tr_boxcar_norm_config_default();
    cfg.mode = TR_BOXCAR_NORM_FIXED;
    cfg.fixed_mu_L = tmu;
    cfg.fixed_sigma_L = tsd;
    cfg.fixed_table_len = 3;
    q = tr_boxcar_norm_create(&cfg, 1, 8, 0, &err);
    CHECK(q != NULL, "table: %s", err.message);
    tr_boxcar_norm_stats(q, 0, 0, 2, &mu, &sd);
    CHECK(mu == 0.3 && sd == 1.5, "table L = 2");
    tr_boxcar_norm_stats(q, 0, 0, 12, &mu, &sd);
    CHECK(close_rel(mu, 2.0, 1e-14) && close_rel(sd, 4.0, 1e-14), "table L = 12: %g %g",
          mu, sd);
    tr_boxcar_norm_destroy(q);
}

/* Running median against brute force, with non-finite samples. */
static int cmpf(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static void test_baseline(void)
{
    tu_rng r = {51};
    const size_t n = 3000;
    const uint32_t M = 64;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *tmp = malloc(M * 4);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(0.01 * i + tu_gauss(&r));
        if (i % 10 == 0) x[i] = (float)tu_range(&r, -3, 3); /* ties */
        if (tu_uniform(&r) < 0.02) x[i] = NAN;
    }
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.mode = TR_BOXCAR_NORM_FIXED;
    cfg.baseline = TR_BOXCAR_BASELINE_MEDIAN;
    cfg.baseline_window = M;
    tr_error err;
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, 1, 8, 0, &err);
    CHECK(q != NULL, "baseline: %s", err.message);
    run_chunks(q, x, n, 1, y, &r, 50);
    int bad = 0;
    for (size_t p = 0; p < n; p++) {
        if (!isfinite(x[p])) {
            bad += y[p] != 0.0f; /* fixed mean 0 */
            continue;
        }
        size_t m = 0;
        for (size_t t = p + 1 > M ? p + 1 - M : 0; t <= p; t++)
            if (isfinite(x[t])) tmp[m++] = x[t];
        qsort(tmp, m, sizeof *tmp, cmpf);
        const float med =
            (m & 1) ? tmp[m / 2] : (float)(0.5 * ((double)tmp[m / 2 - 1] + tmp[m / 2]));
        if (y[p] != x[p] - med) {
            if (bad < 5) fprintf(stderr, "p %zu: %g vs %g\n", p, y[p], x[p] - med);
            bad++;
        }
    }
    CHECK(bad == 0, "running median differs at %d positions", bad);
    tr_boxcar_norm_destroy(q);
    free(x);
    free(y);
    free(tmp);
}

/* Median of n floats as the library defines it (even: mean of the middle two). */
static float med_ref(float *v, size_t n)
{
    qsort(v, n, sizeof *v, cmpf);
    return (n & 1) ? v[n / 2] : (float)(0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]));
}

/* Block-median baseline against its definition, brute force. */
static void test_block_baseline(void)
{
    tu_rng r = {61};
    const size_t n = 5000;
    const uint32_t M = 160, b = M / 16, C = 2;
    float *x = malloc(n * C * sizeof *x), *y = malloc(n * C * sizeof *y);
    float *y1 = malloc(n * C * sizeof *y1), *tmp = malloc((M + 16) * sizeof *tmp);
    for (size_t i = 0; i < n * C; i++) {
        x[i] = (float)(50.0 + 0.01 * (double)(i / C) + tu_gauss(&r));
        if (i % 7 == 0) x[i] = (float)tu_range(&r, 48, 52); /* ties */
        if (tu_uniform(&r) < 0.03) x[i] = NAN;
    }
    for (size_t i = 0; i < 3 * b; i++)
        x[(100 + i) * C] = NAN; /* whole blocks */
    x[1] = INFINITY;            /* channel 1 starts with a non-finite sample */
    tr_boxcar_norm_config cfg = tr_boxcar_norm_config_default();
    cfg.mode = TR_BOXCAR_NORM_FIXED;
    cfg.fixed_mean = 0.25;
    cfg.baseline = TR_BOXCAR_BASELINE_BLOCK_MEDIAN;
    cfg.baseline_window = M;
    tr_error err;
    tr_boxcar_norm *q = tr_boxcar_norm_create(&cfg, C, 8, 0, &err);
    CHECK(q != NULL, "block baseline: %s", err.message);
    if (!q) return;
    run_chunks(q, x, n, C, y, &r, 0);
    tr_boxcar_norm_reset(q);
    run_chunks(q, x, n, C, y1, &r, 37);
    CHECK(memcmp(y, y1, n * C * sizeof *y) == 0, "block baseline: chunking");
    int bad = 0;
    for (uint32_t c = 0; c < C; c++)
        for (size_t p = 0; p < n; p++) {
            const float v = x[p * C + c];
            float expect;
            if (!isfinite(v)) {
                expect = 0.25f; /* the fixed mean */
            } else {
                const size_t j = p / b;
                float meds[16];
                size_t nm = 0;
                for (size_t jj = j >= 16 ? j - 16 : 0; jj < j; jj++) {
                    size_t m = 0;
                    for (size_t t = jj * b; t < (jj + 1) * b; t++)
                        if (isfinite(x[t * C + c])) tmp[m++] = x[t * C + c];
                    if (m) meds[nm++] = med_ref(tmp, m);
                }
                float base = 0.0f;
                if (nm) {
                    base = med_ref(meds, nm);
                } else {
                    for (size_t t = 0; t <= p; t++)
                        if (isfinite(x[t * C + c])) {
                            base = x[t * C + c];
                            break;
                        }
                }
                expect = v - base;
            }
            if (y[p * C + c] != expect) {
                if (bad < 5)
                    fprintf(stderr, "chan %u p %zu: %g vs %g\n", c, p, y[p * C + c],
                            expect);
                bad++;
            }
        }
    CHECK(bad == 0, "block-median baseline differs at %d samples", bad);
    tr_boxcar_norm_destroy(q);
    /* M below 16 is refused for the block median */
    cfg.baseline_window = 8;
    CHECK(tr_boxcar_norm_create(&cfg, 1, 8, 0, &err) == NULL &&
              err.code == TR_ERR_INVALID,
          "block median with M = 8");
    free(x);
    free(y);
    free(y1);
    free(tmp);
}

static void test_invalid(void)
{
    tr_error err;
    tr_boxcar_norm_config c = tr_boxcar_norm_config_default();
    CHECK(tr_boxcar_norm_create(NULL, 1, 1, 0, &err) == NULL &&
              err.code == TR_ERR_INVALID,
          "NULL config");
    CHECK(tr_boxcar_norm_create(&c, 0, 1, 0, &err) == NULL, "nchan 0");
    CHECK(tr_boxcar_norm_create(&c, 1, 0, 0, &err) == NULL, "max_width 0");
#define BAD(field, value)                                                                \
    do {                                                                                 \
        tr_boxcar_norm_config b = tr_boxcar_norm_config_default();                       \
        b.field = value;                                                                 \
        tr_boxcar_norm *q = tr_boxcar_norm_create(&b, 1, 8, 0, &err);                    \
        CHECK(q == NULL && err.code == TR_ERR_INVALID &&                                 \
                  strncmp(err.message, "boxcar_norm: ", 13) == 0,                        \
              "%s = %s accepted (%s)", #field, #value, err.message);                     \
        tr_boxcar_norm_destroy(q);                                                       \
    } while (0)
    BAD(mode, (tr_boxcar_norm_mode)7);
    BAD(window, 8);
    BAD(history, 0);
    BAD(reject_sigma, -1.0);
    BAD(reject_sigma, 0.2);
    BAD(reject_sigma, NAN);
    BAD(reject_max_iter, 0);
    BAD(reject_correct, 2);
    BAD(init_sigma, 0.0);
    BAD(init_mean, INFINITY);
    BAD(baseline, (tr_boxcar_baseline_mode)5);
    {
        tr_boxcar_norm_config b = tr_boxcar_norm_config_default();
        b.baseline = TR_BOXCAR_BASELINE_MEDIAN;
        b.baseline_window = 2;
        CHECK(tr_boxcar_norm_create(&b, 1, 8, 0, &err) == NULL, "baseline_window 2");
        b = tr_boxcar_norm_config_default();
        b.mode = TR_BOXCAR_NORM_FIXED;
        b.fixed_sigma = -1;
        CHECK(tr_boxcar_norm_create(&b, 1, 8, 0, &err) == NULL, "fixed_sigma < 0");
        double t[2] = {0, 1}, s[2] = {1, 0};
        b = tr_boxcar_norm_config_default();
        b.mode = TR_BOXCAR_NORM_FIXED;
        b.fixed_mu_L = t;
        b.fixed_table_len = 2;
        CHECK(tr_boxcar_norm_create(&b, 1, 8, 0, &err) == NULL, "table without sigma");
        b.fixed_sigma_L = s;
        CHECK(tr_boxcar_norm_create(&b, 1, 8, 0, &err) == NULL, "table sigma 0");
        s[1] = 2;
        b.fixed_sigmas = s;
        CHECK(tr_boxcar_norm_create(&b, 1, 8, 0, &err) == NULL, "table and per-channel");
        b.fixed_sigmas = NULL;
        tr_boxcar_norm *q = tr_boxcar_norm_create(&b, 1, 8, 0, &err);
        CHECK(q != NULL, "valid table: %s", err.message);
        tr_boxcar_norm_destroy(q);
        double sg[2] = {1, NAN};
        b = tr_boxcar_norm_config_default();
        b.mode = TR_BOXCAR_NORM_FIXED;
        b.fixed_sigmas = sg;
        CHECK(tr_boxcar_norm_create(&b, 2, 8, 0, &err) == NULL, "fixed_sigmas NaN");
    }
    CHECK(tr_boxcar_norm_validate(&c, 1, 1, &err) == TR_OK && err.code == TR_OK,
          "defaults valid");
    tr_boxcar_norm_destroy(NULL);
    CHECK(tr_boxcar_norm_reset(NULL) == TR_ERR_INVALID, "reset NULL");
}

int main(void)
{
    test_clip_factor();
    test_robust();
    test_white_stream();
    test_chunking_nonfinite();
    test_threads();
    test_levels();
    test_fixed();
    test_baseline();
    test_block_baseline();
    test_invalid();
    return tu_finish("test_boxcar_norm");
}
