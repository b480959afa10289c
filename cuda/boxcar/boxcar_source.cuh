/*
 * Where the boxcar kernels read a call's samples: the device history of the
 * stream and the call's new block, with positions outside the data reading 0
 * and non-finite new samples replaced by the channel's fill value.
 */
#ifndef TRANSIENT_CUDA_BOXCAR_SOURCE_CUH
#define TRANSIENT_CUDA_BOXCAR_SOURCE_CUH

#include "boxcar/boxcar_target.cuh"

#include <cstdint>

namespace boxcar_cuda
{

__host__ __device__ inline int64_t floor_div(int64_t a, int64_t b)
{
    const int64_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

__device__ __forceinline__ bool finite_f(float v)
{
    return (v - v) == 0.0f;
}

/* Where a call's samples come from: positions [hist_start, pos) in the
 * history (channel c at hist[c * H + g - hist_start]), [pos, end) in the new
 * block (x[c * ldx + g - pos]); 0 outside [0, end). */
struct source {
    const float *hist;
    int64_t hist_start;
    int64_t H;
    const float *x;
    int64_t ldx;
    int64_t pos;
    int64_t end;
    const float *fill; /* NULL: no cleaning of new samples */
    int vec;           /* 16-byte loads of aligned groups of 4 allowed (FAST) */
};

__device__ __forceinline__ float load_sample(const source &s, int c, int64_t g, bool &bad)
{
    bad = false;
    if (g < 0 || g >= s.end) return 0.0f;
    if (g < s.pos) return s.hist[(int64_t)c * s.H + (g - s.hist_start)];
    float v = s.x[(int64_t)c * s.ldx + (g - s.pos)];
    if (s.fill && !finite_f(v)) {
        bad = true;
        v = s.fill[c];
    }
    return v;
}

} // namespace boxcar_cuda

#endif /* TRANSIENT_CUDA_BOXCAR_SOURCE_CUH */
