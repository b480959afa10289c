/*
 * GPU tests of the CUDA boxcar search (cuda/boxcar/) through the
 * public API (<transient/boxcar.h>). Exit 77 (skipped) when no GPU is
 * usable.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 *  1. FAST and PAPER against the CPU reference on random data with pulses and
 *     NaN/Inf, several channels, BD-32/16/8, AstroAccelerate's list, IG(1..3)
 *     (also non-default layer counts), ideal, L_end up to 8192, fixed and
 *     measured normalisation: S/N within TR_BOXCAR_FAST_TOL(L_end), widths
 *     equal unless the GPU's boxcar is an evaluated one and as good within the
 *     tolerance; the same bits for random chunkings (chunk sizes 1..3 at the
 *     start, then random sizes) as for one call; the same non-finite counts.
 *  2. Device buffers (tr_boxcar_process_device) in both layouts, in pieces:
 *     the same bits as the host path, NaN/Inf replaced and counted.
 *  3. The paper's section 4.1 test: noise-free rectangular pulses of a dense
 *     sample of widths S = 1..L_end (amplitude 1/sqrt(S), mu = 0, sigma = 1),
 *     each slid over the positions modulo the largest stride (one channel per
 *     shift); the recovered S/N of every shift lies between the predicted
 *     RSNR_min (eq. 31) and RSNR_max (eq. 24) of boxcar_predict.h, and the
 *     best and worst shift equal the exact noise-free extremes.
 *  4. The host path (tr_boxcar_process with host buffers) over many statistics
 *     windows per call: FIXED (samples cleaned on the GPU), WHITE and LEVELS
 *     (one search per call with per-window tables), 1, 3 and 64 channels,
 *     NaN/Inf: within tolerance of the reference with the same non-finite
 *     count; the same bits for one call, random chunkings (chunk size 1
 *     included), page-locked buffers (tr_boxcar_host_alloc) and the former
 *     path of one search per window (TR_BOXCAR_CUDA_PERWINDOW=1).
 *  5. Device buffers with statistics measured on the device and window 0
 *     held (WHITE and LEVELS, norm.first_own = 1, the default): against the
 *     host path of the same settings (statistics measured on the host) in
 *     both layouts, 1, 3 and 70 channels, NaN/Inf in window 0 and later,
 *     streams shorter than the window (held until the flush), random pieces
 *     (size 1 at the start): positions < 0 exactly 0, S/N within
 *     TR_BOXCAR_FAST_TOL(L_end), widths equal but for at most 1 in 1000, the
 *     same non-finite counts and warnings; after reset the same bits for other pieces,
 * with the flush into device or host buffers.
 */
#define _DEFAULT_SOURCE /* setenv */
#include <transient/boxcar.h>
#include <transient/boxcar_predict.h>

#include "bench_device.h"
#include "common/test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "boxcar_test_configs.h"
#include "boxcar_test_signals.h"

/* ---- helpers ------------------------------------------------------------- */

static const char *cfg_name(const tr_boxcar_config *c, char *buf, size_t len)
{
    if (c->algorithm == TR_BOXCAR_BOXDIT)
        snprintf(buf, len, "BD-%u%s max %u", c->widths[0], c->nwidths > 1 ? "..." : "",
                 c->max_width);
    else if (c->algorithm == TR_BOXCAR_IGRID)
        snprintf(buf, len, "IG(%u) P=%u max %u", c->depth, c->layers, c->max_width);
    else
        snprintf(buf, len, "ideal %u", c->max_width);
    return buf;
}

/*
 * A whole stream through a new object: chunk sizes 1..3 for the first
 * `small` samples, then random sizes in [0, max_chunk] (max_chunk 0: the rest
 * in one call); then flush. Writes (n + latency) * nchan outputs.
 */
static int run_stream(const tr_boxcar_config *cfg, const float *x, size_t n, size_t small,
                      size_t max_chunk, tu_rng *rng, float *snr, int32_t *width,
                      uint64_t *nonfinite)
{
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(cfg, &err);
    if (!q) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return 0;
    }
    const uint32_t C = cfg->nchan;
    size_t done = 0;
    int ok = 1;
    while (done < n) {
        size_t m = n - done;
        if (done < small)
            m = (size_t)tu_range(rng, 1, 3);
        else if (max_chunk > 0)
            m = (size_t)tu_range(rng, 0, (long)max_chunk);
        if (m > n - done) m = n - done;
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
    if (ok && tr_boxcar_backend(q) !=
                  (cfg->backend == TR_BACKEND_CPU ? TR_BACKEND_CPU : TR_BACKEND_CUDA)) {
        fprintf(stderr, "object runs on %s\n", tr_backend_name(tr_boxcar_backend(q)));
        ok = 0;
    }
    if (nonfinite) *nonfinite = tr_boxcar_nonfinite(q);
    tr_boxcar_destroy(q);
    return ok;
}

/* 1 when width L is evaluated at position p by the plan. */
static int evaluated(const tr_boxcar_plan *plan, size_t p, uint32_t L)
{
    for (uint32_t i = 0; i < tr_boxcar_plan_stages(plan); i++) {
        const tr_boxcar_stage *s = tr_boxcar_plan_stage(plan, i);
        if (p % s->stride) continue;
        if (L < s->width_first) continue;
        if ((L - s->width_first) % s->width_step) continue;
        if ((L - s->width_first) / s->width_step < s->nwidths) return 1;
    }
    return 0;
}

/* S/N of boxcar (p, L) of channel c in double (fixed white normalisation),
 * non-finite samples replaced by the mean as the normalisation does. */
static double snr_of(const float *x, uint32_t C, uint32_t c, size_t p, uint32_t L,
                     double mean, double sigma)
{
    double acc = 0.0;
    for (uint32_t j = 0; j < L; j++) {
        const float v = x[(p + j) * C + c];
        acc += isfinite(v) ? (double)v : mean;
    }
    return (acc - L * mean) / (sqrt((double)L) * sigma);
}

typedef struct {
    size_t compared, bad_snr, bad_width, width_diff;
    double worst;
} cmp_stats;

/* GPU outputs (yg, wg) against the reference (yr, wr) of a search of latency
 * L (the plan's, plus the window held by measured statistics); with fixed = 1
 * every width difference is checked against the definition. */
static void compare(const tr_boxcar_plan *plan, uint32_t L, const float *x, size_t n,
                    uint32_t C, const float *yr, const int32_t *wr, const float *yg,
                    const int32_t *wg, int fixed, double mean, double sigma, cmp_stats *s,
                    const char *what)
{
    const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
    int printed = 0;
    for (size_t i = 0; i < (n + L) * C; i++) {
        const double d = fabs((double)yg[i] - (double)yr[i]);
        const double rel = d / (1.0 + fabs((double)yr[i]));
        s->compared++;
        if (rel > s->worst || isnan(rel)) s->worst = isnan(rel) ? INFINITY : rel;
        if (!(rel <= tol)) {
            s->bad_snr++;
            if (printed++ < 5)
                fprintf(stderr,
                        "  %s: output %zu (position %lld, channel %zu): S/N %.7g, "
                        "reference %.7g (widths %d, %d)\n",
                        what, i / C, (long long)(i / C) - L, i % C, yg[i], yr[i], wg[i],
                        wr[i]);
        }
        if (wg[i] == wr[i]) continue;
        s->width_diff++;
        const size_t k = i / C;
        const uint32_t c = (uint32_t)(i % C);
        if (k < L || wg[i] <= 0 || !evaluated(plan, k - L, (uint32_t)wg[i]) ||
            k - L + (size_t)wg[i] > n) {
            s->bad_width++;
            if (printed++ < 5)
                fprintf(stderr, "  %s: output %zu channel %u: width %d not evaluated\n",
                        what, k, c, wg[i]);
            continue;
        }
        if (fixed) {
            const double alt = snr_of(x, C, c, k - L, (uint32_t)wg[i], mean, sigma);
            const double lim = 2.0 * tol * (1.0 + fabs((double)yr[i]));
            if (!(fabs((double)yr[i] - alt) <= lim)) {
                s->bad_width++;
                if (printed++ < 5)
                    fprintf(stderr,
                            "  %s: output %zu channel %u: width %d (S/N %.7g) vs "
                            "reference %d (%.7g)\n",
                            what, k, c, wg[i], alt, wr[i], yr[i]);
            }
        }
    }
}

static void add_nonfinite(tu_rng *r, float *x, size_t n, uint32_t C, int count)
{
    for (int k = 0; k < count; k++) {
        const size_t i = (size_t)tu_range(r, 0, (long)(n * C - 1));
        const int kind = (int)tu_range(r, 0, 2);
        x[i] = kind == 0 ? NAN : (kind == 1 ? INFINITY : -INFINITY);
    }
}

/* ---- 1. variants against the reference ----------------------------------- */

static void test_variants(void)
{
    tu_rng r = {77};
    const uint32_t aa[5] = {32, 16, 16, 16, 8};
    tr_boxcar_config cfgs[] = {
        boxdit(32, 1500),  boxdit(16, 800),  boxdit(8, 600),    boxdit_list(aa, 5, 2000),
        boxdit(32, 8192),  boxdit(4, 100),   boxdit(6, 300),    igrid(1, 0, 1000),
        igrid(2, 0, 900),  igrid(3, 0, 700), igrid(1, 0, 8192), igrid(2, 2, 500),
        igrid(1, 16, 700), ideal(64),        ideal(1),          ideal(37),
        igrid(3, 0, 3)};
    const size_t ncfg = sizeof cfgs / sizeof cfgs[0];
    const tr_variant vars[] = {TR_VARIANT_FAST, TR_VARIANT_PAPER};
    for (size_t k = 0; k < ncfg; k++)
        for (int v = 0; v < 2; v++) {
            char name[96], what[160];
            tr_boxcar_config c = cfgs[k];
            cfg_name(&c, name, sizeof name);
            snprintf(what, sizeof what, "%s %s", tr_variant_name(vars[v]), name);
            const int measured = (k + v) % 3 == 2;
            c.nchan = (uint32_t)tu_range(&r, 1, 6);
            const double mean = 3.0, sigma = 2.0;
            if (measured) {
                c.norm.mode = TR_BOXCAR_NORM_WHITE;
                c.norm.window = 4096;
                c.norm.history = 2;
                c.norm.init_mean = mean;
                c.norm.init_sigma = sigma;
            } else {
                fixed_norm(&c, mean, sigma);
            }
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            CHECK(plan != NULL, "%s: plan: %s", what, err.message);
            if (!plan) continue;
            /* measured statistics: the search holds the first window */
            const uint32_t C = c.nchan, L = tr_boxcar_plan_latency(plan) +
                                            (measured ? c.norm.window : 0);
            const size_t n = (size_t)tu_range(&r, 3000, 20000);
            const size_t tot = (n + L) * C;
            float *x = noise(&r, n * C, mean, sigma);
            add_pulses(&r, x, n, C, 30, tr_boxcar_plan_lend(plan), sigma, 30);
            add_nonfinite(&r, x, n, C, 7);
            float *yr = malloc(tot * sizeof(float)), *yg = malloc(tot * sizeof(float)),
                  *y1 = malloc(tot * sizeof(float));
            int32_t *wr = malloc(tot * sizeof(int32_t)),
                    *wg = malloc(tot * sizeof(int32_t)),
                    *w1 = malloc(tot * sizeof(int32_t));
            uint64_t nf_ref = 0, nf_gpu = 0, nf_1 = 0;
            c.backend = TR_BACKEND_CPU;
            c.variant = TR_VARIANT_REFERENCE;
            CHECK(run_stream(&c, x, n, 0, 0, &r, yr, wr, &nf_ref), "%s: reference run",
                  what);
            c.backend = TR_BACKEND_CUDA;
            c.variant = vars[v];
            c.batch = (size_t)tu_range(&r, 1000, 9000);
            const int ok = run_stream(&c, x, n, 0, 0, &r, yg, wg, &nf_gpu);
            CHECK(ok, "%s: GPU run", what);
            if (ok) {
                cmp_stats s = {0, 0, 0, 0, 0.0};
                compare(plan, L, x, n, C, yr, wr, yg, wg, !measured, mean, sigma, &s,
                        what);
                CHECK(s.bad_snr == 0 && s.bad_width == 0,
                      "%s: %zu of %zu S/N outside tolerance %.2g (worst %.3g), %zu bad "
                      "widths",
                      what, s.bad_snr, s.compared,
                      TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan)), s.worst,
                      s.bad_width);
                /* measured tables: widths may differ only at near ties */
                CHECK(!measured || s.width_diff * 1000 <= s.compared,
                      "%s: %zu width differences", what, s.width_diff);
                CHECK(nf_gpu == nf_ref, "%s: %llu non-finite counted, reference %llu",
                      what, (unsigned long long)nf_gpu, (unsigned long long)nf_ref);
                printf("%-28s nchan %u n %6zu: worst rel. S/N error %.2e (tol %.2e), "
                       "%zu width differences\n",
                       what, C, n, s.worst, TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan)),
                       s.width_diff);
                c.batch = (size_t)tu_range(&r, 500, 5000);
                CHECK(run_stream(&c, x, n, 40, 2 * L + 300, &r, y1, w1, &nf_1),
                      "%s: chunked GPU run", what);
                size_t diff = 0;
                for (size_t i = 0; i < tot; i++)
                    diff += memcmp(&y1[i], &yg[i], sizeof(float)) != 0 || w1[i] != wg[i];
                CHECK(diff == 0, "%s: %zu outputs depend on the chunking", what, diff);
                CHECK(nf_1 == nf_ref, "%s: chunked run counted %llu non-finite", what,
                      (unsigned long long)nf_1);
            }
            free(x);
            free(yr);
            free(yg);
            free(y1);
            free(wr);
            free(wg);
            free(w1);
            tr_boxcar_plan_destroy(plan);
        }
}

/* ---- 2. device buffers --------------------------------------------------- */

/* m positions of device outputs dy, dw (channel-major when cm) into y, w
 * (time-major) through the host scratch buf, wbuf; 0 on failure. */
static int fetch_outputs(const void *dy, const void *dw, size_t m, uint32_t C, int cm,
                         float *buf, int32_t *wbuf, float *y, int32_t *w)
{
    if (tr_bench_dev_download(buf, dy, m * C * 4) != TR_OK ||
        tr_bench_dev_download(wbuf, dw, m * C * 4) != TR_OK)
        return 0;
    for (size_t j = 0; j < m; j++)
        for (uint32_t c = 0; c < C; c++) {
            y[j * C + c] = buf[cm ? c * m + j : j * C + c];
            w[j * C + c] = wbuf[cm ? c * m + j : j * C + c];
        }
    return 1;
}

static void test_device(void)
{
    tu_rng r = {4242};
    const tr_boxcar_config cfgs[] = {boxdit(16, 700), igrid(2, 0, 600), boxdit(32, 8192)};
    const tr_variant vars[] = {TR_VARIANT_FAST, TR_VARIANT_PAPER};
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++)
        for (int v = 0; v < 2; v++)
            for (int layout = 0; layout < 2; layout++) {
                char name[96], what[200];
                tr_boxcar_config c = cfgs[k];
                cfg_name(&c, name, sizeof name);
                snprintf(what, sizeof what, "device %s %s %s", tr_variant_name(vars[v]),
                         name, layout ? "channel-major" : "time-major");
                c.nchan = 4;
                fixed_norm(&c, 1.0, 0.5);
                c.backend = TR_BACKEND_CUDA;
                c.variant = vars[v];
                c.batch = 3000;
                c.device_layout = layout ? TR_BOXCAR_CHANNEL_MAJOR : TR_BOXCAR_TIME_MAJOR;
                const uint32_t C = c.nchan;
                const size_t n = 12000;
                float *x = noise(&r, n * C, 1.0, 0.5);
                add_pulses(&r, x, n, C, 10, 500, 0.5, 30);
                add_nonfinite(&r, x, n, C, 5);
                tr_error err;
                tr_boxcar *q = tr_boxcar_create(&c, &err);
                CHECK(q != NULL, "%s: create: %s", what, err.message);
                if (!q) {
                    free(x);
                    continue;
                }
                const uint32_t L = tr_boxcar_latency(q);
                const size_t tot = (n + L) * C;
                float *yh = malloc(tot * sizeof(float)),
                      *yd = malloc(tot * sizeof(float));
                int32_t *wh = malloc(tot * sizeof(int32_t)),
                        *wd = malloc(tot * sizeof(int32_t));
                float *buf = malloc(n * C * sizeof(float));
                int32_t *wbuf = malloc(n * C * sizeof(int32_t));
                uint64_t nf_h = 0;
                CHECK(run_stream(&c, x, n, 0, 0, &r, yh, wh, &nf_h), "%s: host run",
                      what);
                /* device run in three pieces */
                const size_t cuts[4] = {0, 1, 5003, n};
                void *dx = NULL, *dy = NULL, *dw = NULL;
                const size_t ny = (n > L ? n : L) * C; /* process or flush outputs */
                int ok = tr_bench_dev_alloc(0, n * C * 4, &dx) == TR_OK &&
                         tr_bench_dev_alloc(0, ny * 4, &dy) == TR_OK &&
                         tr_bench_dev_alloc(0, ny * 4, &dw) == TR_OK;
                CHECK(ok, "%s: device allocation: %s", what, tr_bench_last_error());
                for (int piece = 0; ok && piece < 3; piece++) {
                    const size_t a = cuts[piece], m = cuts[piece + 1] - a;
                    for (size_t j = 0; j < m; j++)
                        for (uint32_t ch = 0; ch < C; ch++)
                            buf[layout ? ch * m + j : j * C + ch] = x[(a + j) * C + ch];
                    ok = tr_bench_dev_upload(dx, buf, m * C * 4) == TR_OK;
                    tr_status s = tr_boxcar_process_device(q, dx, m, dy, dw);
                    CHECK(s == TR_OK, "%s: process_device: %s", what,
                          tr_boxcar_last_error(q));
                    ok = ok && s == TR_OK &&
                         fetch_outputs(dy, dw, m, C, layout, buf, wbuf, yd + a * C,
                                       wd + a * C);
                }
                /* the FAST variant flushes into device memory, the other to the host */
                if (ok && vars[v] == TR_VARIANT_FAST) {
                    float *fy = malloc(L * C * sizeof(float));
                    int32_t *fw = malloc(L * C * sizeof(int32_t));
                    CHECK(tr_boxcar_flush_device(q, dy, dw) == TR_OK,
                          "%s: flush_device: %s", what, tr_boxcar_last_error(q));
                    ok = fy && fw &&
                         fetch_outputs(dy, dw, L, C, layout, fy, fw, yd + n * C,
                                       wd + n * C);
                    free(fy);
                    free(fw);
                } else if (ok) {
                    CHECK(tr_boxcar_flush(q, yd + n * C, wd + n * C) == TR_OK,
                          "%s: flush: %s", what, tr_boxcar_last_error(q));
                }
                if (ok) {
                    size_t diff = 0;
                    for (size_t i = 0; i < tot; i++)
                        diff +=
                            memcmp(&yd[i], &yh[i], sizeof(float)) != 0 || wd[i] != wh[i];
                    CHECK(diff == 0, "%s: %zu outputs differ from the host path", what,
                          diff);
                    CHECK(tr_boxcar_nonfinite(q) == nf_h,
                          "%s: %llu non-finite counted, host path %llu", what,
                          (unsigned long long)tr_boxcar_nonfinite(q),
                          (unsigned long long)nf_h);
                }
                tr_bench_dev_free(dx);
                tr_bench_dev_free(dy);
                tr_bench_dev_free(dw);
                tr_boxcar_destroy(q);
                free(x);
                free(yh);
                free(yd);
                free(wh);
                free(wd);
                free(buf);
                free(wbuf);
            }
}

/* ---- 3. section 4.1: rectangular pulses against the predictor ------------- */

static void test_section41(void)
{
    const tr_boxcar_config cfgs[] = {boxdit(32, 1024),  boxdit(16, 1024),
                                     boxdit(8, 1024),   igrid(1, 0, 1024),
                                     igrid(2, 0, 1024), igrid(3, 0, 1024)};
    const tr_variant vars[] = {TR_VARIANT_FAST, TR_VARIANT_PAPER};
    for (size_t k = 0; k < sizeof cfgs / sizeof cfgs[0]; k++)
        for (int v = 0; v < 2; v++) {
            char name[96], what[160];
            tr_boxcar_config c = cfgs[k];
            cfg_name(&c, name, sizeof name);
            snprintf(what, sizeof what, "4.1 %s %s", tr_variant_name(vars[v]), name);
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            if (!plan) {
                CHECK(0, "%s: plan: %s", what, err.message);
                continue;
            }
            const uint32_t lend = tr_boxcar_plan_lend(plan);
            uint32_t A = 1;
            for (uint32_t i = 0; i < tr_boxcar_plan_stages(plan); i++)
                if (tr_boxcar_plan_stage(plan, i)->stride > A)
                    A = tr_boxcar_plan_stage(plan, i)->stride;
            /* widths: all of 1..48, then a dense sample up to L_end */
            uint32_t S[128];
            uint32_t nS = 0;
            for (uint32_t s = 1; s <= 48 && s <= lend; s++)
                S[nS++] = s;
            for (uint32_t s = 53; s <= lend && nS < 110; s += 1 + (lend - 48) / 60)
                S[nS++] = s;
            if (S[nS - 1] != lend) S[nS++] = lend;
            const uint32_t nsh = A <= 32 ? A : 32; /* shifts per width */
            const int all_shifts = nsh == A;
            const uint32_t C = nS * nsh;
            const size_t base = lend + A, n = base + A + lend + lend + 8;
            float *x = calloc(n * C, sizeof(float));
            for (uint32_t i = 0; i < nS; i++)
                for (uint32_t h = 0; h < nsh; h++) {
                    const uint32_t ch = i * nsh + h;
                    const size_t at = base + (size_t)h * A / nsh;
                    for (uint32_t j = 0; j < S[i]; j++)
                        x[(at + j) * C + ch] = (float)(1.0 / sqrt((double)S[i]));
                }
            c.nchan = C;
            fixed_norm(&c, 0.0, 1.0);
            c.backend = TR_BACKEND_CUDA;
            c.variant = vars[v];
            c.batch = 1 << 14;
            const uint32_t L = tr_boxcar_plan_latency(plan);
            float *y = malloc((n + L) * C * sizeof(float));
            int32_t *w = malloc((n + L) * C * sizeof(int32_t));
            tu_rng r = {1};
            const int ok = run_stream(&c, x, n, 0, 0, &r, y, w, NULL);
            CHECK(ok, "%s: run", what);
            /* predictions */
            const uint32_t tw = tr_boxcar_plan_total_widths(plan);
            uint32_t *pw = malloc(tw * sizeof(uint32_t)),
                     *ps = malloc(tw * sizeof(uint32_t));
            tr_boxcar_plan_list(plan, pw, ps, tw);
            double *pmax = malloc(lend * sizeof(double)),
                   *pmin = malloc(lend * sizeof(double));
            double *emax = malloc(lend * sizeof(double)),
                   *emin = malloc(lend * sizeof(double));
            CHECK(tr_boxcar_predict_plan(plan, lend, pmax, pmin, NULL, NULL, NULL,
                                         NULL) == TR_OK,
                  "%s: predictor", what);
            CHECK(tr_boxcar_predict_exact(pw, ps, tw, lend, emax, emin, NULL) == TR_OK,
                  "%s: exact predictor", what);
            const double tol = 1e-5;
            size_t bad = 0;
            double mean_loss = 0.0;
            for (uint32_t i = 0; ok && i < nS; i++) {
                double lo = INFINITY, hi = -INFINITY;
                for (uint32_t h = 0; h < nsh; h++) {
                    const uint32_t ch = i * nsh + h;
                    double best = -INFINITY;
                    for (size_t kk = 0; kk < n + L; kk++)
                        if (y[kk * C + ch] > best) best = y[kk * C + ch];
                    if (best < lo) lo = best;
                    if (best > hi) hi = best;
                }
                const uint32_t s = S[i];
                mean_loss += 1.0 - lo;
                int fine = hi <= pmax[s - 1] + tol && lo >= pmin[s - 1] - tol &&
                           hi <= emax[s - 1] + tol && lo >= emin[s - 1] - tol &&
                           fabs(hi - emax[s - 1]) <= tol;
                if (all_shifts) fine = fine && fabs(lo - emin[s - 1]) <= tol;
                if (!fine && bad++ < 5)
                    fprintf(stderr,
                            "  %s: S = %u: measured RSNR %.6f..%.6f, predicted "
                            "%.6f..%.6f (eqs. 31, 24), exact %.6f..%.6f\n",
                            what, s, lo, hi, pmin[s - 1], pmax[s - 1], emin[s - 1],
                            emax[s - 1]);
            }
            CHECK(bad == 0, "%s: %zu of %u widths outside the predicted bounds", what,
                  bad, nS);
            if (ok)
                printf("%-34s %u widths x %u shifts: all within bounds: %s, mean worst "
                       "loss %.3f\n",
                       what, nS, nsh, bad ? "NO" : "yes", mean_loss / nS);
            free(pw);
            free(ps);
            free(pmax);
            free(pmin);
            free(emax);
            free(emin);
            free(x);
            free(y);
            free(w);
            tr_boxcar_plan_destroy(plan);
        }
}

/* ---- 4. host path over many windows ------------------------------------- */

static size_t bits_differ(const float *a, const int32_t *aw, const float *b,
                          const int32_t *bw, size_t tot)
{
    size_t d = 0;
    for (size_t i = 0; i < tot; i++)
        d += memcmp(&a[i], &b[i], sizeof(float)) != 0 || aw[i] != bw[i];
    return d;
}

static void test_host_path(void)
{
    tu_rng r = {9090};
    const uint32_t aa[5] = {32, 16, 16, 16, 8};
    struct {
        tr_boxcar_config c;
        uint32_t nchan, window;
        size_t n;
    } cases[] = {{boxdit_list(aa, 5, 256), 1, 2048, 70000},
                 {boxdit(16, 800), 3, 4096, 40000},
                 {igrid(1, 0, 1000), 64, 2048, 9000},
                 {boxdit_list(aa, 5, 256), 64, 1024, 6000}};
    const size_t ncase = sizeof cases / sizeof cases[0];
    for (size_t k = 0; k < ncase; k++)
        for (int mode = 0; mode < 3; mode++) {
            char name[96], what[160];
            tr_boxcar_config c = cases[k].c;
            cfg_name(&c, name, sizeof name);
            const char *mname[3] = {"FIXED", "WHITE", "LEVELS"};
            snprintf(what, sizeof what, "host path %s %s", mname[mode], name);
            if (mode == 2 && k != 1) continue; /* LEVELS once */
            c.nchan = cases[k].nchan;
            const double mean = 3.0, sigma = 2.0;
            if (mode == 0) {
                fixed_norm(&c, mean, sigma);
            } else {
                c.norm.mode = mode == 1 ? TR_BOXCAR_NORM_WHITE : TR_BOXCAR_NORM_LEVELS;
                c.norm.window = cases[k].window;
                c.norm.history = 3;
                c.norm.init_mean = mean;
                c.norm.init_sigma = sigma;
            }
            tr_error err;
            tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
            CHECK(plan != NULL, "%s: plan: %s", what, err.message);
            if (!plan) continue;
            /* measured statistics: the search holds the first window */
            const uint32_t C = c.nchan,
                           L = tr_boxcar_plan_latency(plan) + (mode ? c.norm.window : 0);
            const size_t n = cases[k].n, tot = (n + L) * C;
            float *x = noise(&r, n * C, mean, sigma);
            add_pulses(&r, x, n, C, 40, tr_boxcar_plan_lend(plan), sigma, 30);
            add_nonfinite(&r, x, n, C, 9);
            float *yr = malloc(tot * sizeof(float)), *yg = malloc(tot * sizeof(float)),
                  *y1 = malloc(tot * sizeof(float));
            int32_t *wr = malloc(tot * sizeof(int32_t)),
                    *wg = malloc(tot * sizeof(int32_t)),
                    *w1 = malloc(tot * sizeof(int32_t));
            uint64_t nf_ref = 0, nf = 0;
            c.backend = TR_BACKEND_CPU;
            c.variant = TR_VARIANT_REFERENCE;
            CHECK(run_stream(&c, x, n, 0, 0, &r, yr, wr, &nf_ref), "%s: reference", what);
            c.backend = TR_BACKEND_CUDA;
            c.variant = TR_VARIANT_FAST;
            c.batch = (size_t)tu_range(&r, 20000, 200000);
            int ok = run_stream(&c, x, n, 0, 0, &r, yg, wg, &nf);
            CHECK(ok, "%s: GPU run", what);
            if (ok) {
                cmp_stats st = {0, 0, 0, 0, 0.0};
                compare(plan, L, x, n, C, yr, wr, yg, wg, mode == 0, mean, sigma, &st,
                        what);
                CHECK(st.bad_snr == 0 && st.bad_width == 0,
                      "%s: %zu of %zu S/N outside tolerance (worst %.3g), %zu bad widths",
                      what, st.bad_snr, st.compared, st.worst, st.bad_width);
                CHECK(mode == 0 || st.width_diff * 1000 <= st.compared,
                      "%s: %zu width differences", what, st.width_diff);
                CHECK(nf == nf_ref, "%s: %llu non-finite, reference %llu", what,
                      (unsigned long long)nf, (unsigned long long)nf_ref);
                printf("%-44s nchan %2u n %6zu: worst rel. S/N error %.2e, %zu width "
                       "differences\n",
                       what, C, n, st.worst, st.width_diff);
                /* random chunkings, chunk size 1 at the start */
                for (int rep = 0; rep < 2; rep++) {
                    c.batch = (size_t)tu_range(&r, 1000, 70000);
                    const size_t maxc = rep ? 3 * cases[k].window : 2 * L + 100;
                    ok = run_stream(&c, x, n, 30, maxc, &r, y1, w1, &nf);
                    CHECK(ok, "%s: chunked run", what);
                    const size_t d = ok ? bits_differ(yg, wg, y1, w1, tot) : 0;
                    CHECK(d == 0 && nf == nf_ref,
                          "%s: chunked run: %zu outputs differ, %llu non-finite", what, d,
                          (unsigned long long)nf);
                }
                /* page-locked buffers */
                tr_boxcar *h = tr_boxcar_create(&c, &err);
                float *px = h ? tr_boxcar_host_alloc(h, n * C * sizeof(float)) : NULL;
                float *py = h ? tr_boxcar_host_alloc(h, tot * sizeof(float)) : NULL;
                int32_t *pw = h ? tr_boxcar_host_alloc(h, tot * sizeof(int32_t)) : NULL;
                CHECK(px && py && pw, "%s: page-locked buffers", what);
                if (px && py && pw) {
                    memcpy(px, x, n * C * sizeof(float));
                    ok = run_stream(&c, px, n, 5, 5 * cases[k].window, &r, py, pw, &nf);
                    const size_t d = ok ? bits_differ(yg, wg, py, pw, tot) : 0;
                    CHECK(ok && d == 0 && nf == nf_ref,
                          "%s: page-locked run: %zu outputs differ, %llu non-finite",
                          what, d, (unsigned long long)nf);
                }
                tr_boxcar_host_free(h, px);
                tr_boxcar_host_free(h, py);
                tr_boxcar_host_free(h, pw);
                tr_boxcar_destroy(h);
                /* the former path: one search per window, CPU normalisation */
                setenv("TR_BOXCAR_CUDA_PERWINDOW", "1", 1);
                ok = run_stream(&c, x, n, 0, 7 * cases[k].window / 3, &r, y1, w1, &nf);
                unsetenv("TR_BOXCAR_CUDA_PERWINDOW");
                const size_t d = ok ? bits_differ(yg, wg, y1, w1, tot) : 0;
                CHECK(ok && d == 0 && nf == nf_ref,
                      "%s: per-window path: %zu outputs differ, %llu non-finite", what, d,
                      (unsigned long long)nf);
            }
            free(x);
            free(yr);
            free(yg);
            free(y1);
            free(wr);
            free(wg);
            free(w1);
            tr_boxcar_plan_destroy(plan);
        }
}

/* ---- 5. device buffers, measured statistics, window 0 held --------------- */

/*
 * The stream x (n positions, time-major) through q as device samples in
 * pieces (size 1 for the first 5, then 1..max_piece) and the flush into
 * device buffers (host buffers with host_flush): (n + latency) * nchan
 * outputs into y, w, time-major. 0 on failure.
 */
static int run_device(tr_boxcar *q, const float *x, size_t n, size_t max_piece,
                      int host_flush, tu_rng *r, float *y, int32_t *w)
{
    const uint32_t C = tr_boxcar_nchan(q), L = tr_boxcar_latency(q);
    const int cm = tr_boxcar_device_layout(q) == TR_BOXCAR_CHANNEL_MAJOR;
    const size_t ny = (n > L ? n : L) * C;
    float *buf = malloc(ny * sizeof(float));
    int32_t *wbuf = malloc(ny * sizeof(int32_t));
    void *dx = NULL, *dy = NULL, *dw = NULL;
    int ok = buf && wbuf && tr_bench_dev_alloc(0, (n ? n : 1) * C * 4, &dx) == TR_OK &&
             tr_bench_dev_alloc(0, ny * 4, &dy) == TR_OK &&
             tr_bench_dev_alloc(0, ny * 4, &dw) == TR_OK;
    CHECK(ok, "device allocation: %s", tr_bench_last_error());
    size_t done = 0, calls = 0;
    while (ok && done < n) {
        size_t m = calls++ < 5 ? 1 : (size_t)tu_range(r, 1, (long)max_piece);
        if (m > n - done) m = n - done;
        for (size_t j = 0; j < m; j++)
            for (uint32_t c = 0; c < C; c++)
                buf[cm ? c * m + j : j * C + c] = x[(done + j) * C + c];
        ok = tr_bench_dev_upload(dx, buf, m * C * 4) == TR_OK;
        const tr_status s = tr_boxcar_process_device(q, dx, m, dy, dw);
        CHECK(s == TR_OK, "process_device: %s", tr_boxcar_last_error(q));
        ok = ok && s == TR_OK &&
             fetch_outputs(dy, dw, m, C, cm, buf, wbuf, y + done * C, w + done * C);
        done += m;
    }
    if (ok && host_flush) {
        CHECK(tr_boxcar_flush(q, y + n * C, w + n * C) == TR_OK, "flush: %s",
              tr_boxcar_last_error(q));
    } else if (ok) {
        const tr_status s = tr_boxcar_flush_device(q, dy, dw);
        CHECK(s == TR_OK, "flush_device: %s", tr_boxcar_last_error(q));
        ok = s == TR_OK &&
             fetch_outputs(dy, dw, L, C, cm, buf, wbuf, y + n * C, w + n * C);
    }
    tr_bench_dev_free(dx);
    tr_bench_dev_free(dy);
    tr_bench_dev_free(dw);
    free(buf);
    free(wbuf);
    return ok;
}

static void test_device_held(void)
{
    tu_rng r = {5151};
    struct {
        tr_boxcar_config c;
        tr_boxcar_norm_mode mode;
        uint32_t nchan;
        size_t n;
        int layout;
    } cases[] = {
        {boxdit(16, 200), TR_BOXCAR_NORM_WHITE, 1, 9000, 0},
        {igrid(2, 0, 256), TR_BOXCAR_NORM_LEVELS, 3, 7000, 1},
        {boxdit(32, 256), TR_BOXCAR_NORM_WHITE, 70, 5000, 1},
        {boxdit(16, 200), TR_BOXCAR_NORM_LEVELS, 64, 4500, 0},
        {boxdit(16, 200), TR_BOXCAR_NORM_WHITE, 2, 1500, 0},  /* shorter than W */
        {igrid(1, 0, 128), TR_BOXCAR_NORM_LEVELS, 4, 700, 1}, /* shorter than W */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char name[96], what[200];
        tr_boxcar_config c = cases[k].c;
        cfg_name(&c, name, sizeof name);
        snprintf(what, sizeof what, "held device %s %s nchan %u n %zu %s",
                 cases[k].mode == TR_BOXCAR_NORM_WHITE ? "WHITE" : "LEVELS", name,
                 cases[k].nchan, cases[k].n,
                 cases[k].layout ? "channel-major" : "time-major");
        c.nchan = cases[k].nchan;
        c.norm.mode = cases[k].mode;
        c.norm.window = 2048;
        c.norm.history = 2;
        c.norm.init_mean = 3.0;
        c.norm.init_sigma = 2.0;
        c.backend = TR_BACKEND_CUDA;
        c.variant = TR_VARIANT_FAST;
        c.device_layout =
            cases[k].layout ? TR_BOXCAR_CHANNEL_MAJOR : TR_BOXCAR_TIME_MAJOR;
        const uint32_t C = c.nchan;
        const size_t n = cases[k].n;
        float *x = noise(&r, n * C, 3.0, 2.0);
        add_pulses(&r, x, n, C, 20, 200, 2.0, 30);
        add_nonfinite(&r, x, n, C, 7);
        for (uint32_t ch = 0; ch < C; ch++) { /* window 0 */
            x[3 * C + ch] = NAN;
            x[10 * C + ch] = ch % 2 ? INFINITY : -INFINITY;
        }
        tr_error err;
        tr_boxcar *h = tr_boxcar_create(&c, &err), *q = tr_boxcar_create(&c, &err);
        CHECK(h && q, "%s: create: %s", what, err.message);
        const uint32_t L = h ? tr_boxcar_latency(h) : 0;
        CHECK(!q || tr_boxcar_latency(q) == L, "%s: latency", what);
        const size_t tot = (n + L) * C;
        float *yh = malloc(tot * sizeof(float)), *yd = malloc(tot * sizeof(float)),
              *y2 = malloc(tot * sizeof(float));
        int32_t *wh = malloc(tot * sizeof(int32_t)), *wd = malloc(tot * sizeof(int32_t)),
                *w2 = malloc(tot * sizeof(int32_t));
        int ok = h && q && yh && yd && y2 && wh && wd && w2;
        /* the host path: statistics measured on the host, window 0 held there */
        ok = ok && tr_boxcar_process(h, x, n, yh, wh) == TR_OK &&
             tr_boxcar_flush(h, yh + n * C, wh + n * C) == TR_OK;
        CHECK(ok, "%s: host path: %s", what, h ? tr_boxcar_last_error(h) : "");
        ok = ok && run_device(q, x, n, 3000, 0, &r, yd, wd);
        if (ok) {
            const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_lend(h));
            size_t bad = 0, wdiff = 0, neg = 0, compared = 0;
            for (size_t i = 0; i < tot; i++) {
                if (i < (size_t)L * C) { /* positions < 0 */
                    neg += yd[i] != 0.0f || wd[i] != 0;
                    continue;
                }
                compared++;
                bad += !(fabs(yd[i] - yh[i]) <= tol * (1.0 + fabs(yh[i])));
                wdiff += wd[i] != wh[i];
            }
            /* the statistics are summed in another order on the device: a
             * width may differ where two boxcars are that close */
            CHECK(neg == 0 && bad == 0 && wdiff * 1000 <= compared,
                  "%s: %zu outputs < 0 not zero, %zu S/N off the host path, %zu of %zu "
                  "widths differ",
                  what, neg, bad, wdiff, compared);
            CHECK(tr_boxcar_nonfinite(q) == tr_boxcar_nonfinite(h),
                  "%s: %llu non-finite, host path %llu", what,
                  (unsigned long long)tr_boxcar_nonfinite(q),
                  (unsigned long long)tr_boxcar_nonfinite(h));
            CHECK(tr_boxcar_warnings(q) == tr_boxcar_warnings(h),
                  "%s: warnings \"%s\", host path \"%s\"", what, tr_boxcar_warning(q),
                  tr_boxcar_warning(h));
            CHECK(n >= 2048 || (tr_boxcar_warnings(q) & TR_BOXCAR_WARN_SHORT_STREAM),
                  "%s: short stream not reported", what);
            /* reset and reuse: other pieces, flush to the device and the host */
            for (int hf = 0; hf < 2; hf++) {
                CHECK(tr_boxcar_reset(q) == TR_OK, "%s: reset", what);
                ok = run_device(q, x, n, hf ? 40 : 5000, hf, &r, y2, w2);
                const size_t d = ok ? bits_differ(yd, wd, y2, w2, tot) : 0;
                CHECK(ok && d == 0, "%s: after reset (%s flush): %zu outputs differ",
                      what, hf ? "host" : "device", d);
            }
        }
        tr_boxcar_destroy(h);
        tr_boxcar_destroy(q);
        free(x);
        free(yh);
        free(yd);
        free(y2);
        free(wh);
        free(wd);
        free(w2);
    }
}

int main(void)
{
    char why[256];
    if (tr_cuda_device_count(why, sizeof why) == 0) {
        printf("test_boxcar_gpu: skipped (%s)\n", why);
        return 77;
    }
    test_host_path();
    test_variants();
    test_device();
    test_section41();
    test_device_held();
    return tu_finish("test_boxcar_gpu");
}
