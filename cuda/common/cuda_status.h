/* The tr_status that a CUDA runtime error maps to, for every CUDA caller. */
#ifndef TRANSIENT_CUDA_STATUS_H
#define TRANSIENT_CUDA_STATUS_H

#include <transient/common.h>

#include <cuda_runtime.h>

static inline tr_status tr_cuda_status(cudaError_t e)
{
    switch (e) {
    case cudaSuccess:
        return TR_OK;
    case cudaErrorMemoryAllocation:
        return TR_ERR_NOMEM;
    case cudaErrorInvalidDevice:
    case cudaErrorInvalidValue:
        return TR_ERR_INVALID;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
        return TR_ERR_NO_DEVICE;
    default:
        return TR_ERR_CUDA;
    }
}

#endif /* TRANSIENT_CUDA_STATUS_H */
