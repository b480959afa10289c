/*
 * Kalman-bank detector on the GPU: throughput of the CUDA FAST variant against
 * the paper-faithful CUDA PAPER variant measured in the same run, with the
 * ceilings, a stage breakdown of FAST, and an agreement check FAST vs PAPER.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (M = 92 .. 10756, Q = 4).
 *
 * Built with CUDA (target kalman_gpu_bench, bench/tuning/kalman_gpu_run.sh
 * runs it on a GPU host):
 *   BUILD/bench/tuning/kalman_gpu_bench [--M 92,1024,10756] [--samples N]
 * [--paper-samples P]
 *                      [--repeat R] [--Q 4] [--no-ceilings]
 * Prints JSON lines: one "env" line, then per M a "result" line for each
 * variant (samples/s, the ceilings, the ratio to the nearer ceiling, FAST's
 * speedup over PAPER), a "stages" line (FAST milliseconds per stage) and a
 * "check" line (FAST vs PAPER on the PAPER samples, tolerance
 * 1e-3 max(1, |LLR|)). Data: AR(Q) noise with AR(Q) bursts, on the device.
 */
#define _POSIX_C_SOURCE 200112L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_device.h"
#include "kalman/kalman_internal.h"
#include "kalman/kalman_cuda.h"
#include <transient/kalman.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static uint64_t rs = 0x9e3779b97f4a7c15ULL;
static double unif(void)
{
    rs ^= rs << 13;
    rs ^= rs >> 7;
    rs ^= rs << 17;
    return ((rs >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}
static double gauss(void)
{
    return sqrt(-2.0 * log(unif())) * cos(6.283185307179586 * unif());
}

static int cmp_d(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "kalman_gpu_bench: %s: %s\n", what, why);
    exit(1);
}

/* Floating-point operations per sample and hypothesis of FAST: the filter
 * step (2Q FMAs update, 2Q-1 FMAs and 1 product for the companion rows, the
 * innovation, q_k, the compensated sum) and the LLR term (offset, exp,
 * running sum): 8Q + 14, exp counted as one. */
static double ops_per_sh(int Q)
{
    return 8.0 * Q + 14.0;
}

int main(int argc, char **argv)
{
    int Ms[8] = {92, 1024, 10756}, nM = 3, Q = 4, repeat = 5, ceilings = 1;
    long samples = 0, paper_samples = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--M") && i + 1 < argc) {
            nM = 0;
            for (char *t = strtok(argv[++i], ","); t && nM < 8; t = strtok(NULL, ","))
                Ms[nM++] = atoi(t);
        } else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
            samples = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--paper-samples") && i + 1 < argc) {
            paper_samples = atol(argv[++i]);
        } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
            repeat = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-ceilings")) {
            ceilings = 0; /* quick runs (sanitizers): skip the rate measurements */
        } else if (!strcmp(argv[i], "--Q") && i + 1 < argc) {
            Q = atoi(argv[++i]);
        } else {
            fprintf(stderr,
                    "usage: %s [--M a,b,c] [--samples N] [--paper-samples P] "
                    "[--repeat R] [--Q q]\n",
                    argv[0]);
            return 2;
        }
    }
    tr_bench_device_info info;
    if (tr_bench_device_info_get(0, &info) != TR_OK) die("device", tr_bench_last_error());
    double fma = 1, bw = 1;
    if (ceilings && tr_bench_device_fma_rate(0, 5, &fma) != TR_OK)
        die("fma rate", tr_bench_last_error());
    if (ceilings && tr_bench_device_copy_bw(0, (size_t)1 << 30, 5, &bw) != TR_OK)
        die("bandwidth", tr_bench_last_error());
    printf("{\"type\":\"env\",\"detector\":\"kalman\",\"gpu\":\"%s\",\"sm_count\":%d,"
           "\"fp32_fma_flops\":%.4e,\"device_copy_bw\":%.4e,\"Q\":%d}\n",
           info.name, info.sm_count, fma, bw, Q);
    fflush(stdout);

    for (int mi = 0; mi < nM; mi++) {
        const int M = Ms[mi];
        const long N = samples ? samples
                               : (M <= 128    ? 1L << 23
                                  : M <= 2048 ? 1L << 22
                                              : 1L << 20);
        const long P = paper_samples ? paper_samples : (M > 4096 ? 1000 : 2000);
        /* model: AR(Q) noise, AR(Q) target, rectangular envelope */
        double an[8] = {0}, ax[8] = {0};
        const double rn[8] = {0.5, -0.3, 0.2, -0.1, 0.05, -0.02, 0.01, 0};
        const double rx[8] = {0.7, -0.2, 0.1, -0.05, 0.02, -0.01, 0.005, 0};
        for (int i = 0; i < Q && i < 8; i++)
            an[i] = rn[i], ax[i] = rx[i];
        tr_kalman_design d = tr_kalman_design_default();
        d.M = (uint32_t)M;
        d.noise_order = d.target_order = (uint32_t)Q;
        d.noise_ar = an;
        d.target_ar = ax;
        d.noise_var = 1.0;
        d.meas_var = 0.05;
        d.target_var = M > 2000 ? 0.05 : 0.3;
        tr_error err;
        tr_kalman_model *m = tr_kalman_model_design(&d, &err);
        if (!m) die("design", err.message);
        const uint32_t Ns = (uint32_t)(M / 4 > 0 ? M / 4 : 1);

        /* data: noise with a burst every 3M samples */
        float *x = malloc((size_t)N * sizeof(float));
        double nh[8] = {0}, xh[8] = {0};
        for (long t = 0; t < N; t++) {
            double nv = gauss();
            for (int i = 0; i < Q; i++)
                nv += an[i] * nh[i];
            memmove(nh + 1, nh, 7 * sizeof(double));
            nh[0] = nv;
            double xv = 0;
            if (t % (3L * M) < M - 1) {
                xv = sqrt(d.target_var) * gauss();
                for (int i = 0; i < Q; i++)
                    xv += ax[i] * xh[i];
            }
            memmove(xh + 1, xh, 7 * sizeof(double));
            xh[0] = xv;
            x[t] = (float)(nv + xv + sqrt(d.meas_var) * gauss());
        }
        void *d_x = NULL, *d_l = NULL;
        if (tr_bench_dev_alloc(0, (size_t)N * sizeof(float), &d_x) != TR_OK ||
            tr_bench_dev_alloc(0, (size_t)N * sizeof(float), &d_l) != TR_OK ||
            tr_bench_dev_upload(d_x, x, (size_t)N * sizeof(float)) != TR_OK)
            die("device memory", tr_bench_last_error());

        tr_kalman_config cfg = tr_kalman_config_default();
        cfg.Ns = Ns;
        cfg.alpha = 1e-9;
        cfg.backend = TR_BACKEND_CUDA;
        cfg.batch = (size_t)1 << 20;
        tr_kalman *fast = tr_kalman_create(&cfg, m, &err);
        if (!fast) die("FAST create", err.message);
        cfg.variant = TR_VARIANT_PAPER;
        tr_kalman *paper = tr_kalman_create(&cfg, m, &err);
        if (!paper) die("PAPER create", err.message);

        /* FAST: warm-up, then repeats over the whole stream from reset */
        if (tr_kalman_process_device(fast, (const float *)d_x, N < 300000 ? N : 300000,
                                     (float *)d_l, NULL) != TR_OK)
            die("FAST", tr_kalman_last_error(fast));
        double *ts = malloc((size_t)repeat * sizeof(double));
        for (int r = 0; r < repeat; r++) {
            tr_kalman_reset(fast);
            const double t0 = now();
            if (tr_kalman_process_device(fast, (const float *)d_x, (size_t)N,
                                         (float *)d_l, NULL) != TR_OK)
                die("FAST", tr_kalman_last_error(fast));
            ts[r] = now() - t0;
        }
        qsort(ts, (size_t)repeat, sizeof(double), cmp_d);
        const double t_fast = ts[repeat / 2];
        const double sps_fast = N / t_fast;

        /* the same with one stream (no overlap of the normaliser and LLR with
         * the next block's diagonals) */
        double t_serial = 0;
        {
            setenv("TR_KALMAN_CUDA_SERIAL", "1", 1);
            cfg.variant = TR_VARIANT_FAST;
            tr_kalman *ser = tr_kalman_create(&cfg, m, &err);
            unsetenv("TR_KALMAN_CUDA_SERIAL");
            if (!ser) die("FAST serial create", err.message);
            for (int r = 0; r < repeat; r++) {
                tr_kalman_reset(ser);
                const double t0s = now();
                if (tr_kalman_process_device(ser, (const float *)d_x, (size_t)N,
                                             (float *)d_l, NULL) != TR_OK)
                    die("FAST serial", tr_kalman_last_error(ser));
                ts[r] = now() - t0s;
            }
            qsort(ts, (size_t)repeat, sizeof(double), cmp_d);
            t_serial = ts[repeat / 2];
            tr_kalman_destroy(ser);
        }

        /* PAPER: warm-up, then P samples */
        if (tr_kalman_process_device(paper, (const float *)d_x, 50, (float *)d_l, NULL) !=
            TR_OK)
            die("PAPER", tr_kalman_last_error(paper));
        tr_kalman_reset(paper);
        float *lp = malloc((size_t)P * sizeof(float)),
              *lf = malloc((size_t)P * sizeof(float));
        double t0 = now();
        if (tr_kalman_process_device(paper, (const float *)d_x, (size_t)P, (float *)d_l,
                                     NULL) != TR_OK)
            die("PAPER", tr_kalman_last_error(paper));
        const double t_paper = now() - t0;
        const double sps_paper = P / t_paper;
        tr_bench_dev_download(lp, d_l, (size_t)P * sizeof(float));
        tr_kalman_reset(fast);
        if (tr_kalman_process_device(fast, (const float *)d_x, (size_t)P, (float *)d_l,
                                     NULL) != TR_OK)
            die("FAST", tr_kalman_last_error(fast));
        tr_bench_dev_download(lf, d_l, (size_t)P * sizeof(float));
        double worst = 0;
        for (long i = 0; i < P; i++) {
            const double tol = 1e-3 * (fabs(lp[i]) > 1 ? fabs(lp[i]) : 1.0);
            const double e = fabs((double)lf[i] - lp[i]) / tol;
            if (!(e <= worst)) worst = e;
        }

        /* stage breakdown of FAST through the context itself */
        double stage[5] = {0};
        {
            tr_kalman_params p;
            p.Ns = Ns;
            p.log_alpha = log(1e-9);
            p.log1m_alpha = log1p(-1e-9);
            tr_cuda_kalman *ctx = NULL;
            if (tr_cuda_kalman_create(0, m, &p, TR_VARIANT_FAST, (size_t)1 << 20, &ctx,
                                      &err) != TR_OK ||
                tr_cuda_kalman_profile(ctx, 1, NULL, &err) != TR_OK ||
                tr_cuda_kalman_run_device(ctx, (const float *)d_x, (size_t)N,
                                          (float *)d_l, NULL, 0.0, &err) != TR_OK ||
                tr_cuda_kalman_profile(ctx, 0, stage, &err) != TR_OK)
                die("FAST stages", err.message);
            tr_cuda_kalman_destroy(ctx);
        }

        const double sh = (double)(M - 1);
        const double ceil_ops = fma / (sh * ops_per_sh(Q));
        const double ceil_mem = bw / (sh * 8.0); /* register buffer written + read */
        const double ceil = ceil_ops < ceil_mem ? ceil_ops : ceil_mem;
        printf(
            "{\"type\":\"result\",\"detector\":\"kalman\",\"variant\":\"cuda-fast\","
            "\"M\":%d,\"Q\":%d,\"Ns\":%u,\"samples\":%ld,\"seconds\":%.6f,"
            "\"samples_per_s\":%.4e,\"ops_per_sample_hypothesis\":%.0f,"
            "\"ceiling_ops_samples_per_s\":%.4e,\"ceiling_mem_samples_per_s\":%.4e,"
            "\"ratio\":%.4f,\"speedup\":%.1f,\"paper_cpu_gpu_2019_samples_per_s\":%s}\n",
            M, Q, Ns, N, t_fast, sps_fast, ops_per_sh(Q), ceil_ops, ceil_mem,
            sps_fast / ceil, sps_fast / sps_paper,
            M == 92      ? "15625"
            : M == 10756 ? "3597"
                         : "null");
        printf("{\"type\":\"result\",\"detector\":\"kalman\","
               "\"variant\":\"cuda-fast-one-stream\",\"M\":%d,\"Q\":%d,\"samples\":%ld,"
               "\"seconds\":%.6f,\"samples_per_s\":%.4e}\n",
               M, Q, N, t_serial, N / t_serial);
        printf("{\"type\":\"result\",\"detector\":\"kalman\",\"variant\":\"cuda-paper\","
               "\"M\":%d,\"Q\":%d,\"Ns\":%u,\"samples\":%ld,\"seconds\":%.6f,"
               "\"samples_per_s\":%.4e,\"us_per_sample\":%.2f}\n",
               M, Q, Ns, P, t_paper, sps_paper, 1e6 / sps_paper);
        printf(
            "{\"type\":\"stages\",\"detector\":\"kalman\",\"M\":%d,\"samples\":%ld,"
            "\"ms_prep_noise_filter\":%.3f,\"ms_diagonals\":%.3f,\"ms_normaliser\":%.3f,"
            "\"ms_llr\":%.3f,\"ms_shift\":%.3f}\n",
            M, N, stage[0], stage[1], stage[2], stage[3], stage[4]);
        printf("{\"type\":\"check\",\"detector\":\"kalman\",\"M\":%d,\"samples\":%ld,"
               "\"worst_diff_over_tol\":%.4g,\"ok\":%s}\n",
               M, P, worst, worst <= 1.0 ? "true" : "false");
        fflush(stdout);
        fprintf(stderr,
                "M=%5d FAST %.3e samples/s (%.1f%% of ceiling), PAPER %.3e "
                "samples/s, speedup %.0fx, FAST vs PAPER worst/tol %.3g\n",
                M, sps_fast, 100 * sps_fast / ceil, sps_paper, sps_fast / sps_paper,
                worst);
        tr_kalman_destroy(fast);
        tr_kalman_destroy(paper);
        tr_bench_dev_free(d_x);
        tr_bench_dev_free(d_l);
        tr_kalman_model_destroy(m);
        free(x);
        free(ts);
        free(lp);
        free(lf);
    }
    return 0;
}
