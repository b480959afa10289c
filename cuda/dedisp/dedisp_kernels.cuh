/*
 * Dedispersion kernels: unpacking and transposition of spectra into the
 * channel-major history, zero-DM subtraction, and the direct dedispersion
 * sum (cuda/dedisp/dedisp_cuda.h says what they compute). With
 * TR_DEDISP_HOST_EMU they compile as C++ against a host emulation of CUDA
 * (tests/core/dedisp/test_dedisp_cuda_host.cpp).
 *
 * Paper: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012), section 3: the direct algorithm, a block per tile
 * of trials x samples. Here the history is channel-major, so that a warp's
 * reads of one (trial, channel) are 32 consecutive floats; the block's
 * trials, whose windows of a channel overlap, read them from one staged copy
 * in shared memory; each thread keeps TRIALS x ITEMS accumulators in
 * registers.
 */
#ifndef TRANSIENT_CUDA_DEDISP_KERNELS_CUH
#define TRANSIENT_CUDA_DEDISP_KERNELS_CUH

#ifndef TR_DEDISP_HOST_EMU
#include <cuda_runtime.h>
#endif

#include <cstddef>
#include <cstdint>

/* Sample e of a packed spectrum stream (first sample in the high bits). */
__device__ __forceinline__ float tr_dedisp_unpack(const unsigned char *raw, size_t e,
                                                  unsigned nbits)
{
    if (nbits == 8) return (float)raw[e];
    if (nbits == 16) return (float)((unsigned)raw[2 * e] | (unsigned)raw[2 * e + 1] << 8);
    if (nbits == 32) {
        const unsigned u = (unsigned)raw[4 * e] | (unsigned)raw[4 * e + 1] << 8 |
                           (unsigned)raw[4 * e + 2] << 16 |
                           (unsigned)raw[4 * e + 3] << 24;
        return __uint_as_float(u);
    }
    const size_t bit = e * nbits;
    const unsigned shift = 8u - nbits - (unsigned)(bit & 7u);
    return (float)((raw[bit >> 3] >> shift) & ((1u << nbits) - 1u));
}

/*
 * Transpose m spectra (float x or packed raw, time-major, nchan channels)
 * into hist rows: hist[j * cap + k] = spectrum k, channel chans[j]. A block
 * moves TILE x TILE through shared memory so that both sides are coalesced.
 */
template <int TILE, int ROWS>
__global__ void tr_dedisp_fill_kernel(const float *x, const unsigned char *raw,
                                      unsigned nbits, unsigned nchan,
                                      const uint32_t *chans, unsigned nused, size_t m,
                                      float *hist, size_t cap)
{
    __shared__ float tile[TILE][TILE + 1];
    const size_t k0 = (size_t)blockIdx.x * TILE;
    const unsigned j0 = blockIdx.y * TILE;
    const unsigned j = j0 + threadIdx.x;
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const size_t k = k0 + r;
        if (k < m && j < nused) {
            const size_t e = k * nchan + chans[j];
            tile[r][threadIdx.x] = x ? x[e] : tr_dedisp_unpack(raw, e, nbits);
        }
    }
    __syncthreads();
    const size_t k = k0 + threadIdx.x;
    for (int r = threadIdx.y; r < TILE; r += ROWS) {
        const unsigned jj = j0 + r;
        if (k < m && jj < nused) hist[(size_t)jj * cap + k] = tile[threadIdx.x][r];
    }
}

/*
 * Zero-DM: spectrum k's mean over the used channels, summed in channel order
 * (the CPU's order), subtracted from each. Thread k walks its column; a
 * warp's loads are consecutive spectra.
 */
__global__ void tr_dedisp_zero_dm_kernel(float *hist, size_t cap, unsigned nused,
                                         size_t m)
{
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= m) return;
    float s = 0.0f;
    for (unsigned j = 0; j < nused; ++j)
        s += hist[(size_t)j * cap + k];
    const float mean = s / (float)nused;
    for (unsigned j = 0; j < nused; ++j)
        hist[(size_t)j * cap + k] = hist[(size_t)j * cap + k] - mean;
}

/*
 * The sum: block (x: tile of TRIALS trials, y: tile of THREADS * ITEMS
 * outputs; neighbouring blocks share rows through L2); thread t owns outputs
 * k0 + t + i * THREADS. CHANS channels at a time: their delays for the
 * block's trials (dl is channel-major: dl[j * ndm + d]) and, where the
 * trials' delays of a channel span at most SPREAD samples, the channel's row
 * segment from the smallest delay on (TILE + the span floats), are staged in
 * shared memory, so that every trial reads its shifted window from there
 * (consecutive words: no bank conflicts, whatever the shift) instead of
 * misaligned global lines; a wider span reads global memory directly. The
 * channels are added in increasing order either way. The history's first
 * `filled` columns hold data (a staged read past them reads 0; only outputs
 * k >= m need them). Output k is written as 0 when pos0 + k < zero_below (the
 * positions before the stream: pos0 + k - L < 0), else the sum;
 * out[k * sk + d * sd].
 */
template <int THREADS, int ITEMS, int TRIALS, int CHANS, int SPREAD>
__global__ void __launch_bounds__(THREADS)
    tr_dedisp_sum_kernel(const float *__restrict__ hist, size_t cap, unsigned nused,
                         unsigned ndm, const uint32_t *__restrict__ dl, size_t m,
                         size_t filled, int mean, unsigned long long pos0,
                         unsigned long long zero_below, float *out, size_t sk, size_t sd)
{
    constexpr int TILE = THREADS * ITEMS, SPAN = TILE + SPREAD;
    __shared__ float rows[CHANS][SPAN];
    __shared__ uint32_t sdl[CHANS][TRIALS];
    __shared__ uint32_t base[CHANS];
    __shared__ uint32_t
        len[CHANS]; /* floats staged: TILE + the channel's span, 0 = direct */
    const size_t kb = (size_t)blockIdx.y * TILE; /* first output of the block */
    const unsigned d0 = blockIdx.x * TRIALS;
    const unsigned nd = ndm - d0 < (unsigned)TRIALS ? ndm - d0 : (unsigned)TRIALS;
    float acc[TRIALS][ITEMS];
#pragma unroll
    for (int d = 0; d < TRIALS; ++d)
#pragma unroll
        for (int i = 0; i < ITEMS; ++i)
            acc[d][i] = 0.0f;
    for (unsigned c0 = 0; c0 < nused; c0 += CHANS) {
        const unsigned nc = nused - c0 < (unsigned)CHANS ? nused - c0 : (unsigned)CHANS;
        __syncthreads(); /* the previous chunk's readers are done */
        for (unsigned e = threadIdx.x; e < (unsigned)CHANS * TRIALS; e += THREADS) {
            const unsigned c = e / TRIALS, d = e % TRIALS;
            /* trials past ndm repeat the first: they widen no span */
            sdl[c][d] = c < nc ? dl[(size_t)(c0 + c) * ndm + d0 + (d < nd ? d : 0)] : 0u;
        }
        __syncthreads();
        if (threadIdx.x < (unsigned)CHANS) {
            const unsigned c = threadIdx.x;
            uint32_t lo = sdl[c][0], hi = sdl[c][0];
            for (int d = 1; d < TRIALS; ++d) {
                lo = sdl[c][d] < lo ? sdl[c][d] : lo;
                hi = sdl[c][d] > hi ? sdl[c][d] : hi;
            }
            base[c] = lo;
            len[c] = c < nc && hi - lo <= (uint32_t)SPREAD ? TILE + (hi - lo) : 0u;
        }
        __syncthreads();
        for (unsigned c = 0; c < nc; ++c) {
            const size_t first = kb + base[c];
            const float *row = hist + (size_t)(c0 + c) * cap + first;
            for (unsigned e = threadIdx.x; e < len[c]; e += THREADS)
                rows[c][e] = first + e < filled ? row[e] : 0.0f;
        }
        __syncthreads();
        for (unsigned c = 0; c < nc; ++c) {
            if (len[c]) {
#pragma unroll
                for (int d = 0; d < TRIALS; ++d) {
                    const float *r = rows[c] + (sdl[c][d] - base[c]) + threadIdx.x;
#pragma unroll
                    for (int i = 0; i < ITEMS; ++i)
                        acc[d][i] += r[i * THREADS];
                }
            } else {
                const float *row = hist + (size_t)(c0 + c) * cap + kb + threadIdx.x;
#pragma unroll
                for (int d = 0; d < TRIALS; ++d) {
                    const float *r = row + sdl[c][d];
#pragma unroll
                    for (int i = 0; i < ITEMS; ++i)
                        if (kb + threadIdx.x + (size_t)i * THREADS < m)
                            acc[d][i] += __ldg(r + i * THREADS);
                }
            }
        }
    }
    const float n = (float)nused;
#pragma unroll
    for (int d = 0; d < TRIALS; ++d) {
        if ((unsigned)d >= nd) break;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            const size_t k = kb + threadIdx.x + (size_t)i * THREADS;
            if (k >= m) continue;
            const float v = mean ? acc[d][i] / n : acc[d][i];
            out[k * sk + (size_t)(d0 + d) * sd] = pos0 + k < zero_below ? 0.0f : v;
        }
    }
}

/*
 * Time scrunching, one level: the block means of the next factor,
 * dst[j * dcap + i] = (src[j * scap + 2i] + src[j * scap + 2i + 1]) * 0.5f
 * for i < cols, j < rows (the definition's tree in <transient/dedisp.h>; an
 * addition then an exact halving, so no contraction changes the bits). A
 * grid-stride loop over the rows x cols elements, consecutive i per warp.
 */
__global__ void tr_dedisp_scrunch_kernel(const float *src, size_t scap, float *dst,
                                         size_t dcap, size_t cols, unsigned rows)
{
    const size_t total = cols * rows;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t j = e / cols, i = e % cols;
        const float *r = src + j * scap + 2 * i;
        dst[j * dcap + i] = (r[0] + r[1]) * 0.5f;
    }
}

/*
 * A scrunched group's coarse outputs (coarse[(q - qa) * nd + d], block q of
 * factor s) to the full-rate positions of their blocks: output k (absolute
 * position p0 + k, 0 when negative) of trial d is out[k * sk + d * sd]. A
 * grid-stride loop over the m x nd outputs.
 */
__global__ void tr_dedisp_expand_kernel(const float *coarse, unsigned nd, long long qa,
                                        unsigned s, long long p0, size_t m, float *out,
                                        size_t sk, size_t sd)
{
    const size_t total = m * nd;
    for (size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x; e < total;
         e += (size_t)gridDim.x * blockDim.x) {
        const size_t k = e / nd;
        const unsigned d = (unsigned)(e % nd);
        const long long p = p0 + (long long)k;
        const long long q = p >= 0 ? p / (long long)s : -((-p + s - 1) / (long long)s);
        out[k * sk + (size_t)d * sd] = p < 0 ? 0.0f : coarse[(size_t)(q - qa) * nd + d];
    }
}

#endif /* TRANSIENT_CUDA_DEDISP_KERNELS_CUH */
