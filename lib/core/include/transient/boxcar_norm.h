/*
 * S/N normalisation of the boxcar single-pulse search: the mean mu_L and the
 * standard deviation sigma_L of a boxcar sum of width L, per channel, measured
 * on the stream (or given), plus optional baseline removal of the input.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * equations 3-5 and section 4.6.2; the streaming mean and variance are those
 * of T. F. Chan, G. H. Golub, R. J. LeVeque, "Algorithms for computing the
 * sample variance" (1983), pairwise merge of (n, mean, M2).
 *
 * S/N of the boxcar (p, L) of channel c:  (X_L[p] - mu_L) / sigma_L.
 *
 * Modes
 *   WHITE   one robust estimate (mu, sigma) of the input per channel:
 *           mu_L = L mu, sigma_L = sqrt(L) sigma (eq. 5).
 *   LEVELS  measured per decimation level k = 0..K: mean m_k and sigma s_k
 *           of the boxcar sums of width 2^k that lie inside the window and
 *           start at every multiple of max(1, 2^k / 8) (overlapping sums). For any L,
 * with t = log2(L) between levels k and k+1, the per-sample mean m_k / 2^k and the
 * per-sample variance v_k = s_k^2 / 2^k are interpolated linearly in t:  mu_L = L m(t),
 * sigma_L = sqrt(L v(t)). Exact for white noise; follows red noise (paper section 4.6.2).
 *           Widths above 2^K use level K's per-sample values (white
 *           extrapolation). K = ceil(log2(max_width)), lowered so that
 *           2^K <= window / 8 (each level needs enough sums to be measured).
 *           Sums containing a non-finite sample are left out.
 *   FIXED   the user's values: per channel (or one for all channels) input
 *           mean and sigma scaled by eq. 5, or a per-width table mu_L,
 *           sigma_L for L = 1..n (shared by the channels; widths above n use
 *           the last entry's per-sample values, as in LEVELS).
 *
 * Robust estimate (WHITE and LEVELS; also tr_boxcar_norm_robust): mean and
 * variance of the finite values (two-pass in double), then repeatedly drop
 * values with |v - mean| > reject_sigma * sigma and re-estimate, until no
 * value is dropped or max_iter passes are done. With reject_correct the sigma
 * of the kept values is divided by the standard deviation of a unit normal
 * truncated at +-reject_sigma (for Gaussian noise the clipped sigma is
 * otherwise biased low: 0.880 at 2 sigma, 0.987 at 3 sigma).
 *
 * Streaming policy (outputs never depend on how the stream is split)
 *   - Statistics are measured over windows of `window` samples aligned to
 *     absolute positions: window j = [j W, (j+1) W).
 *   - The values in effect for window j are the Chan merge of the robust
 *     (n, mean, M2) of windows j-H .. j-1 (H = `history`, those that exist
 *     since the start or the last reset, and that had any accepted value).
 *     They depend only on data before j W.
 *   - The first window (first_own = 1, the default): window 0 has no
 *     predecessors, so its values are the robust (n, mean, M2) of window 0
 *     ITSELF, fixed when window 0 is complete, or, for a stream that ends
 *     earlier, by tr_boxcar_norm_finish on the samples there are (positions
 *     0 .. N-1; LEVELS measures the levels whose sums fit). Until then the
 *     values for window 0 are the warm-up values below, and a non-finite
 *     sample of window 0 is written as NaN in the cleaned output (its
 *     replacement, window 0's own mean, is not known yet): the search
 *     (<transient/boxcar.h>) holds window 0 until its values are fixed and
 *     replaces those NaN then. Later windows are as above (window 1 uses
 *     window 0's summary like any predecessor).
 *   - Warm-up: values that could not be measured (first_own = 0: window 0;
 *     a window 0 with fewer than 2 finite values or no variance; any window
 *     whose H predecessors all lacked finite data) are init_mean and
 *     init_sigma of the input, scaled by eq. 5 (tr_boxcar_norm_ready says 0).
 *   - The boxcar (p, L) is normalised by the values in effect for the window
 *     that contains its START p, whatever windows it spans.
 *   - Non-finite input samples are excluded from every statistic and from
 *     the baseline, counted, and replaced in the cleaned output by the input
 *     mean in effect (after baseline removal: by that mean as well, which is
 *     measured on the baseline-removed data).
 *   - FIXED mode measures nothing (window and history are ignored).
 *
 * Baseline removal (optional, applied before statistics and search):
 *   y[p] = x[p] - median of the finite values among x[p-M+1 .. p]
 *   (M = baseline_window, positions >= 0 only; an even count takes the mean
 *   of the two middle values; no finite value: baseline 0). A causal running
 *   median: pulses much shorter than M/2 barely move it; wider ones are
 *   partly removed. Cost O(log M) per sample (two heaps of the window's
 *   samples with their positions), memory about 3 nchan M 4-byte words.
 *
 * Cheaper baseline (BLOCK_MEDIAN): the window is cut into 16 blocks of
 *   b = M / 16 samples aligned to absolute positions (block j = [j b, (j+1) b));
 *   when a block is complete the median of its finite values is taken; the
 *   baseline for every sample of block j is the median of the medians of
 *   blocks j-16 .. j-1 (those that had a finite value), so it is piecewise
 *   constant, causal and lags by about M/2. Before the first block is
 *   complete it is the first finite sample of the stream (0 before that).
 *   Cost O(1) per sample (a selection per block), memory nchan (b + 16)
 *   floats. Needs M >= 16.
 *
 * Memory of WHITE/LEVELS: nchan * window floats (the current window is kept
 * for the iterative rejection) plus small per-window summaries (and W doubles
 * of scratch per extra thread).
 *
 * Threads (cfg.threads, WHITE/LEVELS without baseline removal): a call of
 * nchan x n >= 2^17 values is shared by threads, by channel when there are at
 * least as many channels as threads, otherwise by window (the statistics of
 * the windows that lie entirely in the call are measured in parallel, then
 * merged in order). The results are exactly those of one thread.
 *
 * Layout: time-major interleaved channels x[k * nchan + c].
 */
#ifndef TRANSIENT_BOXCAR_NORM_H
#define TRANSIENT_BOXCAR_NORM_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TR_BOXCAR_NORM_WHITE = 0,  /* robust mu, sigma of the input; eq. 5 scaling */
    TR_BOXCAR_NORM_LEVELS = 1, /* measured at widths 2^k, interpolated between */
    TR_BOXCAR_NORM_FIXED = 2   /* user values */
} tr_boxcar_norm_mode;

typedef enum {
    TR_BOXCAR_BASELINE_NONE = 0,   /* input used as is (default) */
    TR_BOXCAR_BASELINE_MEDIAN = 1, /* causal running median over baseline_window */
    TR_BOXCAR_BASELINE_BLOCK_MEDIAN =
        2 /* median of 16 block medians (cheap, see above) */
} tr_boxcar_baseline_mode;

/* Limits checked at create. */
#define TR_BOXCAR_NORM_MAX_WINDOW   (1u << 26) /* samples per statistics window */
#define TR_BOXCAR_NORM_MAX_HISTORY  1024       /* windows merged */
#define TR_BOXCAR_NORM_MAX_BASELINE (1u << 20) /* running-median window */
#define TR_BOXCAR_NORM_MAX_LEVEL    30         /* highest decimation level */
#define TR_BOXCAR_NORM_MAX_THREADS  64         /* most threads */

typedef struct {
    tr_boxcar_norm_mode mode; /* WHITE (default), LEVELS or FIXED */
    uint32_t window;     /* W: samples per statistics window, >= 16 (default 16384) */
    uint32_t history;    /* H: past windows merged for the values in effect (default 4) */
    double reject_sigma; /* outlier rejection at this many sigma, > 0; 0 = none (default
                            3) */
    uint32_t reject_max_iter; /* rejection passes at most, >= 1 (default 16) */
    int reject_correct; /* 1: correct sigma for the clipping (Gaussian), default 1 */
    double init_mean;   /* warm-up input mean (default 0) */
    double init_sigma;  /* warm-up input sigma, > 0 (default 1) */
    int first_own;      /* 1: window 0 uses its own statistics (see above), default 1;
                           0: window 0 uses the warm-up values */
    /* FIXED mode */
    double fixed_mean;         /* input mean, all channels (default 0) */
    double fixed_sigma;        /* input sigma, all channels, > 0 (default 1) */
    const double *fixed_means; /* nchan input means, or NULL for fixed_mean (copied) */
    const double
        *fixed_sigmas; /* nchan input sigmas > 0, or NULL for fixed_sigma (copied) */
    const double *fixed_mu_L; /* per-width table mu_L, L = 1..fixed_table_len, or NULL */
    const double
        *fixed_sigma_L;       /* per-width table sigma_L > 0 (both tables or neither) */
    uint32_t fixed_table_len; /* entries of the tables (0 = no table) */
    /* baseline removal */
    tr_boxcar_baseline_mode baseline; /* NONE (default), MEDIAN or BLOCK_MEDIAN */
    uint32_t baseline_window;         /* M: running-median length, >= 3 (default 4096) */
    uint32_t threads; /* WHITE/LEVELS without baseline removal: threads for long calls
                         (see Threads above); 1 = the calling thread only, 0 = one per
                         online CPU, at most 8 (default 0) */
} tr_boxcar_norm_config;

typedef struct tr_boxcar_norm tr_boxcar_norm;

tr_boxcar_norm_config tr_boxcar_norm_config_default(void);

/*
 * Validate cfg for nchan >= 1 channels and a search up to max_width >= 1
 * (messages start with "boxcar_norm: "). create calls it.
 */
tr_status tr_boxcar_norm_validate(const tr_boxcar_norm_config *cfg, uint32_t nchan,
                                  uint32_t max_width, tr_error *err);

/*
 * lookback: how many positions behind the processed position the caller will
 * still ask for values (the search latency); the object keeps the per-window
 * values of every window that holds a position >= position - lookback.
 * Copies every table of cfg.
 */
tr_boxcar_norm *tr_boxcar_norm_create(const tr_boxcar_norm_config *cfg, uint32_t nchan,
                                      uint32_t max_width, uint64_t lookback,
                                      tr_error *err);
void tr_boxcar_norm_destroy(tr_boxcar_norm *q);

/* Back to position 0: windows, history, baseline and counters cleared. */
tr_status tr_boxcar_norm_reset(tr_boxcar_norm *q);

/*
 * Consume n samples per channel x[k * nchan + c] (k < n) and write the
 * cleaned samples y (baseline removed, non-finite replaced, see above) in the
 * same layout; y may equal x. n = 0 is allowed (x, y may then be NULL).
 */
tr_status tr_boxcar_norm_process(tr_boxcar_norm *q, const float *x, size_t n, float *y);

/*
 * End of the stream (first_own): when window 0 is not complete, fix its
 * values from the tr_boxcar_norm_position() samples consumed (none: the
 * warm-up values stay). Then only queries and reset (process: TR_ERR_STATE).
 */
tr_status tr_boxcar_norm_finish(tr_boxcar_norm *q);

/*
 * Samples per channel that window 0's own statistics were measured on: W once
 * window 0 is complete, N < W after finish of a stream of N samples, 0 before
 * (and always 0 with first_own = 0 or in FIXED mode).
 */
uint64_t tr_boxcar_norm_first_measured(const tr_boxcar_norm *q);

/*
 * mu_L and sigma_L (sigma_L > 0) in effect for boxcars of width L >= 1
 * starting at absolute position p of channel c. The window of p must be one
 * of the kept ones: from the window holding position - lookback - 1 up to the
 * current window (the one holding `position`, whose values are already fixed);
 * otherwise TR_ERR_INVALID. FIXED mode accepts any p. mu or sigma may be NULL.
 * A measured variance of 0 (constant data) counts as not measured.
 */
tr_status tr_boxcar_norm_stats(const tr_boxcar_norm *q, uint64_t p, uint32_t c,
                               uint32_t L, double *mu, double *sigma);

/*
 * The same for nw widths at once, in float (what the search kernels take):
 * mu[i], sigma[i] for widths[i].
 */
tr_status tr_boxcar_norm_table(const tr_boxcar_norm *q, uint64_t p, uint32_t c,
                               const uint32_t *widths, size_t nw, float *mu,
                               float *sigma);

/* Window index floor(p / W) of position p (0 in FIXED mode), and W. */
uint64_t tr_boxcar_norm_window_of(const tr_boxcar_norm *q, uint64_t p);
uint32_t tr_boxcar_norm_window(const tr_boxcar_norm *q);

/* 1 when the values for position p of channel c were measured (not warm-up). */
int tr_boxcar_norm_ready(const tr_boxcar_norm *q, uint64_t p, uint32_t c);

uint64_t
tr_boxcar_norm_position(const tr_boxcar_norm *q); /* samples per channel consumed */
uint64_t
tr_boxcar_norm_nonfinite(const tr_boxcar_norm *q); /* non-finite samples, all channels */
uint64_t tr_boxcar_norm_rejected(
    const tr_boxcar_norm *q); /* values dropped as outliers (level 0) */
uint32_t tr_boxcar_norm_levels(const tr_boxcar_norm *q); /* LEVELS: K + 1; else 1 */
const char *tr_boxcar_norm_last_error(const tr_boxcar_norm *q);

/*
 * Stand-alone robust estimate of n values v[i * stride] (stride >= 1), as
 * described above, in double. mean, sigma and used (values kept) may be NULL.
 * With no finite value: TR_ERR_INVALID. reject_sigma = 0: plain mean/sigma.
 * sigma is the population standard deviation (divide by the count).
 */
tr_status tr_boxcar_norm_robust(const float *v, size_t n, size_t stride,
                                double reject_sigma, uint32_t max_iter, int correct,
                                double *mean, double *sigma, size_t *used);

/* Standard deviation of a unit normal truncated to [-k, k] (k > 0). */
double tr_boxcar_norm_clip_factor(double k);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_NORM_H */
