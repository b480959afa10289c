/*
 * Kalman-bank detector on CUDA, PAPER variant: the design of section III of
 * the paper, kept as the benchmark baseline.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15,
 * figures 2-3, section III).
 *
 * Per input sample (steps 0-4 of figure 2):
 *  0. host: Kalman filter #M (eqs. 2-5) -> q_M, z_{M|M-1}; L_X (eq. 9) from
 *     d_{M-1} of the previous sample (read back from the GPU); Kalman filter
 *     #1 from z_{M|M-1} of the previous sample -> q_1, z_{2|1}; d_1 (eq. 10);
 *     z_{2|1} and d_1 are copied to the GPU for the next sample.
 *  1. host: launch GPU kernel 1 with r, L_X and norm_factor.
 *  2. GPU kernel 1: M-2 threads, k = threads_per_block * bid + tid + 2
 *     (eq. 8); thread k runs eqs. 2-7 on z_{k|k-1}, d_{k-1} read from copy A
 *     of the registers and writes z_{k+1|k}, d_k to copy B (the copies swap
 *     every sample: GPU memory organisation I). The gains are interleaved:
 *     element i of K_2, K_3, ..., K_{M-1}, then element i+1 (organisation II),
 *     and so are the states z. A is dense (row after row, as in eq. 4).
 *  3. host: read exp_d_2..exp_d_{M-1} and d_{M-1} back.
 *  4. host: S1, S2 (eqs. 11-12), LLR (eq. 15), norm_factor (eq. 13).
 * Filters #1 and #M, L_X, the sums and the LLR are in double on the host;
 * the GPU filters run in float with the registers d_k and exp_d_k in double
 * (float d_k would drift over thousands of hypotheses beyond the test
 * tolerance, and a float exp_d_k overflows when the registers jump by more
 * than about 68 in one sample, which the double norm_factor of eq. 13 allows).
 * Non-finite samples are missing (kalman.h): innovation 0, q_k = 0.
 */
#include "common/cuda_check.h"
#include "common/cuda_raii.cuh"
#include "kalman/kalman_cuda.cuh"

#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <vector>

namespace
{

constexpr int kThreadsPerBlock = 256;
constexpr double kLog2Pi = 1.8378770664093454835606594728112;

struct paper_args {
    const float *zA;  /* [i * Mp + k]: z_{k|k-1}, copy read this sample */
    float *zB;        /* copy written this sample */
    const double *dA; /* [k]: d_k[j-1] */
    double *dB;       /* [k]: d_k[j] */
    double *expd;     /* [k]: exp(d_k[j] - norm_factor) */
    const float *K;   /* [i * Mp + k]: interleaved gains */
    const float *c;   /* [k]: -1/2 log(2 pi Sigma_k) */
    const float *h;   /* [k]: 1 / (2 Sigma_k) */
    const float *A;   /* n x n row-major */
    int n, Q, M, Mp;
    float r;
    int missing;
    double LX, nf;
};

/* GPU kernel 1 (eqs. 2-7) for k = 2..M-1. */
__global__ void paper_kernel(const paper_args a)
{
    const int k = blockDim.x * blockIdx.x + threadIdx.x + 2; /* eq. 8 */
    if (k > a.M - 1) return;
    float u[2 * TR_KALMAN_MAX_Q];
    const float rhat = a.zA[k] + a.zA[(size_t)a.Q * a.Mp + k]; /* eq. 2 */
    const float e = a.missing ? 0.0f : a.r - rhat;
    for (int i = 0; i < a.n; i++) /* eq. 3 */
        u[i] = a.zA[(size_t)i * a.Mp + k] + a.K[(size_t)i * a.Mp + k] * e;
    if (k + 1 <= a.M - 1)
        for (int i = 0; i < a.n; i++) { /* eq. 4 */
            float s = 0.0f;
            for (int l = 0; l < a.n; l++)
                s += a.A[i * a.n + l] * u[l];
            a.zB[(size_t)i * a.Mp + k + 1] = s;
        }
    const float q = a.missing ? 0.0f : a.c[k] - a.h[k] * (e * e); /* eq. 5 */
    const double d = a.dA[k - 1] + (double)q - a.LX;              /* eq. 6 */
    a.dB[k] = d;
    a.expd[k] = exp(d - a.nf); /* eq. 7 */
}

} // namespace

struct tr_kalman_paper {
    int device;
    int n, Q, M, Mp;
    std::vector<double> A, K, log_sigma, inv_sigma; /* host filters #1, #M */
    uint32_t Ns;
    double log_alpha;
    tr_cuda_stream stream;
    tr_device_buffer<float> d_z[2];
    tr_device_buffer<double> d_d[2];
    tr_device_buffer<double> d_expd;
    tr_device_buffer<float> d_K, d_c, d_h, d_A;
    tr_pinned_buffer<double> h_expd;  /* exp_d_2..M-1 */
    tr_pinned_buffer<double> h_dlast; /* d_{M-1} */
    tr_pinned_buffer<double> h_dall;  /* all d_k (kmax, norm_factor safeguard) */
    tr_pinned_buffer<float> h_z21;    /* z_{2|1} going up */
    tr_pinned_buffer<double> h_d1;    /* d_1 going up */
    std::vector<double> zM, z1, tmp;
    double d_prev_last; /* d_{M-1}[j-1] */
    double norm_factor;
    int cur;

    /* The device buffers are released on the context's device. */
    ~tr_kalman_paper() { (void)cudaSetDevice(device); }
};

namespace
{

/* One host Kalman step (double) of hypothesis k (1-based), as the reference. */
double host_step(const tr_kalman_paper *c, uint32_t k, const double *zin, double r,
                 int missing, double *zout, double *tmp)
{
    const int n = c->n, Q = c->Q;
    const double *K = &c->K[(size_t)(k - 1) * n];
    const double rhat = zin[0] + zin[Q];
    const double e = missing ? 0.0 : r - rhat;
    for (int i = 0; i < n; i++)
        tmp[i] = zin[i] + K[i] * e;
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int l = 0; l < n; l++)
            s += c->A[(size_t)i * n + l] * tmp[l];
        zout[i] = s;
    }
    if (missing) return 0.0;
    return 0.5 * (-(kLog2Pi + c->log_sigma[k - 1]) -
                  (rhat - r) * c->inv_sigma[k - 1] * (rhat - r));
}

} // namespace

tr_status tr_kalman_paper_create(int device, const tr_kalman_model *m,
                                 const tr_kalman_params *p, tr_kalman_paper **out,
                                 tr_error *err)
{
    *out = NULL;
    std::unique_ptr<tr_kalman_paper> c(new (std::nothrow) tr_kalman_paper());
    if (!c) return tr_fail(err, TR_ERR_NOMEM, "kalman/cuda: cannot allocate context");
    c->device = device;
    c->n = (int)m->n;
    c->Q = (int)m->Q;
    c->M = (int)m->M;
    c->Mp = c->M + 1;
    c->Ns = p->Ns;
    c->log_alpha = p->log_alpha;
    const int n = c->n, M = c->M, Mp = c->Mp;
    try {
        c->A.assign(m->A, m->A + (size_t)n * n);
        c->K.assign(m->K, m->K + (size_t)M * n);
        c->log_sigma.assign(m->log_sigma, m->log_sigma + M);
        c->inv_sigma.assign(m->inv_sigma, m->inv_sigma + M);
        c->zM.assign(n, 0.0);
        c->z1.assign(n, 0.0);
        c->tmp.assign(n, 0.0);
    } catch (...) {
        return tr_fail(err, TR_ERR_NOMEM, "kalman/cuda: cannot allocate context");
    }
    /* interleaved gains: K[i * Mp + k] = element i of K_k */
    std::vector<float> K((size_t)n * Mp, 0.0f), cc(Mp, 0.0f), hh(Mp, 0.0f),
        A((size_t)n * n);
    for (int k = 1; k <= M; k++) {
        for (int i = 0; i < n; i++)
            K[(size_t)i * Mp + k] = (float)m->K[(size_t)(k - 1) * n + i];
        cc[k] = (float)m->c[k - 1];
        hh[k] = (float)m->h[k - 1];
    }
    for (size_t i = 0; i < A.size(); i++)
        A[i] = (float)m->A[i];
    TR_CUDA_CHECK(cudaSetDevice(device), err, "kalman/cuda: select device");
    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "kalman/cuda: create stream");
    for (int i = 0; i < 2; i++) {
        TR_CUDA_CHECK(c->d_z[i].alloc((size_t)n * Mp), err,
                      "kalman/cuda: allocate registers");
        TR_CUDA_CHECK(c->d_d[i].alloc((size_t)Mp), err,
                      "kalman/cuda: allocate registers");
    }
    TR_CUDA_CHECK(c->d_expd.alloc((size_t)Mp), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_K.alloc(K.size()), err, "kalman/cuda: allocate gains");
    TR_CUDA_CHECK(c->d_c.alloc(cc.size()), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_h.alloc(hh.size()), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(c->d_A.alloc(A.size()), err, "kalman/cuda: allocate");
    TR_CUDA_CHECK(
        cudaMemcpy(c->d_K, K.data(), K.size() * sizeof(float), cudaMemcpyHostToDevice),
        err, "kalman/cuda: upload gains");
    TR_CUDA_CHECK(
        cudaMemcpy(c->d_c, cc.data(), cc.size() * sizeof(float), cudaMemcpyHostToDevice),
        err, "kalman/cuda: upload model");
    TR_CUDA_CHECK(
        cudaMemcpy(c->d_h, hh.data(), hh.size() * sizeof(float), cudaMemcpyHostToDevice),
        err, "kalman/cuda: upload model");
    TR_CUDA_CHECK(
        cudaMemcpy(c->d_A, A.data(), A.size() * sizeof(float), cudaMemcpyHostToDevice),
        err, "kalman/cuda: upload model");
    TR_CUDA_CHECK(c->h_expd.alloc((size_t)Mp), err, "kalman/cuda: allocate pinned");
    TR_CUDA_CHECK(c->h_dlast.alloc(1), err, "kalman/cuda: allocate pinned");
    TR_CUDA_CHECK(c->h_dall.alloc((size_t)Mp), err, "kalman/cuda: allocate pinned");
    TR_CUDA_CHECK(c->h_z21.alloc((size_t)n), err, "kalman/cuda: allocate pinned");
    TR_CUDA_CHECK(c->h_d1.alloc(1), err, "kalman/cuda: allocate pinned");
    const tr_status s = tr_kalman_paper_reset(c.get(), err);
    if (s != TR_OK) return s;
    *out = c.release();
    return TR_OK;
}

void tr_kalman_paper_destroy(tr_kalman_paper *c)
{
    delete c;
}

void tr_kalman_paper_set_params(tr_kalman_paper *c, const tr_kalman_params *p)
{
    c->Ns = p->Ns;
    c->log_alpha = p->log_alpha;
}

tr_status tr_kalman_paper_reset(tr_kalman_paper *c, tr_error *err)
{
    const size_t Mp = (size_t)c->Mp;
    std::vector<double> dinit(Mp, -INFINITY); /* no target yet */
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "kalman/cuda: select device");
    for (int i = 0; i < 2; i++) {
        TR_CUDA_CHECK(
            cudaMemsetAsync(c->d_z[i], 0, (size_t)c->n * Mp * sizeof(float), c->stream),
            err, "kalman/cuda: reset");
        TR_CUDA_CHECK(cudaMemcpyAsync(c->d_d[i], dinit.data(), Mp * sizeof(double),
                                      cudaMemcpyHostToDevice, c->stream),
                      err, "kalman/cuda: reset");
    }
    TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "kalman/cuda: reset");
    std::fill(c->zM.begin(), c->zM.end(), 0.0);
    c->d_prev_last = -INFINITY;
    c->norm_factor = 0.0;
    c->cur = 0;
    return TR_OK;
}

tr_status tr_kalman_paper_run(tr_kalman_paper *c, const float *x, size_t nsamp,
                              double *llr, uint32_t *kmax, double kmax_above,
                              uint64_t *nonfinite, tr_error *err)
{
    const int n = c->n, M = c->M, Mp = c->Mp;
    const uint32_t Ns = c->Ns;
    const double alpha = exp(c->log_alpha);
    const int blocks = (M - 2 + kThreadsPerBlock - 1) / kThreadsPerBlock;
    uint64_t bad = 0;
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "kalman/cuda: select device");
    for (size_t j = 0; j < nsamp; j++) {
        const double r = (double)x[j];
        const int missing = !std::isfinite(r);
        bad += (uint64_t)missing;
        const int A = c->cur, B = 1 - c->cur;

        /* 0. filter #M, L_X (eq. 9), filter #1 from z_{M|M-1}[j], d_1 (eq. 10) */
        memcpy(c->z1.data(), c->zM.data(), (size_t)n * sizeof(double));
        const double qM = host_step(c, (uint32_t)M, c->zM.data(), r, missing,
                                    c->zM.data(), c->tmp.data());
        const double LX = qM + log(1.0 - alpha + exp(c->d_prev_last));
        double z21v[2 * TR_KALMAN_MAX_Q], tmp2[2 * TR_KALMAN_MAX_Q];
        const double q1 = host_step(c, 1, c->z1.data(), r, missing, z21v, tmp2);
        const double d1 = c->log_alpha + q1 - LX;
        for (int i = 0; i < n; i++)
            c->h_z21[i] = (float)z21v[i];
        *c->h_d1 = d1;
        /* z_{2|1} and d_1 into copy B (read by thread k = 2 at the next sample) */
        TR_CUDA_CHECK(cudaMemcpy2DAsync(c->d_z[B] + 2, (size_t)Mp * sizeof(float),
                                        c->h_z21, sizeof(float), sizeof(float), (size_t)n,
                                        cudaMemcpyHostToDevice, c->stream),
                      err, "kalman/cuda: upload z_{2|1}");
        TR_CUDA_CHECK(cudaMemcpyAsync(c->d_d[B] + 1, c->h_d1, sizeof(double),
                                      cudaMemcpyHostToDevice, c->stream),
                      err, "kalman/cuda: upload d_1");

        /* 1-2. GPU kernel 1 */
        if (M > 2) {
            paper_args a;
            a.zA = c->d_z[A];
            a.zB = c->d_z[B];
            a.dA = c->d_d[A];
            a.dB = c->d_d[B];
            a.expd = c->d_expd;
            a.K = c->d_K;
            a.c = c->d_c;
            a.h = c->d_h;
            a.A = c->d_A;
            a.n = n;
            a.Q = c->Q;
            a.M = M;
            a.Mp = Mp;
            a.r = (float)x[j];
            a.missing = missing;
            a.LX = LX;
            a.nf = c->norm_factor;
            paper_kernel<<<blocks, kThreadsPerBlock, 0, c->stream>>>(a);
            TR_CUDA_CHECK(cudaGetLastError(), err, "kalman/cuda: launch paper kernel");
        }

        /* 3. exp_d_2..exp_d_{M-1} and d_{M-1} back to the host */
        TR_CUDA_CHECK(cudaMemcpyAsync(c->h_expd + 2, c->d_expd + 2,
                                      (size_t)(M - 2) * sizeof(double),
                                      cudaMemcpyDeviceToHost, c->stream),
                      err, "kalman/cuda: download probabilities");
        TR_CUDA_CHECK(cudaMemcpyAsync(c->h_dlast, c->d_d[B] + (M - 1), sizeof(double),
                                      cudaMemcpyDeviceToHost, c->stream),
                      err, "kalman/cuda: download d_{M-1}");
        TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "kalman/cuda: paper kernel");
        /* d_{M-1} is d_1 itself when M = 2 (not allowed: M >= 3) */
        c->d_prev_last = *c->h_dlast;

        /* 4. eqs. 11, 12, 15, 13 */
        const double nf = c->norm_factor;
        const double exp_d1 = exp(d1 - nf);
        double S1 = 0.0, S2 = 0.0;
        for (uint32_t k = 2; k <= Ns; k++)
            S1 += c->h_expd[k];
        for (uint32_t k = Ns + 1; k <= (uint32_t)M - 1; k++)
            S2 += c->h_expd[k];
        const double L = log(S1 + exp_d1) - log(exp(-nf) + S2);
        if (llr) llr[j] = L;
        double mx = exp_d1;
        if (S1 > mx) mx = S1;
        if (S2 > mx) mx = S2;
        const bool need_all =
            !(mx > 0.0 && std::isfinite(mx)) || (kmax && L > kmax_above);
        if (need_all) {
            TR_CUDA_CHECK(cudaMemcpyAsync(c->h_dall, c->d_d[B],
                                          (size_t)Mp * sizeof(double),
                                          cudaMemcpyDeviceToHost, c->stream),
                          err, "kalman/cuda: download registers");
            TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "kalman/cuda: download");
            c->h_dall[1] = d1;
        }
        if (mx > 0.0 && std::isfinite(mx)) {
            c->norm_factor = nf + log(mx) + -20.0;
        } else {
            double dmax = c->h_dall[1];
            for (int k = 2; k <= M - 1; k++)
                if (c->h_dall[k] > dmax) dmax = c->h_dall[k];
            c->norm_factor = dmax - 20.0;
        }
        if (kmax && L > kmax_above) {
            uint32_t best = 1;
            for (int k = 2; k <= M - 1; k++)
                if (c->h_dall[k] > c->h_dall[best]) best = (uint32_t)k;
            kmax[j] = best;
        }
        c->cur = B;
    }
    if (nonfinite) *nonfinite += bad;
    return TR_OK;
}
