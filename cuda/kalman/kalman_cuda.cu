/*
 * Kalman-bank detector on CUDA: the context of lib/core/kalman/kalman_internal.h
 * and the host pipeline of the FAST variant (its kernels are in
 * kalman_kernels.cuh, the PAPER variant is in kalman_paper.cu): buffers,
 * streams, block sizes, the per-block launch sequence and the extern "C"
 * launchers.
 */
#include "common/cuda_check.h"
#include "common/cuda_raii.cuh"
#include "kalman/kalman_kernels.cuh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace
{

constexpr size_t kRBytes = (size_t)2 << 30; /* register buffers R, two streams: 2 GiB */
/* One stream: one register buffer of at most 6 GiB (below 2^31 floats) and a
 * quarter of the free device memory. */
constexpr size_t kRBytesSerial = (size_t)6 << 30;
constexpr int kLongM = 2048;       /* longer blocks above this M (see fast_create) */
constexpr bool kSerialLong = true; /* one stream above kLongM */

} // namespace

/* ---- context ------------------------------------------------------------------- */

struct tr_cuda_kalman {
    int device;
    tr_variant variant;
    tr_kalman_paper *paper; /* PAPER variant, or NULL */
    /* FAST */
    int Q, M, Ns;
    double log_alpha, log1m_alpha;
    int B;                 /* samples per block (multiple of kChunk) */
    long long pos;         /* samples processed */
    int cur;               /* state ring / C window read this block */
    tr_cuda_stream stream; /* noise-only filter and diagonals */
    tr_cuda_stream s2;     /* normaliser, LLR (overlap the next block's diagonals) */
    int serial;            /* one stream (TR_KALMAN_CUDA_SERIAL set) */
    int rb;                /* register buffer of this block */
    tr_cuda_event ev_diag[2], ev_llr[2];
    nf_consts nc;
    float ax[TR_CUDA_KALMAN_FAST_MAX_Q], an[TR_CUDA_KALMAN_FAST_MAX_Q];
    tr_device_buffer<float4> d_gain;
    tr_device_buffer<double> d_P;
    tr_device_buffer<float2> d_smp;
    tr_device_buffer<float> d_part, d_zstart, d_zM;
    tr_device_buffer<int> d_flag;
    tr_device_buffer<double> d_zcarry;
    tr_device_buffer<float> d_st[2];
    tr_device_buffer<float> Rbuf[2]; /* register buffers (one when serial) */
    float *d_Rbuf[2];                /* the buffer of even and odd blocks */
    tr_device_buffer<float> d_rlast;
    tr_device_buffer<double> d_Gw[2];
    tr_device_buffer<float2> d_Gf[2];
    tr_device_buffer<llr_part> d_lpart;
    int max_slices;
    tr_device_buffer<float> d_in, d_llr;
    tr_device_buffer<uint32_t> d_kmax;
    tr_device_buffer<unsigned long long> d_bad;
    tr_pinned_buffer<float> h_in, h_llr;
    tr_pinned_buffer<uint32_t> h_kmax;
    tr_pinned_buffer<unsigned long long> h_bad;
    int prof;            /* stage timing on */
    tr_cuda_event ev[6]; /* stage boundaries */
    double stage_ms[5];  /* accumulated stage times */

    /* The members are released on the context's device. */
    ~tr_cuda_kalman()
    {
        if (paper) tr_kalman_paper_destroy(paper);
        (void)cudaSetDevice(device);
    }
};

namespace
{

/* Chunk transition of the noise-only filter, (A (I - K_M h'))^kChunk, in double. */
std::vector<double> chunk_transition(const tr_kalman_model *m)
{
    const int N = (int)m->n, Q = (int)m->Q;
    const double *K = m->K + (size_t)(m->M - 1) * N;
    std::vector<double> F(N * N), P(N * N, 0.0), T(N * N);
    for (int i = 0; i < N; i++)
        for (int l = 0; l < N; l++) {
            /* (A (I - K h'))[i][l] = A[i][l] - (A K)[i] h[l], h = e_0 + e_Q */
            double AK = 0.0;
            for (int t = 0; t < N; t++)
                AK += m->A[i * N + t] * K[t];
            F[i * N + l] = m->A[i * N + l] - ((l == 0 || l == Q) ? AK : 0.0);
        }
    for (int i = 0; i < N; i++)
        P[i * N + i] = 1.0;
    for (int s = 0; s < kChunk; s++) {
        for (int i = 0; i < N; i++)
            for (int l = 0; l < N; l++) {
                double v = 0.0;
                for (int t = 0; t < N; t++)
                    v += F[i * N + t] * P[t * N + l];
                T[i * N + l] = v;
            }
        P.swap(T);
    }
    return P;
}

tr_status fast_create(tr_cuda_kalman *c, const tr_kalman_model *m, size_t batch,
                      tr_error *err)
{
    const int Q = (int)m->Q, N = 2 * Q, M = (int)m->M;
    if (!m->companion)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "kalman/cuda: the fast variant needs a block-companion A");
    if (Q > TR_CUDA_KALMAN_FAST_MAX_Q)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "kalman/cuda: the fast variant supports Q <= %d (model: Q = %d)",
                       TR_CUDA_KALMAN_FAST_MAX_Q, Q);
    if (M > (1 << 24) || (long long)(M - 1) * kChunk * 4 > (long long)8 << 30)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "kalman/cuda: M = %d is too large", M);
    c->Q = Q;
    c->M = M;
    /* Block length: the register buffer (M-1) x B floats within kRBytes. */
    size_t B = std::max<size_t>(batch, 1);
    /* Two streams: the normaliser and the LLR of a block overlap the next
     * block's noise-only filter and diagonals; TR_KALMAN_CUDA_SERIAL selects
     * one stream and one buffer.
     * Long targets (M > kLongM) need long blocks, since the diagonal kernel
     * runs B + M - 2 diagonals of up to M - 1 steps and with B of a few M
     * its thread blocks fill the GPU unevenly: their register buffers take
     * up to kRBytesSerial in all (at most a quarter of the free memory), and
     * one stream is the default there (the diagonal kernel is issue-bound and
     * leaves the LLR little room; docs/kalman.md has the measurements). */
    const char *ser = getenv("TR_KALMAN_CUDA_SERIAL");
    c->serial = (ser && *ser && strcmp(ser, "0") != 0) || (kSerialLong && M > kLongM);
    size_t rbytes = c->serial ? kRBytes : kRBytes / 2;
    if (M > kLongM) {
        size_t fr = 0, tot = 0;
        if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) fr = 0; /* then 2 GiB */
        (void)cudaGetLastError();
        rbytes = std::max(kRBytes, std::min(kRBytesSerial, fr / 4));
        if (!c->serial) rbytes /= 2;
    }
    const size_t bmax = std::max<size_t>(rbytes / 4 / (size_t)(M - 1), kChunk);
    B = std::min(B, bmax);
    B = std::min<size_t>(B, 1 << 24);
    B = (B + kChunk - 1) / kChunk * kChunk;
    c->B = (int)B;
    const int nch = c->B / kChunk;

    /* host constants */
    const double *KM = m->K + (size_t)(M - 1) * N;
    memset(&c->nc, 0, sizeof c->nc);
    for (int i = 0; i < N; i++) {
        c->nc.K[i] = (float)KM[i];
        c->nc.Kd[i] = KM[i];
    }
    for (int i = 0; i < Q; i++) {
        c->nc.ax[i] = c->ax[i] = (float)m->ax[i];
        c->nc.an[i] = c->an[i] = (float)m->an[i];
        c->nc.axd[i] = m->ax[i];
        c->nc.and_[i] = m->an[i];
    }
    c->nc.hM = (float)m->h[M - 1];
    const int GV = (N + 2 + 3) / 4;
    std::vector<float> gain((size_t)(M - 1) * GV * 4, 0.0f);
    for (int k = 1; k <= M - 1; k++) {
        float *g = &gain[(size_t)(k - 1) * GV * 4];
        for (int i = 0; i < N; i++)
            g[i] = (float)m->K[(size_t)(k - 1) * N + i];
        g[N] = (float)(m->c[k - 1] - m->c[M - 1]);
        g[N + 1] = (float)m->h[k - 1];
    }
    const std::vector<double> P = chunk_transition(m);

    /* LLR slices: enough warps to fill the GPU for this block length. */
    const int tiles = (c->B + 31) / 32;
    c->max_slices =
        std::max(1, std::min((M - 1 + 31) / 32, (132 * 32 + tiles - 1) / tiles));

    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "kalman/cuda: create stream");
    TR_CUDA_CHECK(c->s2.create(cudaStreamNonBlocking), err, "kalman/cuda: create stream");
    for (int i = 0; i < 2; i++) {
        TR_CUDA_CHECK(c->ev_diag[i].create(cudaEventDisableTiming), err,
                      "kalman/cuda: create event");
        TR_CUDA_CHECK(c->ev_llr[i].create(cudaEventDisableTiming), err,
                      "kalman/cuda: create event");
    }
    TR_CUDA_CHECK(c->d_gain.alloc(gain.size() / 4), err, "kalman/cuda: allocate gains");
    TR_CUDA_CHECK(cudaMemcpy(c->d_gain, gain.data(), gain.size() * sizeof(float),
                             cudaMemcpyHostToDevice),
                  err, "kalman/cuda: upload gains");
    TR_CUDA_CHECK(c->d_P.alloc(P.size()), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(
        cudaMemcpy(c->d_P, P.data(), P.size() * sizeof(double), cudaMemcpyHostToDevice),
        err, "kalman/cuda: upload chunk transition");
    TR_CUDA_CHECK(c->d_smp.alloc(c->B), err, "kalman/cuda: allocate samples");
    TR_CUDA_CHECK(c->d_part.alloc((size_t)nch * N), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_zstart.alloc((size_t)nch * N), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_flag.alloc(nch), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_zM.alloc((size_t)N * c->B), err,
                  "kalman/cuda: allocate noise-only states");
    TR_CUDA_CHECK(c->d_zcarry.alloc(N), err, "kalman/cuda: allocate");
    for (int i = 0; i < 2; i++) {
        TR_CUDA_CHECK(c->d_st[i].alloc((size_t)(N + 2) * M), err,
                      "kalman/cuda: allocate diagonal states");
        TR_CUDA_CHECK(c->d_Gw[i].alloc((size_t)M + c->B), err,
                      "kalman/cuda: allocate normaliser window");
        TR_CUDA_CHECK(c->d_Gf[i].alloc((size_t)M + c->B), err,
                      "kalman/cuda: allocate normaliser window");
    }
    for (int i = 0; i < (c->serial ? 1 : 2); i++)
        TR_CUDA_CHECK(c->Rbuf[i].alloc((size_t)(M - 1) * c->B), err,
                      "kalman/cuda: allocate the register buffer");
    c->d_Rbuf[0] = c->Rbuf[0];
    c->d_Rbuf[1] = c->serial ? c->Rbuf[0] : c->Rbuf[1];
    TR_CUDA_CHECK(c->d_rlast.alloc(1), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_lpart.alloc((size_t)c->max_slices * c->B), err,
                  "kalman/cuda: allocate LLR partials");
    TR_CUDA_CHECK(c->d_in.alloc(c->B), err, "kalman/cuda: allocate input");
    TR_CUDA_CHECK(c->d_llr.alloc(c->B), err, "kalman/cuda: allocate LLR");
    TR_CUDA_CHECK(c->d_kmax.alloc(c->B), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->h_in.alloc(c->B), err, "kalman/cuda: allocate pinned input");
    TR_CUDA_CHECK(c->h_llr.alloc(c->B), err, "kalman/cuda: allocate pinned LLR");
    TR_CUDA_CHECK(c->h_kmax.alloc(c->B), err, "kalman/cuda: allocate pinned buffer");
    TR_CUDA_CHECK(c->d_bad.alloc(1), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->h_bad.alloc(1), err, "kalman/cuda: allocate pinned counter");
    return TR_OK;
}

tr_status fast_reset(tr_cuda_kalman *c, tr_error *err)
{
    const int N = 2 * c->Q, M = c->M;
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "kalman/cuda: select device");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->s2), err, "kalman/cuda: reset");
    fill_state_kernel<<<blocks_for((long long)(N + 2) * M, 256), 256, 0, c->stream>>>(
        c->d_st[0], M, N);
    TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch reset");
    TR_CUDA_CHECK(cudaMemsetAsync(c->d_Gw[0], 0, (size_t)M * sizeof(double), c->stream),
                  err, "kalman/cuda: reset");
    TR_CUDA_CHECK(cudaMemsetAsync(c->d_Gf[0], 0, (size_t)M * sizeof(float2), c->stream),
                  err, "kalman/cuda: reset");
    TR_CUDA_CHECK(cudaMemsetAsync(c->d_zcarry, 0, (size_t)N * sizeof(double), c->stream),
                  err, "kalman/cuda: reset");
    TR_CUDA_CHECK(cudaMemcpyAsync(c->d_rlast, &kNeg, sizeof(float),
                                  cudaMemcpyHostToDevice, c->stream),
                  err, "kalman/cuda: reset");
    TR_CUDA_CHECK(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                  "kalman/cuda: reset");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "kalman/cuda: reset");
    c->pos = 0;
    c->cur = 0;
    return TR_OK;
}

template <int Q> cudaError_t launch_nf(tr_cuda_kalman *c, int n, int nch)
{
    const int nb = blocks_for(nch, 128);
    nf_partial_kernel<Q>
        <<<nb, 128, 0, c->stream>>>(c->d_smp, n, c->nc, c->d_part, c->d_flag);
    nf_combine_kernel<Q><<<1, 1, 0, c->stream>>>(c->d_smp, n, c->nc, c->d_P, c->d_part,
                                                 c->d_flag, c->d_zstart, c->d_zcarry);
    nf_final_kernel<Q>
        <<<nb, 128, 0, c->stream>>>(c->d_smp, n, c->nc, c->d_zstart, c->d_zM, c->B);
    return cudaGetLastError();
}

template <int Q> cudaError_t launch_diag(tr_cuda_kalman *c, int n)
{
    diag_args a;
    a.gain = c->d_gain;
    a.smp = c->d_smp;
    a.zM = c->d_zM;
    a.st_in = c->d_st[c->cur];
    a.st_out = c->d_st[c->cur ^ 1];
    a.R = c->d_Rbuf[c->rb];
    a.j0 = c->pos;
    a.n = n;
    a.M = c->M;
    a.ldz = c->B;
    a.ldR = c->B;
    a.log_alpha = (float)c->log_alpha;
    for (int i = 0; i < TR_CUDA_KALMAN_FAST_MAX_Q; i++) {
        a.ax[i] = c->ax[i];
        a.an[i] = c->an[i];
    }
    const long long ndiag = (long long)n + c->M - 2;
    diag_kernel<Q><<<blocks_for(ndiag, kDiagBlock), kDiagBlock, 0, c->stream>>>(a);
    return cudaGetLastError();
}

/* stage 0: noise-only filter, stage 1: diagonals. */
template <int Q> cudaError_t launch_q(tr_cuda_kalman *c, int n, int nch, int stage)
{
    return stage == 0 ? launch_nf<Q>(c, n, nch) : launch_diag<Q>(c, n);
}

cudaError_t launch_filters(tr_cuda_kalman *c, int n, int nch, int stage)
{
    switch (c->Q) {
    case 1:
        return launch_q<1>(c, n, nch, stage);
    case 2:
        return launch_q<2>(c, n, nch, stage);
    case 3:
        return launch_q<3>(c, n, nch, stage);
    case 4:
        return launch_q<4>(c, n, nch, stage);
    case 5:
        return launch_q<5>(c, n, nch, stage);
    case 6:
        return launch_q<6>(c, n, nch, stage);
    case 7:
        return launch_q<7>(c, n, nch, stage);
    case 8:
        return launch_q<8>(c, n, nch, stage);
    }
    return cudaErrorInvalidValue;
}

/* Profiling: an event before each stage of a block (prep + noise-only filter,
 * diagonals, normaliser, LLR, window shift) and one after the last. */
cudaStream_t tail_stream(const tr_cuda_kalman *c)
{
    return c->serial || c->prof ? c->stream : c->s2;
}

cudaError_t mark(tr_cuda_kalman *c, int i)
{
    return c->prof ? cudaEventRecord(c->ev[i], c->stream) : cudaSuccess;
}

/* One-warp normaliser with ceil(M / 32) items per lane (M <= 256). */
void launch_lx_warp(const lx_args &a, cudaStream_t ts)
{
    switch ((a.M + 31) / 32) {
    case 1:
        lx_warp_kernel<1><<<1, 32, 0, ts>>>(a);
        break;
    case 2:
        lx_warp_kernel<2><<<1, 32, 0, ts>>>(a);
        break;
    case 3:
        lx_warp_kernel<3><<<1, 32, 0, ts>>>(a);
        break;
    case 4:
        lx_warp_kernel<4><<<1, 32, 0, ts>>>(a);
        break;
    case 5:
        lx_warp_kernel<5><<<1, 32, 0, ts>>>(a);
        break;
    case 6:
        lx_warp_kernel<6><<<1, 32, 0, ts>>>(a);
        break;
    case 7:
        lx_warp_kernel<7><<<1, 32, 0, ts>>>(a);
        break;
    default:
        lx_warp_kernel<8><<<1, 32, 0, ts>>>(a);
        break;
    }
}

/* One block of n <= B samples already on the device at d_x. */
tr_status fast_block(tr_cuda_kalman *c, const float *d_x, int n, float *d_llr,
                     uint8_t *d_dec, float threshold, uint32_t *d_kmax, tr_error *err)
{
    const int M = c->M, nch = (n + kChunk - 1) / kChunk;
    const cudaStream_t ts = tail_stream(c);
    TR_CUDA_CHECK(mark(c, 0), err, "kalman/cuda: event");
    prep_kernel<<<blocks_for(n, 256), 256, 0, c->stream>>>(d_x, n, c->d_smp, c->d_bad);
    TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch prep");
    TR_CUDA_CHECK(launch_filters(c, n, nch, 0), err,
                  "kalman/cuda: launch noise-only filter");
    TR_CUDA_CHECK(mark(c, 1), err, "kalman/cuda: event");
    /* the register buffer is free once the LLR of the block before last is done */
    if (ts != c->stream)
        TR_CUDA_CHECK(cudaStreamWaitEvent(c->stream, c->ev_llr[c->rb], 0), err,
                      "kalman/cuda: wait");
    TR_CUDA_CHECK(launch_filters(c, n, nch, 1), err, "kalman/cuda: launch diagonals");
    TR_CUDA_CHECK(mark(c, 2), err, "kalman/cuda: event");
    if (ts != c->stream) {
        TR_CUDA_CHECK(cudaEventRecord(c->ev_diag[c->rb], c->stream), err,
                      "kalman/cuda: event");
        TR_CUDA_CHECK(cudaStreamWaitEvent(ts, c->ev_diag[c->rb], 0), err,
                      "kalman/cuda: wait");
    }
    {
        lx_args a;
        a.Rrow = c->d_Rbuf[c->rb] + (size_t)(M - 2) * c->B;
        a.rlast = c->d_rlast;
        a.Gw = c->d_Gw[c->cur];
        a.Gf = c->d_Gf[c->cur];
        a.n = n;
        a.M = M;
        a.log_alpha = c->log_alpha;
        a.log1m_alpha = c->log1m_alpha;
        if (M <= 32 * kLxWarpItems)
            launch_lx_warp(a, ts);
        else if (M <= kRing / 2)
            lx_kernel<256, true><<<1, 256, 0, ts>>>(a);
        else
            lx_kernel<256, false><<<1, 256, 0, ts>>>(a);
        TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch normaliser");
    }
    TR_CUDA_CHECK(mark(c, 3), err, "kalman/cuda: event");
    {
        llr_args a;
        a.R = c->d_Rbuf[c->rb];
        a.Gf = c->d_Gf[c->cur];
        a.part = c->d_lpart;
        a.n = n;
        a.M = M;
        a.Ns = c->Ns;
        a.ldR = c->B;
        a.tiles = (n + 31) / 32;
        int slices =
            std::max(1, std::min(c->max_slices, (132 * 32 + a.tiles - 1) / a.tiles));
        a.kslice = (M - 1 + slices - 1) / slices;
        slices = (M - 1 + a.kslice - 1) / a.kslice;
        a.log_alpha = (float)c->log_alpha;
        dim3 grid(blocks_for(a.tiles, kLlrWarps), slices);
        llr_kernel<<<grid, 32 * kLlrWarps, 0, ts>>>(a);
        TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch LLR");
        finish_args f;
        f.part = c->d_lpart;
        f.n = n;
        f.slices = slices;
        f.llr = d_llr;
        f.dec = d_dec;
        f.kmax = d_kmax;
        f.threshold = threshold;
        llr_finish_kernel<<<blocks_for(n, 256), 256, 0, ts>>>(f);
        TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch LLR");
    }
    TR_CUDA_CHECK(mark(c, 4), err, "kalman/cuda: event");
    if (ts != c->stream)
        TR_CUDA_CHECK(cudaEventRecord(c->ev_llr[c->rb], ts), err, "kalman/cuda: event");
    shift_kernel<<<blocks_for(M, 256), 256, 0, ts>>>(c->d_Gw[c->cur], c->d_Gw[c->cur ^ 1],
                                                     c->d_Gf[c->cur ^ 1], n, M);
    TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch window shift");
    TR_CUDA_CHECK(mark(c, 5), err, "kalman/cuda: event");
    if (c->prof) {
        TR_CUDA_CHECK(cudaEventSynchronize(c->ev[5]), err, "kalman/cuda: profile");
        for (int i = 0; i < 5; i++) {
            float ms = 0.0f;
            TR_CUDA_CHECK(cudaEventElapsedTime(&ms, c->ev[i], c->ev[i + 1]), err,
                          "kalman/cuda: profile");
            c->stage_ms[i] += ms;
        }
    }
    c->cur ^= 1;
    c->rb ^= 1;
    c->pos += n;
    return TR_OK;
}

tr_status take_bad(tr_cuda_kalman *c, uint64_t *nonfinite, tr_error *err)
{
    TR_CUDA_CHECK(cudaMemcpyAsync(c->h_bad, c->d_bad, sizeof *c->h_bad,
                                  cudaMemcpyDeviceToHost, c->stream),
                  err, "kalman/cuda: download non-finite count");
    TR_CUDA_CHECK(cudaMemsetAsync(c->d_bad, 0, sizeof *c->d_bad, c->stream), err,
                  "kalman/cuda: clear counter");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "kalman/cuda: kernels");
    TR_CUDA_CHECK(cudaStreamSynchronize(c->s2), err, "kalman/cuda: kernels");
    if (nonfinite) *nonfinite += *c->h_bad;
    return TR_OK;
}

} // namespace

extern "C" tr_status tr_cuda_kalman_create(int device, const tr_kalman_model *m,
                                           const tr_kalman_params *p, tr_variant variant,
                                           size_t batch, tr_cuda_kalman **out,
                                           tr_error *err)
{
    *out = NULL;
    if (!m || !p)
        return tr_fail(err, TR_ERR_INVALID, "kalman/cuda: NULL model or parameters");
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "kalman/cuda: variant %s does not run on CUDA",
                       tr_variant_name(variant));
    TR_CUDA_CHECK(cudaSetDevice(device), err, "kalman/cuda: select device");
    std::unique_ptr<tr_cuda_kalman> c(new (std::nothrow) tr_cuda_kalman());
    if (!c) return tr_fail(err, TR_ERR_NOMEM, "kalman/cuda: cannot allocate context");
    c->device = device;
    c->variant = variant;
    c->Ns = (int)p->Ns;
    c->log_alpha = p->log_alpha;
    c->log1m_alpha = p->log1m_alpha;
    tr_status s;
    if (variant == TR_VARIANT_PAPER)
        s = tr_kalman_paper_create(device, m, p, &c->paper, err);
    else
        s = fast_create(c.get(), m, batch, err);
    if (s == TR_OK && variant == TR_VARIANT_FAST) s = fast_reset(c.get(), err);
    if (s != TR_OK) return s;
    *out = c.release();
    tr_clear(err);
    return TR_OK;
}

extern "C" void tr_cuda_kalman_destroy(tr_cuda_kalman *c)
{
    delete c;
}

extern "C" tr_status tr_cuda_kalman_reset(tr_cuda_kalman *c, tr_error *err)
{
    if (c->paper) return tr_kalman_paper_reset(c->paper, err);
    return fast_reset(c, err);
}

extern "C" tr_status tr_cuda_kalman_set_params(tr_cuda_kalman *c,
                                               const tr_kalman_params *p, tr_error *err)
{
    if (!p) return tr_fail(err, TR_ERR_INVALID, "kalman/cuda: NULL parameters");
    c->Ns = (int)p->Ns;
    c->log_alpha = p->log_alpha;
    c->log1m_alpha = p->log1m_alpha;
    if (c->paper) tr_kalman_paper_set_params(c->paper, p);
    return TR_OK;
}

extern "C" tr_status tr_cuda_kalman_run_host(tr_cuda_kalman *c, const float *x, size_t n,
                                             double *llr, uint32_t *kmax,
                                             double kmax_above, uint64_t *nonfinite,
                                             tr_error *err)
{
    if (n == 0) return TR_OK;
    if (c->paper)
        return tr_kalman_paper_run(c->paper, x, n, llr, kmax, kmax_above, nonfinite, err);
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "kalman/cuda: select device");
    for (size_t off = 0; off < n; off += (size_t)c->B) {
        const int len = (int)std::min<size_t>((size_t)c->B, n - off);
        memcpy(c->h_in, x + off, (size_t)len * sizeof(float));
        TR_CUDA_CHECK(cudaMemcpyAsync(c->d_in, c->h_in, (size_t)len * sizeof(float),
                                      cudaMemcpyHostToDevice, c->stream),
                      err, "kalman/cuda: upload samples");
        const tr_status s = fast_block(c, c->d_in, len, c->d_llr, NULL, 0.0f,
                                       kmax ? c->d_kmax.get() : NULL, err);
        if (s != TR_OK) return s;
        const cudaStream_t ts = tail_stream(c);
        TR_CUDA_CHECK(cudaMemcpyAsync(c->h_llr, c->d_llr, (size_t)len * sizeof(float),
                                      cudaMemcpyDeviceToHost, ts),
                      err, "kalman/cuda: download LLR");
        if (kmax)
            TR_CUDA_CHECK(cudaMemcpyAsync(c->h_kmax, c->d_kmax,
                                          (size_t)len * sizeof(uint32_t),
                                          cudaMemcpyDeviceToHost, ts),
                          err, "kalman/cuda: download onsets");
        TR_CUDA_CHECK(cudaStreamSynchronize(ts), err, "kalman/cuda: kernels");
        for (int i = 0; i < len; i++) {
            const double L = (double)c->h_llr[i];
            if (llr) llr[off + i] = L;
            if (kmax && L > kmax_above) kmax[off + i] = c->h_kmax[i];
        }
    }
    return take_bad(c, nonfinite, err);
}

extern "C" tr_status tr_cuda_kalman_run_device(tr_cuda_kalman *c, const float *d_x,
                                               size_t n, float *d_llr,
                                               uint8_t *d_decision, double threshold,
                                               tr_error *err)
{
    if (n == 0) return TR_OK;
    TR_CUDA_CHECK(tr_cuda_caller_ready(), err,
                  "kalman/cuda: wait for the caller's stream");
    if (c->paper) {
        /* The paper's design reads its samples on the host: copy through. */
        std::vector<float> x(n);
        std::vector<double> L(n);
        TR_CUDA_CHECK(
            cudaMemcpy(x.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost), err,
            "kalman/cuda: download samples");
        const tr_status s =
            tr_kalman_paper_run(c->paper, x.data(), n, L.data(), NULL, 0.0, NULL, err);
        if (s != TR_OK) return s;
        std::vector<float> lf(n);
        std::vector<uint8_t> dec(n);
        for (size_t i = 0; i < n; i++) {
            lf[i] = (float)L[i];
            dec[i] = L[i] > threshold;
        }
        if (d_llr)
            TR_CUDA_CHECK(
                cudaMemcpy(d_llr, lf.data(), n * sizeof(float), cudaMemcpyHostToDevice),
                err, "kalman/cuda: upload LLR");
        if (d_decision)
            TR_CUDA_CHECK(cudaMemcpy(d_decision, dec.data(), n, cudaMemcpyHostToDevice),
                          err, "kalman/cuda: upload decisions");
        return TR_OK;
    }
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "kalman/cuda: select device");
    for (size_t off = 0; off < n; off += (size_t)c->B) {
        const int len = (int)std::min<size_t>((size_t)c->B, n - off);
        const tr_status s =
            fast_block(c, d_x + off, len, d_llr ? d_llr + off : NULL,
                       d_decision ? d_decision + off : NULL, (float)threshold, NULL, err);
        if (s != TR_OK) return s;
    }
    return take_bad(c, NULL, err);
}

extern "C" tr_status tr_cuda_kalman_profile(tr_cuda_kalman *c, int on, double *stage_ms,
                                            tr_error *err)
{
    if (c->paper)
        return tr_fail(err, TR_ERR_UNSUPPORTED, "kalman/cuda: no stages in PAPER");
    if (stage_ms)
        for (int i = 0; i < 5; i++)
            stage_ms[i] = c->stage_ms[i];
    if (on && !c->ev[0])
        for (int i = 0; i < 6; i++)
            TR_CUDA_CHECK(c->ev[i].create(cudaEventDefault), err,
                          "kalman/cuda: create event");
    c->prof = on;
    for (int i = 0; i < 5; i++)
        c->stage_ms[i] = 0.0;
    return TR_OK;
}
