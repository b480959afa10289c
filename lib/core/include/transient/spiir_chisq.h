/*
 * Autocorrelation chi-square of SPIIR triggers: how far the SNR time series
 * around a trigger's peak departs from the shape a true signal of the
 * template would give (its autocorrelation), the signal-consistency test of
 * gstlal's SPIIR and LLOID pipelines.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (the SNR z of equation 8; the pipeline of section 5 vetoes its triggers with
 * gstlal's signal-consistency tests). Definition: gstlal, gst/lal/gstlal_autochisq.c
 * (filter() and compute_autocorrelation_norm(), complex form).
 *
 * For a trigger of template t with peak at row p of the SNR stream z[k, t]
 * (the layout of tr_spiir_process), and the template's autocorrelation
 * A[j], j = -half..half (the bank's complex response to its own template,
 * divided by its value at the peak, so A[0] = 1):
 *
 *     chisq = sum_j |A[j] z[p] - z[p + j]|^2 / (2 n - sum_j |A[j]|^2)
 *
 * over the lags j whose rows p + j lie in the given stretch (n of them;
 * gstlal's normalisation over those lags). For a signal that matches the
 * template, z[p + j] = A[j] z[p] + noise and chisq stays near 1 whatever the
 * SNR; for a glitch of another shape it grows with the SNR squared.
 * A non-finite SNR value in the window gives chisq = NaN.
 */
#ifndef TRANSIENT_SPIIR_CHISQ_H
#define TRANSIENT_SPIIR_CHISQ_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Largest half-width of the autocorrelation window (lags -half..half). */
#define TR_SPIIR_CHISQ_MAX_HALF 65536u

/*
 * chisq of one trigger. snr: nrows x ntemplates complex floats (re, im), the
 * layout of tr_spiir_process; template_index < ntemplates; peak < nrows the
 * trigger's row; autocorr: 2 half + 1 complex doubles (re, im), lag -half
 * first, its centre 1 (what the normalisation assumes: not checked beyond
 * finiteness); half in [1, TR_SPIIR_CHISQ_MAX_HALF].
 * Returns TR_OK and *chisq, or TR_ERR_INVALID with the reason in err.
 */
tr_status tr_spiir_autochisq(const float *snr, size_t nrows, uint32_t ntemplates,
                             uint32_t template_index, uint64_t peak,
                             const double *autocorr, uint32_t half, double *chisq,
                             tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_CHISQ_H */
