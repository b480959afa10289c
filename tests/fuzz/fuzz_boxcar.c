/*
 * libFuzzer target: the boxcar search (tr_boxcar) with its normalisation.
 * Algorithm, widths, channels and normalisation settings from the input, any
 * samples; FAST in random chunks, then flush. Memory errors, undefined
 * behaviour and leaks are the findings; every call must succeed.
 */
#include <transient/boxcar.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    tr_boxcar_config cfg = tr_boxcar_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.variant = fz_range(&in, 0, 1) ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
    cfg.algorithm = (tr_boxcar_algorithm)fz_range(&in, 0, 2);
    cfg.max_width = fz_range(&in, 0, 80);
    cfg.nwidths = fz_range(&in, 0, 4);
    for (uint32_t i = 0; i < cfg.nwidths; i++)
        cfg.widths[i] = fz_range(&in, 0, 40);
    cfg.depth = fz_range(&in, 0, 4);
    cfg.layers = fz_range(&in, 0, 3) ? 0 : 1u << fz_range(&in, 0, 5);
    cfg.nchan = fz_range(&in, 0, 4);
    cfg.norm.mode = (tr_boxcar_norm_mode)fz_range(&in, 0, 2);
    cfg.norm.window = fz_range(&in, 0, 80);
    cfg.norm.history = fz_range(&in, 0, 5);
    cfg.norm.reject_sigma = fz_range(&in, 0, 6) / 2.0;
    cfg.norm.fixed_sigma = fz_range(&in, 0, 4) / 2.0;
    cfg.norm.baseline = (tr_boxcar_baseline_mode)fz_range(&in, 0, 2);
    cfg.norm.baseline_window = fz_range(&in, 0, 40);
    cfg.norm.threads = fz_range(&in, 0, 2);
    fz_seed_chunks(&in);
    size_t nv;
    float *x = fz_floats(&in, &nv);
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&cfg, &err);
    if (q) {
        const uint32_t C = cfg.nchan, lat = tr_boxcar_latency(q);
        const size_t n = nv / C;
        const size_t out = (n > lat ? n : lat) * C + 1;
        float *snr = (float *)malloc(out * sizeof *snr);
        int32_t *w = (int32_t *)malloc(out * sizeof *w);
        size_t k = 0;
        while (k < n) {
            const size_t m = fz_chunk(&in, 64);
            const size_t len = m < n - k ? m : n - k;
            FZ_REQUIRE(tr_boxcar_process(q, x + k * C, len, snr, w) == TR_OK);
            k += len;
        }
        FZ_REQUIRE(tr_boxcar_position(q) == n);
        FZ_REQUIRE(tr_boxcar_flush(q, snr, w) == TR_OK);
        free(snr);
        free(w);
    }
    tr_boxcar_destroy(q);
    free(x);
    return 0;
}
