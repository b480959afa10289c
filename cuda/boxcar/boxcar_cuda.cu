/*
 * Boxcar single-pulse search on CUDA: the context of cuda/boxcar/boxcar_cuda.h, the
 * paper's GPU design (PAPER) and our exact fast design (FAST).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 * Both variants evaluate exactly the plan's boxcars (the nominal set of
 * include/transient/boxcar.h) and give Y = the best S/N of the boxcars that
 * start at a position, W = its width, first in evaluation order on ties
 * (strict > in the order stage, then width).
 *
 * Streaming (both variants). The context keeps the last H samples of every
 * channel on the device (cleaned, positions [pos - H, pos)); a call of n new
 * samples writes the outputs of positions [pos - latency, pos - latency + n).
 * Data beyond the end of what has arrived (only flush sees it) and before
 * position 0 read as 0; flush evaluates only the boxcars with p + L <= end.
 *
 * PAPER (sections 3.1.1 and 3.2.1):
 *  - The call's data [a0, end) (a0: the first output rounded down to the
 *    coarsest grid) are copied into one cleaned line per channel.
 *  - BoxDIT: one kernel per iteration i (Algorithm 2). Each thread keeps the
 *    partial sums B[n; w], w = 1..w_m (w_m = 4, or 2 when B^i is not a
 *    multiple of 4) of the decimated series x^i in registers; the last one
 *    goes to shared memory, and in each following round thread t extends the
 *    boxcars of position t - w by the w_m-long sum of the thread w_m to its
 *    left, updating that position's best S/N and width in shared memory
 *    (eqs. 16-17). Y^i, W^i, the running value X^i (the boxcar of width
 *    LMAX^i) and the decimated series x^{i+1} (eq. 13, shifted by B^i) go to
 *    device memory, and the next iteration reads them there. A last kernel
 *    maps Y^i, W^i back to input positions (first best in iteration order).
 *  - IGRID: kernels of SpK = 4 steps each (Algorithm 4). A kernel loads the
 *    zero-shift layer x_0 of its starting resolution 2^r into shared memory
 *    and forms the layers of the next steps in place (Figure 9): after j
 *    rounds of a[t] += a[t + 2^{j-1}] every slot t holds the width-2^{r+j}
 *    boxcar that starts at (n0 + t) 2^r, i.e. all layers of that step,
 *    interleaved. Depth d keeps the last d steps' arrays (Algorithm 5 reads
 *    x^i and x^{i-1}) to form the widths 2^i + m 2^{i-d} (eq. 18). A kernel
 *    starts r = max(log2 P, d) steps below its first evaluated step (the
 *    paper's recomputed "red" layers) and writes only the zero-shift layer
 *    for the next kernel. Layers denser than the nominal stride (the paper's
 *    "green" ones) are formed but not evaluated, so the set is the nominal
 *    one. Y, W are kept at input positions and updated in place.
 *
 * FAST: one kernel per call. A thread block takes one channel and a tile of
 * T output positions aligned to an absolute multiple of T (so the arithmetic
 * of a position never depends on how the stream was cut), loads the span
 * [t0, t0 + T + latency) once (coalesced 16-byte loads of aligned groups of
 * 4 samples wherever they lie in one buffer, single loads otherwise: the
 * same values either way; the halo is mostly an L2 hit, the neighbouring tile
 * reads it too), subtracts an offset m (the mean of the 1024 samples before
 * the tile and up to 1024 at its start, always inside the data), and forms
 * the prefix sums of x - m in shared memory with a CUB block scan: at full
 * resolution up to T + (widest "fine" width), and beyond that only every R
 * samples (R-sample sums in a fixed order: pairs within a thread, then warp
 * shuffles), which is all the stages whose stride and widths are multiples
 * of R need. Every boxcar is then a difference of two prefix values,
 * X = P[p + L] - P[p], and S/N = fma(X, 1/sigma_L, (L m - mu_L)/sigma_L), the
 * offset formed in double per tile.
 * Evaluation: each thread owns kQ = 8 consecutive positions (rounds of
 * NT * 8 positions per tile) and keeps their best S/N and width in registers
 * through all stages, evaluating the starts of each stage that fall on its
 * positions (8, 4, 2 or 1 of them); for stages whose width step equals their
 * stride (BoxDIT, ideal) the ends of the starts and 8 widths form a sliding
 * window in registers, so one shared-memory load serves up to 8 boxcars.
 * Stages of stride >= 16 have fewer starts than lanes: there up to 32 lanes
 * share the widths of one start (at least 4 each) and a butterfly keeps the
 * first best (tr_cuda_boxcar_set_split). Shared arrays are padded by one word
 * per 32 (index i + i / 32), so that lanes 8 positions apart hit different
 * banks. Results leave through a per-warp staging area as coalesced stores.
 * Tile: the next power of two >= L_end, at least 256, at most 8192, and at
 * most 32 (8 + sqrt(L_end)) when that is larger than the former (the prefix
 * sums' rounding grows with the tile, the tolerance with sqrt(L_end)); NT =
 * T / 8 threads, 128 .. 512.
 * History and measurements: bench/results/2026-11-22-h100-boxcar (the first
 * FAST kernel: best-so-far in shared memory, bank conflicts) and
 * bench/results/2026-11-22-h100-boxcar-fast (this design; what limits it).
 */
#include "boxcar/boxcar_cuda.h"

#ifdef TR_BOXCAR_HOST_EMU
#include "boxcar/boxcar_emu.h" /* host emulation (tests/core/boxcar/test_boxcar_cuda_host.cpp) */
#else
#include "common/cuda_check.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

/* Block-wide sums through CUB (results valid in thread 0 for the sums). */
template <int NT> struct block_ops {
    using scan_t = cub::BlockScan<float, NT>;
    using reduce_t = cub::BlockReduce<float, NT>;
    using ureduce_t = cub::BlockReduce<unsigned, NT>;
    union storage {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
        typename ureduce_t::TempStorage ureduce;
    };
    static __device__ __forceinline__ float sum(storage &s, float v)
    {
        return reduce_t(s.reduce).Sum(v);
    }
    static __device__ __forceinline__ unsigned usum(storage &s, unsigned v)
    {
        return ureduce_t(s.ureduce).Sum(v);
    }
    static __device__ __forceinline__ float exclusive_sum(storage &s, float v)
    {
        float p;
        scan_t(s.scan).ExclusiveSum(v, p);
        return p;
    }
};

#define TR_DYN_SHARED(type, name) extern __shared__ type name[]
#define TR_LAUNCH(kern, grid, block, smem, stream, ...)                                  \
    kern<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

#include "common/host_stager.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace
{

constexpr int kMeanBack = 1024;  /* samples before the tile in the offset estimate */
constexpr int kMeanAhead = 1024; /* samples at the tile's start, at most */
constexpr int kPaperDitThreads = 512;
constexpr int kPaperIgThreads = 1024;
constexpr int kPaperSpk = 4; /* IGRID steps per kernel */
constexpr int kTileMax = 8192;
constexpr int64_t kPipeElems = (int64_t)1 << 18; /* values per host-path sub-batch */

/* ---- small helpers ---------------------------------------------------- */

__host__ __device__ inline int64_t floor_div(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/* Entries to allocate for n entries in the skewed layout (a multiple of 4). */
__host__ __device__ inline int skew_len(int n)
{
    return (n + (n >> 5) + 1 + 3) & ~3;
}

__device__ __forceinline__ bool finite_f(float v)
{
    return (v - v) == 0.0f;
}

/* Where a call's samples come from: positions [hist_start, pos) in the
 * history (channel c at hist[c * H + g - hist_start]), [pos, end) in the new
 * block (x[c * ldx + g - pos]); 0 outside [0, end). */
struct source {
    const float *hist;
    int64_t hist_start;
    int64_t H;
    const float *x;
    int64_t ldx;
    int64_t pos;
    int64_t end;
    const float *fill; /* NULL: no cleaning of new samples */
    int vec;           /* 16-byte loads of aligned groups of 4 allowed (FAST) */
};

__device__ __forceinline__ float load_sample(const source &s, int c, int64_t g, bool &bad)
{
    bad = false;
    if (g < 0 || g >= s.end) return 0.0f;
    if (g < s.pos) return s.hist[(int64_t)c * s.H + (g - s.hist_start)];
    float v = s.x[(int64_t)c * s.ldx + (g - s.pos)];
    if (s.fill && !finite_f(v)) {
        bad = true;
        v = s.fill[c];
    }
    return v;
}

/* ---- layout kernels --------------------------------------------------- */

/* out[c * ldo + k] = in[k * nchan + c] (time-major to channel-major), k < n. */
template <typename T>
__global__ void to_channel_major(const T *__restrict__ in, T *__restrict__ out, int nchan,
                                 int64_t n, int64_t ldo)
{
    __shared__ T tile[32][33];
    const int64_t k0 = (int64_t)blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int64_t k = k0 + r;
        const int c = c0 + threadIdx.x;
        if (k < n && c < nchan) tile[r][threadIdx.x] = in[k * nchan + c];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int c = c0 + r;
        const int64_t k = k0 + threadIdx.x;
        if (k < n && c < nchan) out[(int64_t)c * ldo + k] = tile[threadIdx.x][r];
    }
}

/* out[k * nchan + c] = in[c * ldi + k] (channel-major to time-major). */
template <typename T>
__global__ void to_time_major(const T *__restrict__ in, T *__restrict__ out, int nchan,
                              int64_t n, int64_t ldi)
{
    __shared__ T tile[32][33];
    const int64_t k0 = (int64_t)blockIdx.x * 32;
    const int c0 = blockIdx.y * 32;
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int c = c0 + r;
        const int64_t k = k0 + threadIdx.x;
        if (k < n && c < nchan) tile[r][threadIdx.x] = in[(int64_t)c * ldi + k];
    }
    __syncthreads();
    for (int r = threadIdx.y; r < 32; r += blockDim.y) {
        const int64_t k = k0 + r;
        const int c = c0 + threadIdx.x;
        if (k < n && c < nchan) out[k * nchan + c] = tile[threadIdx.x][r];
    }
}

/* New history: positions [pos + n - H, pos + n) from the old history and the
 * new block (cleaned like the kernels see them). */
__global__ void history_kernel(source s, float *__restrict__ dst, int64_t new_start)
{
    const int c = blockIdx.y;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < s.H;
         j += (int64_t)gridDim.x * blockDim.x) {
        bool bad;
        dst[(int64_t)c * s.H + j] = load_sample(s, c, new_start + j, bad);
    }
}

/* ---- FAST ---------------------------------------------------------------- */

struct fstage {
    int st;     /* stride in samples (a power of two) */
    int w0, ws; /* widths w0 + m ws (samples) */
    int nw;     /* widths */
    int widx;   /* plan index of width 0 */
    int coarse; /* 1: reads the R-sample prefix array */
    int lsc;    /* log2 of samples per prefix entry (0, or log2 R) */
    int stp;    /* stride in prefix-array entries */
    int w0p;    /* w0 in entries */
    int wsp;    /* ws in entries */
    int window; /* ws == st: sliding-window evaluation */
    int grp;    /* stride >= kQ: lanes that share the widths of one start (1 = none) */
};

struct fplan {
    int n;
    fstage s[TR_BOXCAR_MAX_STAGES];
};

struct fast_args {
    source src;
    float *y;
    int32_t *w;
    int64_t ldy;
    int64_t q0;    /* first output position of the call */
    int64_t n_out; /* outputs per channel */
    int64_t tile0; /* absolute start of tile 0 (multiple of T) */
    int T;
    int R;       /* coarse resolution */
    int F;       /* fine items: positions [0, F) (a multiple of 4 when R > 1) */
    int M;       /* items: F fine + coarse */
    int Ecoarse; /* coarse region length in samples (multiple of 128) */
    int nc;      /* entries of the coarse prefix array: positions 0, R, .., nc-1 R */
    int lat;
    int total; /* widths of the plan */
    int totpad;
    const int32_t *widths; /* plan widths */
    const float *mu;       /* nchan x total (per window: tabn x nchan x total) */
    const float *sigma;
    int64_t tabW;      /* 0: one table; else the statistics window (a multiple of T) */
    int64_t tab0;      /* window of table 0 */
    int64_t tabstride; /* entries per window table: nchan x total */
    int tabn;          /* window tables */
    unsigned long long *count;
};

/* Shared-memory index of entry i: one padding word after every 32, so that
 * threads that own 8 consecutive positions (or 4, or 2 entries) reach 32
 * different banks. */
__device__ __forceinline__ int sk(int i)
{
    return i + (i >> 5);
}

/* Four consecutive samples g .. g + 3 (g a multiple of 4): one 16-byte load
 * when they all lie in the history or all in the new block (and s.vec says
 * the buffers allow it), else four single loads. The same values either way,
 * so the arithmetic that follows never depends on the path. New samples in
 * [clo, chi) that were replaced by fill are counted into cnt. */
__device__ __forceinline__ float4 load4(const source &s, int c, int64_t g, int64_t clo,
                                        int64_t chi, unsigned &cnt)
{
    if (s.vec && g >= s.pos && g + 4 <= s.end && !s.fill)
        return *reinterpret_cast<const float4 *>(s.x + (int64_t)c * s.ldx + (g - s.pos));
    if (s.vec && g >= 0 && g + 4 <= s.pos && g >= s.hist_start)
        return *reinterpret_cast<const float4 *>(s.hist + (int64_t)c * s.H +
                                                 (g - s.hist_start));
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        bool bad;
        v[k] = load_sample(s, c, g + k, bad);
        cnt += bad && g + k >= clo && g + k < chi;
    }
    float4 r;
    r.x = v[0];
    r.y = v[1];
    r.z = v[2];
    r.w = v[3];
    return r;
}

/* Stage evaluation for one thread's kQ consecutive positions u0 .. u0 + kQ - 1
 * (best S/N and width in registers): starts every S positions (S = min(stride,
 * kQ); for stride >= kQ the one start u0 when it is on the stage's grid). */
constexpr int kQ = 8;  /* positions per thread (default; 16 selectable) */
constexpr int kMC = 8; /* widths per window step */

template <int kQ, int S, bool kWin, bool kClip>
__device__ __forceinline__ void eval_stage(const fstage &s, const float *__restrict__ P,
                                           int plast, const float2 *__restrict__ C,
                                           int u0, int64_t lim, float (&best)[kQ],
                                           int (&bw)[kQ])
{
    constexpr int NJ = kQ / S;
    if constexpr (S == kQ) {
        if (s.grp > 1) {
            /* The grp lanes that own positions uo, uo + kQ, .. share the widths
             * of the start uo (width m to lane m % grp), then a butterfly
             * keeps the best (the smaller width on ties: the first in order)
             * and the owner merges it into its running best (strict >). */
            const int g = s.grp;
            const int sub = (u0 & (s.st - 1)) / kQ;
            const int uo = u0 - sub * kQ;
            float b = -INFINITY;
            int bl = 0;
            if (sub < g) {
                const int e0 = uo >> s.lsc;
                const float s0v = P[sk(e0)];
                const int base = e0 + s.w0p;
                for (int m = sub; m < s.nw; m += g) {
                    const float2 cf = C[s.widx + m];
                    const int L = s.w0 + m * s.ws;
                    const float snr =
                        __fmaf_rn(__fsub_rn(P[sk(base + m * s.wsp)], s0v), cf.x, cf.y);
                    bool up = snr > b;
                    if constexpr (kClip) up = up && (int64_t)uo + L <= lim;
                    if (up) {
                        b = snr;
                        bl = L;
                    }
                }
            }
            for (int off = 1; off < g; off <<= 1) {
                const float ob = __shfl_xor_sync(0xffffffffu, b, off);
                const int ol = __shfl_xor_sync(0xffffffffu, bl, off);
                if (ob > b || (ob == b && ol < bl)) {
                    b = ob;
                    bl = ol;
                }
            }
            if (sub == 0 && b > best[0]) {
                best[0] = b;
                bw[0] = bl;
            }
            return;
        }
        if ((u0 & (s.st - 1)) != 0) return; /* not a start of this stage */
    }
    const int e0 = u0 >> s.lsc;
    float s0[NJ];
#pragma unroll
    for (int j = 0; j < NJ; j++)
        s0[j] = P[sk(e0 + j * s.stp)];
    const int base = e0 + s.w0p;
    if constexpr (kWin) {
        /* ends of start j, width m: base + (j + m) stp */
        float buf[NJ + kMC];
#pragma unroll
        for (int i = 0; i < NJ; i++)
            buf[i] = P[sk(min(base + i * s.stp, plast))];
        for (int mc = 0; mc < s.nw; mc += kMC) {
#pragma unroll
            for (int i = 0; i < kMC; i++)
                buf[NJ + i] = P[sk(min(base + (mc + NJ + i) * s.stp, plast))];
#pragma unroll
            for (int mm = 0; mm < kMC; mm++) {
                const int m = mc + mm;
                if (m < s.nw) {
                    const float2 cf = C[s.widx + m];
                    const int L = s.w0 + m * s.ws;
#pragma unroll
                    for (int j = 0; j < NJ; j++) {
                        const float snr =
                            __fmaf_rn(__fsub_rn(buf[j + mm], s0[j]), cf.x, cf.y);
                        bool up = snr > best[j * S];
                        if constexpr (kClip) up = up && (int64_t)(u0 + j * S) + L <= lim;
                        if (up) {
                            best[j * S] = snr;
                            bw[j * S] = L;
                        }
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < NJ; i++)
                buf[i] = buf[kMC + i];
        }
    } else {
        for (int m = 0; m < s.nw; m++) {
            const float2 cf = C[s.widx + m];
            const int L = s.w0 + m * s.ws;
            const int off = base + m * s.wsp;
#pragma unroll
            for (int j = 0; j < NJ; j++) {
                const float e = P[sk(off + j * s.stp)];
                const float snr = __fmaf_rn(__fsub_rn(e, s0[j]), cf.x, cf.y);
                bool up = snr > best[j * S];
                if constexpr (kClip) up = up && (int64_t)(u0 + j * S) + L <= lim;
                if (up) {
                    best[j * S] = snr;
                    bw[j * S] = L;
                }
            }
        }
    }
}

template <int kQ, bool kWin, bool kClip>
__device__ __forceinline__ void eval_stage_s(const fstage &s, const float *P, int plast,
                                             const float2 *C, int u0, int64_t lim,
                                             float (&best)[kQ], int (&bw)[kQ])
{
    switch (s.st) {
    case 1:
        eval_stage<kQ, 1, kWin, kClip>(s, P, plast, C, u0, lim, best, bw);
        break;
    case 2:
        eval_stage<kQ, 2, kWin, kClip>(s, P, plast, C, u0, lim, best, bw);
        break;
    case 4:
        eval_stage<kQ, 4, kWin, kClip>(s, P, plast, C, u0, lim, best, bw);
        break;
    case 8:
        if constexpr (kQ > 8) {
            eval_stage<kQ, 8, kWin, kClip>(s, P, plast, C, u0, lim, best, bw);
            break;
        }
        /* fall through */
    default:
        eval_stage<kQ, kQ, kWin, kClip>(s, P, plast, C, u0, lim, best, bw);
        break;
    }
}

/*
 * FAST kernel: one block per (tile of T positions, channel). Phases: (1) the
 * span [t0, t0 + T + latency) into shared memory, 16-byte loads, the far part
 * as R-sample sums; (2) the offset m and the prefix sums of x - m (CUB block
 * scan); (3) in rounds of NT * kQ positions, every thread evaluates all stages
 * for its kQ consecutive positions with the best S/N and width in registers;
 * (4) the results leave through a per-warp staging area in shared memory as
 * coalesced stores.
 */
template <int NT, int kQ, bool kClip>
__global__ void __launch_bounds__(NT) fast_kernel(const fast_args a, const fplan pl)
{
    using ops = block_ops<NT>;
    __shared__ typename ops::storage tmp;
    __shared__ float s_m;

    TR_DYN_SHARED(float4, smem4);
    float2 *C = reinterpret_cast<float2 *>(smem4);
    float *Qp = reinterpret_cast<float *>(C + a.totpad); /* M + 1 prefix entries */
    float *Pc = Qp + skew_len(a.M + 8);                  /* nc coarse entries */
    float *stg = Pc + skew_len(a.nc);                    /* per warp 32 kQ entries */

    const int c = blockIdx.y;
    const int tid = threadIdx.x;
    const int T = a.T, F = a.F, R = a.R;
    const int64_t t0 = a.tile0 + (int64_t)blockIdx.x * T;
    const source &s = a.src;
    const int64_t cnt_lo = max(t0 + a.lat, s.pos);
    const int64_t cnt_hi = min(t0 + a.lat + T, s.end);
    unsigned cnt = 0;
    /* 1. Fine items: one sample each, four per thread and step. */
    for (int j = 4 * tid; j < F; j += 4 * NT) {
        const float4 v = load4(s, c, t0 + j, cnt_lo, cnt_hi, cnt);
        Qp[sk(1 + j)] = v.x;
        if (j + 1 < F) Qp[sk(2 + j)] = v.y;
        if (j + 2 < F) Qp[sk(3 + j)] = v.z;
        if (j + 3 < F) Qp[sk(4 + j)] = v.w;
    }
    /* 2. Coarse items: sums of R samples ((x0 + x1) + (x2 + x3) per thread, then
     * over R / 4 lanes by shuffles; whole warps iterate, Ecoarse % 128 == 0). */
    for (int o = 4 * tid; o < a.Ecoarse; o += 4 * NT) {
        const float4 v = load4(s, c, t0 + F + o, cnt_lo, cnt_hi, cnt);
        const float p0 = __fadd_rn(v.x, v.y), p1 = __fadd_rn(v.z, v.w);
        if (R == 2) {
            Qp[sk(1 + F + o / 2)] = p0;
            Qp[sk(2 + F + o / 2)] = p1;
        } else {
            float sum = __fadd_rn(p0, p1);
            for (int d = 1; d < R / 4; d *= 2)
                sum = __fadd_rn(sum, __shfl_down_sync(0xffffffffu, sum, d));
            if (o % R == 0) Qp[sk(1 + F + o / R)] = sum;
        }
    }
    /* 3. Offset m: mean of the data in [t0 - kMeanBack, t0 + ahead). */
    {
        const int ahead = min(min(a.lat + 1, kMeanAhead), F);
        float part = 0.0f;
        for (int j = 4 * tid; j < kMeanBack; j += 4 * NT) {
            unsigned dummy = 0;
            const float4 v = load4(s, c, t0 - kMeanBack + j, 0, 0, dummy);
            part = __fadd_rn(part, v.x);
            part = __fadd_rn(part, v.y);
            part = __fadd_rn(part, v.z);
            part = __fadd_rn(part, v.w);
        }
        __syncthreads();
        for (int j = tid; j < ahead; j += NT)
            part = __fadd_rn(part, Qp[sk(1 + j)]);
        const float sum = ops::sum(tmp, part);
        if (tid == 0) {
            const int64_t lo = max((int64_t)0, t0 - kMeanBack);
            const int64_t hi = min(t0 + ahead, s.end);
            const int64_t nv = hi - lo;
            s_m = nv > 0 ? __fdiv_rn(sum, (float)nv) : 0.0f;
        }
        __syncthreads();
    }
    const float m = s_m;
    /* 4. Prefix sums of x - m (items outside [0, end) stay 0). */
    {
        const int ch = (a.M + NT - 1) / NT;
        const int j0 = min(tid * ch, a.M), j1 = min(j0 + ch, a.M);
        /* whole span inside [0, end): every item holds len samples */
        const bool inside = t0 >= 0 && t0 + F + a.Ecoarse <= s.end;
        const float mR = __fmul_rn((float)R, m);
        float tot = 0.0f;
        for (int j = j0; j < j1; j++) {
            float sub;
            if (inside) {
                sub = j < F ? __fmul_rn(1.0f, m) : mR;
            } else {
                const int64_t g = j < F ? t0 + j : t0 + F + (int64_t)(j - F) * R;
                const int len = j < F ? 1 : R;
                const int64_t nv =
                    max((int64_t)0, min(g + len, s.end) - max(g, (int64_t)0));
                sub = __fmul_rn((float)nv, m);
            }
            const float v = __fsub_rn(Qp[sk(1 + j)], sub);
            Qp[sk(1 + j)] = v;
            tot = __fadd_rn(tot, v);
        }
        float pre = ops::exclusive_sum(tmp, tot);
        for (int j = j0; j < j1; j++) {
            pre = __fadd_rn(pre, Qp[sk(1 + j)]);
            Qp[sk(1 + j)] = pre;
        }
        if (tid == 0) Qp[sk(0)] = 0.0f;
    }
    /* 5. Normalisation of this tile: the table of the window that holds it
     * (every position of a tile lies in one window: W is a multiple of T). */
    int64_t tab = (int64_t)c * a.total;
    if (a.tabW > 0) {
        int64_t wi = floor_div(t0 < 0 ? 0 : t0, a.tabW) - a.tab0;
        wi = wi < 0 ? 0 : (wi >= a.tabn ? a.tabn - 1 : wi);
        tab += wi * a.tabstride;
    }
    for (int k = tid; k < a.total; k += NT) {
        const double mu = a.mu[tab + k];
        const double sg = a.sigma[tab + k];
        const double L = a.widths[k];
        C[k] = make_float2((float)(1.0 / sg), (float)((L * (double)m - mu) / sg));
    }
    __syncthreads();
    for (int k = tid; k < a.nc; k += NT) {
        const int v = k * R;
        Pc[sk(k)] = v <= F ? Qp[sk(v)] : Qp[sk(F + (v - F) / R)];
    }
    __syncthreads();
    /* 6. Stages, kQ positions per thread per round; 7. outputs. */
    const int64_t lim = s.end - t0;
    const int lane = tid & 31, warp = tid >> 5;
    float *wst = stg + warp * skew_len(32 * kQ);
    /* every position of the tile is an output of this call (block-uniform) */
    const bool full = t0 >= 0 && t0 >= a.q0 && t0 + T <= a.q0 + a.n_out;
    for (int r0 = 0; r0 < T; r0 += NT * kQ) {
        const int u0 = r0 + tid * kQ;
        float best[kQ];
        int bw[kQ];
#pragma unroll
        for (int j = 0; j < kQ; j++) {
            best[j] = -INFINITY;
            bw[j] = 0;
        }
        if (u0 < T) {
            for (int i = 0; i < pl.n; i++) {
                const fstage &st = pl.s[i];
                const float *P = st.coarse ? Pc : Qp;
                const int plast = st.coarse ? a.nc - 1 : a.M;
                if (st.window)
                    eval_stage_s<kQ, true, kClip>(st, P, plast, C, u0, lim, best, bw);
                else
                    eval_stage_s<kQ, false, kClip>(st, P, plast, C, u0, lim, best, bw);
            }
        }
        /* transpose through the warp's staging area: lane l writes positions
         * l * kQ + j (padded index l * kQ + l * kQ / 32 + j), then stores
         * positions j * 32 + l (padded j * 33 + l), coalesced; a tile whose
         * positions are all outputs of this call (most) skips the per-position
         * tests */
        static_assert(32 % kQ == 0, "kQ divides 32");
        const int wbase = r0 + warp * 32 * kQ;
        const int wl = lane * kQ + ((lane * kQ) >> 5);
        int *wsti = reinterpret_cast<int *>(wst);
        const int64_t o0 = (int64_t)c * a.ldy + (t0 + wbase - a.q0) + lane;
        __syncwarp();
#pragma unroll
        for (int j = 0; j < kQ; j++)
            wst[wl + j] = best[j];
        __syncwarp();
        if (full) {
#pragma unroll
            for (int j = 0; j < kQ; j++)
                if (wbase + j * 32 < T) a.y[o0 + j * 32] = wst[j * 33 + lane];
        } else {
#pragma unroll
            for (int j = 0; j < kQ; j++) {
                const int u = wbase + j * 32 + lane;
                const int64_t p = t0 + u;
                if (u < T && p >= a.q0 && p < a.q0 + a.n_out)
                    a.y[o0 + j * 32] = p < 0 ? 0.0f : wst[j * 33 + lane];
            }
        }
        if (a.w) {
            __syncwarp();
#pragma unroll
            for (int j = 0; j < kQ; j++)
                wsti[wl + j] = bw[j];
            __syncwarp();
            if (full) {
#pragma unroll
                for (int j = 0; j < kQ; j++)
                    if (wbase + j * 32 < T) a.w[o0 + j * 32] = wsti[j * 33 + lane];
            } else {
#pragma unroll
                for (int j = 0; j < kQ; j++) {
                    const int u = wbase + j * 32 + lane;
                    const int64_t p = t0 + u;
                    if (u < T && p >= a.q0 && p < a.q0 + a.n_out)
                        a.w[o0 + j * 32] = p < 0 ? 0 : wsti[j * 33 + lane];
                }
            }
        }
    }
    if (a.count) {
        const unsigned tot = ops::usum(tmp, cnt);
        if (tid == 0 && tot) atomicAdd(a.count, (unsigned long long)tot);
    }
}
/* ---- PAPER: common line ------------------------------------------------ */

/* line[c * ldl + j] = sample a0 + j (cleaned; new samples counted once). */
__global__ void line_kernel(source s, float *__restrict__ line, int64_t ldl, int64_t a0,
                            int64_t nline, unsigned long long *count)
{
    const int c = blockIdx.y;
    unsigned cnt = 0;
    for (int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; j < nline;
         j += (int64_t)gridDim.x * blockDim.x) {
        bool bad;
        const int64_t g = a0 + j;
        line[(int64_t)c * ldl + j] = load_sample(s, c, g, bad);
        cnt += bad;
    }
    if (count && cnt) atomicAdd(count, (unsigned long long)cnt);
}

/* ---- PAPER: BoxDIT (Algorithm 2) --------------------------------------- */

struct dit_args {
    const float *xi;    /* x^i, channel c at xi[c * ldx + n] */
    const float *Xprev; /* X^{i-1} (NULL for i = 0), ldX */
    float *Xnext;       /* X^i at even n (n/2), ldX; NULL for the last iteration */
    float *xnext;       /* x^{i+1}, ldx */
    float *Yi;          /* Y^i, W^i: ldY */
    int32_t *Wi;
    int64_t ldx, ldX, ldY;
    int64_t nx;         /* valid entries of x^i */
    int64_t ncov;       /* positions processed */
    int64_t nnext;      /* entries of x^{i+1} / X^i to write */
    int B;              /* widths of this iteration (may be cut) */
    int Bfull;          /* B^i (decimation shift) */
    int lmax_prev;      /* LMAX^{i-1} */
    int step;           /* 2^i */
    int64_t lim;        /* boxcar (n, m) valid iff n + m <= lim */
    const float2 *coef; /* nchan x total: (1/sigma, -mu/sigma) */
    int total;
    int widx; /* plan index of m = 1 */
};

template <int WM>
__global__ void __launch_bounds__(kPaperDitThreads)
    paper_dit_kernel(const dit_args a, int nout)
{
    constexpr int NT = kPaperDitThreads;
    __shared__ float s_x[NT + WM];
    __shared__ float s_input[NT];
    __shared__ float s_snr[NT];
    __shared__ int s_widths[NT];
    const int c = blockIdx.y, t = threadIdx.x;
    const int64_t n0 = (int64_t)blockIdx.x * nout;
    const float *xc = a.xi + (int64_t)c * a.ldx;
    for (int j = t; j < NT + WM; j += NT)
        s_x[j] = n0 + j < a.nx ? xc[n0 + j] : 0.0f;
    __syncthreads();
    const float2 *cf = a.coef + (int64_t)c * a.total + a.widx;
    const float *Xp = a.Xprev ? a.Xprev + (int64_t)c * a.ldX : nullptr;
    const int64_t n = n0 + t;

    /* Partial sums B[n; k+1] of this thread's position. */
    float Bw[WM];
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < WM; k++) {
        acc = __fadd_rn(acc, s_x[t + k]);
        Bw[k] = acc;
    }
    float snr_best = -INFINITY;
    int width = 0;
    {
        const float X0 = Xp && n < a.ncov ? Xp[n] : 0.0f;
#pragma unroll
        for (int k = 0; k < WM; k++) {
            const int m = k + 1;
            if (m <= a.B && n + m <= a.lim) {
                const float2 q = cf[m - 1];
                const float snr = __fmaf_rn(__fadd_rn(X0, Bw[k]), q.x, q.y);
                if (snr > snr_best) {
                    snr_best = snr;
                    width = a.lmax_prev + a.step * m;
                }
            }
        }
    }
    if (a.Bfull == WM && a.Xnext && (n & 1) == 0 && t < nout && n / 2 < a.nnext) {
        const float X0 = Xp && n < a.ncov ? Xp[n] : 0.0f;
        a.Xnext[(int64_t)c * a.ldX + n / 2] = __fadd_rn(X0, Bw[WM - 1]);
    }
    s_input[t] = Bw[WM - 1];
    s_snr[t] = snr_best;
    s_widths[t] = width;
    __syncthreads();
    /* Thread t extends the boxcars of position t - w. */
    for (int w = WM; w < a.B; w += WM) {
        const int tp = t - w;
        if (tp >= 0) {
            const float temp = s_input[tp];
            float snr = s_snr[tp];
            int wd = s_widths[tp];
            const int64_t np = n0 + tp;
            const float X0 = Xp && np < a.ncov ? Xp[np] : 0.0f;
#pragma unroll
            for (int k = 0; k < WM; k++) {
                Bw[k] = __fadd_rn(Bw[k], temp);
                const int m = w + k + 1;
                if (m <= a.B && np + m <= a.lim) {
                    const float2 q = cf[m - 1];
                    const float v = __fmaf_rn(__fadd_rn(X0, Bw[k]), q.x, q.y);
                    if (v > snr) {
                        snr = v;
                        wd = a.lmax_prev + a.step * m;
                    }
                }
            }
            s_snr[tp] = snr;
            s_widths[tp] = wd;
            /* The full sum of B^i samples: the running value X^i (even n). */
            if (w + WM >= a.Bfull && a.Xnext && (np & 1) == 0 && tp < nout &&
                np / 2 < a.nnext)
                a.Xnext[(int64_t)c * a.ldX + np / 2] = __fadd_rn(X0, Bw[WM - 1]);
        }
        __syncthreads();
    }
    if (t < nout && n < a.ncov) {
        a.Yi[(int64_t)c * a.ldY + n] = s_snr[t];
        a.Wi[(int64_t)c * a.ldY + n] = s_widths[t];
        /* Decimation for the next iteration (eq. 13). */
        if (a.xnext && (n & 1) == 0 && n / 2 < a.nnext) {
            const int j = t + a.Bfull;
            const float v0 = j < NT + WM ? s_x[j] : (n0 + j < a.nx ? xc[n0 + j] : 0.0f);
            const float v1 = j + 1 < NT + WM
                                 ? s_x[j + 1]
                                 : (n0 + j + 1 < a.nx ? xc[n0 + j + 1] : 0.0f);
            a.xnext[(int64_t)c * a.ldx + n / 2] = __fadd_rn(v0, v1);
        }
    }
}

/* Per-iteration outputs of BoxDIT: level i at Yall[off[i] + c * ld[i] + n]. */
struct levels_desc {
    int n;
    int64_t off[TR_BOXCAR_MAX_STAGES];
    int64_t ld[TR_BOXCAR_MAX_STAGES];
};

/* Y[p], W[p] = first best over iterations (stride 2^i) at input positions. */
__global__ void paper_combine_kernel(const float *Yall, const int32_t *Wall,
                                     const levels_desc lv, int64_t u0, int64_t q0,
                                     int64_t n_out, float *y, int32_t *w, int64_t ldy)
{
    const int c = blockIdx.y;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_out;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t u = u0 + k, p = q0 + k;
        float best = -INFINITY;
        int bw = 0;
        for (int i = 0; i < lv.n; i++) {
            if (u & ((1ll << i) - 1)) break; /* not a start of iteration i (nor later) */
            const int64_t o = lv.off[i] + (int64_t)c * lv.ld[i] + (u >> i);
            const float v = Yall[o];
            if (v > best) {
                best = v;
                bw = Wall[o];
            }
        }
        const int64_t o = (int64_t)c * ldy + k;
        y[o] = p < 0 ? 0.0f : best;
        if (w) w[o] = p < 0 ? 0 : bw;
    }
}

/* ---- PAPER: IGRID (Algorithms 4-5) ------------------------------------- */

struct ig_step {
    int i;    /* step index */
    int st;   /* nominal stride */
    int nw;   /* widths */
    int ws;   /* width step */
    int D;    /* min(i, d) */
    int widx; /* plan index of m = 0 */
};

struct ig_args {
    const float *din; /* zero-shift layer at resolution 2^r, ldl */
    float *dout;      /* zero-shift layer at resolution 2^rout (NULL: none) */
    float *Y;         /* input-resolution best, ldl */
    int32_t *W;
    int64_t ldl;
    int64_t nin;       /* entries of din */
    int64_t ncov;      /* positions (resolution 2^r) processed */
    int64_t nout_next; /* entries of dout */
    int r;             /* log2 resolution */
    int rout;
    int i0, i1; /* evaluated steps [i0, i1) */
    int first;  /* first kernel: initialise Y, W */
    int64_t D;  /* data end relative to a0 */
    const float2 *coef;
    int total;
    ig_step steps[TR_BOXCAR_MAX_STAGES];
};

template <int DEPTH>
__global__ void __launch_bounds__(kPaperIgThreads)
    paper_ig_kernel(const ig_args a, int nout)
{
    constexpr int NT = kPaperIgThreads;
    constexpr int NB = DEPTH + 1;
    TR_DYN_SHARED(float, sbuf); /* NB arrays of NT floats */
    const int c = blockIdx.y, t = threadIdx.x;
    const int64_t n0 = (int64_t)blockIdx.x * nout;
    const int64_t n = n0 + t;
    const float *dc = a.din + (int64_t)c * a.ldl;
    sbuf[t] = n < a.nin ? dc[n] : 0.0f;
    const int64_t u = n << a.r; /* input position relative to a0 */
    float best = -INFINITY;
    int bw = 0;
    const bool own = t < nout && n < a.ncov;
    if (own && !a.first) {
        best = a.Y[(int64_t)c * a.ldl + u];
        bw = a.W[(int64_t)c * a.ldl + u];
    }
    const float2 *cf = a.coef + (int64_t)c * a.total;
    __syncthreads();
    for (int i = a.r; i < a.i1; i++) {
        const int j = i - a.r;
        float *cur = sbuf + (j % NB) * NT;
        if (j > 0) {
            /* In-place layer formation: a_j[t] = a_{j-1}[t] + a_{j-1}[t + 2^{j-1}]. */
            const float *prev = sbuf + ((j - 1) % NB) * NT;
            const int h = 1 << (j - 1);
            const float v = t + h < NT ? __fadd_rn(prev[t], prev[t + h]) : 0.0f;
            __syncthreads(); /* cur may alias the array of step j - NB */
            cur[t] = v;
            __syncthreads();
        }
        /* The zero-shift layer of the next kernel's resolution. */
        if (a.dout && j == a.rout - a.r && t < nout && n < a.ncov) {
            const int sh = a.rout - a.r;
            if ((n & ((1 << sh) - 1)) == 0 && (n >> sh) < a.nout_next)
                a.dout[(int64_t)c * a.ldl + (n >> sh)] = cur[t];
        }
        if (i < a.i0) continue;
        const ig_step &sp = a.steps[i];
        if (!own || (u & (sp.st - 1)) != 0) continue; /* not a nominal start */
        for (int m = 0; m < sp.nw; m++) {
            /* width 2^i + sum of the set bits of m (MSB first) times 2^{i-k} */
            float v = cur[t];
            int64_t off = (int64_t)1 << i;
            for (int k = 1; k <= sp.D; k++) {
                if ((m >> (sp.D - k)) & 1) {
                    const float *lay = sbuf + ((j - k) % NB) * NT;
                    const int64_t idx = t + (off >> a.r);
                    v = __fadd_rn(v, idx < NT ? lay[idx] : 0.0f);
                    off += (int64_t)1 << (i - k);
                }
            }
            const int L = (1 << i) + m * sp.ws;
            if (u + L > a.D) continue;
            const float2 q = cf[sp.widx + m];
            const float snr = __fmaf_rn(v, q.x, q.y);
            if (snr > best) {
                best = snr;
                bw = L;
            }
        }
    }
    if (own) {
        a.Y[(int64_t)c * a.ldl + u] = best;
        a.W[(int64_t)c * a.ldl + u] = bw;
    }
}

/* Input-resolution Y, W (line coordinates) to the caller's positions. */
__global__ void paper_store_kernel(const float *Y, const int32_t *W, int64_t ldl,
                                   int64_t u0, int64_t q0, int64_t n_out, float *y,
                                   int32_t *w, int64_t ldy)
{
    const int c = blockIdx.y;
    for (int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n_out;
         k += (int64_t)gridDim.x * blockDim.x) {
        const int64_t p = q0 + k;
        const int64_t o = (int64_t)c * ldy + k;
        y[o] = p < 0 ? 0.0f : Y[(int64_t)c * ldl + u0 + k];
        if (w) w[o] = p < 0 ? 0 : W[(int64_t)c * ldl + u0 + k];
    }
}

/* ---- the context ---------------------------------------------------------- */

} // namespace

struct tr_cuda_boxcar {
    int device = -1;
    tr_boxcar_plan plan{};
    uint32_t nchan = 0;
    tr_variant variant = TR_VARIANT_FAST;
    size_t batch = 0;
    int64_t lat = 0, lend = 0;
    int64_t A = 1;    /* largest stride */
    int64_t Ap = 1;   /* PAPER alignment of a call's first position */
    int64_t H = 0;    /* history samples per channel */
    int64_t nmax = 0; /* outputs per channel per launch, at most */
    uint32_t total = 0;
    uint64_t pos = 0;
    cudaStream_t stream = nullptr;
    float *hist[2] = {nullptr, nullptr};
    int cur = 0;
    float *mu = nullptr, *sigma = nullptr, *fill = nullptr;
    float2 *coef = nullptr;
    int has_fill = 0;
    int tables_set = 0; /* last_* hold what the device has */
    std::vector<float> last_mu, last_sg, last_fill;
    int32_t *widths = nullptr;
    std::vector<uint32_t> hwidths;
    float *in = nullptr; /* nchan * nmax: channel-major new samples (device path) */
    float *y = nullptr;  /* nchan * nmax outputs, channel-major (device path) */
    int32_t *w = nullptr;
    unsigned long long *count = nullptr;
    /* Host path: sub-batches of nbp samples per channel through two slots, the
     * copies in (stream sh) and out (stream sd) overlapping the search (stream)
     * of the neighbouring sub-batches. Slot buffers hold nchan * hcap values. */
    int64_t nbp = 0, hcap = 0;
    cudaStream_t sh = nullptr, sd = nullptr;
    cudaEvent_t ev_h[2] = {nullptr, nullptr}, ev_c[2] = {nullptr, nullptr},
                ev_d[2] = {nullptr, nullptr};
    float *hin[2] = {nullptr, nullptr};   /* input as the caller lays it out */
    float *hcm[2] = {nullptr, nullptr};   /* channel-major input (nchan > 1) */
    float *hy[2] = {nullptr, nullptr};    /* channel-major S/N */
    int32_t *hw[2] = {nullptr, nullptr};  /* channel-major widths */
    float *hoy[2] = {nullptr, nullptr};   /* time-major S/N (nchan > 1) */
    int32_t *how[2] = {nullptr, nullptr}; /* time-major widths (nchan > 1) */
    /* pageable caller buffers: page-locked staging, copied by host threads */
    float *px[2] = {nullptr, nullptr};   /* input of a sub-batch, device layout */
    float *py[2] = {nullptr, nullptr};   /* S/N of a sub-batch, device layout */
    int32_t *pw[2] = {nullptr, nullptr}; /* widths */
    tr_host_stager *stager = nullptr;
    /* Per-window tables (tr_cuda_boxcar_set_norm_windows): wmu[(j * nchan + c)
     * * total + k] for windows tab0 .. tab0 + tabn - 1 of tabW samples. */
    float *wmu = nullptr, *wsig = nullptr;
    int64_t wcap = 0; /* windows the tables hold */
    int64_t tabW = 0, tab0 = 0;
    int tabn = 0;
    int win_mode = 0; /* 1: the per-window tables are in effect */
    /* FAST */
    int T = 0, Tmax = 0;
    int split = 1; /* lane-shared widths of coarse stages (tr_cuda_boxcar_set_split) */
    int kq = kQ;   /* positions per thread (tr_cuda_boxcar_set_positions) */
    size_t smem_max = 0;
    fplan fp{};
    int R = 1, F = 0, M = 0, Ecoarse = 0, nc = 0;
    size_t fast_smem = 0;
    /* PAPER */
    int64_t ldl = 0; /* line entries per channel */
    float *line[2] = {nullptr, nullptr};
    float *X[2] = {nullptr, nullptr};
    float *Yl = nullptr; /* per-level / input-resolution outputs */
    int32_t *Wl = nullptr;
};

namespace
{

/* Threads of the FAST block for tile T: kq positions each, 128 .. 512. */
static int fast_threads(int T, int kq)
{
    return (int)std::min<int64_t>(512, std::max<int64_t>(128, T / kq));
}

static size_t fast_smem_bytes(int T, int kq, int M, int nc, int totpad)
{
    return (size_t)totpad * 8 + (size_t)skew_len(M + 8) * 4 + (size_t)skew_len(nc) * 4 +
           (size_t)(fast_threads(T, kq) / 32) * skew_len(32 * kq) * 4;
}

/* The FAST layout for tile T: resolution R of the far halo and the stages. */
static void fast_layout(tr_cuda_boxcar *q, int T)
{
    const tr_boxcar_plan &p = q->plan;
    const int64_t E0 = T + q->lat;
    int64_t best_cost = -1;
    for (int R = 1; R <= 32; R *= 2) {
        const int64_t R4 = std::max(R, 4); /* fine items in groups of 4 */
        int64_t maxfine = 0;
        for (uint32_t i = 0; i < p.nstages; i++) {
            const tr_boxcar_stage &s = p.stages[i];
            const bool coarse = R > 1 && s.stride % R == 0 && s.width_first % R == 0 &&
                                (s.nwidths == 1 || s.width_step % R == 0);
            if (!coarse) maxfine = std::max<int64_t>(maxfine, tr_boxcar_stage_last(&s));
        }
        const int64_t E = R > 1 ? (E0 + R4 - 1) / R4 * R4 : E0;
        const int64_t F = std::min(E, (T + maxfine + R4 - 1) / R4 * R4);
        const int64_t Ec = (E - F + 127) / 128 * 128;
        const int64_t M = F + Ec / R;
        const int64_t cost = M + (R > 1 ? (F + Ec) / R : 0);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            q->R = R;
            q->F = (int)F;
            q->Ecoarse = R > 1 ? (int)Ec : 0;
            q->M = (int)(R > 1 ? M : E);
            if (R == 1) q->F = (int)E;
            q->nc = R > 1 ? (int)((F + Ec) / R + 1) : 1;
        }
    }
    q->T = T;
    fplan &fp = q->fp;
    fp.n = (int)p.nstages;
    uint32_t widx = 0;
    for (uint32_t i = 0; i < p.nstages; i++) {
        const tr_boxcar_stage &s = p.stages[i];
        fstage &f = fp.s[i];
        const int R = q->R;
        f.st = (int)s.stride;
        f.w0 = (int)s.width_first;
        f.ws = (int)s.width_step;
        f.nw = (int)s.nwidths;
        f.widx = (int)widx;
        f.coarse = R > 1 && s.stride % R == 0 && s.width_first % R == 0 &&
                   (s.nwidths == 1 || s.width_step % R == 0);
        const int sc = f.coarse ? R : 1;
        f.lsc = 0;
        while ((1 << f.lsc) < sc)
            f.lsc++;
        f.stp = f.st / sc;
        f.w0p = f.w0 / sc;
        f.wsp = f.ws / sc;
        f.window = s.nwidths > 1 && s.width_step == s.stride;
        /* lanes per start for strides >= 2 kq: at least 4 widths each, within
         * a warp, only when whole warps take part (T >= 32 kq) */
        f.grp = 1;
        if (q->split && f.st >= 2 * q->kq && T >= 32 * q->kq) {
            f.grp = std::min(f.st / q->kq, 32);
            while (f.grp > 1 && f.nw < 4 * f.grp)
                f.grp /= 2;
        }
        widx += s.nwidths;
    }
    q->fast_smem = fast_smem_bytes(T, q->kq, q->M, q->nc, (int)((q->total + 1) & ~1u));
}

/* Every FAST kernel instance (attributes at create). */
using fast_fn = void (*)(const fast_args, const fplan);
static const fast_fn kFastFns[] = {
    fast_kernel<128, 8, false>,  fast_kernel<128, 8, true>,   fast_kernel<256, 8, false>,
    fast_kernel<256, 8, true>,   fast_kernel<512, 8, false>,  fast_kernel<512, 8, true>,
    fast_kernel<128, 16, false>, fast_kernel<128, 16, true>,  fast_kernel<256, 16, false>,
    fast_kernel<256, 16, true>,  fast_kernel<512, 16, false>, fast_kernel<512, 16, true>};

/* The FAST kernel instance as one macro argument of TR_LAUNCH. */
#define TR_FAST_KERNEL(nt, kq, clip) fast_kernel<nt, kq, clip>

template <int NT, int KQ>
static void launch_fast(bool clip, dim3 grid, size_t smem, cudaStream_t st,
                        const fast_args &a, const fplan &fp)
{
    if (clip)
        TR_LAUNCH(TR_FAST_KERNEL(NT, KQ, true), grid, NT, smem, st, a, fp);
    else
        TR_LAUNCH(TR_FAST_KERNEL(NT, KQ, false), grid, NT, smem, st, a, fp);
}

/* Channel chunks: grid.y is at most 65535. */
constexpr uint32_t kMaxGridY = 65535;

static tr_status upload_norm(tr_cuda_boxcar *q, const std::vector<float> &mu,
                             const std::vector<float> &sg, const float *fill,
                             tr_error *err)
{
    const size_t nt = (size_t)q->nchan * q->total;
    q->win_mode = 0;
    /* The same tables again (a stream that resets, one window): nothing to do. */
    if (q->tables_set && mu == q->last_mu && sg == q->last_sg &&
        (fill != nullptr) == (q->has_fill != 0) &&
        (!fill ||
         std::memcmp(fill, q->last_fill.data(), q->nchan * sizeof(float)) == 0)) {
        tr_clear(err);
        return TR_OK;
    }
    q->tables_set = 0;
    std::vector<float2> coef(nt);
    for (size_t k = 0; k < nt; k++) {
        if (!(sg[k] > 0.0f) || !std::isfinite(sg[k]) || !std::isfinite(mu[k]))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar/cuda: normalisation entry %zu: sigma must be > 0 and "
                           "finite, mu finite",
                           k);
        coef[k] =
            make_float2((float)(1.0 / (double)sg[k]), (float)(-(double)mu[k] / sg[k]));
    }
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    TR_CUDA_TRY(
        cudaMemcpyAsync(q->mu, mu.data(), nt * 4, cudaMemcpyHostToDevice, q->stream), err,
        "boxcar/cuda: upload mu_L", fail);
    TR_CUDA_TRY(
        cudaMemcpyAsync(q->sigma, sg.data(), nt * 4, cudaMemcpyHostToDevice, q->stream),
        err, "boxcar/cuda: upload sigma_L", fail);
    TR_CUDA_TRY(
        cudaMemcpyAsync(q->coef, coef.data(), nt * 8, cudaMemcpyHostToDevice, q->stream),
        err, "boxcar/cuda: upload coefficients", fail);
    q->has_fill = fill != nullptr;
    if (fill)
        TR_CUDA_TRY(cudaMemcpyAsync(q->fill, fill, (size_t)q->nchan * 4,
                                    cudaMemcpyHostToDevice, q->stream),
                    err, "boxcar/cuda: upload fill values", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(q->stream), err, "boxcar/cuda: upload tables",
                fail);
    q->last_mu = mu;
    q->last_sg = sg;
    if (fill)
        q->last_fill.assign(fill, fill + q->nchan);
    else
        q->last_fill.clear();
    q->tables_set = 1;
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

static tr_status white_tables(tr_cuda_boxcar *q, const double *mean, const double *sigma,
                              const float *fill, tr_error *err)
{
    const size_t nt = (size_t)q->nchan * q->total;
    std::vector<float> mu(nt), sg(nt);
    for (uint32_t c = 0; c < q->nchan; c++) {
        const double m = mean ? mean[c] : 0.0, s = sigma ? sigma[c] : 1.0;
        if (!(s > 0.0) || !std::isfinite(s) || !std::isfinite(m))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar/cuda: channel %u: sigma must be > 0 and finite", c);
        for (uint32_t k = 0; k < q->total; k++) {
            const double L = q->hwidths[k];
            mu[(size_t)c * q->total + k] = (float)(L * m);
            sg[(size_t)c * q->total + k] = (float)(std::sqrt(L) * s);
        }
    }
    return upload_norm(q, mu, sg, fill, err);
}

/* One launch worth of work: n_out outputs from q0, data up to end. */
static tr_status compute_fast(tr_cuda_boxcar *q, const source &src, int64_t q0,
                              int64_t n_out, float *y, int32_t *w, int64_t ldy,
                              tr_error *err)
{
    const cudaStream_t st = q->stream;
    {
        fast_args a{};
        a.src = src;
        a.ldy = ldy;
        a.q0 = q0;
        a.n_out = n_out;
        a.T = q->T;
        a.tile0 = floor_div(q0, q->T) * q->T;
        a.R = q->R;
        a.F = q->F;
        a.M = q->M;
        a.Ecoarse = q->Ecoarse;
        a.nc = q->nc;
        a.lat = (int)q->lat;
        a.total = (int)q->total;
        a.totpad = (int)((q->total + 1) & ~1u);
        a.widths = q->widths;
        a.count = src.fill ? q->count : nullptr;
        const int64_t ntiles = floor_div(q0 + n_out - 1, q->T) - floor_div(q0, q->T) + 1;
        const bool clip = src.end < q0 + n_out + q->lat;
        for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
            const uint32_t nc = std::min(kMaxGridY, q->nchan - c0);
            a.src.hist = src.hist + (int64_t)c0 * src.H;
            a.src.x = src.x ? src.x + (int64_t)c0 * src.ldx : nullptr;
            a.src.fill = src.fill ? src.fill + c0 : nullptr;
            a.y = y + (int64_t)c0 * ldy;
            a.w = w ? w + (int64_t)c0 * ldy : nullptr;
            if (q->win_mode) {
                a.mu = q->wmu + (size_t)c0 * q->total;
                a.sigma = q->wsig + (size_t)c0 * q->total;
                a.tabW = q->tabW;
                a.tab0 = q->tab0;
                a.tabn = q->tabn;
                a.tabstride = (int64_t)q->nchan * q->total;
            } else {
                a.mu = q->mu + (size_t)c0 * q->total;
                a.sigma = q->sigma + (size_t)c0 * q->total;
            }
            const dim3 grid((unsigned)ntiles, nc);
            const int nt = fast_threads(q->T, q->kq);
            const size_t sm = q->fast_smem;
            if (q->kq == 16) {
                if (nt == 512)
                    launch_fast<512, 16>(clip, grid, sm, st, a, q->fp);
                else if (nt == 256)
                    launch_fast<256, 16>(clip, grid, sm, st, a, q->fp);
                else
                    launch_fast<128, 16>(clip, grid, sm, st, a, q->fp);
            } else {
                if (nt == 512)
                    launch_fast<512, 8>(clip, grid, sm, st, a, q->fp);
                else if (nt == 256)
                    launch_fast<256, 8>(clip, grid, sm, st, a, q->fp);
                else
                    launch_fast<128, 8>(clip, grid, sm, st, a, q->fp);
            }
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: FAST kernel launch", fail);
        }
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

static tr_status compute_paper(tr_cuda_boxcar *q, const source &src, int64_t q0,
                               int64_t n_out, float *y, int32_t *w, int64_t ldy,
                               tr_error *err)
{
    const cudaStream_t st = q->stream;
    const tr_boxcar_plan &p = q->plan;
    /* The cleaned line [a0, a0 + nl). */
    const int64_t a0 = floor_div(q0, q->Ap) * q->Ap;
    const int64_t u0 = q0 - a0;
    const int64_t nl = (u0 + n_out + q->lend + 2 * q->Ap + q->Ap - 1) / q->Ap * q->Ap;
    const int64_t D = src.end - a0;
    if (nl > q->ldl)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: internal: line too short");
    for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
        const uint32_t nc = std::min(kMaxGridY, q->nchan - c0);
        source s = src;
        s.hist = src.hist + (int64_t)c0 * src.H;
        s.x = src.x ? src.x + (int64_t)c0 * src.ldx : nullptr;
        s.fill = src.fill ? src.fill + c0 : nullptr;
        const int64_t off = (int64_t)c0 * q->ldl;
        const float2 *coef = q->coef + (size_t)c0 * q->total;
        float *yc = y + (int64_t)c0 * ldy;
        int32_t *wc = w ? w + (int64_t)c0 * ldy : nullptr;
        {
            const dim3 grid((unsigned)std::min<int64_t>((nl + 255) / 256, 4096), nc);
            TR_LAUNCH(line_kernel, grid, 256, 0, st, s, q->line[0] + off, q->ldl, a0, nl,
                      src.fill ? q->count : nullptr);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: line kernel launch", fail);
        }
        if (p.algorithm != TR_BOXCAR_IGRID) {
            levels_desc lv{};
            lv.n = (int)p.nstages;
            int64_t yoff = 0;
            for (uint32_t i = 0; i < p.nstages; i++) {
                const int64_t ncov = (nl + ((int64_t)1 << i) - 1) >> i;
                lv.off[i] = yoff;
                lv.ld[i] = ncov;
                yoff += ncov * nc;
            }
            for (uint32_t i = 0; i < p.nstages; i++) {
                const tr_boxcar_stage &sg = p.stages[i];
                const bool last = i + 1 == p.nstages;
                const int B = (int)sg.nwidths;
                const int Bfull = (int)sg.nwidths;
                const int wm = Bfull % 4 == 0 ? 4 : (Bfull % 2 == 0 ? 2 : 1);
                const int bround = (B + wm - 1) / wm * wm;
                const int nout = (kPaperDitThreads - bround) & ~1;
                dit_args a{};
                a.xi = q->line[i & 1] + off;
                a.xnext = last ? nullptr : q->line[(i + 1) & 1] + off;
                a.Xprev = i == 0 ? nullptr : q->X[i & 1] + off;
                a.Xnext = last ? nullptr : q->X[(i + 1) & 1] + off;
                a.Yi = q->Yl + lv.off[i];
                a.Wi = q->Wl + lv.off[i];
                a.ldx = q->ldl;
                a.ldX = q->ldl;
                a.ldY = lv.ld[i];
                a.nx = lv.ld[i];
                a.ncov = lv.ld[i];
                a.nnext = last ? 0 : lv.ld[i + 1];
                a.B = B;
                a.Bfull = Bfull;
                a.lmax_prev = (int)sg.base;
                a.step = (int)sg.stride;
                a.lim = D < (int64_t)sg.base ? -1 : (D - (int64_t)sg.base) >> i;
                a.coef = coef;
                a.total = (int)q->total;
                uint32_t widx = 0;
                for (uint32_t k = 0; k < i; k++)
                    widx += p.stages[k].nwidths;
                a.widx = (int)widx;
                const dim3 grid((unsigned)((a.ncov + nout - 1) / nout), nc);
                if (wm == 4)
                    TR_LAUNCH(paper_dit_kernel<4>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                else if (wm == 2)
                    TR_LAUNCH(paper_dit_kernel<2>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                else
                    TR_LAUNCH(paper_dit_kernel<1>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: BoxDIT kernel launch",
                            fail);
            }
            const dim3 grid((unsigned)std::min<int64_t>((n_out + 255) / 256, 4096), nc);
            TR_LAUNCH(paper_combine_kernel, grid, 256, 0, st, q->Yl, q->Wl, lv, u0, q0,
                      n_out, yc, wc, ldy);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: combine kernel launch",
                        fail);
        } else {
            const int d = (int)p.depth;
            int lgP = 0;
            while ((1u << lgP) < p.layers)
                lgP++;
            const int e = std::max(lgP, d);
            const int spk = std::min(kPaperSpk, 9 - e);
            ig_args a{};
            a.ldl = q->ldl;
            a.Y = q->Yl + off;
            a.W = q->Wl + off;
            a.D = D;
            a.coef = coef;
            a.total = (int)q->total;
            uint32_t widx = 0;
            for (uint32_t i = 0; i < p.nstages; i++) {
                const tr_boxcar_stage &sg = p.stages[i];
                ig_step &sp = a.steps[i];
                sp.i = (int)i;
                sp.st = (int)sg.stride;
                sp.nw = (int)sg.nwidths;
                sp.ws = (int)sg.width_step;
                sp.D = std::min<int>((int)i, d);
                sp.widx = (int)widx;
                widx += sg.nwidths;
            }
            int src_buf = 0;
            const float *din = q->line[0] + off;
            const int nst = (int)p.nstages;
            for (int i0 = 0; i0 < nst; i0 += spk) {
                const int i1 = std::min(i0 + spk, nst);
                const int r = std::max(0, i0 - e);
                const int rout = std::max(0, i1 - e);
                a.din = din;
                a.r = r;
                a.rout = rout;
                a.i0 = i0;
                a.i1 = i1;
                a.first = i0 == 0;
                a.nin = (nl + ((int64_t)1 << r) - 1) >> r;
                a.ncov = a.nin;
                a.dout = nullptr;
                if (i1 < nst && rout > r) {
                    a.dout = q->line[1 - src_buf] + off;
                    a.nout_next = (nl + ((int64_t)1 << rout) - 1) >> rout;
                }
                const int nout = kPaperIgThreads - (1 << (i1 - r));
                const dim3 grid((unsigned)((a.ncov + nout - 1) / nout), nc);
                const size_t sm = (size_t)(d + 1) * kPaperIgThreads * 4;
                if (d == 1)
                    TR_LAUNCH(paper_ig_kernel<1>, grid, kPaperIgThreads, sm, st, a, nout);
                else if (d == 2)
                    TR_LAUNCH(paper_ig_kernel<2>, grid, kPaperIgThreads, sm, st, a, nout);
                else
                    TR_LAUNCH(paper_ig_kernel<3>, grid, kPaperIgThreads, sm, st, a, nout);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: IGRID kernel launch",
                            fail);
                if (a.dout) {
                    src_buf = 1 - src_buf;
                    din = a.dout;
                }
            }
            const dim3 grid((unsigned)std::min<int64_t>((n_out + 255) / 256, 4096), nc);
            TR_LAUNCH(paper_store_kernel, grid, 256, 0, st, a.Y, a.W, q->ldl, u0, q0,
                      n_out, yc, wc, ldy);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: store kernel launch",
                        fail);
        }
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

static tr_status compute(tr_cuda_boxcar *q, const source &src, int64_t q0, int64_t n_out,
                         float *y, int32_t *w, int64_t ldy, tr_error *err)
{
    if (q->variant == TR_VARIANT_FAST)
        return compute_fast(q, src, q0, n_out, y, w, ldy, err);
    return compute_paper(q, src, q0, n_out, y, w, ldy, err);
}

static void release(tr_cuda_boxcar *q)
{
    if (q->device >= 0) cudaSetDevice(q->device);
    void *ptrs[] = {q->hist[0], q->hist[1], q->mu,     q->sigma,  q->fill,   q->coef,
                    q->widths,  q->in,      q->y,      q->w,      q->count,  q->line[0],
                    q->line[1], q->X[0],    q->X[1],   q->Yl,     q->Wl,     q->hin[0],
                    q->hin[1],  q->hcm[0],  q->hcm[1], q->hy[0],  q->hy[1],  q->hw[0],
                    q->hw[1],   q->hoy[0],  q->hoy[1], q->how[0], q->how[1], q->wmu,
                    q->wsig};
    for (void *p : ptrs)
        if (p) cudaFree(p);
    for (int b = 0; b < 2; b++) {
        if (q->ev_h[b]) cudaEventDestroy(q->ev_h[b]);
        if (q->ev_c[b]) cudaEventDestroy(q->ev_c[b]);
        if (q->ev_d[b]) cudaEventDestroy(q->ev_d[b]);
    }
    for (int b = 0; b < 2; b++) {
        if (q->px[b]) cudaFreeHost(q->px[b]);
        if (q->py[b]) cudaFreeHost(q->py[b]);
        if (q->pw[b]) cudaFreeHost(q->pw[b]);
    }
    delete q->stager;
    q->stager = nullptr;
    if (q->stream) cudaStreamDestroy(q->stream);
    if (q->sh) cudaStreamDestroy(q->sh);
    if (q->sd) cudaStreamDestroy(q->sd);
}

template <typename T> static cudaError_t dev_alloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, std::max<size_t>(count, 1) * sizeof(T));
}

/* Device path, time-major: the channel-major results of this batch into the
 * caller's device buffers (CHANNEL_MAJOR was written in place). */
static tr_status deliver(tr_cuda_boxcar *q, size_t nb, size_t k0, float *snr,
                         int32_t *width, tr_error *err)
{
    const cudaStream_t st = q->stream;
    const dim3 tb(32, 8);
    const dim3 grid((unsigned)((nb + 31) / 32), (q->nchan + 31) / 32);
    TR_LAUNCH(to_time_major<float>, grid, tb, 0, st, q->y, snr + k0 * q->nchan,
              (int)q->nchan, (int64_t)nb, (int64_t)nb);
    TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch", fail);
    if (width) {
        TR_LAUNCH(to_time_major<int32_t>, grid, tb, 0, st, q->w, width + k0 * q->nchan,
                  (int)q->nchan, (int64_t)nb, (int64_t)nb);
        TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch", fail);
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace

extern "C" tr_status tr_cuda_boxcar_create(int device, const tr_boxcar_plan *plan,
                                           uint32_t nchan, tr_variant variant,
                                           size_t batch, tr_cuda_boxcar **out,
                                           tr_error *err)
{
    if (out) *out = NULL;
    if (!out || !plan || plan->nstages < 1 || nchan < 1 || batch < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: need a plan, nchan >= 1 and batch >= 1");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "boxcar/cuda: no %s variant on CUDA",
                       tr_variant_name(variant));
    void *mem = calloc(1, sizeof(tr_cuda_boxcar));
    if (!mem)
        return tr_fail(err, TR_ERR_NOMEM, "boxcar/cuda: cannot allocate the context");
    tr_cuda_boxcar *q = new (mem) tr_cuda_boxcar();
    q->plan = *plan;
    q->nchan = nchan;
    q->variant = variant;
    q->lend = plan->lend;
    q->lat = (int64_t)plan->lend - 1;
    q->batch = std::min<size_t>(batch, (size_t)1 << 24);
    q->nmax = std::max<int64_t>((int64_t)q->batch, q->lat);
    for (uint32_t i = 0; i < plan->nstages; i++) {
        const tr_boxcar_stage &s = plan->stages[i];
        q->A = std::max<int64_t>(q->A, s.stride);
        for (uint32_t m = 0; m < s.nwidths; m++)
            q->hwidths.push_back(s.width_first + m * s.width_step);
    }
    q->total = (uint32_t)q->hwidths.size();
    q->Ap = std::max<int64_t>(q->A, (int64_t)1 << (plan->nstages - 1));
    q->Tmax = (int)std::max<int64_t>(kTileMax, q->A);
    q->H = (q->lat + std::max<int64_t>(q->Tmax, q->Ap) + kMeanBack + 4 + 3) / 4 * 4;
    int dev_count = 0;
    int smem_optin = 0;
    std::vector<int32_t> wv(q->hwidths.begin(), q->hwidths.end());

    /* Checks of what the kernels support. */
    if (plan->lend > (1u << 24) || q->A > (1 << 24)) {
        tr_fail(err, TR_ERR_UNSUPPORTED, "boxcar/cuda: L_end %u too large", plan->lend);
        goto fail_nocuda;
    }
    for (uint32_t i = 0; i < plan->nstages; i++)
        if ((plan->stages[i].stride & (plan->stages[i].stride - 1)) != 0) {
            tr_fail(err, TR_ERR_UNSUPPORTED,
                    "boxcar/cuda: stage strides must be powers of two (stage %u: %u)", i,
                    plan->stages[i].stride);
            goto fail_nocuda;
        }
    if (variant == TR_VARIANT_PAPER) {
        if (plan->algorithm == TR_BOXCAR_IGRID) {
            int lgP = 0;
            while ((1u << lgP) < plan->layers)
                lgP++;
            if (std::max<int>(lgP, (int)plan->depth) > 8) {
                tr_fail(err, TR_ERR_UNSUPPORTED,
                        "boxcar/cuda: the PAPER IGRID kernels support up to 256 layers");
                goto fail_nocuda;
            }
        } else {
            for (uint32_t i = 0; i < plan->nstages; i++)
                if (plan->stages[i].nwidths > (uint32_t)kPaperDitThreads - 64) {
                    tr_fail(err, TR_ERR_UNSUPPORTED,
                            "boxcar/cuda: the PAPER BoxDIT kernel supports at most %d "
                            "widths per iteration",
                            kPaperDitThreads - 64);
                    goto fail_nocuda;
                }
        }
    }

    TR_CUDA_TRY(cudaGetDeviceCount(&dev_count), err, "boxcar/cuda: count devices", fail);
    if (device < 0 || device >= dev_count) {
        tr_fail(err, TR_ERR_NO_DEVICE, "boxcar/cuda: no CUDA device %d", device);
        goto fail;
    }
    TR_CUDA_TRY(cudaSetDevice(device), err, "boxcar/cuda: select device", fail);
    q->device = device;
    TR_CUDA_TRY(cudaDeviceGetAttribute(&smem_optin,
                                       cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                err, "boxcar/cuda: query shared memory", fail);
    {
        /* dynamic shared memory = the opt-in limit less the static (CUB) part */
        size_t stat = 0;
        for (fast_fn f : kFastFns) {
            cudaFuncAttributes fa;
            TR_CUDA_TRY(cudaFuncGetAttributes(&fa, f), err,
                        "boxcar/cuda: kernel attributes", fail);
            stat = std::max(stat, (size_t)fa.sharedSizeBytes);
        }
        q->smem_max = (size_t)smem_optin - stat;
    }
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->sh, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&q->sd, cudaStreamNonBlocking), err,
                "boxcar/cuda: create stream", fail);
    for (int b = 0; b < 2; b++) {
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_h[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_c[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
        TR_CUDA_TRY(cudaEventCreateWithFlags(&q->ev_d[b], cudaEventDisableTiming), err,
                    "boxcar/cuda: create event", fail);
    }

    if (variant == TR_VARIANT_FAST) {
        /* Tile: 2048 .. 8192 positions (at least the largest stride); smaller
         * when the shared memory does not hold it. */
        /* The float prefix sums of a tile carry an absolute error that grows
         * with the tile (about 10 ulp of a random walk over T samples); a
         * small L_end has a tight tolerance (TR_BOXCAR_FAST_TOL), so its tile
         * is at most 32 (8 + sqrt(L_end)) positions; a large L_end takes the
         * next power of two >= L_end (less halo per output), up to 8192. */
        int64_t Tp = 256;
        while (2 * Tp <= 32.0 * (8.0 + std::sqrt((double)q->lend)) && 2 * Tp <= kTileMax)
            Tp *= 2;
        int64_t T = 256;
        while (T < q->lat + 1 && T < kTileMax)
            T *= 2;
        T = std::max<int64_t>(std::max(T, Tp), q->A);
        fast_layout(q, (int)T);
        while (q->fast_smem > q->smem_max && T > q->A && T > 64) {
            T /= 2;
            fast_layout(q, (int)T);
        }
        if (q->fast_smem > q->smem_max) {
            tr_fail(err, TR_ERR_UNSUPPORTED,
                    "boxcar/cuda: the FAST kernel needs %zu bytes of shared memory for "
                    "this plan (at most %zu)",
                    q->fast_smem, q->smem_max);
            goto fail;
        }
        for (fast_fn f : kFastFns)
            TR_CUDA_TRY(cudaFuncSetAttribute(f,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)q->smem_max),
                        err, "boxcar/cuda: shared memory limit", fail);
    } else {
        q->ldl = (q->nmax + q->lend + 4 * q->Ap + 1024 + 3) / 4 * 4;
        const size_t ll = (size_t)nchan * q->ldl;
        TR_CUDA_TRY(dev_alloc(&q->line[0], ll), err, "boxcar/cuda: allocate line",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->line[1], ll), err, "boxcar/cuda: allocate line",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->X[0], ll), err, "boxcar/cuda: allocate X", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->X[1], ll), err, "boxcar/cuda: allocate X", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->Yl, 2 * ll + 64 * (size_t)nchan), err,
                    "boxcar/cuda: allocate Y^i", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->Wl, 2 * ll + 64 * (size_t)nchan), err,
                    "boxcar/cuda: allocate W^i", fail_mem);
    }
    {
        /* the staging buffers come with the first call that needs them */
        const size_t hn = (size_t)nchan * q->H, tn = (size_t)nchan * q->total;
        TR_CUDA_TRY(dev_alloc(&q->hist[0], hn), err, "boxcar/cuda: allocate history",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->hist[1], hn), err, "boxcar/cuda: allocate history",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->mu, tn), err, "boxcar/cuda: allocate mu_L", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->sigma, tn), err, "boxcar/cuda: allocate sigma_L",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->coef, tn), err, "boxcar/cuda: allocate coefficients",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->fill, (size_t)nchan), err, "boxcar/cuda: allocate fill",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->widths, (size_t)q->total), err,
                    "boxcar/cuda: allocate widths", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->count, 1), err, "boxcar/cuda: allocate counter",
                    fail_mem);
    }
    /* host path sub-batches: about kPipeElems values, at least 4 tiles */
    q->nbp = std::min<int64_t>((int64_t)q->batch,
                               std::max<int64_t>(kPipeElems / (int64_t)nchan,
                                                 4 * (q->T > 0 ? (int64_t)q->T : q->Ap)));
    q->nbp = std::max<int64_t>(q->nbp, 1);
    TR_CUDA_TRY(cudaMemcpy(q->widths, wv.data(), wv.size() * 4, cudaMemcpyHostToDevice),
                err, "boxcar/cuda: upload widths", fail);
    if (white_tables(q, nullptr, nullptr, nullptr, err) != TR_OK) goto fail;
    if (tr_cuda_boxcar_reset(q, err) != TR_OK) goto fail;
    *out = q;
    tr_clear(err);
    return TR_OK;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
fail : {
    (void)cudaGetLastError(); /* leave no error behind for later calls */
    const tr_status s = err ? err->code : TR_ERR_CUDA;
    release(q);
    q->~tr_cuda_boxcar();
    free(q);
    return s;
}
fail_nocuda:
    q->~tr_cuda_boxcar();
    free(q);
    return err ? err->code : TR_ERR_UNSUPPORTED;
}

extern "C" void tr_cuda_boxcar_destroy(tr_cuda_boxcar *q)
{
    if (!q) return;
    release(q);
    q->~tr_cuda_boxcar();
    free(q);
}

extern "C" tr_status tr_cuda_boxcar_reset(tr_cuda_boxcar *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    TR_CUDA_TRY(cudaMemsetAsync(q->hist[0], 0, (size_t)q->nchan * q->H * 4, q->stream),
                err, "boxcar/cuda: clear history", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(q->stream), err, "boxcar/cuda: clear history",
                fail);
    q->cur = 0;
    q->pos = 0;
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_boxcar_set_norm(tr_cuda_boxcar *q, const float *mu,
                                             const float *sigma, const float *fill,
                                             tr_error *err)
{
    if (!q || !mu || !sigma)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: set_norm needs mu and sigma");
    const size_t nt = (size_t)q->nchan * q->total;
    std::vector<float> m(mu, mu + nt), s(sigma, sigma + nt);
    return upload_norm(q, m, s, fill, err);
}

extern "C" tr_status tr_cuda_boxcar_set_norm_white(tr_cuda_boxcar *q, const double *mean,
                                                   const double *sigma, const float *fill,
                                                   tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    return white_tables(q, mean, sigma, fill, err);
}

extern "C" uint32_t tr_cuda_boxcar_table_granule(const tr_cuda_boxcar *q)
{
    return q && q->variant == TR_VARIANT_FAST ? (uint32_t)q->T : 0;
}

extern "C" tr_status tr_cuda_boxcar_set_norm_windows(tr_cuda_boxcar *q, uint64_t first,
                                                     uint32_t nwin, uint32_t window,
                                                     const float *mu, const float *sigma,
                                                     tr_error *err)
{
    if (!q || !mu || !sigma || nwin < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_norm_windows needs mu, sigma and nwin >= 1");
    if (q->variant != TR_VARIANT_FAST || window == 0 || window % (uint32_t)q->T != 0)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "boxcar/cuda: per-window tables need the FAST variant and a "
                       "window that is a multiple of its tile (%d)",
                       q->T);
    const size_t nt = (size_t)nwin * q->nchan * q->total;
    for (size_t k = 0; k < nt; k++)
        if (!(sigma[k] > 0.0f) || !std::isfinite(sigma[k]) || !std::isfinite(mu[k]))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar/cuda: normalisation entry %zu: sigma must be > 0 and "
                           "finite, mu finite",
                           k);
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    if ((int64_t)nwin > q->wcap) {
        const int64_t cap = std::max<int64_t>(nwin, 2 * q->wcap);
        TR_CUDA_TRY(cudaStreamSynchronize(q->stream), err, "boxcar/cuda: sync", fail);
        if (q->wmu) cudaFree(q->wmu);
        if (q->wsig) cudaFree(q->wsig);
        q->wmu = q->wsig = nullptr;
        q->wcap = 0;
        TR_CUDA_TRY(dev_alloc(&q->wmu, (size_t)cap * q->nchan * q->total), err,
                    "boxcar/cuda: allocate tables", fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->wsig, (size_t)cap * q->nchan * q->total), err,
                    "boxcar/cuda: allocate tables", fail_mem);
        q->wcap = cap;
    }
    /* ordered before the next search on the same stream; the caller's buffers
     * may be reused at return (pageable copies are staged by then) */
    TR_CUDA_TRY(cudaMemcpyAsync(q->wmu, mu, nt * 4, cudaMemcpyHostToDevice, q->stream),
                err, "boxcar/cuda: upload mu_L", fail);
    TR_CUDA_TRY(
        cudaMemcpyAsync(q->wsig, sigma, nt * 4, cudaMemcpyHostToDevice, q->stream), err,
        "boxcar/cuda: upload sigma_L", fail);
    q->win_mode = 1;
    q->tabW = window;
    q->tab0 = (int64_t)first;
    q->tabn = (int)nwin;
    q->has_fill = 0;
    q->tables_set = 0;
    tr_clear(err);
    return TR_OK;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
    (void)cudaGetLastError();
    return TR_ERR_NOMEM;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_boxcar_set_tile(tr_cuda_boxcar *q, uint32_t tile,
                                             tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: set_tile needs a FAST context");
    if (tile == 0) tile = kTileMax;
    if ((tile & (tile - 1)) != 0 || (int64_t)tile < q->A || (int)tile > q->Tmax)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: tile must be a power of two in %lld..%d, got %u",
                       (long long)q->A, q->Tmax, tile);
    const int oldT = q->T;
    fast_layout(q, (int)tile);
    if (q->fast_smem > q->smem_max) {
        fast_layout(q, oldT);
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: tile %u needs too much shared memory", tile);
    }
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_skew(tr_cuda_boxcar *q, int on, tr_error *err)
{
    (void)on; /* the kernel's layout is always the padded one now */
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: set_skew needs a FAST context");
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_positions(tr_cuda_boxcar *q, int kq,
                                                  tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_positions needs a FAST context");
    if (kq != 8 && kq != 16)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: positions per thread must be 8 or 16, got %d", kq);
    const int old = q->kq;
    q->kq = kq;
    fast_layout(q, q->T);
    if (q->fast_smem > q->smem_max) {
        q->kq = old;
        fast_layout(q, q->T);
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: %d positions per thread need too much shared memory",
                       kq);
    }
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_split(tr_cuda_boxcar *q, int on, tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_split needs a FAST context");
    q->split = on != 0;
    fast_layout(q, q->T);
    tr_clear(err);
    return TR_OK;
}

extern "C" void *tr_cuda_boxcar_host_alloc(tr_cuda_boxcar *q, size_t bytes)
{
    if (!q || cudaSetDevice(q->device) != cudaSuccess) return nullptr;
    void *p = nullptr;
    if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
        (void)cudaGetLastError();
        return nullptr;
    }
    return p;
}

extern "C" void tr_cuda_boxcar_host_free(void *p)
{
    if (p) cudaFreeHost(p);
}

extern "C" uint64_t tr_cuda_boxcar_position(const tr_cuda_boxcar *q)
{
    return q ? q->pos : 0;
}

/* Search nb new samples per channel (xin channel-major, ldx per channel; NULL for
 * flush) on q->stream: outputs into y, w (channel-major, ldy), then the new
 * history. */
static tr_status search_batch(tr_cuda_boxcar *q, const float *xin, int64_t ldx, size_t nb,
                              bool flush, float *y, int32_t *w, int64_t ldy,
                              tr_error *err)
{
    const cudaStream_t st = q->stream;
    source src{};
    src.hist = q->hist[q->cur];
    src.H = q->H;
    src.hist_start = (int64_t)q->pos - q->H;
    src.x = xin;
    src.ldx = ldx;
    src.pos = (int64_t)q->pos;
    src.end = (int64_t)q->pos + (flush ? 0 : (int64_t)nb);
    src.fill = q->has_fill ? q->fill : nullptr;
    /* groups of 4 samples are 16-byte aligned in both buffers */
    src.vec = q->pos % 4 == 0 && q->H % 4 == 0 &&
              (!xin || ((uintptr_t)xin % 16 == 0 && ldx % 4 == 0));
    const int64_t q0 = (int64_t)q->pos - q->lat;
    if (compute(q, src, q0, (int64_t)nb, y, w, ldy, err) != TR_OK) return err->code;
    if (!flush) {
        const dim3 hgrid((unsigned)std::min<int64_t>((q->H + 255) / 256, 1024),
                         std::min(q->nchan, kMaxGridY));
        for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
            source s = src;
            s.hist = src.hist + (int64_t)c0 * q->H;
            s.x = src.x + (int64_t)c0 * src.ldx;
            s.fill = src.fill ? src.fill + c0 : nullptr;
            const dim3 g(hgrid.x, std::min(kMaxGridY, q->nchan - c0));
            TR_LAUNCH(history_kernel, g, 256, 0, st, s,
                      q->hist[1 - q->cur] + (int64_t)c0 * q->H, src.end - q->H);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: history launch", fail);
        }
        q->cur = 1 - q->cur;
        q->pos += nb;
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

/* Device buffers: batches of `batch` samples on q->stream. */
static tr_status run_device(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                            tr_boxcar_layout layout, float *snr, int32_t *width,
                            tr_error *err)
{
    const cudaStream_t st = q->stream;
    const size_t total = flush ? (size_t)q->lat : n;
    const bool direct = layout == TR_BOXCAR_CHANNEL_MAJOR;
    if (!direct && !q->y) {
        const size_t bn = (size_t)q->nchan * q->nmax;
        TR_CUDA_TRY(dev_alloc(&q->in, bn), err, "boxcar/cuda: allocate input staging",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->w, bn), err, "boxcar/cuda: allocate width staging",
                    fail_mem);
        TR_CUDA_TRY(dev_alloc(&q->y, bn), err, "boxcar/cuda: allocate S/N staging",
                    fail_mem);
    }
    for (size_t k0 = 0; k0 < total;) {
        const size_t nb = flush ? total : std::min<size_t>((size_t)q->batch, total - k0);
        const float *xin = nullptr;
        int64_t ldx = (int64_t)nb;
        if (!flush) {
            if (direct) {
                xin = x + k0;
                ldx = (int64_t)n;
            } else {
                const dim3 tb(32, 8);
                const dim3 tgrid((unsigned)((nb + 31) / 32), (q->nchan + 31) / 32);
                TR_LAUNCH(to_channel_major<float>, tgrid, tb, 0, st, x + k0 * q->nchan,
                          q->in, (int)q->nchan, (int64_t)nb, (int64_t)nb);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: transpose launch",
                            fail);
                xin = q->in;
            }
        }
        float *yo = direct ? snr + k0 : q->y;
        int32_t *wo = direct ? (width ? width + k0 : nullptr) : (width ? q->w : nullptr);
        const int64_t ldy = direct ? (int64_t)total : (int64_t)nb;
        if (search_batch(q, xin, ldx, nb, flush, yo, wo, ldy, err) != TR_OK)
            return err->code;
        if (!direct && deliver(q, nb, k0, snr, width, err) != TR_OK) return err->code;
        k0 += nb;
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
    (void)cudaGetLastError();
    return TR_ERR_NOMEM;
}

/*
 * Host buffers: sub-batches of nbp samples per channel through two slots of
 * device buffers. Sub-batch k: its input is copied on q->sh (once the search
 * of k - 2 has read that slot), searched on q->stream (once the outputs of
 * k - 2 have left that slot), and its outputs are copied out on q->sd, issued
 * after the search of k + 1 so that a copy into pageable memory (which the
 * host waits for) still overlaps the next search. Page-locked caller buffers
 * are copied directly by the GPU; pageable ones through the driver.
 */
static tr_status run_host(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                          tr_boxcar_layout layout, float *snr, int32_t *width,
                          tr_error *err)
{
    const cudaStream_t st = q->stream;
    const uint32_t C = q->nchan;
    const size_t total = flush ? (size_t)q->lat : n;
    const bool cm = layout == TR_BOXCAR_CHANNEL_MAJOR;
    const bool tr = !cm && C > 1; /* time-major with several channels: transposes */
    const size_t cap = (size_t)std::max<int64_t>(q->nbp, q->lat);
    if (!q->hy[0] || (int64_t)cap > q->hcap) {
        TR_CUDA_TRY(cudaStreamSynchronize(st), err, "boxcar/cuda: sync", fail);
        for (int b = 0; b < 2; b++) {
            void *old[] = {q->hin[b], q->hcm[b], q->hy[b],
                           q->hw[b],  q->hoy[b], q->how[b]};
            for (void *p : old)
                if (p) cudaFree(p);
            q->hin[b] = q->hcm[b] = q->hy[b] = q->hoy[b] = nullptr;
            q->hw[b] = q->how[b] = nullptr;
        }
        q->hcap = 0;
        const size_t bn = (size_t)C * cap;
        for (int b = 0; b < 2; b++) {
            TR_CUDA_TRY(dev_alloc(&q->hin[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            TR_CUDA_TRY(dev_alloc(&q->hy[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            TR_CUDA_TRY(dev_alloc(&q->hw[b], bn), err, "boxcar/cuda: allocate staging",
                        fail_mem);
            if (C > 1) {
                TR_CUDA_TRY(dev_alloc(&q->hcm[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
                TR_CUDA_TRY(dev_alloc(&q->hoy[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
                TR_CUDA_TRY(dev_alloc(&q->how[b], bn), err,
                            "boxcar/cuda: allocate staging", fail_mem);
            }
        }
        q->hcap = (int64_t)cap;
    }
    { /* (a scope of its own: the jumps above pass over it) */
        /* pageable caller buffers go through page-locked staging, copied by host
         * threads while the GPU works on the neighbouring sub-batches */
        const bool sin = !flush && !tr_host_is_pinned(x);
        const bool sout = !tr_host_is_pinned(snr) || (width && !tr_host_is_pinned(width));
        if ((sin || sout) && !q->px[0]) {
            const size_t bn = (size_t)C * cap;
            for (int b = 0; b < 2; b++) {
                TR_CUDA_TRY(cudaMallocHost((void **)&q->px[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
                TR_CUDA_TRY(cudaMallocHost((void **)&q->py[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
                TR_CUDA_TRY(cudaMallocHost((void **)&q->pw[b], bn * 4), err,
                            "boxcar/cuda: allocate page-locked staging", fail_mem);
            }
        }
        if ((sin || sout) && !q->stager) {
            try {
                q->stager = new tr_host_stager(tr_host_stager_threads());
            } catch (...) {
                return tr_fail(err, TR_ERR_NOMEM,
                               "boxcar/cuda: cannot start staging threads");
            }
        }
        {
            /* downloads into the staging slots not yet copied to the caller */
            size_t dk0[2] = {0, 0}, dnb[2] = {0, 0};
            bool dv[2] = {false, false};
            auto drain = [&](int s2) -> bool {
                if (!dv[s2]) return true;
                dv[s2] = false;
                if (cudaEventSynchronize(q->ev_d[s2]) != cudaSuccess) return false;
                const size_t k0 = dk0[s2], nb = dnb[s2];
                if (cm) {
                    q->stager->copy_rows(snr + k0, total * 4, q->py[s2], nb * 4, nb * 4,
                                         C);
                    if (width)
                        q->stager->copy_rows(width + k0, total * 4, q->pw[s2], nb * 4,
                                             nb * 4, C);
                } else {
                    q->stager->copy(snr + k0 * C, q->py[s2], nb * C * 4);
                    if (width) q->stager->copy(width + k0 * C, q->pw[s2], nb * C * 4);
                }
                return true;
            };
            const size_t nbp = flush ? total : std::min<size_t>((size_t)q->nbp, total);
            /* the pending download: sub-batch k - 1 */
            size_t pk0 = 0, pnb = 0;
            int pb = -1;
            const dim3 tb(32, 8);
            for (size_t k0 = 0, k = 0; k0 < total || pb >= 0; k++) {
                const int b = (int)(k & 1);
                size_t nb = 0;
                if (k0 < total) {
                    nb = std::min(nbp, total - k0);
                    const dim3 tgrid((unsigned)((nb + 31) / 32), (C + 31) / 32);
                    const float *xin = nullptr;
                    if (!flush) {
                        if (k >= 2)
                            TR_CUDA_TRY(cudaStreamWaitEvent(q->sh, q->ev_c[b], 0), err,
                                        "boxcar/cuda: wait", fail);
                        if (sin) {
                            /* the upload of k - 2 has left px[b] */
                            if (k >= 2)
                                TR_CUDA_TRY(cudaEventSynchronize(q->ev_h[b]), err,
                                            "boxcar/cuda: wait for upload", fail);
                            if (cm)
                                q->stager->copy_rows(q->px[b], nb * 4, x + k0, n * 4,
                                                     nb * 4, C);
                            else
                                q->stager->copy(q->px[b], x + k0 * C, nb * C * 4);
                            TR_CUDA_TRY(cudaMemcpyAsync(
                                            cm && C > 1 ? q->hcm[b] : q->hin[b], q->px[b],
                                            nb * C * 4, cudaMemcpyHostToDevice, q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        } else if (cm)
                            TR_CUDA_TRY(cudaMemcpy2DAsync(C > 1 ? q->hcm[b] : q->hin[b],
                                                          nb * 4, x + k0, n * 4, nb * 4,
                                                          C, cudaMemcpyHostToDevice,
                                                          q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        else
                            TR_CUDA_TRY(cudaMemcpyAsync(q->hin[b], x + k0 * C, nb * C * 4,
                                                        cudaMemcpyHostToDevice, q->sh),
                                        err, "boxcar/cuda: upload samples", fail);
                        TR_CUDA_TRY(cudaEventRecord(q->ev_h[b], q->sh), err,
                                    "boxcar/cuda: record", fail);
                        TR_CUDA_TRY(cudaStreamWaitEvent(st, q->ev_h[b], 0), err,
                                    "boxcar/cuda: wait", fail);
                        xin = cm && C > 1 ? q->hcm[b] : q->hin[b];
                        if (tr) {
                            TR_LAUNCH(to_channel_major<float>, tgrid, tb, 0, st,
                                      q->hin[b], q->hcm[b], (int)C, (int64_t)nb,
                                      (int64_t)nb);
                            TR_CUDA_TRY(cudaGetLastError(), err,
                                        "boxcar/cuda: transpose launch", fail);
                            xin = q->hcm[b];
                        }
                    }
                    if (k >= 2)
                        TR_CUDA_TRY(cudaStreamWaitEvent(st, q->ev_d[b], 0), err,
                                    "boxcar/cuda: wait", fail);
                    if (search_batch(q, xin, (int64_t)nb, nb, flush, q->hy[b],
                                     width ? q->hw[b] : nullptr, (int64_t)nb,
                                     err) != TR_OK)
                        return err->code;
                    if (tr) {
                        TR_LAUNCH(to_time_major<float>, tgrid, tb, 0, st, q->hy[b],
                                  q->hoy[b], (int)C, (int64_t)nb, (int64_t)nb);
                        TR_CUDA_TRY(cudaGetLastError(), err,
                                    "boxcar/cuda: transpose launch", fail);
                        if (width) {
                            TR_LAUNCH(to_time_major<int32_t>, tgrid, tb, 0, st, q->hw[b],
                                      q->how[b], (int)C, (int64_t)nb, (int64_t)nb);
                            TR_CUDA_TRY(cudaGetLastError(), err,
                                        "boxcar/cuda: transpose launch", fail);
                        }
                    }
                    TR_CUDA_TRY(cudaEventRecord(q->ev_c[b], st), err,
                                "boxcar/cuda: record", fail);
                }
                if (pb >= 0) { /* download sub-batch k - 1 */
                    TR_CUDA_TRY(cudaStreamWaitEvent(q->sd, q->ev_c[pb], 0), err,
                                "boxcar/cuda: wait", fail);
                    if (sout) {
                        /* into page-locked staging in the device layout */
                        TR_CUDA_TRY(cudaMemcpyAsync(
                                        q->py[pb], C > 1 && !cm ? q->hoy[pb] : q->hy[pb],
                                        pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                                    err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpyAsync(
                                            q->pw[pb],
                                            C > 1 && !cm ? q->how[pb] : q->hw[pb],
                                            pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                        dk0[pb] = pk0;
                        dnb[pb] = pnb;
                        dv[pb] = true;
                    } else if (cm) {
                        TR_CUDA_TRY(cudaMemcpy2DAsync(snr + pk0, total * 4, q->hy[pb],
                                                      pnb * 4, pnb * 4, C,
                                                      cudaMemcpyDeviceToHost, q->sd),
                                    err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpy2DAsync(width + pk0, total * 4,
                                                          q->hw[pb], pnb * 4, pnb * 4, C,
                                                          cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                    } else {
                        TR_CUDA_TRY(
                            cudaMemcpyAsync(snr + pk0 * C, C > 1 ? q->hoy[pb] : q->hy[pb],
                                            pnb * C * 4, cudaMemcpyDeviceToHost, q->sd),
                            err, "boxcar/cuda: download S/N", fail);
                        if (width)
                            TR_CUDA_TRY(cudaMemcpyAsync(width + pk0 * C,
                                                        C > 1 ? q->how[pb] : q->hw[pb],
                                                        pnb * C * 4,
                                                        cudaMemcpyDeviceToHost, q->sd),
                                        err, "boxcar/cuda: download widths", fail);
                    }
                    TR_CUDA_TRY(cudaEventRecord(q->ev_d[pb], q->sd), err,
                                "boxcar/cuda: record", fail);
                    /* staging: hand over sub-batch k - 2 while the GPU works on
                     * k and k - 1 */
                    if (!drain(1 - pb)) goto fail_sync;
                }
                if (nb > 0) {
                    pk0 = k0;
                    pnb = nb;
                    pb = b;
                    k0 += nb;
                } else {
                    pb = -1;
                }
            }
            if (!drain(0) || !drain(1)) goto fail_sync;
        }
    }
    TR_CUDA_TRY(cudaStreamSynchronize(q->sh), err, "boxcar/cuda: upload", fail);
    tr_clear(err);
    return TR_OK;
fail_sync:
    return tr_fail(err, TR_ERR_CUDA, "boxcar/cuda: wait for a download: %s",
                   cudaGetErrorString(cudaGetLastError()));
fail:
    return err ? err->code : TR_ERR_CUDA;
fail_mem:
    if (err) err->code = TR_ERR_NOMEM;
    (void)cudaGetLastError();
    return TR_ERR_NOMEM;
}

static tr_status run_or_flush(tr_cuda_boxcar *q, const float *x, size_t n, bool flush,
                              tr_boxcar_layout layout, int on_device, float *snr,
                              int32_t *width, uint64_t *nonfinite, tr_error *err)
{
    const cudaStream_t st = q->stream;
    const size_t total = flush ? (size_t)q->lat : n;
    unsigned long long cnt = 0;
    tr_status s = TR_OK;
    if (layout != TR_BOXCAR_TIME_MAJOR && layout != TR_BOXCAR_CHANNEL_MAJOR)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: unknown layout %d",
                       (int)layout);
    if (total == 0) {
        tr_clear(err);
        return TR_OK;
    }
    if ((!flush && !x) || !snr)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL buffer");
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    (void)cudaGetLastError(); /* an earlier failure elsewhere is not this call's */
    if (q->has_fill)
        TR_CUDA_TRY(cudaMemsetAsync(q->count, 0, sizeof(unsigned long long), st), err,
                    "boxcar/cuda: clear counter", fail);
    s = on_device ? run_device(q, x, n, flush, layout, snr, width, err)
                  : run_host(q, x, n, flush, layout, snr, width, err);
    if (s == TR_OK && q->has_fill)
        TR_CUDA_TRY(
            cudaMemcpyAsync(&cnt, q->count, sizeof cnt, cudaMemcpyDeviceToHost, st), err,
            "boxcar/cuda: read counter", fail);
    /* every stream idle before returning, also after a failure */
    {
        const cudaError_t e1 = cudaStreamSynchronize(st);
        const cudaError_t e2 = cudaStreamSynchronize(q->sd);
        const cudaError_t e3 = cudaStreamSynchronize(q->sh);
        if (s != TR_OK) return s;
        TR_CUDA_TRY(e1 != cudaSuccess ? e1 : (e2 != cudaSuccess ? e2 : e3), err,
                    "boxcar/cuda: run", fail);
    }
    if (nonfinite) *nonfinite += cnt;
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_boxcar_run(tr_cuda_boxcar *q, const float *x, size_t n,
                                        tr_boxcar_layout layout, int on_device,
                                        float *snr, int32_t *width, uint64_t *nonfinite,
                                        tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    return run_or_flush(q, x, n, false, layout, on_device, snr, width, nonfinite, err);
}

extern "C" tr_status tr_cuda_boxcar_flush(tr_cuda_boxcar *q, tr_boxcar_layout layout,
                                          int on_device, float *snr, int32_t *width,
                                          tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: NULL context");
    return run_or_flush(q, nullptr, 0, true, layout, on_device, snr, width, nullptr, err);
}
