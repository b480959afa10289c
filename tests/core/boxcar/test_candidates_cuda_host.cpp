/*
 * The CUDA candidates (cuda/boxcar/candidates_cuda.cu: the peak selection on
 * the device, whose peaks the host clusters) compiled for the host through
 * cuda/boxcar/boxcar_emu.h: a CPU object fed the selected peaks
 * (tr_candidates_process_peaks) checked against the CPU clustering of the
 * values (tr_candidates_process) call by call: the same events in the same
 * order (runs that tie in the closing order compared as sets), the same open
 * count, closed position and peak count after every call, then after flush,
 * and again after reset; the selected peaks checked one by one against the
 * values. Streams: noise, bursts across positions, channels
 * and widths, NaN and +-Inf; 1 to 1024 channels; chunk size 1, random
 * chunks and one call; threshold changes between calls; host, device
 * time-major and device channel-major buffers (with an offset into a longer
 * buffer); channel skip flags (the warm-up masking) against values set to
 * -inf for the CPU; dense streams that make the peak buffer grow.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 */
#define TR_BOXCAR_HOST_EMU 1
#include "common/core_util.h" /* tr_fail, tr_clear (common/cuda_check.h on CUDA) */

#include "boxcar/candidates_cuda.cu"
#include "boxcar/candidates_internal.h"

#include "boxcar/candidates_test_streams.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace
{

struct tcase {
    uint32_t nchan;
    size_t n;
    double noise;
    size_t gap;
    int32_t wmax;
    float thr;
    uint32_t link_time, link_chan;
    double link_width;
    uint64_t max_span;
    int chunks; /* 0: size 1, 1: random 0..97, 2: one call */
    int buffer; /* 0: host, 1: device time-major, 2: device channel-major */
    int skips;  /* 1: skip flags on some calls */
};

const tcase kCases[] = {
    {1, 800, 1.0, 100, 16, 6.0f, 0, 1, 0.0, 0, 0, 0, 0},
    {1, 3000, 1.0, 200, 16, 6.0f, 2, 0, 2.0, 40, 1, 1, 0},
    {2, 2000, 1.5, 100, 32, 5.0f, 1, 1, 0.0, 0, 1, 2, 1},
    {5, 2000, 1.5, 50, 64, 5.0f, 0, 2, 1.5, 0, 1, 1, 1},
    {17, 300, 1.0, 30, 8, 6.0f, 3, 1, 0.0, 25, 0, 2, 0},
    {64, 1200, 1.2, 20, 64, 5.5f, 1, 1, 2.0, 0, 1, 2, 1},
    {64, 1200, 1.2, 20, 64, 5.5f, 0, 1, 0.0, 0, 2, 0, 0},
    {1024, 120, 1.0, 4, 32, 6.0f, 0, 1, 0.0, 0, 1, 1, 1},
    {1024, 120, 1.0, 4, 32, 6.0f, 2, 3, 4.0, 16, 1, 2, 0},
    /* dense: the peak buffer grows */
    {64, 3000, 1.5, 10, 64, 3.0f, 20, 1, 0.0, 0, 2, 1, 0},
    {64, 2000, 1.5, 10, 64, 3.0f, 4, 1, 2.0, 0, 1, 0, 0},
    {1024, 60, 1.0, 0, 4, 2.0f, 1000, 0, 0.0, 0, 2, 0, 0},
    {8, 4000, 1.5, 10, 64, 3.0f, 6, 2, 1.25, 300, 1, 2, 1},
    /* one channel, any widths: runs of linked peaks merged (span limits
     * that cut runs, within and across calls) */
    {1, 4000, 1.5, 10, 64, 3.0f, 3, 1, 0.0, 0, 1, 1, 1},
    {1, 3000, 1.0, 50, 32, 5.0f, 0, 1, 0.0, 0, 2, 2, 0},
    {1, 5000, 1.5, 5, 16, 2.0f, 40, 1, 0.0, 0, 0, 0, 0},
    {1, 6000, 2.0, 0, 8, 1.0f, 1, 1, 0.0, 0, 1, 0, 1},
    {1, 6000, 2.0, 0, 8, 1.0f, 2, 1, 0.0, 37, 1, 1, 1},
    {1, 5000, 1.5, 5, 16, 2.0f, 40, 1, 0.0, 64, 0, 0, 0},
    {1, 8000, 1.5, 10, 64, 3.0f, 3, 1, 0.0, 300, 2, 2, 0},
    {1, 8000, 1.2, 3, 64, 2.5f, 0, 1, 0.0, 1, 1, 1, 0},
};

int g_fail = 0, g_calls = 0;

void fail(const tcase &t, size_t ci, const char *what, long long a, long long b)
{
    if (g_fail < 20)
        std::printf("FAIL case %zu (nchan %u): %s: cpu %lld, emulated %lld\n", ci,
                    t.nchan, what, a, b);
    g_fail++;
}

std::vector<tr_candidate> read_all(tr_candidates *c)
{
    std::vector<tr_candidate> v(tr_candidates_pending(c));
    if (!v.empty()) v.resize(tr_candidates_read(c, v.data(), v.size()));
    return v;
}

/* One call's results compared: the CPU's against dev's (and dev2's). */
void compare(const tcase &t, size_t ci, tr_candidates *cpu, tr_candidates *dev,
             tr_candidates *dev2 = nullptr)
{
    std::vector<tr_candidate> a = read_all(cpu);
    for (tr_candidates *d : {dev, dev2}) {
        if (!d) continue;
        std::vector<tr_candidate> b = read_all(d);
        if (cts_compare(a.data(), a.size(), b.data(), b.size()))
            fail(t, ci, "events differ (count or fields)", (long long)a.size(),
                 (long long)b.size());
        if (tr_candidates_position(d) != tr_candidates_position(cpu))
            fail(t, ci, "position", tr_candidates_position(cpu),
                 tr_candidates_position(d));
        if (tr_candidates_closed(d) != tr_candidates_closed(cpu))
            fail(t, ci, "closed", tr_candidates_closed(cpu), tr_candidates_closed(d));
        if (tr_candidates_open(d) != tr_candidates_open(cpu))
            fail(t, ci, "open", (long long)tr_candidates_open(cpu),
                 (long long)tr_candidates_open(d));
        if (tr_candidates_peaks(d) != tr_candidates_peaks(cpu))
            fail(t, ci, "peaks", (long long)tr_candidates_peaks(cpu),
                 (long long)tr_candidates_peaks(d));
    }
    g_calls++;
}

/* The selected peaks against the values (ms: time-major, warming-up channels
 * at -inf), in stream order. */
void check_peaks(const tcase &t, size_t ci, const float *ms, const int32_t *w, size_t m,
                 float thr, const tr_cuda_cand_peak *pk, size_t npk)
{
    size_t i = 0;
    for (size_t k = 0; k < m; k++)
        for (uint32_t c = 0; c < t.nchan; c++) {
            const float s = ms[k * t.nchan + c];
            if (!(s >= thr)) continue;
            const int32_t wi = w[k * t.nchan + c] < 1 ? 1 : w[k * t.nchan + c];
            if (i >= npk || pk[i].k != k || pk[i].c != c || pk[i].w != wi ||
                pk[i].s != s) {
                fail(t, ci, "selected peak", (long long)i, (long long)npk);
                return;
            }
            i++;
        }
    if (i != npk) fail(t, ci, "selected peak count", (long long)i, (long long)npk);
}

/* The runs of one channel against the peaks they came from: in order, every
 * peak in one run, each run cut where a peak starts more than lt after the
 * run's largest end or at a chunk's first peak, with the run's fields. */
void check_runs(const tcase &t, size_t ci, const tr_cuda_cand_peak *pk, size_t npk,
                const tr_cuda_cand_run *rn, size_t nrn, uint32_t lt)
{
    size_t i = 0;
    for (size_t j = 0; j < nrn; j++) {
        const tr_cuda_cand_run &r = rn[j];
        if (r.i0 != i || r.members < 1 || i + r.members > npk) {
            fail(t, ci, "run placement", (long long)i, (long long)r.i0);
            return;
        }
        tr_cuda_cand_run e{pk[i].k,    pk[i].k,           pk[i].k,
                           pk[i].w,    pk[i].s,           pk[i].k + (uint32_t)pk[i].w,
                           1u,         (uint32_t)pk[i].w, (uint32_t)pk[i].w,
                           (uint32_t)i};
        for (size_t m = i + 1; m < i + r.members; m++) {
            const uint32_t w = (uint32_t)pk[m].w;
            if (m % TR_CUDA_CAND_RUN_CHUNK == 0 ||
                (uint64_t)pk[m].k > (uint64_t)e.end + lt)
                fail(t, ci, "run holds a peak that starts a run", (long long)m, 0);
            if (pk[m].s > e.sb) {
                e.sb = pk[m].s;
                e.kb = pk[m].k;
                e.wb = pk[m].w;
            }
            e.end = std::max(e.end, pk[m].k + w);
            e.wlo = std::min(e.wlo, w);
            e.whi = std::max(e.whi, w);
            e.k1 = pk[m].k;
            e.members++;
        }
        const size_t nx = i + r.members;
        if (nx < npk && nx % TR_CUDA_CAND_RUN_CHUNK != 0 &&
            (uint64_t)pk[nx].k <= (uint64_t)e.end + lt)
            fail(t, ci, "run cut before a peak that joins it", (long long)nx, 0);
        if (r.k0 != e.k0 || r.k1 != e.k1 || r.kb != e.kb || r.wb != e.wb ||
            r.sb != e.sb || r.end != e.end || r.wlo != e.wlo || r.whi != e.whi)
            fail(t, ci, "run fields", (long long)j, 0);
        i = nx;
    }
    if (i != npk) fail(t, ci, "peaks in runs", (long long)npk, (long long)i);
}

int g_fetches = 0; /* runs cut by a span limit (read back as peaks) */

tr_status fetch_peaks(void *arg, const tr_cuda_cand_run *run, tr_cuda_cand_peak *out,
                      tr_error *err)
{
    g_fetches++;
    return tr_cuda_cand_run_peaks((tr_cuda_cand *)arg, run, out, err);
}

void run_case(size_t ci, const tcase &t)
{
    tu_rng r{0x5eed0000ULL + ci};
    const uint32_t C = t.nchan;
    std::vector<float> snr(t.n * C);
    std::vector<int32_t> width(t.n * C);
    cts_stream(&r, t.n, C, t.noise, t.gap, t.wmax, snr.data(), width.data());

    tr_candidates_config cfg = tr_candidates_config_default();
    cfg.nchan = C;
    cfg.threshold = t.thr;
    cfg.link_time = t.link_time;
    cfg.link_chan = t.link_chan;
    cfg.link_width = t.link_width;
    cfg.max_span = t.max_span;
    cfg.start_position = -7;
    cfg.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_candidates *cpu = tr_candidates_create(&cfg, &err);
    tr_candidates *dev = tr_candidates_create(&cfg, &err);
    /* one channel, any widths: a third object fed the runs */
    const bool runs = C == 1 && t.link_width == 0.0;
    tr_candidates *drn = runs ? tr_candidates_create(&cfg, &err) : nullptr;
    tr_cuda_cand *ctx = nullptr;
    if (!cpu || !dev || tr_cuda_cand_create(0, &cfg, &ctx, &err) != TR_OK) {
        std::printf("FAIL case %zu: create: %s\n", ci, err.message);
        g_fail++;
        tr_candidates_destroy(cpu);
        tr_candidates_destroy(dev);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        size_t done = 0;
        std::vector<float> bs, ms;
        std::vector<int32_t> bw;
        std::vector<uint8_t> skip(C);
        while (done < t.n) {
            size_t m = t.chunks == 0   ? 1
                       : t.chunks == 1 ? (size_t)tu_range(&r, 0, 97)
                                       : t.n;
            if (pass == 1) m = t.n; /* after reset: one call */
            if (m > t.n - done) m = t.n - done;
            if (tu_range(&r, 0, 9) == 0) { /* threshold change at run time */
                const float thr = t.thr + (float)tu_range(&r, -1, 2);
                tr_candidates_set_threshold(cpu, thr);
                tr_candidates_set_threshold(dev, thr);
                if (drn) tr_candidates_set_threshold(drn, thr);
            }
            const float thr = tr_candidates_threshold(cpu);
            const float *s = snr.data() + done * C;
            const int32_t *w = width.data() + done * C;
            /* skip flags: the CPU gets those channels at -inf */
            bool use_skip = t.skips && tu_range(&r, 0, 4) == 0;
            ms.assign(s, s + m * C);
            if (use_skip) {
                for (uint32_t c = 0; c < C; c++)
                    skip[c] = tu_range(&r, 0, 2) == 0;
                for (size_t k = 0; k < m; k++)
                    for (uint32_t c = 0; c < C; c++)
                        if (skip[c]) ms[k * C + c] = -INFINITY;
            }
            if (tr_candidates_process(cpu, ms.data(), w, m) != TR_OK)
                fail(t, ci, "cpu process", 0, 0);
            tr_status st;
            const uint8_t *sk = use_skip ? skip.data() : nullptr;
            const tr_cuda_cand_peak *pk = nullptr;
            size_t npk = 0;
            /* the buffer's description: channel-major inside a longer one
             * (positions off .. off + m), or s, w themselves */
            const float *bsp = s;
            const int32_t *bwp = w;
            int64_t ld = (int64_t)m, off = 0;
            if (t.buffer == 2) {
                off = tu_range(&r, 0, 3);
                ld = (int64_t)m + off + 2;
                bs.assign((size_t)ld * C, NAN);
                bw.assign((size_t)ld * C, -5);
                for (size_t k = 0; k < m; k++)
                    for (uint32_t c = 0; c < C; c++) {
                        bs[c * ld + off + k] = s[k * C + c];
                        bw[c * ld + off + k] = w[k * C + c];
                    }
                bsp = bs.data();
                bwp = bw.data();
            }
            const int cmj = t.buffer == 2, on_dev = t.buffer != 0;
            std::vector<tr_cuda_cand_peak> rpk;
            const tr_cuda_cand_run *rn = nullptr;
            size_t nrn = 0;
            if (drn) {
                /* runs: the peaks for the checks and for dev are those of
                 * the runs, read back run by run */
                st = tr_cuda_cand_select_runs(ctx, bsp, bwp, ld, off, m, cmj, on_dev, thr,
                                              sk, t.link_time, &rn, &nrn, &npk, &err);
                for (size_t j = 0; st == TR_OK && j < nrn; j++) {
                    rpk.resize(rn[j].i0 + rn[j].members);
                    st = tr_cuda_cand_run_peaks(ctx, &rn[j], rpk.data() + rn[j].i0, &err);
                }
                if (st == TR_OK && rpk.size() != npk)
                    fail(t, ci, "peaks of the runs", (long long)npk,
                         (long long)rpk.size());
                pk = rpk.data();
                npk = rpk.size();
            } else {
                st = tr_cuda_cand_select(ctx, bsp, bwp, ld, off, m, cmj, on_dev, thr, sk,
                                         &pk, &npk, &err);
            }
            if (st != TR_OK) {
                std::printf("FAIL case %zu: select: %s\n", ci, err.message);
                g_fail++;
                break;
            }
            check_peaks(t, ci, ms.data(), w, m, thr, pk, npk);
            if (tr_candidates_process_peaks(dev, pk, npk, m) != TR_OK)
                fail(t, ci, "process peaks", 0, 0);
            if (drn) {
                check_runs(t, ci, pk, npk, rn, nrn, t.link_time);
                if (tr_candidates_process_runs(drn, rn, nrn, m, fetch_peaks, ctx) !=
                    TR_OK)
                    fail(t, ci, "process runs", 0, 0);
            }
            compare(t, ci, cpu, dev, drn);
            done += m;
        }
        tr_candidates_flush(cpu);
        tr_candidates_flush(dev);
        if (drn) tr_candidates_flush(drn);
        compare(t, ci, cpu, dev, drn);
        if (drn) {
            tr_candidates_reset(drn);
            tr_candidates_set_threshold(drn, t.thr);
        }
        tr_candidates_reset(cpu);
        tr_candidates_reset(dev);
        tr_candidates_set_threshold(cpu, t.thr);
        tr_candidates_set_threshold(dev, t.thr);
    }
    tr_candidates_destroy(cpu);
    tr_candidates_destroy(dev);
    tr_candidates_destroy(drn);
    tr_cuda_cand_destroy(ctx);
}

/* Bad descriptions are errors, not reads out of bounds. */
void invalid()
{
    tr_candidates_config cfg = tr_candidates_config_default();
    tr_error err;
    tr_cuda_cand *ctx = nullptr;
    const float s[4] = {0, 0, 0, 0};
    const tr_cuda_cand_peak *pk = nullptr;
    size_t npk = 0;
    if (tr_cuda_cand_create(0, &cfg, &ctx, &err) != TR_OK) {
        std::printf("FAIL create: %s\n", err.message);
        g_fail++;
        return;
    }
    if (tr_cuda_cand_select(ctx, s, nullptr, 2, 1, 2, 1, 1, 6.0f, nullptr, &pk, &npk,
                            &err) != TR_ERR_INVALID ||
        tr_cuda_cand_select(ctx, s, nullptr, 4, 0, 2, 1, 0, 6.0f, nullptr, &pk, &npk,
                            &err) != TR_ERR_INVALID ||
        tr_cuda_cand_select(ctx, nullptr, nullptr, 4, 0, 2, 0, 1, 6.0f, nullptr, &pk,
                            &npk, &err) != TR_ERR_INVALID ||
        tr_cuda_cand_select(ctx, s, nullptr, 4, 0, 2, 0, 1, 6.0f, nullptr, nullptr, &npk,
                            &err) != TR_ERR_INVALID) {
        std::printf("FAIL invalid buffer descriptions accepted\n");
        g_fail++;
    }
    /* a run that the last selection did not give, runs of two channels */
    const tr_cuda_cand_run *rn = nullptr;
    size_t nrn = 0;
    tr_cuda_cand_peak out[TR_CUDA_CAND_RUN_CHUNK];
    const tr_cuda_cand_run bogus{0, 0, 0, 1, 9.0f, 1, 1, 1, 1, 5};
    if (tr_cuda_cand_select_runs(ctx, s, nullptr, 4, 0, 4, 0, 0, 6.0f, nullptr, 0, &rn,
                                 &nrn, &npk, &err) != TR_OK ||
        nrn != 0 || tr_cuda_cand_run_peaks(ctx, &bogus, out, &err) != TR_ERR_INVALID) {
        std::printf("FAIL a run the selection did not give was read\n");
        g_fail++;
    }
    tr_cuda_cand_destroy(ctx);
    cfg.nchan = 2;
    if (tr_cuda_cand_create(0, &cfg, &ctx, &err) != TR_OK ||
        tr_cuda_cand_select_runs(ctx, s, nullptr, 2, 0, 2, 0, 0, 6.0f, nullptr, 0, &rn,
                                 &nrn, &npk, &err) != TR_ERR_INVALID) {
        std::printf("FAIL runs of two channels accepted\n");
        g_fail++;
    }
    tr_cuda_cand_destroy(ctx);
}

} // namespace

int main()
{
    const size_t nc = sizeof kCases / sizeof kCases[0];
    for (size_t i = 0; i < nc; i++)
        run_case(i, kCases[i]);
    invalid();
    if (g_fetches == 0) { /* the span limit inside a run was never met */
        std::printf("FAIL no run was cut by a span limit\n");
        g_fail++;
    }
    std::printf("test_candidates_cuda_host: %zu cases, %d calls compared, %d runs cut by "
                "a span limit, %d failures\n",
                nc, g_calls, g_fetches, g_fail);
    return g_fail ? 1 : 0;
}
