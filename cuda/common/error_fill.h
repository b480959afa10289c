/*
 * Filling a tr_error: the status helpers that the core and the CUDA layer both
 * use. Declared here, at the bottom of the internal headers, so that the CUDA
 * layer reports failures without including lib/core (the core reaches this
 * header through lib/core/common/core_util.h); defined in
 * lib/core/common/common.c, which every libtransient compiles. Not installed.
 */
#ifndef TRANSIENT_CUDA_ERROR_FILL_H
#define TRANSIENT_CUDA_ERROR_FILL_H

#include <transient/common.h>

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

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_ERROR_FILL_H */
