/* Internals of tr_dedisp shared by the object and its variants (not installed). */
#ifndef TRANSIENT_DEDISP_INTERNAL_H
#define TRANSIENT_DEDISP_INTERNAL_H

#include <transient/dedisp.h>

#include "common/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plan config checks (messages start with "dedisp: "). */
tr_status tr_dedisp_plan_validate(const tr_dedisp_plan_config *cfg, tr_error *err);

/* Highest channel centre frequency in MHz. */
double tr_dedisp_fref(const tr_dedisp_plan_config *cfg);

/*
 * Delay table out[d * nused + j] = delay of channel chans[j] for trial d
 * (malloc'ed) and the latency (largest delay of any channel, masked ones
 * included).
 */
tr_status tr_dedisp_build_delays(const tr_dedisp_plan_config *cfg, const double *dms,
                                 uint32_t ndm, const uint32_t *chans, uint32_t nused,
                                 uint32_t **out, uint32_t *max_delay, tr_error *err);

/*
 * What a CPU variant sums: the history buffer is channel-major, row j (used
 * channel j) holding `cap` spectra; output k of the block reads
 * buf[j * cap + k + delays[d * nused + j]].
 */
typedef struct {
    const float *buf;
    size_t cap; /* floats per row */
    uint32_t nused, ndm;
    const uint32_t *delays; /* ndm x nused */
    size_t n;               /* outputs of the block */
    int mean;               /* divide by nused */
    float *y;               /* n x ndm, sample-major */
    tr_pool *pool;          /* FAST: threads (NULL = caller only) */
} tr_dedisp_sum_args;

/* The literal sum (dedisp_ref.c). */
void tr_dedisp_sum_ref(const tr_dedisp_sum_args *a);

/* Cache-blocked SIMD sum (dedisp_cpu.c), same bits as the reference. */
void tr_dedisp_sum_fast(const tr_dedisp_sum_args *a);

/* Name of the SIMD kernel the fast sum uses, and a forced choice (tests). */
const char *tr_dedisp_cpu_kernel(void);
int tr_dedisp_cpu_select(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_DEDISP_INTERNAL_H */
