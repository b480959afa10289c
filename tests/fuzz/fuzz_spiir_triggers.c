/*
 * libFuzzer target: the SPIIR trigger search (tr_spiir_triggers). Template
 * count (small, or at or above TR_SPIIR_MAX_TEMPLATES: create must refuse
 * what it cannot hold before allocating), threshold and window from the input, any SNR
 * values; FAST in random chunks with capacities near ntemplates against REFERENCE in one
 * call: the same triggers (sample, template) in the same order.
 */
#include <transient/spiir_triggers.h>

#include "fuzz_input.h"

static tr_spiir_trigger *run(tr_spiir_triggers *q, fz_input *in, const float *snr,
                             size_t n, uint32_t nt, int chunked, size_t *ne)
{
    const size_t cap = n * nt + nt + 1;
    tr_spiir_trigger *out = (tr_spiir_trigger *)malloc(cap * sizeof *out);
    size_t k = 0;
    *ne = 0;
    while (k < n) {
        const size_t m = chunked ? fz_chunk(in, 50) : n - k;
        const size_t len = m < n - k ? m : n - k;
        const size_t room = cap - *ne;
        const size_t c = chunked ? nt + fz_chunk(in, 3 * nt) : room;
        size_t used = 0, got = 0;
        FZ_REQUIRE(tr_spiir_triggers_process(q, snr + k * 2 * nt, len, out + *ne,
                                             c < room ? c : room, &used, &got) == TR_OK);
        FZ_REQUIRE(used <= len && used > 0);
        k += used;
        *ne += got;
    }
    size_t got = 0;
    FZ_REQUIRE(tr_spiir_triggers_flush(q, out + *ne, cap - *ne, &got) == TR_OK);
    *ne += got;
    return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    /* large counts at or above the ceiling: refused unless exactly at it */
    cfg.ntemplates = fz_range(&in, 0, 7) == 0 ? fz_u32(&in) | TR_SPIIR_MAX_TEMPLATES
                                              : fz_range(&in, 0, 5);
    cfg.threshold = fz_f32(&in);
    cfg.window = fz_range(&in, 0, 70);
    cfg.nthreads = fz_range(&in, 0, 3);
    fz_seed_chunks(&in);
    tr_error err;
    cfg.variant = TR_VARIANT_REFERENCE;
    tr_spiir_triggers *ref = tr_spiir_triggers_create(&cfg, &err);
    cfg.variant = TR_VARIANT_FAST;
    tr_spiir_triggers *fast = tr_spiir_triggers_create(&cfg, &err);
    FZ_REQUIRE(!ref == !fast);
    size_t nv;
    float *snr = fz_floats(&in, &nv);
    if (ref && fast) {
        const uint32_t nt = cfg.ntemplates;
        const size_t n = nv / (2 * (size_t)nt);
        size_t n0, n1;
        tr_spiir_trigger *t0 = run(ref, &in, snr, n, nt, 0, &n0);
        tr_spiir_trigger *t1 = run(fast, &in, snr, n, nt, 1, &n1);
        FZ_REQUIRE(n0 == n1);
        for (size_t i = 0; i < n0; i++)
            FZ_REQUIRE(t0[i].sample == t1[i].sample &&
                       t0[i].template_index == t1[i].template_index);
        free(t0);
        free(t1);
    }
    tr_spiir_triggers_destroy(ref);
    tr_spiir_triggers_destroy(fast);
    free(snr);
    return 0;
}
