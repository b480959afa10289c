/*
 * Power spectral density (PSD) estimates and streaming whitening of a real
 * sample stream, as gravitational-wave searches do before matched filtering.
 * Built when FFTW3 is found (the configure summary says so).
 *
 * References: P. D. Welch, "The use of fast Fourier transform for the
 * estimation of power spectra", IEEE Trans. Audio Electroacoust. 15, 70
 * (1967); B. Allen et al., "FINDCHIRP: an algorithm for detection of
 * gravitational waves from inspiraling compact binaries", Phys. Rev. D 85,
 * 122006 (2012) (inverse spectrum truncation; what PyCBC's pycbc.psd.welch
 * and inverse_spectrum_truncation and gstlal's whitener do);
 * B. S. Sathyaprakash, B. F. Schutz, "Physics, astrophysics and cosmology
 * with gravitational waves", Living Rev. Relativ. 12, 2 (2009), the
 * Advanced LIGO noise fit of their section 4 (tr_psd_design).
 *
 * PSD conventions (every function here)
 *   One-sided, in (input unit)^2 / Hz (strain^2/Hz for strain), on the grid
 *   f_k = k rate / nfft, k = 0 .. nfft/2 (nfft/2 + 1 values, nfft even): the
 *   PSD of white noise of variance s^2 is 2 s^2 / rate at every k except
 *   k = 0 and nfft/2 (s^2 / rate there).
 *
 * tr_psd_welch: Welch's estimate with median averaging, what
 *   scipy.signal.welch(x, rate, nperseg=nfft, average='median') returns:
 *   segments of nfft samples every nfft/2 (trailing samples that fill no
 *   segment are left out), each minus its mean, times a periodic Hann window
 *   w[j] = 0.5 - 0.5 cos(2 pi j / nfft), |DFT|^2 / (rate sum w^2), doubled
 *   except at k = 0 and nfft/2; per bin the median over segments (the mean of
 *   the two middle values for an even count) divided by the bias of the
 *   median of chi^2_2 variables, 1 + sum_{i=1}^{(m-1)/2} (1/(2i+1) - 1/(2i))
 *   for m segments. Computed in double.
 *
 * tr_psd_from_file: two-column ASCII, frequency in Hz and ASD (asd = 1, as
 *   LIGO distributes its noise curves) or PSD (asd = 0) per line; '#' and '%'
 *   start comments, blank lines are skipped. Frequencies must be >= 0,
 *   strictly increasing, values > 0, everything finite. The PSD is
 *   interpolated onto the grid linearly in log f and log PSD (a row at f = 0
 *   takes no part: log 0 does not exist); below the first and above the last
 *   positive frequency the end values are held (whitening removes what lies
 *   below its fmin anyway).
 *
 * tr_psd_design: the Advanced LIGO fit of Sathyaprakash & Schutz (2009):
 *   S(f) = S0 (x^-4.14 - 5 x^-2 + 111 (1 - x^2 + x^4 / 2) / (1 + x^2 / 2)),
 *   x = f / 215 Hz, S0 = 1e-49 / Hz, for f >= 10 Hz; +infinity below 10 Hz
 *   (the fit's low-frequency wall), so whitening needs fmin >= 10 Hz there.
 *
 * Whitening (tr_whiten)
 *   Frequency response W_k = sqrt(2 / rate) / sqrt(S_k) for f_k >= fmin and
 *   k > 0, 0 below: white noise of unit variance has the one-sided PSD
 *   2 / rate, so noise with PSD S comes out with unit variance in every
 *   frequency bin above fmin (its total variance is 1 - 2 fmin / rate).
 *   The filter is made finite as PyCBC and gstlal do (inverse spectrum
 *   truncation): w = inverse real DFT of W (nfft points, zero phase), kept
 *   for |j| <= half_len and multiplied by the Hann taper
 *   0.5 (1 + cos(pi j / (half_len + 1))), giving h[j], j = -half_len ..
 *   half_len: L = 2 half_len + 1 taps, zero phase. The truncation smooths the
 *   response (features of the PSD narrower than about rate / half_len Hz are
 *   not followed) and bounds the response to a glitch to L samples.
 *   Whitened value at position t: z[t] = sum_j h[j] x[t - j], x = 0 before
 *   position 0.
 *
 *   Streaming: the fast variants convolve by overlap-save with FFTs of
 *   fft_len = M samples, B = M - L + 1 new samples per block, blocks anchored
 *   at absolute positions, so the output is identical for any chunking (a
 *   sample at a time included). tr_whiten_process consumes n samples and
 *   writes n outputs, output k being z[position_in + k - D] with the latency
 *   D = half_len + B (the filter reaches half_len samples ahead, and a block
 *   is transformed once complete); outputs at t < 0 are 0. The reference
 *   computes the same z[t] by direct convolution in double.
 *
 *   Non-finite input (NaN, +-Inf): such a sample enters the filter as 0, and
 *   every output whose filter window contained it, z[t] for |t - b| <=
 *   half_len around each bad position b, is gated: written as 0 (a gated
 *   segment, as gstlal gates glitches). The state carries no NaN, so the
 *   stream is whitened normally again from b + half_len + 1 on;
 *   tr_whiten_gated counts the gated outputs.
 */
#ifndef TRANSIENT_WHITEN_H
#define TRANSIENT_WHITEN_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked by every function. */
#define TR_PSD_MAX_NFFT     ((size_t)1 << 26) /* longest PSD grid and FFT */
#define TR_PSD_MAX_ROWS     ((size_t)1 << 22) /* most data rows of a PSD file */
#define TR_PSD_DESIGN_FLOOR 10.0              /* Hz: the design fit's low end */

/* Values of a PSD on a grid of nfft points: nfft / 2 + 1. */
size_t tr_psd_len(size_t nfft);

/*
 * Welch median PSD of x[0 .. n) sampled at rate Hz with segments of nfft
 * samples (even, >= 4, n >= nfft) into psd[0 .. nfft/2].
 */
tr_status tr_psd_welch(const float *x, size_t n, double rate, size_t nfft, double *psd,
                       tr_error *err);

/*
 * PSD from a two-column ASCII file (frequency, ASD when asd != 0 else PSD)
 * interpolated onto the grid of nfft points at rate Hz. TR_ERR_IO when the
 * file cannot be read, TR_ERR_INVALID for bad rows (the message names the
 * file and the line).
 */
tr_status tr_psd_from_file(const char *path, int asd, double rate, size_t nfft,
                           double *psd, tr_error *err);

/* The Advanced LIGO design fit at f Hz (+infinity below TR_PSD_DESIGN_FLOOR). */
double tr_psd_design_at(double f);

/* That fit on the grid of nfft points at rate Hz. */
tr_status tr_psd_design(double rate, size_t nfft, double *psd, tr_error *err);

typedef struct {
    double rate;        /* sample rate in Hz, > 0 */
    const double *psd;  /* nfft/2 + 1 one-sided PSD values (copied at create); finite
                           and > 0 from fmin to rate / 2 */
    size_t nfft;        /* PSD grid: even, >= 4 */
    double fmin;        /* Hz: frequencies below are removed, in [0, rate / 2)
                           (default 15) */
    size_t half_len;    /* filter taps each side of the centre, in [1, nfft / 2 - 1];
                           0 = nfft / 2 - 1, the longest, as PyCBC (default 0) */
    size_t fft_len;     /* overlap-save FFT length M, >= L + 1 and <= TR_PSD_MAX_NFFT;
                           0 = the smallest power of two >= 2 L (default 0) */
    tr_backend backend; /* AUTO (default), CPU or CUDA */
    int device;         /* CUDA device index (default 0) */
    tr_variant variant; /* FAST (default) or REFERENCE (CPU only) */
    size_t batch;       /* CUDA: blocks transformed per call of the plan (default 8) */
} tr_whiten_config;

tr_whiten_config tr_whiten_config_default(void);

typedef struct tr_whiten tr_whiten;

/* Validates everything and designs the filter; NULL with err filled on
 * failure (messages start with "whiten: "). */
tr_whiten *tr_whiten_create(const tr_whiten_config *cfg, tr_error *err);
void tr_whiten_destroy(tr_whiten *q);

/* Back to position 0 with an empty history. */
tr_status tr_whiten_reset(tr_whiten *q);

/* Consume x[0 .. n), write y[k] = z[position_in + k - D], k < n; n = 0 is
 * allowed; x and y may not overlap. */
tr_status tr_whiten_process(tr_whiten *q, const float *x, size_t n, float *y);

/* The L filter taps h[-half_len .. half_len] into taps (double). */
tr_status tr_whiten_taps(const tr_whiten *q, double *taps, size_t len);

uint64_t tr_whiten_latency(const tr_whiten *q);  /* D in samples */
uint64_t tr_whiten_position(const tr_whiten *q); /* samples consumed */
uint64_t tr_whiten_gated(const tr_whiten *q);    /* outputs gated (written as 0) */
size_t tr_whiten_half_len(const tr_whiten *q);
size_t tr_whiten_fft_len(const tr_whiten *q);
tr_backend tr_whiten_backend(const tr_whiten *q);
tr_variant tr_whiten_variant(const tr_whiten *q);
const char *tr_whiten_last_error(const tr_whiten *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_WHITEN_H */
