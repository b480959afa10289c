/*
 * Kernels of the CUDA SPIIR trigger search (triggers_cuda.h): one thread per
 * template walks the rows of an SNR block in order, with the decisions of the
 * reference (lib/core/spiir/spiir_triggers.c) in double.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equation 8: the SNR these triggers are taken from).
 *
 * A cluster's state carries from sample to sample, so the time axis of one
 * template is serial; the templates are the parallel axis, and a row of the
 * [k][t] layout is one coalesced load per warp. Most samples cannot change
 * a cluster (they are under the threshold, or under the open candidate), so
 * a first kernel, parallel over all samples, takes the largest |z|^2 of every
 * tile of TILE rows and template, and the walk skips the tiles under its
 * bound; a tile it walks is loaded before any sample is decided, so that
 * TILE loads are in flight per thread. The state is
 * read from one array and written to another: a scan that must be cut
 * (the device list filled up, or the caller's room) is run again from the
 * same input state. With TR_SPIIR_TRIG_HOST_EMU the kernels compile as C++
 * against the includer's host emulation of CUDA.
 */
#ifndef TRANSIENT_CUDA_SPIIR_TRIGGERS_KERNELS_CUH
#define TRANSIENT_CUDA_SPIIR_TRIGGERS_KERNELS_CUH

#ifndef TR_SPIIR_TRIG_HOST_EMU
#include <cuda_runtime.h>
#endif

#include "spiir/triggers_cuda.h"

#include <cstdint>

namespace spiir_trig
{

/* Where decided clusters go: list[0 .. cap) through *count (which counts on
 * past cap); a cluster that does not fit lowers *lost to its sample. list
 * NULL: nothing is recorded (a scan run again to its cut). */
struct sink {
    tr_spiir_trig_event *list;
    uint32_t cap;
    uint32_t *count;
    unsigned long long *lost;
};

/* |z|^2 as the reference has it: in double from the float pair, NO_VALUE
 * when not finite. */
__device__ __forceinline__ double mag2(float2 z)
{
    const double v = (double)z.x * (double)z.x + (double)z.y * (double)z.y;
    return isfinite(v) ? v : TR_SPIIR_TRIG_NO_VALUE;
}

/* The open cluster c decided at sample pos and closed; false when it did not
 * fit in the sink. */
__device__ __forceinline__ bool decide(tr_spiir_trig_cluster &c, uint64_t pos, uint32_t t,
                                       const sink &out)
{
    c.open = 0;
    if (!out.list) return true;
    const uint32_t slot = atomicAdd(out.count, 1u);
    if (slot >= out.cap) {
        atomicMin(out.lost, (unsigned long long)pos);
        return false;
    }
    tr_spiir_trig_event &e = out.list[slot];
    e.decided = pos;
    e.c = c;
    e.c.open = 1; /* the state it was decided in */
    e.t = t;
    e.reserved = 0;
    return true;
}

/* One sample of one template, as the reference takes it; false when its
 * cluster was decided and did not fit in the sink. */
__device__ __forceinline__ bool step(tr_spiir_trig_cluster &c, float2 z, uint64_t pos,
                                     double thr2, uint32_t window, uint32_t t,
                                     const sink &out)
{
    const double v = mag2(z);
    if (c.open && pos == c.k + 1) c.next = v;
    if (v > thr2 && (!c.open || v > c.val)) {
        c.open = 1;
        c.k = pos;
        c.val = v;
        c.prev = c.last;
        c.next = TR_SPIIR_TRIG_NO_VALUE;
        c.re = z.x;
        c.im = z.y;
    }
    c.last = v;
    if (!c.open || pos - c.k < window) return true;
    return decide(c, pos, t, out);
}

/* tmax[j * nt + t] = the largest |z|^2 (mag2) of template t in rows
 * [j * TILE, (j + 1) * TILE) of the nrows; blockIdx.y is the tile j. */
template <int NT, int TILE>
__global__ void __launch_bounds__(NT)
    tile_max(const float2 *snr, uint32_t nt, uint64_t nrows, double *tmax)
{
    const uint32_t t = blockIdx.x * NT + threadIdx.x;
    if (t >= nt) return;
    const uint64_t r0 = (uint64_t)blockIdx.y * TILE;
    double m = TR_SPIIR_TRIG_NO_VALUE;
#pragma unroll
    for (int i = 0; i < TILE; i++)
        if (r0 + i < nrows) m = fmax(m, mag2(snr[(size_t)(r0 + i) * nt + t]));
    tmax[(size_t)blockIdx.y * nt + t] = m;
}

/*
 * Rows [0, nrows) of snr (nt templates a row), row 0 at sample pos0: state
 * from in[] to out[]. A tile of rows whose largest |z|^2 (tmax, over these
 * rows or more) is at most the bound a sample must pass to start or move a
 * cluster (the threshold, or the open candidate when larger and not decided
 * within the tile) cannot change the cluster: only the candidate's right
 * neighbour and a decision due in it are taken from it. Other tiles are
 * walked sample by sample. The maxima of AHEAD tiles are read at once. A
 * thread whose cluster did not fit stops (the caller cuts the scan before
 * that sample and runs it again).
 */
template <int NT, int TILE, int AHEAD>
__global__ void __launch_bounds__(NT)
    scan(const float2 *snr, uint32_t nt, uint64_t nrows, uint64_t pos0, double thr2,
         uint32_t window, const double *tmax, const tr_spiir_trig_cluster *in,
         tr_spiir_trig_cluster *out, sink dst)
{
    const uint32_t t = blockIdx.x * NT + threadIdx.x;
    if (t >= nt) return;
    tr_spiir_trig_cluster c = in[t];
    bool last_known = true; /* c.last is |z|^2 of the row before the tile */
    const uint64_t ntiles = (nrows + TILE - 1) / TILE;
    for (uint64_t j0 = 0; j0 < ntiles; j0 += AHEAD) {
        /* The maxima of AHEAD tiles loaded at once: their loads overlap. */
        double m[AHEAD];
#pragma unroll
        for (int g = 0; g < AHEAD; g++)
            m[g] = j0 + g < ntiles ? tmax[(size_t)(j0 + g) * nt + t] : 0.0;
        for (int g = 0; g < AHEAD && j0 + g < ntiles; g++) {
            const uint64_t a = (j0 + g) * TILE, b = a + TILE < nrows ? a + TILE : nrows;
            /* A decision due in the tile lowers the bound to the threshold. */
            const bool due = c.open && c.k + window < pos0 + b;
            const double bound = c.open && !due && c.val > thr2 ? c.val : thr2;
            if (m[g] <= bound) {
                if (c.open && c.k + 1 >= pos0 + a && c.k + 1 < pos0 + b)
                    c.next = mag2(snr[(size_t)(c.k + 1 - pos0) * nt + t]);
                if (c.open && c.k + window >= pos0 + a && c.k + window < pos0 + b &&
                    !decide(c, c.k + window, t, dst))
                    return;
                last_known = false;
                continue;
            }
            if (!last_known) c.last = mag2(snr[(size_t)(a - 1) * nt + t]);
            float2 z[TILE];
#pragma unroll
            for (int i = 0; i < TILE; i++)
                if (a + i < b) z[i] = snr[(size_t)(a + i) * nt + t];
#pragma unroll
            for (int i = 0; i < TILE; i++)
                if (a + i < b && !step(c, z[i], pos0 + a + i, thr2, window, t, dst))
                    return;
            last_known = true;
        }
    }
    if (!last_known) c.last = mag2(snr[(size_t)(nrows - 1) * nt + t]);
    out[t] = c;
}

/* The flush: every open cluster decided at sample pos (the list has room for
 * all nt) and closed. */
template <int NT>
__global__ void __launch_bounds__(NT)
    flush(tr_spiir_trig_cluster *st, uint32_t nt, uint64_t pos, sink dst)
{
    const uint32_t t = blockIdx.x * NT + threadIdx.x;
    if (t >= nt || !st[t].open) return;
    const uint32_t slot = atomicAdd(dst.count, 1u);
    tr_spiir_trig_event &e = dst.list[slot];
    e.decided = pos;
    e.c = st[t];
    e.t = t;
    e.reserved = 0;
    st[t].open = 0;
}

/* Every cluster closed, no sample seen. */
template <int NT>
__global__ void __launch_bounds__(NT) clear(tr_spiir_trig_cluster *st, uint32_t nt)
{
    const uint32_t t = blockIdx.x * NT + threadIdx.x;
    if (t >= nt) return;
    tr_spiir_trig_cluster c = {};
    c.last = TR_SPIIR_TRIG_NO_VALUE;
    st[t] = c;
}

} // namespace spiir_trig

#endif /* TRANSIENT_CUDA_SPIIR_TRIGGERS_KERNELS_CUH */
