/*
 * libFuzzer target: the SPIIR bank (tr_spiir_bank_create, tr_spiir). Filters
 * (poles, gains, delays, levels) from the input, real or complex input,
 * single rate or multirate, FAST or REFERENCE, in random chunks. Bad filters
 * must be refused by create; every process call must succeed.
 */
#include <transient/spiir.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    const uint32_t nt = fz_range(&in, 0, 3);
    uint32_t counts[3], total = 0;
    tr_spiir_filter f[12];
    for (uint32_t t = 0; t < nt; t++) {
        counts[t] = fz_range(&in, 0, 4);
        for (uint32_t i = 0; i < counts[t]; i++, total++) {
            f[total].a1_re = fz_f32(&in);
            f[total].a1_im = fz_f32(&in);
            f[total].b0_re = fz_f32(&in);
            f[total].b0_im = fz_f32(&in);
            f[total].delay = (int32_t)fz_range(&in, 0, 200) - 2;
            f[total].level = (int32_t)fz_range(&in, 0, 5) - 1;
        }
    }
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.variant = fz_range(&in, 0, 1) ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
    cfg.complex_input = (int)fz_range(&in, 0, 1);
    cfg.multirate = (int)fz_range(&in, 0, 1);
    const double dt = fz_range(&in, 0, 3) / 1000.0;
    fz_seed_chunks(&in);
    size_t nv;
    float *x = fz_floats(&in, &nv);
    tr_error err;
    tr_spiir_bank *bank = tr_spiir_bank_create(f, counts, nt, dt, &err);
    tr_spiir *q = bank ? tr_spiir_create(&cfg, bank, &err) : NULL;
    if (q) {
        const size_t per = cfg.complex_input ? 2 : 1;
        const size_t n = nv / per;
        float *snr = (float *)malloc((n + 1) * 2 * nt * sizeof *snr);
        size_t k = 0;
        while (k < n) {
            const size_t m = fz_chunk(&in, 64);
            const size_t len = m < n - k ? m : n - k;
            FZ_REQUIRE(tr_spiir_process(q, x + k * per, len, snr) == TR_OK);
            k += len;
        }
        FZ_REQUIRE(tr_spiir_position(q) == n);
        free(snr);
    }
    tr_spiir_destroy(q);
    tr_spiir_bank_destroy(bank);
    free(x);
    return 0;
}
