/*
 * SPIIR filter bank on CUDA: the context of cuda/spiir/spiir_cuda.h and two kernel
 * families.
 *
 * Data on the device:
 *  - the delay line: [max_delay samples of history | the batch], cleaned
 *    (non-finite values are zero), rebuilt for every batch by line_kernel from
 *    the previous line and the new samples (two buffers, ping-pong), so the
 *    output does not depend on how the stream is cut into calls or batches.
 *    The line is stored as S = 4 / C shifted copies (C = floats per sample):
 *    copy s holds sample i + s at position i. Any 8 consecutive samples then
 *    start on a 16-byte boundary of one copy and load as 16-byte vectors,
 *    whatever the filter's delay.
 *  - the filters: FAST keeps each template's filters sorted by delay (lanes
 *    that run side by side read nearby samples), padded with zero filters
 *    (a1 = b0 = 0: they contribute exact zeros); PAPER keeps the bank's order,
 *    padded to the paper's thread counts. Coefficients are rounded to float
 *    once; states y are complex float.
 *
 * PAPER (section 3.1 of Guo et al.): one thread per filter looping over the
 * batch, state in registers, input through the read-only cache (__ldg), a
 * warp-shuffle sum per sample. Templates of <= 32 filters: the warp-based
 * kernel (power-of-two lanes per template, several templates per warp, blocks
 * of 256 threads). Larger templates: the block-based kernel (one template per
 * block, a multiple of 32 threads) whose warps add their partial sums to the
 * output with atomicAdd (the paper's DA method), so its rounding depends on
 * the order of the atomics.
 *
 * FAST: each thread owns F filters of one template and runs them over time
 * blocks of 8 samples in registers; the F recurrences are independent chains
 * (instruction-level parallelism hides the FMA latency) and their outputs are
 * added per sample in registers. The P threads of a template then combine
 * their 8 partial sums per time block by a reduce-scatter over warp shuffles
 * (each level halves the values a lane holds, so the shuffle count per block
 * is 16 - 16 / P rather than 16 log2 P) and, for P > 32, across warps through
 * shared memory in warp order. Every sum has a fixed order: the same input
 * gives the same bits for any chunking.
 *
 * FAST, small banks (fewer than 4 warps per SM with the shape above, such as
 * 4096 templates of 8 filters or the top levels of a multirate bank): time is
 * cut as well, at anchors every L = 256 samples of the stream. The state of
 * each filter at the anchors follows Y(b + L) = a1^L Y(b) + E(b) (a1^L in
 * complex double, rounded once; E(b) = b0 H, H the segment's samples through
 * H = a1 H + x from zero): one kernel computes every E in parallel, one runs
 * that short recurrence over the batch's anchors in order, and the FAST
 * kernel runs all segments of the batch at once, each from its anchor state
 * (a batch that starts between anchors starts at the anchor before it and
 * writes from its first sample on). The work per update grows from 8 to
 * about 12 operations, but the parallelism by the number of segments. The
 * anchors are absolute positions, so the output is still the same bits for
 * any chunking.
 */
#include "common/cuda_check.h"
#include "common/host_stager.cuh"
#include "spiir/spiir_cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace
{

constexpr unsigned kFull = 0xffffffffu;
constexpr int kT = 8;           /* samples per FAST time block */
constexpr int kSmallBlock = 32; /* FAST block size when P <= 32: one warp, so that
                                   small grids still reach every scheduler */
constexpr int kMaxP = 256;      /* FAST threads per template, at most */
constexpr int kPaperWarpBlock = 256;
constexpr int kPaperMaxBlock = 1024; /* the block-based kernel: filters per template */
constexpr int kSeg = 256;            /* segmented time: anchor spacing (power of 2) */
constexpr size_t kSegBytes = (size_t)256 << 20; /* segment states, at most */

/* ---- kernels ------------------------------------------------------------- */

/* Batch of n new samples x (C floats each) into the line `dst` (S copies of
 * lc samples): history from the previous line `src` (copy 0, whose batch had
 * n_prev samples), non-finite values zeroed and counted once each. */
template <int C>
__global__ void line_kernel(const float *__restrict__ src, float *__restrict__ dst,
                            const float *__restrict__ x, int64_t n, int64_t n_prev,
                            int64_t hist, int64_t lc, unsigned long long *nonfinite)
{
    constexpr int S = 4 / C;
    const int64_t total = S * lc;
    unsigned bad = 0;
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (int64_t)gridDim.x * blockDim.x) {
        const int64_t s = e / lc, i = e - s * lc, m = i + s; /* sample m of the line */
#pragma unroll
        for (int c = 0; c < C; c++) {
            float v = 0.0f;
            if (m < hist) {
                v = src[(n_prev + m) * C + c];
            } else if (m - hist < n) {
                const float r = x[(m - hist) * C + c];
                v = (r - r) == 0.0f ? r : 0.0f; /* tr_spiir_clean */
                bad += s == 0 && v != r;
            }
            dst[e * C + c] = v;
        }
    }
    if (bad) atomicAdd(nonfinite, (unsigned long long)bad);
}

/* 8 consecutive samples from a 16-byte aligned address of the line. */
template <int C>
__device__ __forceinline__ void load8(const float *p, float (&xr)[kT], float (&xi)[kT])
{
    const float4 *q = reinterpret_cast<const float4 *>(p);
    if constexpr (C == 1) {
        const float4 u = __ldg(q), v = __ldg(q + 1);
        xr[0] = u.x, xr[1] = u.y, xr[2] = u.z, xr[3] = u.w;
        xr[4] = v.x, xr[5] = v.y, xr[6] = v.z, xr[7] = v.w;
    } else {
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const float4 u = __ldg(q + h);
            xr[2 * h] = u.x, xi[2 * h] = u.y, xr[2 * h + 1] = u.z, xi[2 * h + 1] = u.w;
        }
    }
}

/* One filter step y = a1 y + b0 x with explicit FMAs (the target is compiled
 * with --fmad=false, so nothing else is contracted): 6 operations for real x.
 * kLo: a1 = hi + lo as a float pair (see needs_split_poles), 4 more. */
template <int C, bool kLo>
__device__ __forceinline__ void step(float ar, float ai, float lr, float li, float br,
                                     float bi, float xr, float xi, float &yr, float &yi)
{
    float bxr = br * xr, bxi = bi * xr;
    if constexpr (C == 2) {
        bxr = __fmaf_rn(-bi, xi, bxr);
        bxi = __fmaf_rn(br, xi, bxi);
    }
    if constexpr (kLo) { /* y = hi y + (lo y + b0 x) */
        bxr = __fmaf_rn(lr, yr, __fmaf_rn(-li, yi, bxr));
        bxi = __fmaf_rn(lr, yi, __fmaf_rn(li, yr, bxi));
    }
    const float nr = __fmaf_rn(ar, yr, __fmaf_rn(-ai, yi, bxr));
    const float ni = __fmaf_rn(ar, yi, __fmaf_rn(ai, yr, bxi));
    yr = nr;
    yi = ni;
}

struct fast_args {
    const float4 *coef; /* (a1_re, a1_im, b0_re, b0_im) per slot */
    const float2 *lo;   /* a1 - (float)a1 per slot, when the kernel uses it */
    const int32_t *off; /* line index (copy 0) of the slot's sample 0: hist - delay */
    float2 *state;      /* y per slot (segmented: y at the last anchor) */
    const float *line;  /* S shifted copies */
    int n;              /* samples in this batch */
    uint32_t nt;        /* templates */
    int rounds;         /* filter groups of F * P per template, run one after another */
    float scale;        /* 2 dt */
    float2 *out;        /* out[k * nt + t] */
    int64_t lc;         /* samples per line copy */
    int hist;           /* line index of the batch's sample 0 for delay 0 */
    int skip;           /* rows of out before this one are not written */
    /* Segmented time (seg > 0): block row s runs batch samples [kbeg0 + s seg,
     * + seg) from the state yseg[s * slots + q] (seg_scan_kernel). */
    int seg, kbeg0;
    const float2 *yseg;
    size_t slots;
};

/* Float offset in the line of sample k of a slot whose sample 0 is at line
 * index o0, in the copy where it starts a 16-byte vector. */
template <int C>
__device__ __forceinline__ int32_t line_off(int64_t lc, int32_t o0, int k)
{
    constexpr int S = 4 / C;
    const int32_t o = o0 + k, cs = o & (S - 1);
    return (int32_t)(((int64_t)cs * lc + (o - cs)) * C);
}

/*
 * FAST kernel: P threads per template (power of two <= kMaxP), F filters per
 * thread. Slot q of template t (sorted by delay, zero-padded) is filter f of
 * thread p in round r for q = (r * F + f) * P + p, so the lanes of a warp run
 * neighbouring filters (nearby delays) and load coefficients coalesced.
 */
/* Samples of a thread's F filters for the time block at k0. */
template <int F, int C> struct xblock {
    float r[F][kT], i[F][kT];
};

template <int F, int C>
__device__ __forceinline__ void load_block(xblock<F, C> &x, const float *line,
                                           const int32_t (&off)[F], int k0)
{
#pragma unroll
    for (int f = 0; f < F; f++)
        load8<C>(line + off[f] + k0 * C, x.r[f], x.i[f]);
}

/* Samples of filter f for the block at k0: loaded now (kInline) or taken from
 * the prefetched block. */
template <int F, int C, bool kInline>
__device__ __forceinline__ void block_samples(const float *line, const int32_t (&off)[F],
                                              const xblock<F, C> &x, int f, int k0,
                                              float (&xr)[kT], float (&xi)[kT])
{
    if constexpr (kInline) {
        load8<C>(line + off[f] + k0 * C, xr, xi);
    } else {
#pragma unroll
        for (int j = 0; j < kT; j++)
            xr[j] = x.r[f][j], xi[j] = x.i[f][j];
    }
}

/*
 * One time block of the FAST kernel: the F recurrences over nv <= 8 samples,
 * then the template's sums for those samples into the output.
 */
template <int F, int P, int C, bool kLo, bool kInline>
__device__ __forceinline__ void
fast_block(const fast_args &a, const xblock<F, C> &x, const int32_t (&off)[F],
           const float (&ar)[F], const float (&ai)[F], const float (&lr)[F],
           const float (&li)[F], const float (&br)[F], const float (&bi)[F],
           float (&yr)[F], float (&yi)[F], int k0, int r, bool active, uint32_t t,
           int tid, int base, float (*red)[16], int n, float2 *out, int skip)
{
    constexpr int kQ = P < 32 ? P : 32;     /* lanes of a template in one warp */
    constexpr int kW = P > 32 ? P / 32 : 1; /* warps of a template */
    constexpr int kLevels = kQ >= 16 ? 4 : (kQ == 8 ? 3 : (kQ == 4 ? 2 : (kQ == 2)));
    constexpr int kV = 16 >> kLevels; /* partial sums a lane holds after the scatter */
    const int lane = tid & 31;
    const int nv = n - k0 < kT ? n - k0 : kT;

    /* F independent chains; their outputs are added per sample in filter order. */
    float v[2 * kT];
#pragma unroll
    for (int j = 0; j < 2 * kT; j++)
        v[j] = 0.0f;
    if (nv == kT) {
#pragma unroll
        for (int f = 0; f < F; f++) {
            float xr[kT], xi[kT];
            block_samples<F, C, kInline>(a.line, off, x, f, k0, xr, xi);
#pragma unroll
            for (int j = 0; j < kT; j++) {
                step<C, kLo>(ar[f], ai[f], lr[f], li[f], br[f], bi[f], xr[j], xi[j],
                             yr[f], yi[f]);
                v[2 * j] += yr[f];
                v[2 * j + 1] += yi[f];
            }
        }
    } else { /* the batch's last, partial block: the states stop at its end */
#pragma unroll
        for (int f = 0; f < F; f++) {
            float xr[kT], xi[kT];
            block_samples<F, C, kInline>(a.line, off, x, f, k0, xr, xi);
#pragma unroll
            for (int j = 0; j < kT; j++) {
                float zr = yr[f], zi = yi[f];
                step<C, kLo>(ar[f], ai[f], lr[f], li[f], br[f], bi[f], xr[j], xi[j], zr,
                             zi);
                if (j < nv) yr[f] = zr, yi[f] = zi;
                v[2 * j] += yr[f];
                v[2 * j + 1] += yi[f];
            }
        }
    }

    /* Reduce-scatter across the template's lanes: at level l the lane with bit l
     * set keeps the upper half of its values plus the partner's upper half; the
     * other lane does the same with the lower halves. */
#pragma unroll
    for (int l = 0; l < kLevels; l++) {
        const int h = 8 >> l;
        const bool up = (lane >> l) & 1;
#pragma unroll
        for (int i = 0; i < h; i++) {
            const float keep = up ? v[i + h] : v[i];
            const float send = up ? v[i] : v[i + h];
            v[i] = keep + __shfl_xor_sync(kFull, send, 1 << l);
        }
    }
    if constexpr (kQ == 32) v[0] += __shfl_xor_sync(kFull, v[0], 16);

    /* Rounds > 1 (very large templates): unscaled partial sums accumulate in
     * the output, written and read back by the same thread. */
    const bool last = r == a.rounds - 1;
    if constexpr (kW == 1) {
        if constexpr (kV >= 2) {
#pragma unroll
            for (int i = 0; i < kV / 2; i++) {
                const int j = base / 2 + i;
                if (active && j < nv && k0 + j >= skip) {
                    float2 *o = out + (size_t)(k0 + j) * a.nt + t;
                    float2 z = make_float2(v[2 * i], v[2 * i + 1]);
                    if (r > 0) {
                        const float2 w = *o;
                        z.x = w.x + z.x, z.y = w.y + z.y;
                    }
                    if (last) z.x *= a.scale, z.y *= a.scale;
                    *o = z;
                }
            }
        } else {
            const int j = base >> 1;
            if (active && j < nv && k0 + j >= skip && (kQ < 32 || lane < 16)) {
                float *o = reinterpret_cast<float *>(out + (size_t)(k0 + j) * a.nt + t) +
                           (base & 1);
                float z = v[0];
                if (r > 0) z = *o + z;
                if (last) z *= a.scale;
                *o = z;
            }
        }
    } else {
        /* Across the template's warps in warp order; the caller alternates two
         * buffers, so one barrier per time block suffices. */
        if (lane < 16) red[tid / 32][base] = v[0];
        __syncthreads();
        if (tid < 16) {
            float z = red[0][tid];
#pragma unroll
            for (int w = 1; w < kW; w++)
                z += red[w][tid];
            const int j = tid >> 1;
            if (j < nv && k0 + j >= skip) {
                float *o = reinterpret_cast<float *>(out + (size_t)(k0 + j) * a.nt + t) +
                           (tid & 1);
                if (r > 0) z = *o + z;
                if (last) z *= a.scale;
                *o = z;
            }
        }
    }
}

/*
 * FAST kernel: P threads per template (power of two <= kMaxP), F filters per
 * thread. Slot q of template t (sorted by delay, zero-padded) is filter f of
 * thread p in round r for q = (r * F + f) * P + p, so the lanes of a warp run
 * neighbouring filters (nearby delays) and load coefficients coalesced. The
 * samples of the next time block are loaded while this one computes (two
 * register buffers) when F <= 4: small grids have about one warp per
 * scheduler, which must not wait on L2 at every block.
 */
template <int F, int P, int C, bool kLo, bool kSegT>
__global__ void __launch_bounds__(P > 32 ? P : kSmallBlock)
    spiir_fast_kernel(const fast_args a)
{
    constexpr int kBlock = P > 32 ? P : kSmallBlock;
    constexpr int kTB = kBlock / P; /* templates per block */
    constexpr int kW = P > 32 ? P / 32 : 1;
    constexpr int kLevels = P >= 16 ? 4 : (P == 8 ? 3 : (P == 4 ? 2 : (P == 2)));
    /* With 8 filters per thread the second buffer would cost occupancy (228
     * instead of 135 registers): there, other warps hide the latency, and each
     * filter's samples are loaded just before its chain (fewer live registers
     * than loading the whole block first: 7 instead of 6 blocks of 64 per SM,
     * 20% faster with 512 filters). */
    constexpr bool kPrefetch = F <= 4;
    __shared__ float red[2][kW][16];

    const int tid = threadIdx.x, lane = tid & 31, p = tid % P;
    const uint32_t t = blockIdx.x * kTB + tid / P;
    const bool active = t < a.nt; /* idle lanes still join the shuffles */
    /* Value index (2 * sample + component) of a lane's first partial sum. */
    int base = 0;
#pragma unroll
    for (int l = 0; l < kLevels; l++)
        base += ((lane >> l) & 1) * (8 >> l);

    /* This block row's samples: the whole batch, or one segment. */
    int kbeg = 0, n = a.n, skip = 0;
    float2 *out = a.out;
    const float2 *y0 = a.state;
    if constexpr (kSegT) {
        kbeg = a.kbeg0 + (int)blockIdx.y * a.seg;
        n = min(a.n - kbeg, a.seg);
        out = a.out + (ptrdiff_t)kbeg * a.nt;
        skip = kbeg < 0 ? -kbeg : 0;
        y0 = a.yseg + (size_t)blockIdx.y * a.slots;
    }

    for (int r = 0; r < a.rounds; r++) {
        float ar[F], ai[F], lr[F], li[F], br[F], bi[F], yr[F], yi[F];
        int32_t off[F];
#pragma unroll
        for (int f = 0; f < F; f++) {
            const size_t q = (((size_t)t * a.rounds + r) * F + f) * P + p;
            const float4 c = active ? a.coef[q] : make_float4(0, 0, 0, 0);
            const float2 w = kLo && active ? a.lo[q] : make_float2(0, 0);
            lr[f] = w.x, li[f] = w.y;
            const float2 y = active ? y0[q] : make_float2(0, 0);
            ar[f] = c.x, ai[f] = c.y, br[f] = c.z, bi[f] = c.w;
            yr[f] = y.x, yi[f] = y.y;
            off[f] = line_off<C>(a.lc, active ? a.off[q] : a.hist, kbeg);
        }
        if constexpr (kPrefetch) {
            xblock<F, C> xa, xb;
            load_block<F, C>(xa, a.line, off, 0);
            for (int k0 = 0; k0 < n; k0 += 2 * kT) {
                if (k0 + kT < n) load_block<F, C>(xb, a.line, off, k0 + kT);
                fast_block<F, P, C, kLo, false>(a, xa, off, ar, ai, lr, li, br, bi, yr,
                                                yi, k0, r, active, t, tid, base, red[0],
                                                n, out, skip);
                if (k0 + kT >= n) break;
                if (k0 + 2 * kT < n) load_block<F, C>(xa, a.line, off, k0 + 2 * kT);
                fast_block<F, P, C, kLo, false>(a, xb, off, ar, ai, lr, li, br, bi, yr,
                                                yi, k0 + kT, r, active, t, tid, base,
                                                red[1], n, out, skip);
            }
        } else {
            const xblock<F, C> *none = nullptr; /* samples are loaded per filter */
            for (int k0 = 0; k0 < n; k0 += kT)
                fast_block<F, P, C, kLo, true>(a, *none, off, ar, ai, lr, li, br, bi, yr,
                                               yi, k0, r, active, t, tid, base,
                                               red[(k0 / kT) & 1], n, out, skip);
        }
        if (active && !kSegT) {
#pragma unroll
            for (int f = 0; f < F; f++)
                a.state[(((size_t)t * a.rounds + r) * F + f) * P + p] =
                    make_float2(yr[f], yi[f]);
        }
        if constexpr (kW > 1) __syncthreads(); /* the next round reuses red[] */
    }
}

/*
 * Segmented time (small banks, see seg_plan): the stream is cut at anchors,
 * absolute sample positions that are multiples of L. Per slot, the state at
 * each anchor follows Y(b + L) = A Y(b) + E(b), with A = a1^L (complex double,
 * rounded to float once) and E(b) = b0 H, H the segment's samples run through
 * H = a1 H + x from zero (seg_end_kernel). seg_scan_kernel runs that
 * recurrence over the batch's anchors in order; the FAST kernel then runs
 * every segment from its anchor state in parallel. Every value depends only on
 * the input and the absolute positions: the same bits for any chunking.
 */
template <int C>
__global__ void seg_end_kernel(const float4 *__restrict__ coef,
                               const int32_t *__restrict__ o0,
                               const float *__restrict__ line, int64_t lc, int seg,
                               int kbeg0, int nc, size_t slots, float2 *__restrict__ e)
{
    const size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (g >= slots * (size_t)nc) return;
    const size_t s = g / slots, q = g - s * slots;
    const float4 c = coef[q];
    const float *x = line + line_off<C>(lc, o0[q], kbeg0 + (int)s * seg);
    float hr = 0.0f, hi = 0.0f;
    for (int k = 0; k < seg; k += kT) {
        float xr[kT], xi[kT];
        load8<C>(x + k * C, xr, xi);
#pragma unroll
        for (int j = 0; j < kT; j++) {
            const float nr = __fmaf_rn(c.x, hr, __fmaf_rn(-c.y, hi, xr[j]));
            float ni;
            if constexpr (C == 2)
                ni = __fmaf_rn(c.x, hi, __fmaf_rn(c.y, hr, xi[j]));
            else
                ni = __fmaf_rn(c.x, hi, c.y * hr);
            hr = nr;
            hi = ni;
        }
    }
    e[s * slots + q] =
        make_float2(__fmaf_rn(c.z, hr, -(c.w * hi)), __fmaf_rn(c.z, hi, c.w * hr));
}

/* Per slot: seg[s] = E of segment s (s < nc) in, state at the start of
 * segment s out, for the nseg segments of the batch; state: in, the state at
 * the anchor at or before the batch's start; out, at or before its end. */
__global__ void seg_scan_kernel(const float2 *__restrict__ A, float2 *__restrict__ state,
                                float2 *__restrict__ seg, int nseg, int nc, size_t slots)
{
    const size_t q = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (q >= slots) return;
    const float2 m = A[q];
    float2 y = state[q];
    for (int s = 0; s < nseg; s++) {
        float2 *p = seg + (size_t)s * slots + q;
        const float2 e = *p;
        *p = y;
        if (s < nc) {
            const float nr = __fmaf_rn(m.x, y.x, __fmaf_rn(-m.y, y.y, e.x));
            const float ni = __fmaf_rn(m.x, y.y, __fmaf_rn(m.y, y.x, e.y));
            y = make_float2(nr, ni);
        }
    }
    state[q] = y;
}

struct paper_args {
    const uint32_t *ids; /* template of each group entry */
    const float4 *coef;  /* (a1, b0) per thread, M per template */
    const float2 *lo;    /* a1 - (float)a1, when the kernel uses it */
    const int32_t *off;  /* float offset of the filter's sample 0 in line copy 0 */
    float2 *state;
    const float *line;
    int n;
    uint32_t count; /* templates in this group */
    uint32_t nt;
    int m; /* threads per template */
    float scale;
    float2 *out;
};

/* The paper's warp-based kernel: M (power of two <= 32) lanes per template. */
template <int C, bool kLo>
__global__ void __launch_bounds__(kPaperWarpBlock)
    spiir_paper_warp_kernel(const paper_args a)
{
    const uint32_t g = blockIdx.x * kPaperWarpBlock + threadIdx.x;
    const uint32_t e = g / a.m; /* entry of the group */
    const int l = g % a.m;
    const bool active = e < a.count;
    float4 c = make_float4(0, 0, 0, 0);
    float2 y = make_float2(0, 0), w = make_float2(0, 0);
    int32_t off = 0;
    uint32_t t = 0;
    if (active) {
        c = a.coef[g];
        if constexpr (kLo) w = a.lo[g];
        y = a.state[g];
        off = a.off[g];
        t = a.ids[e];
    }
    const float *x = a.line + off;
    for (int k = 0; k < a.n; k++) {
        float xr, xi = 0.0f;
        if constexpr (C == 1) {
            xr = __ldg(x + k);
        } else {
            const float2 u = __ldg(reinterpret_cast<const float2 *>(x) + k);
            xr = u.x, xi = u.y;
        }
        step<C, kLo>(c.x, c.y, w.x, w.y, c.z, c.w, xr, xi, y.x, y.y);
        float sr = y.x, si = y.y;
        for (int d = a.m / 2; d >= 1; d >>= 1) {
            sr += __shfl_xor_sync(kFull, sr, d);
            si += __shfl_xor_sync(kFull, si, d);
        }
        if (active && l == 0)
            a.out[(size_t)k * a.nt + t] = make_float2(a.scale * sr, a.scale * si);
    }
    if (active) a.state[g] = y;
}

/* The paper's block-based kernel: one template per block of M (multiple of 32)
 * threads; each warp adds its sum to the (zeroed) output with atomicAdd. */
template <int C, bool kLo>
__global__ void __launch_bounds__(kPaperMaxBlock)
    spiir_paper_block_kernel(const paper_args a)
{
    const uint32_t i = blockIdx.x * a.m + threadIdx.x;
    const uint32_t t = a.ids[blockIdx.x];
    const float4 c = a.coef[i];
    const float2 w = kLo ? a.lo[i] : make_float2(0, 0);
    float2 y = a.state[i];
    const float *x = a.line + a.off[i];
    const int lane = threadIdx.x & 31;
    for (int k = 0; k < a.n; k++) {
        float xr, xi = 0.0f;
        if constexpr (C == 1) {
            xr = __ldg(x + k);
        } else {
            const float2 u = __ldg(reinterpret_cast<const float2 *>(x) + k);
            xr = u.x, xi = u.y;
        }
        step<C, kLo>(c.x, c.y, w.x, w.y, c.z, c.w, xr, xi, y.x, y.y);
        float sr = y.x, si = y.y;
#pragma unroll
        for (int d = 16; d >= 1; d >>= 1) {
            sr += __shfl_xor_sync(kFull, sr, d);
            si += __shfl_xor_sync(kFull, si, d);
        }
        if (lane == 0) {
            float2 *o = a.out + (size_t)k * a.nt + t;
            atomicAdd(&o->x, a.scale * sr);
            atomicAdd(&o->y, a.scale * si);
        }
    }
    a.state[i] = y;
}

/* ---- FAST dispatch ------------------------------------------------------- */

template <int F, int P, int C>
cudaError_t launch_fast_fpc(const fast_args &a, cudaStream_t s)
{
    constexpr int kBlock = P > 32 ? P : kSmallBlock;
    constexpr int kTB = kBlock / P;
    const int rows = a.seg > 0 ? (a.n - a.kbeg0 + a.seg - 1) / a.seg : 1;
    const dim3 grid((unsigned)((a.nt + kTB - 1) / kTB), (unsigned)rows);
    if (a.seg > 0) {
        /* Segmented kernels: P <= 8 and F <= 8 (tr_cuda_spiir_create). */
        if constexpr (P <= 8 && F <= 8) {
            if (a.lo)
                spiir_fast_kernel<F, P, C, true, true><<<grid, kBlock, 0, s>>>(a);
            else
                spiir_fast_kernel<F, P, C, false, true><<<grid, kBlock, 0, s>>>(a);
        } else {
            return cudaErrorInvalidValue;
        }
    } else if (a.lo) {
        spiir_fast_kernel<F, P, C, true, false><<<grid, kBlock, 0, s>>>(a);
    } else {
        spiir_fast_kernel<F, P, C, false, false><<<grid, kBlock, 0, s>>>(a);
    }
    return cudaGetLastError();
}

template <int F, int C>
cudaError_t launch_fast_fc(int p, const fast_args &a, cudaStream_t s)
{
    switch (p) {
    case 1:
        return launch_fast_fpc<F, 1, C>(a, s);
    case 2:
        return launch_fast_fpc<F, 2, C>(a, s);
    case 4:
        return launch_fast_fpc<F, 4, C>(a, s);
    case 8:
        return launch_fast_fpc<F, 8, C>(a, s);
    case 16:
        return launch_fast_fpc<F, 16, C>(a, s);
    case 32:
        return launch_fast_fpc<F, 32, C>(a, s);
    case 64:
        return launch_fast_fpc<F, 64, C>(a, s);
    case 128:
        return launch_fast_fpc<F, 128, C>(a, s);
    case 256:
        return launch_fast_fpc<F, 256, C>(a, s);
    default:
        return cudaErrorInvalidValue;
    }
}

/* 16 filters per thread (real input, large templates): P >= 16. */
template <int F, int C>
cudaError_t launch_fast_fc_wide(int p, const fast_args &a, cudaStream_t s)
{
    switch (p) {
    case 16:
        return launch_fast_fpc<F, 16, C>(a, s);
    case 32:
        return launch_fast_fpc<F, 32, C>(a, s);
    case 64:
        return launch_fast_fpc<F, 64, C>(a, s);
    default:
        return cudaErrorInvalidValue;
    }
}

template <int C>
cudaError_t launch_fast_c(int f, int p, const fast_args &a, cudaStream_t s)
{
    /* Complex input runs at most 4 filters per thread (fast_shape). */
    if constexpr (C == 2) {
        if (f > 4) return cudaErrorInvalidValue;
    }
    switch (f) {
    case 1:
        return launch_fast_fc<1, C>(p, a, s);
    case 2:
        return launch_fast_fc<2, C>(p, a, s);
    case 3:
        return launch_fast_fc<3, C>(p, a, s);
    case 4:
        return launch_fast_fc<4, C>(p, a, s);
    default:
        if constexpr (C == 1) {
            switch (f) {
            case 5:
                return launch_fast_fc<5, C>(p, a, s);
            case 6:
                return launch_fast_fc<6, C>(p, a, s);
            case 7:
                return launch_fast_fc<7, C>(p, a, s);
            case 8:
                return launch_fast_fc<8, C>(p, a, s);
            case 16:
                return launch_fast_fc_wide<16, C>(p, a, s);
            }
        }
        return cudaErrorInvalidValue;
    }
}

} // namespace

/* ---- context ------------------------------------------------------------- */

namespace
{

/* One group of templates for a PAPER kernel. */
struct paper_group {
    uint32_t count = 0; /* templates */
    int m = 0;          /* threads per template */
    uint32_t *d_ids = nullptr;
    float4 *d_coef = nullptr;
    float2 *d_lo = nullptr;
    int32_t *d_off = nullptr;
    float2 *d_state = nullptr;
    size_t slots = 0;
};

} // namespace

struct tr_cuda_spiir {
    int device;
    int cplx; /* floats per sample: 1 or 2 */
    tr_variant variant;
    size_t batch;      /* samples per launch from device memory */
    size_t host_batch; /* samples per launch from host memory (output staging) */
    uint32_t nt;
    int64_t hist; /* max_delay */
    int64_t lc;   /* samples per line copy */
    float scale;  /* 2 dt */
    cudaStream_t stream;

    /* FAST */
    int f, p, rounds;
    int seg;        /* segmented time: anchor spacing L (0: off) */
    size_t seg_cap; /* segments per batch, at most */
    uint64_t pos;   /* samples processed since the last reset */
    float2 *d_A;    /* a1^L per slot */
    float2 *d_seg;  /* per segment and slot: E, then the anchor state */
    float4 *d_coef;
    float2 *d_lo; /* NULL unless the bank needs split poles */
    int32_t *d_off;
    float2 *d_state;
    size_t slots;

    /* PAPER */
    paper_group small, large;

    float *d_line[2]; /* ping-pong delay lines */
    int cur;          /* the line holding the last batch */
    int64_t n_prev;   /* samples of the last batch in d_line[cur] */

    unsigned long long *d_bad, *h_bad; /* non-finite values of the current call */
    float *d_in[2], *h_in[2];          /* host path: input */
    float *d_out[2], *h_out[2];        /* host path: output */
    cudaEvent_t done[2];
    tr_host_stager *stager;
};

namespace
{

void ctx_free(tr_cuda_spiir *c)
{
    if (!c) return;
    if (c->device >= 0) {
        cudaSetDevice(c->device);
        if (c->stream) cudaStreamSynchronize(c->stream);
    }
    cudaFree(c->d_coef);
    cudaFree(c->d_lo);
    cudaFree(c->d_off);
    cudaFree(c->d_state);
    cudaFree(c->d_A);
    cudaFree(c->d_seg);
    for (paper_group *g : {&c->small, &c->large}) {
        cudaFree(g->d_ids);
        cudaFree(g->d_coef);
        cudaFree(g->d_lo);
        cudaFree(g->d_off);
        cudaFree(g->d_state);
    }
    for (int i = 0; i < 2; i++) {
        cudaFree(c->d_line[i]);
        cudaFree(c->d_in[i]);
        cudaFreeHost(c->h_in[i]);
        cudaFree(c->d_out[i]);
        cudaFreeHost(c->h_out[i]);
        if (c->done[i]) cudaEventDestroy(c->done[i]);
    }
    cudaFree(c->d_bad);
    cudaFreeHost(c->h_bad);
    if (c->stream) cudaStreamDestroy(c->stream);
    cudaGetLastError(); /* teardown errors are not the caller's */
    delete c->stager;
    c->~tr_cuda_spiir();
    free(c);
}

int pow2_ceil(uint64_t v)
{
    int p = 1;
    while ((uint64_t)p < v)
        p <<= 1;
    return p;
}

float4 coef_of(const tr_spiir_filter &f)
{
    return make_float4((float)f.a1_re, (float)f.a1_im, (float)f.b0_re, (float)f.b0_im);
}

/*
 * A pole rounded to float moves by up to 2^-25 relative, which changes the gain
 * of a filter with 1 - |a1| = g by about 2^-25 / g relative: 3e-5 at g = 1e-3,
 * 3e-4 at g = 1e-4. When some filter of the bank would move by more than 1e-4,
 * both variants keep every pole as the float pair hi + lo (lo = a1 - hi
 * rounded, as the CPU variant does): 4 more FMA per update. Banks with
 * 1 - |a1| >= 1e-3 (such as the benchmark's) keep the 6-FMA recurrence.
 */
bool needs_split_poles(const tr_cuda_spiir_bank *bank)
{
    for (uint64_t i = 0; i < bank->total; i++) {
        const tr_spiir_filter &f = bank->filters[i];
        const double lr = f.a1_re - (double)(float)f.a1_re;
        const double li = f.a1_im - (double)(float)f.a1_im;
        const double gap = 1.0 - std::hypot(f.a1_re, f.a1_im);
        if (std::hypot(lr, li) > 1e-4 * gap) return true;
    }
    return false;
}

/* a1^L in complex double (repeated squaring, L a power of two), rounded once. */
float2 pole_power(const tr_spiir_filter &f, int L)
{
    double re = f.a1_re, im = f.a1_im;
    for (int m = 1; m < L; m *= 2) {
        const double r = re * re - im * im, i = 2.0 * re * im;
        re = r;
        im = i;
    }
    return make_float2((float)re, (float)im);
}

/* Benchmark hook: TR_SPIIR_CUDA_SEGMENT=0 keeps whole batches per thread. */
bool seg_disabled()
{
    const char *e = std::getenv("TR_SPIIR_CUDA_SEGMENT");
    return e && e[0] == '0';
}

float2 pole_lo(const tr_spiir_filter &f)
{
    return make_float2((float)(f.a1_re - (double)(float)f.a1_re),
                       (float)(f.a1_im - (double)(float)f.a1_im));
}

/*
 * FAST shape: F filters per thread, P threads per template, rounds. Larger F
 * gives more independent chains per thread and fewer partial sums to combine,
 * but fewer threads; F is halved while the grid has fewer than 48 threads
 * per SM. Measured on an H100 with 4096 templates of 8 filters: F = 4, P = 2
 * (62 threads per SM) ran at 5.2e11 updates/s, F = 8, P = 1 at 3.7e11,
 * F = 2, P = 4 at 2.7e11 (the shuffle latency of the wider reduction is
 * exposed with one warp per scheduler); 512 filters: F = 8 beat F = 4 by 25%.
 */
void fast_shape(uint64_t max_filters, uint32_t nt, int sms, int cplx, int *F, int *P,
                int *rounds)
{
    int f =
        cplx == 2 ? 4 : 8; /* complex input: 8 filters spill registers in some shapes */
    for (; f > 1; f >>= 1) {
        const uint64_t per = (max_filters + f - 1) / f;
        const uint64_t p = (uint64_t)std::min<int>(pow2_ceil(per), kMaxP);
        if ((uint64_t)nt * p >= (uint64_t)48 * sms) break;
    }
    const uint64_t per = (max_filters + f - 1) / f;
    *F = f;
    *P = std::min<int>(pow2_ceil(per), kMaxP);
    *rounds = (int)((max_filters + (uint64_t)f * *P - 1) / ((uint64_t)f * *P));
    /* The fewest filters per thread that still cover the template with these
     * P and rounds: 65 filters take F = 5, P = 16 (80 slots) rather than 128
     * slots of F = 8 (the levels of a multirate bank have such counts). */
    *F = (int)((max_filters + (uint64_t)*P * *rounds - 1) / ((uint64_t)*P * *rounds));
    /* Large templates, real input: 16 filters on half the threads (same slots).
     * With P = 32 a template is one warp: no shared-memory exchange and barrier
     * per time block, half the shuffles per update; 176 registers instead of
     * 135. Measured on an H100, 4096 x 512: 1.76e12 against 1.46e12 updates/s
     * (F = 8, P = 64); F = 4, P = 128 ran at 0.99e12. */
    if (cplx == 1 && *rounds == 1 && *F == 8 && (*P == 64 || *P == 128)) {
        *F = 16;
        *P /= 2;
    }
}

/*
 * Benchmark hook: TR_SPIIR_CUDA_SHAPE="N:F:P[,N:F:P...]" runs contexts whose
 * largest template has N filters (N = '*': any) with F filters per thread and
 * P threads per template instead of fast_shape's choice, so that shapes can be
 * compared in one build. Entries that the kernels do not provide are ignored.
 */
bool shape_override(uint64_t max_filters, int cplx, int *F, int *P, int *rounds)
{
    const char *e = std::getenv("TR_SPIIR_CUDA_SHAPE");
    if (!e) return false;
    while (*e) {
        char key[24] = {0};
        int f = 0, p = 0, used = 0;
        if (std::sscanf(e, " %23[^:]:%d:%d%n", key, &f, &p, &used) != 3) return false;
        e += used;
        while (*e == ',' || *e == ' ')
            e++;
        const bool match =
            !std::strcmp(key, "*") || std::strtoull(key, nullptr, 10) == max_filters;
        const bool pok = p >= 1 && p <= kMaxP && (p & (p - 1)) == 0;
        const bool fok = (f >= 1 && f <= (cplx == 2 ? 4 : 8)) ||
                         (cplx == 1 && f == 16 && p >= 16 && p <= 64);
        if (match && pok && fok) {
            *F = f;
            *P = p;
            *rounds = (int)((max_filters + (uint64_t)f * p - 1) / ((uint64_t)f * p));
            return true;
        }
    }
    return false;
}

template <class T> cudaError_t upload(T **d, const std::vector<T> &h, cudaStream_t s)
{
    cudaError_t e = cudaMalloc(d, (h.empty() ? 1 : h.size()) * sizeof(T));
    if (e != cudaSuccess || h.empty()) return e;
    return cudaMemcpyAsync(*d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s);
}

} // namespace

extern "C" tr_status tr_cuda_spiir_create(int device, const tr_cuda_spiir_bank *bank,
                                          int complex_input, tr_variant variant,
                                          size_t batch, tr_cuda_spiir **out,
                                          tr_error *err)
{
    *out = NULL;
    if (!bank || bank->ntemplates == 0 || batch == 0)
        return tr_fail(err, TR_ERR_INVALID, "spiir/cuda: empty bank or zero batch");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "spiir/cuda: no %s variant on CUDA",
                       tr_variant_name(variant));
    void *mem = calloc(1, sizeof(tr_cuda_spiir));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "spiir/cuda: cannot allocate the context");
    tr_cuda_spiir *c = new (mem) tr_cuda_spiir();
    c->device = -1;
    c->cplx = complex_input ? 2 : 1;
    c->variant = variant;
    c->nt = bank->ntemplates;
    c->hist = bank->max_delay;
    c->scale = (float)(2.0 * bank->dt);
    /* Launch sizes stay well inside int and the line offsets inside int32. */
    c->batch = std::min<size_t>(batch, (size_t)1 << 24);
    {
        /* Host path: keep the output staging near 32 MiB per slot. */
        const size_t per_sample = (size_t)c->nt * 2 * sizeof(float);
        const size_t cap = std::max<size_t>(64, ((size_t)32 << 20) / per_sample);
        c->host_batch = std::min(c->batch, cap);
    }
    c->lc = (c->hist + (int64_t)c->batch + kT + 3) / 4 * 4;
    uint64_t max_filters = 0;
    for (uint32_t t = 0; t < c->nt; t++)
        max_filters =
            std::max<uint64_t>(max_filters, bank->first[t + 1] - bank->first[t]);

    int sms = 1;
    bool split = false;
    TR_CUDA_TRY(cudaSetDevice(device), err, "spiir/cuda: select device", fail);
    c->device = device;
    TR_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), err,
                "spiir/cuda: query multiprocessors", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), err,
                "spiir/cuda: create stream", fail);

    split = needs_split_poles(bank);
    if (variant == TR_VARIANT_FAST) {
        fast_shape(max_filters, c->nt, sms, c->cplx, &c->f, &c->p, &c->rounds);
        /* Small banks (fewer than 4 warps per SM): segmented time, and the
         * shape for a bank with many templates (the segments are the rest of
         * the parallelism). */
        c->seg = 0;
        if ((uint64_t)c->nt * c->p < (uint64_t)128 * sms && !seg_disabled()) {
            int f, p, rounds;
            fast_shape(max_filters, c->nt * 64u, sms, c->cplx, &f, &p, &rounds);
            if (p <= 8 && f <= 8) { /* the segmented kernels' shapes */
                c->seg = kSeg;
                c->f = f, c->p = p, c->rounds = rounds;
            }
        }
        {
            int f = c->f, p = c->p, rounds = c->rounds;
            if (shape_override(max_filters, c->cplx, &f, &p, &rounds) &&
                (!c->seg || (p <= 8 && f <= 8)))
                c->f = f, c->p = p, c->rounds = rounds;
        }
        const size_t per_t = (size_t)c->rounds * c->f * c->p;
        c->slots = per_t * c->nt;
        if (c->seg) {
            /* Anchors up to L - 1 samples before a batch: a longer history;
             * at most kSegBytes of segment states. */
            c->hist += c->seg;
            c->seg_cap = std::max<size_t>(4, kSegBytes / (c->slots * sizeof(float2)));
            c->batch = std::min(c->batch, (c->seg_cap - 2) * (size_t)c->seg);
            c->seg_cap = c->batch / c->seg + 2;
            c->host_batch = std::min(c->host_batch, c->batch);
            c->lc = (c->hist + (int64_t)c->batch + kT + 3) / 4 * 4;
        }
        std::vector<float4> coef(c->slots, make_float4(0, 0, 0, 0));
        std::vector<float2> lo(split ? c->slots : 0, make_float2(0, 0));
        std::vector<float2> pw(c->seg ? c->slots : 0, make_float2(0, 0));
        std::vector<int32_t> off(c->slots, (int32_t)c->hist);
        std::vector<uint64_t> order;
        for (uint32_t t = 0; t < c->nt; t++) {
            const uint64_t b = bank->first[t], L = bank->first[t + 1] - b;
            order.resize(L);
            for (uint64_t i = 0; i < L; i++)
                order[i] = b + i;
            std::stable_sort(order.begin(), order.end(), [&](uint64_t u, uint64_t v) {
                return bank->filters[u].delay < bank->filters[v].delay;
            });
            for (uint64_t q = 0; q < L; q++) {
                const tr_spiir_filter &fl = bank->filters[order[q]];
                coef[t * per_t + q] = coef_of(fl);
                if (split) lo[t * per_t + q] = pole_lo(fl);
                if (c->seg) pw[t * per_t + q] = pole_power(fl, c->seg);
                off[t * per_t + q] = (int32_t)(c->hist - fl.delay);
            }
        }
        if (c->seg) {
            TR_CUDA_TRY(upload(&c->d_A, pw, c->stream), err,
                        "spiir/cuda: upload pole powers", fail);
            TR_CUDA_TRY(cudaMalloc(&c->d_seg, c->seg_cap * c->slots * sizeof(float2)),
                        err, "spiir/cuda: allocate segment states", fail);
        }
        TR_CUDA_TRY(upload(&c->d_coef, coef, c->stream), err,
                    "spiir/cuda: upload coefficients", fail);
        if (split)
            TR_CUDA_TRY(upload(&c->d_lo, lo, c->stream), err,
                        "spiir/cuda: upload coefficients", fail);
        TR_CUDA_TRY(upload(&c->d_off, off, c->stream), err, "spiir/cuda: upload delays",
                    fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_state, c->slots * sizeof(float2)), err,
                    "spiir/cuda: allocate states", fail);
        TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: upload bank",
                    fail);
    } else {
        if (max_filters > (uint64_t)kPaperMaxBlock) {
            tr_fail(err, TR_ERR_UNSUPPORTED,
                    "spiir/cuda: the paper variant takes at most %d filters per template "
                    "(this bank has %llu)",
                    kPaperMaxBlock, (unsigned long long)max_filters);
            goto fail;
        }
        /* Warp-based group: one power of two for all templates of <= 32 filters;
         * block-based group: one multiple of 32 for the others. */
        uint64_t max_small = 0, max_large = 0;
        for (uint32_t t = 0; t < c->nt; t++) {
            const uint64_t L = bank->first[t + 1] - bank->first[t];
            if (L <= 32) {
                max_small = std::max(max_small, L);
                c->small.count++;
            } else {
                max_large = std::max(max_large, L);
                c->large.count++;
            }
        }
        c->small.m = pow2_ceil(max_small);
        c->large.m = (int)((max_large + 31) / 32 * 32);
        for (paper_group *g : {&c->small, &c->large}) {
            if (g->count == 0) continue;
            const bool is_small = g == &c->small;
            g->slots = (size_t)g->count * g->m;
            if (is_small) /* whole blocks: idle lanes read slot data too */
                g->slots =
                    (g->slots + kPaperWarpBlock - 1) / kPaperWarpBlock * kPaperWarpBlock;
            std::vector<uint32_t> ids;
            std::vector<float4> coef(g->slots, make_float4(0, 0, 0, 0));
            std::vector<float2> lo(split ? g->slots : 0, make_float2(0, 0));
            std::vector<int32_t> off(g->slots, (int32_t)(c->hist * c->cplx));
            for (uint32_t t = 0; t < c->nt; t++) {
                const uint64_t b = bank->first[t], L = bank->first[t + 1] - b;
                if ((L <= 32) != is_small) continue;
                const size_t e = ids.size();
                ids.push_back(t);
                for (uint64_t i = 0; i < L; i++) {
                    const tr_spiir_filter &fl = bank->filters[b + i];
                    coef[e * g->m + i] = coef_of(fl);
                    if (split) lo[e * g->m + i] = pole_lo(fl);
                    off[e * g->m + i] = (int32_t)((c->hist - fl.delay) * c->cplx);
                }
            }
            TR_CUDA_TRY(upload(&g->d_ids, ids, c->stream), err,
                        "spiir/cuda: upload template map", fail);
            TR_CUDA_TRY(upload(&g->d_coef, coef, c->stream), err,
                        "spiir/cuda: upload coefficients", fail);
            if (split)
                TR_CUDA_TRY(upload(&g->d_lo, lo, c->stream), err,
                            "spiir/cuda: upload coefficients", fail);
            TR_CUDA_TRY(upload(&g->d_off, off, c->stream), err,
                        "spiir/cuda: upload delays", fail);
            TR_CUDA_TRY(cudaMalloc(&g->d_state, g->slots * sizeof(float2)), err,
                        "spiir/cuda: allocate states", fail);
            TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: upload bank",
                        fail);
        }
    }

    for (int i = 0; i < 2; i++) {
        const size_t in_bytes = c->host_batch * c->cplx * sizeof(float);
        const size_t out_bytes = c->host_batch * c->nt * 2 * sizeof(float);
        TR_CUDA_TRY(cudaMalloc(&c->d_line[i], (size_t)c->lc * 4 * sizeof(float)), err,
                    "spiir/cuda: allocate delay line", fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_in[i], in_bytes), err,
                    "spiir/cuda: allocate device input", fail);
        TR_CUDA_TRY(cudaMallocHost(&c->h_in[i], in_bytes), err,
                    "spiir/cuda: allocate pinned input", fail);
        TR_CUDA_TRY(cudaMalloc(&c->d_out[i], out_bytes), err,
                    "spiir/cuda: allocate device output", fail);
        TR_CUDA_TRY(cudaMallocHost(&c->h_out[i], out_bytes), err,
                    "spiir/cuda: allocate pinned output", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&c->done[i], cudaEventDisableTiming), err,
                    "spiir/cuda: create event", fail);
    }
    TR_CUDA_TRY(cudaMalloc(&c->d_bad, sizeof *c->d_bad), err, "spiir/cuda: allocate",
                fail);
    TR_CUDA_TRY(cudaMallocHost(&c->h_bad, sizeof *c->h_bad), err,
                "spiir/cuda: allocate pinned counter", fail);
    try {
        c->stager = new tr_host_stager(tr_host_stager_threads());
    } catch (...) {
        tr_fail(err, TR_ERR_NOMEM, "spiir/cuda: cannot start the staging threads");
        goto fail;
    }
    if (tr_cuda_spiir_reset(c, err) != TR_OK) goto fail;
    *out = c;
    return TR_OK;
fail:
    ctx_free(c);
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" void tr_cuda_spiir_destroy(tr_cuda_spiir *c)
{
    ctx_free(c);
}

extern "C" tr_status tr_cuda_spiir_reset(tr_cuda_spiir *c, tr_error *err)
{
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    for (int i = 0; i < 2; i++)
        TR_CUDA_TRY(cudaMemsetAsync(c->d_line[i], 0, (size_t)c->lc * 4 * sizeof(float),
                                    c->stream),
                    err, "spiir/cuda: clear delay line", fail);
    if (c->d_state)
        TR_CUDA_TRY(cudaMemsetAsync(c->d_state, 0, c->slots * sizeof(float2), c->stream),
                    err, "spiir/cuda: clear states", fail);
    for (paper_group *g : {&c->small, &c->large})
        if (g->d_state)
            TR_CUDA_TRY(
                cudaMemsetAsync(g->d_state, 0, g->slots * sizeof(float2), c->stream), err,
                "spiir/cuda: clear states", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: reset", fail);
    c->cur = 0;
    c->n_prev = 0;
    c->pos = 0;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

namespace
{

/* One of the four instances of a PAPER kernel (samples real or complex, poles
 * split or not). */
typedef void (*paper_kernel)(paper_args);
void launch_paper(paper_kernel r, paper_kernel r_lo, paper_kernel c, paper_kernel c_lo,
                  int cplx, const paper_args &a, unsigned grid, int block, cudaStream_t s)
{
    paper_kernel k = cplx == 1 ? (a.lo ? r_lo : r) : (a.lo ? c_lo : c);
    k<<<grid, block, 0, s>>>(a);
}

/* Enqueue one batch: device samples d_x[0..n) (n <= c->batch) into the next
 * delay line, then the variant's kernels writing d_snr[0 .. n * nt). */
tr_status enqueue_batch(tr_cuda_spiir *c, const float *d_x, int64_t n, float2 *d_snr,
                        tr_error *err)
{
    const int nxt = c->cur ^ 1;
    {
        const int64_t total = (4 / c->cplx) * c->lc;
        const int threads = 256;
        const int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 4096);
        if (c->cplx == 1)
            line_kernel<1><<<blocks, threads, 0, c->stream>>>(
                c->d_line[c->cur], c->d_line[nxt], d_x, n, c->n_prev, c->hist, c->lc,
                c->d_bad);
        else
            line_kernel<2><<<blocks, threads, 0, c->stream>>>(
                c->d_line[c->cur], c->d_line[nxt], d_x, n, c->n_prev, c->hist, c->lc,
                c->d_bad);
        TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch delay-line kernel",
                    fail);
    }
    c->cur = nxt;
    c->n_prev = n;
    if (c->variant == TR_VARIANT_FAST) {
        fast_args a;
        a.coef = c->d_coef;
        a.lo = c->d_lo;
        a.off = c->d_off;
        a.state = c->d_state;
        a.line = c->d_line[c->cur];
        a.n = (int)n;
        a.nt = c->nt;
        a.rounds = c->rounds;
        a.scale = c->scale;
        a.out = d_snr;
        a.lc = c->lc;
        a.hist = (int)c->hist;
        a.skip = 0;
        a.seg = c->seg;
        a.kbeg0 = 0;
        a.yseg = c->d_seg;
        a.slots = c->slots;
        if (c->seg) {
            /* Anchors: multiples of L in the stream; the first segment starts at
             * the anchor at or before this batch's first sample. */
            const int L = c->seg;
            a.kbeg0 = -(int)(c->pos % (uint64_t)L);
            const int nseg = (int)((n - a.kbeg0 + L - 1) / L);
            const int nc = (int)((n - a.kbeg0) / L);
            if (nc > 0) {
                const size_t th = c->slots * (size_t)nc;
                const unsigned blocks = (unsigned)((th + 255) / 256);
                if (c->cplx == 1)
                    seg_end_kernel<1><<<blocks, 256, 0, c->stream>>>(
                        c->d_coef, c->d_off, a.line, c->lc, L, a.kbeg0, nc, c->slots,
                        c->d_seg);
                else
                    seg_end_kernel<2><<<blocks, 256, 0, c->stream>>>(
                        c->d_coef, c->d_off, a.line, c->lc, L, a.kbeg0, nc, c->slots,
                        c->d_seg);
                TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch segment kernel",
                            fail);
            }
            seg_scan_kernel<<<(unsigned)((c->slots + 255) / 256), 256, 0, c->stream>>>(
                c->d_A, c->d_state, c->d_seg, nseg, nc, c->slots);
            TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch scan kernel", fail);
        }
        c->pos += (uint64_t)n;
        const cudaError_t e = c->cplx == 1 ? launch_fast_c<1>(c->f, c->p, a, c->stream)
                                           : launch_fast_c<2>(c->f, c->p, a, c->stream);
        TR_CUDA_TRY(e, err, "spiir/cuda: launch fast kernel", fail);
    } else {
        if (c->large.count)
            TR_CUDA_TRY(
                cudaMemsetAsync(d_snr, 0, (size_t)n * c->nt * sizeof(float2), c->stream),
                err, "spiir/cuda: clear output", fail);
        for (paper_group *g : {&c->small, &c->large}) {
            if (g->count == 0) continue;
            paper_args a;
            a.ids = g->d_ids;
            a.coef = g->d_coef;
            a.lo = g->d_lo;
            a.off = g->d_off;
            a.state = g->d_state;
            a.line = c->d_line[c->cur];
            a.n = (int)n;
            a.count = g->count;
            a.nt = c->nt;
            a.m = g->m;
            a.scale = c->scale;
            a.out = d_snr;
            if (g == &c->small)
                launch_paper(
                    spiir_paper_warp_kernel<1, false>, spiir_paper_warp_kernel<1, true>,
                    spiir_paper_warp_kernel<2, false>, spiir_paper_warp_kernel<2, true>,
                    c->cplx, a, (unsigned)(g->slots / kPaperWarpBlock), kPaperWarpBlock,
                    c->stream);
            else
                launch_paper(
                    spiir_paper_block_kernel<1, false>, spiir_paper_block_kernel<1, true>,
                    spiir_paper_block_kernel<2, false>, spiir_paper_block_kernel<2, true>,
                    c->cplx, a, g->count, g->m, c->stream);
            TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda: launch paper kernel", fail);
        }
    }
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

/* Wait for the call's work and add its non-finite count. */
tr_status finish_call(tr_cuda_spiir *c, uint64_t *nonfinite, tr_error *err)
{
    TR_CUDA_TRY(cudaMemcpyAsync(c->h_bad, c->d_bad, sizeof *c->h_bad,
                                cudaMemcpyDeviceToHost, c->stream),
                err, "spiir/cuda: download non-finite count", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->stream), err, "spiir/cuda: kernels", fail);
    if (nonfinite) *nonfinite += *c->h_bad;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace

extern "C" tr_status tr_cuda_spiir_run_device(tr_cuda_spiir *c, const float *d_x,
                                              size_t n, float *d_snr, uint64_t *nonfinite,
                                              tr_error *err)
{
    if (n == 0) return TR_OK;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    TR_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                "spiir/cuda: clear counter", fail);
    for (size_t off = 0; off < n; off += c->batch) {
        const size_t len = std::min(c->batch, n - off);
        const tr_status s =
            enqueue_batch(c, d_x + off * c->cplx, (int64_t)len,
                          reinterpret_cast<float2 *>(d_snr) + off * c->nt, err);
        if (s != TR_OK) return s;
    }
    return finish_call(c, nonfinite, err);
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_spiir_enqueue(tr_cuda_spiir *c, const float *d_x, size_t n,
                                           float *d_snr, tr_error *err)
{
    for (size_t off = 0; off < n; off += c->batch) {
        const size_t len = std::min(c->batch, n - off);
        const tr_status s =
            enqueue_batch(c, d_x + off * c->cplx, (int64_t)len,
                          reinterpret_cast<float2 *>(d_snr) + off * c->nt, err);
        if (s != TR_OK) return s;
    }
    return TR_OK;
}

extern "C" void *tr_cuda_spiir_stream(tr_cuda_spiir *c)
{
    return c->stream;
}

/*
 * Host samples: batches alternate between two slots, so that while the GPU
 * runs batch b, the host stages the input of batch b + 1 and copies the output
 * of batch b - 1 out of pinned memory (pinned caller buffers are used directly).
 */
extern "C" tr_status tr_cuda_spiir_run_host(tr_cuda_spiir *c, const float *x, size_t n,
                                            float *snr, uint64_t *nonfinite,
                                            tr_error *err)
{
    if (n == 0) return TR_OK;
    const int direct_in = tr_host_is_pinned(x), direct_out = tr_host_is_pinned(snr);
    const size_t per_out = (size_t)c->nt * 2; /* floats per sample of output */
    size_t pend_off[2] = {0, 0}, pend_len[2] = {0, 0};
    size_t b = 0;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda: select device", fail);
    TR_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                "spiir/cuda: clear counter", fail);
    for (size_t off = 0; off < n; off += c->host_batch, b++) {
        const int s = (int)(b & 1);
        const size_t len = std::min(c->host_batch, n - off);
        /* The slot's previous batch: its upload, kernels and download are done. */
        if (pend_len[s]) {
            TR_CUDA_TRY(cudaEventSynchronize(c->done[s]), err, "spiir/cuda: kernels",
                        fail);
            if (!direct_out)
                c->stager->copy(snr + pend_off[s] * per_out, c->h_out[s],
                                pend_len[s] * per_out * sizeof(float));
            pend_len[s] = 0;
        }
        const float *src = x + off * c->cplx;
        const size_t in_bytes = len * c->cplx * sizeof(float);
        if (!direct_in) {
            c->stager->copy(c->h_in[s], src, in_bytes);
            src = c->h_in[s];
        }
        TR_CUDA_TRY(
            cudaMemcpyAsync(c->d_in[s], src, in_bytes, cudaMemcpyHostToDevice, c->stream),
            err, "spiir/cuda: upload samples", fail);
        const tr_status st = enqueue_batch(c, c->d_in[s], (int64_t)len,
                                           reinterpret_cast<float2 *>(c->d_out[s]), err);
        if (st != TR_OK) return st;
        TR_CUDA_TRY(cudaMemcpyAsync(direct_out ? snr + off * per_out : c->h_out[s],
                                    c->d_out[s], len * per_out * sizeof(float),
                                    cudaMemcpyDeviceToHost, c->stream),
                    err, "spiir/cuda: download SNR", fail);
        TR_CUDA_TRY(cudaEventRecord(c->done[s], c->stream), err, "spiir/cuda: event",
                    fail);
        pend_off[s] = off;
        pend_len[s] = len;
    }
    {
        const tr_status st = finish_call(c, nonfinite, err);
        if (st != TR_OK) return st;
    }
    if (!direct_out) {
        /* Older batch first (the order does not matter: the slots are disjoint). */
        for (int s = 0; s < 2; s++)
            if (pend_len[s])
                c->stager->copy(snr + pend_off[s] * per_out, c->h_out[s],
                                pend_len[s] * per_out * sizeof(float));
    }
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}
