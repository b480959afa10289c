/*
 * The CUDA SPIIR trigger search (cuda/spiir/triggers_cuda.cu) through the
 * public API on a GPU, against the REFERENCE object call by call, bit for
 * bit (triggers_test_driver.h: random SNR with NaN/Inf, chunkings of 1
 * sample, random and whole, output capacities from ntemplates up, threshold
 * changes, device lists as short as ntemplates): the CUDA backend on device
 * SNR and on host SNR; AUTO switching between host SNR (the CPU) and device
 * SNR (the clusters moving between them); a large dense bank whose device
 * list overflows with thousands of threads racing for it. Exit 77 (skipped)
 * when no GPU is usable.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs".
 */
#include <transient/spiir_triggers.h>

#include "bench_device.h"
#include "spiir/triggers_test_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A public object over a trial: the stream on the device, and per call
 * device SNR or (host_share of the calls) host SNR. */
typedef struct {
    const tt_trial *tr;
    tr_backend backend;
    double host_share;
    tr_spiir_triggers *q;
    float *d_snr;
    tu_rng r;
} gpu_subject;

static int gpu_begin(void *u, const tt_trial *tr)
{
    gpu_subject *s = (gpu_subject *)u;
    s->tr = tr;
    s->r.s = tr->seed;
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = tr->nt;
    cfg.threshold = tr->threshold;
    cfg.window = tr->window;
    cfg.backend = s->backend;
    cfg.device_capacity = tr->capacity;
    tr_error err;
    s->q = tr_spiir_triggers_create(&cfg, &err);
    if (!s->q) {
        fprintf(stderr, "create: %s\n", err.message);
        return 0;
    }
    const size_t bytes = tr->n * tr->nt * 2 * sizeof(float);
    if (tr_bench_dev_alloc(0, bytes, (void **)&s->d_snr) != TR_OK ||
        (bytes && tr_bench_dev_upload(s->d_snr, tr->snr, bytes) != TR_OK)) {
        fprintf(stderr, "device stream: %s\n", tr_bench_last_error());
        return 0;
    }
    return 1;
}

static tr_status gpu_process(void *u, size_t k0, size_t n, float thr,
                             tr_spiir_trigger *out, size_t cap, size_t *consumed,
                             size_t *nout)
{
    gpu_subject *s = (gpu_subject *)u;
    tr_status st = tr_spiir_triggers_set_threshold(s->q, thr);
    if (st != TR_OK) return st;
    const size_t off = k0 * s->tr->nt * 2;
    if (tu_uniform(&s->r) < s->host_share)
        st = tr_spiir_triggers_process(s->q, s->tr->snr + off, n, out, cap, consumed,
                                       nout);
    else
        st = tr_spiir_triggers_process_device(s->q, s->d_snr + off, n, out, cap, consumed,
                                              nout);
    if (st != TR_OK) fprintf(stderr, "process: %s\n", tr_spiir_triggers_last_error(s->q));
    return st;
}

static tr_status gpu_flush(void *u, tr_spiir_trigger *out, size_t cap, size_t *nout)
{
    gpu_subject *s = (gpu_subject *)u;
    return tr_spiir_triggers_flush(s->q, out, cap, nout);
}

static void gpu_end(void *u)
{
    gpu_subject *s = (gpu_subject *)u;
    tr_spiir_triggers_destroy(s->q);
    tr_bench_dev_free(s->d_snr);
    s->q = NULL;
    s->d_snr = NULL;
}

static void test_subject(const char *name, tr_backend backend, double host_share,
                         uint64_t seed, int trials, uint32_t max_nt, size_t max_n)
{
    gpu_subject s;
    memset(&s, 0, sizeof s);
    s.backend = backend;
    s.host_share = host_share;
    const tt_subject sub = {name, gpu_begin, gpu_process, gpu_flush, gpu_end, &s};
    tt_run(&sub, seed, trials, max_nt, max_n);
}

/* Many templates, dense triggers, a short device list: every round overflows
 * while thousands of threads race for the list. */
static void test_dense_race(void)
{
    const uint32_t nt = 4096;
    const size_t n = 3000;
    tu_rng r = {99};
    float *snr = malloc(sizeof(float) * n * nt * 2);
    for (size_t i = 0; i < n * nt * 2; i++)
        snr[i] = (float)(3.0 * tu_gauss(&r));
    gpu_subject s;
    memset(&s, 0, sizeof s);
    s.backend = TR_BACKEND_CUDA;
    const tt_subject sub = {"cuda dense race", gpu_begin, gpu_process,
                            gpu_flush,         gpu_end,   &s};
    const size_t caps[] = {nt, 3 * (size_t)nt, 0};
    for (int i = 0; i < 3; i++) {
        tt_trial tr = {snr, n, nt, (uint32_t)(i + 2), 4.0f, caps[i], 500 + (uint64_t)i};
        tt_trial_run(&sub, &tr, 2, &r);
    }
    free(snr);
}

static void test_errors(void)
{
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = 4;
    cfg.backend = TR_BACKEND_CUDA;
    cfg.variant = TR_VARIANT_REFERENCE;
    tr_error err;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && err.code == TR_ERR_INVALID,
          "REFERENCE on CUDA accepted: %s", err.message);
    cfg.variant = TR_VARIANT_FAST;
    cfg.device = 999;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && err.code == TR_ERR_INVALID,
          "device 999 accepted: %s", err.message);
    cfg.device = 0;
    cfg.device_capacity = 3;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && strstr(err.message, "device_capacity"),
          "capacity 3 < 4 templates accepted: %s", err.message);
    cfg.device_capacity = 0;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
    CHECK(q && tr_spiir_triggers_backend(q) == TR_BACKEND_CUDA, "CUDA object: %s",
          err.message);
    float *d = NULL;
    tr_spiir_trigger out[8];
    size_t used = 0, nout = 0;
    if (q && tr_bench_dev_alloc(0, 64, (void **)&d) == TR_OK) {
        CHECK(tr_spiir_triggers_process_device(q, d + 1, 1, out, 8, &used, &nout) ==
                      TR_ERR_INVALID &&
                  strstr(tr_spiir_triggers_last_error(q), "aligned"),
              "misaligned device SNR: %s", tr_spiir_triggers_last_error(q));
    }
    tr_bench_dev_free(d);
    tr_spiir_triggers_destroy(q);
}

int main(void)
{
    char why[256];
    if (tr_cuda_device_count(why, sizeof why) == 0) {
        printf("test_spiir_triggers_gpu: skipped (%s)\n", why);
        return 77;
    }
    test_subject("cuda, device SNR", TR_BACKEND_CUDA, 0.0, 911, 40, 300, 5000);
    test_subject("cuda, host and device SNR", TR_BACKEND_CUDA, 0.3, 912, 20, 90, 3000);
    test_subject("auto, host (CPU) and device SNR", TR_BACKEND_AUTO, 0.5, 913, 30, 90,
                 3000);
    test_dense_race();
    test_errors();
    printf("test_spiir_triggers_gpu: %ld calls compared\n", tt_calls);
    return tu_finish("test_spiir_triggers_gpu");
}
