/*
 * Building a boxcar plan (<transient/boxcar.h> describes what a plan
 * means). Its fields (struct tr_boxcar_plan) are defined with the CUDA
 * launcher interface that reads them (cuda/boxcar/boxcar_plan_def.h); the
 * search object, its CPU variants and the CUDA backend share them.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#ifndef TRANSIENT_BOXCAR_PLAN_H
#define TRANSIENT_BOXCAR_PLAN_H

#include <transient/boxcar.h>

#include "boxcar/boxcar_plan_def.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Validate the algorithm fields of cfg and fill *p (messages "boxcar: ..."). */
tr_status tr_boxcar_plan_build(const tr_boxcar_config *cfg, tr_boxcar_plan *p,
                               tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_PLAN_H */
