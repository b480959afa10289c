/*
 * The CUDA boxcar search (cuda/boxcar/: kernels, launches and the streaming
 * context of cuda/boxcar/boxcar_cuda.h) compiled for the host through
 * cuda/boxcar/boxcar_emu.h and checked against the CPU reference variant, so that the
 * FAST and PAPER designs are tested where no GPU is present: random data with
 * pulses and NaN/Inf, several channels, random chunkings (sizes 1..3 at the
 * start), time-major and channel-major buffers (both also through the
 * device-pointer path, served from host memory by the emulation), flush.
 * FAST's chunked run may have the sparse stages' own pass switched
 * off (tr_cuda_boxcar_set_split) and 16 positions per thread
 * (tr_cuda_boxcar_set_positions), which must give the same bits. S/N within
 * TR_BOXCAR_FAST_TOL(L_end); widths equal, or evaluated at that position and
 * as good within the tolerance; the same bits for every chunking and layout.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 * Argument: "quick" runs a shorter list (used by ctest); a number runs that
 * configuration only; none runs them all (about two minutes).
 */
#define TR_BOXCAR_HOST_EMU 1
#include "common/core_util.h" /* tr_fail, tr_clear (common/cuda_check.h on CUDA) */

#include "boxcar/boxcar_context.cu"
#include "boxcar/boxcar_launch.cu"
#include "boxcar/boxcar_norm_tables.cu"

#include <transient/boxcar.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace
{

int g_fail = 0, g_checks = 0;

#define CHECKH(cond, ...)                                                                \
    do {                                                                                 \
        ++g_checks;                                                                      \
        if (!(cond)) {                                                                   \
            ++g_fail;                                                                    \
            std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);                  \
            std::printf(__VA_ARGS__);                                                    \
            std::printf("\n");                                                           \
        }                                                                                \
    } while (0)

tr_boxcar_config make(tr_boxcar_algorithm alg, uint32_t a, uint32_t layers, uint32_t maxw)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = alg;
    c.max_width = maxw;
    if (alg == TR_BOXCAR_BOXDIT) {
        c.widths[0] = a;
        c.nwidths = 1;
    } else if (alg == TR_BOXCAR_IGRID) {
        c.depth = a;
        c.layers = layers;
    }
    return c;
}

/* The reference through the public API: one call and flush. */
bool reference(tr_boxcar_config c, const std::vector<float> &x, size_t n, double mean,
               double sigma, std::vector<float> &y, std::vector<int32_t> &w)
{
    c.backend = TR_BACKEND_CPU;
    c.variant = TR_VARIANT_REFERENCE;
    c.norm.mode = TR_BOXCAR_NORM_FIXED;
    c.norm.fixed_mean = mean;
    c.norm.fixed_sigma = sigma;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&c, &err);
    if (!q) {
        std::printf("reference create: %s\n", err.message);
        return false;
    }
    const uint32_t C = c.nchan, L = tr_boxcar_latency(q);
    y.assign((n + L) * C, 0.0f);
    w.assign((n + L) * C, 0);
    bool ok = tr_boxcar_process(q, x.data(), n, y.data(), w.data()) == TR_OK &&
              tr_boxcar_flush(q, y.data() + n * C, w.data() + n * C) == TR_OK;
    tr_boxcar_destroy(q);
    return ok;
}

/* The emulated CUDA context: random chunks, then flush; time-major outputs. */
bool emulated(const tr_boxcar_plan *plan, uint32_t C, tr_variant v, size_t batch,
              tr_boxcar_layout layout, const std::vector<float> &x, size_t n, double mean,
              double sigma, size_t small, size_t max_chunk, std::mt19937_64 &rng,
              std::vector<float> &y, std::vector<int32_t> &w, uint64_t *nonfinite,
              int knobs = 0, bool on_device = false)
{
    tr_error err;
    tr_cuda_boxcar *ctx = nullptr;
    if (tr_cuda_boxcar_create(0, plan, C, v, batch, &ctx, &err) != TR_OK) {
        std::printf("create: %s\n", err.message);
        return false;
    }
    /* knobs: 1 = sparse stages' own pass off, 2 = 16 positions per thread */
    if (((knobs & 1) && tr_cuda_boxcar_set_split(ctx, 0, &err) != TR_OK) ||
        ((knobs & 2) && tr_cuda_boxcar_set_positions(ctx, 16, &err) != TR_OK)) {
        std::printf("FAST knobs: %s\n", err.message);
        tr_cuda_boxcar_destroy(ctx);
        return false;
    }
    std::vector<double> mu(C, mean), sg(C, sigma);
    std::vector<float> fill(C, (float)mean);
    bool ok = tr_cuda_boxcar_set_norm_white(ctx, mu.data(), sg.data(), fill.data(),
                                            &err) == TR_OK;
    const uint32_t L = tr_boxcar_plan_latency(plan);
    y.assign((n + L) * C, 0.0f);
    w.assign((n + L) * C, 0);
    std::vector<float> bx, by;
    std::vector<int32_t> bw;
    size_t done = 0;
    while (ok && done < n) {
        size_t m = n - done;
        if (done < small)
            m = 1 + rng() % 3;
        else if (max_chunk)
            m = rng() % (max_chunk + 1);
        if (m > n - done) m = n - done;
        if (layout == TR_BOXCAR_TIME_MAJOR) {
            ok = tr_cuda_boxcar_run(ctx, x.data() + done * C, m, layout, on_device,
                                    y.data() + done * C, w.data() + done * C, nonfinite,
                                    &err) == TR_OK;
        } else {
            bx.resize(m * C);
            by.resize(m * C);
            bw.resize(m * C);
            for (size_t k = 0; k < m; k++)
                for (uint32_t c = 0; c < C; c++)
                    bx[c * m + k] = x[(done + k) * C + c];
            ok = tr_cuda_boxcar_run(ctx, bx.data(), m, layout, on_device, by.data(),
                                    bw.data(), nonfinite, &err) == TR_OK;
            for (size_t k = 0; k < m; k++)
                for (uint32_t c = 0; c < C; c++) {
                    y[(done + k) * C + c] = by[c * m + k];
                    w[(done + k) * C + c] = bw[c * m + k];
                }
        }
        done += m;
    }
    if (ok && L > 0)
        ok = tr_cuda_boxcar_flush(ctx, TR_BOXCAR_TIME_MAJOR, 0, y.data() + n * C,
                                  w.data() + n * C, &err) == TR_OK;
    if (!ok) std::printf("run: %s\n", err.message);
    tr_cuda_boxcar_destroy(ctx);
    return ok;
}

bool evaluated(const tr_boxcar_plan *plan, size_t p, uint32_t L)
{
    for (uint32_t i = 0; i < tr_boxcar_plan_stages(plan); i++) {
        const tr_boxcar_stage *s = tr_boxcar_plan_stage(plan, i);
        if (p % s->stride || L < s->width_first) continue;
        if ((L - s->width_first) % s->width_step) continue;
        if ((L - s->width_first) / s->width_step < s->nwidths) return true;
    }
    return false;
}

double snr_of(const std::vector<float> &x, uint32_t C, uint32_t c, size_t p, uint32_t L,
              double mean, double sigma)
{
    double acc = 0.0;
    for (uint32_t j = 0; j < L; j++) {
        const float v = x[(p + j) * C + c];
        acc += std::isfinite(v) ? (double)v : mean;
    }
    return (acc - L * mean) / (std::sqrt((double)L) * sigma);
}

void one(const tr_boxcar_config &c0, tr_variant v, std::mt19937_64 &rng, size_t nmax)
{
    tr_boxcar_config c = c0;
    c.nchan = 1 + rng() % 3;
    const uint32_t C = c.nchan;
    tr_error err;
    tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
    if (!plan) {
        CHECKH(false, "plan: %s", err.message);
        return;
    }
    char name[128];
    std::snprintf(name, sizeof name, "%s %s max %u nchan %u", tr_variant_name(v),
                  tr_boxcar_algorithm_name(c.algorithm), c.max_width, C);
    const uint32_t L = tr_boxcar_plan_latency(plan);
    const size_t n = 500 + rng() % nmax;
    const double mean = 3.0, sigma = 2.0;
    std::normal_distribution<double> g(mean, sigma);
    std::vector<float> x(n * C);
    for (auto &v2 : x)
        v2 = (float)g(rng);
    for (int k = 0; k < 12; k++) { /* pulses */
        const uint32_t ch = rng() % C, wd = 1 + rng() % tr_boxcar_plan_lend(plan);
        const size_t at = rng() % n;
        const double amp = sigma * (3 + rng() % 20) / std::sqrt((double)wd);
        for (size_t j = at; j < at + wd && j < n; j++)
            x[j * C + ch] += (float)amp;
    }
    for (int k = 0; k < 4; k++)
        x[rng() % x.size()] = k % 2 ? NAN : INFINITY;
    uint64_t nf_expect = 0;
    for (float v2 : x)
        nf_expect += !std::isfinite(v2);
    std::vector<float> yr, y1, y2;
    std::vector<int32_t> wr, w1, w2;
    if (!reference(c, x, n, mean, sigma, yr, wr)) {
        CHECKH(false, "%s: reference failed", name);
        tr_boxcar_plan_destroy(plan);
        return;
    }
    uint64_t nf1 = 0, nf2 = 0;
    const size_t batch = 300 + rng() % 5000;
    /* time-major: host buffers, or device buffers (one channel searched in
     * place, several transposed) */
    const bool ok1 = emulated(plan, C, v, batch, TR_BOXCAR_TIME_MAJOR, x, n, mean, sigma,
                              0, 0, rng, y1, w1, &nf1, 0, n % 2 == 0);
    CHECKH(ok1, "%s: run", name);
    const bool ok2 =
        emulated(plan, C, v, 200 + rng() % 3000, TR_BOXCAR_CHANNEL_MAJOR, x, n, mean,
                 sigma, 30, 2 * L + 200, rng, y2, w2, &nf2,
                 v == TR_VARIANT_FAST ? 1 + (int)(rng() % 3) : 0, rng() % 2 == 0);
    CHECKH(ok2, "%s: chunked run", name);
    if (ok1) {
        const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_plan_lend(plan));
        size_t bad = 0, badw = 0, wdiff = 0;
        double worst = 0.0;
        for (size_t i = 0; i < yr.size(); i++) {
            const double rel =
                std::fabs((double)y1[i] - yr[i]) / (1.0 + std::fabs(yr[i]));
            if (!(rel <= worst)) worst = rel;
            if (!(rel <= tol)) {
                if (bad++ < 4)
                    std::printf(
                        "  %s: output %zu (position %lld ch %zu): %.7g vs reference "
                        "%.7g, widths %d %d\n",
                        name, i / C, (long long)(i / C) - L, i % C, y1[i], yr[i], w1[i],
                        wr[i]);
            }
            if (w1[i] != wr[i]) {
                wdiff++;
                const size_t k = i / C;
                const uint32_t ch = (uint32_t)(i % C);
                bool good = k >= L && w1[i] > 0 &&
                            evaluated(plan, k - L, (uint32_t)w1[i]) &&
                            k - L + (size_t)w1[i] <= n;
                if (good) {
                    const double alt =
                        snr_of(x, C, ch, k - L, (uint32_t)w1[i], mean, sigma);
                    good = std::fabs(alt - yr[i]) <= 2 * tol * (1 + std::fabs(yr[i]));
                }
                if (!good && badw++ < 4)
                    std::printf(
                        "  %s: output %zu ch %u: width %d vs reference %d (%.7g)\n", name,
                        k, ch, w1[i], wr[i], yr[i]);
            }
        }
        CHECKH(bad == 0 && badw == 0,
               "%s: %zu S/N (worst %.3g, tol %.3g) and %zu widths wrong", name, bad,
               worst, tol, badw);
        CHECKH(nf1 == nf_expect, "%s: %llu non-finite counted, expected %llu", name,
               (unsigned long long)nf1, (unsigned long long)nf_expect);
        std::printf("%-40s n %6zu: worst %.2e (tol %.2e), %zu width differences\n", name,
                    n, worst, tol, wdiff);
        if (ok2) {
            size_t diff = 0;
            for (size_t i = 0; i < y1.size(); i++)
                diff += std::memcmp(&y1[i], &y2[i], 4) != 0 || w1[i] != w2[i];
            CHECKH(diff == 0, "%s: %zu outputs depend on chunking or layout", name, diff);
            CHECKH(nf2 == nf_expect, "%s: chunked run counted %llu non-finite", name,
                   (unsigned long long)nf2);
        }
    }
    tr_boxcar_plan_destroy(plan);
}

/*
 * Per-window tables (tr_cuda_boxcar_set_norm_windows, the host path of
 * measured statistics): one run per random chunk with the tables of every
 * window its outputs touch (plus a spare window on either side) must give the
 * same bits as runs cut at the window boundaries with one table each
 * (tr_cuda_boxcar_set_norm), whose agreement with the reference the tests
 * above establish.
 */
void windows(std::mt19937_64 &rng, size_t small, size_t max_chunk)
{
    tr_boxcar_config c = tr_boxcar_config_default(); /* 32,16,16,16,8 */
    c.max_width = 256;
    c.nchan = 1 + rng() % 3;
    const uint32_t C = c.nchan;
    tr_error err;
    tr_boxcar_plan *plan = tr_boxcar_plan_create(&c, &err);
    if (!plan) {
        CHECKH(false, "plan: %s", err.message);
        return;
    }
    const uint32_t L = tr_boxcar_plan_latency(plan);
    const uint32_t total = tr_boxcar_plan_total_widths(plan);
    std::vector<uint32_t> wl(total);
    tr_boxcar_plan_list(plan, wl.data(), nullptr, total);
    tr_cuda_boxcar *a = nullptr, *b = nullptr;
    if (tr_cuda_boxcar_create(0, plan, C, TR_VARIANT_FAST, 300 + rng() % 3000, &a,
                              &err) != TR_OK ||
        tr_cuda_boxcar_create(0, plan, C, TR_VARIANT_FAST, 300 + rng() % 3000, &b,
                              &err) != TR_OK) {
        CHECKH(false, "create: %s", err.message);
        tr_cuda_boxcar_destroy(a);
        tr_cuda_boxcar_destroy(b);
        tr_boxcar_plan_destroy(plan);
        return;
    }
    const uint32_t W = tr_cuda_boxcar_table_granule(a) * (1 + (uint32_t)(rng() % 2));
    const size_t n = 3000 + rng() % 5000, nwin = (n + W - 1) / W + 2;
    /* window j: per channel mean 3 + j/8 and sigma 1 + j/16 */
    std::vector<float> mu(nwin * C * total), sg(nwin * C * total);
    for (size_t j = 0; j < nwin; j++)
        for (uint32_t ch = 0; ch < C; ch++)
            for (uint32_t k = 0; k < total; k++) {
                const double m = 3.0 + 0.125 * (double)j + ch, s = 1.0 + j / 16.0;
                mu[(j * C + ch) * total + k] = (float)(wl[k] * m);
                sg[(j * C + ch) * total + k] = (float)(std::sqrt((double)wl[k]) * s);
            }
    std::normal_distribution<double> g(3.0, 2.0);
    std::vector<float> x(n * C);
    for (auto &v : x)
        v = (float)g(rng);
    for (int k = 0; k < 20; k++) {
        const size_t at = rng() % n;
        for (size_t j = at; j < at + 1 + rng() % 200 && j < n; j++)
            x[j * C + rng() % C] += 4.0f;
    }
    std::vector<float> ya((n + L) * C), yb((n + L) * C);
    std::vector<int32_t> wa((n + L) * C), wb((n + L) * C);
    auto win = [&](int64_t p) { return (size_t)(p < 0 ? 0 : p / W); };
    bool ok = true;
    size_t done = 0, calls = 0, spans = 0;
    auto runs = [&](size_t m, bool flush) {
        const int64_t first = (int64_t)done - L, last = first + (int64_t)m - 1;
        /* a: one run with the tables of windows w0 - 1 .. w1 + 1 */
        const size_t w0 = win(first), w1 = win(last);
        const size_t lo = w0 > 0 ? w0 - 1 : 0, hi = std::min(w1 + 1, nwin - 1);
        spans += w1 > w0;
        ok = ok && tr_cuda_boxcar_set_norm_windows(
                       a, lo, (uint32_t)(hi - lo + 1), W, mu.data() + lo * C * total,
                       sg.data() + lo * C * total, &err) == TR_OK;
        if (flush)
            ok = ok &&
                 tr_cuda_boxcar_flush(a, TR_BOXCAR_TIME_MAJOR, 0, ya.data() + done * C,
                                      wa.data() + done * C, &err) == TR_OK;
        else
            ok = ok && tr_cuda_boxcar_run(a, x.data() + done * C, m, TR_BOXCAR_TIME_MAJOR,
                                          0, ya.data() + done * C, wa.data() + done * C,
                                          nullptr, &err) == TR_OK;
        /* b: cut at the window boundaries (flush: once per window, keep its part) */
        std::vector<float> fy(flush ? (size_t)L * C : 0);
        std::vector<int32_t> fw(flush ? (size_t)L * C : 0);
        for (size_t k = 0; ok && k < m;) {
            const int64_t p = first + (int64_t)k;
            const size_t wj = win(p);
            size_t len = m - k;
            if (last >= 0 && win(last) != wj) len = (size_t)((int64_t)(wj + 1) * W - p);
            ok = tr_cuda_boxcar_set_norm(b, mu.data() + wj * C * total,
                                         sg.data() + wj * C * total, nullptr,
                                         &err) == TR_OK;
            if (flush) {
                ok = ok && tr_cuda_boxcar_flush(b, TR_BOXCAR_TIME_MAJOR, 0, fy.data(),
                                                fw.data(), &err) == TR_OK;
                for (size_t i = k * C; ok && i < (k + len) * C; i++) {
                    yb[done * C + i] = fy[i];
                    wb[done * C + i] = fw[i];
                }
            } else {
                ok = ok && tr_cuda_boxcar_run(
                               b, x.data() + (done + k) * C, len, TR_BOXCAR_TIME_MAJOR, 0,
                               yb.data() + (done + k) * C, wb.data() + (done + k) * C,
                               nullptr, &err) == TR_OK;
            }
            k += len;
        }
        calls++;
    };
    while (ok && done < n) {
        size_t m = n - done;
        if (done < small)
            m = 1 + rng() % 3;
        else if (max_chunk)
            m = rng() % (max_chunk + 1);
        if (m > n - done) m = n - done;
        if (m) runs(m, false);
        done += m;
    }
    if (ok) runs(L, true);
    CHECKH(ok, "windows: %s", err.message);
    size_t diff = 0;
    for (size_t i = 0; ok && i < ya.size(); i++)
        diff += std::memcmp(&ya[i], &yb[i], 4) != 0 || wa[i] != wb[i];
    CHECKH(ok && diff == 0, "windows: %zu outputs differ from the per-window runs", diff);
    CHECKH(spans > 0 || calls < 3, "windows: no call spanned two windows");
    std::printf("per-window tables, W %u nchan %u n %zu: %zu calls (%zu span windows), "
                "%zu differences\n",
                W, C, n, calls, spans, diff);
    tr_cuda_boxcar_destroy(a);
    tr_cuda_boxcar_destroy(b);
    tr_boxcar_plan_destroy(plan);
}

} // namespace

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && std::string(argv[1]) == "quick";
    std::mt19937_64 rng(2026);
    std::vector<tr_boxcar_config> cfgs = {
        make(TR_BOXCAR_BOXDIT, 32, 0, 1500), make(TR_BOXCAR_IGRID, 1, 0, 1000),
        make(TR_BOXCAR_BOXDIT, 8, 0, 600),   make(TR_BOXCAR_IGRID, 2, 0, 900),
        make(TR_BOXCAR_IGRID, 3, 0, 700),    make(TR_BOXCAR_IDEAL, 0, 0, 37),
        make(TR_BOXCAR_BOXDIT, 6, 0, 300),   make(TR_BOXCAR_IGRID, 2, 2, 500),
        make(TR_BOXCAR_IGRID, 1, 16, 700),   make(TR_BOXCAR_IDEAL, 0, 0, 1),
        make(TR_BOXCAR_IGRID, 3, 0, 3),      make(TR_BOXCAR_BOXDIT, 16, 0, 5000),
        make(TR_BOXCAR_BOXDIT, 32, 0, 8192), make(TR_BOXCAR_IGRID, 1, 0, 8192)};
    {
        tr_boxcar_config aa = tr_boxcar_config_default();
        aa.max_width = 2000;
        cfgs.push_back(aa);
    }
    const size_t ncfg = quick ? 3 : cfgs.size();
    const long only =
        argc > 1 && !quick ? std::atol(argv[1]) : -1; /* one configuration */
    for (size_t k = 0; k < ncfg; k++)
        if (only < 0 || (size_t)only == k)
            for (tr_variant v : {TR_VARIANT_FAST, TR_VARIANT_PAPER})
                one(cfgs[k], v, rng, quick ? 3000 : (k >= 11 ? 20000 : 6000));
    if (only < 0) {
        windows(rng, 0, 0);     /* one call */
        windows(rng, 20, 3000); /* chunk sizes 1..3, then long calls */
        windows(rng, 0, 700);   /* calls shorter than a window */
    }
    std::printf("test_boxcar_cuda_host: %d checks, %d failed\n", g_checks, g_fail);
    return g_fail ? 1 : 0;
}
