/*
 * Kernels of the CUDA candidates (candidates_cuda.h): the peaks of a call
 * (values at or above the threshold) selected in stream order, and the
 * friends-of-friends clustering of <transient/candidates.h> run over them
 * with its state (open events, active peaks per channel) kept on the device.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * Selection: a stable compaction in three launches (count per tile, one
 * block scanning the tile counts, write), written with the block sums of
 * boxcar_target.cuh so that the host emulation runs it as it is; it reads
 * either layout and the width in the same pass, which a library select over
 * a flat array would not. Clustering: one thread walks the peaks in stream
 * order doing exactly what lib/core/boxcar/candidates.c does (the scan
 * variant: closes only at the positions where an event can close), so the
 * emitted sequence is the same. Peaks are sparse (the threshold lies far
 * above the noise), so the serial walk costs little beside the search; a
 * threshold in the noise makes it slow, not wrong. When a buffer is full
 * the walk stops before the step that needs room, says which buffer, and
 * the host grows it and resumes at that step (every step is repeatable).
 */
#ifndef TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH
#define TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH

#include "boxcar/boxcar_target.cuh"

#include <transient/candidates.h>

#include <cstdint>

namespace cand_cuda
{

constexpr uint32_t kNone = 0xffffffffu;

/* One value >= threshold: position index k of the piece, channel, width, S/N. */
struct peak {
    uint32_t k, c;
    int32_t w;
    float s;
};

/* A cluster (event under construction), as in candidates.c. */
struct cluster {
    uint32_t parent, next, tail, slot, gen;
    tr_candidate ev; /* root: the event so far */
};

/* Latest active peak of one width in one channel. */
struct entry {
    uint32_t width, id, gen;
    int64_t end;
};

/* link_width = 0: per channel one set and its largest end (candidates.c). */
struct chan_sum {
    uint32_t has, sid, sgen;
    int64_t max_end;
};

/* Why a walk stopped before its end. */
enum stop_reason : uint32_t {
    kDone = 0,
    kClustersFull = 1, /* no free cluster id */
    kEntriesFull = 2,  /* channel stop_chan has no free entry */
    kEventsFull = 3,   /* the event buffer cannot take a closing batch */
    kPeaksFull = 4     /* the call's peaks did not fit the peak buffer */
};

/* The scalar state, in device memory between calls. */
struct state {
    int64_t position, next_check, closed;
    uint64_t peaks, emitted;
    uint32_t ncl, nfree, nopen, nout;
    uint32_t stop, stop_chan;
    uint32_t resume;  /* next peak of the call */
    int64_t resume_k; /* next position index of the call */
};

/* The device arrays and their capacities. */
struct arrays {
    cluster *cl;
    uint32_t *freel, *open;
    uint32_t capcl;
    entry *e;     /* channel c: e[c * ecap .. + en[c]) */
    uint32_t *en; /* entries per channel */
    uint32_t ecap;
    chan_sum *sum;
    tr_candidate *out; /* closed events, out[0 .. nout) */
    uint32_t capout;
};

struct params {
    uint32_t nchan, link_time, link_chan;
    double link_width;
    uint64_t max_span;
};

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
        const int64_t k = k0 + j / nchan, c = j % nchan;
        return channel_major ? c * ld + k : k * nchan + c;
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
 * below cap (the walk sees total > cap and asks for room). */
template <int NT, int IT>
__global__ void __launch_bounds__(NT)
    select_write(view v, const uint32_t *tile_off, peak *pk, uint32_t cap)
{
    __shared__ typename block_ops<NT>::storage tmp;
    __shared__ uint32_t run;
    if (threadIdx.x == 0) run = tile_off[blockIdx.x];
    __syncthreads();
    const int64_t j0 = (int64_t)blockIdx.x * NT * IT;
    for (int r = 0; r < IT; r++) {
        const int64_t j = j0 + r * NT + threadIdx.x;
        const bool f = v.is_peak(j);
        const uint32_t p = (uint32_t)block_ops<NT>::exclusive_sum(tmp, f ? 1.0f : 0.0f);
        const uint32_t o = run + p;
        if (f && o < cap) {
            const int64_t i = v.index(j);
            const int32_t w = v.width ? v.width[i] : 1;
            pk[o] = peak{(uint32_t)(j / v.nchan), (uint32_t)(j % v.nchan), w < 1 ? 1 : w,
                         v.snr[i]};
        }
        __syncthreads();
        if (threadIdx.x == NT - 1) run = o + (f ? 1u : 0u);
        __syncthreads();
    }
}

/* ---- clustering (one thread) -------------------------------------------- */

struct walker {
    state &S;
    const arrays &A;
    const params &P;

    __device__ uint32_t find(uint32_t id) const
    {
        uint32_t r = id;
        while (A.cl[r].parent != r)
            r = A.cl[r].parent;
        while (A.cl[id].parent != r) {
            const uint32_t nx = A.cl[id].parent;
            A.cl[id].parent = r;
            id = nx;
        }
        return r;
    }

    /* a better than b: higher S/N; ties: earlier start, then lower channel */
    static __device__ bool better(const tr_candidate &a, const tr_candidate &b)
    {
        if (a.snr != b.snr) return a.snr > b.snr;
        if (a.start != b.start) return a.start < b.start;
        return a.channel < b.channel;
    }

    /* closing order: (first, channel, start, width) */
    static __device__ bool before(const tr_candidate &a, const tr_candidate &b)
    {
        if (a.first != b.first) return a.first < b.first;
        if (a.channel != b.channel) return a.channel < b.channel;
        if (a.start != b.start) return a.start < b.start;
        return a.width < b.width;
    }

    __device__ int64_t due(const tr_candidate &ev) const
    {
        int64_t t = ev.end + (int64_t)P.link_time + 1;
        if (P.max_span) {
            const int64_t s = ev.first + (int64_t)P.max_span + 1;
            if (s < t) t = s;
        }
        return t;
    }

    __device__ void update_check(const tr_candidate &ev)
    {
        const int64_t t = due(ev);
        if (t < S.next_check) S.next_check = t;
    }

    __device__ uint32_t unite(uint32_t a, uint32_t b)
    {
        if (b < a) {
            const uint32_t t = a;
            a = b;
            b = t;
        }
        cluster &X = A.cl[a], &Y = A.cl[b];
        tr_candidate &x = X.ev;
        const tr_candidate &y = Y.ev;
        if (better(y, x)) {
            x.start = y.start;
            x.peak = y.peak;
            x.snr = y.snr;
            x.width = y.width;
            x.channel = y.channel;
        }
        x.first = y.first < x.first ? y.first : x.first;
        x.end = y.end > x.end ? y.end : x.end;
        x.members += y.members;
        x.chan_lo = y.chan_lo < x.chan_lo ? y.chan_lo : x.chan_lo;
        x.chan_hi = y.chan_hi > x.chan_hi ? y.chan_hi : x.chan_hi;
        x.width_lo = y.width_lo < x.width_lo ? y.width_lo : x.width_lo;
        x.width_hi = y.width_hi > x.width_hi ? y.width_hi : x.width_hi;
        const uint32_t s = Y.slot, last = A.open[--S.nopen];
        A.open[s] = last;
        A.cl[last].slot = s;
        Y.parent = a;
        A.cl[X.tail].next = b;
        X.tail = Y.tail;
        update_check(x);
        return a;
    }

    /* Close the events that cannot grow at p (all: every one); the batch is
     * appended to out sorted. Needs capout - nout >= nopen (checked before). */
    __device__ void close_events(int64_t p, bool all)
    {
        const uint32_t b0 = S.nout;
        int64_t next = INT64_MAX;
        for (uint32_t i = 0; i < S.nopen;) {
            const uint32_t r = A.open[i];
            tr_candidate &ev = A.cl[r].ev;
            const bool span = P.max_span && p - ev.first > (int64_t)P.max_span;
            const bool gone = ev.end + (int64_t)P.link_time < p;
            if (all || gone || span) {
                ev.truncated = !all && span && !gone;
                /* insertion into the sorted batch */
                uint32_t o = S.nout++;
                while (o > b0 && before(ev, A.out[o - 1])) {
                    A.out[o] = A.out[o - 1];
                    o--;
                }
                A.out[o] = ev;
                for (uint32_t id = r; id != kNone; id = A.cl[id].next) {
                    A.cl[id].gen++;
                    A.freel[S.nfree++] = id;
                }
                const uint32_t last = A.open[--S.nopen];
                A.open[i] = last;
                A.cl[last].slot = i;
                continue;
            }
            const int64_t t = due(ev);
            if (t < next) next = t;
            i++;
        }
        S.next_check = next;
        S.emitted += S.nout - b0;
    }

    __device__ uint32_t new_cluster(int64_t p, uint32_t c, uint32_t w, float s)
    {
        uint32_t id;
        if (S.nfree) {
            id = A.freel[--S.nfree];
        } else {
            id = S.ncl++;
            A.cl[id].gen = 0;
        }
        cluster &k = A.cl[id];
        k.parent = id;
        k.next = kNone;
        k.tail = id;
        k.slot = S.nopen;
        A.open[S.nopen++] = id;
        tr_candidate &ev = k.ev;
        ev.start = p;
        ev.peak = p + (int64_t)(w - 1) / 2;
        ev.first = p;
        ev.end = p + (int64_t)w;
        ev.members = 1;
        ev.snr = s;
        ev.width = ev.width_lo = ev.width_hi = w;
        ev.channel = ev.chan_lo = ev.chan_hi = c;
        ev.truncated = 0;
        update_check(ev);
        return id;
    }

    __device__ bool widths_link(uint32_t a, uint32_t b) const
    {
        if (P.link_width == 0.0) return true;
        const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
        return (double)hi <= P.link_width * (double)lo;
    }

    __device__ void add_peak(int64_t p, uint32_t c, uint32_t w, float s)
    {
        uint32_t root = new_cluster(p, c, w, s);
        S.peaks++;
        const uint32_t lc = P.link_chan;
        const uint32_t c0 = c > lc ? c - lc : 0;
        const uint32_t c1 = (uint64_t)c + lc < P.nchan ? c + lc : P.nchan - 1;
        const int64_t lt = (int64_t)P.link_time;
        if (P.link_width == 0.0) {
            for (uint32_t cc = c0; cc <= c1; cc++) {
                chan_sum &ch = A.sum[cc];
                if (!ch.has) continue;
                if (A.cl[ch.sid].gen != ch.sgen || ch.max_end + lt < p) {
                    ch.has = 0;
                    continue;
                }
                const uint32_t r = find(ch.sid);
                if (r != root) root = unite(root, r);
            }
            chan_sum &ch = A.sum[c];
            const int64_t end = p + (int64_t)w;
            if (!ch.has || end > ch.max_end) ch.max_end = end;
            ch.has = 1;
            ch.sid = root;
            ch.sgen = A.cl[root].gen;
            return;
        }
        for (uint32_t cc = c0; cc <= c1; cc++) {
            entry *e = A.e + (size_t)cc * A.ecap;
            uint32_t &n = A.en[cc];
            for (uint32_t i = 0; i < n;) {
                if (e[i].end + lt < p || A.cl[e[i].id].gen != e[i].gen) {
                    e[i] = e[--n];
                    continue;
                }
                if (widths_link(e[i].width, w)) {
                    const uint32_t r = find(e[i].id);
                    if (r != root) root = unite(root, r);
                }
                i++;
            }
        }
        entry *e = A.e + (size_t)c * A.ecap;
        uint32_t &n = A.en[c];
        for (uint32_t i = 0; i < n; i++)
            if (e[i].width == w) {
                e[i].end = p + (int64_t)w;
                e[i].id = root;
                e[i].gen = A.cl[root].gen;
                return;
            }
        e[n] = entry{w, root, A.cl[root].gen, p + (int64_t)w};
        n++;
    }

    /* Room for the closes at one position. */
    __device__ bool room_to_close()
    {
        if (A.capout - S.nout >= S.nopen) return true;
        S.stop = kEventsFull;
        return false;
    }

    /* Room for one more peak in channel c. */
    __device__ bool room_for_peak(uint32_t c)
    {
        if (S.nfree == 0 && S.ncl == A.capcl) {
            S.stop = kClustersFull;
            return false;
        }
        if (P.link_width != 0.0 && A.en[c] >= A.ecap) {
            S.stop = kEntriesFull;
            S.stop_chan = c;
            return false;
        }
        return true;
    }

    /* The closes due at positions base + k .. last. */
    __device__ bool close_through(int64_t base, int64_t last)
    {
        while (S.next_check <= last) {
            if (!room_to_close()) return false;
            const int64_t p0 = base + S.resume_k;
            const int64_t p = S.next_check > p0 ? S.next_check : p0;
            S.position = p;
            close_events(p, false);
        }
        return true;
    }

    /* The call's peaks pk[resume .. npk) of positions base .. base + n - 1,
     * then the closes due through base + n (candidates.c process_scan). */
    __device__ void process(const peak *pk, uint32_t npk, int64_t base, int64_t n)
    {
        while (S.resume < npk) {
            const uint32_t kp = pk[S.resume].k;
            const int64_t p = base + kp;
            if (!close_through(base, p)) return;
            S.position = p;
            for (; S.resume < npk && pk[S.resume].k == kp; S.resume++) {
                const peak &q = pk[S.resume];
                if (!room_for_peak(q.c)) return;
                add_peak(p, q.c, (uint32_t)q.w, q.s);
            }
            S.resume_k = (int64_t)kp + 1;
        }
        if (!close_through(base, base + n)) return;
        S.position = base + n;
    }

    /* End of data: close every open event and forget the active peaks. */
    __device__ void flush()
    {
        if (!room_to_close()) return;
        close_events(S.position, true);
        for (uint32_t c = 0; c < P.nchan; c++) {
            if (P.link_width == 0.0)
                A.sum[c].has = 0;
            else
                A.en[c] = 0;
        }
        S.next_check = INT64_MAX;
    }

    __device__ void set_closed()
    {
        int64_t m = S.position;
        for (uint32_t i = 0; i < S.nopen; i++)
            if (A.cl[A.open[i]].ev.first < m) m = A.cl[A.open[i]].ev.first;
        S.closed = m;
    }
};

/* The walk: flush (npk_total NULL) or the call's peaks; *npk_total > cap
 * means the selection did not fit (the host grows the buffer, selects
 * again and relaunches). */
__global__ void __launch_bounds__(1)
    walk(state *st, arrays a, params prm, const peak *pk, const uint32_t *npk_total,
         uint32_t cap, int64_t base, int64_t n)
{
    state S = *st;
    S.stop = kDone;
    walker wk{S, a, prm};
    if (!npk_total) {
        wk.flush();
    } else if (*npk_total > cap) {
        S.stop = kPeaksFull;
    } else {
        wk.process(pk, *npk_total, base, n);
    }
    wk.set_closed();
    *st = S;
}

} // namespace cand_cuda

#endif /* TRANSIENT_CUDA_CANDIDATES_KERNELS_CUH */
