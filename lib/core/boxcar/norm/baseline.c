/*
 * Baselines of the boxcar normalisation: the causal running median of the
 * last M samples (two indexed heaps) and the block median (the median of the
 * medians of the last 16 blocks).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.2.
 */
#include "boxcar/norm/norm_internal.h"

#include <math.h>

/*
 * Running median of channel c: two heaps of ring slots, the lower half in a
 * max-heap and the upper half in a min-heap (sizes equal, or the lower one
 * larger by one), each slot's place recorded so that the sample leaving the
 * window is removed in O(log M).
 */
typedef struct {
    const float *v; /* ring values */
    uint32_t *h;    /* heap of slots */
    int32_t *where; /* slot -> +-(index + 1) */
    int sign;       /* +1: max-heap (lower half), -1: min-heap (upper half) */
} heap_t;

/* a above b in heap order */
static int h_above(const heap_t *H, uint32_t a, uint32_t b)
{
    return H->sign > 0 ? H->v[a] > H->v[b] : H->v[a] < H->v[b];
}

static void h_put(heap_t *H, uint32_t i, uint32_t slot)
{
    H->h[i] = slot;
    H->where[slot] = H->sign * (int32_t)(i + 1);
}

static void h_up(heap_t *H, uint32_t i)
{
    const uint32_t slot = H->h[i];
    while (i > 0) {
        const uint32_t par = (i - 1) / 2;
        if (!h_above(H, slot, H->h[par])) break;
        h_put(H, i, H->h[par]);
        i = par;
    }
    h_put(H, i, slot);
}

static void h_down(heap_t *H, uint32_t n, uint32_t i)
{
    const uint32_t slot = H->h[i];
    for (;;) {
        uint32_t ch = 2 * i + 1;
        if (ch >= n) break;
        if (ch + 1 < n && h_above(H, H->h[ch + 1], H->h[ch])) ch++;
        if (!h_above(H, H->h[ch], slot)) break;
        h_put(H, i, H->h[ch]);
        i = ch;
    }
    h_put(H, i, slot);
}

static void h_push(heap_t *H, uint32_t *n, uint32_t slot)
{
    h_put(H, *n, slot);
    h_up(H, (*n)++);
}

/* Remove the entry at index i; returns its slot. */
static uint32_t h_remove(heap_t *H, uint32_t *n, uint32_t i)
{
    const uint32_t slot = H->h[i];
    const uint32_t last = --(*n);
    if (i != last) {
        const uint32_t m = H->h[last];
        h_put(H, i, m);
        if (i > 0 && h_above(H, m, H->h[(i - 1) / 2]))
            h_up(H, i);
        else
            h_down(H, *n, i);
    }
    H->where[slot] = 0;
    return slot;
}

float tr_norm_median_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, float x)
{
    const uint32_t M = q->cfg.baseline_window;
    const size_t Hh = BL_HEAP(M);
    float *ring = q->bl_ring + (size_t)c * M;
    int32_t *where = q->bl_where + (size_t)c * M;
    heap_t lo = {ring, q->bl_lo + (size_t)c * Hh, where, +1};
    heap_t hi = {ring, q->bl_hi + (size_t)c * Hh, where, -1};
    uint32_t nlo = q->bl_nlo[c], n = q->bl_n[c], nhi = n - nlo;
    const uint32_t slot = (uint32_t)(p % M);
    if (p >= M && where[slot] != 0) { /* the sample leaving the window */
        const int32_t w = where[slot];
        if (w > 0)
            h_remove(&lo, &nlo, (uint32_t)(w - 1));
        else
            h_remove(&hi, &nhi, (uint32_t)(-w - 1));
    }
    ring[slot] = x;
    if (isfinite(x)) {
        if (nlo == 0 || x <= ring[lo.h[0]])
            h_push(&lo, &nlo, slot);
        else
            h_push(&hi, &nhi, slot);
    }
    /* rebalance: nlo == nhi or nlo == nhi + 1 */
    if (nlo > nhi + 1) h_push(&hi, &nhi, h_remove(&lo, &nlo, 0));
    if (nhi > nlo) h_push(&lo, &nlo, h_remove(&hi, &nhi, 0));
    q->bl_nlo[c] = nlo;
    q->bl_n[c] = n = nlo + nhi;
    if (n == 0) return 0.0f;
    if (nlo > nhi) return ring[lo.h[0]];
    return (float)(0.5 * ((double)ring[lo.h[0]] + (double)ring[hi.h[0]]));
}

/* Median of the n >= 1 values v (reordered): quickselect; an even count
 * takes the mean of the two middle values. */
static float median_select(float *v, uint32_t n)
{
    const uint32_t k = n / 2;
    uint32_t lo = 0, hi = n - 1;
    while (lo < hi) { /* Lomuto partition, pivot moved to hi */
        const uint32_t mid = lo + (hi - lo) / 2;
        float t = v[mid];
        v[mid] = v[hi];
        v[hi] = t;
        const float piv = v[hi];
        uint32_t st = lo;
        for (uint32_t i = lo; i < hi; i++)
            if (v[i] < piv) {
                t = v[i];
                v[i] = v[st];
                v[st] = t;
                st++;
            }
        t = v[st];
        v[st] = v[hi];
        v[hi] = t;
        if (st == k) break;
        if (st < k)
            lo = st + 1;
        else
            hi = st - 1;
    }
    const float upper = v[k];
    if (n & 1u) return upper;
    float lower = v[0]; /* the largest value left of k */
    for (uint32_t i = 1; i < k; i++)
        if (v[i] > lower) lower = v[i];
    return (float)(0.5 * ((double)lower + (double)upper));
}

float tr_norm_block_median_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, int bend,
                                float x)
{
    const uint32_t b = q->cfg.baseline_window / BB_BLOCKS;
    float *blk = q->bb_blk + (size_t)c * b, *med = q->bb_med + (size_t)c * BB_BLOCKS;
    if (q->bb_have[c] == 0 && isfinite(x)) { /* warm-up: the first finite sample */
        q->bb_base[c] = x;
        q->bb_have[c] = 2;
    }
    const float base = q->bb_have[c] ? q->bb_base[c] : 0.0f;
    if (isfinite(x)) blk[q->bb_n[c]++] = x;
    if (bend) { /* block complete: its median, then the new baseline */
        med[(p / b) % BB_BLOCKS] = q->bb_n[c] ? median_select(blk, q->bb_n[c]) : NAN;
        q->bb_n[c] = 0;
        float tmp[BB_BLOCKS];
        uint32_t m = 0;
        for (uint32_t i = 0; i < BB_BLOCKS; i++)
            if (isfinite(med[i])) tmp[m++] = med[i];
        if (m) {
            q->bb_base[c] = median_select(tmp, m);
            q->bb_have[c] = 1;
        }
    }
    return base;
}
