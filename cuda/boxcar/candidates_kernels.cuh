/*
 * Kernels of the CUDA candidates (candidates_cuda.h): the peaks of a call
 * (values at or above the threshold) selected in stream order, for the
 * host's friends-of-friends clustering.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * Selection: a stable compaction in three launches (count per tile, one
 * block scanning the tile counts, write), written with the block sums and
 * warp votes that the host emulation provides (boxcar_target.cuh), so that
 * it runs there as it is; it reads either layout and the width in the same
 * pass, which a library select over a flat array would not. The write gives
 * each warp a contiguous run of the tile and orders its peaks by warp votes
 * (no block scan per row of the tile).
 *
 * Runs (one channel): one thread per chunk of TR_CUDA_CAND_RUN_CHUNK peaks
 * merges them serially as the host would (candidates.c); a run never spans
 * two chunks, which only cuts a chain the host joins again.
 */
#ifndef TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH
#define TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH

#include "boxcar/boxcar_target.cuh"
#include "boxcar/candidates_cuda.h"

#include <cstdint>

namespace cand_cuda
{

/* ---- selection ---------------------------------------------------------- */

/* Stream-order index j = k * nchan + c of a piece of the call (positions
 * k0 .. k0 + n - 1) to its value index: time-major, or channel-major with
 * ld positions per channel. */
struct view {
    const float *snr;
    const int32_t *width; /* NULL: 1 */
    const uint8_t *skip;  /* NULL, or nchan flags: 1 = never a peak */
    uint32_t nchan;
    int channel_major;
    int64_t ld, k0, n;
    float thr;
    __device__ __forceinline__ int64_t index(int64_t j) const
    {
        if (!channel_major) return k0 * (int64_t)nchan + j; /* (k0 + k) nchan + c */
        const int64_t k = k0 + j / nchan, c = j % nchan;
        return c * ld + k;
    }
    __device__ __forceinline__ bool is_peak(int64_t j) const
    {
        if (j >= n * (int64_t)nchan) return false;
        if (skip && skip[j % nchan]) return false;
        return snr[index(j)] >= thr; /* false for NaN */
    }
};

template <int NT, int IT>
__global__ void __launch_bounds__(NT) select_count(view v, uint32_t *tile_count)
{
    __shared__ typename block_ops<NT>::storage tmp;
    const int64_t j0 = (int64_t)blockIdx.x * NT * IT;
    unsigned c = 0;
    for (int r = 0; r < IT; r++)
        c += v.is_peak(j0 + r * NT + threadIdx.x) ? 1u : 0u;
    c = block_ops<NT>::usum(tmp, c);
    if (threadIdx.x == 0) tile_count[blockIdx.x] = c;
}

/* One block: tile_off = exclusive prefix sums of tile_count, *total = sum. */
template <int NT>
__global__ void __launch_bounds__(NT)
    select_scan(const uint32_t *tile_count, uint32_t ntiles, uint32_t *tile_off,
                uint32_t *total)
{
    __shared__ typename block_ops<NT>::storage tmp;
    __shared__ uint32_t base;
    if (threadIdx.x == 0) base = 0;
    __syncthreads();
    for (uint32_t t0 = 0; t0 < ntiles; t0 += NT) {
        const uint32_t t = t0 + threadIdx.x;
        const uint32_t c = t < ntiles ? tile_count[t] : 0u;
        /* exact in float: a chunk holds at most NT tiles of at most 2^16 */
        const uint32_t p = (uint32_t)block_ops<NT>::exclusive_sum(tmp, (float)c);
        if (t < ntiles) tile_off[t] = base + p;
        __syncthreads();
        if (threadIdx.x == NT - 1) base += p + c;
        __syncthreads();
    }
    if (threadIdx.x == 0) *total = base;
}

/* The peaks of each tile at tile_off[tile] on, in stream order; writes only
 * below cap (the host sees total > cap, grows the buffer and writes again).
 * Warp w of the tile takes the 32 IT values from w 32 IT on, row r (32
 * values) after row r - 1: a first pass counts the warp's peaks, the warps
 * before it give its offset, a second pass writes each row's peaks in order
 * of their lanes. */
template <int NT, int IT>
__global__ void __launch_bounds__(NT)
    select_write(view v, const uint32_t *tile_off, tr_cuda_cand_peak *pk, uint32_t cap)
{
    constexpr int NW = NT / 32;
    __shared__ uint32_t wcount[NW];
    const unsigned lane = threadIdx.x & 31u, wid = threadIdx.x >> 5;
    const int64_t seg = (int64_t)blockIdx.x * NT * IT + (int64_t)wid * 32 * IT;
    unsigned cnt = 0;
    for (int r = 0; r < IT; r++)
        cnt += (unsigned)__popc(
            __ballot_sync(0xffffffffu, v.is_peak(seg + (int64_t)r * 32 + lane)));
    if (lane == 0) wcount[wid] = cnt;
    __syncthreads();
    uint32_t o = tile_off[blockIdx.x];
    for (unsigned w = 0; w < wid; w++)
        o += wcount[w];
    const unsigned below = (1u << lane) - 1u; /* the lanes before this one */
    for (int r = 0; r < IT; r++) {
        const int64_t j = seg + (int64_t)r * 32 + lane;
        const bool f = v.is_peak(j);
        const unsigned m = __ballot_sync(0xffffffffu, f);
        const uint32_t at = o + (uint32_t)__popc(m & below);
        if (f && at < cap) {
            const int64_t i = v.index(j);
            const int32_t w = v.width ? v.width[i] : 1;
            pk[at] = tr_cuda_cand_peak{(uint32_t)(j / v.nchan), (uint32_t)(j % v.nchan),
                                       w < 1 ? 1 : w, v.snr[i]};
        }
        o += (uint32_t)__popc(m);
    }
}

/* ---- runs of one channel's peaks ----------------------------------------- */

/* The runs of peaks i0 .. i1 - 1 (i0 < i1), into out when given; returns
 * their count. A peak joins the run before it when it starts at most lt
 * after the run's largest end (the host's merge, candidates.c). */
__device__ __forceinline__ uint32_t chunk_runs(const tr_cuda_cand_peak *pk, uint32_t i0,
                                               uint32_t i1, uint32_t lt,
                                               tr_cuda_cand_run *out)
{
    uint32_t nr = 0;
    tr_cuda_cand_run r{};
    for (uint32_t i = i0; i < i1; i++) {
        const tr_cuda_cand_peak p = pk[i];
        const uint32_t w = (uint32_t)p.w, e = p.k + w;
        if (i > i0 && (uint64_t)p.k <= (uint64_t)r.end + lt) {
            if (p.s > r.sb) { /* the first of equals stays the best */
                r.sb = p.s;
                r.kb = p.k;
                r.wb = p.w;
            }
            if (e > r.end) r.end = e;
            if (w < r.wlo) r.wlo = w;
            if (w > r.whi) r.whi = w;
            r.k1 = p.k;
            r.members++;
            continue;
        }
        if (i > i0) {
            if (out) out[nr] = r;
            nr++;
        }
        r = tr_cuda_cand_run{p.k, p.k, p.k, p.w, p.s, e, 1u, w, w, i};
    }
    if (out) out[nr] = r;
    return nr + 1;
}

/* Run counts of chunks of P peaks (thread = chunk) of the *total peaks
 * written (at most cap). */
template <int NT, int P>
__global__ void __launch_bounds__(NT)
    runs_count(const tr_cuda_cand_peak *pk, const uint32_t *total, uint32_t cap,
               uint32_t lt, uint32_t nchunks, uint32_t *run_count)
{
    const uint32_t ch = blockIdx.x * NT + threadIdx.x;
    if (ch >= nchunks) return;
    const uint32_t tot = *total < cap ? *total : cap, i0 = ch * (uint32_t)P;
    const uint32_t i1 = tot - i0 < (uint32_t)P ? tot : i0 + (uint32_t)P;
    run_count[ch] = i0 < tot ? chunk_runs(pk, i0, i1, lt, nullptr) : 0u;
}

/* The runs of each chunk at run_off[chunk] on. */
template <int NT, int P>
__global__ void __launch_bounds__(NT)
    runs_write(const tr_cuda_cand_peak *pk, const uint32_t *total, uint32_t cap,
               uint32_t lt, uint32_t nchunks, const uint32_t *run_off,
               tr_cuda_cand_run *runs)
{
    const uint32_t ch = blockIdx.x * NT + threadIdx.x;
    if (ch >= nchunks) return;
    const uint32_t tot = *total < cap ? *total : cap, i0 = ch * (uint32_t)P;
    if (i0 >= tot) return;
    const uint32_t i1 = tot - i0 < (uint32_t)P ? tot : i0 + (uint32_t)P;
    chunk_runs(pk, i0, i1, lt, runs + run_off[ch]);
}

} // namespace cand_cuda

#endif /* TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH */
