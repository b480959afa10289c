/*
 * Normalisation tables of the boxcar CUDA context: mu_L and sigma_L per
 * channel and width (one table, or one per statistics window for FAST), the
 * coefficients (1/sigma_L, -mu_L/sigma_L) the kernels apply and the fill
 * values of non-finite input, on the device.
 */
#include "boxcar/boxcar_context.cuh"

#include <cmath>
#include <cstring>
#include <vector>

namespace boxcar_cuda
{

/* Upload one table (nothing to do when the device already holds it). */
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

tr_status white_tables(tr_cuda_boxcar *q, const double *mean, const double *sigma,
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

} // namespace boxcar_cuda

using namespace boxcar_cuda;

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

/* Per-window tables, already checked: from host memory (copied into wmu,
 * wsig), or device tables d_mu, d_sigma (mu, sigma NULL) read where they
 * lie. */
static tr_status set_windows(tr_cuda_boxcar *q, uint64_t first, uint32_t nwin,
                             uint32_t window, const float *mu, const float *sigma,
                             const float *d_mu, const float *d_sigma, tr_error *err)
{
    const size_t nt = (size_t)nwin * q->nchan * q->total;
    TR_CUDA_TRY(cudaSetDevice(q->device), err, "boxcar/cuda: select device", fail);
    if (d_mu) {
        q->tmu = d_mu;
        q->tsig = d_sigma;
    } else if ((int64_t)nwin > q->wcap) {
        const int64_t cap = std::max<int64_t>(nwin, 2 * q->wcap);
        TR_CUDA_TRY(cudaStreamSynchronize(q->stream), err, "boxcar/cuda: sync", fail);
        q->win_mode = 0; /* no tables in effect until these are set */
        q->tmu = q->tsig = nullptr;
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
    if (!d_mu) {
        /* ordered before the next search on the same stream; the caller's
         * buffers may be reused at return (pageable copies are staged by then) */
        TR_CUDA_TRY(
            cudaMemcpyAsync(q->wmu, mu, nt * 4, cudaMemcpyHostToDevice, q->stream), err,
            "boxcar/cuda: upload mu_L", fail);
        TR_CUDA_TRY(
            cudaMemcpyAsync(q->wsig, sigma, nt * 4, cudaMemcpyHostToDevice, q->stream),
            err, "boxcar/cuda: upload sigma_L", fail);
        q->tmu = q->wmu;
        q->tsig = q->wsig;
    }
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

/* What per-window tables need of q (TR_ERR_UNSUPPORTED otherwise). */
static tr_status check_windows(const tr_cuda_boxcar *q, uint32_t window, tr_error *err)
{
    if (q->variant != TR_VARIANT_FAST || window == 0 || window % (uint32_t)q->T != 0)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "boxcar/cuda: per-window tables need the FAST variant and a "
                       "window that is a multiple of its tile (%d)",
                       q->T);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_norm_windows(tr_cuda_boxcar *q, uint64_t first,
                                                     uint32_t nwin, uint32_t window,
                                                     const float *mu, const float *sigma,
                                                     tr_error *err)
{
    if (!q || !mu || !sigma || nwin < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_norm_windows needs mu, sigma and nwin >= 1");
    if (check_windows(q, window, err) != TR_OK) return TR_ERR_UNSUPPORTED;
    const size_t nt = (size_t)nwin * q->nchan * q->total;
    for (size_t k = 0; k < nt; k++)
        if (!(sigma[k] > 0.0f) || !std::isfinite(sigma[k]) || !std::isfinite(mu[k]))
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar/cuda: normalisation entry %zu: sigma must be > 0 and "
                           "finite, mu finite",
                           k);
    return set_windows(q, first, nwin, window, mu, sigma, nullptr, nullptr, err);
}

extern "C" tr_status
tr_cuda_boxcar_set_norm_windows_device(tr_cuda_boxcar *q, uint64_t first, uint32_t nwin,
                                       uint32_t window, const float *d_mu,
                                       const float *d_sigma, tr_error *err)
{
    if (!q || !d_mu || !d_sigma || nwin < 1)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_norm_windows needs mu, sigma and nwin >= 1");
    if (check_windows(q, window, err) != TR_OK) return TR_ERR_UNSUPPORTED;
    return set_windows(q, first, nwin, window, nullptr, nullptr, d_mu, d_sigma, err);
}
