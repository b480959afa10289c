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

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CORE_UTIL_H */
