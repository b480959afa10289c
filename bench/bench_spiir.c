/*
 * transient-bench --detector spiir: throughput of the SPIIR filter bank.
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

#define _POSIX_C_SOURCE 200809L

#include "bench_device.h"
#include "bench_host.h"
#include "transient_bench.h"

#include <transient/spiir.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Room for nt templates of nf filters each, counts[] set to nf; 0, or -1
 * with err set. */
static int spiir_bank_alloc(uint32_t nt, uint32_t nf, tr_spiir_filter **f,
                            uint32_t **counts, tr_error *err)
{
    *f = malloc((size_t)nt * nf * sizeof **f);
    *counts = malloc((size_t)nt * sizeof **counts);
    if (!*f || !*counts) {
        snprintf(err->message, sizeof err->message, "out of memory for the bank");
        free(*f);
        free(*counts);
        return -1;
    }
    for (uint32_t t = 0; t < nt; t++)
        (*counts)[t] = nf;
    return 0;
}

/* The bank of the filled filters at the benchmark's rate; frees f and counts. */
static tr_spiir_bank *spiir_bank_finish(tr_spiir_filter *f, uint32_t *counts, uint32_t nt,
                                        tr_error *err)
{
    tr_spiir_bank *b = tr_spiir_bank_create(f, counts, nt, 1.0 / SPIIR_RATE, err);
    free(f);
    free(counts);
    return b;
}

static tr_spiir_bank *spiir_make_bank(uint32_t nt, uint32_t nf, int32_t max_delay,
                                      uint64_t seed, tr_error *err)
{
    const double pi = 3.14159265358979323846;
    tr_spiir_filter *f;
    uint32_t *counts;
    if (spiir_bank_alloc(nt, nf, &f, &counts, err) != 0) return NULL;
    spiir_rng r = {seed * 0x2545f4914f6cdd1dull + 0x5bd1e995};
    for (uint32_t t = 0; t < nt; t++) {
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
    return spiir_bank_finish(f, counts, nt, err);
}

/* Filters per template at levels 0..6 of the multirate benchmark bank. */
static const uint32_t spiir_mr_counts[7] = {10, 21, 36, 65, 115, 203, 88};

static tr_spiir_bank *spiir_make_mr_bank(uint32_t nt, uint64_t seed, tr_error *err)
{
    const double pi = 3.14159265358979323846;
    uint32_t nf = 0;
    for (int L = 0; L < 7; L++)
        nf += spiir_mr_counts[L];
    tr_spiir_filter *f;
    uint32_t *counts;
    if (spiir_bank_alloc(nt, nf, &f, &counts, err) != 0) return NULL;
    spiir_rng r = {seed * 0x2545f4914f6cdd1dull + 0x9e3779b9};
    for (uint32_t t = 0; t < nt; t++) {
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
    return spiir_bank_finish(f, counts, nt, err);
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
        bench_fail("spiir: cannot create %s/%s: %s", tr_backend_name(backend),
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
    double t[BENCH_MAX_REPEAT];
    for (int k = 0; k <= o->repeat; k++) {
        if (tr_spiir_reset(q) != TR_OK) {
            bench_fail("spiir: reset: %s", tr_spiir_last_error(q));
            return -1;
        }
        const double t0 = bh_now();
        if (tr_spiir_process(q, x, n, snr) != TR_OK) {
            bench_fail("spiir: process: %s", tr_spiir_last_error(q));
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
    double t[BENCH_MAX_REPEAT];
    int rc = -1;
    if (tr_bench_timer_create(o->device, &tm) != TR_OK) {
        bench_fail("spiir: timer: %s", tr_bench_last_error());
        return -1;
    }
    for (int k = 0; k <= o->repeat; k++) {
        if (tr_spiir_reset(q) != TR_OK) {
            bench_fail("spiir: reset: %s", tr_spiir_last_error(q));
            goto done;
        }
        if (tr_bench_timer_start(tm) != TR_OK) {
            bench_fail("spiir: timer: %s", tr_bench_last_error());
            goto done;
        }
        if (tr_spiir_process_device(q, d_x, n, d_snr) != TR_OK) {
            bench_fail("spiir: process_device: %s", tr_spiir_last_error(q));
            goto done;
        }
        double sec = 0.0;
        if (tr_bench_timer_stop(tm, &sec) != TR_OK) {
            bench_fail("spiir: timer: %s", tr_bench_last_error());
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
        bench_fail("spiir: bank: %s", err.message);
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
        bench_fail("spiir: cannot allocate %zu samples of SNR for %u templates", n,
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
            bench_fail("spiir: device buffers (%zu MB of SNR): %s",
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
                        bench_fail("spiir: download SNR: %s", tr_bench_last_error());
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
    if (bench_failed() && detail[0] == '\0')
        snprintf(detail, sizeof detail, "a variant failed to run (see stderr)");
    if (nres == 0) ok = 0;
    if (o->json) {
        char esc[1024];
        bh_json_escape(esc, sizeof esc, detail);
        printf(
            "{\"type\":\"check\",\"detector\":\"spiir\",\"templates\":%u,\"filters\":%u,"
            "\"ok\":%s,\"results\":%d,\"tolerance\":%g,\"detail\":\"%s\"}\n",
            o->templates, o->filters, ok && !bench_failed() ? "true" : "false", nres,
            SPIIR_TOL, esc);
    } else {
        printf("check %u x %u: %s%s%s\n", o->templates, o->filters,
               ok && !bench_failed() ? "every variant within 1e-4 of the reference"
                                     : "FAILED",
               detail[0] ? ": " : "", detail);
    }
    fflush(stdout);
    tr_bench_dev_free(d_snr);
    tr_bench_dev_free(d_x);
    free(x);
    free(snr);
    free(ref);
    tr_spiir_bank_destroy(bank);
    return ok && !bench_failed() ? 0 : 1;
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

int spiir_bench_main(int argc, char **argv)
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
        } else if (strcmp(a, "--templates") == 0 && bench_parse_size(v, &z) == 0 &&
                   z > 0 && z <= 1000000) {
            tpl = z, i++;
        } else if (strcmp(a, "--filters") == 0 && bench_parse_size(v, &z) == 0 && z > 0 &&
                   z <= 65536) {
            flt = z, i++;
        } else if (strcmp(a, "--samples") == 0 && bench_parse_size(v, &z) == 0 && z > 0) {
            samples = z, i++;
        } else if (strcmp(a, "--ref-samples") == 0 && bench_parse_size(v, &z) == 0 &&
                   z > 0) {
            ref = z, i++;
        } else if (strcmp(a, "--cpu-samples") == 0 && bench_parse_size(v, &z) == 0 &&
                   z > 0) {
            cpu = z, i++;
        } else if (strcmp(a, "--max-delay") == 0 && bench_parse_size(v, &z) == 0 &&
                   z <= TR_SPIIR_MAX_DELAY) {
            o.max_delay = (int32_t)z, i++;
        } else if (bench_parse_run_option(a, v, &o.repeat, &o.seed, &o.device,
                                          &o.batch)) {
            i++;
        } else if (strcmp(a, "--variants") == 0) {
            i++;
            o.explicit_variants = 1;
            if (bench_parse_variants(v, o.want) != 0) return 2;
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
    const int have_cuda =
        bench_cuda_probe(o.device, o.explicit_variants, o.want, why, sizeof why);
    if (have_cuda < 0) return 2;
    const char *fma_how = "scalar";
    const double cpu_fma = bh_host_fma_rate(&fma_how);
    double gpu_fma;
    tr_bench_device_info info;
    if (bench_device_fma(have_cuda, o.device, &info, &gpu_fma) != 0) return 1;
    if (o.json) {
        bench_json_env_head("spiir", cpu_name, cpu_fma, fma_how);
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
