/*
 * The whitening filter: the inverse ASD made finite by inverse spectrum
 * truncation with a Hann taper, and its spectrum for overlap-save
 * (<transient/whiten.h>, "Whitening").
 *
 * Paper: B. Allen et al., "FINDCHIRP", Phys. Rev. D 85, 122006 (2012)
 * (inverse spectrum truncation; PyCBC's inverse_spectrum_truncation tapers
 * the kept taps with a Hann window the same way).
 */
#include "common/core_util.h"
#include "whiten/whiten_internal.h"

#include <math.h>

tr_status tr_whiten_design(const double *psd, size_t nfft, double rate, double fmin,
                           size_t half, double *taps, tr_error *err)
{
    tr_dft d;
    tr_status s = tr_dft_make(&d, nfft, 1, "whiten", err);
    if (s != TR_OK) return s;
    /* Unit variance per bin: white noise of variance 1 has the PSD 2 / rate. */
    const double gain = sqrt(2.0 / rate);
    for (size_t k = 0; k < tr_psd_len(nfft); ++k) {
        const double f = (double)k * rate / (double)nfft;
        d.cplx[k][0] = d.cplx[k][1] = 0.0;
        if (k == 0 || f < fmin) continue;
        if (!isfinite(psd[k]) || !(psd[k] > 0.0)) {
            s = tr_fail(err, TR_ERR_INVALID,
                        "whiten: PSD at %g Hz (bin %zu) is %g; it must be finite and > 0 "
                        "from fmin = %g Hz up",
                        f, k, psd[k], fmin);
            tr_dft_free(&d);
            return s;
        }
        d.cplx[k][0] = gain / sqrt(psd[k]);
    }
    fftw_execute(d.plan); /* nfft * the inverse DFT */
    const double *h = d.real;
    const double pi = 3.14159265358979323846;
    for (size_t j = 0; j <= half; ++j) {
        /* h is even up to rounding; averaging both sides makes it exactly so. */
        const double even = j ? 0.5 * (h[j] + h[nfft - j]) : h[0];
        const double taper = 0.5 * (1.0 + cos(pi * (double)j / (double)(half + 1)));
        taps[half + j] = taps[half - j] = even / (double)nfft * taper;
    }
    tr_dft_free(&d);
    tr_clear(err);
    return TR_OK;
}

tr_status tr_whiten_spectrum(const double *taps, size_t ntaps, size_t M, float *spec,
                             tr_error *err)
{
    tr_dft d;
    tr_status s = tr_dft_make(&d, M, 0, "whiten", err);
    if (s != TR_OK) return s;
    for (size_t m = 0; m < M; ++m)
        d.real[m] = m < ntaps ? taps[m] : 0.0;
    fftw_execute(d.plan);
    for (size_t k = 0; k < M / 2 + 1; ++k) {
        spec[2 * k] = (float)(d.cplx[k][0] / (double)M);
        spec[2 * k + 1] = (float)(d.cplx[k][1] / (double)M);
    }
    tr_dft_free(&d);
    tr_clear(err);
    return TR_OK;
}
