/*
 * Internal contract between the SPIIR object (spiir.c) and its CPU variants
 * (spiir_ref.c, spiir_cpu.c).
 *
 * The object owns the delay line: the cleaned input samples (non-finite ones
 * already zero) as separate real and imaginary arrays, with at least max_delay
 * samples of history (zeros before the stream starts) in front of the new ones.
 * A variant call filters n new samples that start at line index pos, so that
 * filter l of any template reads x[k - d_l] = xr[pos + k - d_l] (and xi[...]);
 * pos >= max_delay is guaranteed. xi is NULL for real input. The variant keeps
 * only the filter states, so the result does not depend on how the object
 * splits the stream into calls.
 */
#ifndef TRANSIENT_SPIIR_VARIANTS_H
#define TRANSIENT_SPIIR_VARIANTS_H

#include "spiir/spiir_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Reference variant: complex double, reads like equations 7-8 of the paper. */
typedef struct tr_spiir_ref tr_spiir_ref;
tr_spiir_ref *tr_spiir_ref_create(const tr_spiir_bank *bank); /* NULL: no memory */
void tr_spiir_ref_destroy(tr_spiir_ref *r);
void tr_spiir_ref_reset(tr_spiir_ref *r);
void tr_spiir_ref_run(tr_spiir_ref *r, const float *xr, const float *xi, size_t pos,
                      size_t n, float *snr);

/* Optimized variant: float32, filters in vector lanes, deterministic. */
typedef struct tr_spiir_cpu tr_spiir_cpu;
tr_spiir_cpu *tr_spiir_cpu_create(const tr_spiir_bank *bank); /* NULL: no memory */
void tr_spiir_cpu_destroy(tr_spiir_cpu *c);
void tr_spiir_cpu_reset(tr_spiir_cpu *c);
void tr_spiir_cpu_run(tr_spiir_cpu *c, const float *xr, const float *xi, size_t pos,
                      size_t n, float *snr);

/* Choose the optimized variant's kernel: "generic", "avx2" or NULL for the
 * best this CPU supports. Returns 0 if unavailable. All kernels give the same
 * bits. For tests and benchmarks. */
int tr_spiir_cpu_select(const char *kernel);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_VARIANTS_H */
