/*
 * Stream state of the edge localizer's state machine, shared by the core
 * (lib/core/edges) and the CUDA variants (cuda/edges): every variant must
 * classify samples and interpolate crossing times with exactly these
 * definitions for the results to be identical. Plain C, usable from C99, C++
 * and CUDA device code; includes only the public edges.h.
 */
#ifndef TRANSIENT_CUDA_EDGES_STATE_H
#define TRANSIENT_CUDA_EDGES_STATE_H

#include <transient/edges.h>

#ifdef __CUDACC__
#define TR_HD __host__ __device__ __forceinline__
#else
#define TR_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* State of the signal as last established. */
enum { TR_STATE_NONE = 0, TR_STATE_LOW = 1, TR_STATE_HIGH = 2 };

/* Reference levels in the form the variants use them. */
typedef struct {
    float low;  /* x <= low is the low state */
    float mid;  /* crossing reference */
    float high; /* x >= high is the high state */
} tr_edges_lv;

/* Everything a variant needs to continue a stream exactly. */
typedef struct {
    int64_t pos;      /* absolute index of the next sample */
    double cand;      /* first crossing since the old state was left, if has_cand */
    float x_prev;     /* the sample before pos, if has_prev */
    int32_t state;    /* TR_STATE_* last established */
    int32_t has_cand; /* cand holds a crossing */
    int32_t has_prev; /* x_prev holds a sample */
    int32_t pad;      /* zero */
} tr_edges_carry;

/* Finite test that behaves the same under any compiler flags and on the GPU. */
TR_HD int tr_edges_finite(float x)
{
    return (x - x) == 0.0f;
}

/* Level of one sample: non-finite samples are intermediate. */
TR_HD int tr_edges_level(float x, tr_edges_lv lv)
{
    if (!tr_edges_finite(x)) return TR_STATE_NONE;
    return x <= lv.low ? TR_STATE_LOW : (x >= lv.high ? TR_STATE_HIGH : TR_STATE_NONE);
}

/* Interpolated crossing time between samples i0 and i0+1 (the one formula). */
TR_HD double tr_edges_cross_time(int64_t i0, float x0, float x1, float mid)
{
    return (double)i0 + ((double)mid - (double)x0) / ((double)x1 - (double)x0);
}

/* Carry state right before the sample of transition e (used when output fills). */
TR_HD void tr_edges_carry_before(tr_edges_carry *c, const tr_edge *e)
{
    c->state = e->polarity > 0 ? TR_STATE_LOW : TR_STATE_HIGH;
    c->has_cand = e->time == e->time; /* NaN time: no crossing was seen */
    c->cand = c->has_cand ? e->time : 0.0;
    c->pos = e->sample;
}

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_EDGES_STATE_H */
