/*
 * Kernels of the boxcar normalisation on the device (norm_cuda.h): the
 * samples of each statistics window gathered per channel, the robust
 * summaries of a complete window per channel and level, their merge over the
 * last H windows into the values in effect, and the per-width tables the
 * search takes. The definitions are those of <transient/boxcar_norm.h> and
 * lib/core/boxcar/norm/ (robust.c, windows.c), in double; only the order of
 * the sums differs.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2; merge of (n, mean, M2) after Chan, Golub and
 * LeVeque (1983).
 *
 * The level-k values (sums of 2^k samples starting at every multiple of
 * max(1, 2^k / 8)) are summed from the window buffer, or from a call's input
 * for its whole windows (win_src), on every pass instead of from prefix sums:
 * no scratch of nchan x W doubles, and a non-finite sample (NaN in the
 * buffer, read as NaN from the input) makes its sums NaN, which are left out
 * as the CPU leaves them out.
 */
#ifndef TRANSIENT_CUDA_NORM_KERNELS_CUH
#define TRANSIENT_CUDA_NORM_KERNELS_CUH

#include "boxcar/boxcar_target.cuh"

#include <cmath>
#include <cstdint>

namespace norm_cuda
{

/* Chan et al. accumulator of the values a robust estimate kept. */
struct acc {
    double n, mean, m2;
};

/* Per-sample mean and variance in effect of one window, channel, level. */
struct lev {
    double m, v;
};

struct nparams {
    uint32_t nchan, W, H, nlev, E, total;
    uint32_t Hs;    /* summary ring slots: H + the most windows summarised at once - 1 */
    uint32_t batch; /* the most whole windows of a call summarised in one launch */
    double k;       /* reject_sigma (0: none) */
    double f2;      /* squared clip factor (1 without correction) */
    double f;       /* clip factor used by the rejection threshold (1 without) */
    uint32_t max_iter;
    double init_mean, init_sigma;
};

__device__ __forceinline__ bool finite_d(double v)
{
    return (v - v) == 0.0;
}

/* Positions [k0, k0 + m) of a call of ld positions (time-major or
 * channel-major), starting at offset off of window j: into the window buffer
 * when win is given (the positions then lie in window j; NaN for
 * non-finite) and the cleaned copy (non-finite replaced by the input mean in
 * effect of the position's window, fill ring slot (j + (off + k) / W) % E),
 * non-finite samples counted. One launch cleans a call's whole windows. */
__global__ void ingest(const float *x, int cm, int64_t ld, int64_t k0, int64_t m,
                       uint32_t nchan, uint32_t W, uint32_t off, uint64_t j, uint32_t E,
                       float *win, const float *fill, float *clean,
                       unsigned long long *count)
{
    const int64_t nv = m * (int64_t)nchan;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t k = cm ? i % m : i / nchan, c = cm ? i / m : i % nchan;
        const int64_t idx = cm ? c * ld + k0 + k : (k0 + k) * nchan + c;
        const float v = x[idx];
        const bool ok = (v - v) == 0.0f;
        if (win) win[(size_t)c * W + off + k] = ok ? v : NAN;
        if (ok) {
            clean[idx] = v;
        } else {
            const uint64_t jw = j + (uint64_t)(off + k) / W;
            clean[idx] = fill[(size_t)(jw % E) * nchan + c];
            atomicAdd(count, 1ull);
        }
    }
}

/* Three sums over the block in one reduction, the same in every thread. */
template <int NT> struct bcast {
    typename block_ops<NT>::storage tmp;
    double3 out;
    __device__ double3 sum(double3 v)
    {
        const double3 r = block_ops<NT>::d3sum(tmp, v);
        if (threadIdx.x == 0) out = r;
        __syncthreads();
        const double3 s = out;
        __syncthreads();
        return s;
    }
};

/* Where the windows to summarise are: window z starts at position k0 + z W
 * of x (ld positions per channel, channel-major when cm, else time-major).
 * The window buffer is one channel-major window (ld = W, NaN = non-finite);
 * a call's input gives whole windows, its non-finite samples read as NaN. */
struct win_src {
    const float *x;
    int cm;
    int64_t ld, k0;
    __device__ __forceinline__ const float *base(uint32_t c, uint32_t z, uint32_t nchan,
                                                 uint32_t W, int64_t *step) const
    {
        const int64_t k = k0 + (int64_t)z * W;
        *step = cm ? 1 : nchan;
        return x + (cm ? (int64_t)c * ld + k : k * nchan + c);
    }
};

/* Threads and values per thread in registers of the summaries: a window's
 * first NT * VPT values stay in registers for every pass of the rejection. */
constexpr int kSumThreads = 512;
constexpr int kSumMaxVPT = 32;

/* Robust summary (robust.c tr_norm_robust) of the level blockIdx.y values of
 * channel blockIdx.x of the first ns samples of window j0 + blockIdx.z of src
 * (ns = W, or fewer for the part of window 0 a short stream has), into ring
 * slot (j0 + blockIdx.z) % Hs of sum, at c * nlev + k. Value i of the level
 * is held by thread i % NT: the first VPT of each thread are read once into
 * registers, the rest (windows longer than NT * VPT values) are summed from
 * memory on every pass. Reading memory once instead of on each of up to
 * max_iter + 2 passes (each waiting for its loads) makes the rejection cheap. */
template <int VPT>
__global__ void __launch_bounds__(kSumThreads)
    summarise(win_src src, nparams P, uint32_t ns, uint64_t j0, acc *sum)
{
    constexpr int NT = kSumThreads;
    __shared__ bcast<NT> b;
    const uint32_t c = blockIdx.x, k = blockIdx.y;
    const uint32_t w = 1u << k, g = w >= 16 ? w / 8 : 1;
    const uint32_t nval = ns >= w ? (ns - w) / g + 1 : 0;
    int64_t step;
    const float *x = src.base(c, blockIdx.z, P.nchan, P.W, &step);
    auto value = [&](uint32_t i) {
        double s = 0.0;
        for (uint32_t t = 0; t < w; t++) {
            const float v = x[(int64_t)(i * g + t) * step];
            s += (v - v) == 0.0f ? (double)v : (double)NAN;
        }
        return s; /* NaN when a sample was not finite */
    };
    double r[VPT]; /* NaN: not finite, or no value */
    if (w == 1) {
#pragma unroll
        for (int q = 0; q < VPT; q++) {
            const uint32_t i = threadIdx.x + (uint32_t)q * NT;
            const float v = i < nval ? x[(int64_t)i * step] : NAN;
            r[q] = (v - v) == 0.0f ? (double)v : (double)NAN;
        }
    } else {
#pragma unroll
        for (int q = 0; q < VPT; q++) {
            const uint32_t i = threadIdx.x + (uint32_t)q * NT;
            r[q] = i < nval ? value(i) : (double)NAN;
        }
    }
    /* f(v) for every value of this thread, NaN included */
    auto each = [&](auto f) {
#pragma unroll
        for (int q = 0; q < VPT; q++)
            f(r[q]);
        for (uint32_t i = threadIdx.x + (uint32_t)(VPT * NT); i < nval; i += NT)
            f(value(i));
    };
    double3 t = make_double3(0.0, 0.0, 0.0);
    each([&](double v) {
        if (v == v) {
            t.x += v;
            t.y += 1.0;
        }
    });
    t = b.sum(t);
    const double n = t.y;
    acc out{0.0, 0.0, 0.0};
    if (n > 0.0) {
        double mean = t.x / n, m2 = 0.0;
        each([&](double v) {
            if (v == v) m2 += (v - mean) * (v - mean);
        });
        m2 = b.sum(make_double3(m2, 0.0, 0.0)).x;
        double m = n;
        for (uint32_t it = 0; P.k > 0.0 && it < P.max_iter; it++) {
            const double sigma = sqrt(m2 / m) / P.f;
            const double lo = mean - P.k * sigma, hi = mean + P.k * sigma;
            double3 d =
                make_double3(0.0, 0.0, 0.0); /* sum of v - mean, of squares, count */
            each([&](double v) {
                if (v >= lo && v <= hi) {
                    const double e = v - mean;
                    d.x += e;
                    d.y += e * e;
                    d.z += 1.0;
                }
            });
            d = b.sum(d);
            const double cc = d.z;
            if (cc == 0.0) break;
            const bool done = cc == m;
            mean += d.x / cc;
            m2 = d.y - d.x * (d.x / cc);
            if (m2 < 0.0) m2 = 0.0;
            m = cc;
            if (done) break;
        }
        out = acc{m, mean, m2};
    }
    if (threadIdx.x == 0)
        sum[((size_t)((j0 + blockIdx.z) % P.Hs) * P.nchan + c) * P.nlev + k] = out;
}

/* The values in effect for window j + blockIdx.y (windows.c effect_from):
 * merge of the summaries of windows j1-1 down to j1-nh per channel and level
 * (j1 = j + blockIdx.y, nh = min(hcap, j1); hcap = H: the last H windows;
 * j = 0, j1 = hcap = 1: window 0's own; hcap = 0: the warm-up values), into
 * ring slot j % E with the ready flag and the fill value (mean per sample).
 * The windows of one launch are independent: each reads only summaries. */
__global__ void effect(const acc *sum, nparams P, uint64_t j, uint64_t j1, uint32_t hcap,
                       lev *eff, uint8_t *ready, float *fill)
{
    const uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= P.nchan) return;
    j += blockIdx.y;
    j1 += blockIdx.y;
    const uint32_t nh = (uint32_t)(j1 < hcap ? j1 : hcap);
    const size_t es = (size_t)(j % P.E);
    lev *e = eff + (es * P.nchan + c) * P.nlev;
    bool ok = false;
    for (uint32_t k = 0; k < P.nlev; k++) {
        acc a{0.0, 0.0, 0.0};
        for (uint32_t h = 1; h <= nh; h++) {
            const acc &b = sum[((size_t)((j1 - h) % P.Hs) * P.nchan + c) * P.nlev + k];
            if (b.n <= 0.0) continue;
            if (a.n <= 0.0) {
                a = b;
                continue;
            }
            const double n = a.n + b.n, delta = b.mean - a.mean;
            a.mean += delta * (b.n / n);
            a.m2 += b.m2 + delta * delta * (a.n * b.n / n);
            a.n = n;
        }
        const double w = (double)((uint64_t)1 << k);
        const double var = a.n > 0.0 ? a.m2 / a.n / P.f2 : 0.0;
        if (a.n >= 2.0 && var > 0.0 && finite_d(var) && finite_d(a.mean)) {
            e[k] = lev{a.mean / w, var / w};
            if (k == 0) ok = true;
        } else if (k == 0) {
            e[k] = lev{P.init_mean, P.init_sigma * P.init_sigma};
        } else {
            e[k] = e[k - 1];
        }
        if (k > 0 && !ok) e[k] = e[0];
    }
    ready[es * P.nchan + c] = ok ? 1 : 0;
    fill[es * P.nchan + c] = (float)e[0].m;
}

/* Tables of windows first .. first + nwin - 1 for the search (windows.c
 * interp): mu[(jj * nchan + c) * total + i] = L m(t), sigma = sqrt(L v(t)). */
__global__ void tables(const lev *eff, nparams P, uint64_t first, uint32_t nwin,
                       const uint32_t *widths, float *mu, float *sigma)
{
    const int64_t nt = (int64_t)nwin * P.nchan * P.total;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nt;
         i += (int64_t)gridDim.x * blockDim.x) {
        const uint32_t kk = (uint32_t)(i % P.total);
        const uint32_t c = (uint32_t)((i / P.total) % P.nchan);
        const uint64_t jj = (uint64_t)(i / ((int64_t)P.total * P.nchan));
        const lev *e = eff + ((size_t)((first + jj) % P.E) * P.nchan + c) * P.nlev;
        const uint32_t L = widths[kk];
        uint32_t k = 0;
        while (k + 1 < 32 && ((uint64_t)2 << k) <= L)
            k++;
        double m, v;
        if (k + 1 >= P.nlev) {
            m = e[P.nlev - 1].m;
            v = e[P.nlev - 1].v;
        } else {
            const double f = log2((double)L) - (double)k;
            m = e[k].m + f * (e[k + 1].m - e[k].m);
            v = e[k].v + f * (e[k + 1].v - e[k].v);
        }
        mu[i] = (float)((double)L * m);
        sigma[i] = (float)sqrt((double)L * v);
    }
}

/* Element i of m positions per channel in a call of ld positions: its
 * position k and channel c, and its index in the layout. */
__device__ __forceinline__ void layout_at(int64_t i, int cm, int64_t m, int64_t ld,
                                          uint32_t nchan, int64_t *k, int64_t *c,
                                          int64_t *idx)
{
    *k = cm ? i % m : i / nchan;
    *c = cm ? i / m : i % nchan;
    *idx = cm ? *c * ld + *k : *k * nchan + *c;
}

/* The delay line of window 0 (first_own), out of it: the positions p0 .. p0 +
 * m - 1 (p0 >= 0) of a call whose cleaned samples clean (ld positions) start
 * at position pos, W positions behind, into out (m positions): from the ring
 * (time-major, position p at (p % W) * nchan) when p < pos, else from clean.
 * Window 0's NaN (its non-finite samples) become fill0[c], window 0's own
 * mean (boxcar.c release_first). */
__global__ void hold_out(const float *clean, int cm, int64_t ld, uint64_t pos,
                         const float *ring, uint32_t W, uint32_t nchan, uint64_t p0,
                         int64_t m, const float *fill0, float *out)
{
    const int64_t nv = m * (int64_t)nchan;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t k, c, o;
        layout_at(i, cm, m, m, nchan, &k, &c, &o);
        const uint64_t p = p0 + (uint64_t)k;
        float v;
        if (p < pos) {
            v = ring[(size_t)(p % W) * nchan + c];
        } else {
            const int64_t kk = (int64_t)(p - pos);
            v = clean[cm ? c * ld + kk : kk * nchan + c];
        }
        if (p < W && v != v) v = fill0[c];
        out[o] = v;
    }
}

/* Into the delay line: the last m positions of a call's cleaned samples clean
 * (ld positions, the first at position pos). */
__global__ void hold_in(const float *clean, int cm, int64_t ld, uint64_t pos, int64_t m,
                        uint32_t W, uint32_t nchan, float *ring)
{
    const int64_t nv = m * (int64_t)nchan, k0 = ld - m;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
         i += (int64_t)gridDim.x * blockDim.x) {
        int64_t k, c, idx;
        layout_at(i, cm, m, ld, nchan, &k, &c, &idx);
        idx += cm ? k0 : k0 * nchan;
        ring[(size_t)((pos + (uint64_t)(k0 + k)) % W) * nchan + c] = clean[idx];
    }
}

} // namespace norm_cuda

#endif /* TRANSIENT_CUDA_NORM_KERNELS_CUH */
