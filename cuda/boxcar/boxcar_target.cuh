/*
 * What the boxcar CUDA code is compiled for: CUDA (CUB block-wide sums, the
 * <<<>>> launch, extern dynamic shared memory) or, with TR_BOXCAR_HOST_EMU,
 * the host emulation of boxcar_emu.h
 * (tests/core/boxcar/test_boxcar_cuda_host.cpp), which provides the same
 * names. The kernels use only block_ops, TR_DYN_SHARED and TR_LAUNCH for
 * these, so they compile unchanged for both.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_TARGET_CUH
#define TRANSIENT_CUDA_BOXCAR_TARGET_CUH

#ifdef TR_BOXCAR_HOST_EMU
#include "boxcar/boxcar_emu.h"
#else
#include "common/cuda_check.h"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

/* Component-wise sum of double3, for the fused reductions. */
struct d3_add {
    __device__ __forceinline__ double3 operator()(const double3 &a,
                                                  const double3 &b) const
    {
        return make_double3(a.x + b.x, a.y + b.y, a.z + b.z);
    }
};

/* Block-wide sums through CUB (results valid in thread 0 for the sums). */
template <int NT> struct block_ops {
    using scan_t = cub::BlockScan<float, NT>;
    using reduce_t = cub::BlockReduce<float, NT>;
    using ureduce_t = cub::BlockReduce<unsigned, NT>;
    using dreduce_t = cub::BlockReduce<double, NT>;
    using d3reduce_t = cub::BlockReduce<double3, NT>;
    union storage {
        typename scan_t::TempStorage scan;
        typename reduce_t::TempStorage reduce;
        typename ureduce_t::TempStorage ureduce;
        typename dreduce_t::TempStorage dreduce;
        typename d3reduce_t::TempStorage d3reduce;
    };
    static __device__ __forceinline__ float sum(storage &s, float v)
    {
        return reduce_t(s.reduce).Sum(v);
    }
    static __device__ __forceinline__ unsigned usum(storage &s, unsigned v)
    {
        return ureduce_t(s.ureduce).Sum(v);
    }
    static __device__ __forceinline__ double dsum(storage &s, double v)
    {
        return dreduce_t(s.dreduce).Sum(v);
    }
    /* Three sums in one reduction (one pass of barriers instead of three). */
    static __device__ __forceinline__ double3 d3sum(storage &s, double3 v)
    {
        return d3reduce_t(s.d3reduce).Reduce(v, d3_add());
    }
    static __device__ __forceinline__ float exclusive_sum(storage &s, float v)
    {
        float p;
        scan_t(s.scan).ExclusiveSum(v, p);
        return p;
    }
};

#define TR_DYN_SHARED(type, name) extern __shared__ type name[]
#define TR_LAUNCH(kern, grid, block, smem, stream, ...)                                  \
    kern<<<(grid), (block), (smem), (stream)>>>(__VA_ARGS__)
#endif

/* A checked CUDA runtime call of the boxcar contexts: on failure `err` gets
 * "<who>: <what>: <CUDA's text>" (TR_ERR_NOMEM for allocations, else
 * TR_ERR_CUDA) and the calling function returns that status. */
#define TR_BOXCAR_TRY(call, err, who, what)                                              \
    do {                                                                                 \
        const cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess)                                                           \
            return tr_fail((err),                                                        \
                           e_ == cudaErrorMemoryAllocation ? TR_ERR_NOMEM : TR_ERR_CUDA, \
                           "%s: %s: %s", (who), (what), cudaGetErrorString(e_));         \
    } while (0)

#endif /* TRANSIENT_CUDA_BOXCAR_TARGET_CUH */
