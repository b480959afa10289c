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

#include <fftw3.h>
#include <math.h>
#include <stdlib.h>

tr_status tr_whiten_design(const double *psd, size_t nfft, double rate, double fmin,
                           size_t half, double *taps, tr_error *err)
{
    const size_t nbin = tr_psd_len(nfft);
    tr_fftw_ready();
    fftw_complex *w = (fftw_complex *)fftw_malloc(nbin * sizeof *w);
    double *h = (double *)fftw_malloc(nfft * sizeof *h);
    fftw_plan plan = NULL;
    if (w && h) plan = fftw_plan_dft_c2r_1d((int)nfft, w, h, FFTW_ESTIMATE);
    tr_status s = TR_OK;
    if (!plan) {
        s = tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the design (nfft = %zu)",
                    nfft);
        goto done;
    }
    /* Unit variance per bin: white noise of variance 1 has the PSD 2 / rate. */
    const double gain = sqrt(2.0 / rate);
    for (size_t k = 0; k < nbin; ++k) {
        const double f = (double)k * rate / (double)nfft;
        w[k][0] = w[k][1] = 0.0;
        if (k == 0 || f < fmin) continue;
        if (!isfinite(psd[k]) || !(psd[k] > 0.0)) {
            s = tr_fail(err, TR_ERR_INVALID,
                        "whiten: PSD at %g Hz (bin %zu) is %g; it must be finite and > 0 "
                        "from fmin = %g Hz up",
                        f, k, psd[k], fmin);
            goto done;
        }
        w[k][0] = gain / sqrt(psd[k]);
    }
    fftw_execute(plan); /* h = nfft * inverse DFT */
    const double pi = 3.14159265358979323846;
    for (size_t j = 0; j <= half; ++j) {
        /* h is even up to rounding; averaging both sides makes it exactly so. */
        const double even = j ? 0.5 * (h[j] + h[nfft - j]) : h[0];
        const double taper = 0.5 * (1.0 + cos(pi * (double)j / (double)(half + 1)));
        taps[half + j] = taps[half - j] = even / (double)nfft * taper;
    }
    tr_clear(err);
done:
    if (plan) fftw_destroy_plan(plan);
    fftw_free(w);
    fftw_free(h);
    return s;
}

tr_status tr_whiten_spectrum(const double *taps, size_t ntaps, size_t M, float *spec,
                             tr_error *err)
{
    const size_t nbin = M / 2 + 1;
    tr_fftw_ready();
    double *t = (double *)fftw_malloc(M * sizeof *t);
    fftw_complex *c = (fftw_complex *)fftw_malloc(nbin * sizeof *c);
    fftw_plan plan = NULL;
    if (t && c) plan = fftw_plan_dft_r2c_1d((int)M, t, c, FFTW_ESTIMATE);
    tr_status s = TR_OK;
    if (!plan) {
        s = tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the filter spectrum");
    } else {
        for (size_t m = 0; m < M; ++m)
            t[m] = m < ntaps ? taps[m] : 0.0;
        fftw_execute(plan);
        for (size_t k = 0; k < nbin; ++k) {
            spec[2 * k] = (float)(c[k][0] / (double)M);
            spec[2 * k + 1] = (float)(c[k][1] / (double)M);
        }
        tr_clear(err);
    }
    if (plan) fftw_destroy_plan(plan);
    fftw_free(t);
    fftw_free(c);
    return s;
}
