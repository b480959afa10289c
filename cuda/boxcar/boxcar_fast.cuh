/*
 * FAST boxcar kernel: our exact design, one pass of tiled float32 prefix
 * sums. The tile T and the threads per block NT (T / kQ, 128 .. 512) are
 * chosen per plan by boxcar_launch.cu; NT and kQ are template parameters.
 *
 * One kernel per call. A thread block takes one channel and a tile of
 * T output positions aligned to an absolute multiple of T (so the arithmetic
 * of a position never depends on how the stream was cut), loads the span
 * [t0, t0 + T + latency) once (coalesced 16-byte loads of aligned groups of
 * 4 samples wherever they lie in one buffer, single loads otherwise: the
 * same values either way; a span that lies wholly in the call's new block,
 * most of them, is read without per-group bounds tests; the halo is mostly
 * an L2 hit, the neighbouring tile reads it too), subtracts an offset m (the
 * mean of the 1024 samples before the tile and up to 1024 at its start,
 * always inside the data), and forms the prefix sums of x - m in shared
 * memory with a CUB block scan: at full resolution up to T + (widest "fine"
 * width), and beyond that only every R samples (R-sample sums in a fixed
 * pairwise order), which is all the stages whose stride and widths are
 * multiples of R need. Every boxcar is then a difference of two prefix
 * values, X = P[p + L] - P[p], and S/N = fma(X, 1/sigma_L, (L m - mu_L) /
 * sigma_L), the offset formed in double per tile.
 * Evaluation: the last stages of stride >= 2 kQ ("sparse": fewer starts than
 * positions per thread) go first, all their starts of the tile spread over
 * the block's threads (4 consecutive starts per thread for window stages, in
 * a sliding window of ends), each start's best S/N and width to shared
 * memory (tr_cuda_boxcar_set_split switches this off). Then each thread owns
 * kQ = 8 consecutive positions (rounds of NT * 8 positions per tile) and
 * keeps their best S/N and width in registers through the other (dense)
 * stages, evaluating the starts of each stage that fall on its positions (8,
 * 4, 2 or 1 of them), and merges the sparse stages' best at its first
 * position last; for stages whose width step equals their stride (BoxDIT,
 * ideal) the ends of the starts and 8 widths form a sliding window in
 * registers, so one shared-memory load serves up to 8 boxcars. Sliding-window
 * stages of stride 1, 2, 4 or 8 with 8, 16 or 32 widths (every dense stage of
 * a BoxDIT plan with 8, 16 or 32 widths per iteration, AstroAccelerate's list
 * included) run a path specialised on (stride, widths): fully unrolled, each
 * end loaded once by an immediate offset from one base. Shared arrays are
 * padded by one word per 8 (index i + i / 8): lanes 8 positions apart are 9
 * words apart (different banks), and for u a multiple of 8 the index of
 * u + k is that of u plus that of k, a constant. Results leave through a
 * per-warp staging area as coalesced stores.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_FAST_CUH
#define TRANSIENT_CUDA_BOXCAR_FAST_CUH

#include "boxcar/boxcar_source.cuh"

#include <transient/boxcar.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

namespace boxcar_cuda
{

constexpr int kMeanBack = 1024;  /* samples before the tile in the offset estimate */
constexpr int kMeanAhead = 1024; /* samples at the tile's start, at most */
constexpr int kTileMax = 8192;

/* Entries to allocate for n entries in the padded layout (a multiple of 4). */
__host__ __device__ constexpr int skew_len(int n)
{
    return (n + (n >> 3) + 1 + 3) & ~3;
}

/* Shared-memory index of entry i: one padding word after every 8, so that
 * threads that own 8 consecutive positions (or 4, or 2 entries) reach 32
 * different banks, and sk(u + k) = sk(u) + sk(k) for u a multiple of 8. */
__host__ __device__ constexpr int sk(int i)
{
    return i + (i >> 3);
}

/* Padded index of item j + 1 + k (k < 8) relative to sk(j), j a multiple of
 * 8: 1 .. 7, then 9. */
__host__ __device__ constexpr int goff(int k)
{
    return k < 7 ? k + 1 : 9;
}

/* Stride and width count of the specialised window stages (fstage::fix):
 * code 1 + 3 log2(stride) + log2(widths / 8), strides 1..8, widths 8, 16, 32. */
constexpr int kFixCodes = 12;
/* f(std::integral_constant<int, c>) for the run-time code c in 1 ..
 * kFixCodes, through one switch (a jump table, not a chain of compares). */
template <class F> __device__ __forceinline__ void dispatch_fix(int c, F &&f)
{
#define TR_FIX_CASE(k)                                                                   \
    case k:                                                                              \
        f(std::integral_constant<int, k>{});                                             \
        break;
    static_assert(kFixCodes == 12, "one case per code");
    switch (c) {
        TR_FIX_CASE(1)
        TR_FIX_CASE(2)
        TR_FIX_CASE(3)
        TR_FIX_CASE(4)
        TR_FIX_CASE(5)
        TR_FIX_CASE(6)
        TR_FIX_CASE(7)
        TR_FIX_CASE(8)
        TR_FIX_CASE(9)
        TR_FIX_CASE(10)
        TR_FIX_CASE(11)
    default:
        f(std::integral_constant<int, 12>{});
        break;
    }
#undef TR_FIX_CASE
}

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
    int fix;    /* 0, or the specialised window path (kFixCodes) */
    int basep;  /* fix: padded index of the first width - stride (a multiple of 8) */
    int lst;    /* log2 of st */
    int J;      /* sparse: starts per item (1, or 4 for window stages) */
    int ioff;   /* sparse: index of the stage's first item in the tile's items */
    int eoff;   /* sparse: index of the stage's first start in the start arrays */
    int kmask;  /* ~kCodeMask, known only at run time: with the mask in a
                   register and the width code an immediate, (S/N & mask) |
                   code is one LOP3 (two when both are immediates) */
};

struct fplan {
    int n;
    int sp0;    /* stages sp0 .. n - 1 are sparse (sp0 = n: none) */
    int nitems; /* items of the sparse stages per tile */
    int nent;   /* starts of the sparse stages per tile */
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

/* Packed keys of the specialised window stages (eval_fixed): the S/N with
 * its kCodeBits lowest mantissa bits replaced by a code of the width
 * (NW - 1 - m, so that of equal truncated values the first width is the
 * largest key). One fmaxf keeps the best S/N and its width of a start through
 * the stage's widths, where a compare and two selects did: those stages are
 * bound by the issue of these compare/select instructions, not by the
 * arithmetic. Whether a stage takes this path depends on the plan only (not
 * on the tile, the positions per thread or the lane sharing), so the
 * outputs stay the same bits for every chunking and knob. */
constexpr int kCodeBits = 5;
constexpr int kCodeMask = (1 << kCodeBits) - 1;

__device__ __forceinline__ float pack_key(float snr, int kmask, int code)
{
    return __int_as_float((__float_as_int(snr) & kmask) | code);
}

/* Merge a stage's best key of one start into the running best: the
 * truncated S/N (strict >, so that an earlier stage keeps equal values) and
 * its width w0 + (NW - 1 - code) ws. */
template <int NW>
__device__ __forceinline__ void merge_key(float key, int w0, int ws, float &best, int &bw)
{
    const int kb = __float_as_int(key);
    const float v = __int_as_float(kb & ~kCodeMask);
    if (v > best) {
        best = v;
        bw = w0 + (NW - 1 - (kb & kCodeMask)) * ws;
    }
}

/* One item of a sparse stage s (stride >= 2 kQ, so that a thread's kQ
 * positions hold at most one of its starts): the J starts u, u + st, ..
 * (tile-relative) with all widths, the best S/N of each start (first width
 * on ties, strict >) and its width to ob[j], ow[j]. The same arithmetic and
 * order as eval_stage; the owner of a start merges it after the dense stages
 * (strict >), which gives what evaluating the stage in place gives, since the
 * sparse stages come last in the plan. For J > 1 (window stages: ws == st)
 * the ends are a sliding window in registers: end (j, m) is end (j + 1,
 * m - 1), so 4 widths of J starts take J + 3 ends. */
template <int J, bool kClip>
__device__ __forceinline__ void sparse_item(const fstage &s, const float *__restrict__ P,
                                            const float2 *__restrict__ C, int u,
                                            int64_t lim, float *ob, int *ow)
{
    const int e0 = u >> s.lsc;
    const int base = e0 + s.w0p;
    float s0[J], b[J];
    int bl[J];
#pragma unroll
    for (int j = 0; j < J; j++) {
        s0[j] = P[sk(e0 + j * s.stp)];
        b[j] = -INFINITY;
        bl[j] = 0;
    }
    /* boxcar (start j, width m) with end value e */
    auto boxcar = [&](int j, int m, float e) {
        const float2 cf = C[s.widx + m];
        const int L = s.w0 + m * s.ws;
        const float snr = __fmaf_rn(__fsub_rn(e, s0[j]), cf.x, cf.y);
        bool up = snr > b[j];
        if constexpr (kClip) up = up && (int64_t)(u + j * s.st) + L <= lim;
        if (up) {
            b[j] = snr;
            bl[j] = L;
        }
    };
    if constexpr (J == 1) {
        for (int m = 0; m < s.nw; m++)
            boxcar(0, m, P[sk(base + m * s.wsp)]);
    } else {
        /* E[k]: the end of index m + k (the end of start j, width m is
         * index j + m); groups of 4 widths, then one at a time */
        float E[J + 3];
#pragma unroll
        for (int k = 0; k + 1 < J; k++)
            E[k] = P[sk(base + k * s.stp)];
        int m = 0;
        for (; m + 4 <= s.nw; m += 4) {
#pragma unroll
            for (int k = 0; k < 4; k++)
                E[J - 1 + k] = P[sk(base + (m + J - 1 + k) * s.stp)];
#pragma unroll
            for (int mm = 0; mm < 4; mm++)
#pragma unroll
                for (int j = 0; j < J; j++)
                    boxcar(j, m + mm, E[j + mm]);
#pragma unroll
            for (int k = 0; k + 1 < J; k++)
                E[k] = E[k + 4];
        }
        for (; m < s.nw; m++) {
            E[J - 1] = P[sk(base + (m + J - 1) * s.stp)];
#pragma unroll
            for (int j = 0; j < J; j++)
                boxcar(j, m, E[j]);
#pragma unroll
            for (int k = 0; k + 1 < J; k++)
                E[k] = E[k + 1];
        }
    }
#pragma unroll
    for (int j = 0; j < J; j++) {
        ob[j] = b[j];
        ow[j] = bl[j];
    }
}

/* The sparse stages of a tile: every item once, over the block's threads
 * (items none of whose starts is in the call's outputs [ua, ub) store -inf);
 * then, with more than one sparse stage, the best of them at each start of
 * the first (strides nondecreasing: every start of a later stage is one of
 * the first's), in stage order (strict >), into the first stage's entries,
 * so that a thread merges one entry at most. Followed by a block barrier in
 * the kernel. */
template <int NT, bool kClip>
__device__ __forceinline__ void
sparse_stages(const fplan &pl, int T, int ua, int ub, const float *Qp, const float *Pc,
              const float2 *C, int64_t lim, float *Sb, int *Sw)
{
    for (int it = threadIdx.x; it < pl.nitems; it += NT) {
        int k = pl.sp0;
        while (k + 1 < pl.n && it >= pl.s[k + 1].ioff)
            k++;
        const fstage &s = pl.s[k];
        const int i = it - s.ioff;
        const int u = i * s.J * s.st;
        const float *P = s.coarse ? Pc : Qp;
        const int o = s.eoff + i * s.J;
        if (u >= ub || u + s.J * s.st <= ua) { /* no start is an output */
            for (int j = 0; j < s.J; j++) {
                Sb[o + j] = -INFINITY;
                Sw[o + j] = 0;
            }
            continue;
        }
        if (s.J == 4)
            sparse_item<4, kClip>(s, P, C, u, lim, Sb + o, Sw + o);
        else
            sparse_item<1, kClip>(s, P, C, u, lim, Sb + o, Sw + o);
    }
    if (pl.n - pl.sp0 < 2) return;
    __syncthreads();
    const int l0 = pl.s[pl.sp0].lst; /* the first sparse stage's entries are 0 .. */
    for (int i = threadIdx.x; i < T >> l0; i += NT) {
        const int u = i << l0;
        float b = Sb[i];
        int w = Sw[i];
        for (int k = pl.sp0 + 1; k < pl.n; k++) {
            const int lst = pl.s[k].lst;
            if ((u & ((1 << lst) - 1)) != 0) break;
            const int e = pl.s[k].eoff + (u >> lst);
            const float v = Sb[e];
            if (v > b) {
                b = v;
                w = Sw[e];
            }
        }
        Sb[i] = b;
        Sw[i] = w;
    }
}

template <int kQ, int S, bool kWin, bool kClip>
__device__ __forceinline__ void eval_stage(const fstage &s, const float *__restrict__ P,
                                           int plast, const float2 *__restrict__ C,
                                           int u0, int64_t lim, float (&best)[kQ],
                                           int (&bw)[kQ])
{
    constexpr int NJ = kQ / S;
    if constexpr (S == kQ) {
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

/* A window stage of stride S and NW widths, first width base + S with base a
 * multiple of 8, on the fine array: the kQ / S starts u0 + j S of this
 * thread (u0 a multiple of 8) and their ends u0 + base + (j + m + 1) S in a
 * sliding window of registers, one load per width, all at immediate offsets
 * from two bases. Same arithmetic as eval_stage; the best of the stage is
 * kept as a packed key (S/N truncated by kCodeBits bits, well inside
 * TR_BOXCAR_FAST_TOL; ties within the truncation go to the larger code). */
template <int kQ, int S, int NW, bool kClip>
__device__ __forceinline__ void eval_fixed(const fstage &s, const float *__restrict__ P,
                                           const float2 *__restrict__ C, int u0,
                                           int64_t lim, float (&best)[kQ], int (&bw)[kQ])
{
    constexpr int NJ = kQ / S;
    static_assert(NW <= kCodeMask + 1, "width codes fit in kCodeBits");
    const float *ps = P + sk(u0);
    const float *pe = ps + s.basep;
    const float2 *cw = C + s.widx;
    const int kmask = s.kmask;
    float s0[NJ], e[NJ], key[NJ];
#pragma unroll
    for (int j = 0; j < NJ; j++) {
        s0[j] = ps[sk(j * S)];
        e[j] = pe[sk((j + 1) * S)];
        key[j] = -INFINITY;
    }
#pragma unroll
    for (int m = 0; m < NW; m++) {
        const float2 cf = cw[m];
        [[maybe_unused]] const int L = s.w0 + m * S;
        const int code = NW - 1 - m;
#pragma unroll
        for (int j = 0; j < NJ; j++) {
            const float snr = __fmaf_rn(__fsub_rn(e[j], s0[j]), cf.x, cf.y);
            if (!kClip && m == 0)
                key[j] = pack_key(snr, kmask, code);
            else if (!kClip || (int64_t)(u0 + j * S) + L <= lim)
                key[j] = fmaxf(key[j], pack_key(snr, kmask, code));
        }
        if (m + 1 < NW) {
#pragma unroll
            for (int j = 0; j + 1 < NJ; j++)
                e[j] = e[j + 1];
            e[NJ - 1] = pe[sk((NJ + m + 1) * S)];
        }
    }
#pragma unroll
    for (int j = 0; j < NJ; j++)
        merge_key<NW>(key[j], s.w0, S, best[j * S], bw[j * S]);
}

/* The specialised path of code s.fix (1 .. kFixCodes). */
template <int kQ, bool kClip>
__device__ __forceinline__ void eval_fixed_s(const fstage &s, const float *P,
                                             const float2 *C, int u0, int64_t lim,
                                             float (&best)[kQ], int (&bw)[kQ])
{
    dispatch_fix(s.fix, [&](auto code) {
        constexpr int k = decltype(code)::value - 1;
        eval_fixed<kQ, 1 << (k / 3), 8 << (k % 3), kClip>(s, P, C, u0, lim, best, bw);
    });
}

/* Phase 1 of the FAST kernel, fine items: sample j of the span at padded
 * index sk(1 + j) for j < F, eight per thread and step (lanes 8 items apart
 * store to different banks). */
template <int NT>
__device__ __forceinline__ void load_fine(const source &s, int c, int64_t t0, int F,
                                          int64_t clo, int64_t chi, unsigned &cnt,
                                          float *Qp)
{
    for (int j = 8 * threadIdx.x; j < F; j += 8 * NT) {
#pragma unroll
        for (int h = 0; h < 8; h += 4) {
            if (j + h >= F) break;
            const float4 v = load4(s, c, t0 + j + h, clo, chi, cnt);
            Qp[sk(1 + j + h)] = v.x;
            if (j + h + 1 < F) Qp[sk(2 + j + h)] = v.y;
            if (j + h + 2 < F) Qp[sk(3 + j + h)] = v.z;
            if (j + h + 3 < F) Qp[sk(4 + j + h)] = v.w;
        }
    }
}

/* The group of n samples at p (g0 = position of p[0]) with its non-finite
 * samples replaced by fill and those in [clo, chi) counted: the values of
 * load_sample for them. */
template <int N>
__device__ __forceinline__ void clean_group(float (&v)[N], int64_t g0, float fill,
                                            int64_t clo, int64_t chi, unsigned &cnt)
{
#pragma unroll
    for (int k = 0; k < N; k++)
        if (!finite_f(v[k])) {
            v[k] = fill;
            cnt += g0 + k >= clo && g0 + k < chi;
        }
}

/* load_fine from a buffer that holds the whole span (xc = sample 0 of the
 * span at position t0, 16-byte aligned; F a multiple of 4; fill: NULL or
 * the channel's fill value): for j a multiple of 8 the padded indices of
 * 1 + j .. 8 + j are sk(j) + 1 .. 7 and sk(j) + 9. A group whose sum is
 * finite holds only finite samples (a sum that overflows is cleaned to the
 * same values). */
template <int NT>
__device__ __forceinline__ void load_fine_direct(const float *__restrict__ xc, int64_t t0,
                                                 int F, const float *fill, int64_t clo,
                                                 int64_t chi, unsigned &cnt, float *Qp)
{
    /* the 8 samples from j (the last 4 zero past F) */
    auto load8 = [&](int j, float(&v)[8]) {
        const float4 v4 = *reinterpret_cast<const float4 *>(xc + j);
        float4 u4 = {0.0f, 0.0f, 0.0f, 0.0f};
        if (j + 4 < F) u4 = *reinterpret_cast<const float4 *>(xc + j + 4);
        v[0] = v4.x;
        v[1] = v4.y;
        v[2] = v4.z;
        v[3] = v4.w;
        v[4] = u4.x;
        v[5] = u4.y;
        v[6] = u4.z;
        v[7] = u4.w;
    };
    auto store8 = [&](int j, float(&v)[8]) {
        if (fill &&
            !finite_f(__fadd_rn(__fadd_rn(__fadd_rn(v[0], v[1]), __fadd_rn(v[2], v[3])),
                                __fadd_rn(__fadd_rn(v[4], v[5]), __fadd_rn(v[6], v[7])))))
            clean_group<8>(v, t0 + j, *fill, clo, chi, cnt);
        float *q = Qp + sk(j);
#pragma unroll
        for (int k = 0; k < 4; k++)
            q[goff(k)] = v[k];
        if (j + 4 < F) {
#pragma unroll
            for (int k = 4; k < 8; k++)
                q[goff(k)] = v[k];
        }
    };
    /* two steps' loads before their stores, so that their latencies overlap */
    for (int j = 8 * threadIdx.x; j < F; j += 16 * NT) {
        const int j2 = j + 8 * NT;
        float v[8], w[8];
        load8(j, v);
        if (j2 < F) load8(j2, w);
        store8(j, v);
        if (j2 < F) store8(j2, w);
    }
}

/* Phase 2, coarse items: sums of R samples from the span's position F on,
 * item i at sk(1 + F + i): (x0 + x1) + (x2 + x3) per thread, then pairwise
 * over R / 4 lanes by shuffles (whole warps iterate: E % 128 == 0). */
template <int NT>
__device__ __forceinline__ void load_coarse(const source &s, int c, int64_t g0, int E,
                                            int R, int F, int64_t clo, int64_t chi,
                                            unsigned &cnt, float *Qp)
{
    for (int o = 4 * threadIdx.x; o < E; o += 4 * NT) {
        const float4 v = load4(s, c, g0 + o, clo, chi, cnt);
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
}

/* One coarse item of NQ groups of 4 samples at p (position g0) in one
 * thread, in the order of load_coarse: each group (x0 + x1) + (x2 + x3), then
 * the groups pairwise (the shuffle tree's order), so the same bits. A sum
 * that is not finite is formed again from cleaned samples (fill: NULL or the
 * channel's fill value). */
template <int NQ>
__device__ __forceinline__ float coarse_item(const float *__restrict__ p, int64_t g0,
                                             const float *fill, int64_t clo, int64_t chi,
                                             unsigned &cnt)
{
    auto sum = [&](bool clean) {
        float q[NQ];
#pragma unroll
        for (int k = 0; k < NQ; k++) {
            const float4 v4 = *reinterpret_cast<const float4 *>(p + 4 * k);
            float v[4] = {v4.x, v4.y, v4.z, v4.w};
            if (clean) clean_group<4>(v, g0 + 4 * k, *fill, clo, chi, cnt);
            q[k] = __fadd_rn(__fadd_rn(v[0], v[1]), __fadd_rn(v[2], v[3]));
        }
#pragma unroll
        for (int d = 1; d < NQ; d *= 2)
#pragma unroll
            for (int k = 0; k + d < NQ; k += 2 * d)
                q[k] = __fadd_rn(q[k], q[k + d]);
        return q[0];
    };
    const float r = sum(false);
    return fill && !finite_f(r) ? sum(true) : r;
}

/* load_coarse from a buffer that holds the whole span (xe = sample F of the
 * span at position g0, 16-byte aligned; R >= 4): one item per thread and
 * step, no shuffles. */
template <int NT>
__device__ __forceinline__ void
load_coarse_direct(const float *__restrict__ xe, int64_t g0, int E, int R, int F,
                   const float *fill, int64_t clo, int64_t chi, unsigned &cnt, float *Qp)
{
    const int n = E / R;
    for (int i = threadIdx.x; i < n; i += NT) {
        const float *p = xe + (int64_t)i * R;
        const int64_t g = g0 + (int64_t)i * R;
        float v;
        switch (R) {
        case 4:
            v = coarse_item<1>(p, g, fill, clo, chi, cnt);
            break;
        case 8:
            v = coarse_item<2>(p, g, fill, clo, chi, cnt);
            break;
        case 16:
            v = coarse_item<4>(p, g, fill, clo, chi, cnt);
            break;
        default:
            v = coarse_item<8>(p, g, fill, clo, chi, cnt);
            break;
        }
        Qp[sk(1 + F + i)] = v;
    }
}

/* Phase 4's first pass over the 8 items of a group at q = Qp + sk(j): item k
 * minus its offset (sf for the nf fine items, sc for the coarse ones), stored,
 * and added to the running total tot. */
template <bool kMixed>
__device__ __forceinline__ float offset_group(float *q, float sf, float sc, int nf,
                                              float tot)
{
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const float v = __fsub_rn(q[goff(k)], !kMixed || k < nf ? sf : sc);
        q[goff(k)] = v;
        tot = __fadd_rn(tot, v);
    }
    return tot;
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
__global__ void __launch_bounds__(NT, kQ == 8 && !kClip ? 1024 / NT : 1)
    fast_kernel(const fast_args a, const fplan pl)
{
    using ops = block_ops<NT>;
    __shared__ typename ops::storage tmp;
    __shared__ float s_m;

    TR_DYN_SHARED(float4, smem4);
    float2 *C = reinterpret_cast<float2 *>(smem4);
    float *Qp = reinterpret_cast<float *>(C + a.totpad); /* M + 1 prefix entries */
    float *Pc = Qp + skew_len(a.M + 8);                  /* nc coarse entries */
    float *stg = Pc + skew_len(a.nc);                    /* per warp 32 kQ entries */
    float *Sb = stg + (NT / 32) * skew_len(32 * kQ);     /* sparse starts: best S/N */
    int *Sw = reinterpret_cast<int *>(Sb + pl.nent);     /* and its width */

    const int c = blockIdx.y;
    const int tid = threadIdx.x;
    const int T = a.T, F = a.F, R = a.R;
    const int64_t t0 = a.tile0 + (int64_t)blockIdx.x * T;
    const source &s = a.src;
    const int64_t cnt_lo = max(t0 + a.lat, s.pos);
    const int64_t cnt_hi = min(t0 + a.lat + T, s.end);
    unsigned cnt = 0;
    /* A tile wholly before the stream's start (the first latency positions
     * of a stream) has only zero outputs: they are written without the
     * search; its share of the non-finite count is still counted. */
    if (t0 + T <= 0) {
        for (int u = tid; u < T; u += NT) {
            const int64_t p = t0 + u;
            if (p >= a.q0 && p < a.q0 + a.n_out) {
                a.y[(int64_t)c * a.ldy + (p - a.q0)] = 0.0f;
                if (a.w) a.w[(int64_t)c * a.ldy + (p - a.q0)] = 0;
            }
        }
        if (a.count) {
            for (int64_t g = cnt_lo + tid; g < cnt_hi; g += NT) {
                bool bad;
                load_sample(s, c, g, bad);
                cnt += bad;
            }
            const unsigned tot = ops::usum(tmp, cnt);
            if (tid == 0 && tot) atomicAdd(a.count, (unsigned long long)tot);
        }
        return;
    }
    /* The offset's samples before the tile (phase 3), loaded first so that
     * their latency overlaps the span's loads. */
    float back = 0.0f;
    for (int j = 4 * tid; j < kMeanBack; j += 4 * NT) {
        unsigned dummy = 0;
        const float4 v = load4(s, c, t0 - kMeanBack + j, 0, 0, dummy);
        back = __fadd_rn(back, v.x);
        back = __fadd_rn(back, v.y);
        back = __fadd_rn(back, v.z);
        back = __fadd_rn(back, v.w);
    }
    /* Every sample of the span lies in the call's new block and 16-byte loads
     * are allowed (block-uniform): the loads then read the buffer directly,
     * the same values as load4. */
    const bool direct =
        s.vec && t0 >= s.pos && t0 + F + a.Ecoarse <= s.end && (F & 3) == 0 && R != 2;
    if (direct) {
        const float *xc = s.x + (int64_t)c * s.ldx + (t0 - s.pos);
        const float *fill = s.fill ? s.fill + c : nullptr;
        load_fine_direct<NT>(xc, t0, F, fill, cnt_lo, cnt_hi, cnt, Qp);
        load_coarse_direct<NT>(xc + F, t0 + F, a.Ecoarse, R, F, fill, cnt_lo, cnt_hi, cnt,
                               Qp);
    } else {
        load_fine<NT>(s, c, t0, F, cnt_lo, cnt_hi, cnt, Qp);
        load_coarse<NT>(s, c, t0 + F, a.Ecoarse, R, F, cnt_lo, cnt_hi, cnt, Qp);
    }
    /* 3. Offset m: mean of the data in [t0 - kMeanBack, t0 + ahead). */
    {
        const int ahead = min(min(a.lat + 1, kMeanAhead), F);
        float part = back;
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
        /* items per thread: 8 x an odd number, so that the threads' runs
         * start 9 x odd words apart (different banks) */
        int ch = (a.M + NT - 1) / NT;
        ch = (ch + 7) & ~7;
        if ((ch & 8) == 0) ch += 8;
        const int j0 = min(tid * ch, a.M), j1 = min(j0 + ch, a.M);
        /* whole span inside [0, end): every item holds len samples */
        const bool inside = t0 >= 0 && t0 + F + a.Ecoarse <= s.end;
        const float mR = __fmul_rn((float)R, m);
        float tot = 0.0f;
        int j = j0;
        if (inside) { /* whole groups of 8 (j0 is a multiple of 8) */
            for (; j + 8 <= j1; j += 8) {
                float *q = Qp + sk(j);
                if (j + 8 <= F)
                    tot = offset_group<false>(q, m, m, 8, tot);
                else if (j >= F)
                    tot = offset_group<false>(q, mR, mR, 0, tot);
                else
                    tot = offset_group<true>(q, m, mR, F - j, tot);
            }
        }
        for (; j < j1; j++) {
            float sub;
            if (inside) {
                sub = j < F ? m : mR;
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
        for (j = j0; j + 8 <= j1; j += 8) {
            float *q = Qp + sk(j);
#pragma unroll
            for (int k = 0; k < 8; k++) {
                pre = __fadd_rn(pre, q[goff(k)]);
                q[goff(k)] = pre;
            }
        }
        for (; j < j1; j++) {
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
    /* 6. The sparse stages' starts, then the other (dense) stages, kQ
     * positions per thread per round; 7. outputs. */
    const int64_t lim = s.end - t0;
    /* the tile's positions that are outputs of this call: [ua, ub) */
    const int ua = (int)max((int64_t)0, min((int64_t)T, a.q0 - t0));
    const int ub = (int)max((int64_t)0, min((int64_t)T, a.q0 + a.n_out - t0));
    if (pl.sp0 < pl.n) {
        sparse_stages<NT, kClip>(pl, T, ua, ub, Qp, Pc, C, lim, Sb, Sw);
        __syncthreads();
    }
    const int lane = tid & 31, warp = tid >> 5;
    float *wst = stg + warp * skew_len(32 * kQ);
    /* every position of the tile is an output of this call and the rounds
     * cover the tile exactly (block-uniform) */
    const bool full =
        t0 >= 0 && t0 >= a.q0 && t0 + T <= a.q0 + a.n_out && T % (NT * kQ) == 0;
    for (int r0 = 0; r0 < T; r0 += NT * kQ) {
        const int u0 = r0 + tid * kQ;
        const int wbase = r0 + warp * 32 * kQ;
        /* a warp none of whose positions is an output of this call (in the
         * tiles at the ends of a call) has nothing to evaluate */
        if (!full && (wbase >= ub || wbase + 32 * kQ <= ua)) continue;
        float best[kQ];
        int bw[kQ];
#pragma unroll
        for (int j = 0; j < kQ; j++) {
            best[j] = -INFINITY;
            bw[j] = 0;
        }
        if (u0 < T) {
            for (int i = 0; i < pl.sp0; i++) {
                const fstage &st = pl.s[i];
                if (st.fix) {
                    eval_fixed_s<kQ, kClip>(st, Qp, C, u0, lim, best, bw);
                    continue;
                }
                const float *P = st.coarse ? Pc : Qp;
                const int plast = st.coarse ? a.nc - 1 : a.M;
                if (st.window)
                    eval_stage_s<kQ, true, kClip>(st, P, plast, C, u0, lim, best, bw);
                else
                    eval_stage_s<kQ, false, kClip>(st, P, plast, C, u0, lim, best, bw);
            }
            /* the sparse stages' best at the thread's first position */
            if (pl.sp0 < pl.n) {
                const int l0 = pl.s[pl.sp0].lst;
                if ((u0 & ((1 << l0) - 1)) == 0) {
                    const float v = Sb[u0 >> l0];
                    if (v > best[0]) {
                        best[0] = v;
                        bw[0] = Sw[u0 >> l0];
                    }
                }
            }
        }
        /* transpose through the warp's staging area: lane l writes positions
         * l * kQ + j (padded index l * kQ + l * kQ / 32 + j), then stores
         * positions j * 32 + l (padded j * 33 + l), coalesced; a tile whose
         * positions are all outputs of this call (most) skips the per-position
         * tests */
        static_assert(32 % kQ == 0, "kQ divides 32");
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
                a.y[o0 + j * 32] = wst[j * 33 + lane];
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
                    a.w[o0 + j * 32] = wsti[j * 33 + lane];
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

} // namespace boxcar_cuda

#endif /* TRANSIENT_CUDA_BOXCAR_FAST_CUH */
