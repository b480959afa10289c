/*
 * The boxcar normalisation on the device (cuda/boxcar/norm_cuda.cu, kernels
 * in norm_kernels.cuh) compiled for the host through cuda/boxcar/boxcar_emu.h
 * and checked against the CPU normalisation object (tr_boxcar_norm) after
 * every call: the cleaned samples (non-finite replaced by the input mean in
 * effect), the per-width tables mu_L, sigma_L of the current and previous
 * window, the ready flags (warm-up) and the non-finite count (after a settle;
 * a third of the calls left for the next call to settle). WHITE and
 * LEVELS, 1 to 64 channels, windows of 64 to 1024 samples, history 1 to 4,
 * rejection off, plain and corrected, white and red noise with outliers and
 * NaN/Inf, a channel that is constant, random chunkings (chunk size 1 at the
 * start) in both layouts, calls of many whole windows (their summaries taken
 * together), a call longer than the values ring (it grows),
 * reset; windows of 4096 and 40000 samples (the summaries' values in
 * registers and beyond them). With first_own (window 0 by its own values): the delay
 * line's output after every call against the CPU's cleaned samples W positions behind,
 * window 0's NaN replaced by window 0's own mean (as lib/core/boxcar/boxcar.c releases
 * them), NaN/Inf in window 0 and later, 1 to 70 channels, and the end of the stream
 * (tr_cuda_norm_finish: the held rest, window 0's own values of a stream shorter than W).
 * The placement of held outputs (cuda/boxcar/stage_cuda.cu: zeros, then the stage's
 * values, in both layouts; only the positions asked for written; download; a placement
 * out of range refused).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2.
 */
#define TR_BOXCAR_HOST_EMU 1
#include "common/core_util.h" /* tr_fail, tr_clear (common/cuda_check.h on CUDA) */

#include "boxcar/norm_cuda.cu"
#include "boxcar/stage_cuda.cu"

#include <transient/boxcar_norm.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace
{

struct ncase {
    tr_boxcar_norm_mode mode;
    uint32_t nchan, window, history;
    double reject;
    int correct;
    size_t n;
    int layout; /* TR_BOXCAR_TIME_MAJOR or TR_BOXCAR_CHANNEL_MAJOR */
    size_t max_chunk;
    int first_own;
};

const ncase kCases[] = {
    {TR_BOXCAR_NORM_WHITE, 1, 64, 1, 3.0, 1, 700, TR_BOXCAR_TIME_MAJOR, 50},
    {TR_BOXCAR_NORM_WHITE, 3, 128, 4, 0.0, 0, 1500, TR_BOXCAR_CHANNEL_MAJOR, 300},
    {TR_BOXCAR_NORM_WHITE, 64, 256, 2, 2.5, 0, 1400, TR_BOXCAR_TIME_MAJOR, 700},
    {TR_BOXCAR_NORM_LEVELS, 1, 512, 2, 3.0, 1, 3000, TR_BOXCAR_TIME_MAJOR, 900},
    {TR_BOXCAR_NORM_LEVELS, 5, 1024, 3, 3.0, 1, 5000, TR_BOXCAR_CHANNEL_MAJOR, 5000},
    {TR_BOXCAR_NORM_LEVELS, 16, 256, 1, 0.0, 0, 2000, TR_BOXCAR_TIME_MAJOR, 400},
    {TR_BOXCAR_NORM_WHITE, 1, 64, 1, 3.0, 1, 700, TR_BOXCAR_TIME_MAJOR, 50, 1},
    {TR_BOXCAR_NORM_WHITE, 3, 128, 4, 0.0, 0, 1500, TR_BOXCAR_CHANNEL_MAJOR, 300, 1},
    {TR_BOXCAR_NORM_WHITE, 70, 256, 2, 2.5, 0, 1400, TR_BOXCAR_TIME_MAJOR, 700, 1},
    {TR_BOXCAR_NORM_LEVELS, 5, 1024, 3, 3.0, 1, 5000, TR_BOXCAR_CHANNEL_MAJOR, 5000, 1},
    {TR_BOXCAR_NORM_LEVELS, 16, 256, 1, 0.0, 0, 2000, TR_BOXCAR_TIME_MAJOR, 400, 1},
    /* calls of many whole windows (summarised together, up to the batch of
     * 64 windows that one channel and level take, and beyond) */
    {TR_BOXCAR_NORM_WHITE, 1, 64, 2, 3.0, 1, 12000, TR_BOXCAR_TIME_MAJOR, 6000},
    {TR_BOXCAR_NORM_LEVELS, 2, 64, 4, 2.5, 0, 6000, TR_BOXCAR_CHANNEL_MAJOR, 3000},
    {TR_BOXCAR_NORM_WHITE, 1, 64, 3, 3.0, 1, 12000, TR_BOXCAR_CHANNEL_MAJOR, 6000, 1},
    {TR_BOXCAR_NORM_LEVELS, 3, 128, 1, 3.0, 1, 6000, TR_BOXCAR_TIME_MAJOR, 3000, 1},
    /* windows whose values fill the registers of the summary (4096) or
     * overflow them (40000: the values beyond 16384 read from memory) */
    {TR_BOXCAR_NORM_LEVELS, 2, 4096, 2, 3.0, 1, 20000, TR_BOXCAR_CHANNEL_MAJOR, 9000},
    {TR_BOXCAR_NORM_WHITE, 1, 40000, 2, 3.0, 1, 130000, TR_BOXCAR_TIME_MAJOR, 50000},
    {TR_BOXCAR_NORM_WHITE, 2, 40000, 1, 2.5, 0, 90000, TR_BOXCAR_CHANNEL_MAJOR, 90000, 1},
    /* streams shorter than the window: held until the end */
    {TR_BOXCAR_NORM_WHITE, 2, 64, 1, 3.0, 1, 40, TR_BOXCAR_TIME_MAJOR, 7, 1},
    {TR_BOXCAR_NORM_LEVELS, 4, 512, 2, 3.0, 1, 300, TR_BOXCAR_CHANNEL_MAJOR, 90, 1},
};

const uint32_t kWidths[] = {1, 2, 3, 5, 8, 13, 32, 64, 100, 128};
constexpr uint32_t kTotal = sizeof kWidths / sizeof kWidths[0];

int g_fail = 0, g_checks = 0;

void check(bool ok, size_t ci, const char *what, double a, double b)
{
    ++g_checks;
    if (ok) return;
    if (g_fail < 20)
        std::printf("FAIL case %zu: %s: cpu %.9g, emulated %.9g\n", ci, what, a, b);
    g_fail++;
}

bool close(double a, double b, double rel)
{
    return std::fabs(a - b) <= rel * (1.0 + std::fabs(a));
}

/* The per-width tables and (flags: after a settle) the ready flags of window
 * j against the CPU's. */
void check_tables(size_t ci, const tr_boxcar_norm *host, tr_cuda_norm *dev, uint32_t C,
                  uint32_t W, uint64_t j, bool flags = true)
{
    std::vector<float> hmu(kTotal), hsg(kTotal);
    const float *mu = nullptr, *sg = nullptr;
    tr_error err;
    if (tr_cuda_norm_tables(dev, j, 1, &mu, &sg, &err) != TR_OK) {
        std::printf("FAIL case %zu: tables: %s\n", ci, err.message);
        g_fail++;
        return;
    }
    for (uint32_t c = 0; c < C; c++) {
        tr_boxcar_norm_table(host, j * W, c, kWidths, kTotal, hmu.data(), hsg.data());
        for (uint32_t i = 0; i < kTotal; i++) {
            check(close(hmu[i], mu[c * kTotal + i], 1e-5), ci, "mu_L", hmu[i],
                  mu[c * kTotal + i]);
            check(close(hsg[i], sg[c * kTotal + i], 1e-5), ci, "sigma_L", hsg[i],
                  sg[c * kTotal + i]);
        }
        if (flags)
            check(tr_boxcar_norm_ready(host, j * W, c) ==
                      tr_cuda_norm_ready(dev, j * W, c),
                  ci, "ready", tr_boxcar_norm_ready(host, j * W, c),
                  tr_cuda_norm_ready(dev, j * W, c));
    }
}

/* The delay line's output held (positions p0 .. end - 1, layout cm) against
 * the CPU's cleaned samples y, window 0's NaN replaced by its own mean. */
void check_held(size_t ci, const tr_boxcar_norm *host, const std::vector<float> &y,
                uint32_t C, uint32_t W, bool cm, const float *held, size_t p0, size_t end)
{
    const size_t m = end - p0;
    for (uint32_t c = 0; c < C; c++) {
        double mu0 = 0.0;
        if (p0 < W) tr_boxcar_norm_stats(host, 0, c, 1, &mu0, nullptr);
        for (size_t k = 0; k < m; k++) {
            float want = y[(p0 + k) * C + c];
            if (p0 + k < W && std::isnan(want)) want = (float)mu0;
            const float got = held[cm ? c * m + k : k * C + c];
            check(close(want, got, 1e-6), ci, "held sample", want, got);
        }
    }
}

void run_case(size_t ci, const ncase &t)
{
    std::mt19937_64 rng(77 + ci);
    std::normal_distribution<double> g(0.0, 1.0);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    const uint32_t C = t.nchan;
    std::vector<float> x(t.n * C);
    std::vector<double> red(C, 0.0);
    for (size_t k = 0; k < t.n; k++)
        for (uint32_t c = 0; c < C; c++) {
            red[c] = 0.95 * red[c] + 0.3 * g(rng); /* red noise for LEVELS */
            double v =
                2.0 + 1.5 * g(rng) + (t.mode == TR_BOXCAR_NORM_LEVELS ? red[c] : 0.0);
            const double r = u(rng);
            if (r < 0.003) v += 40.0; /* outliers */
            float f = (float)v;
            if (r > 0.998) f = NAN;
            if (r > 0.999) f = (r > 0.9995) ? INFINITY : -INFINITY;
            if (c == 1) f = 4.0f; /* constant: variance 0 never counts as measured */
            x[k * C + c] = f;
        }
    /* a long run of NaN in channel 0: windows without finite data */
    for (size_t k = t.n / 3; k < t.n / 3 + 2 * t.window && k < t.n; k++)
        x[k * C] = NAN;
    if (t.first_own)
        for (uint32_t c = 0; c < C; c++) {
            x[2 * C + c] = NAN; /* window 0: replaced by its own mean */
            x[5 * C + c] = c % 2 ? INFINITY : -INFINITY;
        }

    tr_boxcar_norm_config nc = tr_boxcar_norm_config_default();
    nc.mode = t.mode;
    nc.first_own = t.first_own;
    nc.window = t.window;
    nc.history = t.history;
    nc.reject_sigma = t.reject;
    nc.reject_correct = t.correct;
    nc.init_mean = 1.0;
    nc.init_sigma = 2.0;
    nc.threads = 1;
    tr_error err;
    const uint32_t maxw = 128, lat = 127;
    tr_boxcar_norm *host = tr_boxcar_norm_create(&nc, C, maxw, lat + t.n, &err);
    if (!host) {
        std::printf("FAIL case %zu: host create: %s\n", ci, err.message);
        g_fail++;
        return;
    }
    double f = t.reject > 0.0 && t.correct ? tr_boxcar_norm_clip_factor(t.reject) : 1.0;
    tr_cuda_norm_setup su{C,
                          t.window,
                          t.history,
                          tr_boxcar_norm_levels(host),
                          t.reject,
                          nc.reject_max_iter,
                          f,
                          nc.init_mean,
                          nc.init_sigma,
                          kWidths,
                          kTotal,
                          lat + (t.first_own ? t.window : 0),
                          t.first_own};
    tr_cuda_norm *dev = nullptr;
    if (tr_cuda_norm_create(0, &su, &dev, &err) != TR_OK) {
        std::printf("FAIL case %zu: create: %s\n", ci, err.message);
        g_fail++;
        tr_boxcar_norm_destroy(host);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        std::vector<float> y(t.n * C), buf;
        uint64_t nonfinite = 0;
        size_t done = 0, calls = 0;
        while (done < t.n) {
            size_t m = calls < 5 ? 1 : 1 + rng() % t.max_chunk;
            if (pass == 1) m = t.n; /* after reset: one call, longer than the ring */
            if (m > t.n - done) m = t.n - done;
            const float *xs = x.data() + done * C;
            if (tr_boxcar_norm_process(host, xs, m, y.data() + done * C) != TR_OK) {
                check(false, ci, "host process", 0, 0);
                break;
            }
            const bool cm = t.layout == TR_BOXCAR_CHANNEL_MAJOR;
            buf.resize(m * C);
            for (size_t k = 0; k < m; k++)
                for (uint32_t c = 0; c < C; c++)
                    buf[cm ? c * m + k : k * C + c] = xs[k * C + c];
            const float *clean = nullptr;
            if (tr_cuda_norm_process(dev, buf.data(), m, (tr_boxcar_layout)t.layout,
                                     TR_SRC_CALLER_DEVICE, &clean, &err) != TR_OK) {
                std::printf("FAIL case %zu: process: %s\n", ci, err.message);
                g_fail++;
                break;
            }
            /* a third of the calls not settled: the next call takes their
             * results, the flags are not asked for */
            const bool settled = rng() % 3 != 0;
            if (settled && tr_cuda_norm_settle(dev, &nonfinite, &err) != TR_OK) {
                std::printf("FAIL case %zu: settle: %s\n", ci, err.message);
                g_fail++;
                break;
            }
            if (t.first_own) {
                /* positions >= 0 of done - W .. done + m - 1 - W */
                const size_t p0 = done > t.window ? done - t.window : 0;
                const size_t end = done + m > t.window ? done + m - t.window : 0;
                check_held(ci, host, y, C, t.window, cm, clean, p0, end);
            } else {
                for (size_t k = 0; k < m; k++)
                    for (uint32_t c = 0; c < C; c++)
                        check(close(y[(done + k) * C + c],
                                    clean[cm ? c * m + k : k * C + c], 1e-6),
                              ci, "cleaned sample", y[(done + k) * C + c],
                              clean[cm ? c * m + k : k * C + c]);
            }
            done += m;
            calls++;
            /* tables and flags of the current window and the one before */
            const uint64_t cur = done / t.window;
            for (uint64_t j = cur > 0 ? cur - 1 : 0; j <= cur; j++)
                check_tables(ci, host, dev, C, t.window, j, settled);
        }
        if (tr_cuda_norm_settle(dev, &nonfinite, &err) != TR_OK) {
            std::printf("FAIL case %zu: settle: %s\n", ci, err.message);
            g_fail++;
        }
        check(nonfinite == tr_boxcar_norm_nonfinite(host), ci, "non-finite count",
              (double)tr_boxcar_norm_nonfinite(host), (double)nonfinite);
        if (t.first_own) {
            /* the end: the held rest, window 0's own values of a short stream */
            const float *held = nullptr;
            size_t m = 0;
            tr_boxcar_norm_finish(host);
            if (tr_cuda_norm_finish(dev, (tr_boxcar_layout)t.layout, &held, &m, &err) !=
                TR_OK) {
                std::printf("FAIL case %zu: finish: %s\n", ci, err.message);
                g_fail++;
            } else {
                const size_t have = t.n < t.window ? t.n : t.window;
                check(m == have, ci, "held at the end", (double)have, (double)m);
                if (m == have)
                    check_held(ci, host, y, C, t.window,
                               t.layout == TR_BOXCAR_CHANNEL_MAJOR, held, t.n - have,
                               t.n);
                check_tables(ci, host, dev, C, t.window, 0);
            }
        }
        tr_boxcar_norm_reset(host);
        if (tr_cuda_norm_reset(dev, &err) != TR_OK) {
            std::printf("FAIL case %zu: reset: %s\n", ci, err.message);
            g_fail++;
        }
    }
    tr_cuda_norm_destroy(dev);
    tr_boxcar_norm_destroy(host);
}

/* tr_cuda_stage_place: outputs of ld positions of which z0 .. off - 1 become
 * 0 and off .. off + m - 1 the stage's m positions; the rest untouched. */
void test_place()
{
    struct pcase {
        uint32_t nchan;
        size_t z0, off, m, ld;
    };
    const pcase cases[] = {{1, 0, 3, 5, 10}, {3, 0, 4, 6, 10}, {5, 2, 2, 7, 12},
                           {4, 1, 9, 0, 9},  {70, 0, 0, 8, 8}, {2, 6, 6, 3, 11}};
    tr_error err;
    tr_cuda_stage *st = nullptr;
    if (tr_cuda_stage_create(0, 1, &st, &err) != TR_OK) {
        std::printf("FAIL place: create: %s\n", err.message);
        g_fail++;
        return;
    }
    for (const pcase &p : cases)
        for (int cm = 0; cm < 2; cm++) {
            const uint32_t C = p.nchan;
            if (tr_cuda_stage_reserve(st, p.m * C, &err) != TR_OK) {
                std::printf("FAIL place: reserve: %s\n", err.message);
                g_fail++;
                continue;
            }
            float *ss = tr_cuda_stage_snr(st); /* host memory in the emulation */
            int32_t *sw = tr_cuda_stage_width(st);
            for (size_t i = 0; i < p.m * C; i++) {
                ss[i] = 0.5f + (float)i;
                sw[i] = 7 + (int32_t)i;
            }
            std::vector<float> y(p.ld * C, -3.0f);
            std::vector<int32_t> w(p.ld * C, -3);
            const tr_boxcar_layout lay =
                cm ? TR_BOXCAR_CHANNEL_MAJOR : TR_BOXCAR_TIME_MAJOR;
            check(tr_cuda_stage_place(st, lay, C, p.z0, p.off, p.m, p.ld, y.data(),
                                      w.data(), &err) == TR_OK,
                  0, "place", 0, 0);
            for (uint32_t c = 0; c < C; c++)
                for (size_t k = 0; k < p.ld; k++) {
                    const size_t o = cm ? c * p.ld + k : k * C + c;
                    float want = -3.0f;
                    int32_t wantw = -3;
                    if (k >= p.z0 && k < p.off) want = 0.0f, wantw = 0;
                    if (k >= p.off && k < p.off + p.m) {
                        const size_t si =
                            cm ? c * p.m + (k - p.off) : (k - p.off) * C + c;
                        want = ss[si];
                        wantw = sw[si];
                    }
                    check(y[o] == want && w[o] == wantw, 0, "placed output", want, y[o]);
                }
            std::vector<float> hs(p.m * C);
            std::vector<int32_t> hw(p.m * C);
            check(tr_cuda_stage_download(st, p.m * C, hs.data(), hw.data(), &err) ==
                          TR_OK &&
                      std::equal(hs.begin(), hs.end(), ss) &&
                      std::equal(hw.begin(), hw.end(), sw),
                  0, "download", 0, 0);
        }
    std::vector<float> y(4);
    check(tr_cuda_stage_place(st, TR_BOXCAR_TIME_MAJOR, 1, 0, 3, 2, 4, y.data(), nullptr,
                              &err) == TR_ERR_INVALID,
          0, "placement past the outputs refused", 0, 0);
    /* the two sample slots: separate buffers, each holding its last copy */
    const float a[3] = {1.0f, 2.0f, 3.0f}, b[3] = {-4.0f, -5.0f, -6.0f};
    check(tr_cuda_stage_upload(st, 0, a, 3, &err) == TR_OK &&
              tr_cuda_stage_upload(st, 1, b, 3, &err) == TR_OK &&
              tr_cuda_stage_wait(st, 0, &err) == TR_OK &&
              tr_cuda_stage_wait(st, 1, &err) == TR_OK,
          0, "upload into both slots", 0, 0);
    const float *x0 = tr_cuda_stage_x(st, 0), *x1 = tr_cuda_stage_x(st, 1);
    check(x0 && x1 && x0 != x1 && std::equal(a, a + 3, x0) && std::equal(b, b + 3, x1), 0,
          "slot contents", 0, 0);
    check(tr_cuda_stage_upload(st, 2, a, 3, &err) == TR_ERR_INVALID &&
              tr_cuda_stage_wait(st, -1, &err) == TR_ERR_INVALID &&
              !tr_cuda_stage_x(st, 2),
          0, "a slot other than 0 and 1 refused", 0, 0);
    tr_cuda_stage_destroy(st);
}

} // namespace

int main()
{
    const size_t nc = sizeof kCases / sizeof kCases[0];
    for (size_t i = 0; i < nc; i++)
        run_case(i, kCases[i]);
    test_place();
    std::printf("test_boxcar_norm_cuda_host: %zu cases, %d checks, %d failures\n", nc,
                g_checks, g_fail);
    return g_fail ? 1 : 0;
}
