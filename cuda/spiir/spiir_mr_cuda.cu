/*
 * Multirate SPIIR filter bank on CUDA (section 2.2 and 3.2 of X. Guo, Q. Chu,
 * S. K. Chung, Z. Du, L. Wen, "Acceleration of low-latency gravitational wave
 * searches using Maxwell-microarchitecture GPUs").
 *
 * The stream is processed in steps of at most `batch` full-rate samples. Per
 * step, on the input stream `xs`: the input is cleaned into x_0 (non-finite
 * values zero, counted), then each level is decimated from the one above (one
 * thread per output sample, the half-band's symmetric pairs in the CPU
 * variant's order). Each level's filters then run in a single-rate context of
 * their own (cuda/spiir/spiir_cuda.cu, FAST or PAPER kernels), all levels
 * concurrently on their own streams, each writing its own sums S_L. On the
 * main stream `ms`, from the lowest level up, a kernel with one thread per
 * (sample, template) adds the interpolated S_{L+1} to S_L (the CPU variant's
 * order again), the last one into the output. The last XHIST samples of every
 * x_L and SHIST rows of every S_L are copied to the front of the other of two
 * buffers for the next step, so that any chunking gives the same bits (every
 * sum has a fixed order; FAST levels are deterministic).
 *
 * The steps overlap: the small sequential kernels of a step (cleaning,
 * decimation, interpolation, history copies) would otherwise leave the
 * levels idle. Step k uses buffer set k % 2, and events order only what
 * shares a buffer: the input stream prepares step k + 1 while the levels run
 * step k (it waits for the levels of step k - 1 before it copies histories
 * into the buffers they read), and a level starts step k once the main stream
 * is done with the sums of step k - 2 (evm), so the interpolation of one step
 * runs beside the levels of the next.
 */
#include "common/cuda_check.h"
#include "spiir/spiir_mr_cuda.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace
{

constexpr int kXH = TR_SPIIR_MR_XHIST;
constexpr int kSH = TR_SPIIR_MR_SHIST;
constexpr int kDC = TR_SPIIR_MR_DEC_DELAY;
constexpr int kIC = TR_SPIIR_MR_INT_DELAY;
constexpr int kDP = (TR_SPIIR_MR_DEC_DELAY + 1) / 2;
constexpr int kIP = (TR_SPIIR_MR_INT_DELAY + 1) / 2;
constexpr int kMaxLev = TR_SPIIR_MAX_LEVEL + 1;

struct dec_taps {
    float c;      /* g[DC] */
    float p[kDP]; /* g[DC - j], j = 1, 3, .. */
};
struct int_taps {
    float p[kIP]; /* 2 p[IC - j], j = 1, 3, .. */
};

/* x_0 new samples: cleaned copy, non-finite values counted. */
__global__ void clean_kernel(const float *__restrict__ x, float *__restrict__ dst,
                             int64_t nv, unsigned long long *bad)
{
    unsigned b = 0;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < nv;
         i += (int64_t)gridDim.x * blockDim.x) {
        const float r = x[i];
        const float v = (r - r) == 0.0f ? r : 0.0f;
        b += v != r;
        dst[i] = v;
    }
    if (b) atomicAdd(bad, (unsigned long long)b);
}

/* x_{l+1}[s_lo + j] for j < n_lo from x_l (row i of `x` is x_l[s_hi - XH + i]). */
template <int C>
__global__ void decimate_kernel(const float *__restrict__ x, float *__restrict__ y,
                                int64_t s_hi, int64_t s_lo, int64_t n_lo, dec_taps g)
{
    const int64_t j = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n_lo) return;
    const int64_t r = 2 * (s_lo + j) - kDC + kXH - s_hi;
#pragma unroll
    for (int k = 0; k < C; k++) {
        float acc = g.c * x[r * C + k];
#pragma unroll
        for (int q = 0; q < kDP; q++) {
            const int64_t d = 2 * q + 1;
            acc += g.p[q] * (x[(r - d) * C + k] + x[(r + d) * C + k]);
        }
        y[j * C + k] = acc;
    }
}

/* out[j][t] += interpolated S_{l+1} at level-l sample s_hi + j (row i of S is
 * S_{l+1}[s_lo - SH + i]; rows >= srows are not read). One thread per template
 * and kRows consecutive rows: the S rows those outputs need (kRows / 2 + 24)
 * are loaded once into registers, rather than up to 24 loads per output (the
 * arithmetic of each output is unchanged: the same bits). kPar: parity of
 * s_hi - INT_DELAY (rows blocks start at even j, so it is one per launch). */
constexpr int kRows = 32;
constexpr int kWin = kRows / 2 + 24;

template <int kPar>
__global__ void __launch_bounds__(128)
    interp_add_kernel(const float2 *__restrict__ S, float2 *__restrict__ out,
                      int64_t s_hi, int64_t n_hi, int64_t s_lo, int64_t srows,
                      uint32_t nt, int_taps w)
{
    static_assert(kIP == 12 && (kIC & 1) == 1, "window layout assumes 47 taps");
    const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const int64_t nrb = (n_hi + kRows - 1) / kRows;
    if (e >= nrb * (int64_t)nt) return;
    const int64_t rb = e / nt, t = e - rb * nt;
    const int64_t j0 = rb * kRows;
    const int64_t u0 = s_hi + j0 - kIC; /* parity kPar */
    /* S index of win[0]: even u0: u0 / 2 - 12; odd u0: (u0 - 1) / 2 - 11. */
    const int64_t b = (kPar == 0 ? u0 / 2 - 12 : (u0 - 1) / 2 - 11) + kSH - s_lo;
    float2 win[kWin];
#pragma unroll
    for (int i = 0; i < kWin; i++) {
        const int64_t r = b + i;
        win[i] = r >= 0 && r < srows ? S[r * nt + t] : make_float2(0.0f, 0.0f);
    }
#pragma unroll
    for (int r = 0; r < kRows; r++) {
        if (j0 + r >= n_hi) break;
        float2 *po = out + (size_t)(j0 + r) * nt + t;
        float2 o = *po;
        if (((r + kPar) & 1) == 0) { /* u = u0 + r even: a sample of S itself */
            const float2 a = win[kPar == 0 ? 12 + r / 2 : 11 + (r + 1) / 2];
            o.x += a.x;
            o.y += a.y;
        } else {
            float tr = 0.0f, ti = 0.0f;
#pragma unroll
            for (int q = 0; q < kIP; q++) {
                const int d = 2 * q + 1;
                const float2 a = win[kPar == 0 ? 12 + (r + d) / 2 : 11 + (1 + r + d) / 2];
                const float2 c = win[kPar == 0 ? 12 + (r - d) / 2 : 11 + (1 + r - d) / 2];
                tr += w.p[q] * (a.x + c.x);
                ti += w.p[q] * (a.y + c.y);
            }
            o.x += tr;
            o.y += ti;
        }
        *po = o;
    }
}

unsigned blocks_for(int64_t n, int threads)
{
    const int64_t b = (n + threads - 1) / threads;
    return (unsigned)std::max<int64_t>(1, std::min<int64_t>(b, (int64_t)1 << 30));
}

} // namespace

struct tr_cuda_spiir_mr {
    int device;
    int C;
    uint32_t nt;
    int nlev;
    size_t batch;      /* full-rate samples per step */
    size_t host_batch; /* samples per host round trip */
    tr_cuda_spiir *lev[kMaxLev];
    size_t cap[kMaxLev];
    float *d_x[kMaxLev][2];  /* x_L: XH history + new samples (C floats each) */
    float2 *d_S[kMaxLev][2]; /* L >= 1: SH history rows + new rows of nt values */
    int cur;
    uint64_t pos;
    dec_taps g;
    int_taps w;
    cudaStream_t ms, xs;      /* main (interpolation, output) and input streams */
    cudaEvent_t evx;          /* xs: this step's x_L ready */
    cudaEvent_t evl[kMaxLev]; /* level L done with its step */
    cudaEvent_t evm[2];       /* ms: done with the level sums of buffer set i */
    cudaEvent_t evs;          /* ordering between ms and xs at call ends */
    unsigned long long *d_bad, *h_bad;
    float *d_in, *d_out; /* host path */
};

namespace
{

void mr_free(tr_cuda_spiir_mr *c)
{
    if (!c) return;
    if (c->device >= 0) {
        cudaSetDevice(c->device);
        if (c->ms) cudaStreamSynchronize(c->ms);
        if (c->xs) cudaStreamSynchronize(c->xs);
    }
    for (int l = 0; l < kMaxLev; l++) {
        if (c->lev[l]) tr_cuda_spiir_destroy(c->lev[l]);
        for (int i = 0; i < 2; i++) {
            cudaFree(c->d_x[l][i]);
            cudaFree(c->d_S[l][i]);
        }
        if (c->evl[l]) cudaEventDestroy(c->evl[l]);
    }
    if (c->evx) cudaEventDestroy(c->evx);
    if (c->evs) cudaEventDestroy(c->evs);
    for (int i = 0; i < 2; i++)
        if (c->evm[i]) cudaEventDestroy(c->evm[i]);
    cudaFree(c->d_bad);
    cudaFreeHost(c->h_bad);
    cudaFree(c->d_in);
    cudaFree(c->d_out);
    if (c->ms) cudaStreamDestroy(c->ms);
    if (c->xs) cudaStreamDestroy(c->xs);
    cudaGetLastError();
    free(c);
}

} // namespace

extern "C" tr_status tr_cuda_spiir_mr_create(int device,
                                             const tr_cuda_spiir_mr_plan *plan,
                                             int complex_input, tr_variant variant,
                                             size_t batch, tr_cuda_spiir_mr **out,
                                             tr_error *err)
{
    *out = NULL;
    if (!plan || batch == 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir/cuda multirate: no plan or zero batch");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "spiir/cuda: no %s variant on CUDA",
                       tr_variant_name(variant));
    tr_cuda_spiir_mr *c = (tr_cuda_spiir_mr *)calloc(1, sizeof *c);
    if (!c)
        return tr_fail(err, TR_ERR_NOMEM,
                       "spiir/cuda multirate: cannot allocate the context");
    c->device = -1;
    c->C = complex_input ? 2 : 1;
    c->nt = plan->ntemplates;
    c->nlev = plan->nlev;
    c->batch = std::min<size_t>(batch, (size_t)1 << 22);
    {
        const size_t per_sample = (size_t)c->nt * 2 * sizeof(float);
        const size_t cap = std::max<size_t>(64, ((size_t)32 << 20) / per_sample);
        c->host_batch = std::min(c->batch, cap);
    }
    c->g.c = (float)plan->dec[kDC];
    for (int q = 0; q < kDP; q++)
        c->g.p[q] = (float)plan->dec[kDC - (2 * q + 1)];
    for (int q = 0; q < kIP; q++)
        c->w.p[q] = (float)(2.0 * plan->itp[kIC - (2 * q + 1)]);

    TR_CUDA_TRY(cudaSetDevice(device), err, "spiir/cuda multirate: select device", fail);
    c->device = device;
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&c->ms, cudaStreamNonBlocking), err,
                "spiir/cuda multirate: create stream", fail);
    TR_CUDA_TRY(cudaStreamCreateWithFlags(&c->xs, cudaStreamNonBlocking), err,
                "spiir/cuda multirate: create stream", fail);
    TR_CUDA_TRY(cudaEventCreateWithFlags(&c->evx, cudaEventDisableTiming), err,
                "spiir/cuda multirate: create event", fail);
    TR_CUDA_TRY(cudaEventCreateWithFlags(&c->evs, cudaEventDisableTiming), err,
                "spiir/cuda multirate: create event", fail);
    for (int i = 0; i < 2; i++)
        TR_CUDA_TRY(cudaEventCreateWithFlags(&c->evm[i], cudaEventDisableTiming), err,
                    "spiir/cuda multirate: create event", fail);
    for (int l = 0; l < c->nlev; l++) {
        c->cap[l] = (c->batch >> l) + 1;
        TR_CUDA_TRY(cudaEventCreateWithFlags(&c->evl[l], cudaEventDisableTiming), err,
                    "spiir/cuda multirate: create event", fail);
        for (int i = 0; i < 2; i++) {
            TR_CUDA_TRY(
                cudaMalloc(&c->d_x[l][i], (kXH + c->cap[l]) * c->C * sizeof(float)), err,
                "spiir/cuda multirate: allocate decimated input", fail);
            if (l > 0)
                TR_CUDA_TRY(
                    cudaMalloc(&c->d_S[l][i], (kSH + c->cap[l]) * c->nt * sizeof(float2)),
                    err, "spiir/cuda multirate: allocate level sums", fail);
        }
        if (plan->level[l].ntemplates) {
            /* The levels already run side by side on their own streams:
             * segmenting their time only adds work (docs/spiir.md). */
            tr_cuda_spiir_bank level = plan->level[l];
            level.whole_batches = 1;
            const tr_status s = tr_cuda_spiir_create(device, &level, complex_input,
                                                     variant, c->cap[l], &c->lev[l], err);
            if (s != TR_OK) goto fail;
        }
    }
    TR_CUDA_TRY(cudaMalloc(&c->d_bad, sizeof *c->d_bad), err,
                "spiir/cuda multirate: allocate", fail);
    TR_CUDA_TRY(cudaMallocHost(&c->h_bad, sizeof *c->h_bad), err,
                "spiir/cuda multirate: allocate", fail);
    TR_CUDA_TRY(cudaMalloc(&c->d_in, c->host_batch * c->C * sizeof(float)), err,
                "spiir/cuda multirate: allocate input", fail);
    TR_CUDA_TRY(cudaMalloc(&c->d_out, c->host_batch * c->nt * sizeof(float2)), err,
                "spiir/cuda multirate: allocate output", fail);
    if (tr_cuda_spiir_mr_reset(c, err) != TR_OK) goto fail;
    *out = c;
    return TR_OK;
fail:
    mr_free(c);
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" void tr_cuda_spiir_mr_destroy(tr_cuda_spiir_mr *c)
{
    mr_free(c);
}

extern "C" tr_status tr_cuda_spiir_mr_reset(tr_cuda_spiir_mr *c, tr_error *err)
{
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda multirate: select device",
                fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->xs), err, "spiir/cuda multirate: reset", fail);
    for (int l = 0; l < c->nlev; l++) {
        if (c->lev[l]) {
            const tr_status s = tr_cuda_spiir_reset(c->lev[l], err);
            if (s != TR_OK) return s;
        }
        for (int i = 0; i < 2; i++) {
            TR_CUDA_TRY(cudaMemsetAsync(c->d_x[l][i], 0,
                                        (kXH + c->cap[l]) * c->C * sizeof(float), c->ms),
                        err, "spiir/cuda multirate: clear", fail);
            if (c->d_S[l][i])
                TR_CUDA_TRY(cudaMemsetAsync(c->d_S[l][i], 0,
                                            (kSH + c->cap[l]) * c->nt * sizeof(float2),
                                            c->ms),
                            err, "spiir/cuda multirate: clear", fail);
        }
    }
    TR_CUDA_TRY(cudaStreamSynchronize(c->ms), err, "spiir/cuda multirate: reset", fail);
    c->cur = 0;
    c->pos = 0;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

namespace
{

/* One step: n <= batch full-rate samples d_x into d_snr (n rows); see the top
 * of this file for what each stream does and waits for. */
tr_status mr_step(tr_cuda_spiir_mr *c, const float *d_x, int64_t n, float2 *d_snr,
                  tr_error *err)
{
    const int C = c->C, cu = c->cur, nx = cu ^ 1;
    int64_t s[kMaxLev], m[kMaxLev];
    for (int l = 0; l < c->nlev; l++) {
        s[l] = (int64_t)tr_spiir_mr_count(c->pos, l);
        m[l] = (int64_t)tr_spiir_mr_count(c->pos + (uint64_t)n, l) - s[l];
    }
    clean_kernel<<<blocks_for(n * C, 256), 256, 0, c->xs>>>(
        d_x, c->d_x[0][cu] + (size_t)kXH * C, n * C, c->d_bad);
    TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda multirate: launch clean kernel",
                fail);
    for (int l = 0; l + 1 < c->nlev; l++) {
        if (m[l + 1] == 0) continue;
        const float *src = c->d_x[l][cu];
        float *dst = c->d_x[l + 1][cu] + (size_t)kXH * C;
        if (C == 1)
            decimate_kernel<1><<<blocks_for(m[l + 1], 128), 128, 0, c->xs>>>(
                src, dst, s[l], s[l + 1], m[l + 1], c->g);
        else
            decimate_kernel<2><<<blocks_for(m[l + 1], 128), 128, 0, c->xs>>>(
                src, dst, s[l], s[l + 1], m[l + 1], c->g);
        TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda multirate: launch decimator",
                    fail);
    }
    TR_CUDA_TRY(cudaEventRecord(c->evx, c->xs), err, "spiir/cuda multirate: event", fail);
    /* Input histories into the other buffers, once the levels of the previous
     * step (the last records of evl) no longer read them. */
    for (int l = 0; l < c->nlev; l++) {
        if (c->lev[l])
            TR_CUDA_TRY(cudaStreamWaitEvent(c->xs, c->evl[l], 0), err,
                        "spiir/cuda multirate: order input", fail);
    }
    for (int l = 0; l < c->nlev; l++)
        TR_CUDA_TRY(cudaMemcpyAsync(c->d_x[l][nx], c->d_x[l][cu] + (size_t)m[l] * C,
                                    (size_t)kXH * C * sizeof(float),
                                    cudaMemcpyDeviceToDevice, c->xs),
                    err, "spiir/cuda multirate: keep history", fail);
    /* Each level's own sums, concurrently. */
    for (int l = 0; l < c->nlev; l++) {
        float2 *o = l == 0 ? d_snr : c->d_S[l][cu] + (size_t)kSH * c->nt;
        if (m[l] == 0) continue;
        if (!c->lev[l]) {
            TR_CUDA_TRY(
                cudaMemsetAsync(o, 0, (size_t)m[l] * c->nt * sizeof(float2), c->ms), err,
                "spiir/cuda multirate: clear level sums", fail);
            continue;
        }
        cudaStream_t ls = (cudaStream_t)tr_cuda_spiir_stream(c->lev[l]);
        TR_CUDA_TRY(cudaStreamWaitEvent(ls, c->evx, 0), err,
                    "spiir/cuda multirate: order levels", fail);
        TR_CUDA_TRY(cudaStreamWaitEvent(ls, c->evm[cu], 0), err,
                    "spiir/cuda multirate: order levels", fail);
        const tr_status st =
            tr_cuda_spiir_enqueue(c->lev[l], c->d_x[l][cu] + (size_t)kXH * C,
                                  (size_t)m[l], reinterpret_cast<float *>(o), err);
        if (st != TR_OK) return st;
        TR_CUDA_TRY(cudaEventRecord(c->evl[l], ls), err, "spiir/cuda multirate: event",
                    fail);
        TR_CUDA_TRY(cudaStreamWaitEvent(c->ms, c->evl[l], 0), err,
                    "spiir/cuda multirate: join levels", fail);
    }
    /* From the lowest level up. */
    for (int l = c->nlev - 2; l >= 0; l--) {
        if (m[l] == 0) continue;
        float2 *o = l == 0 ? d_snr : c->d_S[l][cu] + (size_t)kSH * c->nt;
        const int64_t e = (m[l] + kRows - 1) / kRows * (int64_t)c->nt;
        const int64_t srows = kSH + m[l + 1];
        if (((s[l] - kIC) & 1) == 0)
            interp_add_kernel<0><<<blocks_for(e, 128), 128, 0, c->ms>>>(
                c->d_S[l + 1][cu], o, s[l], m[l], s[l + 1], srows, c->nt, c->w);
        else
            interp_add_kernel<1><<<blocks_for(e, 128), 128, 0, c->ms>>>(
                c->d_S[l + 1][cu], o, s[l], m[l], s[l + 1], srows, c->nt, c->w);
        TR_CUDA_TRY(cudaGetLastError(), err, "spiir/cuda multirate: launch interpolator",
                    fail);
    }
    for (int l = 1; l < c->nlev; l++)
        TR_CUDA_TRY(cudaMemcpyAsync(c->d_S[l][nx], c->d_S[l][cu] + (size_t)m[l] * c->nt,
                                    (size_t)kSH * c->nt * sizeof(float2),
                                    cudaMemcpyDeviceToDevice, c->ms),
                    err, "spiir/cuda multirate: keep history", fail);
    TR_CUDA_TRY(cudaEventRecord(c->evm[cu], c->ms), err, "spiir/cuda multirate: event",
                fail);
    c->cur = nx;
    c->pos += (uint64_t)n;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

tr_status mr_finish(tr_cuda_spiir_mr *c, uint64_t *nonfinite, tr_error *err)
{
    TR_CUDA_TRY(cudaEventRecord(c->evs, c->xs), err, "spiir/cuda multirate: event", fail);
    TR_CUDA_TRY(cudaStreamWaitEvent(c->ms, c->evs, 0), err,
                "spiir/cuda multirate: join input stream", fail);
    TR_CUDA_TRY(cudaMemcpyAsync(c->h_bad, c->d_bad, sizeof *c->h_bad,
                                cudaMemcpyDeviceToHost, c->ms),
                err, "spiir/cuda multirate: download non-finite count", fail);
    TR_CUDA_TRY(cudaStreamSynchronize(c->ms), err, "spiir/cuda multirate: kernels", fail);
    if (nonfinite) *nonfinite += *c->h_bad;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace

extern "C" tr_status tr_cuda_spiir_mr_run_device(tr_cuda_spiir_mr *c, const float *d_x,
                                                 size_t n, float *d_snr,
                                                 uint64_t *nonfinite, tr_error *err)
{
    if (n == 0) return TR_OK;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda multirate: select device",
                fail);
    TR_CUDA_TRY(tr_cuda_caller_ready(), err,
                "spiir/cuda multirate: wait for the caller's stream", fail);
    /* The input stream starts after the main stream's work (the host path's
     * upload of d_x). */
    TR_CUDA_TRY(cudaEventRecord(c->evs, c->ms), err, "spiir/cuda multirate: event", fail);
    TR_CUDA_TRY(cudaStreamWaitEvent(c->xs, c->evs, 0), err,
                "spiir/cuda multirate: order input stream", fail);
    TR_CUDA_TRY(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->xs), err,
                "spiir/cuda multirate: clear counter", fail);
    for (size_t off = 0; off < n; off += c->batch) {
        const size_t len = std::min(c->batch, n - off);
        const tr_status s = mr_step(c, d_x + off * c->C, (int64_t)len,
                                    reinterpret_cast<float2 *>(d_snr) + off * c->nt, err);
        if (s != TR_OK) return s;
    }
    return mr_finish(c, nonfinite, err);
fail:
    return err ? err->code : TR_ERR_CUDA;
}

extern "C" tr_status tr_cuda_spiir_mr_run_host(tr_cuda_spiir_mr *c, const float *x,
                                               size_t n, float *snr, uint64_t *nonfinite,
                                               tr_error *err)
{
    if (n == 0) return TR_OK;
    const size_t per_out = (size_t)c->nt * 2;
    TR_CUDA_TRY(cudaSetDevice(c->device), err, "spiir/cuda multirate: select device",
                fail);
    for (size_t off = 0; off < n; off += c->host_batch) {
        const size_t len = std::min(c->host_batch, n - off);
        TR_CUDA_TRY(cudaMemcpyAsync(c->d_in, x + off * c->C, len * c->C * sizeof(float),
                                    cudaMemcpyHostToDevice, c->ms),
                    err, "spiir/cuda multirate: upload samples", fail);
        const tr_status s =
            tr_cuda_spiir_mr_run_device(c, c->d_in, len, c->d_out, nonfinite, err);
        if (s != TR_OK) return s;
        TR_CUDA_TRY(cudaMemcpyAsync(snr + off * per_out, c->d_out,
                                    len * per_out * sizeof(float), cudaMemcpyDeviceToHost,
                                    c->ms),
                    err, "spiir/cuda multirate: download SNR", fail);
        TR_CUDA_TRY(cudaStreamSynchronize(c->ms), err, "spiir/cuda multirate: download",
                    fail);
    }
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}
