/*
 * Internal layout of a boxcar plan (include/transient/boxcar.h describes what
 * a plan means). Shared by the search object, its CPU variants and the CUDA
 * glue.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#ifndef TRANSIENT_BOXCAR_PLAN_H
#define TRANSIENT_BOXCAR_PLAN_H

#include <transient/boxcar.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tr_boxcar_plan {
    tr_boxcar_algorithm algorithm;
    uint32_t depth;   /* IGRID d (0 otherwise) */
    uint32_t layers;  /* IGRID P (0 otherwise) */
    uint32_t nstages; /* >= 1 */
    uint32_t lend;    /* L_end */
    tr_boxcar_stage stages[TR_BOXCAR_MAX_STAGES];
};

/* Validate the algorithm fields of cfg and fill *p (messages "boxcar: ..."). */
tr_status tr_boxcar_plan_build(const tr_boxcar_config *cfg, tr_boxcar_plan *p,
                               tr_error *err);

/* Largest width of stage s. */
static inline uint32_t tr_boxcar_stage_last(const tr_boxcar_stage *s)
{
    return s->width_first + (s->nwidths - 1) * s->width_step;
}

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_PLAN_H */
