/*
 * SPIIR filter bank on CUDA: the kernels (delay line, FAST, FAST from a
 * shared-memory window, segmented time, PAPER) and their arguments, launched
 * by spiir_cuda.cu.
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
#ifndef TRANSIENT_CUDA_SPIIR_KERNELS_CUH
#define TRANSIENT_CUDA_SPIIR_KERNELS_CUH

#include <cstddef>
#include <cstdint>
#include <cuda_pipeline.h>

namespace
{

constexpr unsigned kFull = 0xffffffffu;
constexpr int kT = 8;           /* samples per FAST time block */
constexpr int kSmallBlock = 32; /* FAST block size when P <= 32: one warp, so that
                                   small grids still reach every scheduler */
constexpr int kMaxP = 256;      /* FAST threads per template, at most */
constexpr int kPaperWarpBlock = 256;
constexpr int kPaperMaxBlock = 1024; /* the block-based kernel: filters per template */

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

/* 8 consecutive samples from a 16-byte aligned address of the line (global
 * memory, through the read-only path) or of a window (shared memory). */
template <int C, bool kShared = false>
__device__ __forceinline__ void load8(const float *p, float (&xr)[kT], float (&xi)[kT])
{
    const float4 *q = reinterpret_cast<const float4 *>(p);
    if constexpr (C == 1) {
        const float4 u = kShared ? q[0] : __ldg(q), v = kShared ? q[1] : __ldg(q + 1);
        xr[0] = u.x, xr[1] = u.y, xr[2] = u.z, xr[3] = u.w;
        xr[4] = v.x, xr[5] = v.y, xr[6] = v.z, xr[7] = v.w;
    } else {
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const float4 u = kShared ? q[h] : __ldg(q + h);
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
    /* Window kernel: line indices [wbase, wbase + wspan] hold every slot's
     * sample 0; each copy of the window takes wc floats of shared memory and
     * is refilled every wchunk samples. */
    int wbase, wspan, wc, wchunk;
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
        load8<C>(line + k0 * C + off[f], x.r[f], x.i[f]);
}

/* Samples of filter f for the block at sample kx of `src` (the line, or a
 * window in shared memory when kShared): loaded now (kInline) or taken from
 * the prefetched block. */
template <int F, int C, bool kInline, bool kShared>
__device__ __forceinline__ void block_samples(const float *src, const int32_t (&off)[F],
                                              const xblock<F, C> &x, int f, int kx,
                                              float (&xr)[kT], float (&xi)[kT])
{
    if constexpr (kInline) {
        load8<C, kShared>(src + kx * C + off[f], xr, xi);
    } else {
#pragma unroll
        for (int j = 0; j < kT; j++)
            xr[j] = x.r[f][j], xi[j] = x.i[f][j];
    }
}

/*
 * One level of the reduce-scatter of a time block's 2 H values per lane: the
 * lane whose bit log2(8 / H) is set keeps the upper H values plus its
 * partner's upper H, the other lane the lower ones. H is a template argument
 * so that every index is a constant: with a run-time level the compiler kept
 * the level's loop and indexed v[] through predicated moves and a divergent
 * branch.
 */
template <int H>
__device__ __forceinline__ void scatter_level(float (&v)[2 * kT], int lane)
{
    constexpr int kMask = 8 / H;
    const bool up = lane & kMask;
#pragma unroll
    for (int i = 0; i < H; i++) {
        const float lo = v[i], hi = v[i + H];
        const float keep = up ? hi : lo, send = up ? lo : hi;
        v[i] = keep + __shfl_xor_sync(kFull, send, kMask);
    }
}

/*
 * One time block of the FAST kernel: the F recurrences over nv <= 8 samples,
 * then the template's sums for those samples into the output. The samples of
 * filter f are at src + kx * C + off[f] (the line and k0, or a window).
 */
template <int F, int P, int C, bool kLo, bool kInline, bool kShared = false>
__device__ __forceinline__ void
fast_block(const fast_args &a, const float *src, int kx, const xblock<F, C> &x,
           const int32_t (&off)[F], const float (&ar)[F], const float (&ai)[F],
           const float (&lr)[F], const float (&li)[F], const float (&br)[F],
           const float (&bi)[F], float (&yr)[F], float (&yi)[F], int k0, int r,
           bool active, uint32_t t, int tid, int base, float (*red)[16], int n,
           float2 *out, int skip)
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
            block_samples<F, C, kInline, kShared>(src, off, x, f, kx, xr, xi);
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
            block_samples<F, C, kInline, kShared>(src, off, x, f, kx, xr, xi);
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

    /* Reduce-scatter across the template's lanes (scatter_level). */
    if constexpr (kLevels > 0) scatter_level<8>(v, lane);
    if constexpr (kLevels > 1) scatter_level<4>(v, lane);
    if constexpr (kLevels > 2) scatter_level<2>(v, lane);
    if constexpr (kLevels > 3) scatter_level<1>(v, lane);
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
    /* With 8 filters per thread the second buffer would cost occupancy: there,
     * other warps hide the latency, and each filter's samples are loaded just
     * before its chain (fewer live registers than loading the whole block
     * first; docs/spiir.md, Shape). */
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
                fast_block<F, P, C, kLo, false>(a, a.line, k0, xa, off, ar, ai, lr, li,
                                                br, bi, yr, yi, k0, r, active, t, tid,
                                                base, red[0], n, out, skip);
                if (k0 + kT >= n) break;
                if (k0 + 2 * kT < n) load_block<F, C>(xa, a.line, off, k0 + 2 * kT);
                fast_block<F, P, C, kLo, false>(a, a.line, k0 + kT, xb, off, ar, ai, lr,
                                                li, br, bi, yr, yi, k0 + kT, r, active, t,
                                                tid, base, red[1], n, out, skip);
            }
        } else {
            const xblock<F, C> *none = nullptr; /* samples are loaded per filter */
            for (int k0 = 0; k0 < n; k0 += kT)
                fast_block<F, P, C, kLo, true>(a, a.line, k0, *none, off, ar, ai, lr, li,
                                               br, bi, yr, yi, k0, r, active, t, tid,
                                               base, red[(k0 / kT) & 1], n, out, skip);
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
 * FAST with the samples in shared memory (templates of one warp: F = 16,
 * P = 32, real input, delays that fit; spiir_cuda.cu decides). The global
 * kernel's 16-byte loads each read another filter's delay, so a warp's load
 * touches about 8 cache lines and the L1 data pipe, not the FMA pipe, bounds
 * it (docs/spiir.md). Here kWinWarps templates share a window of the line:
 * the four shifted copies of wspan + wchunk samples, refilled every wchunk
 * samples (512, or 256 where the longer window would cost warps) by
 * asynchronous copies, so that a block waits for one round trip to L2 per
 * refill. A 16-byte shared load takes one pass per quarter warp when its 8
 * lanes hit 8 different 16-byte bank groups; the copies are wc floats apart
 * (wc = 8 mod 32), so sample i of the window lies in group
 * (2 (i mod 4) + i / 4) mod 8, the same for every sample step of 8, and
 * spiir_cuda.cu places the filters on lanes so that the 8 lanes of each
 * quarter warp and filter slot mostly fall in different groups. The
 * arithmetic and its order are those of spiir_fast_kernel for that slot
 * order: the same bits for any chunking.
 */
constexpr int kWinWarps = 4;              /* templates (one warp each) per block */
constexpr int kWinChunks[2] = {512, 256}; /* samples per window fill, preferred first */
constexpr int kWinMinBlocks = 3;          /* 12 warps per SM, as the FAST kernel's 168
                                             registers allow: the compiler keeps to them */

template <int F, bool kLo>
__global__ void __launch_bounds__(kWinWarps * 32, kWinMinBlocks)
    spiir_window_kernel(const fast_args a)
{
    constexpr int P = 32;
    extern __shared__ float4 win4[];
    const float *win = reinterpret_cast<const float *>(win4);
    __shared__ float red[1][16]; /* not used by one-warp templates */

    const int tid = threadIdx.x, lane = tid & 31;
    const uint32_t t = blockIdx.x * kWinWarps + tid / 32;
    const bool active = t < a.nt;
    int base = 0;
#pragma unroll
    for (int l = 0; l < 4; l++)
        base += ((lane >> l) & 1) * (8 >> l);

    float ar[F], ai[F], lr[F], li[F], br[F], bi[F], yr[F], yi[F];
    int32_t off[F]; /* float index in the window of the slot's sample 0 */
#pragma unroll
    for (int f = 0; f < F; f++) {
        const size_t q = ((size_t)t * F + f) * P + lane;
        const float4 c = active ? a.coef[q] : make_float4(0, 0, 0, 0);
        const float2 w = kLo && active ? a.lo[q] : make_float2(0, 0);
        const float2 y = active ? a.state[q] : make_float2(0, 0);
        ar[f] = c.x, ai[f] = c.y, br[f] = c.z, bi[f] = c.w;
        lr[f] = w.x, li[f] = w.y;
        yr[f] = y.x, yi[f] = y.y;
        const int32_t i0 = (active ? a.off[q] : a.hist) - a.wbase, cs = i0 & 3;
        off[f] = cs * a.wc + (i0 - cs);
    }
    const xblock<F, 1> *none = nullptr; /* samples are loaded per filter */
    for (int kc = 0; kc < a.n; kc += a.wchunk) {
        const int len = min(a.wchunk, a.n - kc);
        /* Copy s, float j: line copy s at index wbase + kc + j. */
        const int q4 = (a.wspan + len + kT + 3) / 4;
        if (kc > 0) __syncthreads(); /* every warp is done with the last window */
#pragma unroll 1
        for (int s = 0; s < 4; s++) {
            const float4 *src =
                reinterpret_cast<const float4 *>(a.line + s * a.lc + a.wbase + kc);
            float4 *dst = win4 + s * (a.wc / 4);
            for (int j = tid; j < q4; j += kWinWarps * 32)
                __pipeline_memcpy_async(dst + j, src + j, sizeof(float4));
        }
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        for (int k0 = kc; k0 < kc + len; k0 += kT)
            fast_block<F, P, 1, kLo, true, true>(a, win, k0 - kc, *none, off, ar, ai, lr,
                                                 li, br, bi, yr, yi, k0, 0, active, t,
                                                 tid, base, red, a.n, a.out, 0);
    }
    if (active) {
#pragma unroll
        for (int f = 0; f < F; f++)
            a.state[((size_t)t * F + f) * P + lane] = make_float2(yr[f], yi[f]);
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

} // namespace

#endif /* TRANSIENT_CUDA_SPIIR_KERNELS_CUH */
