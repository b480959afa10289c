/*
 * CPU fast whitening: overlap-save convolution with FFTW in single
 * precision. Each block transforms M samples (the ntaps - 1 before its
 * outputs and its B = M - ntaps + 1 own), multiplies by the filter spectrum
 * (scaled by 1 / M) and keeps the last B samples of the inverse transform,
 * where the circular convolution equals the linear one.
 *
 * One plan per object, made once on FFTW-allocated buffers: every block runs
 * the same code path on the same alignment, so a block's result does not
 * depend on which call it was completed in.
 */
#include "common/core_util.h"
#include "whiten/whiten_internal.h"

#include <fftw3.h>
#include <stdlib.h>
#include <string.h>

struct tr_whiten_fftw {
    size_t M, ntaps, B;
    float *spec;         /* M/2 + 1 interleaved filter coefficients */
    float *time;         /* M samples */
    fftwf_complex *freq; /* M/2 + 1 */
    fftwf_plan fwd, inv;
};

tr_status tr_whiten_fftw_create(const float *spec, size_t ntaps, size_t M,
                                tr_whiten_fftw **out, tr_error *err)
{
    *out = NULL;
    tr_whiten_fftw *f = (tr_whiten_fftw *)calloc(1, sizeof *f);
    if (!f) return tr_fail(err, TR_ERR_NOMEM, "whiten: cannot allocate the FFT state");
    const size_t nbin = M / 2 + 1;
    f->M = M;
    f->ntaps = ntaps;
    f->B = M - ntaps + 1;
    f->spec = (float *)malloc(2 * nbin * sizeof *f->spec);
    f->time = (float *)fftwf_malloc(M * sizeof *f->time);
    f->freq = (fftwf_complex *)fftwf_malloc(nbin * sizeof *f->freq);
    tr_fftw_ready();
    if (f->spec && f->time && f->freq) {
        f->fwd = fftwf_plan_dft_r2c_1d((int)M, f->time, f->freq, FFTW_ESTIMATE);
        f->inv = fftwf_plan_dft_c2r_1d((int)M, f->freq, f->time, FFTW_ESTIMATE);
    }
    if (!f->fwd || !f->inv) {
        tr_whiten_fftw_destroy(f);
        return tr_fail(err, TR_ERR_NOMEM, "whiten: cannot plan FFTs of %zu points", M);
    }
    memcpy(f->spec, spec, 2 * nbin * sizeof *f->spec);
    *out = f;
    return TR_OK;
}

void tr_whiten_fftw_blocks(tr_whiten_fftw *f, const float *in, size_t nb, float *out)
{
    const size_t nbin = f->M / 2 + 1;
    for (size_t b = 0; b < nb; ++b) {
        memcpy(f->time, in + b * f->B, f->M * sizeof *f->time);
        fftwf_execute(f->fwd);
        for (size_t k = 0; k < nbin; ++k) {
            const float re = f->freq[k][0], im = f->freq[k][1];
            const float hr = f->spec[2 * k], hi = f->spec[2 * k + 1];
            f->freq[k][0] = re * hr - im * hi;
            f->freq[k][1] = re * hi + im * hr;
        }
        fftwf_execute(f->inv);
        memcpy(out + b * f->B, f->time + f->ntaps - 1, f->B * sizeof *out);
    }
}

void tr_whiten_fftw_destroy(tr_whiten_fftw *f)
{
    if (!f) return;
    if (f->fwd) fftwf_destroy_plan(f->fwd);
    if (f->inv) fftwf_destroy_plan(f->inv);
    free(f->spec);
    fftwf_free(f->time);
    fftwf_free(f->freq);
    free(f);
}
