/*
 * transient-bench --detector dedisp: dedispersion throughput (cpu-fast,
 * cuda-fast) in DM-trial samples per second, beside its ceilings.
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012).
 *
 *   transient-bench --detector dedisp [--nchan 1024] [--tsamp 64e-6]
 *       [--fch1 1599.8046875] [--foff -0.390625] [--dm-max 2000] [--tol 1.25]
 *       [--samples 262144] [--cpu-samples 16384] [--zero-dm] [--scrunch] [--file F.fil]
 *       [--variants cpu-fast,cuda-fast] [--repeat R] [--device D] [--batch B]
 *       [--json]
 *
 * Defaults are the synthetic file of Heimdall's peer benchmark (1024
 * channels 1600-1200 MHz, 64 us, DM 0-2000, tolerance 1.25, 1422 trials of
 * dedisp's list, all at full time resolution; --scrunch: dedisp's time
 * scrunching, 682.5 full-rate trials there). Input: 8-bit-valued random
 * spectra. Every run starts from tr_dedisp_reset; median of R runs.
 * Modes: cpu-fast "host" (tr_dedisp_process, all cores); cuda-fast "device"
 * (float spectra already on the GPU, outputs left there:
 * tr_dedisp_process_device), "raw-device" (8-bit spectra in page-locked host
 * memory copied up and unpacked on the GPU, outputs left there:
 * tr_dedisp_process_raw_device) and "host" (float in, float out through
 * page-locked host memory); --file: the whole file through the reader
 * (tr_filterbank_read_raw, page cache) into tr_dedisp_process_raw_device and
 * flush_device, timed from open to the last output.
 *
 * Ceilings, in trial-samples per second: "memory" = ndm / (bytes moved per
 * spectrum / measured device copy bandwidth), the bytes being one read of
 * the spectrum (4 nchan, or nchan for 8-bit input) and one write of its ndm
 * outputs; "adds" = measured FP32 rate (an add issues like an FMA, so
 * fma_flops / 2 adds/s) / nused adds per trial-sample. Host: one core's
 * FMA rate times the threads. Check: CUDA against cpu-fast (which the tests
 * hold to the reference bit for bit) on --check samples plus the flush,
 * bit for bit (--check 0: no check).
 */
#define _POSIX_C_SOURCE 200809L
#include "bench_device.h"
#include "bench_host.h"
#include "transient_bench.h"

#include <transient/dedisp.h>
#include <transient/filterbank.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    tr_dedisp_plan_config plan;
    int zero_dm, json, repeat, device, explicit_variants;
    size_t samples, cpu_samples, check, batch;
    const char *file;
    int want[4]; /* reference, cpu-fast, cuda-fast, cuda-paper */
    uint64_t seed;
} db_options;

static int db_parse(int argc, char **argv, db_options *o)
{
    o->plan = tr_dedisp_plan_config_default();
    o->plan.nchan = 1024;
    o->plan.tsamp = 64e-6;
    o->plan.fch1 = 1599.8046875;
    o->plan.foff = -0.390625;
    o->plan.dm_max = 2000;
    o->samples = 262144;
    o->cpu_samples = 16384;
    o->check = 2048;
    o->batch = 0;
    o->repeat = 3;
    o->want[1] = o->want[2] = 1;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            o->json = 1;
            continue;
        }
        if (!strcmp(a, "--zero-dm")) {
            o->zero_dm = 1;
            continue;
        }
        if (!strcmp(a, "--scrunch")) {
            o->plan.scrunch = 1;
            continue;
        }
        if (!v) {
            bench_fail("dedisp: %s needs a value", a);
            return -1;
        }
        ++i;
        if (!strcmp(a, "--detector")) continue;
        if (bench_parse_run_option(a, v, &o->repeat, &o->seed, &o->device, &o->batch))
            continue;
        int ok = 1;
        if (!strcmp(a, "--nchan"))
            o->plan.nchan = (uint32_t)atol(v);
        else if (!strcmp(a, "--tsamp"))
            o->plan.tsamp = atof(v);
        else if (!strcmp(a, "--fch1"))
            o->plan.fch1 = atof(v);
        else if (!strcmp(a, "--foff"))
            o->plan.foff = atof(v);
        else if (!strcmp(a, "--dm-max"))
            o->plan.dm_max = atof(v);
        else if (!strcmp(a, "--tol"))
            o->plan.tolerance = atof(v);
        else if (!strcmp(a, "--samples"))
            ok = bench_parse_size(v, &o->samples) == 0 && o->samples > 0;
        else if (!strcmp(a, "--cpu-samples"))
            ok = bench_parse_size(v, &o->cpu_samples) == 0 && o->cpu_samples > 0;
        else if (!strcmp(a, "--check"))
            ok = bench_parse_size(v, &o->check) == 0;
        else if (!strcmp(a, "--file"))
            o->file = v;
        else if (!strcmp(a, "--variants")) {
            ok = bench_parse_variants(v, o->want) == 0;
            o->explicit_variants = 1;
        } else
            ok = 0;
        if (!ok) {
            bench_fail("dedisp: bad option %s %s", a, v);
            return -1;
        }
    }
    return 0;
}

static tr_dedisp *db_create(const db_options *o, tr_backend backend, size_t batch)
{
    tr_dedisp_config c = tr_dedisp_config_default();
    c.plan = o->plan;
    c.zero_dm = o->zero_dm;
    c.backend = backend;
    c.device = o->device;
    c.batch = batch;
    tr_error err;
    tr_dedisp *q = tr_dedisp_create(&c, &err);
    if (!q) bench_fail("dedisp: create (%s): %s", tr_backend_name(backend), err.message);
    return q;
}

typedef struct {
    double mem_bw, add_rate; /* bytes/s, adds/s */
} db_ceil;

static void db_row(const db_options *o, const tr_dedisp *q, const char *variant,
                   const char *mode, size_t n, double seconds, double in_bytes,
                   const db_ceil *ce, const char *extra)
{
    const double ndm = tr_dedisp_ndm(q), rate = n * ndm / seconds;
    const double mem = ce->mem_bw > 0 ? ndm * ce->mem_bw / (in_bytes + 4.0 * ndm) : 0;
    const double add = ce->add_rate / tr_dedisp_nused(q);
    const double best = mem > 0 && mem < add ? mem : add;
    if (o->json)
        printf(
            "{\"type\":\"result\",\"detector\":\"dedisp\",\"variant\":\"%s\",\"mode\":"
            "\"%s\",\"nchan\":%u,\"ndm\":%u,\"latency\":%u,\"zero_dm\":%d,\"samples\":"
            "%zu,"
            "\"seconds\":%.9g,\"dm_samples_per_s\":%.6g,\"ceiling_memory_dm_samples_"
            "per_s\":"
            "%.6g,\"ceiling_adds_dm_samples_per_s\":%.6g,\"ratio\":%.6g,\"scrunch\":%d,"
            "\"full_rate_trials\":%.9g%s}\n",
            variant, mode, tr_dedisp_nchan(q), tr_dedisp_ndm(q), tr_dedisp_latency(q),
            o->zero_dm, n, seconds, rate, mem, add, rate / best, o->plan.scrunch,
            tr_dedisp_full_rate_trials(q), extra ? extra : "");
    else
        printf("%-9s %-10s %9zu spectra x %u trials (%.6g full-rate): %8.4f s  %.3e "
               "trial-samples/s  (ceilings: memory %.3e, adds %.3e; %.1f %% of the "
               "lower)\n",
               variant, mode, n, tr_dedisp_ndm(q), tr_dedisp_full_rate_trials(q), seconds,
               rate, mem, add, 100 * rate / best);
}

/* Random 8-bit-valued spectra as bytes and as floats. */
static void db_input(size_t n, uint32_t nchan, uint64_t seed, unsigned char *raw,
                     float *x)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (size_t i = 0; i < n * nchan; ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        const unsigned v = (unsigned)(s >> 56);
        if (raw) raw[i] = (unsigned char)v;
        if (x) x[i] = (float)v;
    }
}

static void db_cpu(const db_options *o, const db_ceil *ce)
{
    tr_dedisp *q = db_create(o, TR_BACKEND_CPU, 16384);
    if (!q) return;
    const size_t n = o->cpu_samples, ndm = tr_dedisp_ndm(q), nchan = o->plan.nchan;
    float *x = malloc(n * nchan * sizeof(float)), *y = malloc(n * ndm * sizeof(float));
    double t[BENCH_MAX_REPEAT];
    if (!x || !y) {
        bench_fail("dedisp: out of host memory");
    } else {
        db_input(n, (uint32_t)nchan, 1, NULL, x);
        for (int r = 0; r < o->repeat; ++r) {
            tr_dedisp_reset(q);
            const double t0 = bh_now();
            tr_dedisp_process(q, x, n, y);
            t[r] = bh_now() - t0;
        }
        db_row(o, q, "cpu-fast", "host", n, bh_median(t, o->repeat), 4.0 * nchan, ce,
               NULL);
    }
    free(x);
    free(y);
    tr_dedisp_destroy(q);
}

/* CUDA against cpu-fast, bit for bit, on `check` spectra and the flush. */
static void db_check(const db_options *o)
{
    tr_dedisp *g = db_create(o, TR_BACKEND_CUDA, 4096),
              *c = db_create(o, TR_BACKEND_CPU, 4096);
    if (g && c) {
        const size_t n = o->check, L = tr_dedisp_latency(c), ndm = tr_dedisp_ndm(c);
        unsigned char *raw = malloc(n * o->plan.nchan + 1);
        float *x = malloc((n * o->plan.nchan + 1) * sizeof(float));
        float *yg = malloc(((n + L) * ndm + 1) * sizeof(float));
        float *yc = malloc(((n + L) * ndm + 1) * sizeof(float));
        db_input(n, o->plan.nchan, 2, raw, x);
        tr_dedisp_process_raw(g, raw, n, yg);
        tr_dedisp_flush(g, yg + n * ndm);
        tr_dedisp_process(c, x, n, yc);
        tr_dedisp_flush(c, yc + n * ndm);
        size_t bad = 0;
        for (size_t i = 0; i < (n + L) * ndm; ++i)
            bad += memcmp(&yg[i], &yc[i], sizeof(float)) != 0;
        if (o->json)
            printf("{\"type\":\"check\",\"detector\":\"dedisp\",\"against\":\"cpu-fast\","
                   "\"spectra\":%zu,\"outputs\":%zu,\"differing\":%zu,\"ok\":%s}\n",
                   n, (n + L) * ndm, bad, bad ? "false" : "true");
        else
            printf("check: cuda-fast vs cpu-fast on %zu outputs: %zu differ\n",
                   (n + L) * ndm, bad);
        if (bad) bench_fail("dedisp: CUDA differs from cpu-fast in %zu outputs", bad);
        free(raw);
        free(x);
        free(yg);
        free(yc);
    }
    tr_dedisp_destroy(g);
    tr_dedisp_destroy(c);
}

static void db_cuda(const db_options *o, const db_ceil *ce)
{
    const size_t n = o->samples, nchan = o->plan.nchan;
    tr_dedisp *q = db_create(o, TR_BACKEND_CUDA, o->batch ? o->batch : n);
    if (!q) return;
    const size_t ndm = tr_dedisp_ndm(q);
    void *d_x = NULL, *d_y = NULL;
    unsigned char *raw = tr_dedisp_host_alloc(q, n * nchan);
    float *x = tr_dedisp_host_alloc(q, n * nchan * sizeof(float));
    float *y = tr_dedisp_host_alloc(q, n * ndm * sizeof(float));
    if (tr_bench_dev_alloc(o->device, n * nchan * sizeof(float), &d_x) != TR_OK ||
        tr_bench_dev_alloc(o->device, n * ndm * sizeof(float), &d_y) != TR_OK || !raw ||
        !x || !y) {
        bench_fail("dedisp: out of memory for %zu spectra", n);
    } else {
        db_input(n, (uint32_t)nchan, 3, raw, x);
        tr_bench_dev_upload(d_x, x, n * nchan * sizeof(float));
        static const char *const modes[] = {"device", "raw-device", "host"};
        const double in_bytes[] = {4.0 * nchan, 1.0 * nchan, 4.0 * nchan};
        for (int m = 0; m < 3; ++m) {
            double t[BENCH_MAX_REPEAT];
            for (int r = 0; r < o->repeat + 1; ++r) { /* the first run warms up */
                tr_dedisp_reset(q);
                const double t0 = bh_now();
                tr_status s = m == 0   ? tr_dedisp_process_device(q, d_x, n, d_y)
                              : m == 1 ? tr_dedisp_process_raw_device(q, raw, n, d_y)
                                       : tr_dedisp_process(q, x, n, y);
                if (s != TR_OK)
                    bench_fail("dedisp: %s: %s", modes[m], tr_dedisp_last_error(q));
                if (r) t[r - 1] = bh_now() - t0;
            }
            db_row(o, q, "cuda-fast", modes[m], n, bh_median(t, o->repeat), in_bytes[m],
                   ce, NULL);
        }
    }
    tr_bench_dev_free(d_x);
    tr_bench_dev_free(d_y);
    tr_dedisp_host_free(q, raw);
    tr_dedisp_host_free(q, x);
    tr_dedisp_host_free(q, y);
    tr_dedisp_destroy(q);
}

/* The whole file: read raw chunks, dedisperse on the GPU, outputs left there. */
static void db_file(const db_options *o, const db_ceil *ce)
{
    tr_error err;
    tr_filterbank *f = tr_filterbank_open(o->file, &err);
    if (!f) {
        bench_fail("dedisp: %s", err.message);
        return;
    }
    const tr_filterbank_header *h = tr_filterbank_get_header(f);
    db_options fo = *o;
    fo.plan.nchan = h->nchans;
    fo.plan.fch1 = h->fch1;
    fo.plan.foff = h->foff;
    fo.plan.tsamp = h->tsamp;
    const size_t chunk = o->batch ? o->batch : 65536;
    tr_dedisp_config c = tr_dedisp_config_default();
    c.plan = fo.plan;
    c.zero_dm = o->zero_dm;
    c.raw_nbits = h->nbits;
    c.backend = TR_BACKEND_CUDA;
    c.device = o->device;
    c.batch = chunk;
    tr_dedisp *q = tr_dedisp_create(&c, &err);
    if (!q) {
        bench_fail("dedisp: create: %s", err.message);
        tr_filterbank_close(f);
        return;
    }
    const size_t ndm = tr_dedisp_ndm(q), L = tr_dedisp_latency(q);
    const size_t outs = chunk > L ? chunk : L;
    unsigned char *raw = tr_dedisp_host_alloc(q, chunk * h->spectrum_bytes);
    void *d_y = NULL;
    if (!raw ||
        tr_bench_dev_alloc(o->device, outs * ndm * sizeof(float), &d_y) != TR_OK) {
        bench_fail("dedisp: out of memory for the file run");
    } else {
        double t[BENCH_MAX_REPEAT];
        for (int r = 0; r < o->repeat; ++r) {
            tr_dedisp_reset(q);
            tr_filterbank_seek(f, 0);
            const double t0 = bh_now();
            size_t got = 0;
            while (tr_filterbank_read_raw(f, raw, chunk, &got) == TR_OK && got)
                if (tr_dedisp_process_raw_device(q, raw, got, d_y) != TR_OK)
                    bench_fail("dedisp: %s", tr_dedisp_last_error(q));
            if (tr_dedisp_flush_device(q, d_y) != TR_OK)
                bench_fail("dedisp: flush: %s", tr_dedisp_last_error(q));
            t[r] = bh_now() - t0;
        }
        char extra[512], esc[400];
        bh_json_escape(esc, sizeof esc, o->file);
        snprintf(extra, sizeof extra, ",\"file\":\"%s\",\"nbits\":%u,\"chunk\":%zu", esc,
                 h->nbits, chunk);
        db_row(&fo, q, "cuda-fast", "file", (size_t)h->nsamples, bh_median(t, o->repeat),
               h->nbits / 8.0 * h->nchans, ce, extra);
    }
    tr_bench_dev_free(d_y);
    tr_dedisp_host_free(q, raw);
    tr_dedisp_destroy(q);
    tr_filterbank_close(f);
}

int dedisp_bench_main(int argc, char **argv)
{
    db_options o;
    memset(&o, 0, sizeof o);
    if (db_parse(argc, argv, &o) != 0) return 2;
    char why[256];
    const int cuda =
        bench_cuda_probe(o.device, o.explicit_variants, o.want, why, sizeof why);
    if (cuda < 0) return 1;
    tr_bench_device_info info;
    double fma = 0;
    if (bench_device_fma(cuda && o.want[2], o.device, &info, &fma)) return 1;
    const char *fma_kind = "";
    char cpu[256];
    bh_cpu_model(cpu, sizeof cpu);
    const double host_fma = bh_host_fma_rate(&fma_kind);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 1) cores = 1;
    db_ceil gce = {0, fma / 2}, hce = {0, host_fma / 2 * (double)cores};
    if (cuda && o.want[2] &&
        tr_bench_device_copy_bw(o.device, (size_t)1 << 30, 5, &gce.mem_bw) != TR_OK) {
        bench_fail("dedisp: device bandwidth: %s", tr_bench_last_error());
        return 1;
    }
    if (o.json) {
        bench_json_env_head("dedisp", cpu, host_fma, fma_kind);
        printf(
            "\"host_cores\":%ld,\"gpu\":\"%s\",\"fp32_fma_flops\":%.6g,"
            "\"device_copy_bytes_per_s\":%.6g,\"tsamp\":%.9g,\"fch1\":%.9g,\"foff\":%.9g,"
            "\"dm_max\":%g,\"tolerance\":%g,\"pulse_width_us\":%g,\"repeat\":%d}\n",
            cores, cuda && o.want[2] ? info.name : "", fma, gce.mem_bw, o.plan.tsamp,
            o.plan.fch1, o.plan.foff, o.plan.dm_max, o.plan.tolerance, o.plan.pulse_width,
            o.repeat);
    } else {
        printf("dedisp: %u channels, DM 0-%g, GPU %s (copy %.3e B/s, FMA %.3e flop/s)\n",
               o.plan.nchan, o.plan.dm_max, cuda ? info.name : "none", gce.mem_bw, fma);
    }
    if (o.want[2] && cuda) {
        if (o.check) db_check(&o);
        db_cuda(&o, &gce);
        if (o.file) db_file(&o, &gce);
    } else if (o.want[2] && !cuda && !o.json) {
        printf("cuda-fast skipped: %s\n", why);
    }
    if (o.want[1]) db_cpu(&o, &hce);
    return bench_failed() ? 1 : 0;
}
