/*
 * Edge localizer as a single-pass scan: the segment summary and its operator.
 *
 * The serial state machine (lib/core/edges/edges_ref.c) is a composition of
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

#include "edges/edges_state.h"

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
 * op(s, sample)): the definition the mask form below must agree with.
 * level: TR_STATE_*; rise/fall: the pair ending at j crosses.
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

#ifdef __CUDA_ARCH__
#define TR_CTZ32(v)     (__ffs(v) - 1)
#define TR_HIGHEST32(v) (31 - __clz(v))
#else
#define TR_CTZ32(v)     __builtin_ctz(v)
#define TR_HIGHEST32(v) (31 - __builtin_clz(v))
#endif

/* Bits at positions >= p and < p, for p in [0, 32]. */
TR_HDI uint32_t tr_bits_from(int p)
{
    return p >= 32 ? 0u : ~0u << p;
}
TR_HDI uint32_t tr_bits_below(int p)
{
    return p >= 32 ? ~0u : (1u << p) - 1u;
}

/*
 * A group of 32 consecutive samples as bit masks (bit i = sample gbase + i):
 * settled low/high samples and crossings of the pair ending at each sample.
 */
struct tr_edge_group {
    uint32_t lo;   /* finite and <= low */
    uint32_t hi;   /* finite and >= high */
    uint32_t rise; /* x[i-1] < mid <= x[i], both finite */
    uint32_t fall; /* x[i] < mid <= x[i-1], both finite */
};

/* Summary of one group (the mask form of pushing its 32 samples in order). */
TR_HDI tr_edge_summary tr_edges_group_summary(const tr_edge_group &g, int32_t gbase)
{
    tr_edge_summary s = tr_edge_summary_empty();
    const uint32_t settled = g.lo | g.hi;
    if (!settled) {
        if (g.rise) s.pre_rise = gbase + TR_CTZ32(g.rise);
        if (g.fall) s.pre_fall = gbase + TR_CTZ32(g.fall);
        return s;
    }
    const int f = TR_CTZ32(settled), l = TR_HIGHEST32(settled);
    const uint32_t upto_f = tr_bits_below(f + 1);
    if (g.rise & upto_f) s.pre_rise = gbase + TR_CTZ32(g.rise & upto_f);
    if (g.fall & upto_f) s.pre_fall = gbase + TR_CTZ32(g.fall & upto_f);
    s.first = (g.lo >> f) & 1u ? TR_STATE_LOW : TR_STATE_HIGH;
    s.last = (g.lo >> l) & 1u ? TR_STATE_LOW : TR_STATE_HIGH;
    const uint32_t away =
        (s.last == TR_STATE_LOW ? g.rise : g.fall) & tr_bits_from(l + 1);
    if (away) s.tail = gbase + TR_CTZ32(away);
    /* Transitions: each switch between low and high among the settled samples. */
    int state = s.first, p = f;
    for (;;) {
        const uint32_t opp = (state == TR_STATE_LOW ? g.hi : g.lo) & tr_bits_from(p + 1);
        if (!opp) break;
        p = TR_CTZ32(opp);
        state = state == TR_STATE_LOW ? TR_STATE_HIGH : TR_STATE_LOW;
        s.count++;
    }
    return s;
}

/* Whether a group with summary s can confirm a transition after prefix p. */
TR_HDI bool tr_edges_group_emits(const tr_edge_summary &p, const tr_edge_summary &s)
{
    return s.count > 0 ||
           (p.last != TR_STATE_NONE && s.first != TR_STATE_NONE && p.last != s.first);
}

/* Time of the crossing named by local pair-end index cand (see top comment). */
TR_HDI double tr_edges_cand_time(int32_t cand, const float *x, const tr_edges_carry &c,
                                 tr_edges_lv lv)
{
    if (cand == TR_NONE_IDX) return NAN;
    if (cand == TR_CAND_CARRY) return c.cand;
    const float x0 = cand > 0 ? x[cand - 1] : c.x_prev;
    return tr_edges_cross_time(c.pos + cand - 1, x0, x[cand], lv.mid);
}

/*
 * Replay the state machine over one group from the state given by prefix p
 * (everything before the group) and call emit(k, edge) for each transition, k
 * being its number in the launch. Jumps from event to event with bit scans, as
 * the CPU variant does. x is the launch's input, c the carry-in.
 */
template <typename Emit>
TR_HDI void tr_edges_group_replay(const tr_edge_group &g, int32_t gbase,
                                  const tr_edge_summary &p, const float *x,
                                  const tr_edges_carry &c, tr_edges_lv lv, Emit emit)
{
    int state = p.last;
    int32_t cand = p.tail;
    uint32_t k = p.count;
    int p0 = 0;
    while (p0 < 32) {
        if (state == TR_STATE_NONE) {
            const uint32_t s = (g.lo | g.hi) & tr_bits_from(p0);
            if (!s) break;
            const int q = TR_CTZ32(s);
            state = (g.lo >> q) & 1u ? TR_STATE_LOW : TR_STATE_HIGH;
            cand = TR_NONE_IDX;
            p0 = q + 1;
            continue;
        }
        const uint32_t olds_all = state == TR_STATE_LOW ? g.lo : g.hi;
        const uint32_t news = (state == TR_STATE_LOW ? g.hi : g.lo) & tr_bits_from(p0);
        const uint32_t cross = state == TR_STATE_LOW ? g.rise : g.fall;
        const int end = news ? TR_CTZ32(news) : 32;
        uint32_t window = tr_bits_from(p0);
        const uint32_t olds = olds_all & window & tr_bits_below(end);
        if (olds) {
            cand = TR_NONE_IDX;
            window = tr_bits_from(TR_HIGHEST32(olds) + 1);
        }
        if (cand == TR_NONE_IDX) {
            const uint32_t cr = cross & window & tr_bits_below(end + 1);
            if (cr) cand = gbase + TR_CTZ32(cr);
        }
        if (!news) break;
        tr_edge e;
        e.time = tr_edges_cand_time(cand, x, c, lv);
        e.sample = c.pos + gbase + end;
        e.polarity = state == TR_STATE_LOW ? 1 : -1;
        e.reserved = 0;
        emit(k++, e);
        state = state == TR_STATE_LOW ? TR_STATE_HIGH : TR_STATE_LOW;
        cand = TR_NONE_IDX;
        p0 = end + 1;
    }
}

/*
 * Packed summary for the scan across tiles: 64 bits, so that CUB's tile state
 * keeps status and value in one 16-byte word (one atomic load per predecessor
 * in the look-back). Later tiles need only first, last, tail and count; the
 * first crossings before the first settled sample matter only while no sample
 * has settled (first == NONE), so they share the bits of tail and count:
 *   bits 0-1 first, 2-3 last,
 *   first != NONE: bits 4-33 tail + 1 (0x3fffffff = none), 34-63 count
 *   first == NONE: bits 4-33 pre_rise, 34-63 pre_fall (0x3fffffff = none)
 * Valid for launches of up to 2^29 samples. The operator never reads the
 * dropped fields, so packing commutes with it exactly.
 */
#define TR_PACK_MAX_SAMPLES (1 << 29)
#define TR_PACK_NONE        0x3fffffffull

TR_HDI uint64_t tr_pack_idx(int32_t v, int32_t bias)
{
    return v == TR_NONE_IDX ? TR_PACK_NONE : (uint64_t)(uint32_t)(v + bias);
}

TR_HDI int32_t tr_unpack_idx(uint64_t v, int32_t bias)
{
    return v == TR_PACK_NONE ? TR_NONE_IDX : (int32_t)v - bias;
}

TR_HDI uint64_t tr_edge_summary_pack(const tr_edge_summary &s)
{
    uint64_t w = (uint64_t)(uint8_t)s.first | ((uint64_t)(uint8_t)s.last << 2);
    if (s.first == TR_STATE_NONE)
        return w | tr_pack_idx(s.pre_rise, 0) << 4 | tr_pack_idx(s.pre_fall, 0) << 34;
    return w | tr_pack_idx(s.tail, 1) << 4 | (uint64_t)s.count << 34;
}

TR_HDI tr_edge_summary tr_edge_summary_unpack(uint64_t w)
{
    tr_edge_summary s = tr_edge_summary_empty();
    s.first = (int8_t)(w & 3u);
    s.last = (int8_t)((w >> 2) & 3u);
    const uint64_t a = (w >> 4) & TR_PACK_NONE, b = (w >> 34) & TR_PACK_NONE;
    if (s.first == TR_STATE_NONE) {
        s.pre_rise = tr_unpack_idx(a, 0);
        s.pre_fall = tr_unpack_idx(b, 0);
    } else {
        s.tail = tr_unpack_idx(a, 1);
        s.count = (uint32_t)b;
    }
    return s;
}

/* The scan operator on packed summaries. */
struct tr_edge_packed_op {
    TR_HDI uint64_t operator()(uint64_t a, uint64_t b) const
    {
        return tr_edge_summary_pack(
            tr_edge_summary_op()(tr_edge_summary_unpack(a), tr_edge_summary_unpack(b)));
    }
};

/* Carry after a launch of n > 0 samples whose inclusive summary is total. */
TR_HDI tr_edges_carry tr_edges_summary_carry_out(const tr_edge_summary &total,
                                                 const float *x, int32_t n,
                                                 tr_edges_lv lv, const tr_edges_carry &c)
{
    tr_edges_carry r;
    r.pos = c.pos + n;
    r.state = total.last;
    r.has_cand = total.last != TR_STATE_NONE && total.tail != TR_NONE_IDX;
    r.cand = r.has_cand ? tr_edges_cand_time(total.tail, x, c, lv) : 0.0;
    r.x_prev = x[n - 1];
    r.has_prev = 1;
    r.pad = 0;
    return r;
}

#endif /* TRANSIENT_CUDA_EDGES_SCAN_CUH */
