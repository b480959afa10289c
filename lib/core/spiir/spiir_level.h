/*
 * One rate of a SPIIR filter bank on the CPU: a delay line of cleaned samples
 * and the filter states of one variant (spiir_ref.c or spiir_cpu.c, see
 * spiir_variants.h). The single-rate object (spiir.c) runs its bank in one
 * level; the optimized multirate variant (spiir_mr.c) runs each level's
 * rescaled filters in one, at that level's rate.
 */
#ifndef TRANSIENT_SPIIR_LEVEL_H
#define TRANSIENT_SPIIR_LEVEL_H

#include "spiir/spiir_internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tr_spiir_level tr_spiir_level;

/* The bank must outlive the level. variant: TR_VARIANT_REFERENCE for the
 * reference kernels, any other for the optimized ones. NULL with err when out
 * of memory. */
tr_spiir_level *tr_spiir_level_create(const tr_spiir_bank *bank, int complex_input,
                                      tr_variant variant, tr_error *err);
void tr_spiir_level_destroy(tr_spiir_level *v);

/* Zero the filter states and the history. */
void tr_spiir_level_reset(tr_spiir_level *v);

/* n samples (interleaved when complex, not yet cleaned) into snr (layout of
 * tr_spiir_process); adds the count of non-finite values to *nonfinite. The
 * result does not depend on how the stream is cut into calls. */
void tr_spiir_level_run(tr_spiir_level *v, const float *x, size_t n, float *snr,
                        uint64_t *nonfinite);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_LEVEL_H */
