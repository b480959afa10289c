/* Status strings, names and the non-CUDA fallbacks of the device queries. */
#include "common/core_util.h"

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

tr_status tr_place(const char *who, tr_backend backend, tr_variant variant, int device,
                   size_t batch, tr_placement *p, tr_error *err)
{
    p->try_cuda = p->need_cuda = 0;
    if (backend != TR_BACKEND_AUTO && backend != TR_BACKEND_CPU &&
        backend != TR_BACKEND_CUDA)
        return tr_fail(err, TR_ERR_INVALID, "%s: unknown backend %d", who, (int)backend);
    if (variant != TR_VARIANT_FAST && variant != TR_VARIANT_REFERENCE &&
        variant != TR_VARIANT_PAPER)
        return tr_fail(err, TR_ERR_INVALID, "%s: unknown variant %d", who, (int)variant);
    if (variant == TR_VARIANT_REFERENCE && backend == TR_BACKEND_CUDA)
        return tr_fail(err, TR_ERR_INVALID, "%s: the reference variant runs on the CPU",
                       who);
    if (variant == TR_VARIANT_PAPER && backend == TR_BACKEND_CPU)
        return tr_fail(err, TR_ERR_INVALID, "%s: the paper variant runs on CUDA only",
                       who);
    if (device < 0)
        return tr_fail(err, TR_ERR_INVALID, "%s: device must be >= 0, got %d", who,
                       device);
    if (batch == 0 || batch > ((size_t)1 << 30))
        return tr_fail(err, TR_ERR_INVALID, "%s: batch must be in [1, 2^30], got %zu",
                       who, batch);
    p->need_cuda = backend == TR_BACKEND_CUDA || variant == TR_VARIANT_PAPER;
    if (!p->need_cuda && !(backend == TR_BACKEND_AUTO && variant == TR_VARIANT_FAST))
        return TR_OK; /* the CPU by request */
    char why[160];
    const int count = tr_cuda_device_count(why, sizeof why);
    if (count > 0 && device >= count) {
        if (p->need_cuda)
            return tr_fail(err, TR_ERR_INVALID,
                           "%s: CUDA device %d requested, %d present", who, device,
                           count);
    } else if (count > 0) {
        p->try_cuda = 1;
    } else if (p->need_cuda) {
        return tr_fail(err, TR_ERR_NO_DEVICE, "%s: CUDA backend requested but %s", who,
                       why);
    }
    return TR_OK;
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
