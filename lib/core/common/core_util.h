/* Small helpers shared by the core's source files (not installed). */
#ifndef TRANSIENT_CORE_UTIL_H
#define TRANSIENT_CORE_UTIL_H

#include <transient/common.h>

/* tr_fail, tr_clear: shared with the CUDA layer, so declared below it. */
#include "common/error_fill.h"

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a detector should run, decided from its configuration. */
typedef struct {
    int try_cuda;  /* a usable device exists and CUDA is allowed: create a context */
    int need_cuda; /* CUDA was asked for (explicitly, or by the paper variant) */
} tr_placement;

/*
 * Validate the execution fields every detector config has (messages start with
 * `who`) and decide where to run: CUDA when asked for or, under AUTO with the
 * fast variant, when a device is usable. Fails with TR_ERR_NO_DEVICE when CUDA
 * is needed but no device is usable, TR_ERR_INVALID for bad values. A caller
 * whose CUDA context then fails to start falls back to the CPU unless need_cuda.
 */
tr_status tr_place(const char *who, tr_backend backend, tr_variant variant, int device,
                   size_t batch, tr_placement *p, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CORE_UTIL_H */
