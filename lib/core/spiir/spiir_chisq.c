/*
 * Autocorrelation chi-square of SPIIR triggers (<transient/spiir_chisq.h> has
 * the definition).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (the SNR of equation 8); the statistic is gstlal's autocorrelation
 * chi-square (gst/lal/gstlal_autochisq.c), in its complex form.
 *
 * One trigger costs 2 half + 1 complex products: it runs once per trigger, so
 * one scalar loop in double is both the reference and the only variant.
 */
#include <transient/spiir_chisq.h>

#include "common/core_util.h"

#include <math.h>

tr_status tr_spiir_autochisq(const float *snr, size_t nrows, uint32_t ntemplates,
                             uint32_t template_index, uint64_t peak,
                             const double *autocorr, uint32_t half, double *chisq,
                             tr_error *err)
{
    if (!snr || !autocorr || !chisq)
        return tr_fail(err, TR_ERR_INVALID, "spiir chisq: NULL argument");
    if (ntemplates == 0 || template_index >= ntemplates)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir chisq: template %u outside the %u templates",
                       template_index, ntemplates);
    if (peak >= nrows)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir chisq: peak row %llu outside the %zu rows given",
                       (unsigned long long)peak, nrows);
    if (half < 1 || half > TR_SPIIR_CHISQ_MAX_HALF)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir chisq: half-width must be 1..%u lags, got %u",
                       TR_SPIIR_CHISQ_MAX_HALF, half);
    for (uint32_t i = 0; i <= 2 * half; i++)
        if (!isfinite(autocorr[2 * i]) || !isfinite(autocorr[2 * i + 1]))
            return tr_fail(err, TR_ERR_INVALID,
                           "spiir chisq: autocorrelation value %u is not finite", i);

    const float *zp = snr + ((size_t)peak * ntemplates + template_index) * 2;
    const double pr = zp[0], pi = zp[1];
    /* rows p + j within [0, nrows) */
    const uint64_t first = peak >= half ? peak - half : 0;
    const uint64_t last = peak + half < nrows ? peak + half : nrows - 1;
    double sum = 0.0, a2 = 0.0;
    for (uint64_t k = first; k <= last; k++) {
        const size_t i = (size_t)(k + half - peak); /* lag + half */
        const double ar = autocorr[2 * i], ai = autocorr[2 * i + 1];
        const float *z = snr + ((size_t)k * ntemplates + template_index) * 2;
        const double dr = ar * pr - ai * pi - z[0];
        const double di = ar * pi + ai * pr - z[1];
        sum += dr * dr + di * di;
        a2 += ar * ar + ai * ai;
    }
    const double n = (double)(last - first + 1);
    *chisq = sum / (2.0 * n - a2);
    tr_clear(err);
    return TR_OK;
}
