/* Small helpers shared by the core's source files (not installed). */
#ifndef TRANSIENT_CORE_UTIL_H
#define TRANSIENT_CORE_UTIL_H

#include <transient/common.h>

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fill err (if not NULL) with code and a printf-style message; return code. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
tr_status
tr_fail(tr_error *err, tr_status code, const char *fmt, ...);

/* Set err (if not NULL) to success. */
void tr_clear(tr_error *err);

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
