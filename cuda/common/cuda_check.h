/* Checked CUDA runtime calls for the launchers and contexts in cuda/. */
#ifndef TRANSIENT_CUDA_CHECK_H
#define TRANSIENT_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "common/core_util.h"

/* Run a CUDA call; on failure fill err with what failed and why, then goto label. */
#define TR_CUDA_TRY(call, err, what, label)                                              \
    do {                                                                                 \
        cudaError_t tr_e_ = (call);                                                      \
        if (tr_e_ != cudaSuccess) {                                                      \
            tr_fail((err), TR_ERR_CUDA, "%s: %s (%s)", (what),                           \
                    cudaGetErrorString(tr_e_), cudaGetErrorName(tr_e_));                 \
            goto label;                                                                  \
        }                                                                                \
    } while (0)

#endif /* TRANSIENT_CUDA_CHECK_H */
