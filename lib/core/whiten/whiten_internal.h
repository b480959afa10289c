/* Internals of the PSD functions and tr_whiten shared by the object and its
 * variants (not installed). */
#ifndef TRANSIENT_WHITEN_INTERNAL_H
#define TRANSIENT_WHITEN_INTERNAL_H

#include <transient/whiten.h>

#include <fftw3.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Makes FFTW's planners (single and double precision) safe to call from
 * several threads, once per process; every plan of the core is made after it. */
void tr_fftw_ready(void);

/* A real transform of n points in double with its buffers: forward
 * (inverse = 0) real -> cplx, or inverse (unscaled) cplx -> real. */
typedef struct {
    double *real;       /* n values */
    fftw_complex *cplx; /* n / 2 + 1 values */
    fftw_plan plan;
} tr_dft;
tr_status tr_dft_make(tr_dft *d, size_t n, int inverse, const char *who, tr_error *err);
void tr_dft_free(tr_dft *d); /* also after a failed make */

/* Grid checks shared by the PSD functions (messages start with `who`). */
tr_status tr_psd_check_grid(const char *who, double rate, size_t nfft, tr_error *err);

/*
 * The whitening filter (whiten.h, "Whitening"): taps[m] = h[m - half],
 * m = 0 .. 2 half, in double, from the PSD on the grid of nfft points.
 * Fails when a PSD value at or above fmin is not finite and positive.
 */
tr_status tr_whiten_design(const double *psd, size_t nfft, double rate, double fmin,
                           size_t half, double *taps, tr_error *err);

/*
 * Filter spectrum for overlap-save with FFTs of M points: the real DFT of
 * the taps zero-padded to M, divided by M (what a forward and an unscaled
 * inverse transform need), as M / 2 + 1 interleaved float pairs.
 */
tr_status tr_whiten_spectrum(const double *taps, size_t ntaps, size_t M, float *spec,
                             tr_error *err);

/*
 * What every variant computes for nout consecutive positions: in holds the
 * ntaps - 1 samples before them and their own nout samples;
 * out[i] = sum_{m < ntaps} taps[m] in[ntaps - 1 + i - m].
 */

/* The literal sum in double (whiten_ref.c). */
void tr_whiten_blocks_ref(const double *taps, size_t ntaps, const float *in, size_t nout,
                          float *out);

/* Overlap-save with FFTW in single precision (whiten_cpu.c): nb blocks of
 * B = M - ntaps + 1 outputs each. */
typedef struct tr_whiten_fftw tr_whiten_fftw;
tr_status tr_whiten_fftw_create(const float *spec, size_t ntaps, size_t M,
                                tr_whiten_fftw **out, tr_error *err);
void tr_whiten_fftw_blocks(tr_whiten_fftw *f, const float *in, size_t nb, float *out);
void tr_whiten_fftw_destroy(tr_whiten_fftw *f);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_WHITEN_INTERNAL_H */
