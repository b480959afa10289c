/*
 * Search-output streams for the candidates tests of the CUDA backend
 * (test_candidates_cuda_host.cpp through the emulation, test_candidates_gpu.c
 * on a GPU): time-major S/N and widths with noise, bursts that span
 * positions, channels and widths (some long enough to cross many calls),
 * NaN and Inf, and the comparison of two event lists of one call.
 */
#ifndef TRANSIENT_CANDIDATES_TEST_STREAMS_H
#define TRANSIENT_CANDIDATES_TEST_STREAMS_H

#include <transient/candidates.h>

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

/* n positions of nchan channels: noise of S/N sigma `noise`, bursts (one per
 * `gap` positions on average) of S/N up to 20 over up to 64 positions and
 * 8 channels, widths 1..wmax, one value in 500 NaN or +-Inf. */
static inline void cts_stream(tu_rng *r, size_t n, uint32_t nchan, double noise,
                              size_t gap, int32_t wmax, float *snr, int32_t *width)
{
    for (size_t i = 0; i < n * nchan; i++) {
        snr[i] = (float)(noise * tu_gauss(r));
        width[i] = (int32_t)tu_range(r, 1, wmax);
        const long u = tu_range(r, 0, 999);
        if (u == 0) snr[i] = NAN;
        if (u == 1) snr[i] = INFINITY;
        if (u == 2) snr[i] = -INFINITY;
    }
    const size_t nb = gap ? n / gap + 1 : 0;
    for (size_t b = 0; b < nb; b++) {
        const size_t p0 = (size_t)tu_range(r, 0, (long)n - 1);
        const size_t len = (size_t)tu_range(r, 1, 64);
        const uint32_t c0 = (uint32_t)tu_range(r, 0, (long)nchan - 1);
        const uint32_t cn = (uint32_t)tu_range(r, 1, 8);
        const int32_t w0 = (int32_t)tu_range(r, 1, wmax);
        for (size_t p = p0; p < p0 + len && p < n; p++)
            for (uint32_t c = c0; c < c0 + cn && c < nchan; c++) {
                if (tu_range(r, 0, 3) == 0) continue; /* holes split some bursts */
                snr[p * nchan + c] = (float)(6.0 + 14.0 * tu_uniform(r));
                const long dw = tu_range(r, -2, 2);
                width[p * nchan + c] = (int32_t)(w0 + dw < 1 ? 1 : w0 + dw);
            }
    }
}

/* Every field as order, for runs of events that tie in the closing order. */
static inline int cts_cmp(const void *pa, const void *pb)
{
    const tr_candidate *a = (const tr_candidate *)pa, *b = (const tr_candidate *)pb;
    if (a->width != b->width) return a->width < b->width ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->members != b->members) return a->members < b->members ? -1 : 1;
    if (a->snr != b->snr) return a->snr < b->snr ? -1 : 1;
    return 0;
}

static inline int cts_tie(const tr_candidate *a, const tr_candidate *b)
{
    return a->first == b->first && a->channel == b->channel && a->start == b->start;
}

static inline int cts_same(const tr_candidate *a, const tr_candidate *b)
{
    return a->start == b->start && a->peak == b->peak && a->first == b->first &&
           a->end == b->end && a->members == b->members && a->snr == b->snr &&
           a->width == b->width && a->channel == b->channel && a->chan_lo == b->chan_lo &&
           a->chan_hi == b->chan_hi && a->width_lo == b->width_lo &&
           a->width_hi == b->width_hi && a->truncated == b->truncated;
}

/* The events of one call of two objects in emission order; runs that tie in
 * the closing order (first, channel, start: the CPU leaves their order to
 * qsort) are compared as sets. Returns the number of differences. */
static inline size_t cts_compare(tr_candidate *a, size_t na, tr_candidate *b, size_t nb)
{
    if (na != nb) return na > nb ? na - nb : nb - na;
    size_t d = 0;
    for (size_t i = 0; i < na;) {
        size_t j = i + 1;
        while (j < na && cts_tie(&a[i], &a[j]) && cts_tie(&a[i], &b[j]))
            j++;
        if (j - i > 1) {
            qsort(a + i, j - i, sizeof *a, cts_cmp);
            qsort(b + i, j - i, sizeof *b, cts_cmp);
        }
        for (; i < j; i++)
            d += !cts_same(&a[i], &b[i]);
    }
    return d;
}

#endif /* TRANSIENT_CANDIDATES_TEST_STREAMS_H */
