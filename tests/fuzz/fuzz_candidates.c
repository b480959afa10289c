/*
 * libFuzzer target: friends-of-friends candidates (tr_candidates). Any
 * channel count, links and threshold from the input, any S/N values and
 * widths; the events of random chunks (read as they close) must equal those
 * of one call, and every peak must be a member of exactly one event.
 */
#include <transient/candidates.h>

#include "fuzz_input.h"

#include <stddef.h>

static tr_candidate *run(tr_candidates *q, fz_input *in, const float *snr,
                         const int32_t *w, size_t n, uint32_t C, int chunked, size_t *ne)
{
    const size_t cap = n * C + 1;
    tr_candidate *ev = (tr_candidate *)malloc(cap * sizeof *ev);
    size_t k = 0;
    *ne = 0;
    while (k < n) {
        const size_t m = chunked ? fz_chunk(in, 40) : n - k;
        const size_t len = m < n - k ? m : n - k;
        FZ_REQUIRE(tr_candidates_process(q, snr + k * C, w + k * C, len) == TR_OK);
        k += len;
        *ne += tr_candidates_read(q, ev + *ne, cap - *ne);
    }
    FZ_REQUIRE(tr_candidates_flush(q) == TR_OK);
    *ne += tr_candidates_read(q, ev + *ne, cap - *ne);
    FZ_REQUIRE(tr_candidates_read(q, ev, cap) == 0);
    return ev;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    tr_candidates_config cfg = tr_candidates_config_default();
    cfg.nchan = fz_range(&in, 0, 24);
    cfg.threshold = fz_f32(&in);
    cfg.link_time = fz_range(&in, 0, 12);
    cfg.link_chan = fz_range(&in, 0, 30);
    cfg.link_width = fz_range(&in, 0, 3) == 0 ? 0.0 : fz_range(&in, 0, 40) / 8.0;
    cfg.start_position = (int32_t)fz_u32(&in);
    cfg.max_span = fz_range(&in, 0, 3) == 0 ? fz_range(&in, 0, 64) : 0;
    fz_seed_chunks(&in);
    size_t nv;
    float *v = fz_floats(&in, &nv);
    tr_error err;
    tr_candidates *a = tr_candidates_create(&cfg, &err);
    tr_candidates *b = tr_candidates_create(&cfg, &err);
    FZ_REQUIRE(!a == !b);
    if (a) {
        const uint32_t C = cfg.nchan;
        /* value i: the S/N; its low bits also give the width (0 counts as 1) */
        const size_t n = nv / C;
        int32_t *w = (int32_t *)malloc((n * C + 1) * sizeof *w);
        uint64_t peaks = 0;
        for (size_t i = 0; i < n * C; i++) {
            uint32_t u;
            memcpy(&u, &v[i], sizeof u);
            w[i] = (int32_t)(u % 17);
            peaks += v[i] >= cfg.threshold;
        }
        size_t n0, n1;
        tr_candidate *e0 = run(a, &in, v, w, n, C, 0, &n0);
        tr_candidate *e1 = run(b, &in, v, w, n, C, 1, &n1);
        FZ_REQUIRE(n0 == n1);
        uint64_t members = 0;
        for (size_t i = 0; i < n0; i++) {
            FZ_REQUIRE(
                memcmp(&e0[i].start, &e1[i].start,
                       offsetof(tr_candidate, snr) - offsetof(tr_candidate, start)) == 0);
            FZ_REQUIRE(e0[i].channel == e1[i].channel && e0[i].width == e1[i].width);
            members += e0[i].members;
        }
        FZ_REQUIRE(members == peaks && tr_candidates_peaks(a) == peaks);
        free(e0);
        free(e1);
        free(w);
    }
    tr_candidates_destroy(a);
    tr_candidates_destroy(b);
    free(v);
    return 0;
}
