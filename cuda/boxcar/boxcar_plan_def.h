/*
 * The fields of a boxcar plan (<transient/boxcar.h> says what a plan
 * means): the plain struct behind the public tr_boxcar_plan. Owned by the
 * CUDA launcher interface (boxcar_cuda.h), which reads plans as they are; the
 * core builds them (lib/core/boxcar/boxcar_plan.h) and its CPU variants read
 * them the same way.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#ifndef TRANSIENT_CUDA_BOXCAR_PLAN_DEF_H
#define TRANSIENT_CUDA_BOXCAR_PLAN_DEF_H

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

/* Largest width of stage s. */
static inline uint32_t tr_boxcar_stage_last(const tr_boxcar_stage *s)
{
    return s->width_first + (s->nwidths - 1) * s->width_step;
}

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_BOXCAR_PLAN_DEF_H */
