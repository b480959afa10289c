/* Checked CUDA runtime calls for the launchers and contexts in cuda/. */
#ifndef TRANSIENT_CUDA_CHECK_H
#define TRANSIENT_CUDA_CHECK_H

#include <cuda_runtime.h>

#include "common/error_fill.h"

/* Fill err with the failed CUDA call `what`, its error text and name. */
static inline tr_status tr_cuda_fail(tr_error *err, cudaError_t e, const char *what)
{
    return tr_fail(err, TR_ERR_CUDA, "%s: %s (%s)", what, cudaGetErrorString(e),
                   cudaGetErrorName(e));
}

/* Before a library stream reads a buffer that the caller handed over by
 * device pointer: wait for the caller's work on the legacy default stream. A
 * cudaMemcpy from pageable host memory returns once its data is staged,
 * before the DMA into the device buffer ends, and the library's streams are
 * non-blocking, so they would not wait for it. */
static inline cudaError_t tr_cuda_caller_ready(void)
{
    return cudaStreamSynchronize(cudaStreamLegacy);
}

/* Run a CUDA call; on failure fill err with what failed and why, and return
 * TR_ERR_CUDA from the calling function (resources are released by their
 * owners, cuda_raii.cuh). */
#define TR_CUDA_CHECK(call, err, what)                                                   \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess) return tr_cuda_fail((err), tr_e_, (what));             \
    } while (0)

/* Run a CUDA call; on failure fill err with what failed and why, then goto label. */
#define TR_CUDA_TRY(call, err, what, label)                                              \
    do {                                                                                 \
        cudaError_t tr_e_ = (call);                                                      \
        if (tr_e_ != cudaSuccess) {                                                      \
            tr_cuda_fail((err), tr_e_, (what));                                          \
            goto label;                                                                  \
        }                                                                                \
    } while (0)

#endif /* TRANSIENT_CUDA_CHECK_H */
