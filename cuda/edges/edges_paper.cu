/*
 * Edge localizer, the paper's multi-pass GPU design (benchmark baseline).
 *
 * The passes live in edges_paper.cuh, written over an execution backend; this
 * file supplies the CUDA one: element-wise passes as one-thread-per-element
 * kernels, the two scans with cub::DeviceScan::InclusiveScan and the
 * compaction with cub::DeviceSelect::Flagged, all stream-ordered on the
 * caller's stream, every intermediate array in global memory (as in the paper,
 * which used Thrust's scans). No call synchronizes.
 */
#include "edges/edges_cuda.h"
#include "edges/edges_paper.cuh"

#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>

static_assert(tr_paper::ERR_INVALID == (int)cudaErrorInvalidValue,
              "tr_paper::ERR_INVALID must be cudaErrorInvalidValue");

namespace
{

constexpr int kBlock = 256;

template <class F>
__global__ void __launch_bounds__(kBlock) for_each_kernel(int64_t m, F f)
{
    const int64_t i = (int64_t)blockIdx.x * kBlock + threadIdx.x;
    if (i < m) f(i);
}

struct cuda_exec {
    cudaStream_t stream;

    template <class F> int for_each(int64_t m, F f)
    {
        if (m <= 0) return cudaSuccess;
        /* m <= 2^31, so the grid stays far below its 2^31 - 1 block limit. */
        const unsigned blocks = (unsigned)((m + kBlock - 1) / kBlock);
        for_each_kernel<<<blocks, kBlock, 0, stream>>>(m, f);
        return (int)cudaGetLastError();
    }

    template <class In, class Out, class Op>
    int scan(void *tmp, size_t &bytes, In in, Out out, int64_t m, Op op)
    {
        /* 32-bit offsets: m <= 2^31 fits an unsigned int. */
        return (int)cub::DeviceScan::InclusiveScan(tmp, bytes, in, out, op, (unsigned)m,
                                                   stream);
    }

    template <class In, class Flags, class Out>
    int select_flagged(void *tmp, size_t &bytes, In in, Flags flags, Out out,
                       int64_t *nsel, int64_t m)
    {
        return (int)cub::DeviceSelect::Flagged(tmp, bytes, in, flags, out, nsel, m,
                                               stream);
    }
};

} // namespace

extern "C" int tr_cuda_edges_paper_launch(const float *d_x, int64_t n, tr_edges_lv lv,
                                          const tr_edges_carry *d_cin,
                                          tr_edges_carry *d_cout, tr_edge *d_out,
                                          int64_t cap, tr_edge *d_stop,
                                          unsigned long long *d_count, void *d_temp,
                                          size_t *temp_bytes, void *stream)
{
    cuda_exec ex = {(cudaStream_t)stream};
    return tr_paper::run(ex, d_x, n, lv, d_cin, d_cout, d_out, cap, d_stop, d_count,
                         d_temp, temp_bytes);
}
