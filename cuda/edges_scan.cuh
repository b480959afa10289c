/*
 * Edge localizer as a single-pass scan: the segment summary and its operator.
 *
 * The serial state machine (lib/core/edges_ref.c) is a composition of
 * per-sample functions. A segment of samples is summarised by what it does to
 * any incoming state, and two summaries compose associatively, so a block-wide
 * scan with decoupled look-back across tiles gives every thread the exact state
 * at its first sample after one read of the input.
 *
 * Crossing indices are "pair ends" local to one launch: index j names the pair
 * (j-1, j), j = 0 the pair (sample before the launch, first sample), and
 * TR_CAND_CARRY (-1) the crossing carried in from an earlier launch. Smaller
 * index = earlier, so "first" is min().
 */
#ifndef TRANSIENT_CUDA_EDGES_SCAN_CUH
#define TRANSIENT_CUDA_EDGES_SCAN_CUH

#include "../lib/core/edges_internal.h"

#include <math.h>
#include <stdint.h>

/* The summary code also compiles as plain C++ so that host tests can run it. */
#ifdef __CUDACC__
#define TR_HDI    __host__ __device__ __forceinline__
#define TR_UNROLL _Pragma("unroll")
#else
#define TR_HDI inline
#define TR_UNROLL
#endif

#define TR_NONE_IDX   0x7fffffff /* no crossing */
#define TR_CAND_CARRY (-1)       /* the carried-in crossing */

/* What a segment of samples does to an incoming stream state. */
struct tr_edge_summary {
    int32_t pre_rise; /* first rising crossing up to and including the first settled
                         sample (whole segment if none) */
    int32_t pre_fall; /* same for falling crossings */
    int32_t tail;     /* first crossing away from `last` after the last settled sample */
    uint32_t count;   /* transitions after the first settled sample */
    int8_t first;     /* level of the first settled sample, TR_STATE_NONE if none */
    int8_t last;      /* level of the last settled sample, TR_STATE_NONE if none */
    int8_t pad[2];
};

TR_HDI int32_t tr_min32(int32_t a, int32_t b)
{
    return a < b ? a : b;
}

/* Summary of a followed by b (a earlier). Associative; identity: all NONE. */
struct tr_edge_summary_op {
    TR_HDI tr_edge_summary operator()(const tr_edge_summary &a,
                                      const tr_edge_summary &b) const
    {
        tr_edge_summary r;
        r.pad[0] = r.pad[1] = 0;
        if (a.first == TR_STATE_NONE) {
            /* a is all intermediate: its crossings precede b's first settled sample. */
            r.first = b.first;
            r.last = b.last;
            r.pre_rise = tr_min32(a.pre_rise, b.pre_rise);
            r.pre_fall = tr_min32(a.pre_fall, b.pre_fall);
            r.tail = b.tail;
            r.count = b.count;
        } else if (b.first == TR_STATE_NONE) {
            /* b is all intermediate: it can only provide a's pending crossing. */
            r.first = a.first;
            r.last = a.last;
            r.pre_rise = a.pre_rise;
            r.pre_fall = a.pre_fall;
            r.tail = a.tail != TR_NONE_IDX
                         ? a.tail
                         : (a.last == TR_STATE_LOW ? b.pre_rise : b.pre_fall);
            r.count = a.count;
        } else {
            r.first = a.first;
            r.last = b.last;
            r.pre_rise = a.pre_rise;
            r.pre_fall = a.pre_fall;
            r.tail = b.tail;
            r.count = a.count + b.count + (a.last != b.first ? 1u : 0u);
        }
        return r;
    }
};

TR_HDI tr_edge_summary tr_edge_summary_empty()
{
    tr_edge_summary s;
    s.pre_rise = s.pre_fall = s.tail = TR_NONE_IDX;
    s.count = 0;
    s.first = s.last = TR_STATE_NONE;
    s.pad[0] = s.pad[1] = 0;
    return s;
}

/* The carried-in stream state as a summary that precedes the launch. */
TR_HDI tr_edge_summary tr_edge_summary_carry(const tr_edges_carry &c)
{
    tr_edge_summary s = tr_edge_summary_empty();
    s.first = s.last = (int8_t)c.state;
    if (c.state != TR_STATE_NONE && c.has_cand) s.tail = TR_CAND_CARRY;
    return s;
}

/*
 * Accumulate one sample into a running summary s (the sequential form of
 * op(s, sample)). level: TR_STATE_*; rise/fall: the pair ending at j crosses.
 */
TR_HDI void tr_edge_summary_push(tr_edge_summary &s, int32_t j, int level, bool rise,
                                 bool fall)
{
    if (s.first == TR_STATE_NONE) {
        if (rise) s.pre_rise = tr_min32(s.pre_rise, j);
        if (fall) s.pre_fall = tr_min32(s.pre_fall, j);
        if (level != TR_STATE_NONE) s.first = s.last = (int8_t)level;
    } else {
        const bool away = s.last == TR_STATE_LOW ? rise : fall;
        if (away && s.tail == TR_NONE_IDX) s.tail = j;
        if (level != TR_STATE_NONE) {
            s.count += level != s.last;
            s.last = (int8_t)level;
            s.tail = TR_NONE_IDX;
        }
    }
}

/* Crossing flags of the pair (xa, xb), ending at local index j. */
TR_HDI void tr_edge_pair(float xa, bool has_a, float xb, float mid, bool &rise,
                         bool &fall)
{
    const bool ok = has_a && tr_edges_finite(xa) && tr_edges_finite(xb);
    rise = ok && xa < mid && mid <= xb;
    fall = ok && xb < mid && mid <= xa;
}

/* Summary of ITEMS consecutive samples xs[] starting at local index j0; xa is
 * the sample before them (has_a false at the very start of the stream). */
template <int ITEMS>
TR_HDI tr_edge_summary tr_edges_items_summary(const float (&xs)[ITEMS], float xa,
                                              bool has_a, int32_t j0, tr_edges_lv lv)
{
    tr_edge_summary s = tr_edge_summary_empty();
    TR_UNROLL
    for (int i = 0; i < ITEMS; i++) {
        bool rise, fall;
        tr_edge_pair(i ? xs[i - 1] : xa, i ? true : has_a, xs[i], lv.mid, rise, fall);
        tr_edge_summary_push(s, j0 + i, tr_edges_level(xs[i], lv), rise, fall);
    }
    return s;
}

/* Whether items with summary s can confirm a transition after prefix p. */
TR_HDI bool tr_edges_items_emit(const tr_edge_summary &p, const tr_edge_summary &s)
{
    return s.count > 0 ||
           (p.last != TR_STATE_NONE && s.first != TR_STATE_NONE && p.last != s.first);
}

/*
 * Replay the state machine over ITEMS samples from the state given by prefix p
 * (everything before them) and call emit(k, edge) for each transition, k being
 * its number in the launch. x is the whole launch's input (for crossing times
 * of earlier pairs), pos0 the absolute index of x[0], c the carry-in.
 */
template <int ITEMS, typename Emit>
TR_HDI void tr_edges_items_replay(const float (&xs)[ITEMS], float xa, bool has_a,
                                  int32_t j0, tr_edges_lv lv, const tr_edge_summary &p,
                                  const float *x, const tr_edges_carry &c, Emit emit)
{
    int state = p.last;
    int32_t cand = p.tail;
    uint32_t k = p.count;
    for (int i = 0; i < ITEMS; i++) {
        bool rise, fall;
        tr_edge_pair(i ? xs[i - 1] : xa, i ? true : has_a, xs[i], lv.mid, rise, fall);
        const int level = tr_edges_level(xs[i], lv);
        const int32_t j = j0 + i;
        if (state != TR_STATE_NONE && cand == TR_NONE_IDX &&
            (state == TR_STATE_LOW ? rise : fall))
            cand = j;
        if (level == TR_STATE_NONE) continue;
        if (state != TR_STATE_NONE && level != state) {
            tr_edge e;
            if (cand == TR_NONE_IDX) {
                e.time = NAN;
            } else if (cand == TR_CAND_CARRY) {
                e.time = c.cand;
            } else {
                const float x0 = cand > 0 ? x[cand - 1] : c.x_prev;
                e.time = tr_edges_cross_time(c.pos + cand - 1, x0, x[cand], lv.mid);
            }
            e.sample = c.pos + j;
            e.polarity = level == TR_STATE_HIGH ? 1 : -1;
            e.reserved = 0;
            emit(k++, e);
        }
        state = level;
        cand = TR_NONE_IDX;
    }
}

/* Carry after a launch of n > 0 samples whose inclusive summary is total. */
TR_HDI tr_edges_carry tr_edges_summary_carry_out(const tr_edge_summary &total,
                                                 const float *x, int32_t n,
                                                 tr_edges_lv lv, const tr_edges_carry &c)
{
    tr_edges_carry r;
    r.pos = c.pos + n;
    r.state = total.last;
    r.has_cand = total.last != TR_STATE_NONE && total.tail != TR_NONE_IDX;
    r.cand = 0.0;
    if (r.has_cand) {
        r.cand = total.tail == TR_CAND_CARRY
                     ? c.cand
                     : tr_edges_cross_time(c.pos + total.tail - 1,
                                           total.tail > 0 ? x[total.tail - 1] : c.x_prev,
                                           x[total.tail], lv.mid);
    }
    r.x_prev = x[n - 1];
    r.has_prev = 1;
    r.pad = 0;
    return r;
}

#endif /* TRANSIENT_CUDA_EDGES_SCAN_CUH */
