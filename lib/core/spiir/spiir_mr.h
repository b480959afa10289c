/*
 * Internal contract of the multirate SPIIR filter bank (section 2.2 of Guo et
 * al.): the plan (resampling filters, latency, the filters of each level
 * rescaled to its rate), shared by the object (spiir.c) and the CPU variants
 * (spiir_mr.c, spiir_mr_ref.c). The CUDA backend reads a plain view of the
 * plan (tr_cuda_spiir_mr_plan), and its header, the lower layer, owns the
 * resamplers' geometry (TR_SPIIR_MR_*, tr_spiir_mr_count).
 *
 * Rates: level L runs at R / 2^L (R the full rate). x_0 = x; x_{L+1}[m] =
 * sum_k g[k] x_L[2m - k] (g: the decimator, DEC_TAPS taps, centre DEC_DELAY).
 * The summed output S_L of level L at its index n is its own filters' sum plus
 * the level below brought up: S_L[n] = own_L[n] + sum_k 2 p[k] s[n - k], with
 * s the zero-stuffed S_{L+1} (s[2m] = S_{L+1}[m], s[odd] = 0; p: the
 * interpolator, INT_TAPS taps, centre INT_DELAY). The output is S_0.
 * Both filters are Kaiser-windowed half-band low-passes: centre tap 1/2, taps
 * at even distances from the centre exactly 0, so that the decimator costs
 * (DEC_TAPS + 1) / 4 + 1 products per output and the interpolator passes every
 * other sample through unchanged (2 p[centre] = 1).
 */
#ifndef TRANSIENT_SPIIR_MR_H
#define TRANSIENT_SPIIR_MR_H

#include "spiir/spiir_internal.h"
#include "spiir/spiir_mr_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int nlev;                         /* levels 0 .. nlev - 1 (max level + 1) */
    int64_t latency;                  /* output lag behind the single-rate output */
    double dec[TR_SPIIR_MR_DEC_TAPS]; /* decimator taps (DC gain 1) */
    double itp[TR_SPIIR_MR_INT_TAPS]; /* interpolator taps (DC gain 1; used as 2 p) */
    tr_spiir_bank *sub[TR_SPIIR_MAX_LEVEL + 1]; /* level L's filters at its rate
                                                   (NULL: none at that level) */
    uint32_t ntemplates;
    double dt; /* full-rate sampling interval */
} tr_spiir_mr_plan;

/* Design the resamplers and rescale every filter to its level (docs/spiir.md):
 *   a1' = a1^M, M = 2^L;  c = d + latency - (DEC_DELAY + INT_DELAY)(M - 1);
 *   d' = ceil(c / M);     phi = d' M - c in [0, M);   b0' = M b0 a1^phi,
 * powers in complex double, rounded once. NULL with err on failure. */
tr_spiir_mr_plan *tr_spiir_mr_plan_create(const tr_spiir_bank *bank, tr_error *err);
void tr_spiir_mr_plan_destroy(tr_spiir_mr_plan *p);

/* Kaiser-windowed half-band low-pass of n taps (n = 4k + 3), in double. */
void tr_spiir_mr_halfband(double *taps, int n, double beta);

/* Reference multirate variant: complex double throughout, sample by sample. */
typedef struct tr_spiir_mr_ref tr_spiir_mr_ref;
tr_spiir_mr_ref *tr_spiir_mr_ref_create(const tr_spiir_mr_plan *p, int complex_input);
void tr_spiir_mr_ref_destroy(tr_spiir_mr_ref *r);
void tr_spiir_mr_ref_reset(tr_spiir_mr_ref *r);
/* n cleaned samples (xi NULL for real input) into snr (layout of process). */
void tr_spiir_mr_ref_run(tr_spiir_mr_ref *r, const float *xr, const float *xi, size_t n,
                         float *snr);

/* Optimized multirate CPU variant: float32, one level object (spiir_level.h,
 * optimized kernels) per level, float resamplers in a fixed order
 * (deterministic). */
typedef struct tr_spiir_mr_cpu tr_spiir_mr_cpu;
tr_spiir_mr_cpu *tr_spiir_mr_cpu_create(const tr_spiir_mr_plan *p, int complex_input,
                                        tr_error *err);
void tr_spiir_mr_cpu_destroy(tr_spiir_mr_cpu *c);
void tr_spiir_mr_cpu_reset(tr_spiir_mr_cpu *c);
/* n samples (interleaved when complex, not yet cleaned) into snr; adds the
 * count of non-finite values to *nonfinite. */
void tr_spiir_mr_cpu_run(tr_spiir_mr_cpu *c, const float *x, size_t n, float *snr,
                         uint64_t *nonfinite);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_MR_H */
