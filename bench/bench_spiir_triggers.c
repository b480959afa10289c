/*
 * transient-bench --detector spiir-triggers: the SPIIR trigger search
 * (tr_spiir_triggers_process) over the SNR of a filter bank, as the
 * spiir_bank blocks run it after every core call.
 *
 *   transient-bench --detector spiir-triggers [--templates T] [--filters L]
 *       [--window W] [--threshold X] [--batch B] [--period P] [--threads LIST]
 *       [--seconds S] [--pipeline] [--device] [--json]
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (the SNR of equation 8 that the triggers come from).
 *
 * The SNR: a random bank of T templates x L filters (poles near the unit
 * circle, delays up to 4096, as the flow graph benchmark's) run by the CPU core
 * over unit white noise with an impulse of 20000 every 16384 samples, P samples
 * (default 32768: 64 MiB of SNR for 256 templates, more than the caches), so
 * that the search reads its input from memory as the block does. Threshold
 * 0.02 (the noise gives |z| ~ 1e-3; every impulse puts each template above it
 * for thousands of samples), window 1024, B samples per call (8192) with the
 * block's trigger buffer of T * (8192 / (W + 1) + 2).
 *
 * Rows: REFERENCE; FAST with 1 thread and the generic kernel; FAST with each
 * thread count of LIST (default 1,2,0 = automatic) and the best kernel. Each
 * gives samples/s (a sample = T complex SNR values, 8 T bytes), the ceiling =
 * one core's measured read bandwidth over 8 T bytes, their ratio and the
 * speedup over REFERENCE in the same run; every row must give REFERENCE's
 * triggers (a "check" line; exit status 1 otherwise).
 *
 * --pipeline (CUDA): the core alone (tr_spiir_process, CUDA, FAST, B samples
 * per call into pageable memory, as the flow graph benchmark measures it)
 * beside the data path of the spiir_bank block in a work call of B output
 * items: the W held-back items copied into the output buffer, the core on B - W
 * new samples straight into it, the trigger search over them (automatic
 * threads), the W items held back again copied out; and the same without the
 * two copies (the blocks leave the pending items in GNU Radio's double-mapped
 * output buffer). The output buffer is pageable or page-locked
 * (cudaHostRegister, as the blocks page-lock their GNU Radio buffers). No GNU
 * Radio scheduler: an estimate of block/core.
 *
 * --device (CUDA): the trigger search on the GPU (tr_spiir_triggers_process_device),
 * B samples per call, the block's trigger buffer:
 *   device_scan              the search alone over the SNR resident on the device
 *                            (the CPU filter's SNR uploaded once); ceiling: the
 *                            device's read bandwidth over 8 T bytes a sample;
 *   filter_device            the CUDA filter alone (x uploaded, SNR left on the
 *                            device, tr_spiir_process_device): the ceiling of
 *                            the two paths below;
 *   filter_device_triggers   x uploaded, filtered, searched on the device: only
 *                            the triggers cross PCIe;
 *   filter_d2h_cpu_triggers  tr_spiir_process (x up, SNR down) and the FAST CPU
 *                            search (automatic threads), what the block does now;
 *                            ceiling also PCIe's measured device-to-host rate
 *                            over 8 T bytes a sample.
 * Checks: device_scan gives REFERENCE's triggers, and the two filter paths give
 * each other's (the same CUDA SNR); exit status 1 otherwise.
 */
#include "transient_bench.h"

#include "bench_device.h"
#include "bench_host.h"
#include "spiir/spiir_triggers_internal.h"

#include <transient/spiir.h>
#include <transient/spiir_triggers.h>

#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint32_t templates, filters, window;
    float threshold;
    size_t batch, period;
    double seconds;
    int json;
    int threads[16];
    int nthreads;
    int pipeline; /* also the block's data path with the CUDA core */
    int device;   /* also the trigger search on the GPU (--device) */
} st_options;

static uint64_t st_rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double st_uniform(uint64_t *s)
{
    return (double)(st_rng(s) >> 11) * 0x1p-53;
}

static double st_gauss(uint64_t *s)
{
    double u = st_uniform(s), v = st_uniform(s);
    if (u < 1e-300) u = 1e-300;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static tr_spiir_bank *g_bank; /* the benchmark's bank (kept for --pipeline) */
static float *g_x;            /* its input signal, o->period samples */

/* The SNR of the benchmark's bank over its signal (NULL on failure). */
static float *make_snr(const st_options *o)
{
    const double pi = 3.14159265358979323846;
    const size_t nf = (size_t)o->templates * o->filters;
    tr_spiir_filter *f = malloc(sizeof *f * nf);
    uint32_t *counts = malloc(sizeof *counts * o->templates);
    float *x = malloc(sizeof(float) * o->period);
    float *snr = malloc(sizeof(float) * 2 * o->templates * o->period);
    uint64_t s = 7;
    tr_spiir_bank *bank = NULL;
    tr_spiir *q = NULL;
    tr_error err;
    if (!f || !counts || !x || !snr) goto fail;
    for (uint32_t t = 0; t < o->templates; t++)
        counts[t] = o->filters;
    for (size_t i = 0; i < nf; i++) {
        const size_t l = i % o->filters;
        const double m = 1.0 - pow(10.0, -2.0 - st_uniform(&s));
        const double ph = pi * (0.01 + 0.98 * st_uniform(&s));
        const double g = (1.0 - m) * (0.5 + st_uniform(&s));
        const double pb = 2.0 * pi * st_uniform(&s);
        f[i].a1_re = m * cos(ph);
        f[i].a1_im = m * sin(ph);
        f[i].b0_re = g * cos(pb);
        f[i].b0_im = g * sin(pb);
        f[i].delay = (int32_t)(4096.0 * ((double)l + st_uniform(&s)) / o->filters);
        f[i].level = 0;
    }
    bank = tr_spiir_bank_create(f, counts, o->templates, 1.0 / 4096.0, &err);
    if (!bank) goto fail;
    for (size_t k = 0; k < o->period; k++)
        x[k] = (float)st_gauss(&s);
    for (size_t k = 8192; k < o->period; k += 16384)
        x[k] += 20000.0f;
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CPU;
    q = tr_spiir_create(&cfg, bank, &err);
    if (!q || tr_spiir_process(q, x, o->period, snr) != TR_OK) goto fail;
    tr_spiir_destroy(q);
    g_bank = bank;
    g_x = x;
    free(f);
    free(counts);
    return snr;
fail:
    fprintf(stderr, "spiir-triggers: cannot make the SNR: %s\n", err.message);
    tr_spiir_destroy(q);
    tr_spiir_bank_destroy(bank);
    free(f);
    free(counts);
    free(x);
    free(snr);
    return NULL;
}

/* One core's read bandwidth in bytes/s: best of 3 sums over `bytes`. */
static double read_bw(const void *buf, size_t bytes)
{
    const uint64_t *p = (const uint64_t *)buf;
    const size_t n = bytes / sizeof *p / 8 * 8;
    double best = 0.0;
    volatile uint64_t sink = 0;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t a[8] = {0};
        const double t0 = bh_now();
        for (size_t i = 0; i < n; i += 8)
            for (int j = 0; j < 8; j++)
                a[j] += p[i + (size_t)j];
        const double dt = bh_now() - t0;
        for (int j = 0; j < 8; j++)
            sink += a[j];
        if (dt > 0 && (double)(n * sizeof *p) / dt > best) best = (double)(n * 8) / dt;
    }
    (void)sink;
    return best;
}

typedef struct {
    double samples_per_s;
    uint64_t triggers;
    uint64_t hash; /* of the triggers, in order */
    uint32_t threads;
} st_result;

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h;
}

/* Triggers into res's count and hash (in order). */
static void hash_triggers(st_result *res, const tr_spiir_trigger *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        res->triggers++;
        res->hash = mix(res->hash, t[i].sample);
        res->hash = mix(res->hash, t[i].template_index);
        uint64_t b;
        memcpy(&b, &t[i].peak, sizeof b);
        res->hash = mix(res->hash, b);
    }
}

/* The output capacity every path gives the search: the block's. */
static size_t trigger_cap(const st_options *o)
{
    return (size_t)o->templates * (8192 / ((size_t)o->window + 1) + 2);
}

/* Passes over the SNR (`batch` samples per call) for at least `seconds`. */
static int run_variant(const st_options *o, const float *snr, tr_variant variant,
                       uint32_t nthreads, st_result *res)
{
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = o->templates;
    cfg.threshold = o->threshold;
    cfg.window = o->window;
    cfg.variant = variant;
    cfg.nthreads = nthreads;
    tr_error err;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
    if (!q) {
        fprintf(stderr, "spiir-triggers: %s\n", err.message);
        return 1;
    }
    const size_t cap = trigger_cap(o);
    tr_spiir_trigger *out = malloc(sizeof *out * cap);
    if (!out) {
        tr_spiir_triggers_destroy(q);
        return 1;
    }
    res->triggers = 0;
    res->hash = 0;
    res->threads = tr_spiir_triggers_nthreads(q);
    uint64_t samples = 0;
    int first = 1;
    const double t0 = bh_now();
    double t = 0.0;
    do {
        for (size_t pos = 0; pos < o->period; pos += o->batch) {
            const size_t n = o->period - pos < o->batch ? o->period - pos : o->batch;
            size_t done = 0;
            while (done < n) {
                size_t consumed = 0, nout = 0;
                const tr_status st =
                    tr_spiir_triggers_process(q, snr + (pos + done) * 2 * o->templates,
                                              n - done, out, cap, &consumed, &nout);
                if (st != TR_OK || (consumed == 0 && nout == 0)) {
                    fprintf(stderr, "spiir-triggers: %s\n",
                            tr_spiir_triggers_last_error(q));
                    free(out);
                    tr_spiir_triggers_destroy(q);
                    return 1;
                }
                if (first) hash_triggers(res, out, nout);
                done += consumed;
            }
        }
        first = 0;
        samples += o->period;
        t = bh_now() - t0;
    } while (t < o->seconds);
    res->samples_per_s = (double)samples / t;
    free(out);
    tr_spiir_triggers_destroy(q);
    return 0;
}

/* ---- --pipeline ---------------------------------------------------------- */

typedef int (*host_register_fn)(void *, size_t, unsigned int);
typedef int (*host_unregister_fn)(void *);

/* The core, CUDA, `batch` samples per call into pageable memory. */
static double core_rate(const st_options *o, tr_spiir *q, float *buf)
{
    uint64_t samples = 0;
    size_t pos = 0;
    tr_spiir_process(q, g_x, o->batch, buf); /* warm-up */
    const double t0 = bh_now();
    double t = 0.0;
    do {
        const size_t n = o->period - pos < o->batch ? o->period - pos : o->batch;
        if (tr_spiir_process(q, g_x + pos, n, buf) != TR_OK) return -1.0;
        samples += n;
        pos = (pos + n) % o->period;
        t = bh_now() - t0;
    } while (t < o->seconds);
    return (double)samples / t;
}

/* The block's work calls of `batch` output items (see the top of the file). */
static double block_rate(const st_options *o, tr_spiir *q, tr_spiir_triggers *tq,
                         float *out, float *fifo, tr_spiir_trigger *found, size_t cap,
                         int copies, uint64_t *triggers)
{
    const size_t w = o->window, item = 2 * (size_t)o->templates;
    const size_t take = o->batch - w;
    uint64_t samples = 0;
    size_t pos = 0;
    *triggers = 0;
    memset(fifo, 0, sizeof(float) * item * w);
    const double t0 = bh_now();
    double t = 0.0;
    do {
        const size_t n = o->period - pos < take ? o->period - pos : take;
        if (copies) memcpy(out, fifo, sizeof(float) * item * w);
        if (tr_spiir_process(q, g_x + pos, n, out + item * w) != TR_OK) return -1.0;
        size_t done = 0;
        while (done < n) {
            size_t consumed = 0, nout = 0;
            if (tr_spiir_triggers_process(tq, out + item * (w + done), n - done, found,
                                          cap, &consumed, &nout) != TR_OK)
                return -1.0;
            *triggers += nout;
            done += consumed;
        }
        if (copies) memcpy(fifo, out + item * n, sizeof(float) * item * w);
        samples += n;
        pos = (pos + n) % o->period;
        t = bh_now() - t0;
    } while (t < o->seconds);
    return (double)samples / t;
}

static int run_pipeline(const st_options *o)
{
    if (o->batch <= o->window) {
        fprintf(stderr, "spiir-triggers: --pipeline needs batch > window\n");
        return 1;
    }
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CUDA;
    cfg.batch = o->batch;
    tr_error err;
    tr_spiir *q = tr_spiir_create(&cfg, g_bank, &err);
    if (!q) {
        fprintf(stderr, "spiir-triggers: --pipeline: %s\n", err.message);
        return 1;
    }
    const size_t item = 2 * (size_t)o->templates;
    const size_t out_bytes = sizeof(float) * item * (o->batch + o->window);
    float *buf = malloc(sizeof(float) * item * o->batch);
    float *out = malloc(out_bytes);
    float *fifo = malloc(sizeof(float) * item * o->window);
    const size_t cap = trigger_cap(o);
    tr_spiir_trigger *found = malloc(sizeof *found * cap);
    tr_spiir_triggers_config tc = tr_spiir_triggers_config_default();
    tc.ntemplates = o->templates;
    tc.threshold = o->threshold;
    tc.window = o->window;
    tr_spiir_triggers *tq = tr_spiir_triggers_create(&tc, &err);
    if (!buf || !out || !fifo || !found || !tq) {
        fprintf(stderr, "spiir-triggers: --pipeline: no memory\n");
        return 1;
    }
    /* Page-locking through the CUDA runtime libtransient loaded. */
    void *self = dlopen(NULL, RTLD_NOW);
    host_register_fn reg = NULL;
    host_unregister_fn unreg = NULL;
    if (self) {
        *(void **)&reg = dlsym(self, "cudaHostRegister");
        *(void **)&unreg = dlsym(self, "cudaHostUnregister");
    }
    const double core = core_rate(o, q, buf);
    uint64_t trig_pageable = 0, trig_pinned = 0;
    tr_spiir_reset(q);
    double rates[4] = {-1.0, -1.0, -1.0, -1.0};
    for (int copies = 1; copies >= 0; copies--) {
        tr_spiir_reset(q);
        tr_spiir_triggers_reset(tq);
        rates[copies ? 0 : 2] =
            block_rate(o, q, tq, out, fifo, found, cap, copies, &trig_pageable);
    }
    if (reg && unreg && reg(out, out_bytes, 0) == 0) {
        for (int copies = 1; copies >= 0; copies--) {
            tr_spiir_reset(q);
            tr_spiir_triggers_reset(tq);
            rates[copies ? 1 : 3] =
                block_rate(o, q, tq, out, fifo, found, cap, copies, &trig_pinned);
        }
        unreg(out);
    }
    /* "held_in_buffer": the pending items stay in the output buffer (the
     * blocks with GNU Radio's double-mapped buffers), no copies. */
    const char *names[4] = {"block_path_pageable", "block_path_pinned",
                            "block_path_pageable_held_in_buffer",
                            "block_path_pinned_held_in_buffer"};
    if (o->json)
        printf("{\"type\":\"result\",\"detector\":\"spiir-triggers\",\"path\":\"core\","
               "\"backend\":\"cuda\",\"templates\":%u,\"filters\":%u,\"batch\":%zu,"
               "\"samples_per_s\":%.4g}\n",
               o->templates, o->filters, o->batch, core);
    else
        printf("core cuda, %zu samples per call into pageable memory: %.3g samples/s\n",
               o->batch, core);
    for (int i = 0; i < 4; i++) {
        if (rates[i] < 0) continue;
        if (o->json)
            printf("{\"type\":\"result\",\"detector\":\"spiir-triggers\",\"path\":\"%s\","
                   "\"backend\":\"cuda\",\"templates\":%u,\"filters\":%u,\"batch\":%zu,"
                   "\"window\":%u,\"trigger_threads\":%u,\"samples_per_s\":%.4g,"
                   "\"core_samples_per_s\":%.4g,\"block_over_core\":%.3g}\n",
                   names[i], o->templates, o->filters, o->batch, o->window,
                   tr_spiir_triggers_nthreads(tq), rates[i], core, rates[i] / core);
        else
            printf("%s (%u trigger threads): %.3g samples/s, %.2f of the core\n",
                   names[i], tr_spiir_triggers_nthreads(tq), rates[i], rates[i] / core);
    }
    tr_spiir_triggers_destroy(tq);
    tr_spiir_destroy(q);
    free(buf);
    free(out);
    free(fifo);
    free(found);
    return 0;
}

/* ---- --device ------------------------------------------------------------ */

/* The paths of --device (see the top of the file). */
enum { DEV_SCAN, DEV_FILTER, DEV_FILTER_TRIGGERS, DEV_FILTER_D2H_CPU, DEV_PATHS };
static const char *const dev_path_names[DEV_PATHS] = {
    "device_scan", "filter_device", "filter_device_triggers", "filter_d2h_cpu_triggers"};

/* What the device paths share. */
typedef struct {
    tr_spiir *q;        /* the filter, CUDA */
    float *d_x, *d_snr; /* a call's input and SNR on the device */
    const float *d_all; /* the whole SNR on the device (DEV_SCAN) */
    float *h_snr;       /* a call's SNR on the host (DEV_FILTER_D2H_CPU) */
    tr_spiir_trigger *found;
    size_t cap;
} dev_ctx;

/* The search of one call's SNR (device or host memory) to its end. */
static int dev_search(tr_spiir_triggers *tq, const float *snr, size_t n, int on_device,
                      dev_ctx *c, st_result *res, int first)
{
    size_t done = 0;
    const size_t item = 2 * (size_t)tr_spiir_templates(c->q);
    while (done < n) {
        size_t consumed = 0, nout = 0;
        const float *z = snr + item * done;
        const tr_status st =
            on_device ? tr_spiir_triggers_process_device(tq, z, n - done, c->found,
                                                         c->cap, &consumed, &nout)
                      : tr_spiir_triggers_process(tq, z, n - done, c->found, c->cap,
                                                  &consumed, &nout);
        if (st != TR_OK || consumed == 0) {
            fprintf(stderr, "spiir-triggers: --device: %s\n",
                    tr_spiir_triggers_last_error(tq));
            return 1;
        }
        if (first) hash_triggers(res, c->found, nout);
        done += consumed;
    }
    return 0;
}

/* One call of `path` over samples [pos, pos + n) of the signal. */
static int dev_call(const st_options *o, int path, tr_spiir_triggers *tq, dev_ctx *c,
                    size_t pos, size_t n, st_result *res, int first)
{
    const size_t item = 2 * (size_t)o->templates;
    if (path == DEV_SCAN)
        return dev_search(tq, c->d_all + item * pos, n, 1, c, res, first);
    if (path == DEV_FILTER_D2H_CPU) {
        if (tr_spiir_process(c->q, g_x + pos, n, c->h_snr) != TR_OK) return 1;
        return dev_search(tq, c->h_snr, n, 0, c, res, first);
    }
    if (tr_bench_dev_upload(c->d_x, g_x + pos, sizeof(float) * n) != TR_OK ||
        tr_spiir_process_device(c->q, c->d_x, n, c->d_snr) != TR_OK)
        return 1;
    return path == DEV_FILTER ? 0 : dev_search(tq, c->d_snr, n, 1, c, res, first);
}

/* Passes of `path` over the signal for at least `seconds`; the first hashed. */
static int dev_rate(const st_options *o, int path, dev_ctx *c, st_result *res)
{
    tr_spiir_triggers_config tc = tr_spiir_triggers_config_default();
    tc.ntemplates = o->templates;
    tc.threshold = o->threshold;
    tc.window = o->window;
    tc.backend = path == DEV_FILTER_D2H_CPU ? TR_BACKEND_CPU : TR_BACKEND_CUDA;
    tr_error err;
    tr_spiir_triggers *tq = tr_spiir_triggers_create(&tc, &err);
    if (!tq) {
        fprintf(stderr, "spiir-triggers: --device: %s\n", err.message);
        return 1;
    }
    memset(res, 0, sizeof *res);
    res->threads = path == DEV_FILTER_D2H_CPU ? tr_spiir_triggers_nthreads(tq) : 0;
    tr_spiir_reset(c->q);
    uint64_t samples = 0;
    int first = 1, rc = 0;
    const double t0 = bh_now();
    double t = 0.0;
    do {
        for (size_t pos = 0; pos < o->period && rc == 0; pos += o->batch) {
            const size_t n = o->period - pos < o->batch ? o->period - pos : o->batch;
            rc = dev_call(o, path, tq, c, pos, n, res, first);
        }
        first = 0;
        samples += o->period;
        t = bh_now() - t0;
    } while (rc == 0 && t < o->seconds);
    if (rc != 0 && path != DEV_SCAN)
        fprintf(stderr, "spiir-triggers: --device: %s\n", tr_spiir_last_error(c->q));
    res->samples_per_s = (double)samples / t;
    tr_spiir_triggers_destroy(tq);
    return rc;
}

static int run_device(const st_options *o, const float *snr, const st_result *ref)
{
    tr_bench_device_info info;
    const size_t item = 2 * (size_t)o->templates;
    const size_t bytes = sizeof(float) * item * o->period;
    double read_bw = 0.0, d2h_bw = 0.0;
    if (tr_bench_device_info_get(0, &info) != TR_OK ||
        tr_bench_device_read_bw(0, bytes, 5, &read_bw) != TR_OK ||
        tr_bench_d2h_bw(0, sizeof(float) * item * o->batch, 5, &d2h_bw) != TR_OK) {
        fprintf(stderr, "spiir-triggers: --device: %s\n", tr_bench_last_error());
        return 1;
    }
    dev_ctx c;
    memset(&c, 0, sizeof c);
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CUDA;
    cfg.batch = o->batch;
    tr_error err;
    c.q = tr_spiir_create(&cfg, g_bank, &err);
    c.cap = trigger_cap(o);
    c.found = malloc(sizeof *c.found * c.cap);
    c.h_snr = malloc(sizeof(float) * item * o->batch);
    void *d_all = NULL;
    int rc = 1;
    if (!c.q || !c.found || !c.h_snr) {
        fprintf(stderr, "spiir-triggers: --device: %s\n",
                c.q ? "no memory" : err.message);
        goto out;
    }
    if (tr_bench_dev_alloc(0, sizeof(float) * o->batch, (void **)&c.d_x) != TR_OK ||
        tr_bench_dev_alloc(0, sizeof(float) * item * o->batch, (void **)&c.d_snr) !=
            TR_OK ||
        tr_bench_dev_alloc(0, bytes, &d_all) != TR_OK ||
        tr_bench_dev_upload(d_all, snr, bytes) != TR_OK) {
        fprintf(stderr, "spiir-triggers: --device: %s\n", tr_bench_last_error());
        goto out;
    }
    c.d_all = (const float *)d_all;
    st_result res[DEV_PATHS];
    for (int p = 0; p < DEV_PATHS; p++)
        if (dev_rate(o, p, &c, &res[p]) != 0) goto out;
    /* Ceilings: the device's read bandwidth for the scan alone; the filter
     * alone for the paths that filter, and for the host path also PCIe's
     * device-to-host bandwidth over the SNR. */
    const double per_sample = 8.0 * o->templates;
    const double filt = res[DEV_FILTER].samples_per_s, d2h = d2h_bw / per_sample;
    const double ceil[DEV_PATHS] = {read_bw / per_sample, filt, filt,
                                    d2h < filt ? d2h : filt};
    const char *ceil_name[DEV_PATHS] = {"device_read_bw", "-", "filter_device",
                                        d2h < filt ? "d2h_bw" : "filter_device"};
    const int same_scan =
        res[DEV_SCAN].triggers == ref->triggers && res[DEV_SCAN].hash == ref->hash;
    const int same_paths =
        res[DEV_FILTER_TRIGGERS].triggers == res[DEV_FILTER_D2H_CPU].triggers &&
        res[DEV_FILTER_TRIGGERS].hash == res[DEV_FILTER_D2H_CPU].hash;
    char gpu[512];
    bh_json_escape(gpu, sizeof gpu, info.name);
    if (o->json)
        printf("{\"type\":\"env\",\"detector\":\"spiir-triggers\",\"gpu\":\"%s\","
               "\"device_read_bw\":%.4g,\"d2h_bw\":%.4g}\n",
               gpu, read_bw, d2h_bw);
    else
        printf("gpu %s, reads %.3g B/s, device to host %.3g B/s\n", info.name, read_bw,
               d2h_bw);
    for (int p = 0; p < DEV_PATHS; p++) {
        const double r = res[p].samples_per_s;
        const double vs_d2h = r / res[DEV_FILTER_D2H_CPU].samples_per_s;
        if (o->json)
            printf("{\"type\":\"result\",\"detector\":\"spiir-triggers\",\"path\":\"%s\","
                   "\"backend\":\"cuda\",\"templates\":%u,\"filters\":%u,\"window\":%u,"
                   "\"batch\":%zu,\"trigger_threads\":%u,\"samples_per_s\":%.4g,"
                   "\"template_samples_per_s\":%.4g,\"ceiling\":\"%s\","
                   "\"ceiling_samples_per_s\":%.4g,\"ratio\":%.3g,"
                   "\"speedup_vs_d2h_cpu\":%.3g,\"triggers_per_pass\":%llu}\n",
                   dev_path_names[p], o->templates, o->filters, o->window, o->batch,
                   res[p].threads, r, r * o->templates, ceil_name[p],
                   p == DEV_FILTER ? r : ceil[p], p == DEV_FILTER ? 1.0 : r / ceil[p],
                   vs_d2h, (unsigned long long)res[p].triggers);
        else
            printf("%-24s %.3g samples/s (%.3g of %s %.3g), %.2fx the D2H + CPU path, "
                   "%llu triggers per pass\n",
                   dev_path_names[p], r, p == DEV_FILTER ? 1.0 : r / ceil[p],
                   ceil_name[p], p == DEV_FILTER ? r : ceil[p], vs_d2h,
                   (unsigned long long)res[p].triggers);
    }
    if (o->json)
        printf("{\"type\":\"check\",\"detector\":\"spiir-triggers\",\"path\":\"device\","
               "\"scan_same_as_reference\":%s,\"device_same_as_d2h_cpu\":%s}\n",
               same_scan ? "true" : "false", same_paths ? "true" : "false");
    else
        printf("check: device scan %s the reference, device path %s the D2H + CPU path\n",
               same_scan ? "equals" : "DIFFERS FROM",
               same_paths ? "equals" : "DIFFERS FROM");
    rc = same_scan && same_paths ? 0 : 1;
out:
    tr_bench_dev_free(c.d_x);
    tr_bench_dev_free(c.d_snr);
    tr_bench_dev_free(d_all);
    tr_spiir_destroy(c.q);
    free(c.found);
    free(c.h_snr);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: transient-bench --detector spiir-triggers [--templates T] "
               "[--filters L]\n  [--window W] [--threshold X] [--batch B] [--period P] "
               "[--threads 1,2,0] [--seconds S] [--pipeline] [--device] [--json]\n");
}

int spiir_triggers_bench_main(int argc, char **argv)
{
    st_options o;
    memset(&o, 0, sizeof o);
    o.templates = 256;
    o.filters = 64;
    o.window = 1024;
    o.threshold = 0.02f;
    o.batch = 8192;
    o.period = 32768;
    o.seconds = 1.0;
    o.threads[0] = 1, o.threads[1] = 2, o.threads[2] = 0;
    o.nthreads = 3;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--detector") && v) {
            i++;
        } else if (!strcmp(a, "--templates") && v && atol(v) > 0) {
            o.templates = (uint32_t)atol(v), i++;
        } else if (!strcmp(a, "--filters") && v && atol(v) > 0) {
            o.filters = (uint32_t)atol(v), i++;
        } else if (!strcmp(a, "--window") && v && atol(v) > 0) {
            o.window = (uint32_t)atol(v), i++;
        } else if (!strcmp(a, "--threshold") && v && atof(v) >= 0) {
            o.threshold = (float)atof(v), i++;
        } else if (!strcmp(a, "--batch") && v && atol(v) > 0) {
            o.batch = (size_t)atol(v), i++;
        } else if (!strcmp(a, "--period") && v && atol(v) > 0) {
            o.period = (size_t)atol(v), i++;
        } else if (!strcmp(a, "--seconds") && v && atof(v) > 0) {
            o.seconds = atof(v), i++;
        } else if (!strcmp(a, "--pipeline")) {
            o.pipeline = 1;
        } else if (!strcmp(a, "--device")) {
            o.device = 1;
        } else if (!strcmp(a, "--threads") && v) {
            o.nthreads = 0;
            char buf[256];
            snprintf(buf, sizeof buf, "%s", v);
            for (char *tok = strtok(buf, ","); tok && o.nthreads < 16;
                 tok = strtok(NULL, ","))
                o.threads[o.nthreads++] = atoi(tok);
            i++;
        } else {
            usage(stderr);
            return 2;
        }
    }
    float *snr = make_snr(&o);
    if (!snr) return 1;
    const size_t bytes = (size_t)o.period * o.templates * 2 * sizeof(float);
    const double bw = read_bw(snr, bytes);
    const double per_sample = 8.0 * o.templates;
    const double ceiling = bw / per_sample;
    char cpu[256], cpu_json[512];
    bh_cpu_model(cpu, sizeof cpu);
    bh_json_escape(cpu_json, sizeof cpu_json, cpu);
    if (o.json)
        printf("{\"type\":\"env\",\"detector\":\"spiir-triggers\",\"cpu\":\"%s\","
               "\"read_bw_one_core\":%.4g,\"snr_bytes\":%zu,\"kernel\":\"%s\"}\n",
               cpu_json, bw, bytes, tr_spiir_triggers_kernel());
    else
        printf("cpu %s, one core reads %.3g B/s, %zu B of SNR, best kernel %s\n", cpu, bw,
               bytes, tr_spiir_triggers_kernel());

    st_result ref;
    if (run_variant(&o, snr, TR_VARIANT_REFERENCE, 1, &ref) != 0) return 1;
    int rc = 0;
    struct {
        const char *kernel;
        int threads;
    } rows[18];
    int nrows = 0;
    rows[nrows].kernel = "generic", rows[nrows++].threads = 1;
    for (int i = 0; i < o.nthreads; i++)
        rows[nrows].kernel = NULL, rows[nrows++].threads = o.threads[i];
    for (int r = -1; r < nrows; r++) {
        st_result res = ref;
        const char *variant = "reference", *kernel = "-";
        if (r >= 0) {
            variant = "fast";
            tr_spiir_triggers_select(rows[r].kernel);
            kernel = tr_spiir_triggers_kernel();
            if (run_variant(&o, snr, TR_VARIANT_FAST, (uint32_t)rows[r].threads, &res) !=
                0)
                return 1;
            tr_spiir_triggers_select(NULL);
        }
        const int same = res.triggers == ref.triggers && res.hash == ref.hash;
        if (!same) rc = 1;
        if (o.json)
            printf(
                "{\"type\":\"result\",\"detector\":\"spiir-triggers\",\"variant\":\"%s\","
                "\"kernel\":\"%s\",\"threads\":%u,\"templates\":%u,\"window\":%u,"
                "\"threshold\":%g,\"batch\":%zu,\"samples_per_s\":%.4g,"
                "\"template_samples_per_s\":%.4g,\"bytes_per_sample\":%.0f,"
                "\"ceiling\":\"one_core_read_bw\",\"ceiling_samples_per_s\":%.4g,"
                "\"ratio\":%.3g,\"speedup_vs_reference\":%.3g,\"triggers_per_pass\":%llu,"
                "\"same_as_reference\":%s}\n",
                variant, kernel, res.threads, o.templates, o.window, (double)o.threshold,
                o.batch, res.samples_per_s, res.samples_per_s * o.templates, per_sample,
                ceiling, res.samples_per_s / ceiling,
                res.samples_per_s / ref.samples_per_s, (unsigned long long)res.triggers,
                same ? "true" : "false");
        else
            printf("%-9s %-7s %2u threads: %.3g samples/s (%.3g of one core's read "
                   "ceiling %.3g), %.2fx reference, %llu triggers per pass%s\n",
                   variant, kernel, res.threads, res.samples_per_s,
                   res.samples_per_s / ceiling, ceiling,
                   res.samples_per_s / ref.samples_per_s,
                   (unsigned long long)res.triggers, same ? "" : " DIFFERENT");
    }
    if (o.json)
        printf(
            "{\"type\":\"check\",\"detector\":\"spiir-triggers\",\"same_triggers\":%s}\n",
            rc ? "false" : "true");
    if (o.pipeline && run_pipeline(&o) != 0) rc = 1;
    if (o.device && run_device(&o, snr, &ref) != 0) rc = 1;
    free(snr);
    free(g_x);
    tr_spiir_bank_destroy(g_bank);
    return rc;
}
