/*
 * Summed parallel IIR (SPIIR) filter bank: matched filtering of chirps by sums
 * of first-order complex IIR filters.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equations 5-8); filters as in Hooper et al., PRD 86, 024012 (2012).
 *
 * Definition, for template t with filters l = 0..L_t-1 and input x[k]:
 *   y[k, l] = a1[l] y[k-1, l] + b0[l] x[k - d[l]]          (x[j] = 0 for j < 0)
 *   z[k, t] = 2 dt sum_l y[k, l]
 * with complex a1, b0 (|a1| < 1), integer delays d >= 0 and dt the sampling
 * interval. Input is real or complex; the output is one complex SNR per
 * template per input sample. Filters are given at the full rate; `level` says
 * at which rate (full rate / 2^level) a multirate bank may run them.
 * Non-finite input samples are replaced by zero before filtering (an IIR state
 * that saw a NaN would stay NaN forever) and counted (tr_spiir_nonfinite).
 * The output does not depend on how the stream is split into calls.
 */
#ifndef TRANSIENT_SPIIR_H
#define TRANSIENT_SPIIR_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One first-order complex IIR filter at the full rate. */
typedef struct {
    double a1_re, a1_im; /* pole a1, |a1| < 1 */
    double b0_re, b0_im; /* gain b0 */
    int32_t delay;       /* d >= 0, in full-rate samples */
    int32_t level;       /* multirate level: runs at rate / 2^level (0 = full rate) */
} tr_spiir_filter;

/* Limits checked when a bank is built. */
#define TR_SPIIR_MAX_DELAY (1 << 24)
#define TR_SPIIR_MAX_LEVEL 16
/* Templates of a bank and of a trigger search (docs/reliability.md): keeps
 * every size computation (also outputs of ntemplates x samples) far from
 * overflow and bounds the memory a configuration can ask for. */
#define TR_SPIIR_MAX_TEMPLATES ((uint32_t)1 << 20)

typedef struct tr_spiir_bank tr_spiir_bank;

/*
 * Bank from arrays: filters of template 0, then of template 1, ...;
 * counts[t] filters in template t (>= 1), dt > 0 the sampling interval.
 * Validates every filter (finite, |a1| < 1, 0 <= delay <= TR_SPIIR_MAX_DELAY,
 * 0 <= level <= TR_SPIIR_MAX_LEVEL); NULL with err filled on failure.
 */
tr_spiir_bank *tr_spiir_bank_create(const tr_spiir_filter *filters,
                                    const uint32_t *counts, uint32_t ntemplates,
                                    double dt, tr_error *err);
void tr_spiir_bank_destroy(tr_spiir_bank *bank);

/*
 * Bank files (little-endian binary, docs/spiir.md):
 *   8 bytes   magic "TRSPIIR1"
 *   uint32    ntemplates
 *   uint32    reserved (0)
 *   double    dt
 *   ntemplates x uint32   filter counts
 *   then every filter in order: 4 x double (a1_re, a1_im, b0_re, b0_im),
 *                               int32 delay, int32 level          (40 bytes)
 * Loading validates like tr_spiir_bank_create and rejects truncated or
 * trailing data.
 */
tr_spiir_bank *tr_spiir_bank_load(const char *path, tr_error *err);
tr_status tr_spiir_bank_save(const tr_spiir_bank *bank, const char *path, tr_error *err);

uint32_t tr_spiir_bank_templates(const tr_spiir_bank *bank);
uint32_t tr_spiir_bank_filters(const tr_spiir_bank *bank, uint32_t t); /* in template t */
uint64_t tr_spiir_bank_total_filters(const tr_spiir_bank *bank);
double tr_spiir_bank_dt(const tr_spiir_bank *bank);
int32_t tr_spiir_bank_max_delay(const tr_spiir_bank *bank);
/* Filter i of template t (NULL when out of range). */
const tr_spiir_filter *tr_spiir_bank_filter(const tr_spiir_bank *bank, uint32_t t,
                                            uint32_t i);

typedef struct {
    int complex_input;  /* 0: x is float[n]; 1: x is interleaved complex float[2n] */
    tr_backend backend; /* AUTO, CPU or CUDA (default AUTO) */
    int device;         /* CUDA device index (default 0) */
    tr_variant
        variant;   /* FAST (default), REFERENCE (CPU, complex double) or PAPER (CUDA) */
    size_t batch;  /* CUDA: samples per device batch (default 4096) */
    int multirate; /* 0: every filter at the full rate (default); 1: each filter at
                      rate / 2^level, output delayed by tr_spiir_latency (below) */
} tr_spiir_config;

/*
 * Multirate (multirate = 1, section 2.2 of the paper, docs/spiir.md): the input
 * is halved in rate level by level with a 67-tap Kaiser half-band low-pass
 * (100 dB), filter l runs at rate / 2^level[l] with a1^(2^level), a delay in
 * the lower rate's samples and a rescaled b0, and the sums are brought back
 * level by level with a 47-tap Kaiser half-band interpolator (60 dB). The
 * output is the single-rate output delayed by tr_spiir_latency(q) samples,
 * within the accuracy bound of docs/spiir.md for banks whose level-L filters
 * have pole frequencies |f| <= TR_SPIIR_MR_PASSBAND * rate / 2^L (the
 * resamplers' passband edge; the band above 0.6 * rate / 2^L is suppressed by
 * 100 dB before it could alias).
 */
#define TR_SPIIR_MR_PASSBAND 0.4

typedef struct tr_spiir tr_spiir;

tr_spiir_config tr_spiir_config_default(void);

/* The object keeps its own copy of the bank. */
tr_spiir *tr_spiir_create(const tr_spiir_config *cfg, const tr_spiir_bank *bank,
                          tr_error *err);
void tr_spiir_destroy(tr_spiir *q);

/* Zero all filter states and the delay line (position back to 0). */
tr_status tr_spiir_reset(tr_spiir *q);

/*
 * Filter n samples (real: float[n]; complex: float[2n] interleaved), writing
 * snr[(k * ntemplates + t) * 2 + {0, 1}] = (re, im) of z[k, t] for k < n.
 * Every sample is consumed; state carries over to the next call.
 */
tr_status tr_spiir_process(tr_spiir *q, const float *x, size_t n, float *snr);

/* CUDA backend only: the same with device pointers; returns when done. */
tr_status tr_spiir_process_device(tr_spiir *q, const float *d_x, size_t n, float *d_snr);

uint32_t tr_spiir_templates(const tr_spiir *q);
/* Samples (at the full rate) by which the output lags the single-rate output:
 * 0 single-rate; multirate: the resamplers' group delay that the bank's delays
 * cannot absorb, max(0, max_l (56 (2^L - 1) - d_l - 2^L + 1)) over filters of
 * level L >= 1 (0 when every low-rate filter has a long enough delay). */
int64_t tr_spiir_latency(const tr_spiir *q);
uint64_t tr_spiir_position(const tr_spiir *q);  /* samples processed */
uint64_t tr_spiir_nonfinite(const tr_spiir *q); /* non-finite input samples zeroed */
tr_backend tr_spiir_backend(const tr_spiir *q);
tr_variant tr_spiir_variant(const tr_spiir *q);
const char *tr_spiir_last_error(const tr_spiir *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_H */
