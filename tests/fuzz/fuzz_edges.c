/*
 * libFuzzer target: the edges localizer (tr_edges). Fixed or estimated
 * levels from the input, any samples (NaN and infinities included), FAST in
 * random chunks with a small output capacity against REFERENCE in one call:
 * the same transitions (sample, polarity), every sample consumed.
 */
#include <transient/edges.h>

#include "fuzz_input.h"

#include <math.h>

/* All transitions of x through q in chunks (chunked = 0: one call, room for
 * all); *ne transitions in a malloc'ed array. */
static tr_edge *run(tr_edges *q, fz_input *in, const float *x, size_t n, int chunked,
                    size_t *ne)
{
    const size_t cap = n + 1;
    tr_edge *all = (tr_edge *)malloc((cap + 64) * sizeof *all);
    size_t k = 0;
    *ne = 0;
    while (k < n) {
        const size_t m = chunked ? fz_chunk(in, 97) : n - k;
        const size_t len = m < n - k ? m : n - k;
        const size_t ocap = chunked ? 1 + (size_t)(len % 3) : cap - *ne;
        size_t used = 0, got = 0;
        FZ_REQUIRE(tr_edges_process(q, x + k, len, all + *ne, ocap, &used, &got) ==
                   TR_OK);
        FZ_REQUIRE(used <= len && got <= ocap);
        FZ_REQUIRE(used == len || got == ocap);
        FZ_REQUIRE(used > 0 || got > 0); /* progress */
        k += used;
        *ne += got;
        FZ_REQUIRE(*ne <= cap + 32);
    }
    for (;;) {
        size_t got = 0;
        FZ_REQUIRE(tr_edges_flush(q, all + *ne, 4, &got) == TR_OK);
        *ne += got;
        if (got < 4) break;
    }
    return all;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    tr_edges_config cfg = tr_edges_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.levels_mode = fz_range(&in, 0, 1) ? TR_LEVELS_AUTO : TR_LEVELS_FIXED;
    cfg.low = fz_f32(&in);
    cfg.mid = fz_f32(&in);
    cfg.high = fz_f32(&in);
    cfg.tolerance_pct = fz_range(&in, 0, 60);
    cfg.mid_pct = fz_range(&in, 0, 100);
    cfg.hist_bins = fz_range(&in, 0, 300);
    cfg.level_samples = fz_range(&in, 0, 2048);
    cfg.level_interval = fz_range(&in, 0, 4096);
    fz_seed_chunks(&in);
    size_t n;
    float *x = fz_floats(&in, &n);

    tr_error err;
    cfg.variant = TR_VARIANT_REFERENCE;
    tr_edges *ref = tr_edges_create(&cfg, &err);
    cfg.variant = TR_VARIANT_FAST;
    tr_edges *fast = tr_edges_create(&cfg, &err);
    FZ_REQUIRE(!ref == !fast); /* the same validation */
    if (ref && fast) {
        size_t n0, n1;
        tr_edge *e0 = run(ref, &in, x, n, 0, &n0);
        tr_edge *e1 = run(fast, &in, x, n, 1, &n1);
        FZ_REQUIRE(n0 == n1);
        for (size_t i = 0; i < n0; i++)
            FZ_REQUIRE(e0[i].sample == e1[i].sample && e0[i].polarity == e1[i].polarity);
        free(e0);
        free(e1);
    }
    tr_edges_destroy(ref);
    tr_edges_destroy(fast);
    free(x);
    return 0;
}
