/*
 * Kalman-bank detector on CUDA: the kernels of the FAST variant and their
 * argument structs (the context and host pipeline are in kalman_cuda.cu).
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 *
 * FAST: the batched diagonal formulation of kalman_internal.h. Hypothesis k at
 * sample j continues hypothesis k-1 at j-1, so the M-1 filters form diagonals
 * s = j - k + 1 (the onset sample); diagonal s starts from the noise-only
 * filter's prediction for sample s and runs with the gains K_1, K_2, ...
 * Its states depend on the data only, never on the registers d, so for a block
 * of n samples every diagonal crossing it runs in parallel once the noise-only
 * filter is known. Per block of n samples (j0 = first sample):
 *
 *  1. prep: non-finite samples become "missing" (NaN marker), counted.
 *  2. noise-only filter (hypothesis M, steady-state gain, linear and time
 *     invariant): chunks of 128 samples run from a zero state in parallel
 *     (nf_partial), one thread chains the chunks in double with the
 *     precomputed transition over a chunk, P = (A (I - K_M h'))^128, stepping
 *     sample by sample through chunks with missing samples (nf_combine), and
 *     the chunks run again from their true start states (nf_final), writing
 *     the predicted state z_M[j] (the start of diagonal j) and
 *     h_M e_M[j]^2 (q_M without its constant) for every sample.
 *  3. diagonals: one thread per diagonal, B + M - 2 of them. A thread block
 *     holds 128 consecutive diagonals and walks the union of their offsets k
 *     in tiles of 32, the tile's gain rows and samples staged in shared
 *     memory (double-buffered: the next tile's loads fly during this one), so
 *     every step reads one broadcast gain row and one sample from shared
 *     memory and writes 32 consecutive entries per warp of the register buffer
 *     R[k][j] = log alpha_s + Dt_{s,k}, Dt_{s,k} = sum_{i<=k} (q_i - q_M)
 *     along the diagonal (Kahan-compensated float; alpha_s is the prior in
 *     force when the diagonal started, as in eq. 10). Diagonals that run past
 *     the block keep their state (z, R, compensation) in a ring indexed by
 *     s mod M (two copies).
 *  4. normaliser: with C the prefix sum of c_X = L_X - q_M and
 *     E = exp(C), eq. 9 is the linear recursion with lag M
 *        E[j] = (1 - alpha) E[j-1] + exp(R[M-1][j-1]) E[j-M],
 *     so within a sub-block of at most M samples the lag term is known and
 *     C is a prefix log-sum-exp: one thread block runs the sub-blocks in order,
 *     each a CUB block scan (a plain prefix sum when no hypothesis M-1 is
 *     within e^-18 of merging, the usual case), C kept in shared memory for
 *     M <= 1024 (lx_kernel). C is kept in double and rebased to C[j0-1] = 0
 *     at every block; the window of the last M values is carried.
 *  5. LLR: d_k[j] = R[k][j] + C[j-k] - C[j] for k = 1..M-1; every warp
 *     takes 32 samples and a slice of k, a running log-sum-exp for the
 *     present (k <= N_s) and absent (k > N_s) hypotheses and the argmax of
 *     d_k, and llr_finish combines the slices (absent includes hypothesis M,
 *     d_M = 0): LLR = LSE_present - LSE(0, absent).
 *
 * Diagonals that began before the stream (s < 0) have d = -inf: their Dt is
 * the sentinel -1e30, which every step keeps and every exp() sends to 0.
 */
#ifndef TRANSIENT_CUDA_KALMAN_KERNELS_CUH
#define TRANSIENT_CUDA_KALMAN_KERNELS_CUH

#include "kalman/kalman_cuda.cuh"

#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include <climits>

namespace
{

constexpr float kNeg = -1e30f;  /* log of "no such hypothesis" */
constexpr int kChunk = 128;     /* noise-only filter: samples per chunk */
constexpr int kDiagBlock = 128; /* diagonal kernel: threads per block */
constexpr int kLlrWarps = 8;    /* LLR kernel: warps per block */
constexpr int kLlrUnroll = 16;  /* LLR kernel: offsets per log-sum-exp step */
constexpr int kLxItems = 4;     /* normaliser scan: items per thread */
constexpr unsigned kFull = 0xffffffffu;
constexpr int kMaxN = 2 * TR_CUDA_KALMAN_FAST_MAX_Q;

/* Constants of the noise-only filter and the companion blocks of A. */
struct nf_consts {
    float K[kMaxN]; /* K_M */
    float ax[TR_CUDA_KALMAN_FAST_MAX_Q];
    float an[TR_CUDA_KALMAN_FAST_MAX_Q];
    float hM; /* 1 / (2 Sigma_M) */
    double Kd[kMaxN], axd[TR_CUDA_KALMAN_FAST_MAX_Q], and_[TR_CUDA_KALMAN_FAST_MAX_Q];
};

/* One filter step on the predicted state z (companion A): returns the
 * innovation e (0 for a missing sample, marked by r = NaN) and leaves
 * z_{k+1|k} = A (z + K e) in z. */
template <int Q, typename T>
__device__ __forceinline__ T kstep(T (&z)[2 * Q], const T *K, const T *ax, const T *an,
                                   T r)
{
    const T rhat = z[0] + z[Q];
    const T e = r == r ? r - rhat : T(0);
    T u[2 * Q];
#pragma unroll
    for (int i = 0; i < 2 * Q; i++)
        u[i] = fma(K[i], e, z[i]);
    T x0 = ax[0] * u[0], n0 = an[0] * u[Q];
#pragma unroll
    for (int i = 1; i < Q; i++) {
        x0 = fma(ax[i], u[i], x0);
        n0 = fma(an[i], u[Q + i], n0);
    }
#pragma unroll
    for (int i = Q - 1; i >= 1; i--) {
        z[i] = u[i - 1];
        z[Q + i] = u[Q + i - 1];
    }
    z[0] = x0;
    z[Q] = n0;
    return e;
}

/* ---- 1. prep ------------------------------------------------------------ */

__global__ void prep_kernel(const float *__restrict__ x, int n, float2 *__restrict__ smp,
                            unsigned long long *bad)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned b = 0;
    if (i < n) {
        const float v = x[i];
        const bool ok = isfinite(v);
        smp[i] = make_float2(ok ? v : __int_as_float(0x7fc00000), 0.0f);
        b = !ok;
    }
    b = __reduce_add_sync(kFull, b);
    if (b && (threadIdx.x & 31) == 0) atomicAdd(bad, (unsigned long long)b);
}

/* ---- 2. noise-only filter -------------------------------------------------- */

/* Chunk c from a zero state: end state into part[c * N ..]; flag[c] = 1 when
 * the chunk is short or has a missing sample (then chained sample by sample). */
template <int Q>
__global__ void nf_partial_kernel(const float2 *__restrict__ smp, int n, nf_consts nc,
                                  float *__restrict__ part, int *__restrict__ flag)
{
    constexpr int N = 2 * Q;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = c * kChunk;
    if (j0 >= n) return;
    const int len = min(kChunk, n - j0);
    float z[N];
#pragma unroll
    for (int i = 0; i < N; i++)
        z[i] = 0.0f;
    bool miss = len < kChunk;
    for (int i = 0; i < len; i++) {
        const float r = smp[j0 + i].x;
        miss |= r != r;
        kstep<Q, float>(z, nc.K, nc.ax, nc.an, r);
    }
#pragma unroll
    for (int i = 0; i < N; i++)
        part[(size_t)c * N + i] = z[i];
    flag[c] = miss;
}

/* One thread: chunk start states in order (double), carried state updated. */
template <int Q>
__global__ void nf_combine_kernel(const float2 *__restrict__ smp, int n, nf_consts nc,
                                  const double *__restrict__ P,
                                  const float *__restrict__ part,
                                  const int *__restrict__ flag,
                                  float *__restrict__ zstart, double *__restrict__ zcarry)
{
    constexpr int N = 2 * Q;
    double Pr[N][N], Z[N];
#pragma unroll
    for (int i = 0; i < N; i++) {
        Z[i] = zcarry[i];
#pragma unroll
        for (int l = 0; l < N; l++)
            Pr[i][l] = P[i * N + l];
    }
    const int nch = (n + kChunk - 1) / kChunk;
    /* the next chunk's partial state and flag are loaded one chunk ahead */
    float pn[N];
    int fn = flag[0];
#pragma unroll
    for (int i = 0; i < N; i++)
        pn[i] = part[i];
    for (int c = 0; c < nch; c++) {
        float pc[N];
        const int fc = fn;
#pragma unroll
        for (int i = 0; i < N; i++)
            pc[i] = pn[i];
        if (c + 1 < nch) {
            fn = flag[c + 1];
#pragma unroll
            for (int i = 0; i < N; i++)
                pn[i] = part[(size_t)(c + 1) * N + i];
        }
#pragma unroll
        for (int i = 0; i < N; i++)
            zstart[(size_t)c * N + i] = (float)Z[i];
        if (fc) {
            const int j0 = c * kChunk, len = min(kChunk, n - j0);
            for (int i = 0; i < len; i++)
                kstep<Q, double>(Z, nc.Kd, nc.axd, nc.and_, (double)smp[j0 + i].x);
        } else {
            double W[N];
#pragma unroll
            for (int i = 0; i < N; i++) {
                double s = (double)pc[i];
#pragma unroll
                for (int l = 0; l < N; l++)
                    s = fma(Pr[i][l], Z[l], s);
                W[i] = s;
            }
#pragma unroll
            for (int i = 0; i < N; i++)
                Z[i] = W[i];
        }
    }
#pragma unroll
    for (int i = 0; i < N; i++)
        zcarry[i] = Z[i];
}

/* Chunk c from its true start: z_M[j] (predicted, component-major with
 * leading dimension ldz) and h_M e_M^2 into smp[j].y. */
template <int Q>
__global__ void nf_final_kernel(float2 *__restrict__ smp, int n, nf_consts nc,
                                const float *__restrict__ zstart, float *__restrict__ zM,
                                int ldz)
{
    constexpr int N = 2 * Q;
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    const int j0 = c * kChunk;
    if (j0 >= n) return;
    const int len = min(kChunk, n - j0);
    float z[N];
#pragma unroll
    for (int i = 0; i < N; i++)
        z[i] = zstart[(size_t)c * N + i];
    for (int i = 0; i < len; i++) {
        const int j = j0 + i;
#pragma unroll
        for (int l = 0; l < N; l++)
            zM[(size_t)l * ldz + j] = z[l];
        const float r = smp[j].x;
        const float e = kstep<Q, float>(z, nc.K, nc.ax, nc.an, r);
        smp[j].y = nc.hM * (e * e);
    }
}

/* ---- 3. diagonals ----------------------------------------------------------- */

struct diag_args {
    const float4 *gain; /* row k-1: K_k[0..2Q), c_k - c_M, h_k, padding */
    const float2 *smp;  /* (r or NaN, h_M e_M^2) */
    const float *zM;    /* [2Q][ldz] */
    const float *st_in; /* ring [(2Q + 2)][M]: z, Dt, compensation */
    float *st_out;
    float *R; /* [(M-1)][ldR] */
    long long j0;
    int n, M, ldz, ldR;
    float log_alpha; /* prior of the diagonals that start in this block */
    float ax[TR_CUDA_KALMAN_FAST_MAX_Q], an[TR_CUDA_KALMAN_FAST_MAX_Q];
};

constexpr int kKT = 32;                     /* offsets per staged tile */
constexpr int kSpan = kDiagBlock + kKT;     /* samples a tile touches (padded) */
constexpr int kGVMax = (kMaxN + 2 + 3) / 4; /* float4 per gain row, at most */
constexpr int kGPre = (kKT * kGVMax + kDiagBlock - 1) / kDiagBlock; /* per thread */
constexpr int kSPre = (kSpan + kDiagBlock - 1) / kDiagBlock;

/*
 * Thread t of the grid runs diagonal s = j0 - (M-2) + t over the offsets k it
 * has in this block. The thread block (128 consecutive diagonals) walks the
 * union of its offsets in tiles of kKT: the tile's gain rows and the samples
 * its lanes touch are staged in shared memory (two buffers: the next tile's
 * global loads are in flight while this tile computes), so every step reads
 * one broadcast gain row and one sample from shared memory.
 */
template <int Q>
__global__ void __launch_bounds__(kDiagBlock) diag_kernel(const diag_args a)
{
    constexpr int N = 2 * Q;
    constexpr int GV = (N + 2 + 3) / 4; /* float4 per gain row */
    __shared__ float4 gs[2][kKT * GV];
    __shared__ float2 ss[2][kSpan];
    const long long ndiag = (long long)a.n + a.M - 2;
    const int tid = threadIdx.x;
    const long long t0 = (long long)blockIdx.x * kDiagBlock;
    const long long t = t0 + tid;
    const bool valid = t < ndiag;
    const long long S0 = a.j0 - (a.M - 2) + t0; /* onset of the block's first diagonal */
    const long long s = S0 + tid;               /* onset of this diagonal */
    /* offsets run in this block: [ks, ke]; both decrease with s */
    auto kstart = [&](long long sv) { return sv < a.j0 ? (int)(a.j0 - sv + 1) : 1; };
    auto kend = [&](long long sv) {
        return (int)min((long long)(a.M - 1), a.j0 + a.n - sv);
    };
    const long long tlast = min(t0 + kDiagBlock - 1, ndiag - 1);
    const int kloC = kstart(S0 + (tlast - t0)), khiC = kend(S0);
    const long long wfirst = t0 + (tid & ~31), wlast = min(wfirst + 31, ndiag - 1);
    const int kloW = wfirst <= wlast ? kstart(S0 + (wlast - t0)) : INT_MAX;
    const int khiW = wfirst <= wlast ? kend(S0 + (wfirst - t0)) : 0;
    int ks = INT_MAX, ke = 0;
    if (valid) ks = kstart(s), ke = kend(s);

    float z[N], R = 0.0f, C = 0.0f;
    const int slot = (int)(((s % a.M) + a.M) % a.M);
#pragma unroll
    for (int i = 0; i < N; i++)
        z[i] = 0.0f;
    if (valid) {
        if (s < a.j0) {
#pragma unroll
            for (int i = 0; i < N; i++)
                z[i] = a.st_in[(size_t)i * a.M + slot];
            R = a.st_in[(size_t)N * a.M + slot];
            C = a.st_in[(size_t)(N + 1) * a.M + slot];
        } else {
            const int jb = (int)(s - a.j0);
#pragma unroll
            for (int i = 0; i < N; i++)
                z[i] = __ldg(a.zM + (size_t)i * a.ldz + jb);
            R = a.log_alpha; /* d_1 = log alpha + q_1 - L_X: the prior enters here */
        }
    }

    /* tile loads into registers: gain rows kt.., samples from onset S0 at kt */
    float4 pg[kGPre];
    float2 psm[kSPre];
    auto load = [&](int kt) {
#pragma unroll
        for (int r = 0; r < kGPre; r++) {
            const int e = tid + r * kDiagBlock, row = e / GV;
            pg[r] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (e < kKT * GV && kt + row <= a.M - 1)
                pg[r] = __ldg(a.gain + (size_t)(kt - 1) * GV + e);
        }
        const long long jb0 = S0 + kt - 1 - a.j0;
#pragma unroll
        for (int r = 0; r < kSPre; r++) {
            const int e = tid + r * kDiagBlock;
            const long long jb = jb0 + e;
            psm[r] = make_float2(0.f, 0.f);
            if (e < kSpan && jb >= 0 && jb < a.n) psm[r] = __ldg(a.smp + jb);
        }
    };
    auto store = [&](int buf) {
#pragma unroll
        for (int r = 0; r < kGPre; r++) {
            const int e = tid + r * kDiagBlock;
            if (e < kKT * GV) gs[buf][e] = pg[r];
        }
#pragma unroll
        for (int r = 0; r < kSPre; r++) {
            const int e = tid + r * kDiagBlock;
            if (e < kSpan) ss[buf][e] = psm[r];
        }
    };
    load(kloC);
    store(0);
    __syncthreads();
    const int jbase = (int)(s - a.j0) - 1; /* jb = jbase + k */
    int buf = 0;
    for (int kt = kloC; kt <= khiC; kt += kKT, buf ^= 1) {
        const bool more = kt + kKT <= khiC;
        if (more) load(kt + kKT);
        const int k0 = max(kt, kloW), k1 = min(kt + kKT - 1, khiW);
        /* R[k][s + k - 1 - j0]: one step of ldR + 1 per offset */
        float *Rp = a.R + ((long long)(k0 - 1) * a.ldR + (jbase + k0));
        for (int k = k0; k <= k1; k++, Rp += a.ldR + 1) {
            if (k < ks || k > ke) continue;
            const int kk = k - kt;
            float g[4 * GV];
#pragma unroll
            for (int v = 0; v < GV; v++) {
                const float4 w = gs[buf][kk * GV + v];
                g[4 * v] = w.x, g[4 * v + 1] = w.y, g[4 * v + 2] = w.z,
                      g[4 * v + 3] = w.w;
            }
            const float2 x = ss[buf][tid + kk];
            const float e = kstep<Q, float>(z, g, a.ax, a.an, x.x);
            /* q_k - q_M = (c_k - c_M) - h_k e^2 + h_M e_M^2 (0 when missing) */
            const float dc = x.x == x.x ? g[N] : 0.0f;
            const float inc = (dc - g[N + 1] * (e * e)) + x.y;
            const float y = inc - C; /* Kahan */
            const float tt = R + y;
            C = (tt - R) - y;
            R = tt;
            *Rp = R;
        }
        if (more) store(buf ^ 1);
        __syncthreads();
    }
    if (valid && ke < a.M - 1) {
#pragma unroll
        for (int i = 0; i < N; i++)
            a.st_out[(size_t)i * a.M + slot] = z[i];
        a.st_out[(size_t)N * a.M + slot] = R;
        a.st_out[(size_t)(N + 1) * a.M + slot] = C;
    }
}

/* ---- 4. normaliser ------------------------------------------------------------ */

/* log(1 + exp(t)) without overflow, accurate for very negative t. */
__device__ __forceinline__ float softplus(float t)
{
    return t > 0.0f ? t + log1pf(expf(-t)) : log1pf(expf(t));
}

/* C window: Gw[i] = C[j0 - M + i] (double, rebased so C[j0-1] = 0), Gf the
 * same split into float hi + lo for the LLR kernel. */
struct lx_args {
    const float *Rrow; /* row M-1 of R: Dt_{j-M+1, M-1} at column j - j0 */
    float *rlast;      /* carried: that value for the block's last sample */
    double *Gw;
    float2 *Gf;
    int n, M;
    double log_alpha, log1m_alpha;
};

constexpr int kRing = 2048;      /* shared copy of C when M <= kRing / 2 */
constexpr float kQuiet = -18.0f; /* e^y below 1.5e-8: the quiet path */

/* log(e^a + e^b) (fast intrinsics: a term below 2^-24 of the other is
 * dropped, which changes C by less than float rounding). */
struct lse_op {
    __device__ __forceinline__ float operator()(float a, float b) const
    {
        const float m = fmaxf(a, b), d = fminf(a, b) - m;
        return m + __logf(1.0f + __expf(d));
    }
};

/*
 * One thread block walks the block in sub-blocks of L = min(M, T * kLxItems)
 * samples; within one, E[j] = (1 - alpha) E[j-1] + exp(u_j) with u_j known, so
 * relative to b = C[s0-1]:
 *   C[j] = b + (i+1) log(1-alpha) + log(1 + sum_{i' <= i} exp(y_i')),
 *   y_i = u_j - b - (i+1) log(1-alpha),  i = j - s0,
 * a prefix log-sum-exp of the y (CUB block scan). kShared: C is also kept in a shared
 * ring (M <= kRing / 2), so the sub-blocks of small M never wait on global memory.
 */
template <int T, bool kShared>
__global__ void __launch_bounds__(T) lx_kernel(const lx_args a)
{
    using Scan = cub::BlockScan<float, T>;
    __shared__ typename Scan::TempStorage tmp;
    __shared__ double ring[kShared ? kRing : 1];
    constexpr int kTile = T * kLxItems;
    const int L = min(a.M, kTile); /* sub-block: C[j-M] known for all its j */
    double *Gw = a.Gw;             /* written and read here: no read-only cache */
    if (kShared)
        for (int i = threadIdx.x; i < a.M; i += T)
            ring[i] = Gw[i];
    const float r0 = *a.rlast;
    float rp[kLxItems]; /* Dt_{j-M+1,M-1} of the items, loaded a sub-block ahead */
#pragma unroll
    for (int q = 0; q < kLxItems; q++) {
        const int i = threadIdx.x * kLxItems + q;
        rp[q] = i < min(L, a.n) ? (i == 0 ? r0 : a.Rrow[i - 1]) : kNeg;
    }
    __syncthreads();
    for (int s0 = 0; s0 < a.n; s0 += L) {
        const int len = min(L, a.n - s0);
        const double b = kShared ? ring[(a.M + s0 - 1) & (kRing - 1)] : Gw[a.M + s0 - 1];
        float y[kLxItems];
#pragma unroll
        for (int q = 0; q < kLxItems; q++) {
            const int i = threadIdx.x * kLxItems + q;
            y[q] = kNeg;
            if (i < len) {
                const int jb = s0 + i;
                const double cm = kShared ? ring[jb & (kRing - 1)] : Gw[jb]; /* C[j-M] */
                const double u = (double)rp[q] + cm; /* log alpha is in Dt */
                y[q] = (float)(u - b - (double)(i + 1) * a.log1m_alpha);
            }
        }
        /* prefetch the next sub-block's Dt */
        const int s1 = s0 + L, len1 = min(L, a.n - s1);
#pragma unroll
        for (int q = 0; q < kLxItems; q++) {
            const int i = threadIdx.x * kLxItems + q;
            rp[q] = i < len1 ? a.Rrow[s1 + i - 1] : kNeg;
        }
        /* Quiet sub-block (every y < kQuiet: no hypothesis M-1 worth merging):
         * log(1 + sum e^y) = p - p^2/2 to float accuracy with p = sum e^y, a
         * plain prefix sum. Otherwise the prefix log-sum-exp. */
        bool quiet = true;
#pragma unroll
        for (int q = 0; q < kLxItems; q++)
            quiet &= y[q] < kQuiet;
        quiet = __syncthreads_and(quiet);
        float ts[kLxItems];
        if (quiet) {
            float w[kLxItems];
#pragma unroll
            for (int q = 0; q < kLxItems; q++)
                w[q] = __expf(y[q]);
            Scan(tmp).InclusiveSum(w, ts);
#pragma unroll
            for (int q = 0; q < kLxItems; q++)
                ts[q] = ts[q] - 0.5f * (ts[q] * ts[q]);
        } else {
            Scan(tmp).InclusiveScan(y, ts, lse_op());
#pragma unroll
            for (int q = 0; q < kLxItems; q++)
                ts[q] = softplus(ts[q]);
        }
#pragma unroll
        for (int q = 0; q < kLxItems; q++) {
            const int i = threadIdx.x * kLxItems + q;
            if (i < len) {
                const int jb = s0 + i;
                const double G = b + (double)(i + 1) * a.log1m_alpha + (double)ts[q];
                Gw[a.M + jb] = G;
                if (kShared) ring[(a.M + jb) & (kRing - 1)] = G;
                const float hi = (float)G;
                a.Gf[a.M + jb] = make_float2(hi, (float)(G - (double)hi));
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) *a.rlast = a.Rrow[a.n - 1];
}

/* Sub-blocks of the one-warp normaliser whose Dt are loaded ahead. */
constexpr int kLxAhead = 4;
/* One-warp normaliser for M <= 32 * kLxWarpItems. */
constexpr int kLxWarpItems = 8;
/* Plain prefix sum of e^y when every y of a sub-block is below this (no
 * overflow: at most 256 e^60 < 2^128), the prefix log-sum-exp otherwise. */
constexpr float kPlainMax = 60.0f;

/*
 * Normaliser for small M on one warp (IT = ceil(M / 32) items per lane,
 * striped: item i = q * 32 + lane). Sub-blocks are exactly M long, so item i
 * of a sub-block needs C[j - M] = item i of the previous sub-block, computed
 * by the same lane: the window lives in registers as rel[q] = C[j - M] - b
 * (float, b = C[s0 - 1] the sub-block's base), and
 *   y_i = Dt_{j-M+1,M-1} + rel_i - (i + 1) log(1 - alpha),
 *   t_i = log(1 + sum_{i' <= i} e^{y_i'}),
 *   C[j] = b + (i + 1) log(1 - alpha) + t_i     (double, for the LLR),
 *   next rel_i = t_i - t_{M-1} + (i + 1 - M) log(1 - alpha).
 * The prefix is a plain sum of e^y (then log1p) when every y < kPlainMax,
 * else a log-sum-exp scan; both are CUB warp scans, one per stripe, joined
 * by the stripes' totals. The Dt are loaded kLxAhead sub-blocks ahead, so
 * the serial chain per sub-block is the scan, one exp, one log and a shuffle.
 */
template <int IT> __global__ void __launch_bounds__(32) lx_warp_kernel(const lx_args a)
{
    using WScan = cub::WarpScan<float>;
    __shared__ typename WScan::TempStorage tmp[IT];
    const int lane = threadIdx.x, M = a.M, n = a.n;
    const double la = a.log1m_alpha;
    double b = a.Gw[M - 1];
    float rel[IT], cy[IT], cr[IT];
#pragma unroll
    for (int q = 0; q < IT; q++) {
        const int i = q * 32 + lane;
        rel[q] = i < M ? (float)(a.Gw[min(i, M - 1)] - b) : 0.0f;
        cy[q] = (float)(-(double)(i + 1) * la);
        cr[q] = (float)((double)(i + 1 - M) * la);
    }
    const float r0 = *a.rlast;
    float rp[kLxAhead][IT];
    auto fetch = [&](float(&r)[IT], int s0) {
#pragma unroll
        for (int q = 0; q < IT; q++) {
            const int i = q * 32 + lane, j = s0 + i;
            r[q] = kNeg;
            if (i < M && j < n) r[q] = j == 0 ? r0 : a.Rrow[j - 1];
        }
    };
#pragma unroll
    for (int d = 0; d < kLxAhead; d++)
        fetch(rp[d], d * M);
    const int qlast = (M - 1) >> 5, llast = (M - 1) & 31;
    for (int base = 0; base < n; base += kLxAhead * M) {
#pragma unroll
        for (int d = 0; d < kLxAhead; d++) {
            const int s0 = base + d * M;
            if (s0 >= n) break;
            float y[IT];
            bool plain = true;
#pragma unroll
            for (int q = 0; q < IT; q++) {
                y[q] = rp[d][q] + (rel[q] + cy[q]);
                plain &= y[q] < kPlainMax;
            }
            fetch(rp[d], s0 + kLxAhead * M);
            float t[IT];
            if (__all_sync(kFull, plain)) {
                float off = 0.0f;
#pragma unroll
                for (int q = 0; q < IT; q++) {
                    float sq, agg;
                    WScan(tmp[q]).InclusiveSum(__expf(y[q]), sq, agg);
                    t[q] = sq + off;
                    off += agg;
                }
#pragma unroll
                for (int q = 0; q < IT; q++) {
                    const float S = t[q];
                    t[q] = S < 1e-3f ? S * (1.0f - S * (0.5f - S * (1.0f / 3.0f)))
                                     : __logf(1.0f + S);
                }
            } else {
                float off = kNeg;
#pragma unroll
                for (int q = 0; q < IT; q++) {
                    float tq, agg;
                    WScan(tmp[q]).InclusiveScan(y[q], tq, lse_op(), agg);
                    t[q] = softplus(lse_op()(off, tq));
                    off = lse_op()(off, agg);
                }
            }
            float tl = t[0];
#pragma unroll
            for (int q = 1; q < IT; q++)
                if (q == qlast) tl = t[q];
            tl = __shfl_sync(kFull, tl, llast);
#pragma unroll
            for (int q = 0; q < IT; q++) {
                const int i = q * 32 + lane;
                if (i < M && s0 + i < n) {
                    const double G = b + (double)(i + 1) * la + (double)t[q];
                    a.Gw[M + s0 + i] = G;
                    const float hi = (float)G;
                    a.Gf[M + s0 + i] = make_float2(hi, (float)(G - (double)hi));
                }
                rel[q] = (t[q] - tl) + cr[q];
            }
            b += (double)M * la + (double)tl;
        }
    }
    if (lane == 0) *a.rlast = a.Rrow[n - 1];
}

/* Next block's history: the last M values of C, rebased to C[last] = 0. */
__global__ void shift_kernel(const double *__restrict__ Gw, double *__restrict__ Gw_next,
                             float2 *__restrict__ Gf_next, int n, int M)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const double v = Gw[n + i] - Gw[M + n - 1];
    Gw_next[i] = v;
    const float hi = (float)v;
    Gf_next[i] = make_float2(hi, (float)(v - (double)hi));
}

/* ---- 5. LLR ------------------------------------------------------------------- */

struct llr_part {
    float mp, sp; /* present: running max and sum of exp(d - max) */
    float ma, sa; /* absent (without hypothesis M) */
    float best;   /* largest d_k of the slice */
    int kbest;    /* its k (first of equals) */
};

struct llr_args {
    const float *R;
    const float2 *Gf;
    llr_part *part; /* [slice][n] */
    int n, M, Ns, ldR, kslice, tiles;
    float log_alpha;
};

/* Running log-sum-exp over d_k[j] for k in [k0, k1]. */
__device__ __forceinline__ void lse_range(const llr_args &a, int jb, float2 gj, int k0,
                                          int k1, float &m, float &s, float &best,
                                          int &kbest)
{
    for (int k = k0; k <= k1; k += kLlrUnroll) {
        float d[kLlrUnroll];
#pragma unroll
        for (int u = 0; u < kLlrUnroll; u++) {
            const int kk = k + u;
            d[u] = kNeg;
            if (kk <= k1) {
                const float r = __ldg(a.R + (size_t)(kk - 1) * a.ldR + jb);
                const float2 g = __ldg(a.Gf + jb - kk + a.M); /* C[j-k] */
                d[u] = r + ((g.x - gj.x) + (g.y - gj.y));
            }
        }
        float cm = d[0];
        int ck = k;
#pragma unroll
        for (int u = 1; u < kLlrUnroll; u++)
            if (d[u] > cm) cm = d[u], ck = k + u;
        if (cm > best) best = cm, kbest = ck;
        const float nm = fmaxf(m, cm);
        float acc = s * __expf(m - nm);
#pragma unroll
        for (int u = 0; u < kLlrUnroll; u++)
            acc += __expf(d[u] - nm);
        m = nm;
        s = acc;
    }
}

__global__ void __launch_bounds__(32 * kLlrWarps) llr_kernel(const llr_args a)
{
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int tile = blockIdx.x * kLlrWarps + warp;
    if (tile >= a.tiles) return;
    const int j = tile * 32 + lane;
    const int jb = min(j, a.n - 1);
    const int k0 = 1 + blockIdx.y * a.kslice;
    const int k1 = min(a.M - 1, k0 + a.kslice - 1);
    const float2 gj = __ldg(a.Gf + jb + a.M); /* C[j] */
    llr_part p;
    p.mp = kNeg, p.sp = 0.0f, p.ma = kNeg, p.sa = 0.0f, p.best = -INFINITY, p.kbest = k0;
    /* padded offsets (d = -1e30) add exp(-huge) = 0 to the sums */
    if (k0 <= min(k1, a.Ns))
        lse_range(a, jb, gj, k0, min(k1, a.Ns), p.mp, p.sp, p.best, p.kbest);
    if (max(k0, a.Ns + 1) <= k1)
        lse_range(a, jb, gj, max(k0, a.Ns + 1), k1, p.ma, p.sa, p.best, p.kbest);
    if (j < a.n) a.part[(size_t)blockIdx.y * a.n + j] = p;
}

struct finish_args {
    const llr_part *part;
    int n, slices;
    float *llr;      /* may be NULL */
    uint8_t *dec;    /* may be NULL */
    uint32_t *kmax;  /* may be NULL */
    float threshold; /* decision: llr > threshold */
};

__device__ __forceinline__ void lse_merge(float &m, float &s, float m2, float s2)
{
    const float nm = fmaxf(m, m2);
    s = s * __expf(m - nm) + s2 * __expf(m2 - nm);
    m = nm;
}

__global__ void llr_finish_kernel(const finish_args a)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= a.n) return;
    llr_part p = a.part[j];
    for (int sl = 1; sl < a.slices; sl++) {
        const llr_part o = a.part[(size_t)sl * a.n + j];
        lse_merge(p.mp, p.sp, o.mp, o.sp);
        lse_merge(p.ma, p.sa, o.ma, o.sa);
        if (o.best > p.best) p.best = o.best, p.kbest = o.kbest;
    }
    const float present = p.mp + logf(p.sp);
    float absent = 0.0f; /* hypothesis M: d_M = 0 */
    if (p.sa > 0.0f) {
        const float x = p.ma + logf(p.sa);
        absent = fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x)));
    }
    const float L = present - absent;
    if (a.llr) a.llr[j] = L;
    if (a.dec) a.dec[j] = L > a.threshold;
    if (a.kmax) a.kmax[j] = (uint32_t)p.kbest;
}

__global__ void fill_state_kernel(float *st, int M, int N)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (N + 2) * M) return;
    st[i] = (i / M == N) ? kNeg : 0.0f; /* z = 0, Dt = -1e30 (no onset), comp. 0 */
}

unsigned blocks_for(long long items, int threads)
{
    return (unsigned)((items + threads - 1) / threads);
}

} // namespace

#endif /* TRANSIENT_CUDA_KALMAN_KERNELS_CUH */
