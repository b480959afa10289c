/*
 * Internal contract between the boxcar search object (boxcar.c) and its CPU
 * variants (boxcar_ref.c, boxcar_cpu.c).
 *
 * The object runs the normalisation first; a variant receives the cleaned
 * samples (finite, baseline removed) of positions [P, P + n) of every channel,
 * time-major y[k * nchan + c], where P is the position before the call, and
 * writes the n final positions P + k - latency (Y = 0, W = 0 below 0). The
 * normalisation object has consumed the samples already, so that the values
 * in effect for every start the variant still evaluates can be looked up
 * (the object creates it with lookback >= latency + TR_BOXCAR_SUBCHUNK, and
 * never passes more than TR_BOXCAR_SUBCHUNK samples per call).
 * flush writes the last latency positions from the samples seen so far.
 * When st (per-stage outputs) is not NULL, the variant appends for every
 * stage i the starts n * s_i >= 0 it finalised to st[i] (count grows; the
 * object sizes the buffers).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 */
#ifndef TRANSIENT_BOXCAR_VARIANTS_H
#define TRANSIENT_BOXCAR_VARIANTS_H

#include "boxcar/boxcar_plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most samples per channel of one variant call. */
#define TR_BOXCAR_SUBCHUNK 4096

/* Per-stage output buffer of one call, filled by a variant. */
typedef struct {
    uint64_t first; /* decimated index of entry 0 (set by the first append) */
    size_t count;   /* entries per channel so far */
    size_t cap;     /* entries per channel the buffers hold */
    float *snr;     /* cap * nchan */
    int32_t *width; /* cap * nchan */
} tr_boxcar_stage_buf;

/* Reference: direct sums in double, reads like eqs. 2 and 4. */
typedef struct tr_boxcar_ref tr_boxcar_ref;
tr_boxcar_ref *tr_boxcar_ref_create(const tr_boxcar_plan *plan, uint32_t nchan,
                                    const tr_boxcar_norm *norm); /* NULL: no memory */
void tr_boxcar_ref_destroy(tr_boxcar_ref *r);
void tr_boxcar_ref_reset(tr_boxcar_ref *r);
void tr_boxcar_ref_run(tr_boxcar_ref *r, const float *y, size_t n, float *snr,
                       int32_t *width, tr_boxcar_stage_buf *st);
void tr_boxcar_ref_flush(tr_boxcar_ref *r, float *snr, int32_t *width,
                         tr_boxcar_stage_buf *st);

/* Optimized: float32 decimated partial sums, SIMD over consecutive starts. */
typedef struct tr_boxcar_cpu tr_boxcar_cpu;
tr_boxcar_cpu *tr_boxcar_cpu_create(const tr_boxcar_plan *plan, uint32_t nchan,
                                    const tr_boxcar_norm *norm); /* NULL: no memory */
void tr_boxcar_cpu_destroy(tr_boxcar_cpu *c);
void tr_boxcar_cpu_reset(tr_boxcar_cpu *c);
void tr_boxcar_cpu_run(tr_boxcar_cpu *c, const float *y, size_t n, float *snr,
                       int32_t *width, tr_boxcar_stage_buf *st);
void tr_boxcar_cpu_flush(tr_boxcar_cpu *c, float *snr, int32_t *width,
                         tr_boxcar_stage_buf *st);
/* 1 when a run ran out of memory (its output is then incomplete). */
int tr_boxcar_cpu_failed(const tr_boxcar_cpu *c);

/* Choose the optimized variant's kernel: "generic", "avx2" or NULL for the
 * best this CPU supports. Returns 0 if unavailable. Both give the same bits.
 * For tests and benchmarks. */
int tr_boxcar_cpu_select(const char *kernel);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_VARIANTS_H */
