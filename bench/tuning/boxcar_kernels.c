/*
 * Kernel-level throughput of the CUDA boxcar search (cuda/boxcar/boxcar_cuda.h) on
 * the paper's set-up: nchan DM trials x n samples, data on the device
 * (channel-major), L_end near 8192, FAST at several tile sizes (sparse
 * stages in a pass of their own, tr_cuda_boxcar_set_split; at the largest tile
 * also off, and with 16 positions per thread, tr_cuda_boxcar_set_positions)
 * and PAPER, with the bandwidth ceiling (read x once, write Y and W) and the
 * FP32 ceiling (4 operations per evaluated boxcar: add, fma = 2, compare),
 * a cross-check of FAST against PAPER on the same data and a bit-for-bit
 * check of FAST with both knobs changed (exit status 1 if a check fails).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020), 4.5.
 *
 * Built with CUDA (target boxcar_kernels, bench/tuning/boxcar_gpu_run.sh runs
 * it on a GPU host):
 *   BUILD/bench/tuning/boxcar_kernels [nchan] [n] [repeats]
 *       [algorithm [tile [split [positions]]]]
 * (the last four select one measurement, e.g. for a profiler). Prints one
 * JSON line per measurement.
 */
#include "bench_device.h"
#include <transient/boxcar.h>

#include "boxcar/boxcar_cuda.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char *name;
    tr_boxcar_config cfg;
} setup;

static tr_boxcar_config bd(uint32_t b)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_BOXDIT;
    c.widths[0] = b;
    c.nwidths = 1;
    c.max_width = 8192;
    return c;
}

/* AstroAccelerate's list (32, 16, 16, 16, 8, ...: the default configuration) */
static tr_boxcar_config aa(void)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_BOXDIT;
    c.max_width = 8192;
    return c;
}

static tr_boxcar_config ig(uint32_t d)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_IGRID;
    c.depth = d;
    c.max_width = 8192;
    return c;
}

/* Median seconds of `repeats` runs of n samples; 0 on failure. */
static double time_runs(tr_cuda_boxcar *ctx, const float *dx, size_t n, float *dy,
                        int32_t *dw, int repeats, tr_bench_timer *t)
{
    tr_error err;
    double *s = malloc((size_t)repeats * sizeof(double));
    if (tr_cuda_boxcar_run(ctx, dx, n, TR_BOXCAR_CHANNEL_MAJOR, 1, dy, dw, NULL, &err) !=
        TR_OK) {
        fprintf(stderr, "run: %s\n", err.message);
        free(s);
        return 0.0;
    }
    for (int r = 0; r < repeats; r++) {
        tr_bench_timer_start(t);
        tr_cuda_boxcar_run(ctx, dx, n, TR_BOXCAR_CHANNEL_MAJOR, 1, dy, dw, NULL, &err);
        tr_bench_timer_stop(t, &s[r]);
    }
    qsort(s, (size_t)repeats, sizeof(double), cmp_d);
    const double med = s[repeats / 2];
    free(s);
    return med;
}

int main(int argc, char **argv)
{
    const uint32_t nchan = argc > 1 ? (uint32_t)atoi(argv[1]) : 256;
    const size_t n = argc > 2 ? (size_t)atol(argv[2]) : 131072;
    const int repeats = argc > 3 ? atoi(argv[3]) : 7;
    /* optional filters (profiling one launch): algorithm name, FAST tile, split,
     * positions per thread */
    const char *only = argc > 4 ? argv[4] : NULL;
    const int only_tile = argc > 5 ? atoi(argv[5]) : 0;
    const int only_split = argc > 6 ? atoi(argv[6]) : -1;
    const int only_kq = argc > 7 ? atoi(argv[7]) : 0;
    tr_bench_device_info info;
    if (tr_bench_device_info_get(0, &info) != TR_OK) {
        fprintf(stderr, "no device: %s\n", tr_bench_last_error());
        return 77;
    }
    double bw = 0, fma = 0;
    tr_bench_device_copy_bw(0, (size_t)1 << 30, 5, &bw);
    tr_bench_device_fma_rate(0, 5, &fma);
    printf(
        "{\"type\":\"env\",\"gpu\":\"%s\",\"sm\":%d,\"copy_bw\":%.4g,\"fp32_flops\":%.4g,"
        "\"nchan\":%u,\"samples\":%zu}\n",
        info.name, info.sm_count, bw, fma, nchan, n);
    fflush(stdout);

    const size_t tot = (size_t)nchan * n;
    float *hx = malloc(tot * sizeof(float));
    uint64_t z = 12345;
    for (size_t i = 0; i < tot; i++) { /* uniform noise, mean 0, sigma 1 */
        z = z * 6364136223846793005ULL + 1442695040888963407ULL;
        hx[i] = (float)(((z >> 40) * (1.0 / 16777216.0) - 0.5) * 3.4641016);
    }
    void *dx = NULL, *dy = NULL, *dw = NULL, *dy2 = NULL, *dw2 = NULL;
    if (tr_bench_dev_alloc(0, tot * 4, &dx) || tr_bench_dev_alloc(0, tot * 4, &dy) ||
        tr_bench_dev_alloc(0, tot * 4, &dw) || tr_bench_dev_alloc(0, tot * 4, &dy2) ||
        tr_bench_dev_alloc(0, tot * 4, &dw2)) {
        fprintf(stderr, "alloc: %s\n", tr_bench_last_error());
        return 1;
    }
    tr_bench_dev_upload(dx, hx, tot * 4);
    tr_bench_timer *t = NULL;
    tr_bench_timer_create(0, &t);
    int checks_failed = 0;
    float *ya = malloc(tot * 4), *yb = malloc(tot * 4);
    int32_t *wa = malloc(tot * 4), *wb = malloc(tot * 4);

    setup su[] = {{"BD-AA", aa()},  {"BD-32", bd(32)}, {"BD-16", bd(16)}, {"BD-8", bd(8)},
                  {"IG(1)", ig(1)}, {"IG(2)", ig(2)},  {"IG(3)", ig(3)}};
    const uint32_t tiles[] = {2048, 4096, 8192};
    for (size_t k = 0; k < sizeof su / sizeof su[0]; k++) {
        tr_error err;
        if (only && strcmp(only, su[k].name) != 0) continue;
        tr_boxcar_plan *plan = tr_boxcar_plan_create(&su[k].cfg, &err);
        const double bps = tr_boxcar_plan_boxcars_per_sample(plan);
        const double t_bw = 12.0 / bw, t_op = 4.0 * bps / fma; /* seconds per sample */
        const double ceil_sps = 1.0 / (t_bw > t_op ? t_bw : t_op);
        double paper_sps = 0.0;
        for (int v = 1; v >= 0; v--) {
            const tr_variant var = v ? TR_VARIANT_PAPER : TR_VARIANT_FAST;
            /* FAST: tiles 2048/4096/8192 (split on, 8 positions per thread),
             * 8192 split off, 8192 with 16 positions per thread */
            const int ntiles = v ? 1 : 5;
            for (int tk = 0; tk < ntiles; tk++) {
                const int ti = tk < 3 ? tk : 2, split = tk != 3, kq = tk == 4 ? 16 : 8;
                if (!v && ((only_tile && (int)tiles[ti] != only_tile) ||
                           (only_split >= 0 && split != only_split) ||
                           (only_kq && kq != only_kq)))
                    continue;
                if (v && only_tile) continue;
                tr_cuda_boxcar *ctx = NULL;
                if (tr_cuda_boxcar_create(0, plan, nchan, var, n, &ctx, &err) != TR_OK) {
                    fprintf(stderr, "%s %s: create: %s\n", su[k].name,
                            tr_variant_name(var), err.message);
                    continue;
                }
                if (!v && (tr_cuda_boxcar_set_tile(ctx, tiles[ti], &err) != TR_OK ||
                           tr_cuda_boxcar_set_split(ctx, split, &err) != TR_OK ||
                           tr_cuda_boxcar_set_positions(ctx, kq, &err) != TR_OK)) {
                    fprintf(stderr, "tile %u: %s\n", tiles[ti], err.message);
                    tr_cuda_boxcar_destroy(ctx);
                    continue;
                }
                const double sec = time_runs(ctx, dx, n, dy, dw, repeats, t);
                const double sps = sec > 0 ? tot / sec : 0.0;
                if (v) paper_sps = sps;
                printf(
                    "{\"type\":\"kernel\",\"algorithm\":\"%s\",\"variant\":\"%s\","
                    "\"split\":%d,\"positions\":%d,\"tile\":%u,\"nchan\":%u,\"samples\":%"
                    "zu,\"lend\":%u,"
                    "\"boxcars_per_sample\":%.4f,\"seconds\":%.6g,\"samples_per_s\":%.4g,"
                    "\"ceiling_bw_sps\":%.4g,\"ceiling_fp32_sps\":%.4g,\"ratio\":%.4f,"
                    "\"speedup_vs_paper\":%.3f,\"realtime_ska\":%.1f}\n",
                    su[k].name, tr_variant_name(var), v ? 0 : split, v ? 0 : kq,
                    v ? 0 : tiles[ti], nchan, n, tr_boxcar_plan_lend(plan), bps, sec, sps,
                    1.0 / t_bw, 1.0 / t_op, sps / ceil_sps,
                    paper_sps > 0 ? sps / paper_sps : 0.0, sps / (6000.0 / 64e-6));
                fflush(stdout);
                tr_cuda_boxcar_destroy(ctx);
            }
        }
        /* FAST against PAPER on the first call of a fresh stream */
        tr_cuda_boxcar *a = NULL, *b = NULL;
        if (tr_cuda_boxcar_create(0, plan, nchan, TR_VARIANT_FAST, n, &a, &err) ==
                TR_OK &&
            tr_cuda_boxcar_create(0, plan, nchan, TR_VARIANT_PAPER, n, &b, &err) ==
                TR_OK &&
            tr_cuda_boxcar_run(a, dx, n, TR_BOXCAR_CHANNEL_MAJOR, 1, dy, dw, NULL,
                               &err) == TR_OK &&
            tr_cuda_boxcar_run(b, dx, n, TR_BOXCAR_CHANNEL_MAJOR, 1, dy2, dw2, NULL,
                               &err) == TR_OK) {
            tr_bench_dev_download(ya, dy, tot * 4);
            tr_bench_dev_download(yb, dy2, tot * 4);
            tr_bench_dev_download(wa, dw, tot * 4);
            tr_bench_dev_download(wb, dw2, tot * 4);
            const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
            size_t bad = 0, wdiff = 0;
            double worst = 0;
            for (size_t i = 0; i < tot; i++) {
                const double d =
                    fabs((double)ya[i] - yb[i]) / (1.0 + fabs((double)yb[i]));
                if (d > worst || d != d) worst = d != d ? INFINITY : d;
                bad += !(d <= 2 * tol);
                wdiff += wa[i] != wb[i];
            }
            /* the knobs give the same bits: split off + 16 positions per thread */
            size_t knob_diff = (size_t)-1;
            tr_cuda_boxcar *e = NULL;
            if (tr_cuda_boxcar_create(0, plan, nchan, TR_VARIANT_FAST, n, &e, &err) ==
                    TR_OK &&
                tr_cuda_boxcar_set_split(e, 0, &err) == TR_OK &&
                tr_cuda_boxcar_set_positions(e, 16, &err) == TR_OK &&
                tr_cuda_boxcar_run(e, dx, n, TR_BOXCAR_CHANNEL_MAJOR, 1, dy2, dw2, NULL,
                                   &err) == TR_OK) {
                tr_bench_dev_download(yb, dy2, tot * 4);
                tr_bench_dev_download(wb, dw2, tot * 4);
                knob_diff = 0;
                for (size_t i = 0; i < tot; i++)
                    knob_diff += memcmp(&ya[i], &yb[i], 4) != 0 || wa[i] != wb[i];
            } else {
                fprintf(stderr, "%s: knob check: %s\n", su[k].name, err.message);
            }
            tr_cuda_boxcar_destroy(e);
            checks_failed += !(bad == 0 && knob_diff == 0);
            printf("{\"type\":\"check\",\"algorithm\":\"%s\",\"fast_vs_paper_bad\":%zu,"
                   "\"worst_rel\":%.3g,\"width_diff\":%zu,\"fast_knobs_bit_diff\":%lld,"
                   "\"ok\":%s}\n",
                   su[k].name, bad, worst, wdiff,
                   knob_diff == (size_t)-1 ? -1LL : (long long)knob_diff,
                   bad == 0 && knob_diff == 0 ? "true" : "false");
        } else {
            fprintf(stderr, "%s: check: %s\n", su[k].name, err.message);
            checks_failed++;
        }
        tr_cuda_boxcar_destroy(a);
        tr_cuda_boxcar_destroy(b);
        tr_boxcar_plan_destroy(plan);
        fflush(stdout);
    }
    tr_bench_timer_destroy(t);
    tr_bench_dev_free(dx);
    tr_bench_dev_free(dy);
    tr_bench_dev_free(dw);
    tr_bench_dev_free(dy2);
    tr_bench_dev_free(dw2);
    free(hx);
    free(ya);
    free(yb);
    free(wa);
    free(wb);
    return checks_failed ? 1 : 0;
}
