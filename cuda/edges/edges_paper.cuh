/*
 * Edge localizer, the paper's GPU design: Khambadkar, Barford and Harris,
 * "Massively Parallel Localization of Pulsed Signal Transitions Using a GPU",
 * Section II. Kept as the baseline that the fused CUDA variant is measured
 * against, so it keeps the paper's structure: every step is a separate pass over
 * global arrays, and the scans and the compaction are library primitives.
 *
 *   pass 1  classify       level[i] and the crossing time[i] (steps 1 and 2)
 *   pass 2  level scan     levelScan = scan(level, (+)1)                (step 3)
 *   pass 3  segment flags  where a new level is attained; segment heads (step 4)
 *   pass 4  segmented scan segFirstCrossing = seg_scan(time, heads, min) (step 5)
 *   pass 5  compaction     indices of the transitions                   (step 6)
 *   pass 6  emit           gather the transitions; count, stop, carry-out
 *
 * The passes are written once, over an execution backend `Exec`, so that the
 * same code runs on the GPU (edges_paper.cu: element passes as kernels, scans
 * and selection with CUB) and on the host against Thrust's CPP backend
 * (tests/core/edges/test_edges_paper_host.cpp), where it is compared with the reference
 * variant without a GPU. Exec provides, each returning 0 or an error code:
 *   for_each(m, f)                          f(i) for every i in [0, m), any order
 *   scan(tmp, bytes, in, out, m, op)        inclusive scan, CUB two-phase style
 *   select_flagged(tmp, bytes, in, flags, out, num_selected, m)
 *
 * Departures from the paper, each needed for the results to equal edges.h:
 *  - Segment heads. The paper starts a segment where a new level is attained,
 *    so a segment runs from the previous transition to the next one and its
 *    first crossing of m may belong to a runt. That contradicts the paper's own
 *    definition in Section I (the transition time is the first crossing "after
 *    rising above l but before attaining h"). Here a segment starts after every
 *    sample in a settled state (level != 0): the first crossing in the segment
 *    that ends at a transition is then the first crossing after the last sample
 *    in the old state, as edges.h defines.
 *  - Direction. Only crossings away from the old state count (rising after low,
 *    falling after high); with non-finite samples the first crossing after a
 *    low sample can be a falling one. Pass 1 records the direction of each
 *    crossing; pass 3, which knows the old state, drops the wrong ones.
 *  - Non-finite samples are intermediate and never part of a crossing; a
 *    transition whose crossing they hid gets time NaN.
 *  - Time index. time[] is attached to the sample that ends the bracketing
 *    pair (the paper attaches it to the first sample), so that every pair of a
 *    call, the one made of the carried previous sample and x[0] included,
 *    belongs to that call.
 *  - Streaming. Entry 0 of every array stands for the state carried in from the
 *    previous call (its level and its pending crossing); entry i+1 is sample i.
 *    The inclusive scans then carry the state across calls with no extra logic.
 *    (A carry that holds a previous sample has pos >= 1, as it always does in a
 *    stream, so every crossing time is >= 0; the segmented scan relies on it.)
 */
#ifndef TRANSIENT_CUDA_EDGES_PAPER_CUH
#define TRANSIENT_CUDA_EDGES_PAPER_CUH

#include "edges/edges_state.h"

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/iterator/transform_output_iterator.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define TR_PAPER_HD __host__ __device__
#else
#define TR_PAPER_HD
#endif

namespace tr_paper
{

/* Error returned for bad arguments; equals cudaErrorInvalidValue (checked in
 * edges_paper.cu) so that the launcher returns CUDA error codes only. */
constexpr int ERR_INVALID = 1;

/* cls[] byte: the level of the sample, and the direction of the crossing of m
 * between the previous sample and this one. */
enum : uint8_t { LEVEL_MASK = 3, CROSS_RISE = 4, CROSS_FALL = 8 };

/* flg[] byte: a segment starts here; a new level is attained here. */
enum : uint8_t { FLAG_HEAD = 1, FLAG_TRANS = 2 };

/* Exact IEEE patterns, the same on host and device: +Inf for "no crossing",
 * and the quiet NaN that the reference writes (C's NAN converted to double). */
TR_PAPER_HD inline double inf_value()
{
    const uint64_t u = 0x7ff0000000000000ull;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}
TR_PAPER_HD inline double nan_value()
{
    const uint64_t u = 0x7ff8000000000000ull;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* Operator (+)1 of Table I: the most recent non-intermediate level. */
struct level_op {
    TR_PAPER_HD uint8_t operator()(uint8_t a, uint8_t b) const { return b != 0 ? b : a; }
};

struct level_of {
    TR_PAPER_HD uint8_t operator()(uint8_t c) const { return c & LEVEL_MASK; }
};

/* Segmented scan as a plain scan over (head, value) words (Blelloch): a head
 * restarts the running minimum. The head flag lives in the sign bit of the
 * crossing time, which is never negative (a sample index, or +Inf for "no
 * crossing"), and for non-negative doubles the order of the bit patterns as
 * integers is the numeric order, so the minimum is taken on integers, exactly.
 * One 8-byte primitive word per element keeps CUB's scan on its fast path
 * (a 16-byte struct made the look-back, and the pass, five times slower).
 * The operator is associative, so CUB may combine in any bracketing. */
constexpr uint64_t SEG_HEAD = 1ull << 63;

struct seg_min_op {
    TR_PAPER_HD uint64_t operator()(uint64_t a, uint64_t b) const
    {
        if (b & SEG_HEAD) return b;
        const uint64_t av = a & ~SEG_HEAD;
        return (a & SEG_HEAD) | (b < av ? b : av);
    }
};

struct seg_in {
    const uint8_t *flg;
    const double *time;
    TR_PAPER_HD uint64_t operator()(int64_t j) const
    {
        uint64_t w;
        memcpy(&w, &time[j], sizeof w);
        return (flg[j] & FLAG_HEAD) ? (w | SEG_HEAD) : w;
    }
};

struct seg_value {
    TR_PAPER_HD double operator()(uint64_t w) const
    {
        w &= ~SEG_HEAD;
        double d;
        memcpy(&d, &w, sizeof d);
        return d;
    }
};

struct is_transition {
    TR_PAPER_HD bool operator()(uint8_t f) const { return (f & FLAG_TRANS) != 0; }
};

/* Pass 1 (steps 1 and 2), one element per entry j in [0, n]. Entry 0 snapshots
 * the carry (d_cin may alias d_cout, which pass 6 writes) and seeds the scans
 * with its state and its pending crossing. Entry j = k+1 classifies sample k
 * and times the crossing between sample k-1 (or the carried sample) and k. */
struct classify_pass {
    const float *x;
    tr_edges_lv lv;
    const tr_edges_carry *cin;
    tr_edges_carry *snap;
    uint8_t *cls;
    double *time;

    TR_PAPER_HD void operator()(int64_t j) const
    {
        if (j == 0) {
            const tr_edges_carry c = *cin;
            *snap = c;
            cls[0] = (uint8_t)c.state;
            time[0] = c.has_cand ? c.cand : inf_value();
            return;
        }
        const int64_t k = j - 1;
        const float xi = x[k];
        const int has_prev = k > 0 ? 1 : cin->has_prev;
        const float xp = k > 0 ? x[k - 1] : cin->x_prev;
        uint8_t c = (uint8_t)tr_edges_level(xi, lv);
        double t = inf_value();
        if (has_prev && tr_edges_finite(xp) && tr_edges_finite(xi)) {
            const int rising = xp < lv.mid && lv.mid <= xi;
            const int falling = xi < lv.mid && lv.mid <= xp;
            if (rising || falling) {
                /* The same formula and operands as the reference. */
                t = tr_edges_cross_time(cin->pos + k - 1, xp, xi, lv.mid);
                c |= rising ? CROSS_RISE : CROSS_FALL;
            }
        }
        cls[j] = c;
        time[j] = t;
    }
};

/* Pass 3 (step 4), one element per entry. old = levelScan of the entry before
 * = the state established before sample k. */
struct flags_pass {
    const uint8_t *cls;
    const uint8_t *ls;
    uint8_t *flg;
    double *time;

    TR_PAPER_HD void operator()(int64_t j) const
    {
        if (j == 0) {
            flg[0] = FLAG_HEAD; /* the carried segment */
            return;
        }
        const uint8_t c = cls[j];
        const uint8_t level = c & LEVEL_MASK;
        const uint8_t old = ls[j - 1];
        uint8_t f = 0;
        /* A segment starts after every settled sample: the crossings that
         * count for the next transition are those after it. Entry 1 continues
         * the carried segment (its pair starts with the carried sample). */
        if (j >= 2 && (cls[j - 1] & LEVEL_MASK) != 0) f |= FLAG_HEAD;
        /* The paper's "new logic level attained", restricted to settled samples. */
        if (old != TR_STATE_NONE && level != TR_STATE_NONE && level != old)
            f |= FLAG_TRANS;
        /* Keep only crossings away from the old state (none before a state). */
        const int away = (old == TR_STATE_LOW && (c & CROSS_RISE)) ||
                         (old == TR_STATE_HIGH && (c & CROSS_FALL));
        if ((c & (CROSS_RISE | CROSS_FALL)) && !away) time[j] = inf_value();
        flg[j] = f;
    }
};

/* Pass 6 (end of step 6), one element per output slot t in [0, min(n, cap+1)),
 * at least one: gathers transition t; element 0 also writes the count and the
 * carry-out. Crossing times never decrease with the index: the crossing of
 * the pair (k-1, k) is the rounding of a value in [pos+k-1, pos+k], rounding
 * is monotonic, and the carried crossing precedes them all. So the segment
 * minimum is the first crossing, bit for bit (equal times are equal bits). */
struct emit_pass {
    const float *x;
    int64_t n;
    int64_t cap;
    const tr_edges_carry *snap;
    const uint8_t *cls;
    const uint8_t *ls;
    const double *segmin;
    const int32_t *idx;
    const int64_t *nsel;
    tr_edges_carry *cout;
    tr_edge *out;
    tr_edge *stop;
    unsigned long long *count;

    TR_PAPER_HD void operator()(int64_t t) const
    {
        const int64_t total = n > 0 ? *nsel : 0;
        if (t == 0) {
            *count = (unsigned long long)total;
            if (total <= cap) {
                /* The crossing pending at the end, unless the last sample is
                 * settled (which ends every segment). */
                const int last_settled = n > 0 && (cls[n] & LEVEL_MASK) != 0;
                const double cand = segmin[n];
                tr_edges_carry c;
                c.pos = snap->pos + n;
                c.has_cand = !last_settled && cand < inf_value();
                c.cand = c.has_cand ? cand : 0.0;
                c.x_prev = n > 0 ? x[n - 1] : snap->x_prev;
                c.state = ls[n];
                c.has_prev = n > 0 ? 1 : snap->has_prev;
                c.pad = 0;
                *cout = c;
            }
        }
        if (t < total && t <= cap) {
            const int64_t k = idx[t];
            const double v = segmin[k + 1];
            tr_edge e;
            e.time = v < inf_value() ? v : nan_value();
            e.sample = snap->pos + k;
            e.polarity = (cls[k + 1] & LEVEL_MASK) == TR_STATE_HIGH ? 1 : -1;
            e.reserved = 0;
            if (t < cap)
                out[t] = e;
            else if (stop)
                *stop = e;
        }
    }
};

/* Scratch layout inside the caller's temporary storage. */
struct layout {
    size_t snap, cls, ls, flg, time, segmin, idx, nsel, prim, total;
};

inline size_t align_up(size_t x)
{
    return (x + 255) & ~(size_t)255;
}

inline layout make_layout(int64_t n, size_t prim_bytes)
{
    const size_t m = (size_t)n + 1; /* entries: the carry, then one per sample */
    layout L;
    size_t o = 0;
    L.snap = o;
    o = align_up(o + sizeof(tr_edges_carry));
    L.cls = o;
    o = align_up(o + m);
    L.ls = o;
    o = align_up(o + m);
    L.flg = o;
    o = align_up(o + m);
    L.time = o;
    o = align_up(o + m * sizeof(double));
    L.segmin = o;
    o = align_up(o + m * sizeof(double));
    L.idx = o;
    o = align_up(o + (n > 0 ? (size_t)n : 1) * sizeof(int32_t));
    L.nsel = o;
    o = align_up(o + sizeof(int64_t));
    L.prim = o;
    o = align_up(o + (prim_bytes > 0 ? prim_bytes : 1));
    L.total = o;
    return L;
}

typedef thrust::transform_iterator<level_of, const uint8_t *> level_iter;
typedef thrust::transform_iterator<seg_in, thrust::counting_iterator<int64_t>> seg_iter;
typedef thrust::transform_output_iterator<seg_value, double *> segmin_iter;
typedef thrust::transform_iterator<is_transition, const uint8_t *> trans_iter;

/* The whole launcher contract of tr_cuda_edges_paper_launch (edges_cuda.h). */
template <class Exec>
int run(Exec &ex, const float *x, int64_t n, tr_edges_lv lv, const tr_edges_carry *cin,
        tr_edges_carry *cout, tr_edge *out, int64_t cap, tr_edge *stop,
        unsigned long long *count, void *temp, size_t *temp_bytes)
{
    if (temp_bytes == NULL || n < 0 || n >= ((int64_t)1 << 31) || cap < 0)
        return ERR_INVALID;
    const int64_t m = n + 1;
    int err;

    /* The primitives' own scratch: one region, reused pass after pass. */
    size_t b_level = 0, b_seg = 0, b_sel = 0;
    if ((err = ex.scan(NULL, b_level, level_iter(NULL, level_of()), (uint8_t *)NULL, m,
                       level_op())) != 0)
        return err;
    if ((err = ex.scan(NULL, b_seg,
                       seg_iter(thrust::counting_iterator<int64_t>(0), seg_in()),
                       segmin_iter((double *)NULL, seg_value()), m, seg_min_op())) != 0)
        return err;
    if ((err = ex.select_flagged(NULL, b_sel, thrust::counting_iterator<int32_t>(0),
                                 trans_iter(NULL, is_transition()), (int32_t *)NULL,
                                 (int64_t *)NULL, n)) != 0)
        return err;
    size_t prim = b_level;
    if (b_seg > prim) prim = b_seg;
    if (b_sel > prim) prim = b_sel;
    const layout L = make_layout(n, prim);

    if (temp == NULL) {
        *temp_bytes = L.total;
        return 0;
    }
    if (*temp_bytes < L.total || cin == NULL || cout == NULL || count == NULL ||
        (n > 0 && x == NULL) || (cap > 0 && out == NULL))
        return ERR_INVALID;

    char *base = (char *)temp;
    tr_edges_carry *snap = (tr_edges_carry *)(base + L.snap);
    uint8_t *cls = (uint8_t *)(base + L.cls);
    uint8_t *ls = (uint8_t *)(base + L.ls);
    uint8_t *flg = (uint8_t *)(base + L.flg);
    double *time = (double *)(base + L.time);
    double *segmin = (double *)(base + L.segmin);
    int32_t *idx = (int32_t *)(base + L.idx);
    int64_t *nsel = (int64_t *)(base + L.nsel);
    void *scratch = base + L.prim;

    /* Pass 1: classify. */
    const classify_pass p1 = {x, lv, cin, snap, cls, time};
    if ((err = ex.for_each(m, p1)) != 0) return err;

    /* Pass 2: levelScan = scan(level, (+)1), seeded by the carried state. */
    size_t bytes = prim;
    if ((err = ex.scan(scratch, bytes, level_iter(cls, level_of()), ls, m, level_op())) !=
        0)
        return err;

    /* Pass 3: segment heads, transitions, direction filter. */
    const flags_pass p3 = {cls, ls, flg, time};
    if ((err = ex.for_each(m, p3)) != 0) return err;

    /* Pass 4: segFirstCrossing = segmented_scan(time, heads, min). */
    const seg_in sin = {flg, time};
    bytes = prim;
    if ((err =
             ex.scan(scratch, bytes, seg_iter(thrust::counting_iterator<int64_t>(0), sin),
                     segmin_iter(segmin, seg_value()), m, seg_min_op())) != 0)
        return err;

    /* Pass 5: stream compaction of the transition indices (samples 0..n-1). */
    if (n > 0) {
        bytes = prim;
        if ((err = ex.select_flagged(
                 scratch, bytes, thrust::counting_iterator<int32_t>(0),
                 trans_iter(flg + 1, is_transition()), idx, nsel, n)) != 0)
            return err;
    }

    /* Pass 6: gather transitions 0..cap (at most one per sample). */
    const int64_t slots = cap < n ? cap + 1 : (n > 0 ? n : 1);
    const emit_pass p6 = {x,   n,    cap,  snap, cls,  ls,   segmin,
                          idx, nsel, cout, out,  stop, count};
    return ex.for_each(slots, p6);
}

} // namespace tr_paper

#endif /* TRANSIENT_CUDA_EDGES_PAPER_CUH */
