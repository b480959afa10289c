/*
 * CUDA side of the device queries of common.h. Every CUDA call is checked;
 * nothing is printed: failures come back as tr_status codes, with the reason
 * in `why`.
 */
#include <transient/common.h>

#include "common/cuda_status.h"

#include <cuda_runtime.h>

#include <cstdio>

/* ---- device queries ----------------------------------------------------- */

extern "C" int tr_cuda_device_count(char *why, size_t why_len)
{
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        /* No driver, no device or a driver too old: not an error of the caller. */
        if (why && why_len)
            snprintf(why, why_len, "cudaGetDeviceCount: %s", cudaGetErrorString(e));
        (void)cudaGetLastError(); /* leave no error behind for later calls */
        return 0;
    }
    if (why && why_len) {
        if (n == 0)
            snprintf(why, why_len, "no CUDA device found");
        else
            why[0] = '\0';
    }
    return n;
}

extern "C" tr_status tr_cuda_device_name(int device, char *name, size_t name_len)
{
    if (name == NULL || name_len == 0) return TR_ERR_INVALID;
    name[0] = '\0';
    cudaDeviceProp p;
    const cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return tr_cuda_status(e);
    }
    snprintf(name, name_len, "%s", p.name);
    return TR_OK;
}
