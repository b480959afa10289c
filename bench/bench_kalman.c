/*
 * transient-bench --detector kalman: throughput of the Kalman-bank detector
 * (reference, cpu-fast, cuda-fast, cuda-paper) for Q = 4 and M = 92, 1024,
 * 10756, against the measured FP32 rate, and the speedup over the paper
 * baseline measured in the same run.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (published: M = 92:
 * 64 us/sample on the CPU, 124 us with the GPU; M = 10756: 1284 us on the
 * CPU, 278 us with the GPU).
 *
 *   transient-bench --detector kalman [--M 92,1024,10756] [--Q 4] [--json]
 *       [--variants reference,cpu-fast,cuda-fast,cuda-paper] [--seconds S]
 *       [--repeat R] [--device D] [--batch B]
 *
 * Timing: for each variant the number of samples is doubled until one run
 * takes at least S/4 seconds (default S = 1), then the median of R runs of
 * that many samples is reported (host variants: wall clock around
 * tr_kalman_process; CUDA: data already on the device, wall clock around
 * tr_kalman_process_device, which returns when done). Every run starts from
 * tr_kalman_reset.
 *
 * Ceiling: OPS_PER_SH(Q) floating-point operations per sample and hypothesis
 * (the 2n multiply-adds of the update z += K e, the 2Q of the companion
 * prediction counted as 2 each, and 12 for innovation, q_k, d_k and the
 * log-sum-exp term), over the measured FP32 FMA rate of one host core or of
 * the GPU: ceiling samples/s = rate / (OPS_PER_SH * (M - 1)).
 * Check: every fast variant's LLR against the reference's on the first
 * samples (|diff| <= 1e-3 max(1, |LLR|)).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_device.h"
#include "bench_host.h"
#include "transient_bench.h"

#include <transient/kalman.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KB_MAXM       8
#define KB_MAXREP     64
#define OPS_PER_SH(Q) (4.0 * 2.0 * (Q) + 4.0 * (Q) + 12.0)

static int kb_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    int json, repeat, device;
    double seconds;
    size_t batch;
    uint32_t Q, Ms[KB_MAXM];
    int nM;
    int want[4]; /* reference, cpu-fast, cuda-fast, cuda-paper */
    int explicit_variants;
} kb_options;

static int kb_failed;
static void kb_fail(const char *what, const char *why)
{
    fprintf(stderr, "transient-bench: kalman: %s: %s\n", what, why);
    kb_failed = 1;
}

/* Stable AR(Q) with poles of radius rad at angles th0, th0 + dth, ... */
static void kb_ar(uint32_t Q, double rad, double th0, double dth, double *a)
{
    double c[16] = {1.0};
    uint32_t deg = 0;
    for (uint32_t i = 0; deg < Q; i++) {
        double t[16] = {0};
        if (Q - deg >= 2) {
            const double th = th0 + dth * i, s1 = -2.0 * rad * cos(th), s2 = rad * rad;
            for (uint32_t l = 0; l <= deg; l++) {
                t[l] += c[l];
                t[l + 1] += s1 * c[l];
                t[l + 2] += s2 * c[l];
            }
            deg += 2;
        } else {
            for (uint32_t l = 0; l <= deg; l++) {
                t[l] += c[l];
                t[l + 1] -= rad * c[l];
            }
            deg += 1;
        }
        for (uint32_t l = 0; l <= deg; l++)
            c[l] = t[l];
    }
    for (uint32_t i = 0; i < Q; i++)
        a[i] = -c[i + 1];
}

/* Target strength: weaker for longer targets, so that the LLR of a burst
 * stays within the literal reference's double range (about +-700). */
static double kb_target_var(uint32_t M)
{
    return 0.3 * sqrt(92.0 / (double)M);
}

static tr_kalman_model *kb_model(uint32_t M, uint32_t Q, double *an, double *ax)
{
    kb_ar(Q, 0.8, 0.2, 0.6, an);
    kb_ar(Q, 0.9, 1.0, 0.7, ax);
    tr_kalman_design d = tr_kalman_design_default();
    d.M = M;
    d.noise_order = d.target_order = Q;
    d.noise_ar = an;
    d.target_ar = ax;
    d.noise_var = 1.0;
    d.target_var = kb_target_var(M);
    d.meas_var = 0.05;
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_design(&d, &err);
    if (!m) kb_fail("design", err.message);
    return m;
}

/* Noise with a burst every 4 M samples, deterministic. */
static void kb_signal(float *x, size_t n, uint32_t M, const double *an, const double *ax,
                      uint32_t Q)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    double nh[16] = {0}, xh[16] = {0};
    for (size_t t = 0; t < n; t++) {
        double g[3];
        for (int k = 0; k < 3; k++) { /* sum of 4 uniforms, variance 1 */
            double v = 0.0;
            for (int i = 0; i < 4; i++) {
                s = s * 6364136223846793005ull + 1442695040888963407ull;
                v += (double)(s >> 11) * (1.0 / 9007199254740992.0) - 0.5;
            }
            g[k] = v * sqrt(3.0);
        }
        double nv = g[0];
        for (uint32_t i = 0; i < Q; i++)
            nv += an[i] * nh[i];
        memmove(nh + 1, nh, 15 * sizeof(double));
        nh[0] = nv;
        const size_t ph = t % (4 * (size_t)M);
        double xv = 0.0;
        if (ph == 0) memset(xh, 0, sizeof xh);
        if (ph < M - 1) {
            xv = sqrt(kb_target_var(M)) * g[1];
            for (uint32_t i = 0; i < Q; i++)
                xv += ax[i] * xh[i];
            memmove(xh + 1, xh, 15 * sizeof(double));
            xh[0] = xv;
        }
        x[t] = (float)(nv + xv + sqrt(0.05) * g[2]);
    }
}

typedef struct {
    int ok;
    size_t samples;
    double seconds, sps;
} kb_timing;

/* Time one variant: doubling calibration, then the median of repeat runs. */
static kb_timing kb_time(const kb_options *o, tr_kalman *q, const float *x, size_t xcap,
                         const float *d_x, float *out, float *d_out)
{
    kb_timing t = {0, 0, 0.0, 0.0};
    size_t n = 256;
    double dt = 0.0;
    for (;;) {
        if (tr_kalman_reset(q) != TR_OK) return t;
        const double t0 = bh_now();
        tr_status s = d_x ? tr_kalman_process_device(q, d_x, n, d_out, NULL)
                          : tr_kalman_process(q, x, n, out, NULL);
        dt = bh_now() - t0;
        if (s != TR_OK) {
            kb_fail("process", tr_kalman_last_error(q));
            return t;
        }
        if (dt >= o->seconds / 4 || n * 2 > xcap) break;
        n *= 2;
    }
    double v[KB_MAXREP];
    for (int r = 0; r < o->repeat; r++) {
        tr_kalman_reset(q);
        const double t0 = bh_now();
        tr_status s = d_x ? tr_kalman_process_device(q, d_x, n, d_out, NULL)
                          : tr_kalman_process(q, x, n, out, NULL);
        v[r] = bh_now() - t0;
        if (s != TR_OK) {
            kb_fail("process", tr_kalman_last_error(q));
            return t;
        }
    }
    qsort(v, (size_t)o->repeat, sizeof(double), kb_cmp);
    t.seconds = o->repeat % 2 ? v[o->repeat / 2]
                              : 0.5 * (v[o->repeat / 2 - 1] + v[o->repeat / 2]);
    t.samples = n;
    t.sps = (double)n / t.seconds;
    t.ok = 1;
    return t;
}

static tr_kalman *kb_open(const kb_options *o, const tr_kalman_model *m, tr_backend b,
                          tr_variant v)
{
    tr_kalman_config c = tr_kalman_config_default();
    c.backend = b;
    c.variant = v;
    c.device = o->device;
    c.Ns = tr_kalman_model_M(m) / 4;
    if (o->batch) c.batch = o->batch;
    tr_error err;
    tr_kalman *q = tr_kalman_create(&c, m, &err);
    if (!q)
        kb_fail(bench_variant_names[v == TR_VARIANT_REFERENCE ? 0
                                    : b == TR_BACKEND_CPU     ? 1
                                    : v == TR_VARIANT_FAST    ? 2
                                                              : 3],
                err.message);
    return q;
}

/* Worst |a - ref| / (1e-3 max(1, |ref|)) over n samples (up to the first
 * sample where the reference leaves its range). */
static double kb_check(const float *a, const float *ref, size_t n)
{
    double w = 0.0;
    for (size_t i = 0; i < n && isfinite(ref[i]); i++) {
        const double r = ref[i], tol = 1e-3 * (fabs(r) > 1.0 ? fabs(r) : 1.0);
        const double e = fabs((double)a[i] - r) / tol;
        if (!(e <= w)) w = e;
    }
    return w;
}

static void kb_run_M(const kb_options *o, uint32_t M, int have_cuda, double cpu_fma,
                     double gpu_fma)
{
    double an[16], ax[16];
    tr_kalman_model *m = kb_model(M, o->Q, an, ax);
    if (!m) return;
    const double ops = OPS_PER_SH(o->Q) * (double)(M - 1);
    /* Enough input for the fastest variant: about 2 s at 5e8 samples/s (GPU)
     * or the CPU's pace; capped by memory. */
    size_t xcap = (size_t)1 << 22;
    if (have_cuda && (o->want[2] || o->want[3])) xcap = (size_t)1 << 27;
    const size_t ncheck = M > 5000 ? 3000 : 20000;
    float *x = malloc(xcap * sizeof(float)), *out = malloc(xcap * sizeof(float));
    float *ref = malloc(ncheck * sizeof(float)), *chk = malloc(ncheck * sizeof(float));
    if (!x || !out || !ref || !chk) {
        kb_fail("memory", "cannot allocate the input");
        goto done;
    }
    kb_signal(x, xcap, M, an, ax, o->Q);
    {
        tr_kalman *r = kb_open(o, m, TR_BACKEND_CPU, TR_VARIANT_REFERENCE);
        if (!r) goto done;
        tr_kalman_process(r, x, ncheck, ref, NULL);
        tr_kalman_destroy(r);
    }
    kb_timing res[4];
    double worst[4];
    memset(res, 0, sizeof res);
    for (int v = 0; v < 4; v++)
        worst[v] = -1.0;
    void *d_x = NULL, *d_out = NULL;
    if (have_cuda && (o->want[2] || o->want[3])) {
        if (tr_bench_dev_alloc(o->device, xcap * sizeof(float), &d_x) != TR_OK ||
            tr_bench_dev_alloc(o->device, xcap * sizeof(float), &d_out) != TR_OK ||
            tr_bench_dev_upload(d_x, x, xcap * sizeof(float)) != TR_OK) {
            kb_fail("device memory", tr_bench_last_error());
            goto devdone;
        }
    }
    for (int v = 0; v < 4; v++) {
        if (!o->want[v]) continue;
        if (v >= 2 && !have_cuda) continue;
        const tr_backend b = v >= 2 ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
        const tr_variant var = v == 0   ? TR_VARIANT_REFERENCE
                               : v == 3 ? TR_VARIANT_PAPER
                                        : TR_VARIANT_FAST;
        tr_kalman *q = kb_open(o, m, b, var);
        if (!q) continue;
        /* check first, on the same path as the timing */
        if (v == 0) {
            worst[v] = 0.0;
        } else if (v == 1) {
            tr_kalman_process(q, x, ncheck, chk, NULL);
            worst[v] = kb_check(chk, ref, ncheck);
        } else {
            if (tr_kalman_process_device(q, (const float *)d_x, ncheck, (float *)d_out,
                                         NULL) == TR_OK &&
                tr_bench_dev_download(chk, d_out, ncheck * sizeof(float)) == TR_OK)
                worst[v] = kb_check(chk, ref, ncheck);
            else
                kb_fail(bench_variant_names[v], tr_kalman_last_error(q));
        }
        res[v] = kb_time(o, q, x, v == 0 ? (ncheck < xcap ? ncheck * 4 : xcap) : xcap,
                         v >= 2 ? (const float *)d_x : NULL, out, (float *)d_out);
        tr_kalman_destroy(q);
    }
    /* print */
    for (int v = 0; v < 4; v++) {
        if (!res[v].ok) continue;
        const int gpu = v >= 2;
        const double rate = gpu ? gpu_fma : cpu_fma;
        const double ceil_sps = rate > 0 ? rate / ops : 0.0;
        const double base = res[3].ok ? res[3].sps : 0.0;
        const int ok = worst[v] >= 0 && worst[v] <= 1.0;
        /* published: M = 92: 64 us (CPU), 124 us (GPU); M = 10756: 1284 us, 278 us */
        const double pub = M == 92 ? 1e6 / 64.0 : M == 10756 ? 1e6 / 278.0 : 0.0;
        if (o->json) {
            printf("{\"type\":\"result\",\"detector\":\"kalman\",\"variant\":\"%s\","
                   "\"backend\":\"%s\",\"mode\":\"%s\",\"M\":%u,\"Q\":%u,\"samples\":%zu,"
                   "\"seconds\":%.9g,\"samples_per_s\":%.9g,"
                   "\"ops_per_sample_hypothesis\":%g,\"ceiling\":\"%s\","
                   "\"ceiling_samples_per_s\":%.9g,\"ratio\":%.6g,",
                   bench_variant_names[v], gpu ? "cuda" : "cpu", gpu ? "device" : "host",
                   M, o->Q, res[v].samples, res[v].seconds, res[v].sps, OPS_PER_SH(o->Q),
                   gpu ? "gpu_fp32_fma" : "host_fma_1core", ceil_sps,
                   ceil_sps > 0 ? res[v].sps / ceil_sps : 0.0);
            if (base > 0 && v != 3)
                printf("\"baseline\":\"cuda-paper\",\"speedup\":%.6g,",
                       res[v].sps / base);
            if (pub > 0)
                printf("\"paper_published_best_samples_per_s\":%.6g,"
                       "\"speedup_vs_published\":%.6g,",
                       pub, res[v].sps / pub);
            printf("\"check_samples\":%zu,\"worst_diff_over_tol\":%.3g,\"ok\":%s}\n",
                   ncheck, worst[v], ok ? "true" : "false");
        } else {
            char sp[32] = "-";
            if (base > 0 && v != 3) snprintf(sp, sizeof sp, "%.1fx", res[v].sps / base);
            printf("%-11s M=%-6u %10zu %10.4f %12.4e %7.2f%% %10s %9.2e %s\n",
                   bench_variant_names[v], M, res[v].samples, res[v].seconds, res[v].sps,
                   ceil_sps > 0 ? 100.0 * res[v].sps / ceil_sps : 0.0, sp, worst[v],
                   ok ? "ok" : "MISMATCH");
        }
        if (!ok) kb_failed = 1;
        fflush(stdout);
    }
devdone:
    tr_bench_dev_free(d_x);
    tr_bench_dev_free(d_out);
done:
    free(x);
    free(out);
    free(ref);
    free(chk);
    tr_kalman_model_destroy(m);
}

static void kb_usage(FILE *f)
{
    fprintf(
        f,
        "usage: transient-bench --detector kalman [--M 92,1024,10756] [--Q 4] [--json]\n"
        "         [--variants reference,cpu-fast,cuda-fast,cuda-paper]\n"
        "         [--seconds S] [--repeat R] [--device D] [--batch B]\n");
}

static int kb_parse_list(const char *v, kb_options *o)
{
    o->nM = 0;
    const char *p = v;
    while (*p && o->nM < KB_MAXM) {
        char *e;
        const unsigned long m = strtoul(p, &e, 10);
        if (e == p || m < 3 || m > TR_KALMAN_MAX_M) return -1;
        o->Ms[o->nM++] = (uint32_t)m;
        p = *e == ',' ? e + 1 : e;
        if (*e && *e != ',') return -1;
    }
    return o->nM > 0 ? 0 : -1;
}

int kalman_bench_main(int argc, char **argv)
{
    kb_options o;
    memset(&o, 0, sizeof o);
    o.repeat = 5;
    o.seconds = 1.0;
    o.Q = 4;
    o.nM = 3;
    o.Ms[0] = 92, o.Ms[1] = 1024, o.Ms[2] = 10756;
    for (int k = 0; k < 4; k++)
        o.want[k] = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            kb_usage(stdout);
            return 0;
        } else if (!v) {
            kb_usage(stderr);
            return 2;
        } else if (!strcmp(a, "--detector")) {
            i++;
        } else if (!strcmp(a, "--M")) {
            if (kb_parse_list(v, &o) != 0) return kb_usage(stderr), 2;
            i++;
        } else if (!strcmp(a, "--Q")) {
            o.Q = (uint32_t)atoi(v), i++;
            if (o.Q < 1 || o.Q > 6) return kb_usage(stderr), 2;
        } else if (!strcmp(a, "--variants")) {
            if (bench_parse_variants(v, o.want) != 0) return 2;
            o.explicit_variants = 1;
            i++;
        } else if (!strcmp(a, "--seconds")) {
            o.seconds = atof(v), i++;
            if (!(o.seconds > 0.0 && o.seconds < 1000.0)) return kb_usage(stderr), 2;
        } else if (!strcmp(a, "--repeat")) {
            o.repeat = atoi(v), i++;
            if (o.repeat < 1 || o.repeat > KB_MAXREP) return kb_usage(stderr), 2;
        } else if (!strcmp(a, "--device")) {
            o.device = atoi(v), i++;
        } else if (!strcmp(a, "--batch")) {
            o.batch = (size_t)strtoull(v, NULL, 10), i++;
        } else {
            fprintf(stderr, "transient-bench: bad option %s\n", a);
            kb_usage(stderr);
            return 2;
        }
    }
    char why[256] = "", cpu_name[256], esc[512];
    bh_cpu_model(cpu_name, sizeof cpu_name);
    const int ndev = tr_cuda_device_count(why, sizeof why);
    const int have_cuda = ndev > o.device;
    if (!have_cuda && o.explicit_variants && (o.want[2] || o.want[3])) {
        fprintf(stderr, "transient-bench: CUDA variants requested but unavailable: %s\n",
                why);
        return 2;
    }
    const char *how = "scalar";
    const double cpu_fma = bh_host_fma_rate(&how);
    double gpu_fma;
    tr_bench_device_info info;
    if (bench_device_fma(have_cuda, o.device, &info, &gpu_fma) != 0) return 1;
    if (o.json) {
        bench_json_env_head("kalman", cpu_name, cpu_fma, how);
        if (have_cuda) {
            bh_json_escape(esc, sizeof esc, info.name);
            printf("\"gpu\":\"%s\",\"compute_capability\":\"%d.%d\",\"sm_count\":%d,"
                   "\"fp32_fma_flops\":%.6g,",
                   esc, info.cc_major, info.cc_minor, info.sm_count, gpu_fma);
        } else {
            bh_json_escape(esc, sizeof esc, why);
            printf("\"gpu\":null,\"cuda_unavailable\":\"%s\",", esc);
        }
        printf(
            "\"Q\":%u,\"repeat\":%d,\"seconds\":%g,\"ops_per_sample_hypothesis\":%g}\n",
            o.Q, o.repeat, o.seconds, OPS_PER_SH(o.Q));
    } else {
        printf("transient-bench %s  kalman, Q = %u, median of %d\n", tr_version(), o.Q,
               o.repeat);
        printf("CPU: %s, 1-core FP32 FMA %.1f GFLOP/s (%s)\n", cpu_name, cpu_fma * 1e-9,
               how);
        if (have_cuda)
            printf("GPU: %s, FP32 FMA %.1f TFLOP/s\n", info.name, gpu_fma * 1e-12);
        else
            printf("GPU: none (%s)\n", why);
        printf("\n%-11s %-8s %10s %10s %12s %8s %10s %9s\n", "variant", "M", "samples",
               "seconds", "samples/s", "ceiling", "speedup", "diff/tol");
    }
    fflush(stdout);
    for (int i = 0; i < o.nM; i++)
        kb_run_M(&o, o.Ms[i], have_cuda, cpu_fma, gpu_fma);
    return kb_failed ? 1 : 0;
}
