/*
 * Tests of the boxcar single-pulse search (<transient/boxcar.h>).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 * Plans against hand-computed cases (section 3.1 example, Table 1); the
 * reference against a brute-force search written here; the ideal search
 * against every width; every CPU variant and kernel against the reference on
 * random data with random chunkings (chunk size 1 included), several channels,
 * flush, per-stage outputs, measured normalisation windows, NaN/Inf, empty
 * input and invalid configurations. With --gpu: the CUDA variants against the
 * reference (exit 77 when no GPU is usable).
 */
#include <transient/boxcar.h>

#include "bench_device.h"
#include "boxcar/boxcar_variants.h"
#include "common/test_util.h"

#include <math.h>
#include <stdlib.h>

static int gpu_mode = 0;

#include "boxcar_test_configs.h"
#include "boxcar_test_signals.h"

/* ---- helpers ------------------------------------------------------------- */

static void check_stage(const tr_boxcar_plan *p, uint32_t i, uint32_t stride,
                        const uint32_t *w, uint32_t nw)
{
    const tr_boxcar_stage *s = tr_boxcar_plan_stage(p, i);
    CHECK(s != NULL, "stage %u missing", i);
    if (!s) return;
    CHECK(s->stride == stride, "stage %u stride %u, expected %u", i, s->stride, stride);
    CHECK(s->nwidths == nw, "stage %u has %u widths, expected %u", i, s->nwidths, nw);
    for (uint32_t m = 0; m < nw && m < s->nwidths; m++)
        CHECK(tr_boxcar_plan_width(p, i, m) == w[m],
              "stage %u width %u is %u, expected %u", i, m, tr_boxcar_plan_width(p, i, m),
              w[m]);
}

/* Run a whole stream through a new object in random chunks (max_chunk 0: one
 * call; 1: chunk size 1) and flush; outputs of all n + latency positions. */
static int run_stream(const tr_boxcar_config *cfg, const float *x, size_t n,
                      size_t max_chunk, tu_rng *rng, float *snr, int32_t *width)
{
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(cfg, &err);
    if (!q) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return 0;
    }
    const uint32_t C = cfg->nchan, L = tr_boxcar_latency(q);
    size_t done = 0;
    int ok = 1;
    while (done < n) {
        size_t m = n - done;
        if (max_chunk == 1)
            m = 1;
        else if (max_chunk > 1 && m > 1)
            m = (size_t)tu_range(rng, 0, (long)(max_chunk < m ? max_chunk : m));
        if (tr_boxcar_process(q, x + done * C, m, snr + done * C, width + done * C) !=
            TR_OK) {
            fprintf(stderr, "process failed: %s\n", tr_boxcar_last_error(q));
            ok = 0;
            break;
        }
        done += m;
    }
    if (ok && tr_boxcar_flush(q, snr + n * C, width + n * C) != TR_OK) {
        fprintf(stderr, "flush failed: %s\n", tr_boxcar_last_error(q));
        ok = 0;
    }
    (void)L;
    tr_boxcar_destroy(q);
    return ok;
}

/* S/N of the boxcar (p, L) of channel c in double, white FIXED normalisation. */
static double snr_of(const float *x, uint32_t C, uint32_t c, size_t p, uint32_t L,
                     double mean, double sigma)
{
    double acc = 0.0;
    for (uint32_t j = 0; j < L; j++)
        acc += (double)x[(p + j) * C + c];
    return (acc - L * mean) / (sqrt((double)L) * sigma);
}

/* Brute force of the definition for stream x (n positions), FIXED white norm. */
static void brute(const tr_boxcar_plan *plan, const float *x, size_t n, uint32_t C,
                  double mean, double sigma, float *y, int32_t *w)
{
    for (size_t p = 0; p < n; p++)
        for (uint32_t c = 0; c < C; c++) {
            double best = -INFINITY;
            uint32_t bw = 0;
            for (uint32_t i = 0; i < tr_boxcar_plan_stages(plan); i++) {
                const tr_boxcar_stage *s = tr_boxcar_plan_stage(plan, i);
                if (p % s->stride) continue;
                for (uint32_t m = 0; m < s->nwidths; m++) {
                    const uint32_t L = s->width_first + m * s->width_step;
                    if (p + L > n) break;
                    const double v = snr_of(x, C, c, p, L, mean, sigma);
                    if (v > best) {
                        best = v;
                        bw = L;
                    }
                }
            }
            y[p * C + c] = (float)best;
            w[p * C + c] = (int32_t)bw;
        }
}

/* ---- plans --------------------------------------------------------------- */

static void test_plans(void)
{
    tr_error err;
    /* Section 3.1: L_max^i = 4: widths 1..4 at every point, then 6, 8, 10, 12 at
     * every second point, then 16, 20, 24, 28 at every fourth. */
    tr_boxcar_config c = boxdit(4, 28);
    tr_boxcar_plan *p = tr_boxcar_plan_create(&c, &err);
    CHECK(p != NULL, "%s", err.message);
    if (p) {
        const uint32_t w0[] = {1, 2, 3, 4}, w1[] = {6, 8, 10, 12},
                       w2[] = {16, 20, 24, 28};
        CHECK(tr_boxcar_plan_stages(p) == 3, "%u stages", tr_boxcar_plan_stages(p));
        check_stage(p, 0, 1, w0, 4);
        check_stage(p, 1, 2, w1, 4);
        check_stage(p, 2, 4, w2, 4);
        CHECK(tr_boxcar_plan_lend(p) == 28, "L_end %u", tr_boxcar_plan_lend(p));
        CHECK(tr_boxcar_plan_latency(p) == 27, "latency %u", tr_boxcar_plan_latency(p));
        const tr_boxcar_stage *s = tr_boxcar_plan_stage(p, 2);
        CHECK(s->base == 12 && s->block == 4, "base %u block %u", s->base, s->block);
        CHECK(fabs(tr_boxcar_plan_boxcars_per_sample(p) - 7.0) < 1e-12, "%g",
              tr_boxcar_plan_boxcars_per_sample(p));
        uint32_t wl[16], sl[16];
        CHECK(tr_boxcar_plan_list(p, wl, sl, 16) == 12, "list size");
        CHECK(wl[4] == 6 && sl[4] == 2 && wl[11] == 28 && sl[11] == 4, "list content");
        CHECK(tr_boxcar_plan_list(p, wl, NULL, 3) == 12 && wl[2] == 3, "list with cap");
        CHECK(tr_boxcar_plan_total_widths(p) == 12, "total widths");
        CHECK(tr_boxcar_plan_stage(p, 3) == NULL && tr_boxcar_plan_width(p, 0, 4) == 0 &&
                  tr_boxcar_plan_width(p, 7, 0) == 0,
              "out-of-range accessors");
        CHECK(tr_boxcar_plan_algorithm(p) == TR_BOXCAR_BOXDIT &&
                  tr_boxcar_plan_depth(p) == 0 && tr_boxcar_plan_layers(p) == 0,
              "BoxDIT has no depth or layers");
        tr_boxcar_plan_destroy(p);
    }
    /* Cut after the first width >= max_width: 13 -> L_end 16. */
    c = boxdit(4, 13);
    p = tr_boxcar_plan_create(&c, &err);
    if (p) {
        const uint32_t w2[] = {16};
        check_stage(p, 2, 4, w2, 1);
        CHECK(tr_boxcar_plan_lend(p) == 16, "L_end %u", tr_boxcar_plan_lend(p));
        tr_boxcar_plan_destroy(p);
    }
    /* A list: 32, 16, then 8 repeating. */
    c = tr_boxcar_config_default();
    c.widths[0] = 32;
    c.widths[1] = 16;
    c.widths[2] = 8;
    c.nwidths = 3;
    c.max_width = 8192;
    p = tr_boxcar_plan_create(&c, &err);
    if (p) {
        /* LMAX: 32, 32+32=64, 64+32=96, 96+64=160, ... */
        const tr_boxcar_stage *s = tr_boxcar_plan_stage(p, 3);
        CHECK(s && s->base == 96 && s->width_first == 104 && s->width_step == 8 &&
                  s->nwidths == 8 && s->stride == 8,
              "AstroAccelerate-like stage 3");
        CHECK(tr_boxcar_plan_lend(p) >= 8192, "L_end %u", tr_boxcar_plan_lend(p));
        tr_boxcar_plan_destroy(p);
    }
    /* Table 1: the widths from 16 for depths 1, 2, 3 (step i = 4). */
    for (uint32_t d = 1; d <= 3; d++) {
        c = igrid(d, 0, 30);
        p = tr_boxcar_plan_create(&c, &err);
        CHECK(p != NULL, "%s", err.message);
        if (!p) continue;
        const uint32_t t1[] = {16, 24}, t2[] = {16, 20, 24, 28},
                       t3[] = {16, 18, 20, 22, 24, 26, 28, 30};
        const uint32_t *t = d == 1 ? t1 : d == 2 ? t2 : t3;
        const uint32_t P = 2u << d;
        check_stage(p, 4, 16 / P > 1 ? 16 / P : 1, t, 1u << d);
        CHECK(tr_boxcar_plan_layers(p) == P && tr_boxcar_plan_depth(p) == d, "P, d");
        /* steps before: widths 1; 2,3 (d >= 1); 4.. */
        const uint32_t s0[] = {1};
        check_stage(p, 0, 1, s0, 1);
        tr_boxcar_plan_destroy(p);
    }
    c = igrid(1, 4, 64);
    p = tr_boxcar_plan_create(&c, &err);
    if (p) {
        const uint32_t s5[] = {32, 48}, s6[] = {64};
        check_stage(p, 5, 8, s5, 2);
        check_stage(p, 6, 16, s6, 1);
        CHECK(tr_boxcar_plan_lend(p) == 64, "L_end %u", tr_boxcar_plan_lend(p));
        tr_boxcar_plan_destroy(p);
    }
    c = ideal(37);
    p = tr_boxcar_plan_create(&c, &err);
    if (p) {
        CHECK(tr_boxcar_plan_stages(p) == 1 && tr_boxcar_plan_lend(p) == 37 &&
                  tr_boxcar_plan_stage(p, 0)->nwidths == 37,
              "ideal plan");
        tr_boxcar_plan_destroy(p);
    }
    c = boxdit(32, 1);
    p = tr_boxcar_plan_create(&c, &err);
    if (p) {
        CHECK(tr_boxcar_plan_lend(p) == 1 && tr_boxcar_plan_latency(p) == 0,
              "max_width 1");
        tr_boxcar_plan_destroy(p);
    }
}

/* ---- invalid configurations ---------------------------------------------- */

static void expect_invalid(const tr_boxcar_config *c, tr_status code, const char *what)
{
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(c, &err);
    CHECK(q == NULL && err.code == code && err.message[0] != '\0',
          "%s: expected status %d, got %d (%s)", what, (int)code, (int)err.code,
          err.message);
    tr_boxcar_destroy(q);
}

static void test_invalid(void)
{
    tr_boxcar_config c = boxdit(3, 64);
    expect_invalid(&c, TR_ERR_INVALID, "odd width");
    c = boxdit(0, 64);
    expect_invalid(&c, TR_ERR_INVALID, "zero width");
    c = boxdit(32, 64);
    c.nwidths = 0;
    expect_invalid(&c, TR_ERR_INVALID, "empty list");
    c.nwidths = TR_BOXCAR_MAX_LIST + 1;
    expect_invalid(&c, TR_ERR_INVALID, "long list");
    c = boxdit(32, 0);
    expect_invalid(&c, TR_ERR_INVALID, "max_width 0");
    c = boxdit(32, TR_BOXCAR_MAX_WIDTH + 1);
    expect_invalid(&c, TR_ERR_INVALID, "max_width too large");
    c = igrid(0, 0, 64);
    expect_invalid(&c, TR_ERR_INVALID, "depth 0");
    c = igrid(4, 0, 64);
    expect_invalid(&c, TR_ERR_INVALID, "depth 4");
    c = igrid(2, 6, 64);
    expect_invalid(&c, TR_ERR_INVALID, "layers 6");
    c = igrid(2, 2048, 64);
    expect_invalid(&c, TR_ERR_INVALID, "layers 2048");
    c = boxdit(32, 64);
    c.algorithm = (tr_boxcar_algorithm)7;
    expect_invalid(&c, TR_ERR_INVALID, "algorithm");
    c = boxdit(32, 64);
    c.nchan = 0;
    expect_invalid(&c, TR_ERR_INVALID, "nchan 0");
    c = boxdit(32, 64);
    c.stage_outputs = 2;
    expect_invalid(&c, TR_ERR_INVALID, "stage_outputs");
    c = boxdit(32, 64);
    c.device_layout = (tr_boxcar_layout)5;
    expect_invalid(&c, TR_ERR_INVALID, "device_layout");
    c = boxdit(32, 64);
    c.backend = (tr_backend)9;
    expect_invalid(&c, TR_ERR_INVALID, "backend");
    c = boxdit(32, 64);
    c.variant = TR_VARIANT_REFERENCE;
    c.backend = TR_BACKEND_CUDA;
    expect_invalid(&c, TR_ERR_INVALID, "reference on CUDA");
    c = boxdit(32, 64);
    c.variant = TR_VARIANT_PAPER;
    c.backend = TR_BACKEND_CPU;
    expect_invalid(&c, TR_ERR_INVALID, "paper on CPU");
    c = boxdit(32, 64);
    c.batch = 0;
    expect_invalid(&c, TR_ERR_INVALID, "batch 0");
    c = boxdit(32, 64);
    c.norm.window = 3;
    expect_invalid(&c, TR_ERR_INVALID, "norm window");
    if (tr_cuda_device_count(NULL, 0) == 0) {
        c = boxdit(32, 64);
        c.backend = TR_BACKEND_CUDA;
        expect_invalid(&c, TR_ERR_NO_DEVICE, "CUDA without a GPU");
    }
    tr_error err;
    CHECK(tr_boxcar_create(NULL, &err) == NULL && err.code == TR_ERR_INVALID, "NULL cfg");
    CHECK(tr_boxcar_plan_create(NULL, &err) == NULL, "NULL plan cfg");
}

/* ---- reference and ideal against brute force ------------------------------- */

static void test_reference_brute(void)
{
    tu_rng r = {11};
    const tr_boxcar_config cfgs[] = {boxdit(4, 28),   boxdit(8, 100),  igrid(1, 0, 40),
                                     igrid(2, 0, 70), igrid(3, 4, 50), ideal(23)};
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++) {
        tr_boxcar_config c = cfgs[k];
        c.nchan = 2;
        c.backend = TR_BACKEND_CPU;
        c.variant = TR_VARIANT_REFERENCE;
        fixed_norm(&c, 0.25, 1.5);
        tr_error err;
        tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
        const uint32_t L = tr_boxcar_plan_latency(plan);
        const size_t n = 700;
        float *x = noise(&r, n * 2, 0.25, 1.5);
        add_pulses(&r, x, n, 2, 8, tr_boxcar_plan_lend(plan), 1.5, 12);
        float *y = malloc((n + L) * 2 * sizeof(float)),
              *yb = malloc(n * 2 * sizeof(float));
        int32_t *w = malloc((n + L) * 2 * sizeof(int32_t)),
                *wb = malloc(n * 2 * sizeof(int32_t));
        CHECK(run_stream(&c, x, n, 97, &r, y, w), "run");
        brute(plan, x, n, 2, 0.25, 1.5, yb, wb);
        size_t bad = 0;
        for (size_t i = 0; i < n * 2; i++) {
            /* output index i + L * 2 is position i / 2 */
            if (y[i + (size_t)L * 2] != yb[i] || w[i + (size_t)L * 2] != wb[i]) bad++;
        }
        CHECK(bad == 0, "%s config %zu: %zu outputs differ from the brute force",
              tr_boxcar_algorithm_name(c.algorithm), k, bad);
        int zero = 1;
        for (size_t i = 0; i < (size_t)L * 2 && i < (n + L) * 2; i++)
            if (y[i] != 0.0f || w[i] != 0) zero = 0;
        CHECK(zero, "positions < 0 must be 0");
        free(x);
        free(y);
        free(yb);
        free(w);
        free(wb);
        tr_boxcar_plan_destroy(plan);
    }
    /* ideal against every width 1..L_max directly */
    {
        const size_t n = 300;
        const uint32_t Lm = 17;
        float *x = noise(&r, n, 0.0, 1.0);
        add_pulses(&r, x, n, 1, 5, Lm, 1.0, 12);
        tr_boxcar_config c = ideal(Lm);
        c.variant = TR_VARIANT_REFERENCE;
        c.backend = TR_BACKEND_CPU;
        fixed_norm(&c, 0.0, 1.0);
        float *y = malloc((n + Lm) * sizeof(float));
        int32_t *w = malloc((n + Lm) * sizeof(int32_t));
        CHECK(run_stream(&c, x, n, 0, &r, y, w), "ideal run");
        size_t bad = 0;
        for (size_t p = 0; p < n; p++) {
            double best = -INFINITY;
            uint32_t bw = 0;
            for (uint32_t L = 1; L <= Lm && p + L <= n; L++) {
                double v = snr_of(x, 1, 0, p, L, 0.0, 1.0);
                if (v > best) {
                    best = v;
                    bw = L;
                }
            }
            if (y[p + Lm - 1] != (float)best || w[p + Lm - 1] != (int32_t)bw) bad++;
        }
        CHECK(bad == 0, "ideal: %zu positions differ from every-width search", bad);
        free(x);
        free(y);
        free(w);
    }
}

/* ---- fast variants against the reference --------------------------------- */

typedef struct {
    size_t bad_snr, bad_width, compared;
    double worst;
} cmp_stats;

/* Compare outputs (fast vs reference) of n + L positions; x is the input. */
static void compare(const tr_boxcar_plan *plan, const float *x, size_t n, uint32_t C,
                    const float *yr, const int32_t *wr, const float *yf,
                    const int32_t *wf, double mean, double sigma, cmp_stats *s)
{
    const uint32_t L = tr_boxcar_plan_latency(plan);
    const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
    for (size_t i = 0; i < (n + L) * C; i++) {
        const double d = fabs((double)yf[i] - (double)yr[i]);
        const double lim = tol * (1.0 + fabs((double)yr[i]));
        s->compared++;
        if (d / (1.0 + fabs((double)yr[i])) > s->worst)
            s->worst = d / (1.0 + fabs((double)yr[i]));
        if (!(d <= lim)) s->bad_snr++;
        if (wf[i] != wr[i]) {
            /* allowed only when the fast variant's boxcar is as good within tol */
            const size_t k = i / C;
            const uint32_t c = (uint32_t)(i % C);
            if (k < L || wf[i] <= 0) {
                s->bad_width++;
                continue;
            }
            const size_t p = k - L;
            if (p + (size_t)wf[i] > n) {
                s->bad_width++;
                continue;
            }
            const double alt = snr_of(x, C, c, p, (uint32_t)wf[i], mean, sigma);
            if (!((double)yr[i] - alt <= 2.0 * lim)) s->bad_width++;
        }
    }
}

static void test_fast_vs_reference(void)
{
    tu_rng r = {2024};
    tr_boxcar_config cfgs[20];
    size_t nc = 0;
    cfgs[nc++] = boxdit(32, 1500);
    cfgs[nc++] = boxdit(16, 2000);
    cfgs[nc++] = boxdit(8, 700);
    cfgs[nc++] = boxdit(2, 300);
    cfgs[nc++] = tr_boxcar_config_default(); /* 32,16,16,16,8 to 1024 */
    cfgs[nc++] = igrid(1, 0, 1000);
    cfgs[nc++] = igrid(2, 0, 900);
    cfgs[nc++] = igrid(3, 0, 1100);
    cfgs[nc++] = igrid(3, 4, 600);  /* fewer layers than 2^d: strided blocks */
    cfgs[nc++] = igrid(1, 64, 800); /* more layers */
    cfgs[nc++] = ideal(90);
    cfgs[nc++] = boxdit(6, 5);
    cfgs[nc++] = igrid(2, 1, 300); /* one layer: stride 2^i, strided blocks */
    cfgs[nc++] = igrid(1, 2, 700);
    const size_t nsmall = nc;
    /* the documented precision limit: mean 16 sigma, L_end 8192 */
    cfgs[nc++] = boxdit(16, 8192);
    cfgs[nc++] = igrid(3, 0, 8192);
    const double sigma = 2.0;
    for (size_t k = 0; k < nc; k++) {
        const double mean = k < nsmall ? 3.0 : 16.0 * sigma;
        static const uint32_t chans[] = {1, 3, 19}; /* 19: 8x8 transposes + rest */
        for (int ci = 0; ci < 3; ci++) {
            const uint32_t C = chans[ci];
            if (k >= nsmall && C > 1) continue;
            if (C == 19 && k % 4 != 0) continue;
            tr_boxcar_config c = cfgs[k];
            c.nchan = C;
            c.backend = TR_BACKEND_CPU;
            fixed_norm(&c, mean, sigma);
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            const uint32_t L = tr_boxcar_plan_latency(plan);
            const size_t n = k < nsmall ? 6000 + (size_t)tu_range(&r, 0, 3000) : 20000;
            float *x = noise(&r, n * C, mean, sigma);
            add_pulses(&r, x, n, C, 30, tr_boxcar_plan_lend(plan), sigma, 12);
            if (k >= nsmall) /* the documented outlier limit */
                for (int j = 0; j < 3; j++)
                    x[tu_range(&r, 0, (long)(n * C) - 1)] += (float)(999.0 * sigma);
            const size_t tot = (n + L) * C;
            float *yr = malloc(tot * sizeof(float)), *yf = malloc(tot * sizeof(float)),
                  *y1 = malloc(tot * sizeof(float));
            int32_t *wr = malloc(tot * sizeof(int32_t)),
                    *wf = malloc(tot * sizeof(int32_t)),
                    *w1 = malloc(tot * sizeof(int32_t));
            c.variant = TR_VARIANT_REFERENCE;
            CHECK(run_stream(&c, x, n, 5000, &r, yr, wr), "reference run");
            c.variant = TR_VARIANT_FAST;
            CHECK(run_stream(&c, x, n, 0, &r, yf, wf), "fast run, one call");
            cmp_stats s = {0, 0, 0, 0.0};
            compare(plan, x, n, C, yr, wr, yf, wf, mean, sigma, &s);
            CHECK(s.bad_snr == 0 && s.bad_width == 0,
                  "%s cfg %zu nchan %u: %zu S/N and %zu widths outside tolerance of %zu "
                  "(worst relative %.3g, tol %.3g)",
                  tr_boxcar_algorithm_name(c.algorithm), k, C, s.bad_snr, s.bad_width,
                  s.compared, s.worst, TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan)));
            printf("%s cfg %zu nchan %u: worst relative S/N difference %.3g (tolerance "
                   "%.3g)\n",
                   tr_boxcar_algorithm_name(c.algorithm), k, C, s.worst,
                   TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan)));
            /* chunking: random chunks and (small n only) chunk size 1, same bits */
            const size_t chunks[] = {1 + (size_t)tu_range(&r, 1, 700), 1};
            for (int t = 0; t < 2; t++) {
                CHECK(run_stream(&c, x, n, chunks[t], &r, y1, w1), "fast run, chunked");
                CHECK(
                    !memcmp(y1, yf, tot * sizeof(float)) &&
                        !memcmp(w1, wf, tot * sizeof(int32_t)),
                    "%s cfg %zu nchan %u: output depends on the chunking (max chunk %zu)",
                    tr_boxcar_algorithm_name(c.algorithm), k, C, chunks[t]);
            }
            /* the generic kernel gives the same bits as the best one */
            if (tr_boxcar_cpu_select("generic")) {
                CHECK(run_stream(&c, x, n, 333, &r, y1, w1), "generic run");
                CHECK(!memcmp(y1, yf, tot * sizeof(float)) &&
                          !memcmp(w1, wf, tot * sizeof(int32_t)),
                      "%s cfg %zu: generic kernel differs from the best kernel",
                      tr_boxcar_algorithm_name(c.algorithm), k);
                tr_boxcar_cpu_select(NULL);
            }
            free(x);
            free(yr);
            free(yf);
            free(y1);
            free(wr);
            free(wf);
            free(w1);
            tr_boxcar_plan_destroy(plan);
        }
    }
}

/* Measured normalisation (small windows, so that boundaries fall everywhere). */
static void test_measured_norm(void)
{
    tu_rng r = {77};
    const tr_boxcar_config cfgs[] = {boxdit(16, 300), igrid(2, 0, 300), ideal(40)};
    for (size_t k = 0; k < 3; k++) {
        for (int mode = 0; mode < 2; mode++) {
            tr_boxcar_config c = cfgs[k];
            c.nchan = 2;
            c.backend = TR_BACKEND_CPU;
            c.norm.mode = mode ? TR_BOXCAR_NORM_LEVELS : TR_BOXCAR_NORM_WHITE;
            c.norm.window = mode ? 2048 : 100;
            c.norm.history = 2;
            if (k == 0 && mode == 0) {
                c.norm.baseline = TR_BOXCAR_BASELINE_MEDIAN;
                c.norm.baseline_window = 31;
            }
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            /* the search holds the first statistics window (first_own) */
            const uint32_t L = tr_boxcar_plan_latency(plan) + c.norm.window;
            const size_t n = 5000;
            float *x = noise(&r, n * 2, 1.0, 0.5);
            add_pulses(&r, x, n, 2, 10, tr_boxcar_plan_lend(plan), 0.5, 12);
            const size_t tot = (n + L) * 2;
            float *yr = malloc(tot * sizeof(float)), *yf = malloc(tot * sizeof(float)),
                  *y1 = malloc(tot * sizeof(float));
            int32_t *wr = malloc(tot * sizeof(int32_t)),
                    *wf = malloc(tot * sizeof(int32_t)),
                    *w1 = malloc(tot * sizeof(int32_t));
            c.variant = TR_VARIANT_REFERENCE;
            CHECK(run_stream(&c, x, n, 0, &r, yr, wr), "reference run");
            c.variant = TR_VARIANT_FAST;
            CHECK(run_stream(&c, x, n, 1000, &r, yf, wf), "fast run");
            CHECK(run_stream(&c, x, n, 1, &r, y1, w1), "fast run, chunk 1");
            CHECK(!memcmp(y1, yf, tot * sizeof(float)) &&
                      !memcmp(w1, wf, tot * sizeof(int32_t)),
                  "measured norm cfg %zu mode %d: output depends on the chunking", k,
                  mode);
            size_t bad = 0, badw = 0;
            const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
            for (size_t i = 0; i < tot; i++) {
                if (!(fabs((double)yf[i] - yr[i]) <=
                      tol * (1.0 + fabs((double)yr[i])) * 4))
                    bad++;
                if (wf[i] != wr[i]) badw++;
            }
            /* widths may differ only at near ties; allow a handful */
            CHECK(bad == 0 && badw * 1000 <= tot,
                  "measured norm cfg %zu mode %d: %zu S/N, %zu widths differ", k, mode,
                  bad, badw);
            free(x);
            free(yr);
            free(yf);
            free(y1);
            free(wr);
            free(wf);
            free(w1);
            tr_boxcar_plan_destroy(plan);
        }
    }
}

/* ---- per-stage outputs ----------------------------------------------------- */

static void test_stage_outputs(void)
{
    tu_rng r = {5};
    for (int v = 0; v < 2; v++) {
        tr_boxcar_config c = boxdit(4, 60);
        if (v) c = igrid(2, 0, 60);
        c.nchan = 2;
        c.backend = TR_BACKEND_CPU;
        c.stage_outputs = 1;
        fixed_norm(&c, 0.0, 1.0);
        for (int var = 0; var < 2; var++) {
            c.variant = var ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
            tr_error err;
            tr_boxcar *q = tr_boxcar_create(&c, &err);
            CHECK(q != NULL, "%s", err.message);
            if (!q) continue;
            const tr_boxcar_plan *plan = tr_boxcar_get_plan(q);
            const uint32_t L = tr_boxcar_latency(q), S = tr_boxcar_plan_stages(plan);
            const size_t n = 1000;
            float *x = noise(&r, n * 2, 0.0, 1.0);
            float *y = malloc((n + L) * 2 * sizeof(float));
            int32_t *w = malloc((n + L) * 2 * sizeof(int32_t));
            /* rebuild Y from the stage outputs of every call */
            float *yy = malloc((n + L) * 2 * sizeof(float));
            int32_t *ww = malloc((n + L) * 2 * sizeof(int32_t));
            for (size_t i = 0; i < (n + L) * 2; i++) {
                yy[i] = -INFINITY;
                ww[i] = 0;
            }
            uint64_t expect_first[64] = {0};
            size_t done = 0;
            int ok = 1;
            while (done <= n) {
                const int fl = done == n;
                size_t m = fl ? L : (size_t)tu_range(&r, 0, (long)(n - done));
                if (!fl && m > 150) m = 150;
                tr_status s = fl ? tr_boxcar_flush(q, y + done * 2, w + done * 2)
                                 : tr_boxcar_process(q, x + done * 2, m, y + done * 2,
                                                     w + done * 2);
                if (s != TR_OK) {
                    ok = 0;
                    break;
                }
                for (uint32_t i = 0; i < S; i++) {
                    tr_boxcar_stage_out o;
                    tr_boxcar_stage_output(q, i, &o);
                    if (o.count) {
                        if (o.first != expect_first[i]) ok = 0;
                        expect_first[i] = o.first + o.count;
                    }
                    for (size_t e = 0; e < o.count; e++)
                        for (uint32_t ch = 0; ch < 2; ch++) {
                            const size_t p = (size_t)((o.first + e) * o.stride);
                            const size_t idx = (p + L) * 2 + ch;
                            if (o.snr[e * 2 + ch] > yy[idx]) {
                                yy[idx] = o.snr[e * 2 + ch];
                                ww[idx] = o.width[e * 2 + ch];
                            }
                        }
                }
                if (fl) break;
                done += m;
            }
            CHECK(ok, "stage outputs: run or sequence failed");
            size_t bad = 0;
            for (size_t i = (size_t)L * 2; i < (n + L) * 2; i++)
                if (yy[i] != y[i] || ww[i] != w[i]) bad++;
            CHECK(bad == 0,
                  "alg %d variant %d: %zu positions differ from the stage maxima", v, var,
                  bad);
            for (uint32_t i = 0; i < S; i++) {
                const uint32_t st = tr_boxcar_plan_stage(plan, i)->stride;
                CHECK(expect_first[i] == (n + st - 1) / st,
                      "stage %u: %llu entries, expected %zu", i,
                      (unsigned long long)expect_first[i], (n + st - 1) / st);
            }
            free(x);
            free(y);
            free(w);
            free(yy);
            free(ww);
            tr_boxcar_destroy(q);
        }
    }
}

/* ---- edge cases ------------------------------------------------------------ */

static void test_edges_and_state(void)
{
    tu_rng r = {9};
    for (int var = 0; var < 2; var++) {
        tr_boxcar_config c = boxdit(8, 50);
        c.nchan = 3;
        c.backend = TR_BACKEND_CPU;
        c.variant = var ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
        fixed_norm(&c, 0.5, 1.0);
        tr_error err;
        tr_boxcar *q = tr_boxcar_create(&c, &err);
        CHECK(q != NULL, "%s", err.message);
        if (!q) continue;
        const uint32_t L = tr_boxcar_latency(q);
        CHECK(L == tr_boxcar_lend(q) - 1 && tr_boxcar_nchan(q) == 3, "latency, nchan");
        /* empty input, NULL checks */
        CHECK(tr_boxcar_process(q, NULL, 0, NULL, NULL) == TR_OK, "n = 0");
        float dummy[3];
        CHECK(tr_boxcar_process(q, NULL, 1, dummy, NULL) == TR_ERR_INVALID,
              "NULL samples rejected");
        CHECK(tr_boxcar_process(q, dummy, 1, NULL, NULL) == TR_ERR_INVALID &&
                  strlen(tr_boxcar_last_error(q)) > 0,
              "NULL output rejected");
        /* flush of an empty stream: all zero */
        float *y = malloc(((size_t)L + 400) * 3 * sizeof(float));
        int32_t *w = malloc(((size_t)L + 400) * 3 * sizeof(int32_t));
        CHECK(tr_boxcar_flush(q, NULL, w) == TR_ERR_INVALID && !tr_boxcar_flushed(q),
              "flush into NULL rejected");
        CHECK(tr_boxcar_flush(q, y, w) == TR_OK, "flush of nothing");
        int zero = 1;
        for (size_t i = 0; i < (size_t)L * 3; i++)
            if (y[i] != 0.0f || w[i] != 0) zero = 0;
        CHECK(zero, "flush of an empty stream gives zeros");
        CHECK(tr_boxcar_flushed(q), "flushed flag");
        CHECK(tr_boxcar_process(q, dummy, 1, y, w) == TR_ERR_STATE,
              "process after flush");
        CHECK(tr_boxcar_flush(q, y, w) == TR_ERR_STATE, "second flush");
        CHECK(tr_boxcar_reset(q) == TR_OK && !tr_boxcar_flushed(q) &&
                  tr_boxcar_position(q) == 0,
              "reset");
        /* NaN/Inf: same output as the data with the fixed mean in their place */
        const size_t n = 400;
        float *x = noise(&r, n * 3, 0.5, 1.0);
        float *xc = malloc(n * 3 * sizeof(float));
        memcpy(xc, x, n * 3 * sizeof(float));
        const size_t bad_at[] = {5, 77, 78, 200, 399 * 3 + 2};
        const float bad_v[] = {NAN, INFINITY, -INFINITY, NAN, INFINITY};
        for (int k = 0; k < 5; k++) {
            x[bad_at[k]] = bad_v[k];
            xc[bad_at[k]] = 0.5f;
        }
        float *y2 = malloc((n + L) * 3 * sizeof(float));
        int32_t *w2 = malloc((n + L) * 3 * sizeof(int32_t));
        CHECK(tr_boxcar_process(q, x, n, y, w) == TR_OK &&
                  tr_boxcar_flush(q, y + n * 3, w + n * 3) == TR_OK,
              "run with NaN/Inf");
        CHECK(tr_boxcar_nonfinite(q) == 5, "nonfinite count %llu",
              (unsigned long long)tr_boxcar_nonfinite(q));
        int finite = 1;
        for (size_t i = 0; i < (n + L) * 3; i++)
            if (!isfinite(y[i])) finite = 0;
        CHECK(finite, "non-finite input gives finite output");
        tr_boxcar_reset(q);
        CHECK(tr_boxcar_process(q, xc, n, y2, w2) == TR_OK &&
                  tr_boxcar_flush(q, y2 + n * 3, w2 + n * 3) == TR_OK,
              "run with clean data");
        CHECK(!memcmp(y, y2, (n + L) * 3 * sizeof(float)) &&
                  !memcmp(w, w2, (n + L) * 3 * sizeof(int32_t)),
              "non-finite samples act as the mean");
        /* reset reproduces the stream */
        tr_boxcar_reset(q);
        CHECK(tr_boxcar_process(q, xc, n, y, w) == TR_OK, "rerun");
        CHECK(!memcmp(y, y2, n * 3 * sizeof(float)), "reset reproduces the outputs");
        /* per-stage outputs were not asked for */
        tr_boxcar_stage_out o;
        CHECK(tr_boxcar_stage_output(q, 0, &o) == TR_ERR_INVALID, "no stage outputs");
        CHECK(tr_boxcar_process_device(q, x, 1, y, w) == TR_ERR_UNSUPPORTED,
              "device samples on the CPU");
        free(x);
        free(xc);
        free(y);
        free(w);
        free(y2);
        free(w2);
        tr_boxcar_destroy(q);
    }
    /* huge finite values: no NaN leaks into other positions */
    {
        tr_boxcar_config c = boxdit(16, 200);
        c.backend = TR_BACKEND_CPU;
        fixed_norm(&c, 0.0, 1.0);
        const size_t n = 3000;
        float *x = noise(&r, n, 0.0, 1.0);
        x[1000] = 3e38f;
        x[1001] = 3e38f;
        x[1002] = -3e38f;
        tr_error err;
        tr_boxcar *q = tr_boxcar_create(&c, &err);
        const uint32_t L = tr_boxcar_latency(q);
        float *y = malloc((n + L) * sizeof(float));
        int32_t *w = malloc((n + L) * sizeof(int32_t));
        tr_boxcar_process(q, x, n, y, w);
        tr_boxcar_flush(q, y + n, w + n);
        int ok = 1;
        for (size_t p = 0; p < n; p++) {
            const int near = p + 400 >= 1000 && p <= 1003;
            if (!near && !isfinite(y[p + L])) ok = 0;
            if (isnan(y[p + L])) ok = 0;
        }
        CHECK(ok, "huge values affect only the boxcars that contain them");
        free(x);
        free(y);
        free(w);
        tr_boxcar_destroy(q);
    }
}

/* ---- GPU ------------------------------------------------------------------ */

static int test_gpu(void)
{
    if (tr_cuda_device_count(NULL, 0) == 0) return 77;
    tu_rng r = {31};
    const tr_boxcar_config cfgs[] = {
        boxdit(32, 1500), boxdit(16, 800),  boxdit(8, 600), igrid(1, 0, 1000),
        igrid(2, 0, 900), igrid(3, 0, 700), ideal(64)};
    const tr_variant vars[] = {TR_VARIANT_FAST, TR_VARIANT_PAPER};
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++)
        for (int v = 0; v < 2; v++) {
            tr_boxcar_config c = cfgs[k];
            c.nchan = 5;
            const double mean = 2.0, sigma = 1.5;
            fixed_norm(&c, mean, sigma);
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            const uint32_t L = tr_boxcar_plan_latency(plan);
            const size_t n = 20000, tot = (n + L) * 5;
            float *x = noise(&r, n * 5, mean, sigma);
            add_pulses(&r, x, n, 5, 40, tr_boxcar_plan_lend(plan), sigma, 12);
            float *yr = malloc(tot * sizeof(float)), *yg = malloc(tot * sizeof(float)),
                  *y1 = malloc(tot * sizeof(float));
            int32_t *wr = malloc(tot * sizeof(int32_t)),
                    *wg = malloc(tot * sizeof(int32_t)),
                    *w1 = malloc(tot * sizeof(int32_t));
            c.backend = TR_BACKEND_CPU;
            c.variant = TR_VARIANT_REFERENCE;
            CHECK(run_stream(&c, x, n, 0, &r, yr, wr), "reference");
            c.backend = TR_BACKEND_CUDA;
            c.variant = vars[v];
            c.batch = 4096;
            CHECK(run_stream(&c, x, n, 0, &r, yg, wg), "cuda %s",
                  tr_variant_name(vars[v]));
            cmp_stats s = {0, 0, 0, 0.0};
            compare(plan, x, n, 5, yr, wr, yg, wg, mean, sigma, &s);
            CHECK(s.bad_snr == 0 && s.bad_width == 0,
                  "cuda %s %s cfg %zu: %zu S/N and %zu widths outside tolerance (worst "
                  "%.3g)",
                  tr_variant_name(vars[v]), tr_boxcar_algorithm_name(c.algorithm), k,
                  s.bad_snr, s.bad_width, s.worst);
            CHECK(run_stream(&c, x, n, 3000, &r, y1, w1), "cuda chunked");
            CHECK(!memcmp(y1, yg, tot * sizeof(float)) &&
                      !memcmp(w1, wg, tot * sizeof(int32_t)),
                  "cuda %s cfg %zu: output depends on the chunking",
                  tr_variant_name(vars[v]), k);
            free(x);
            free(yr);
            free(yg);
            free(y1);
            free(wr);
            free(wg);
            free(w1);
            tr_boxcar_plan_destroy(plan);
        }
    /* measured normalisation: the host path cuts calls and flush at windows */
    {
        tr_boxcar_config c = boxdit(16, 300);
        c.nchan = 3;
        c.norm.mode = TR_BOXCAR_NORM_WHITE;
        c.norm.window = 100;
        c.norm.history = 2;
        tr_error err;
        tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
        /* the search holds the first statistics window (norm.first_own) */
        const uint32_t L = tr_boxcar_plan_latency(plan) + c.norm.window;
        const size_t n = 5000, tot = (n + L) * 3;
        float *x = noise(&r, n * 3, 1.0, 0.5);
        add_pulses(&r, x, n, 3, 10, 300, 0.5, 12);
        float *yr = malloc(tot * sizeof(float)), *yg = malloc(tot * sizeof(float));
        int32_t *wr = malloc(tot * sizeof(int32_t)), *wg = malloc(tot * sizeof(int32_t));
        c.backend = TR_BACKEND_CPU;
        c.variant = TR_VARIANT_REFERENCE;
        CHECK(run_stream(&c, x, n, 0, &r, yr, wr), "reference");
        c.backend = TR_BACKEND_CUDA;
        c.variant = TR_VARIANT_FAST;
        CHECK(run_stream(&c, x, n, 777, &r, yg, wg), "cuda, measured norm");
        size_t bad = 0, badw = 0;
        const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
        for (size_t i = 0; i < tot; i++) {
            if (!(fabs((double)yg[i] - yr[i]) <= tol * (1.0 + fabs((double)yr[i])) * 4))
                bad++;
            if (wg[i] != wr[i]) badw++;
        }
        CHECK(bad == 0 && badw * 1000 <= tot,
              "cuda with measured norm: %zu S/N, %zu widths differ", bad, badw);
        free(x);
        free(yr);
        free(yg);
        free(wr);
        free(wg);
        tr_boxcar_plan_destroy(plan);
    }
    /* device samples, both layouts, against the host path of the same object kind */
    for (int layout = 0; layout < 2; layout++) {
        tr_boxcar_config c = igrid(2, 0, 500);
        c.nchan = 4;
        fixed_norm(&c, 0.0, 1.0);
        c.device_layout = layout ? TR_BOXCAR_CHANNEL_MAJOR : TR_BOXCAR_TIME_MAJOR;
        c.backend = TR_BACKEND_CUDA;
        const size_t n = 4000, tot = n * 4;
        float *x = noise(&r, tot, 0.0, 1.0), *xl = malloc(tot * sizeof(float));
        float *yh = malloc(tot * sizeof(float)), *yd = malloc(tot * sizeof(float));
        int32_t *wh = malloc(tot * sizeof(int32_t)), *wd = malloc(tot * sizeof(int32_t));
        for (size_t k = 0; k < n; k++)
            for (uint32_t ch = 0; ch < 4; ch++)
                xl[layout ? ch * n + k : k * 4 + ch] = x[k * 4 + ch];
        tr_error err;
        tr_boxcar *q = tr_boxcar_create(&c, &err);
        CHECK(q != NULL, "%s", err.message);
        void *dx = NULL, *dy = NULL, *dw = NULL;
        if (q && tr_bench_dev_alloc(0, tot * 4, &dx) == TR_OK &&
            tr_bench_dev_alloc(0, tot * 4, &dy) == TR_OK &&
            tr_bench_dev_alloc(0, tot * 4, &dw) == TR_OK) {
            tr_bench_dev_upload(dx, xl, tot * 4);
            CHECK(tr_boxcar_process(q, x, n, yh, wh) == TR_OK, "host path");
            tr_boxcar_reset(q);
            CHECK(tr_boxcar_process_device(q, dx, n, dy, dw) == TR_OK, "device path: %s",
                  tr_boxcar_last_error(q));
            tr_bench_dev_download(yd, dy, tot * 4);
            tr_bench_dev_download(wd, dw, tot * 4);
            size_t bad = 0;
            for (size_t k = 0; k < n; k++)
                for (uint32_t ch = 0; ch < 4; ch++) {
                    const size_t d = layout ? ch * n + k : k * 4 + ch;
                    if (yd[d] != yh[k * 4 + ch] || wd[d] != wh[k * 4 + ch]) bad++;
                }
            CHECK(bad == 0, "device layout %d: %zu outputs differ from the host path",
                  layout, bad);
        }
        tr_bench_dev_free(dx);
        tr_bench_dev_free(dy);
        tr_bench_dev_free(dw);
        tr_boxcar_destroy(q);
        free(x);
        free(xl);
        free(yh);
        free(yd);
        free(wh);
        free(wd);
    }
    return tu_finish("test_boxcar --gpu");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--gpu")) gpu_mode = 1;
    if (gpu_mode) return test_gpu();
    test_plans();
    test_invalid();
    test_reference_brute();
    test_fast_vs_reference();
    test_measured_norm();
    test_stage_outputs();
    test_edges_and_state();
    return tu_finish("test_boxcar");
}
