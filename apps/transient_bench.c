/*
 * transient-bench: throughput of the libtransient detectors against the
 * ceilings of the machine they run on.
 *
 *   transient-bench --detector edges [--samples N] [--json] [--variants LIST]
 *                   [--repeat R] [--seed S] [--ref-samples N] [--device D]
 *                   [--batch B] [--drops P]
 *   transient-bench --detector spiir [--templates T --filters L] ... (see the
 *                   SPIIR section below)
 *   transient-bench --detector boxcar ...   (apps/bench_boxcar.c)
 *   transient-bench --detector kalman ...   (apps/bench_kalman.c)
 *
 * Variants: reference and cpu-fast (host, one thread), cuda-fast and
 * cuda-paper (each timed twice: "device", samples already in device memory,
 * timed with CUDA events around tr_edges_process_device; "host-to-host", host
 * samples in and host transitions out through tr_edges_process). Each result
 * is judged against a measured ceiling: the single-core read bandwidth of this
 * host (CPU), the device read bandwidth (device) or the pinned host-to-device
 * bandwidth (host-to-host), each divided by 4 bytes per sample.
 *
 * All variants must find the same transitions (count and checksum; the
 * reference, which may run on a prefix only, is compared on that prefix) and
 * as many as the signal generator made; otherwise the exit status is 1.
 *
 * Output: one JSON object per line with --json (the environment first, then
 * one line per variant and mode, then the check), a table otherwise.
 */
#define _POSIX_C_SOURCE 200809L

#include "signals.h"
#include "bench_boxcar.h"
#include "bench_host.h"

#include <transient/bench.h>
#include <transient/edges.h>
#include <transient/spiir.h>

#include "bench_kalman.h"
#include "bench_spiir_triggers.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RESULTS 16
#define MAX_REPEAT  101

/* ---- small utilities ---------------------------------------------------- */

/*
 * Single-core read bandwidth of the host: sums of 64-bit words over a buffer
 * far larger than the caches, four independent accumulators (vectorizable),
 * median of the repeats.
 */
static uint64_t g_sink;

static double host_read_bw(size_t bytes, int repeats)
{
    const size_t n = bytes / 32 * 4; /* whole groups of four words */
    uint64_t *p = malloc(n * sizeof *p);
    if (!p) return 0.0;
    for (size_t i = 0; i < n; i++)
        p[i] = i * 0x9e3779b97f4a7c15ull;
    double t[MAX_REPEAT];
    for (int r = 0; r <= repeats; r++) {
        const double t0 = bh_now();
        uint64_t a = 0, b = 0, c = 0, d = 0;
        size_t i = 0;
        for (; i < n; i += 4) {
            a += p[i];
            b += p[i + 1];
            c += p[i + 2];
            d += p[i + 3];
        }
        g_sink += a ^ b ^ c ^ d;
        if (r > 0) t[r - 1] = bh_now() - t0; /* run 0 warms up */
    }
    free(p);
    return (double)(n * sizeof(uint64_t)) / bh_median(t, repeats);
}

/* ---- transitions: count and checksum ----------------------------------- */

typedef struct {
    uint64_t count, hash;               /* all transitions */
    uint64_t prefix_count, prefix_hash; /* those with sample < prefix */
} edge_sum;

static uint64_t fnv_word(uint64_t h, uint64_t w)
{
    for (int k = 0; k < 8; k++) {
        h ^= (w >> (8 * k)) & 0xff;
        h *= 0x100000001b3ull;
    }
    return h;
}

static void sum_init(edge_sum *s)
{
    s->count = s->prefix_count = 0;
    s->hash = s->prefix_hash = 0xcbf29ce484222325ull;
}

static void sum_add(edge_sum *s, const tr_edge *e, size_t n, int64_t prefix)
{
    for (size_t k = 0; k < n; k++) {
        uint64_t tb;
        memcpy(&tb, &e[k].time, sizeof tb);
        uint64_t h = fnv_word(s->hash, tb);
        h = fnv_word(h, (uint64_t)e[k].sample);
        h = fnv_word(h, (uint64_t)(int64_t)e[k].polarity);
        s->hash = h;
        s->count++;
        if (e[k].sample < prefix) {
            s->prefix_hash = h;
            s->prefix_count++;
        }
    }
}

/* ---- results ----------------------------------------------------------- */

typedef struct {
    const char *variant, *backend, *mode;
    size_t samples; /* what the timed runs processed */
    double seconds; /* median over the repeats */
    double sps;     /* samples per second */
    double ceiling; /* samples per second */
    const char *ceiling_name;
    const char *baseline; /* variant the speedup is over, or NULL */
    double speedup;       /* 0 when no baseline was measured */
    edge_sum sum;
    int ok; /* ran without error */
} result;

typedef struct {
    int json;
    size_t samples, ref_samples, batch;
    int repeat;
    uint64_t seed;
    int device;
    double drops;
    int want[4]; /* reference, cpu-fast, cuda-fast, cuda-paper */
    int explicit_variants;
} options;

static const char *const k_variants[4] = {"reference", "cpu-fast", "cuda-fast",
                                          "cuda-paper"};

static int g_failed;

static void fail_msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "transient-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_failed = 1;
}

static tr_edges *make_edges(const options *o, const tr_sig_info *sig, tr_backend backend,
                            tr_variant variant)
{
    tr_edges_config cfg = tr_edges_config_default();
    cfg.levels_mode = TR_LEVELS_FIXED;
    cfg.low = sig->low;
    cfg.mid = sig->mid;
    cfg.high = sig->high;
    cfg.backend = backend;
    cfg.variant = variant;
    cfg.device = o->device;
    if (o->batch) cfg.batch = o->batch;
    tr_error err;
    tr_edges *q = tr_edges_create(&cfg, &err);
    if (!q)
        fail_msg("cannot create %s/%s: %s", tr_backend_name(backend),
                 tr_variant_name(variant), err.message);
    return q;
}

/* Host samples in, host transitions out; returns 0 on success. The output
 * buffer grows as needed outside the timed calls. */
static int run_host_once(tr_edges *q, const float *x, size_t n, tr_edge **out,
                         size_t *cap, size_t *nout, double *seconds)
{
    size_t done = 0;
    *nout = 0;
    *seconds = 0.0;
    if (tr_edges_reset(q) != TR_OK) return -1;
    while (done < n) {
        size_t used = 0, got = 0;
        const double t0 = bh_now();
        const tr_status s = tr_edges_process(q, x + done, n - done, *out + *nout,
                                             *cap - *nout, &used, &got);
        *seconds += bh_now() - t0;
        if (s != TR_OK) {
            fail_msg("process: %s", tr_edges_last_error(q));
            return -1;
        }
        done += used;
        *nout += got;
        if (done < n && *nout == *cap) {
            tr_edge *p = realloc(*out, 2 * *cap * sizeof **out);
            if (!p) {
                fail_msg("out of memory for transitions");
                return -1;
            }
            *out = p;
            *cap *= 2;
        }
    }
    return 0;
}

/* Checksum of the transitions, median time and rate of a finished variant. */
static void finish_result(result *r, const options *o, const tr_edge *out, size_t nout,
                          size_t n, double *t)
{
    sum_init(&r->sum);
    sum_add(&r->sum, out, nout, (int64_t)o->ref_samples);
    r->samples = n;
    r->seconds = bh_median(t, o->repeat);
    r->sps = (double)n / r->seconds;
    r->ok = 1;
}

static void run_host_variant(const options *o, const tr_sig_info *sig, const float *x,
                             size_t n, tr_backend backend, tr_variant variant, result *r,
                             tr_edge **out, size_t *cap)
{
    r->ok = 0;
    tr_edges *q = make_edges(o, sig, backend, variant);
    if (!q) return;
    double t[MAX_REPEAT];
    size_t nout = 0;
    for (int k = 0; k <= o->repeat; k++) { /* run 0 warms up */
        double sec;
        if (run_host_once(q, x, n, out, cap, &nout, &sec) != 0) {
            tr_edges_destroy(q);
            return;
        }
        if (k > 0) t[k - 1] = sec;
    }
    tr_edges_destroy(q);
    finish_result(r, o, *out, nout, n, t);
}

/* Samples already on the device, timed with CUDA events. */
static void run_device_variant(const options *o, const tr_sig_info *sig, const float *d_x,
                               size_t n, tr_variant variant, result *r, tr_edge **out,
                               size_t *cap)
{
    r->ok = 0;
    tr_edges *q = make_edges(o, sig, TR_BACKEND_CUDA, variant);
    if (!q) return;
    tr_bench_timer *tm = NULL;
    void *d_out = NULL;
    const size_t dcap = *cap;
    tr_status s = tr_bench_timer_create(o->device, &tm);
    if (s == TR_OK) s = tr_bench_dev_alloc(o->device, dcap * sizeof(tr_edge), &d_out);
    if (s != TR_OK) {
        fail_msg("device setup: %s", tr_bench_last_error());
        goto done;
    }
    double t[MAX_REPEAT];
    size_t nout = 0;
    for (int k = 0; k <= o->repeat; k++) {
        size_t done = 0;
        nout = 0;
        tr_edges_reset(q);
        s = tr_bench_timer_start(tm);
        while (s == TR_OK && done < n) {
            size_t used = 0, got = 0;
            s = tr_edges_process_device(q, d_x + done, n - done, (tr_edge *)d_out + nout,
                                        dcap - nout, &used, &got);
            if (s != TR_OK) {
                fail_msg("process_device: %s", tr_edges_last_error(q));
                goto done;
            }
            done += used;
            nout += got;
            if (done < n && nout == dcap) {
                fail_msg("%s: more transitions than the %zu the signal has",
                         k_variants[variant == TR_VARIANT_PAPER ? 3 : 2], dcap);
                goto done;
            }
        }
        double sec = 0.0;
        if ((s = tr_bench_timer_stop(tm, &sec)) != TR_OK) {
            fail_msg("timer: %s", tr_bench_last_error());
            goto done;
        }
        if (k > 0) t[k - 1] = sec;
    }
    if ((s = tr_bench_dev_download(*out, d_out, nout * sizeof(tr_edge))) != TR_OK) {
        fail_msg("download transitions: %s", tr_bench_last_error());
        goto done;
    }
    finish_result(r, o, *out, nout, n, t);
done:
    tr_bench_dev_free(d_out);
    tr_bench_timer_destroy(tm);
    tr_edges_destroy(q);
}

/* ---- output -------------------------------------------------------------- */

static void print_result_json(const result *r, size_t full_samples, size_t prefix)
{
    printf("{\"type\":\"result\",\"detector\":\"edges\",\"variant\":\"%s\",\"backend\":"
           "\"%s\","
           "\"mode\":\"%s\",\"samples\":%zu,\"seconds\":%.9g,\"samples_per_s\":%.9g,"
           "\"ceiling\":\"%s\",\"ceiling_samples_per_s\":%.9g,\"ratio\":%.6g,",
           r->variant, r->backend, r->mode, r->samples, r->seconds, r->sps,
           r->ceiling_name, r->ceiling, r->ceiling > 0 ? r->sps / r->ceiling : 0.0);
    if (r->samples != full_samples)
        printf("\"scaled_samples\":%zu,\"scaled_seconds\":%.9g,", full_samples,
               r->seconds * (double)full_samples / (double)r->samples);
    if (r->baseline && r->speedup > 0)
        printf("\"baseline\":\"%s\",\"speedup\":%.6g,", r->baseline, r->speedup);
    printf("\"transitions\":%llu,\"checksum\":\"%016llx\",\"prefix_samples\":%zu,"
           "\"prefix_transitions\":%llu,\"prefix_checksum\":\"%016llx\"}\n",
           (unsigned long long)r->sum.count, (unsigned long long)r->sum.hash, prefix,
           (unsigned long long)r->sum.prefix_count,
           (unsigned long long)r->sum.prefix_hash);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: transient-bench --detector edges [--samples N] [--json]\n"
            "         [--variants reference,cpu-fast,cuda-fast,cuda-paper] [--repeat R]\n"
            "         [--seed S] [--ref-samples N] [--device D] [--batch B] [--drops P]\n"
            "  --samples N      signal length (default 268435456 = 2^28)\n"
            "  --ref-samples N  prefix the reference variant runs on (default 2^25)\n"
            "  --repeat R       timed runs per variant, median reported (default 5)\n"
            "  --batch B        CUDA samples per device batch (default: the library's)\n"
            "  --drops P        probability per pulse of a NaN/Inf burst (default 0)\n");
}

static int parse_size(const char *s, size_t *v)
{
    char *end;
    const unsigned long long x = strtoull(s, &end, 0);
    if (*s == '\0' || *end != '\0') return -1;
    *v = (size_t)x;
    return 0;
}

/* --variants a,b,...: want[k] = 1 for each named variant (names of
 * k_variants); 0, or -1 on an unknown name. */
static int parse_variants(const char *v, int want[4])
{
    char list[256];
    snprintf(list, sizeof list, "%s", v);
    for (int k = 0; k < 4; k++)
        want[k] = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int k = 0; k < 4; k++)
            if (strcmp(tok, k_variants[k]) == 0) want[k] = found = 1;
        if (!found) {
            fprintf(stderr, "transient-bench: unknown variant '%s'\n", tok);
            return -1;
        }
    }
    return 0;
}

/* ---- SPIIR filter bank ---------------------------------------------------
 *
 *   transient-bench --detector spiir [--templates T --filters L] [--samples N]
 *                   [--ref-samples N] [--cpu-samples N] [--max-delay D]
 *                   [--variants LIST] [--repeat R] [--seed S] [--device D]
 *                   [--batch B] [--json]
 *
 * Without --templates/--filters two banks run: 4096 x 512 and 4096 x 8. A
 * bank is random but fixed by the seed: poles 1 - |a1| in [1e-3, 1e-2] (near
 * the unit circle) at phases in (0, pi), gains |b0| ~ 1 - |a1|, delays rising
 * with the filter index up to --max-delay; the input is real white noise.
 * One update is one filter for one sample (6 FMA for real input). Ceilings:
 * GPU, the measured FP32 FMA rate / 6 FMA per update; CPU, the measured
 * single-core FMA rate of this host (8-wide AVX2 FMA chains when available,
 * scalar otherwise) / 6. The reference (complex double) runs on a prefix,
 * cpu-fast on a longer prefix (both scaled to the full length in the JSON);
 * every variant's SNR over the reference's prefix must be within relative RMS
 * 1e-4 of the reference's, otherwise the exit status is 1.
 *
 * --multirate: one multirate bank (multirate = 1) of 4096 templates (or
 * --templates) with 10/21/36/65/115/203/88 filters at levels 0..6 (4096 Hz
 * down to 64 Hz): level-L poles with 1 - |a1|^(2^L) in [1e-3, 1e-2] at
 * frequencies within 0.3 of the level's rate, delays 55 (2^L - 1) + [0, 4096]
 * (so that the latency is 0). One update is one filter for one sample at its
 * own rate: 52.53 updates per template per full-rate sample; the resamplers
 * are not counted as updates but their time is in the figures.
 */

#define SPIIR_TOL    1e-4
#define SPIIR_RATE   4096.0 /* Hz: the real-time factor is samples/s over this */
#define SPIIR_FMA    6.0    /* FMA per update, real input */
#define SPIIR_MAXRES 16

typedef struct {
    uint64_t s;
} spiir_rng;

static uint64_t spiir_next(spiir_rng *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double spiir_uniform(spiir_rng *r)
{
    return (double)(spiir_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

static tr_spiir_bank *spiir_make_bank(uint32_t nt, uint32_t nf, int32_t max_delay,
                                      uint64_t seed, tr_error *err)
{
    const double pi = 3.14159265358979323846;
    tr_spiir_filter *f = malloc((size_t)nt * nf * sizeof *f);
    uint32_t *counts = malloc((size_t)nt * sizeof *counts);
    tr_spiir_bank *b = NULL;
    if (!f || !counts) {
        snprintf(err->message, sizeof err->message, "out of memory for the bank");
        goto done;
    }
    spiir_rng r = {seed * 0x2545f4914f6cdd1dull + 0x5bd1e995};
    for (uint32_t t = 0; t < nt; t++) {
        counts[t] = nf;
        for (uint32_t l = 0; l < nf; l++) {
            tr_spiir_filter *q = &f[(size_t)t * nf + l];
            const double m = 1.0 - pow(10.0, -2.0 - spiir_uniform(&r));
            const double ph = pi * (0.01 + 0.98 * spiir_uniform(&r));
            const double g = (1.0 - m) * (0.5 + spiir_uniform(&r));
            const double pb = 2.0 * pi * spiir_uniform(&r);
            q->a1_re = m * cos(ph);
            q->a1_im = m * sin(ph);
            q->b0_re = g * cos(pb);
            q->b0_im = g * sin(pb);
            q->delay = (int32_t)((double)max_delay * (l + spiir_uniform(&r)) / nf);
            if (q->delay > max_delay) q->delay = max_delay;
            q->level = 0;
        }
    }
    b = tr_spiir_bank_create(f, counts, nt, 1.0 / SPIIR_RATE, err);
done:
    free(f);
    free(counts);
    return b;
}

/* Filters per template at levels 0..6 of the multirate benchmark bank. */
static const uint32_t spiir_mr_counts[7] = {10, 21, 36, 65, 115, 203, 88};

static tr_spiir_bank *spiir_make_mr_bank(uint32_t nt, uint64_t seed, tr_error *err)
{
    const double pi = 3.14159265358979323846;
    uint32_t nf = 0;
    for (int L = 0; L < 7; L++)
        nf += spiir_mr_counts[L];
    tr_spiir_filter *f = malloc((size_t)nt * nf * sizeof *f);
    uint32_t *counts = malloc((size_t)nt * sizeof *counts);
    tr_spiir_bank *b = NULL;
    if (!f || !counts) {
        snprintf(err->message, sizeof err->message, "out of memory for the bank");
        goto done;
    }
    spiir_rng r = {seed * 0x2545f4914f6cdd1dull + 0x9e3779b9};
    for (uint32_t t = 0; t < nt; t++) {
        counts[t] = nf;
        tr_spiir_filter *q = &f[(size_t)t * nf];
        for (int L = 0; L < 7; L++) {
            const double M = (double)(1 << L);
            for (uint32_t l = 0; l < spiir_mr_counts[L]; l++, q++) {
                const double gl = pow(10.0, -2.0 - spiir_uniform(&r)); /* at level rate */
                const double m = pow(1.0 - gl, 1.0 / M);
                const double ph = 2.0 * pi * 0.3 / M * (0.02 + 0.98 * spiir_uniform(&r));
                const double g = sqrt(gl / M) * (0.5 + spiir_uniform(&r));
                const double pb = 2.0 * pi * spiir_uniform(&r);
                q->a1_re = m * cos(ph);
                q->a1_im = m * sin(ph);
                q->b0_re = g * cos(pb);
                q->b0_im = g * sin(pb);
                q->delay = (int32_t)(55.0 * (M - 1.0) + 4096.0 * spiir_uniform(&r));
                q->level = L;
            }
        }
    }
    b = tr_spiir_bank_create(f, counts, nt, 1.0 / SPIIR_RATE, err);
done:
    free(f);
    free(counts);
    return b;
}

typedef struct {
    const char *variant, *backend, *mode;
    size_t samples; /* processed by the timed runs */
    double seconds; /* median */
    double ups;     /* updates per second */
    double ceiling; /* updates per second */
    const char *ceiling_name;
    const char *baseline;
    double speedup;
    double rel_rms; /* vs the reference prefix; < 0: not compared */
    int ok;
} spiir_result;

typedef struct {
    int json;
    int multirate;         /* 1: the multirate bank (see above) */
    int device_only;       /* 1: CUDA from device memory only (no host-to-host) */
    double ups_per_sample; /* filter updates per full-rate sample */
    uint32_t templates, filters;
    size_t samples, ref_samples, cpu_samples, batch;
    int32_t max_delay;
    int repeat;
    uint64_t seed;
    int device;
    int want[4];
    int explicit_variants;
} spiir_options;

static tr_spiir *spiir_open(const spiir_options *o, const tr_spiir_bank *bank,
                            tr_backend backend, tr_variant variant)
{
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = backend;
    cfg.variant = variant;
    cfg.device = o->device;
    if (o->batch) cfg.batch = o->batch;
    cfg.multirate = o->multirate;
    tr_error err;
    tr_spiir *q = tr_spiir_create(&cfg, bank, &err);
    if (!q)
        fail_msg("spiir: cannot create %s/%s: %s", tr_backend_name(backend),
                 tr_variant_name(variant), err.message);
    return q;
}

/* Relative RMS of a[0..m) against the reference r[0..m) (complex pairs). */
static double spiir_rel_rms(const float *a, const float *r, size_t m)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < m; i++) {
        const double d = (double)a[i] - (double)r[i];
        num += d * d;
        den += (double)r[i] * (double)r[i];
    }
    if (den == 0.0) return num == 0.0 ? 0.0 : INFINITY;
    return sqrt(num / den);
}

/* Host samples in, host SNR out: median seconds of o->repeat runs after a
 * warm-up, each from a reset; snr keeps the last run. */
static int spiir_time_host(const spiir_options *o, tr_spiir *q, const float *x, size_t n,
                           float *snr, double *seconds)
{
    double t[MAX_REPEAT];
    for (int k = 0; k <= o->repeat; k++) {
        if (tr_spiir_reset(q) != TR_OK) {
            fail_msg("spiir: reset: %s", tr_spiir_last_error(q));
            return -1;
        }
        const double t0 = bh_now();
        if (tr_spiir_process(q, x, n, snr) != TR_OK) {
            fail_msg("spiir: process: %s", tr_spiir_last_error(q));
            return -1;
        }
        if (k > 0) t[k - 1] = bh_now() - t0;
    }
    *seconds = bh_median(t, o->repeat);
    return 0;
}

/* Device samples in, device SNR out, timed with CUDA events. */
static int spiir_time_device(const spiir_options *o, tr_spiir *q, const float *d_x,
                             size_t n, float *d_snr, double *seconds)
{
    tr_bench_timer *tm = NULL;
    double t[MAX_REPEAT];
    int rc = -1;
    if (tr_bench_timer_create(o->device, &tm) != TR_OK) {
        fail_msg("spiir: timer: %s", tr_bench_last_error());
        return -1;
    }
    for (int k = 0; k <= o->repeat; k++) {
        if (tr_spiir_reset(q) != TR_OK) {
            fail_msg("spiir: reset: %s", tr_spiir_last_error(q));
            goto done;
        }
        if (tr_bench_timer_start(tm) != TR_OK) {
            fail_msg("spiir: timer: %s", tr_bench_last_error());
            goto done;
        }
        if (tr_spiir_process_device(q, d_x, n, d_snr) != TR_OK) {
            fail_msg("spiir: process_device: %s", tr_spiir_last_error(q));
            goto done;
        }
        double sec = 0.0;
        if (tr_bench_timer_stop(tm, &sec) != TR_OK) {
            fail_msg("spiir: timer: %s", tr_bench_last_error());
            goto done;
        }
        if (k > 0) t[k - 1] = sec;
    }
    *seconds = bh_median(t, o->repeat);
    rc = 0;
done:
    tr_bench_timer_destroy(tm);
    return rc;
}

static void spiir_print(const spiir_options *o, const spiir_result *r)
{
    const double updates_per_sample = o->ups_per_sample;
    const double sps = r->ups / updates_per_sample;
    if (o->json) {
        printf("{\"type\":\"result\",\"detector\":\"spiir\",\"variant\":\"%s\","
               "\"backend\":\"%s\",\"mode\":\"%s\",\"templates\":%u,\"filters\":%u,"
               "\"multirate\":%d,\"samples\":%zu,\"seconds\":%.9g,\"updates_per_s\":%.9g,"
               "\"samples_per_s\":%.9g,\"realtime_factor_4096hz\":%.6g,"
               "\"ceiling\":\"%s\",\"ceiling_updates_per_s\":%.9g,\"ratio\":%.6g,",
               r->variant, r->backend, r->mode, o->templates, o->filters, o->multirate,
               r->samples, r->seconds, r->ups, sps, sps / SPIIR_RATE, r->ceiling_name,
               r->ceiling, r->ceiling > 0 ? r->ups / r->ceiling : 0.0);
        if (r->samples != o->samples)
            printf("\"scaled_samples\":%zu,\"scaled_seconds\":%.9g,", o->samples,
                   r->seconds * (double)o->samples / (double)r->samples);
        if (r->baseline && r->speedup > 0)
            printf("\"baseline\":\"%s\",\"speedup\":%.6g,", r->baseline, r->speedup);
        if (r->rel_rms >= 0)
            printf("\"check_samples\":%zu,\"rel_rms\":%.3e,", o->ref_samples, r->rel_rms);
        printf("\"ok\":%s}\n",
               r->rel_rms < 0 || r->rel_rms <= SPIIR_TOL ? "true" : "false");
    } else {
        char sp[32] = "-", rr[32] = "-";
        if (r->speedup > 0) snprintf(sp, sizeof sp, "%.2fx", r->speedup);
        if (r->rel_rms >= 0) snprintf(rr, sizeof rr, "%.1e", r->rel_rms);
        printf("%-11s %-13s %5u x %-4u %9zu %10.6f %10.3e %6.1f%% %8s %10.2f %8s\n",
               r->variant, r->mode, o->templates, o->filters, r->samples, r->seconds,
               r->ups, r->ceiling > 0 ? 100.0 * r->ups / r->ceiling : 0.0, sp,
               sps / SPIIR_RATE, rr);
    }
    fflush(stdout);
}

/* One bank: every wanted variant, checks against the reference prefix.
 * Returns 0 when everything ran and matched. */
static int spiir_run_bank(const spiir_options *o, int have_cuda, double gpu_fma,
                          double cpu_fma)
{
    tr_error err;
    int ok = 1;
    tr_spiir_bank *bank = o->multirate ? spiir_make_mr_bank(o->templates, o->seed, &err)
                                       : spiir_make_bank(o->templates, o->filters,
                                                         o->max_delay, o->seed, &err);
    if (!bank) {
        fail_msg("spiir: bank: %s", err.message);
        return 1;
    }
    const size_t nt2 = (size_t)o->templates * 2; /* floats of SNR per sample */
    const double ups_per_sps = o->ups_per_sample;
    const size_t n = o->samples, nref = o->ref_samples;
    const size_t ncpu = o->cpu_samples < n ? o->cpu_samples : n;
    float *x = malloc(n * sizeof *x);
    float *snr = malloc(n * nt2 * sizeof *snr);
    float *ref = malloc(nref * nt2 * sizeof *ref);
    void *d_x = NULL, *d_snr = NULL;
    spiir_result res[SPIIR_MAXRES];
    int nres = 0, have_ref = 0;
    if (!x || !snr || !ref) {
        fail_msg("spiir: cannot allocate %zu samples of SNR for %u templates", n,
                 o->templates);
        ok = 0;
        goto done;
    }
    {
        spiir_rng r = {o->seed ^ 0xd1b54a32d192ed03ull};
        for (size_t i = 0; i < n; i++)
            x[i] = (float)(2.0 * spiir_uniform(&r) - 1.0);
    }

    /* Reference first: the yardstick of every other variant. */
    if (o->want[0]) {
        tr_spiir *q = spiir_open(o, bank, TR_BACKEND_CPU, TR_VARIANT_REFERENCE);
        spiir_result *r = &res[nres];
        memset(r, 0, sizeof *r);
        r->variant = "reference", r->backend = "cpu", r->mode = "host";
        r->ceiling = cpu_fma / 2.0 / SPIIR_FMA, r->ceiling_name = "host_fma_1core/6";
        r->rel_rms = -1;
        if (q && spiir_time_host(o, q, x, nref, ref, &r->seconds) == 0) {
            r->samples = nref;
            r->ups = ups_per_sps * (double)nref / r->seconds;
            r->ok = have_ref = 1;
            spiir_print(o, r);
            nres++;
        } else {
            ok = 0;
        }
        tr_spiir_destroy(q);
    }
    if (o->want[1]) {
        tr_spiir *q = spiir_open(o, bank, TR_BACKEND_CPU, TR_VARIANT_FAST);
        spiir_result *r = &res[nres];
        memset(r, 0, sizeof *r);
        r->variant = "cpu-fast", r->backend = "cpu", r->mode = "host";
        r->ceiling = cpu_fma / 2.0 / SPIIR_FMA, r->ceiling_name = "host_fma_1core/6";
        r->rel_rms = -1;
        if (q && spiir_time_host(o, q, x, ncpu, snr, &r->seconds) == 0) {
            r->samples = ncpu;
            r->ups = ups_per_sps * (double)ncpu / r->seconds;
            r->ok = 1;
            if (have_ref) {
                r->baseline = "reference", r->speedup = r->ups / res[0].ups;
                r->rel_rms = spiir_rel_rms(snr, ref, nref * nt2);
            }
            spiir_print(o, r);
            nres++;
        } else {
            ok = 0;
        }
        tr_spiir_destroy(q);
    }

    if (have_cuda && (o->want[2] || o->want[3])) {
        if (tr_bench_dev_alloc(o->device, n * sizeof(float), &d_x) != TR_OK ||
            tr_bench_dev_alloc(o->device, n * nt2 * sizeof(float), &d_snr) != TR_OK ||
            tr_bench_dev_upload(d_x, x, n * sizeof(float)) != TR_OK) {
            fail_msg("spiir: device buffers (%zu MB of SNR): %s",
                     n * nt2 * sizeof(float) >> 20, tr_bench_last_error());
            ok = 0;
            goto done;
        }
        const char *modes[2] = {"device", "host-to-host"};
        for (int m = 0; m < (o->device_only ? 1 : 2); m++) {
            int i_paper = -1;
            for (int v = 3; v >= 2; v--) { /* paper first: the fast variant's baseline */
                if (!o->want[v]) continue;
                const tr_variant tv = v == 3 ? TR_VARIANT_PAPER : TR_VARIANT_FAST;
                tr_spiir *q = spiir_open(o, bank, TR_BACKEND_CUDA, tv);
                spiir_result *r = &res[nres];
                memset(r, 0, sizeof *r);
                r->variant = v == 3 ? "cuda-paper" : "cuda-fast";
                r->backend = "cuda", r->mode = modes[m];
                r->ceiling = gpu_fma / 2.0 / SPIIR_FMA;
                r->ceiling_name = "fp32_fma_flops/2/6";
                r->rel_rms = -1;
                int rc = -1;
                if (q && m == 0) {
                    rc = spiir_time_device(o, q, (const float *)d_x, n, (float *)d_snr,
                                           &r->seconds);
                    if (rc == 0 && tr_bench_dev_download(
                                       snr, d_snr, nref * nt2 * sizeof(float)) != TR_OK) {
                        fail_msg("spiir: download SNR: %s", tr_bench_last_error());
                        rc = -1;
                    }
                } else if (q) {
                    rc = spiir_time_host(o, q, x, n, snr, &r->seconds);
                }
                tr_spiir_destroy(q);
                if (rc != 0) {
                    ok = 0;
                    continue;
                }
                r->samples = n;
                r->ups = ups_per_sps * (double)n / r->seconds;
                r->ok = 1;
                if (have_ref) r->rel_rms = spiir_rel_rms(snr, ref, nref * nt2);
                if (v == 3) i_paper = nres;
                if (v == 2 && i_paper >= 0)
                    r->baseline = "cuda-paper", r->speedup = r->ups / res[i_paper].ups;
                spiir_print(o, r);
                if (nres < SPIIR_MAXRES - 1) nres++;
            }
        }
    }

done:;
    char detail[512] = "";
    for (int k = 0; k < nres; k++) {
        const spiir_result *r = &res[k];
        if (r->rel_rms > SPIIR_TOL || r->rel_rms != r->rel_rms) {
            ok = 0;
            snprintf(detail, sizeof detail,
                     "%s/%s: relative RMS %.3e against the reference over %zu samples "
                     "(tolerance %.0e)",
                     r->variant, r->mode, r->rel_rms, nref, SPIIR_TOL);
        }
    }
    if (!have_ref && o->want[0] == 0 && detail[0] == '\0')
        snprintf(detail, sizeof detail, "no reference run: nothing compared");
    if (g_failed && detail[0] == '\0')
        snprintf(detail, sizeof detail, "a variant failed to run (see stderr)");
    if (nres == 0) ok = 0;
    if (o->json) {
        char esc[1024];
        bh_json_escape(esc, sizeof esc, detail);
        printf(
            "{\"type\":\"check\",\"detector\":\"spiir\",\"templates\":%u,\"filters\":%u,"
            "\"ok\":%s,\"results\":%d,\"tolerance\":%g,\"detail\":\"%s\"}\n",
            o->templates, o->filters, ok && !g_failed ? "true" : "false", nres, SPIIR_TOL,
            esc);
    } else {
        printf("check %u x %u: %s%s%s\n", o->templates, o->filters,
               ok && !g_failed ? "every variant within 1e-4 of the reference" : "FAILED",
               detail[0] ? ": " : "", detail);
    }
    fflush(stdout);
    tr_bench_dev_free(d_snr);
    tr_bench_dev_free(d_x);
    free(x);
    free(snr);
    free(ref);
    tr_spiir_bank_destroy(bank);
    return ok && !g_failed ? 0 : 1;
}

static void spiir_usage(FILE *f)
{
    fprintf(
        f,
        "usage: transient-bench --detector spiir [--templates T --filters L]\n"
        "         [--samples N] [--ref-samples N] [--cpu-samples N] [--max-delay D]\n"
        "         [--variants reference,cpu-fast,cuda-fast,cuda-paper] [--repeat R]\n"
        "         [--seed S] [--device D] [--batch B] [--multirate] [--device-only]\n"
        "         [--json]\n"
        "  without --templates/--filters: 4096 x 512, then 4096 x 8\n"
        "  --multirate      the multirate bank: 10/21/36/65/115/203/88 filters at\n"
        "                   levels 0..6 per template (4096 templates by default)\n"
        "  --samples N      input length (default: about 2^34 updates, at most 2 GiB"
        " of SNR)\n"
        "  --ref-samples N  prefix of the reference and of the check (default: about"
        " 2^27 updates)\n"
        "  --cpu-samples N  prefix of cpu-fast (default: about 2^30 updates)\n"
        "  --max-delay D    largest filter delay in samples (default 4096)\n"
        "  --batch B        CUDA samples per device batch (default: the library's)\n"
        "  --device-only    CUDA variants from device memory only (no host-to-host)\n");
}

/* Sizes of one bank's runs: explicit values win, defaults scale with the bank. */
static void spiir_sizes(spiir_options *o, size_t samples, size_t ref, size_t cpu)
{
    const double per = o->ups_per_sample;
    const double out_cap = (double)((size_t)1 << 31) / (8.0 * o->templates);
    double n = samples ? (double)samples : fmin(17179869184.0 / per, out_cap);
    if (n < 64) n = 64;
    o->samples = (size_t)n;
    double r = ref ? (double)ref : 134217728.0 / per;
    if (r < 8) r = 8;
    o->ref_samples = (size_t)r < o->samples ? (size_t)r : o->samples;
    double c = cpu ? (double)cpu : 1073741824.0 / per;
    if (c < (double)o->ref_samples) c = (double)o->ref_samples;
    o->cpu_samples = (size_t)c < o->samples ? (size_t)c : o->samples;
}

static int spiir_main(int argc, char **argv)
{
    spiir_options o;
    memset(&o, 0, sizeof o);
    o.repeat = 5;
    o.seed = 1;
    o.max_delay = 4096;
    for (int k = 0; k < 4; k++)
        o.want[k] = 1;
    size_t samples = 0, ref = 0, cpu = 0, tpl = 0, flt = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t z;
        if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--multirate") == 0) {
            o.multirate = 1;
        } else if (strcmp(a, "--device-only") == 0) {
            o.device_only = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            spiir_usage(stdout);
            return 0;
        } else if (!v) {
            spiir_usage(stderr);
            return 2;
        } else if (strcmp(a, "--detector") == 0) {
            i++;
        } else if (strcmp(a, "--templates") == 0 && parse_size(v, &z) == 0 && z > 0 &&
                   z <= 1000000) {
            tpl = z, i++;
        } else if (strcmp(a, "--filters") == 0 && parse_size(v, &z) == 0 && z > 0 &&
                   z <= 65536) {
            flt = z, i++;
        } else if (strcmp(a, "--samples") == 0 && parse_size(v, &z) == 0 && z > 0) {
            samples = z, i++;
        } else if (strcmp(a, "--ref-samples") == 0 && parse_size(v, &z) == 0 && z > 0) {
            ref = z, i++;
        } else if (strcmp(a, "--cpu-samples") == 0 && parse_size(v, &z) == 0 && z > 0) {
            cpu = z, i++;
        } else if (strcmp(a, "--max-delay") == 0 && parse_size(v, &z) == 0 &&
                   z <= TR_SPIIR_MAX_DELAY) {
            o.max_delay = (int32_t)z, i++;
        } else if (strcmp(a, "--repeat") == 0 && parse_size(v, &z) == 0 && z >= 1 &&
                   z < MAX_REPEAT) {
            o.repeat = (int)z, i++;
        } else if (strcmp(a, "--seed") == 0 && parse_size(v, &z) == 0) {
            o.seed = (uint64_t)z, i++;
        } else if (strcmp(a, "--device") == 0 && parse_size(v, &z) == 0 && z < 1024) {
            o.device = (int)z, i++;
        } else if (strcmp(a, "--batch") == 0 && parse_size(v, &z) == 0 && z > 0) {
            o.batch = z, i++;
        } else if (strcmp(a, "--variants") == 0) {
            i++;
            o.explicit_variants = 1;
            if (parse_variants(v, o.want) != 0) return 2;
        } else {
            fprintf(stderr, "transient-bench: bad option or value: %s %s\n", a, v);
            spiir_usage(stderr);
            return 2;
        }
    }
    if (o.multirate && flt) {
        fprintf(stderr, "transient-bench: --multirate has its own filters per level\n");
        return 2;
    }
    if (!o.multirate && (tpl == 0) != (flt == 0)) {
        fprintf(stderr,
                "transient-bench: give both --templates and --filters, or neither\n");
        return 2;
    }

    char why[256] = "", cpu_name[256], esc[512];
    bh_cpu_model(cpu_name, sizeof cpu_name);
    const int ndev = tr_cuda_device_count(why, sizeof why);
    const int have_cuda = ndev > o.device;
    if (!have_cuda && ndev > 0)
        snprintf(why, sizeof why, "device %d not present", o.device);
    if (!have_cuda && o.explicit_variants && (o.want[2] || o.want[3])) {
        fprintf(stderr, "transient-bench: CUDA variants requested but unavailable: %s\n",
                why);
        return 2;
    }
    const char *fma_how = "scalar";
    const double cpu_fma = bh_host_fma_rate(&fma_how);
    double gpu_fma = 0.0;
    tr_bench_device_info info;
    memset(&info, 0, sizeof info);
    if (have_cuda) {
        tr_status s = tr_bench_device_info_get(o.device, &info);
        if (s == TR_OK) s = tr_bench_device_fma_rate(o.device, 10, &gpu_fma);
        if (s != TR_OK) {
            fprintf(stderr, "transient-bench: device measurements failed: %s\n",
                    tr_bench_last_error());
            return 1;
        }
    }
    if (o.json) {
        bh_json_escape(esc, sizeof esc, cpu_name);
        printf("{\"type\":\"env\",\"detector\":\"spiir\",\"library_version\":\"%s\","
               "\"cuda_compiled\":%d,\"cpu_model\":\"%s\",\"host_fma_1core_flops\":%.6g,"
               "\"host_fma_kind\":\"%s\",",
               tr_version(), tr_cuda_compiled(), esc, cpu_fma, fma_how);
        if (have_cuda) {
            bh_json_escape(esc, sizeof esc, info.name);
            printf(
                "\"gpu\":\"%s\",\"cuda_driver_version\":%d,\"cuda_runtime_version\":%d,"
                "\"compute_capability\":\"%d.%d\",\"sm_count\":%d,"
                "\"fp32_fma_flops\":%.6g,",
                esc, info.driver_version, info.runtime_version, info.cc_major,
                info.cc_minor, info.sm_count, gpu_fma);
        } else {
            bh_json_escape(esc, sizeof esc, why);
            printf("\"gpu\":null,\"cuda_unavailable\":\"%s\",", esc);
        }
        printf("\"seed\":%llu,\"max_delay\":%d,\"repeat\":%d,\"fma_per_update\":6}\n",
               (unsigned long long)o.seed, o.max_delay, o.repeat);
    } else {
        printf("transient-bench %s  spiir, seed %llu, max delay %d, median of %d\n",
               tr_version(), (unsigned long long)o.seed, o.max_delay, o.repeat);
        printf("CPU: %s, 1-core FP32 FMA %.1f GFLOP/s (%s)\n", cpu_name, cpu_fma * 1e-9,
               fma_how);
        if (have_cuda)
            printf("GPU: %s (cc %d.%d, %d SMs), FP32 FMA %.1f TFLOP/s\n", info.name,
                   info.cc_major, info.cc_minor, info.sm_count, gpu_fma * 1e-12);
        else
            printf("GPU: none (%s)\n", why);
        printf("\n%-11s %-13s %12s %9s %10s %10s %7s %8s %10s %8s\n", "variant", "mode",
               "bank", "samples", "seconds", "updates/s", "ceiling", "speedup",
               "realtime", "rel-rms");
    }
    fflush(stdout);

    const uint32_t shapes[2][2] = {{4096, 512}, {4096, 8}};
    const int nshapes = tpl || o.multirate ? 1 : 2;
    int rc = 0;
    for (int s = 0; s < nshapes; s++) {
        o.templates = tpl ? (uint32_t)tpl : shapes[s][0];
        o.filters = flt ? (uint32_t)flt : shapes[s][1];
        o.ups_per_sample = (double)o.templates * o.filters;
        if (o.multirate) {
            double per = 0.0;
            o.filters = 0;
            for (int L = 0; L < 7; L++) {
                o.filters += spiir_mr_counts[L];
                per += (double)spiir_mr_counts[L] / (double)(1 << L);
            }
            o.ups_per_sample = (double)o.templates * per;
        }
        spiir_sizes(&o, samples, ref, cpu);
        if (spiir_run_bank(&o, have_cuda, gpu_fma, cpu_fma) != 0) rc = 1;
    }
    return rc;
}

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--detector") != 0) continue;
        if (strcmp(argv[i + 1], "spiir") == 0) return spiir_main(argc, argv);
        if (strcmp(argv[i + 1], "kalman") == 0) return kalman_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "boxcar") == 0) return boxcar_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "spiir-triggers") == 0)
            return spiir_triggers_bench_main(argc, argv);
    }

    options o;
    memset(&o, 0, sizeof o);
    o.samples = (size_t)1 << 28;
    o.ref_samples = (size_t)1 << 25;
    o.repeat = 5;
    o.seed = 1;
    const char *detector = NULL;
    for (int k = 0; k < 4; k++)
        o.want[k] = 1;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t z;
        if (strcmp(a, "--json") == 0) {
            o.json = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (!v) {
            usage(stderr);
            return 2;
        } else if (strcmp(a, "--detector") == 0) {
            detector = v, i++;
        } else if (strcmp(a, "--samples") == 0 && parse_size(v, &z) == 0 && z > 0) {
            o.samples = z, i++;
        } else if (strcmp(a, "--ref-samples") == 0 && parse_size(v, &z) == 0 && z > 0) {
            o.ref_samples = z, i++;
        } else if (strcmp(a, "--repeat") == 0 && parse_size(v, &z) == 0 && z >= 1 &&
                   z < MAX_REPEAT) {
            o.repeat = (int)z, i++;
        } else if (strcmp(a, "--seed") == 0 && parse_size(v, &z) == 0) {
            o.seed = (uint64_t)z, i++;
        } else if (strcmp(a, "--device") == 0 && parse_size(v, &z) == 0 && z < 1024) {
            o.device = (int)z, i++;
        } else if (strcmp(a, "--batch") == 0 && parse_size(v, &z) == 0 && z > 0) {
            o.batch = z, i++;
        } else if (strcmp(a, "--drops") == 0) {
            o.drops = atof(v), i++;
        } else if (strcmp(a, "--variants") == 0) {
            i++;
            o.explicit_variants = 1;
            if (parse_variants(v, o.want) != 0) return 2;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!detector || strcmp(detector, "edges") != 0) {
        fprintf(stderr, "transient-bench: --detector edges, boxcar, spiir or kalman is "
                        "required\n");
        return 2;
    }
    if (o.ref_samples > o.samples) o.ref_samples = o.samples;

    /* ---- environment ---- */
    char why[256] = "", cpu[256], esc[512];
    bh_cpu_model(cpu, sizeof cpu);
    const int ndev = tr_cuda_device_count(why, sizeof why);
    const int have_cuda = ndev > o.device;
    if (!have_cuda && ndev > 0)
        snprintf(why, sizeof why, "device %d not present", o.device);
    if (!have_cuda && o.explicit_variants && (o.want[2] || o.want[3])) {
        fprintf(stderr, "transient-bench: CUDA variants requested but unavailable: %s\n",
                why);
        return 2;
    }
    if (!have_cuda) o.want[2] = o.want[3] = 0;

    const double host_bw = host_read_bw((size_t)256 << 20, 5);
    tr_bench_device_info info;
    double dev_read = 0, dev_copy = 0, h2d = 0, d2h = 0, fma = 0;
    memset(&info, 0, sizeof info);
    if (have_cuda) {
        tr_status s = tr_bench_device_info_get(o.device, &info);
        if (s == TR_OK)
            s = tr_bench_device_read_bw(o.device, (size_t)1 << 30, 10, &dev_read);
        if (s == TR_OK)
            s = tr_bench_device_copy_bw(o.device, (size_t)1 << 30, 10, &dev_copy);
        if (s == TR_OK) s = tr_bench_h2d_bw(o.device, (size_t)256 << 20, 10, &h2d);
        if (s == TR_OK) s = tr_bench_d2h_bw(o.device, (size_t)256 << 20, 10, &d2h);
        if (s == TR_OK) s = tr_bench_device_fma_rate(o.device, 10, &fma);
        if (s != TR_OK) {
            fprintf(stderr, "transient-bench: device measurements failed: %s\n",
                    tr_bench_last_error());
            return 1;
        }
    }

    /* ---- the signal ---- */
    tr_sig_config sc = tr_sig_config_default();
    sc.seed = o.seed;
    sc.drop_prob = o.drops;
    tr_sig_info sig;
    float *x = malloc(o.samples * sizeof *x);
    if (!x) {
        fprintf(stderr, "transient-bench: cannot allocate %zu samples\n", o.samples);
        return 1;
    }
    const double tg = bh_now();
    if (tr_sig_generate(&sc, x, o.samples, &sig) != 0) {
        fprintf(stderr, "transient-bench: bad signal configuration\n");
        return 1;
    }
    const double gen_s = bh_now() - tg;
    /* Transitions in the reference's prefix. */
    const size_t prefix_edges =
        tr_sig_count_transitions(x, o.ref_samples, sig.low, sig.high);

    if (o.json) {
        printf("{\"type\":\"env\",\"library_version\":\"%s\",\"cuda_compiled\":%d,",
               tr_version(), tr_cuda_compiled());
        bh_json_escape(esc, sizeof esc, cpu);
        printf("\"cpu_model\":\"%s\",\"host_read_bw_1core\":%.6g,", esc, host_bw);
        if (have_cuda) {
            bh_json_escape(esc, sizeof esc, info.name);
            printf(
                "\"gpu\":\"%s\",\"cuda_driver_version\":%d,\"cuda_runtime_version\":%d,"
                "\"compute_capability\":\"%d.%d\",\"sm_count\":%d,\"gpu_memory\":%zu,"
                "\"l2_bytes\":%zu,\"device_read_bw\":%.6g,\"device_copy_bw\":%.6g,"
                "\"h2d_pinned_bw\":%.6g,\"d2h_pinned_bw\":%.6g,\"fp32_fma_flops\":%.6g,",
                esc, info.driver_version, info.runtime_version, info.cc_major,
                info.cc_minor, info.sm_count, info.global_mem_bytes, info.l2_bytes,
                dev_read, dev_copy, h2d, d2h, fma);
        } else {
            bh_json_escape(esc, sizeof esc, why);
            printf("\"gpu\":null,\"cuda_unavailable\":\"%s\",", esc);
        }
        printf(
            "\"signal\":{\"seed\":%llu,\"samples\":%zu,\"edges\":%zu,\"runts\":%zu,"
            "\"oscillations\":%zu,\"drops\":%zu,\"low\":%.9g,\"mid\":%.9g,\"high\":%.9g,"
            "\"generate_seconds\":%.3f},\"repeat\":%d}\n",
            (unsigned long long)o.seed, o.samples, sig.edges, sig.runts, sig.oscillations,
            sig.drops, sig.low, sig.mid, sig.high, gen_s, o.repeat);
    } else {
        printf("transient-bench %s  edges, %zu samples (%zu transitions), seed %llu, "
               "median of %d\n",
               tr_version(), o.samples, sig.edges, (unsigned long long)o.seed, o.repeat);
        printf("CPU: %s, 1-core read %.2f GB/s\n", cpu, host_bw * 1e-9);
        if (have_cuda)
            printf(
                "GPU: %s (cc %d.%d, %d SMs), driver %d, runtime %d\n"
                "     read %.0f GB/s, copy %.0f GB/s (r+w), H2D %.1f GB/s, D2H %.1f GB/s,"
                " FP32 %.1f TFLOP/s\n",
                info.name, info.cc_major, info.cc_minor, info.sm_count,
                info.driver_version, info.runtime_version, dev_read * 1e-9,
                dev_copy * 1e-9, h2d * 1e-9, d2h * 1e-9, fma * 1e-12);
        else
            printf("GPU: none (%s)\n", why);
    }
    fflush(stdout);

    /* ---- the variants ---- */
    size_t cap = sig.edges + 1024;
    tr_edge *out = malloc(cap * sizeof *out);
    if (!out) {
        fprintf(stderr, "transient-bench: cannot allocate the transitions\n");
        return 1;
    }
    result res[MAX_RESULTS];
    int nres = 0;
    const double cpu_ceiling = host_bw / 4.0;
    int i_ref = -1;

    if (o.want[0]) {
        result *r = &res[nres];
        memset(r, 0, sizeof *r);
        r->variant = "reference", r->backend = "cpu", r->mode = "host";
        r->ceiling = cpu_ceiling, r->ceiling_name = "host_read_bw_1core/4";
        run_host_variant(&o, &sig, x, o.ref_samples, TR_BACKEND_CPU, TR_VARIANT_REFERENCE,
                         r, &out, &cap);
        if (r->ok) i_ref = nres++;
    }
    if (o.want[1]) {
        result *r = &res[nres];
        memset(r, 0, sizeof *r);
        r->variant = "cpu-fast", r->backend = "cpu", r->mode = "host";
        r->ceiling = cpu_ceiling, r->ceiling_name = "host_read_bw_1core/4";
        run_host_variant(&o, &sig, x, o.samples, TR_BACKEND_CPU, TR_VARIANT_FAST, r, &out,
                         &cap);
        if (r->ok) {
            if (i_ref >= 0)
                r->baseline = "reference", r->speedup = r->sps / res[i_ref].sps;
            nres++;
        }
    }

    if (o.want[2] || o.want[3]) {
        void *d_x = NULL;
        if (tr_bench_dev_alloc(o.device, o.samples * sizeof(float), &d_x) != TR_OK ||
            tr_bench_dev_upload(d_x, x, o.samples * sizeof(float)) != TR_OK) {
            fail_msg("cannot put the signal on the device: %s", tr_bench_last_error());
        } else {
            /* Paper first: it is the baseline of the fast variant. */
            const char *modes[2] = {"device", "host-to-host"};
            for (int m = 0; m < 2; m++) {
                int i_paper = -1;
                for (int v = 3; v >= 2; v--) {
                    if (!o.want[v]) continue;
                    const tr_variant tv = v == 3 ? TR_VARIANT_PAPER : TR_VARIANT_FAST;
                    result *r = &res[nres];
                    memset(r, 0, sizeof *r);
                    r->variant = k_variants[v], r->backend = "cuda", r->mode = modes[m];
                    if (m == 0) {
                        r->ceiling = dev_read / 4.0, r->ceiling_name = "device_read_bw/4";
                        run_device_variant(&o, &sig, (const float *)d_x, o.samples, tv, r,
                                           &out, &cap);
                    } else {
                        r->ceiling = h2d / 4.0, r->ceiling_name = "h2d_pinned_bw/4";
                        run_host_variant(&o, &sig, x, o.samples, TR_BACKEND_CUDA, tv, r,
                                         &out, &cap);
                    }
                    if (!r->ok) continue;
                    if (v == 3) i_paper = nres;
                    if (v == 2 && i_paper >= 0)
                        r->baseline = "cuda-paper",
                        r->speedup = r->sps / res[i_paper].sps;
                    nres++;
                }
            }
        }
        tr_bench_dev_free(d_x);
    }

    /* ---- the check ---- */
    int ok = !g_failed;
    char detail[512] = "";
    const result *full = NULL;
    for (int k = 0; k < nres; k++) {
        const result *r = &res[k];
        if (r->samples == o.samples) {
            if (!full) full = r;
            if (r->sum.count != sig.edges || r->sum.count != full->sum.count ||
                r->sum.hash != full->sum.hash) {
                ok = 0;
                snprintf(detail, sizeof detail,
                         "%s/%s found %llu transitions (checksum %016llx), %s/%s %llu "
                         "(%016llx), the signal has %zu",
                         r->variant, r->mode, (unsigned long long)r->sum.count,
                         (unsigned long long)r->sum.hash, full->variant, full->mode,
                         (unsigned long long)full->sum.count,
                         (unsigned long long)full->sum.hash, sig.edges);
            }
        }
    }
    for (int k = 0; k < nres; k++) {
        /* The prefix run against the prefix of every full run. */
        const result *r = &res[k];
        if (r->samples == o.samples) continue;
        if (r->sum.count != prefix_edges) {
            ok = 0;
            snprintf(detail, sizeof detail,
                     "%s found %llu transitions in %zu samples, the "
                     "signal has %zu",
                     r->variant, (unsigned long long)r->sum.count, r->samples,
                     prefix_edges);
        }
        for (int j = 0; j < nres; j++) {
            const result *f = &res[j];
            if (f->samples != o.samples) continue;
            if (f->sum.prefix_count != r->sum.count ||
                f->sum.prefix_hash != r->sum.hash) {
                ok = 0;
                snprintf(
                    detail, sizeof detail,
                    "first %zu samples: %s found %llu transitions (%016llx), %s/%s %llu "
                    "(%016llx)",
                    r->samples, r->variant, (unsigned long long)r->sum.count,
                    (unsigned long long)r->sum.hash, f->variant, f->mode,
                    (unsigned long long)f->sum.prefix_count,
                    (unsigned long long)f->sum.prefix_hash);
            }
        }
    }
    if (nres == 0) ok = 0;

    if (o.json) {
        for (int k = 0; k < nres; k++)
            print_result_json(&res[k], o.samples, o.ref_samples);
        bh_json_escape(esc, sizeof esc, detail);
        printf("{\"type\":\"check\",\"ok\":%s,\"results\":%d,\"transitions\":%zu,"
               "\"detail\":\"%s\"}\n",
               ok ? "true" : "false", nres, sig.edges, esc);
    } else {
        printf("\n%-11s %-7s %-13s %11s %10s %9s %7s %8s %12s %-16s\n", "variant",
               "backend", "mode", "samples", "seconds", "Msamp/s", "ceiling", "speedup",
               "transitions", "checksum");
        for (int k = 0; k < nres; k++) {
            const result *r = &res[k];
            char sp[32] = "-";
            if (r->speedup > 0) snprintf(sp, sizeof sp, "%.2fx", r->speedup);
            printf("%-11s %-7s %-13s %11zu %10.6f %9.1f %6.1f%% %8s %12llu %016llx\n",
                   r->variant, r->backend, r->mode, r->samples, r->seconds, r->sps * 1e-6,
                   r->ceiling > 0 ? 100.0 * r->sps / r->ceiling : 0.0, sp,
                   (unsigned long long)r->sum.count, (unsigned long long)r->sum.hash);
        }
        printf("ceilings: host %.1f Msamp/s (1-core read / 4 B)", cpu_ceiling * 1e-6);
        if (have_cuda)
            printf(", device %.1f Msamp/s (read / 4 B), host-to-host %.1f Msamp/s (H2D / "
                   "4 B)",
                   dev_read / 4.0 * 1e-6, h2d / 4.0 * 1e-6);
        printf("\ncheck: %s%s%s\n",
               ok ? "all variants found the same transitions" : "MISMATCH",
               detail[0] ? ": " : "", detail);
    }
    free(out);
    free(x);
    return ok ? 0 : 1;
}
