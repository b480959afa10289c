/* Status strings, names and the non-CUDA fallbacks of the device queries. */
#include "core_util.h"

#include <stdio.h>
#include <string.h>

const char *tr_strerror(tr_status code)
{
    switch (code) {
    case TR_OK:
        return "success";
    case TR_ERR_INVALID:
        return "invalid argument";
    case TR_ERR_NOMEM:
        return "out of memory";
    case TR_ERR_CUDA:
        return "CUDA error";
    case TR_ERR_NO_DEVICE:
        return "no usable CUDA device";
    case TR_ERR_UNSUPPORTED:
        return "not supported";
    case TR_ERR_STATE:
        return "invalid state";
    case TR_ERR_IO:
        return "input/output error";
    }
    return "unknown status";
}

const char *tr_backend_name(tr_backend b)
{
    switch (b) {
    case TR_BACKEND_AUTO:
        return "auto";
    case TR_BACKEND_CPU:
        return "cpu";
    case TR_BACKEND_CUDA:
        return "cuda";
    }
    return "unknown";
}

const char *tr_variant_name(tr_variant v)
{
    switch (v) {
    case TR_VARIANT_FAST:
        return "fast";
    case TR_VARIANT_REFERENCE:
        return "reference";
    case TR_VARIANT_PAPER:
        return "paper";
    }
    return "unknown";
}

const char *tr_version(void)
{
#define TR_STR2(x) #x
#define TR_STR(x)  TR_STR2(x)
    return TR_STR(TR_VERSION_MAJOR) "." TR_STR(TR_VERSION_MINOR) "." TR_STR(
        TR_VERSION_PATCH);
}

tr_status tr_fail(tr_error *err, tr_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

void tr_clear(tr_error *err)
{
    if (err) {
        err->code = TR_OK;
        err->message[0] = '\0';
    }
}

#ifdef TR_HAVE_CUDA
int tr_cuda_compiled(void)
{
    return 1;
}
#else
int tr_cuda_compiled(void)
{
    return 0;
}

int tr_cuda_device_count(char *why, size_t why_len)
{
    if (why && why_len) snprintf(why, why_len, "libtransient was built without CUDA");
    return 0;
}

tr_status tr_cuda_device_name(int device, char *name, size_t name_len)
{
    (void)device;
    if (name && name_len) name[0] = '\0';
    return TR_ERR_NO_DEVICE;
}
#endif
