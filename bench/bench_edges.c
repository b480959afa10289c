/*
 * transient-bench --detector edges: throughput of the edge localizer against
 * the ceilings of the machine it runs on.
 *
 *   transient-bench --detector edges [--samples N] [--json] [--variants LIST]
 *                   [--repeat R] [--seed S] [--ref-samples N] [--device D]
 *                   [--batch B] [--drops P]
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

#include "bench_device.h"
#include "bench_host.h"
#include "signals.h"
#include "transient_bench.h"

#include <transient/edges.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_RESULTS 16

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
    double t[BENCH_MAX_REPEAT];
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
        bench_fail("cannot create %s/%s: %s", tr_backend_name(backend),
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
            bench_fail("process: %s", tr_edges_last_error(q));
            return -1;
        }
        done += used;
        *nout += got;
        if (done < n && *nout == *cap) {
            tr_edge *p = realloc(*out, 2 * *cap * sizeof **out);
            if (!p) {
                bench_fail("out of memory for transitions");
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
    double t[BENCH_MAX_REPEAT];
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
        bench_fail("device setup: %s", tr_bench_last_error());
        goto done;
    }
    double t[BENCH_MAX_REPEAT];
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
                bench_fail("process_device: %s", tr_edges_last_error(q));
                goto done;
            }
            done += used;
            nout += got;
            if (done < n && nout == dcap) {
                bench_fail("%s: more transitions than the %zu the signal has",
                           bench_variant_names[variant == TR_VARIANT_PAPER ? 3 : 2],
                           dcap);
                goto done;
            }
        }
        double sec = 0.0;
        if ((s = tr_bench_timer_stop(tm, &sec)) != TR_OK) {
            bench_fail("timer: %s", tr_bench_last_error());
            goto done;
        }
        if (k > 0) t[k - 1] = sec;
    }
    if ((s = tr_bench_dev_download(*out, d_out, nout * sizeof(tr_edge))) != TR_OK) {
        bench_fail("download transitions: %s", tr_bench_last_error());
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

/* Also answers a missing or unknown --detector, which it refuses once the
 * options are read. */
int edges_bench_main(int argc, char **argv)
{
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
        } else if (strcmp(a, "--samples") == 0 && bench_parse_size(v, &z) == 0 && z > 0) {
            o.samples = z, i++;
        } else if (strcmp(a, "--ref-samples") == 0 && bench_parse_size(v, &z) == 0 &&
                   z > 0) {
            o.ref_samples = z, i++;
        } else if (bench_parse_run_option(a, v, &o.repeat, &o.seed, &o.device,
                                          &o.batch)) {
            i++;
        } else if (strcmp(a, "--drops") == 0) {
            o.drops = atof(v), i++;
        } else if (strcmp(a, "--variants") == 0) {
            i++;
            o.explicit_variants = 1;
            if (bench_parse_variants(v, o.want) != 0) return 2;
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
    const int have_cuda =
        bench_cuda_probe(o.device, o.explicit_variants, o.want, why, sizeof why);
    if (have_cuda < 0) return 2;
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
            bench_fail("cannot put the signal on the device: %s", tr_bench_last_error());
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
                    r->variant = bench_variant_names[v], r->backend = "cuda",
                    r->mode = modes[m];
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
    int ok = !bench_failed();
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
