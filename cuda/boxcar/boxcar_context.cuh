/*
 * The boxcar CUDA context (tr_cuda_boxcar of boxcar_cuda.h) and what its
 * parts share: boxcar_context.cu (lifetime, buffers, streams, the streaming
 * pipeline), boxcar_norm_tables.cu (normalisation tables) and
 * boxcar_launch.cu (kernel choice and launches per plan). Not installed.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_CONTEXT_CUH
#define TRANSIENT_CUDA_BOXCAR_CONTEXT_CUH

#include "boxcar/boxcar_cuda.h"
#include "boxcar/boxcar_fast.cuh"

#include <algorithm>
#include <cstdint>
#include <vector>

class tr_host_stager;

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
     * * total + k] for windows tab0 .. tab0 + tabn - 1 of tabW samples; tmu,
     * tsig: those in effect (wmu, wsig, or the caller's device tables of
     * tr_cuda_boxcar_set_norm_windows_device, read where they lie). */
    float *wmu = nullptr, *wsig = nullptr;
    const float *tmu = nullptr, *tsig = nullptr;
    int64_t wcap = 0; /* windows the tables hold */
    int64_t tabW = 0, tab0 = 0;
    int tabn = 0;
    int win_mode = 0; /* 1: the per-window tables are in effect */
    /* FAST */
    int T = 0, Tmax = 0;
    int split = 1; /* sparse stages in a pass of their own (tr_cuda_boxcar_set_split) */
    int kq = boxcar_cuda::kQ; /* positions per thread (tr_cuda_boxcar_set_positions) */
    size_t smem_max = 0;
    boxcar_cuda::fplan fp{};
    int R = 1, F = 0, M = 0, Ecoarse = 0, nc = 0;
    size_t fast_smem = 0;
    /* PAPER */
    int64_t ldl = 0; /* line entries per channel */
    float *line[2] = {nullptr, nullptr};
    float *X[2] = {nullptr, nullptr};
    float *Yl = nullptr; /* per-level / input-resolution outputs */
    int32_t *Wl = nullptr;
};

namespace boxcar_cuda
{

/* Channel chunks: grid.y is at most 65535. */
constexpr uint32_t kMaxGridY = 65535;

template <typename T> inline cudaError_t dev_alloc(T **p, size_t count)
{
    return cudaMalloc((void **)p, std::max<size_t>(count, 1) * sizeof(T));
}

/* boxcar_launch.cu: what the kernels need of the context. */

/* What the kernels support of q's plan and variant (TR_ERR_UNSUPPORTED). */
tr_status check_plan(const tr_cuda_boxcar *q, tr_error *err);

/* Dynamic shared memory a FAST block may use on `device`: the opt-in limit
 * less the largest static (CUB) part of the kernel instances. */
tr_status fast_smem_max(int device, size_t *smem_max, tr_error *err);

/* FAST: the tile and shared-memory layout for q's plan, and the kernels'
 * shared-memory limit (needs q->smem_max). */
tr_status fast_setup(tr_cuda_boxcar *q, tr_error *err);

/* One launch worth of work on q->stream: n_out outputs per channel from
 * position q0 into y, w (channel-major, ldy), data up to src.end. */
tr_status compute(tr_cuda_boxcar *q, const source &src, int64_t q0, int64_t n_out,
                  float *y, int32_t *w, int64_t ldy, tr_error *err);

/* boxcar_norm_tables.cu: the white-noise tables (mu_L = L mean[c], sigma_L =
 * sqrt(L) sigma[c]; mean, sigma NULL: 0 and 1) and fill values in effect. */
tr_status white_tables(tr_cuda_boxcar *q, const double *mean, const double *sigma,
                       const float *fill, tr_error *err);

} // namespace boxcar_cuda

#endif /* TRANSIENT_CUDA_BOXCAR_CONTEXT_CUH */
