/*
 * PAPER boxcar kernels: the paper's GPU design, kept as the benchmark
 * baseline; it evaluates the same nominal set as FAST.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
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
 */
#ifndef TRANSIENT_CUDA_BOXCAR_PAPER_CUH
#define TRANSIENT_CUDA_BOXCAR_PAPER_CUH

#include "boxcar/boxcar_source.cuh"

#include <transient/boxcar.h>

#include <cmath>
#include <cstdint>

namespace boxcar_cuda
{

constexpr int kPaperDitThreads = 512;
constexpr int kPaperIgThreads = 1024;
constexpr int kPaperSpk = 4; /* IGRID steps per kernel */

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

} // namespace boxcar_cuda

#endif /* TRANSIENT_CUDA_BOXCAR_PAPER_CUH */
