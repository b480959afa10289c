/*
 * transient-bench --detector boxcar: throughput of the boxcar single-pulse
 * search against the ceilings of the machine it runs on.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.5: 256 DM trials x 131072 samples, L_end = 8192, float32, and the
 * number of DM trials searched in real time at 64 us (eq. 21).
 *
 *   transient-bench --detector boxcar [--nchan C] [--samples N] [--max-width W]
 *       [--configs LIST] [--variants LIST] [--repeat R] [--ref-nchan C]
 *       [--ref-samples N] [--layout channel|time] [--batch B (default N)] [--device D]
 *       [--seed S] [--cuda-host] [--host-path] [--host-candidates]
 *       [--clock wall|cpu] [--json]
 *
 * --host-path: instead of the variants, the host-to-host path of the CUDA
 * backend (tr_boxcar_process with host buffers, calls of --batch samples per
 * channel, streaming for at least 0.4 s per case) with FIXED and WHITE
 * statistics: the former path (one synchronous search per statistics window,
 * TR_BOXCAR_CUDA_PERWINDOW=1) as the baseline, the present one with pageable
 * and page-locked buffers (tr_boxcar_host_alloc), with and without widths;
 * ceiling = the measured page-locked host-to-device bandwidth / 4 bytes per
 * sample. Then, with FIXED and WHITE, host samples to candidates only
 * (tr_boxcar_search_candidates, page-locked and pageable input: the S/N stay
 * on the GPU and are clustered there; mode "host-to-candidates"), against the
 * same ceiling. --host-candidates: these cases only.
 *
 * Configurations (--configs, comma separated): bd32, bd16, bd8 (constant
 * BoxDIT lists), aa (AstroAccelerate's 32,16,16,16,8), ig1, ig2, ig3 (IGRID
 * with the default layers), ideal. Default: bd32,bd16,bd8,aa,ig1,ig2,ig3.
 * Variants (--variants): reference, cpu-fast (host, one thread), cuda-fast,
 * cuda-paper (samples already in device memory, tr_boxcar_process_device,
 * timed with CUDA events; with --cuda-host also through tr_boxcar_process with
 * host buffers). The reference runs on the first --ref-nchan channels (4) and
 * the first latency + --ref-samples (16384) samples only (it is slow); its
 * rate counts the ref-samples positions it searched. Every other variant's
 * outputs on that part are compared with it (S/N within TR_BOXCAR_FAST_TOL,
 * widths equal except at near ties).
 *
 * --device-chain: with cuda-fast, also the whole device chain on the same
 * device samples, timed with CUDA events: the search followed by the
 * candidates on the device (tr_boxcar_candidates_process_device, threshold 7),
 * with FIXED statistics and with WHITE statistics measured on the device
 * (window 16384); the rate beside that of the search alone.
 *
 * Host timings use the wall clock, or with --clock cpu the CPU time of the
 * timing thread (for a shared host where other processes take turns on the
 * core; the host ceilings are then measured with that clock too). Device
 * timings always use CUDA events.
 *
 * Data: white Gaussian noise (mean 0, sigma 1) with rectangular pulses; the
 * normalisation is FIXED (mean 0, sigma 1) so that only the search is timed.
 *
 * Per result: samples/s (all channels), the real-time factor for SKA-like
 * data (6000 DM trials at 64 us = 9.375e7 samples/s), and two ceilings:
 *   ops:   FP32 operation rate / operations per sample, where an evaluated
 *          boxcar costs 4 operations (sum, scale, offset, compare) and every
 *          decimated or layer value 1 (plan: boxcars per sample); the rate is
 *          the measured FMA rate counted as 2 operations per FMA (one host
 *          core with AVX2, or the GPU);
 *   bytes: memory bandwidth / 12 bytes per sample (x in, S/N and width out;
 *          one host core's read bandwidth, or the device copy bandwidth).
 * Speedup: cpu-fast over reference, cuda-fast over cuda-paper (same run).
 * Exit status 1 when a variant fails or disagrees with the reference.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_device.h"
#include "transient_bench.h"

#include <transient/boxcar.h>
#include <transient/candidates.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BX_MAX_REPEAT 51
#define BX_SKA_RATE   (6000.0 / 64e-6) /* samples per second of SKA-like data */

enum { V_REF, V_CPU, V_CUDA, V_PAPER, V_N };

typedef struct {
    int json;
    uint32_t nchan, ref_nchan, max_width;
    size_t samples, ref_samples, batch;
    int repeat, device, cuda_host, host_path, host_cands, device_chain;
    uint64_t seed;
    tr_boxcar_layout layout;
    int want[V_N];
    char configs[256];
} bx_options;

static int bx_failed = 0;

/* Host timing clock: wall (default) or this thread's CPU time (--clock cpu, for
 * a shared host: the time the thread actually ran; not for device timings). */
static clockid_t bx_clock = CLOCK_MONOTONIC;

static double bx_now(void)
{
    struct timespec ts;
    clock_gettime(bx_clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bx_cmp(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double bx_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bx_cmp);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static void bx_fail(const char *what, const char *why)
{
    fprintf(stderr, "transient-bench: boxcar: %s: %s\n", what, why);
    bx_failed = 1;
}

/* ---- host ceilings --------------------------------------------------------- */

static volatile uint64_t bx_sink_u;
static volatile float bx_sink_f;

/* One core's read bandwidth over a buffer far larger than the caches. */
static double bx_host_read_bw(void)
{
    const size_t n = ((size_t)256 << 20) / 8;
    uint64_t *p = malloc(n * sizeof *p);
    if (!p) return 0.0;
    for (size_t i = 0; i < n; i++)
        p[i] = i * 0x9e3779b97f4a7c15ull;
    double t[5];
    for (int r = 0; r < 6; r++) {
        const double t0 = bx_now();
        uint64_t a = 0, b = 0, c = 0, d = 0;
        for (size_t i = 0; i + 3 < n; i += 4) {
            a += p[i];
            b += p[i + 1];
            c += p[i + 2];
            d += p[i + 3];
        }
        bx_sink_u = a ^ b ^ c ^ d;
        if (r > 0) t[r - 1] = bx_now() - t0;
    }
    free(p);
    return (double)(n * 8) / bx_median(t, 5);
}

typedef float bx_v8 __attribute__((vector_size(32)));

#if defined(__GNUC__) && defined(__x86_64__)
__attribute__((target("avx2,fma"))) static float bx_fma_avx2(long iters)
{
    bx_v8 v[8], a, b;
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 8; j++)
            v[k][j] = 1.0f + 0.001f * (float)(k * 8 + j);
    for (int j = 0; j < 8; j++) {
        a[j] = 0.999999f;
        b[j] = 1e-7f;
    }
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < 8; k++)
            v[k] = __builtin_ia32_vfmaddps256(v[k], a, b);
    float s = 0.0f;
    for (int k = 0; k < 8; k++)
        for (int j = 0; j < 8; j++)
            s += v[k][j];
    return s;
}
#endif

/* One core's FP32 rate (2 operations per FMA), or 0 without AVX2/FMA. */
static double bx_host_fp32_rate(void)
{
#if defined(__GNUC__) && defined(__x86_64__)
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0.0;
    const long iters = 20000000;
    double best = 0.0;
    for (int r = 0; r < 3; r++) {
        const double t0 = bx_now();
        bx_sink_f = bx_fma_avx2(iters);
        const double rate = 2.0 * 64.0 * (double)iters / (bx_now() - t0);
        if (rate > best) best = rate;
    }
    return best;
#else
    return 0.0;
#endif
}

/* ---- configurations --------------------------------------------------------- */

typedef struct {
    char name[16];
    tr_boxcar_config cfg;
} bx_config;

static int bx_parse_config(const char *tok, uint32_t max_width, bx_config *out)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.max_width = max_width;
    if (!strcmp(tok, "bd32") || !strcmp(tok, "bd16") || !strcmp(tok, "bd8")) {
        c.algorithm = TR_BOXCAR_BOXDIT;
        c.widths[0] = (uint32_t)atoi(tok + 2);
        c.nwidths = 1;
        snprintf(out->name, sizeof out->name, "BD-%u", c.widths[0]);
    } else if (!strcmp(tok, "aa")) {
        snprintf(out->name, sizeof out->name, "BD-AA");
    } else if (!strcmp(tok, "ig1") || !strcmp(tok, "ig2") || !strcmp(tok, "ig3")) {
        c.algorithm = TR_BOXCAR_IGRID;
        c.depth = (uint32_t)(tok[2] - '0');
        snprintf(out->name, sizeof out->name, "IG(%u)", c.depth);
    } else if (!strcmp(tok, "ideal")) {
        c.algorithm = TR_BOXCAR_IDEAL;
        snprintf(out->name, sizeof out->name, "ideal");
    } else {
        return -1;
    }
    c.norm.mode = TR_BOXCAR_NORM_FIXED;
    c.norm.fixed_mean = 0.0;
    c.norm.fixed_sigma = 1.0;
    out->cfg = c;
    return 0;
}

/* ---- data ------------------------------------------------------------------ */

static uint64_t bx_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double bx_unif(uint64_t *s)
{
    return (double)(bx_next(s) >> 11) * (1.0 / 9007199254740992.0) + 1e-300;
}

/* Channel-major noise x[c * n + k] with pulses, and its time-major copy. */
static void bx_make_data(uint64_t seed, uint32_t C, size_t n, uint32_t max_w, float *cm,
                         float *tm)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dULL + 1;
    const size_t tot = (size_t)C * n;
    for (size_t i = 0; i + 1 < tot; i += 2) {
        const double r = sqrt(-2.0 * log(bx_unif(&s))),
                     a = 6.283185307179586 * bx_unif(&s);
        cm[i] = (float)(r * cos(a));
        cm[i + 1] = (float)(r * sin(a));
    }
    if (tot % 2) cm[tot - 1] = 0.0f;
    const size_t pulses = tot / 65536 + 1;
    for (size_t k = 0; k < pulses; k++) {
        const uint32_t c = (uint32_t)(bx_next(&s) % C);
        const uint32_t w = 1 + (uint32_t)(bx_next(&s) % max_w);
        const size_t p = (size_t)(bx_next(&s) % n);
        const float amp = (float)(8.0 / sqrt((double)w));
        for (uint32_t j = 0; j < w && p + j < n; j++)
            cm[(size_t)c * n + p + j] += amp;
    }
    for (uint32_t c = 0; c < C; c++)
        for (size_t k = 0; k < n; k++)
            tm[k * C + c] = cm[(size_t)c * n + k];
}

/* ---- results --------------------------------------------------------------- */

typedef struct {
    const char *variant, *backend, *mode;
    uint32_t nchan;
    size_t samples;
    double seconds, sps;
    double rel_diff; /* largest |S/N - reference| / (1 + |reference|), < 0: none */
    size_t width_diff;
    int ok, compared;
} bx_result;

static void bx_print(const bx_options *o, const bx_config *bc, const tr_boxcar_plan *plan,
                     const bx_result *r, double ops_rate, double bw, const char *baseline,
                     double speedup)
{
    const double bps = tr_boxcar_plan_boxcars_per_sample(plan);
    /* decimated values: BoxDIT one per 2^i samples per iteration after the first;
     * IGRID one per layer value; counted as 1 operation each */
    double dec = 0.0;
    for (uint32_t i = 1; i < tr_boxcar_plan_stages(plan); i++)
        dec += 1.0 / tr_boxcar_plan_stage(plan, i)->stride;
    const double ops = 4.0 * bps + dec;
    const double c_ops = ops_rate > 0 ? ops_rate / ops : 0.0;
    const double c_bytes = bw > 0 ? bw / 12.0 : 0.0;
    char list[160] = "";
    if (bc->cfg.algorithm == TR_BOXCAR_BOXDIT)
        for (uint32_t k = 0; k < bc->cfg.nwidths; k++) {
            char t[16];
            snprintf(t, sizeof t, "%s%u", k ? "," : "", bc->cfg.widths[k]);
            strncat(list, t, sizeof list - strlen(list) - 1);
        }
    if (o->json) {
        printf("{\"type\":\"result\",\"detector\":\"boxcar\",\"config\":\"%s\","
               "\"algorithm\":\"%s\",\"widths\":\"%s\",\"depth\":%u,\"layers\":%u,"
               "\"max_width\":%u,\"l_end\":%u,\"stages\":%u,\"boxcars_per_sample\":%.4f,"
               "\"variant\":\"%s\",\"backend\":\"%s\",\"mode\":\"%s\",\"layout\":\"%s\","
               "\"nchan\":%u,\"samples\":%zu,\"seconds\":%.6g,\"samples_per_s\":%.6g,"
               "\"realtime_ska\":%.4g,\"dm_trials_realtime_64us\":%.6g,"
               "\"ops_per_sample\":%.4f,\"ceiling_ops\":%.6g,\"ratio_ops\":%.4f,"
               "\"ceiling_bytes\":%.6g,\"ratio_bytes\":%.4f,\"baseline\":\"%s\","
               "\"speedup\":%.4g,\"max_rel_diff\":%.3g,\"width_diff\":%zu,\"ok\":%s}\n",
               bc->name, tr_boxcar_algorithm_name(bc->cfg.algorithm), list,
               tr_boxcar_plan_depth(plan), tr_boxcar_plan_layers(plan), bc->cfg.max_width,
               tr_boxcar_plan_lend(plan), tr_boxcar_plan_stages(plan), bps, r->variant,
               r->backend, r->mode,
               strncmp(r->mode, "device", 6)          ? "time-major"
               : o->layout == TR_BOXCAR_CHANNEL_MAJOR ? "channel-major"
                                                      : "time-major",
               r->nchan, r->samples, r->seconds, r->sps, r->sps / BX_SKA_RATE,
               r->sps * 64e-6, ops, c_ops, c_ops > 0 ? r->sps / c_ops : 0.0, c_bytes,
               c_bytes > 0 ? r->sps / c_bytes : 0.0, baseline ? baseline : "", speedup,
               r->rel_diff, r->width_diff, r->ok ? "true" : "false");
    } else {
        printf("%-7s %-10s %-6s %4u x %-8zu %10.4g samples/s  %8.3gx RT  ops %5.1f%%  "
               "bytes %5.1f%%  %s%s %.3gx  diff %.2g%s\n",
               bc->name, r->variant, r->mode, r->nchan, r->samples, r->sps,
               r->sps / BX_SKA_RATE, c_ops > 0 ? 100.0 * r->sps / c_ops : 0.0,
               c_bytes > 0 ? 100.0 * r->sps / c_bytes : 0.0, baseline ? "vs " : "",
               baseline ? baseline : "", baseline ? speedup : 0.0, r->rel_diff,
               r->ok ? "" : "  FAILED");
    }
    fflush(stdout);
}

/* Compare outputs of channels < rc and samples < rn (layouts: stride_k, stride_c)
 * with the reference (time-major, rc channels). */
static void bx_compare(const tr_boxcar_plan *plan, const float *ry, const int32_t *rw,
                       uint32_t rc, size_t rn, const float *y, const int32_t *w,
                       size_t stride_k, size_t stride_c, bx_result *r)
{
    const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
    double worst = 0.0;
    size_t bad = 0, wd = 0;
    for (size_t k = 0; k < rn; k++)
        for (uint32_t c = 0; c < rc; c++) {
            const double a = ry[k * rc + c], b = y[k * stride_k + c * stride_c];
            const double d = fabs(a - b) / (1.0 + fabs(a));
            if (d > worst || d != d) worst = d;
            if (!(d <= tol)) bad++;
            if (rw[k * rc + c] != w[k * stride_k + c * stride_c]) wd++;
        }
    r->rel_diff = worst;
    r->width_diff = wd;
    r->compared = 1;
    /* widths may differ at near ties only */
    r->ok = bad == 0 && wd * 1000 <= rn * rc + 1000;
}

static tr_boxcar *bx_open(const bx_config *bc, uint32_t nchan, tr_backend b, tr_variant v,
                          const bx_options *o)
{
    tr_boxcar_config c = bc->cfg;
    c.nchan = nchan;
    c.backend = b;
    c.variant = v;
    c.device = o->device;
    c.device_layout = o->layout;
    /* default: the whole block per launch, as the paper processes it */
    c.batch = o->batch ? o->batch : o->samples;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&c, &err);
    if (!q) bx_fail("create", err.message);
    return q;
}

/* Host timing: reset + process of n samples per channel, median of repeats. */
static int bx_time_host(tr_boxcar *q, const bx_options *o, const float *x, size_t n,
                        float *y, int32_t *w, double *sec)
{
    double t[BX_MAX_REPEAT];
    for (int r = 0; r <= o->repeat; r++) {
        if (tr_boxcar_reset(q) != TR_OK) {
            bx_fail("reset", tr_boxcar_last_error(q));
            return 0;
        }
        const double t0 = bx_now();
        if (tr_boxcar_process(q, x, n, y, w) != TR_OK) {
            bx_fail("process", tr_boxcar_last_error(q));
            return 0;
        }
        if (r > 0) t[r - 1] = bx_now() - t0; /* run 0 warms up */
    }
    *sec = bx_median(t, o->repeat);
    return 1;
}

static int bx_time_device(tr_boxcar *q, const bx_options *o, const float *d_x, size_t n,
                          float *d_y, int32_t *d_w, double *sec)
{
    tr_bench_timer *tm = NULL;
    if (tr_bench_timer_create(o->device, &tm) != TR_OK) {
        bx_fail("timer", tr_bench_last_error());
        return 0;
    }
    double t[BX_MAX_REPEAT];
    int ok = 1;
    for (int r = 0; r <= o->repeat && ok; r++) {
        if (tr_boxcar_reset(q) != TR_OK) {
            bx_fail("reset", tr_boxcar_last_error(q));
            ok = 0;
            break;
        }
        double s = 0.0;
        if (tr_bench_timer_start(tm) != TR_OK ||
            tr_boxcar_process_device(q, d_x, n, d_y, d_w) != TR_OK ||
            tr_bench_timer_stop(tm, &s) != TR_OK) {
            bx_fail("process_device", tr_boxcar_last_error(q));
            ok = 0;
            break;
        }
        if (r > 0) t[r - 1] = s;
    }
    tr_bench_timer_destroy(tm);
    if (ok) *sec = bx_median(t, o->repeat);
    return ok;
}

static void bx_usage(FILE *f)
{
    fprintf(f,
            "usage: transient-bench --detector boxcar [--nchan C] [--samples N]\n"
            "         [--max-width W] [--configs bd32,bd16,bd8,aa,ig1,ig2,ig3,ideal]\n"
            "         [--variants reference,cpu-fast,cuda-fast,cuda-paper]\n"
            "         [--repeat R] [--ref-nchan C] [--ref-samples N]\n"
            "         [--layout channel|time] [--batch B] [--device D] [--seed S]\n"
            "         [--cuda-host] [--host-path] [--host-candidates] [--device-chain]\n"
            "         [--clock wall|cpu] [--json]\n");
}

/* One configuration: every wanted variant. */
/* The device chain (--device-chain): search + candidates on the device with
 * FIXED and with WHITE measured on the device; rate beside the search alone. */
static void bx_device_chain(const bx_options *o, const bx_config *bc,
                            const tr_boxcar_plan *plan, const float *d_x, float *d_y,
                            int32_t *d_w, double search_sps, double dev_ops,
                            double dev_bw)
{
    const size_t n = o->samples, tot = (size_t)o->nchan * n;
    for (int white = 0; white < 2; white++) {
        bx_config c = *bc;
        c.cfg.norm.mode = white ? TR_BOXCAR_NORM_WHITE : TR_BOXCAR_NORM_FIXED;
        tr_boxcar *q = bx_open(&c, o->nchan, TR_BACKEND_CUDA, TR_VARIANT_FAST, o);
        tr_candidates_config cc = tr_candidates_config_default();
        cc.nchan = o->nchan;
        cc.threshold = 7.0f;
        cc.backend = TR_BACKEND_CUDA;
        cc.device = o->device;
        cc.start_position = q ? -(int64_t)tr_boxcar_latency(q) : 0;
        tr_error err;
        tr_candidates *cd = q ? tr_candidates_create(&cc, &err) : NULL;
        tr_bench_timer *tm = NULL;
        if (!q || !cd || tr_bench_timer_create(o->device, &tm) != TR_OK) {
            bx_fail("device chain", cd || !q ? tr_bench_last_error() : err.message);
            tr_candidates_destroy(cd);
            tr_boxcar_destroy(q);
            return;
        }
        double t[BX_MAX_REPEAT];
        int ok = 1;
        for (int r = 0; r <= o->repeat && ok; r++) {
            double sec = 0.0;
            ok = tr_boxcar_reset(q) == TR_OK && tr_candidates_reset(cd) == TR_OK &&
                 tr_bench_timer_start(tm) == TR_OK &&
                 tr_boxcar_process_device(q, d_x, n, d_y, d_w) == TR_OK &&
                 tr_boxcar_candidates_process_device(cd, q, 0, d_y, d_w, n) == TR_OK &&
                 tr_bench_timer_stop(tm, &sec) == TR_OK;
            if (r > 0) t[r - 1] = sec;
        }
        if (!ok) {
            bx_fail("device chain", tr_boxcar_last_error(q));
        } else {
            bx_result res = {bench_variant_names[V_CUDA],
                             "cuda",
                             white ? "device+white+candidates" : "device+candidates",
                             o->nchan,
                             n,
                             bx_median(t, o->repeat),
                             0,
                             -1,
                             0,
                             1,
                             0};
            res.sps = (double)tot / res.seconds;
            bx_print(o, bc, plan, &res, dev_ops, dev_bw, "search alone",
                     search_sps > 0 ? res.sps / search_sps : 0.0);
        }
        tr_bench_timer_destroy(tm);
        tr_candidates_destroy(cd);
        tr_boxcar_destroy(q);
    }
}

static void bx_run_config(const bx_options *o, const bx_config *bc, int have_cuda,
                          const float *cm, const float *tm, const float *rtm,
                          const float *d_x, float *d_y, int32_t *d_w, double host_ops,
                          double host_bw, double dev_ops, double dev_bw)
{
    tr_error err;
    tr_boxcar_plan *plan = tr_boxcar_plan_create(&bc->cfg, &err);
    if (!plan) {
        bx_fail(bc->name, err.message);
        return;
    }
    const uint32_t C = o->nchan, RC = o->ref_nchan;
    const size_t n = o->samples, tot = (size_t)C * n;
    /* the reference searches ref_samples positions after its latency */
    const size_t lat = tr_boxcar_plan_latency(plan);
    const size_t rn = lat + o->ref_samples < n ? lat + o->ref_samples : n;
    float *ry = malloc((size_t)RC * rn * sizeof(float));
    int32_t *rw = malloc((size_t)RC * rn * sizeof(int32_t));
    float *y = malloc(tot * sizeof(float));
    int32_t *w = malloc(tot * sizeof(int32_t));
    if (!ry || !rw || !y || !w) {
        bx_fail(bc->name, "out of host memory");
        goto done;
    }
    memset(y, 0, tot * sizeof(float));
    memset(w, 0, tot * sizeof(int32_t));
    /* reference on the prefix, always (the other variants are compared with it) */
    bx_result ref = {
        bench_variant_names[V_REF], "cpu", "host", RC, rn, 0, 0, -1, 0, 1, 0};
    int have_ref = 0;
    {
        tr_boxcar *q = bx_open(bc, RC, TR_BACKEND_CPU, TR_VARIANT_REFERENCE, o);
        bx_options o1 = *o;
        o1.repeat = o->want[V_REF] ? o->repeat : 1;
        if (q && bx_time_host(q, &o1, rtm, rn, ry, rw, &ref.seconds)) {
            /* steady-state rate: the positions it searched (the first `latency`
             * outputs are the zeros before the stream start and cost nothing) */
            ref.sps = (double)RC * (double)(rn > lat ? rn - lat : 1) / ref.seconds;
            have_ref = 1;
        }
        tr_boxcar_destroy(q);
    }
    if (have_ref && o->want[V_REF])
        bx_print(o, bc, plan, &ref, host_ops, host_bw, NULL, 1.0);
    if (o->want[V_CPU]) {
        bx_result r = {
            bench_variant_names[V_CPU], "cpu", "host", C, n, 0, 0, -1, 0, 1, 0};
        tr_boxcar *q = bx_open(bc, C, TR_BACKEND_CPU, TR_VARIANT_FAST, o);
        if (q && bx_time_host(q, o, tm, n, y, w, &r.seconds)) {
            r.sps = (double)tot / r.seconds;
            if (have_ref) bx_compare(plan, ry, rw, RC, rn, y, w, C, 1, &r);
            if (!r.ok) bx_failed = 1;
            bx_print(o, bc, plan, &r, host_ops, host_bw, have_ref ? "reference" : NULL,
                     have_ref ? r.sps / ref.sps : 0.0);
        }
        tr_boxcar_destroy(q);
    }
    double paper_sps = 0.0;
    for (int v = V_PAPER; v >= V_CUDA && have_cuda; v--) { /* paper first: baseline */
        if (!o->want[v]) continue;
        const tr_variant tv = v == V_PAPER ? TR_VARIANT_PAPER : TR_VARIANT_FAST;
        tr_boxcar *q = bx_open(bc, C, TR_BACKEND_CUDA, tv, o);
        if (!q) continue;
        bx_result r = {bench_variant_names[v], "cuda", "device", C, n, 0, 0, -1, 0, 1, 0};
        if (bx_time_device(q, o, d_x, n, d_y, d_w, &r.seconds)) {
            r.sps = (double)tot / r.seconds;
            if (tr_bench_dev_download(y, d_y, tot * sizeof(float)) != TR_OK ||
                tr_bench_dev_download(w, d_w, tot * sizeof(int32_t)) != TR_OK) {
                bx_fail("download", tr_bench_last_error());
            } else if (have_ref) {
                if (o->layout == TR_BOXCAR_CHANNEL_MAJOR)
                    bx_compare(plan, ry, rw, RC, rn, y, w, 1, n, &r);
                else
                    bx_compare(plan, ry, rw, RC, rn, y, w, C, 1, &r);
            }
            if (!r.ok) bx_failed = 1;
            if (v == V_PAPER) paper_sps = r.sps;
            const int base = v == V_CUDA && paper_sps > 0;
            bx_print(o, bc, plan, &r, dev_ops, dev_bw, base ? "cuda-paper" : NULL,
                     base ? r.sps / paper_sps : 1.0);
        }
        if (v == V_CUDA && o->device_chain && r.sps > 0)
            bx_device_chain(o, bc, plan, d_x, d_y, d_w, r.sps, dev_ops, dev_bw);
        if (o->cuda_host) {
            bx_result h = {
                bench_variant_names[v], "cuda", "host-to-host", C, n, 0, 0, -1, 0, 1, 0};
            if (bx_time_host(q, o, tm, n, y, w, &h.seconds)) {
                h.sps = (double)tot / h.seconds;
                if (have_ref) bx_compare(plan, ry, rw, RC, rn, y, w, C, 1, &h);
                if (!h.ok) bx_failed = 1;
                bx_print(o, bc, plan, &h, dev_ops, dev_bw, NULL, 1.0);
            }
        }
        tr_boxcar_destroy(q);
    }
    (void)cm;
done:
    free(ry);
    free(rw);
    free(y);
    free(w);
    tr_boxcar_plan_destroy(plan);
}

/* ---- host path (--host-path) ------------------------------------------------ */

/* One host-path case: calls of `batch` samples per channel through the data
 * (time-major, `samples` per channel, cycled) on one stream, for at least
 * 0.4 s after one warm-up call; the outputs of the warm-up call (stream
 * position 0) are kept in y0, w0 for the comparison between cases. */
typedef struct {
    const char *norm, *path, *buffers;
    int widths, threads;
    double sps, seconds;
    size_t processed;
    int ok;
} bx_hcase;

static void bx_host_case(const bx_options *o, const bx_config *bc, int white, int legacy,
                         int pinned, int widths, int threads, const float *tm, float *y0,
                         int32_t *w0, bx_hcase *hc)
{
    tr_boxcar_config c = bc->cfg;
    c.nchan = o->nchan;
    c.backend = TR_BACKEND_CUDA;
    c.variant = TR_VARIANT_FAST;
    c.device = o->device;
    c.batch = o->batch ? o->batch : o->samples;
    if (white) {
        c.norm.mode = TR_BOXCAR_NORM_WHITE; /* window 16384, history 4 */
        c.norm.init_mean = 0.0;
        c.norm.init_sigma = 1.0;
    }
    c.norm.threads = (uint32_t)threads;
    hc->ok = 0;
    if (legacy) setenv("TR_BOXCAR_CUDA_PERWINDOW", "1", 1);
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&c, &err);
    unsetenv("TR_BOXCAR_CUDA_PERWINDOW");
    if (!q) {
        bx_fail("host path create", err.message);
        return;
    }
    const uint32_t C = o->nchan;
    const size_t n = o->samples, b = c.batch < n ? c.batch : n, tot = (size_t)C * n;
    float *x = NULL, *y = NULL;
    int32_t *w = NULL;
    if (pinned) {
        x = tr_boxcar_host_alloc(q, tot * sizeof(float));
        y = tr_boxcar_host_alloc(q, tot * sizeof(float));
        w = tr_boxcar_host_alloc(q, tot * sizeof(int32_t));
    } else {
        x = malloc(tot * sizeof(float));
        y = malloc(tot * sizeof(float));
        w = malloc(tot * sizeof(int32_t));
    }
    if (!x || !y || !w) {
        bx_fail("host path", "cannot allocate the host buffers");
        goto done;
    }
    memcpy(x, tm, tot * sizeof(float));
    memset(y, 0, tot * sizeof(float));
    memset(w, 0, tot * sizeof(int32_t));
    /* warm-up call: position 0 */
    if (tr_boxcar_process(q, x, b, y, widths ? w : NULL) != TR_OK) {
        bx_fail("host path process", tr_boxcar_last_error(q));
        goto done;
    }
    memcpy(y0, y, (size_t)C * b * sizeof(float));
    memcpy(w0, w, (size_t)C * b * sizeof(int32_t));
    {
        size_t off = b % n, done_s = 0;
        const double t0 = bx_now();
        double t = t0;
        while (t - t0 < 0.4) {
            const size_t m = n - off < b ? n - off : b;
            if (tr_boxcar_process(q, x + off * C, m, y + off * C,
                                  widths ? w + off * C : NULL) != TR_OK) {
                bx_fail("host path process", tr_boxcar_last_error(q));
                goto done;
            }
            done_s += m;
            off = (off + m) % n;
            t = bx_now();
        }
        hc->seconds = t - t0;
        hc->processed = done_s * C;
        hc->sps = (double)hc->processed / hc->seconds;
        hc->ok = 1;
    }
done:
    if (pinned) {
        tr_boxcar_host_free(q, x);
        tr_boxcar_host_free(q, y);
        tr_boxcar_host_free(q, w);
    } else {
        free(x);
        free(y);
        free(w);
    }
    tr_boxcar_destroy(q);
}

/* The host path (tr_boxcar_process, host buffers, CUDA FAST) for FIXED and
 * WHITE statistics: the former path (CPU normalisation, one synchronous search
 * per statistics window, TR_BOXCAR_CUDA_PERWINDOW=1, pageable buffers) as the
 * baseline, then the present one with pageable and page-locked buffers, with
 * and without the width output. Ceiling: the measured pinned host-to-device
 * bandwidth over 4 bytes per sample (the input); the device-to-host bound of
 * the outputs (8 or 4 bytes per sample) is printed beside it. The outputs of
 * the first call of every case must equal the baseline's bit for bit. */
/* Host samples to candidates only (tr_boxcar_search_candidates: the S/N stay
 * on the device and are clustered there), page-locked or pageable input,
 * calls of `batch` samples for 0.4 s; rate against the H2D ceiling. */
static void bx_host_candidates(const bx_options *o, const bx_config *bc, int white,
                               int pinned, const float *tm, double h2d)
{
    tr_boxcar_config c = bc->cfg;
    c.nchan = o->nchan;
    c.backend = TR_BACKEND_CUDA;
    c.device = o->device;
    c.batch = o->batch ? o->batch : o->samples;
    c.norm.mode = white ? TR_BOXCAR_NORM_WHITE : TR_BOXCAR_NORM_FIXED;
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = o->nchan;
    cc.threshold = 7.0f;
    cc.backend = TR_BACKEND_CUDA;
    cc.device = o->device;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&c, &err);
    tr_candidates *cd = q ? tr_candidates_create(&cc, &err) : NULL;
    const uint32_t C = o->nchan;
    const size_t n = o->samples, b = c.batch < n ? c.batch : n, tot = (size_t)C * n;
    float *x = !q       ? NULL
               : pinned ? tr_boxcar_host_alloc(q, tot * sizeof(float))
                        : malloc(tot * sizeof(float));
    tr_candidate ev[256];
    size_t done_s = 0, events = 0, off = 0;
    double t0 = 0.0, t = 0.0;
    if (!q || !cd || !x) {
        bx_fail("host candidates", x || !cd ? err.message : "no page-locked memory");
        goto done;
    }
    memcpy(x, tm, tot * sizeof(float));
    t0 = t = bx_now();
    while (t - t0 < 0.4) {
        const size_t m = n - off < b ? n - off : b;
        if (tr_boxcar_search_candidates(cd, q, x + off * C, m) != TR_OK) {
            bx_fail("host candidates", tr_boxcar_last_error(q));
            goto done;
        }
        for (size_t k; (k = tr_candidates_read(cd, ev, 256)) > 0;)
            events += k;
        done_s += m;
        off = (off + m) % n;
        t = bx_now();
    }
    {
        const double sps = (double)done_s * C / (t - t0), ceil = h2d / 4.0;
        if (o->json)
            printf("{\"type\":\"result\",\"detector\":\"boxcar\",\"config\":\"%s\","
                   "\"variant\":\"cuda-fast\",\"backend\":\"cuda\","
                   "\"mode\":\"host-to-candidates\",\"norm\":\"%s\",\"nchan\":%u,"
                   "\"buffers\":\"%s\",\"batch\":%zu,\"samples\":%zu,"
                   "\"seconds\":%.6g,\"samples_per_s\":%.6g,\"events\":%zu,"
                   "\"ceiling\":\"h2d\",\"ceiling_samples_per_s\":%.6g,"
                   "\"ratio\":%.4f,\"ok\":true}\n",
                   bc->name, white ? "white" : "fixed", C,
                   pinned ? "page-locked" : "pageable", b, done_s * C, t - t0, sps,
                   events, ceil, sps / ceil);
        else
            printf("%-7s host-to-candidates %-5s %-11s %4u x batch %-8zu %10.4g "
                   "samples/s  %5.1f%% of H2D  %zu events\n",
                   bc->name, white ? "white" : "fixed",
                   pinned ? "page-locked" : "pageable", C, b, sps, 100.0 * sps / ceil,
                   events);
        fflush(stdout);
    }
done:
    if (x && pinned) tr_boxcar_host_free(q, x);
    if (!pinned) free(x);
    tr_candidates_destroy(cd);
    tr_boxcar_destroy(q);
}

static void bx_host_path(const bx_options *o, const bx_config *bc, const float *tm,
                         double h2d, double d2h)
{
    tr_error err;
    tr_boxcar_plan *plan = tr_boxcar_plan_create(&bc->cfg, &err);
    if (!plan) {
        bx_fail(bc->name, err.message);
        return;
    }
    const uint32_t C = o->nchan;
    const size_t b0 = o->batch && o->batch < o->samples ? o->batch : o->samples;
    const size_t nb = (size_t)C * b0;
    float *ya = malloc(nb * sizeof(float)), *yb = malloc(nb * sizeof(float));
    int32_t *wa = malloc(nb * sizeof(int32_t)), *wb = malloc(nb * sizeof(int32_t));
    if (!ya || !yb || !wa || !wb) {
        bx_fail("host path", "out of host memory");
        goto out;
    }
    for (int white = 0; white < 2 && !o->host_cands; white++) {
        bx_hcase base = {
            white ? "white" : "fixed", "per-window", "pageable", 1, 1, 0, 0, 0, 0};
        bx_host_case(o, bc, white, 1, 0, 1, 1, tm, ya, wa, &base);
        /* normalisation threads: 0 = automatic; WHITE also with 1 */
        const struct {
            int pinned, widths, threads;
        } cs[4] = {{0, 1, 0}, {1, 1, 0}, {1, 0, 0}, {1, 1, 1}};
        for (int k = -1; k < (white ? 4 : 3); k++) {
            bx_hcase h = base;
            int same = 1;
            if (k >= 0) {
                h.path = "one-launch";
                h.buffers = cs[k].pinned ? "pinned" : "pageable";
                h.widths = cs[k].widths;
                h.threads = cs[k].threads;
                bx_host_case(o, bc, white, 0, cs[k].pinned, cs[k].widths, cs[k].threads,
                             tm, yb, wb, &h);
                if (h.ok && base.ok) {
                    same = memcmp(ya, yb, nb * sizeof(float)) == 0 &&
                           (!h.widths || memcmp(wa, wb, nb * sizeof(int32_t)) == 0);
                    if (!same)
                        bx_fail("host path", "outputs differ from the per-window path");
                }
            }
            if (!h.ok) continue;
            const double ceil = h2d / 4.0, d2hb = d2h / (h.widths ? 8.0 : 4.0);
            const int is_base = k < 0;
            if (o->json)
                printf(
                    "{\"type\":\"result\",\"detector\":\"boxcar\",\"config\":\"%s\","
                    "\"algorithm\":\"%s\",\"max_width\":%u,\"l_end\":%u,"
                    "\"variant\":\"cuda-fast\",\"backend\":\"cuda\","
                    "\"mode\":\"host-to-host\",\"norm\":\"%s\",\"path\":\"%s\","
                    "\"buffers\":\"%s\",\"widths\":%s,\"norm_threads\":%d,"
                    "\"nchan\":%u,\"batch\":%zu,"
                    "\"samples\":%zu,\"seconds\":%.6g,\"samples_per_s\":%.6g,"
                    "\"ceiling\":\"h2d\",\"ceiling_samples_per_s\":%.6g,"
                    "\"ceiling_bytes\":%.6g,\"ratio\":%.4f,"
                    "\"d2h_bound_samples_per_s\":%.6g,\"ratio_d2h\":%.4f,"
                    "\"baseline\":\"%s\",\"speedup\":%.4g,\"same_bits\":%s,\"ok\":%s}\n",
                    bc->name, tr_boxcar_algorithm_name(bc->cfg.algorithm),
                    bc->cfg.max_width, tr_boxcar_plan_lend(plan), h.norm, h.path,
                    h.buffers, h.widths ? "true" : "false", h.threads, C, b0, h.processed,
                    h.seconds, h.sps, ceil, ceil, h.sps / ceil, d2hb, h.sps / d2hb,
                    is_base ? "" : "per-window",
                    is_base || !base.ok ? 1.0 : h.sps / base.sps, same ? "true" : "false",
                    same ? "true" : "false");
            else
                printf("%-7s host-to-host %-5s %-10s %-8s widths %-3s threads %d %4u x "
                       "batch %-8zu %10.4g samples/s  %5.1f%% of H2D  %5.1f%% of D2H  "
                       "%.3gx\n",
                       bc->name, h.norm, h.path, h.buffers, h.widths ? "on" : "off",
                       h.threads, C, b0, h.sps, 100.0 * h.sps / ceil,
                       100.0 * h.sps / d2hb,
                       is_base || !base.ok ? 1.0 : h.sps / base.sps);
            fflush(stdout);
        }
    }
    for (int white = 0; white < 2; white++)
        for (int pinned = 1; pinned >= 0; pinned--)
            bx_host_candidates(o, bc, white, pinned, tm, h2d);
out:
    free(ya);
    free(yb);
    free(wa);
    free(wb);
    tr_boxcar_plan_destroy(plan);
}

int boxcar_bench_main(int argc, char **argv)
{
    bx_options o;
    memset(&o, 0, sizeof o);
    o.nchan = 256;
    o.samples = 131072;
    o.max_width = 8192;
    o.ref_nchan = 4;
    o.ref_samples = 16384;
    o.repeat = 5;
    o.seed = 1;
    o.layout = TR_BOXCAR_CHANNEL_MAJOR;
    for (int k = 0; k < V_N; k++)
        o.want[k] = 1;
    int explicit_variants = 0;
    snprintf(o.configs, sizeof o.configs, "bd32,bd16,bd8,aa,ig1,ig2,ig3");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t z;
        if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "--device-chain")) {
            o.device_chain = 1;
        } else if (!strcmp(a, "--cuda-host")) {
            o.cuda_host = 1;
        } else if (!strcmp(a, "--host-path")) {
            o.host_path = 1;
        } else if (!strcmp(a, "--host-candidates")) {
            o.host_path = o.host_cands = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            bx_usage(stdout);
            return 0;
        } else if (!v) {
            bx_usage(stderr);
            return 2;
        } else if (!strcmp(a, "--detector")) {
            i++;
        } else if (!strcmp(a, "--nchan") && !bench_parse_size(v, &z) && z >= 1 &&
                   z <= TR_BOXCAR_MAX_NCHAN) {
            o.nchan = (uint32_t)z, i++;
        } else if (!strcmp(a, "--samples") && !bench_parse_size(v, &z) && z >= 1) {
            o.samples = z, i++;
        } else if (!strcmp(a, "--max-width") && !bench_parse_size(v, &z) && z >= 1 &&
                   z <= TR_BOXCAR_MAX_WIDTH) {
            o.max_width = (uint32_t)z, i++;
        } else if (!strcmp(a, "--ref-nchan") && !bench_parse_size(v, &z) && z >= 1) {
            o.ref_nchan = (uint32_t)z, i++;
        } else if (!strcmp(a, "--ref-samples") && !bench_parse_size(v, &z) && z >= 1) {
            o.ref_samples = z, i++;
        } else if (!strcmp(a, "--repeat") && !bench_parse_size(v, &z) && z >= 1 &&
                   z < BX_MAX_REPEAT) {
            o.repeat = (int)z, i++;
        } else if (!strcmp(a, "--batch") && !bench_parse_size(v, &z) && z >= 1) {
            o.batch = z, i++;
        } else if (!strcmp(a, "--device") && !bench_parse_size(v, &z) && z < 1024) {
            o.device = (int)z, i++;
        } else if (!strcmp(a, "--seed") && !bench_parse_size(v, &z)) {
            o.seed = (uint64_t)z, i++;
        } else if (!strcmp(a, "--layout") &&
                   (!strcmp(v, "channel") || !strcmp(v, "time"))) {
            o.layout =
                !strcmp(v, "time") ? TR_BOXCAR_TIME_MAJOR : TR_BOXCAR_CHANNEL_MAJOR;
            i++;
        } else if (!strcmp(a, "--clock") && (!strcmp(v, "wall") || !strcmp(v, "cpu"))) {
            bx_clock = !strcmp(v, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC;
            i++;
        } else if (!strcmp(a, "--configs")) {
            snprintf(o.configs, sizeof o.configs, "%s", v);
            i++;
        } else if (!strcmp(a, "--variants")) {
            explicit_variants = 1;
            if (bench_parse_variants(v, o.want)) return 2;
            i++;
        } else {
            bx_usage(stderr);
            return 2;
        }
    }
    if (o.ref_nchan > o.nchan) o.ref_nchan = o.nchan;

    /* configurations */
    bx_config cfgs[16];
    int ncfg = 0;
    {
        char list[256];
        snprintf(list, sizeof list, "%s", o.configs);
        for (char *tok = strtok(list, ","); tok && ncfg < 16; tok = strtok(NULL, ",")) {
            if (bx_parse_config(tok, o.max_width, &cfgs[ncfg]) != 0) {
                fprintf(stderr, "transient-bench: unknown boxcar configuration '%s'\n",
                        tok);
                return 2;
            }
            ncfg++;
        }
    }

    /* environment */
    char why[256] = "";
    const int ndev = tr_cuda_device_count(why, sizeof why);
    const int have_cuda = ndev > o.device;
    if (!have_cuda && explicit_variants && (o.want[V_CUDA] || o.want[V_PAPER])) {
        fprintf(stderr, "transient-bench: CUDA variants requested but unavailable: %s\n",
                why);
        return 2;
    }
    const double host_bw = bx_host_read_bw(), host_ops = bx_host_fp32_rate();
    double dev_bw = 0.0, dev_ops = 0.0;
    tr_bench_device_info info;
    memset(&info, 0, sizeof info);
    if (have_cuda) {
        if (tr_bench_device_info_get(o.device, &info) != TR_OK ||
            tr_bench_device_copy_bw(o.device, (size_t)1 << 30, 5, &dev_bw) != TR_OK ||
            tr_bench_device_fma_rate(o.device, 5, &dev_ops) != TR_OK) {
            bx_fail("device ceilings", tr_bench_last_error());
            return 1;
        }
    }
    if (o.json)
        printf("{\"type\":\"env\",\"detector\":\"boxcar\",\"gpu\":\"%s\",\"cuda\":%s,"
               "\"nchan\":%u,\"samples\":%zu,\"max_width\":%u,\"ref_nchan\":%u,"
               "\"ref_samples\":%zu,\"repeat\":%d,\"layout\":\"%s\","
               "\"host_read_bytes_per_s\":%.6g,\"host_fp32_per_s\":%.6g,"
               "\"device_copy_bytes_per_s\":%.6g,\"device_fp32_per_s\":%.6g,"
               "\"ska_samples_per_s\":%.6g,\"host_clock\":\"%s\"}\n",
               have_cuda ? info.name : "", have_cuda ? "true" : "false", o.nchan,
               o.samples, o.max_width, o.ref_nchan, o.ref_samples, o.repeat,
               o.layout == TR_BOXCAR_CHANNEL_MAJOR ? "channel-major" : "time-major",
               host_bw, host_ops, dev_bw, dev_ops, BX_SKA_RATE,
               bx_clock == CLOCK_MONOTONIC ? "wall" : "thread-cpu");
    else
        printf("boxcar: %u channels x %zu samples, max width %u; host %.3g B/s, %.3g "
               "FP32/s; %s\n",
               o.nchan, o.samples, o.max_width, host_bw, host_ops,
               have_cuda ? info.name : why);

    /* data */
    const size_t tot = (size_t)o.nchan * o.samples;
    float *cm = malloc(tot * sizeof(float)), *tm = malloc(tot * sizeof(float));
    float *rtm = malloc((size_t)o.ref_nchan * o.samples * sizeof(float));
    if (!cm || !tm || !rtm) {
        bx_fail("data", "out of host memory");
        return 1;
    }
    bx_make_data(o.seed, o.nchan, o.samples, o.max_width, cm, tm);
    for (size_t k = 0; k < o.samples; k++)
        for (uint32_t c = 0; c < o.ref_nchan; c++)
            rtm[k * o.ref_nchan + c] = tm[k * o.nchan + c];
    float *d_x = NULL, *d_y = NULL;
    int32_t *d_w = NULL;
    if (have_cuda && !o.host_path && (o.want[V_CUDA] || o.want[V_PAPER])) {
        if (tr_bench_dev_alloc(o.device, tot * sizeof(float), (void **)&d_x) != TR_OK ||
            tr_bench_dev_alloc(o.device, tot * sizeof(float), (void **)&d_y) != TR_OK ||
            tr_bench_dev_alloc(o.device, tot * sizeof(int32_t), (void **)&d_w) != TR_OK ||
            tr_bench_dev_upload(d_x, o.layout == TR_BOXCAR_CHANNEL_MAJOR ? cm : tm,
                                tot * sizeof(float)) != TR_OK) {
            bx_fail("device buffers", tr_bench_last_error());
            return 1;
        }
    }
    if (o.host_path) {
        double h2d = 0.0, d2h = 0.0;
        if (!have_cuda) {
            fprintf(stderr, "transient-bench: --host-path needs a GPU: %s\n", why);
            return 2;
        }
        if (tr_bench_h2d_bw(o.device, (size_t)256 << 20, 5, &h2d) != TR_OK ||
            tr_bench_d2h_bw(o.device, (size_t)256 << 20, 5, &d2h) != TR_OK) {
            bx_fail("h2d/d2h bandwidth", tr_bench_last_error());
            return 1;
        }
        if (o.json)
            printf("{\"type\":\"env\",\"detector\":\"boxcar\",\"host_path\":true,"
                   "\"h2d_pinned_bytes_per_s\":%.6g,\"d2h_pinned_bytes_per_s\":%.6g}\n",
                   h2d, d2h);
        else
            printf("host path: H2D %.3g B/s, D2H %.3g B/s (page-locked)\n", h2d, d2h);
        for (int k = 0; k < ncfg; k++)
            bx_host_path(&o, &cfgs[k], tm, h2d, d2h);
    } else
        for (int k = 0; k < ncfg; k++)
            bx_run_config(&o, &cfgs[k], have_cuda, cm, tm, rtm, d_x, d_y, d_w, host_ops,
                          host_bw, dev_ops, dev_bw);
    tr_bench_dev_free(d_x);
    tr_bench_dev_free(d_y);
    tr_bench_dev_free(d_w);
    free(cm);
    free(tm);
    free(rtm);
    if (o.json)
        printf("{\"type\":\"check\",\"detector\":\"boxcar\",\"ok\":%s}\n",
               bx_failed ? "false" : "true");
    return bx_failed ? 1 : 0;
}
