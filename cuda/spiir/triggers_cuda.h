/*
 * CUDA backend of the SPIIR trigger search (<transient/spiir_triggers.h>):
 * the C interface between lib/core/spiir/spiir_triggers.c and the scan on
 * the device (triggers_cuda.cu, kernels in triggers_kernels.cuh), and what
 * both sides read identically: the state of a template's open cluster and
 * the trigger made from it (the parabola through the peak's neighbours).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equation 8: the SNR these triggers are taken from).
 *
 * One device thread per template walks the rows of an SNR block in order
 * (the [k][t] layout makes every step coalesced across templates), skipping
 * tiles of rows that cannot change its cluster, with the reference's
 * decisions in double; decided clusters go to a bounded device
 * list through an atomic counter, and only they cross PCIe. The cluster
 * states stay on the device between calls.
 */
#ifndef TRANSIENT_CUDA_SPIIR_TRIGGERS_CUDA_H
#define TRANSIENT_CUDA_SPIIR_TRIGGERS_CUDA_H

#include <transient/spiir_triggers.h>

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks a |z|^2 that is unknown (no such sample) or not finite. */
#define TR_SPIIR_TRIG_NO_VALUE (-1.0)

/* The open cluster of one template (CPU and device state alike). */
typedef struct {
    uint64_t k;        /* its candidate's sample */
    double val;        /* |z|^2 of the candidate */
    double prev;       /* |z|^2 of the sample before the candidate, or NO_VALUE */
    double next;       /* |z|^2 of the sample after it, or NO_VALUE (not seen yet) */
    double last;       /* |z|^2 of the latest sample scanned, or NO_VALUE */
    float re, im;      /* z of the candidate */
    uint32_t open;     /* a cluster is open */
    uint32_t reserved; /* 0 */
} tr_spiir_trig_cluster;

/* A cluster decided on the device. */
typedef struct {
    uint64_t decided;        /* the sample that decided it */
    tr_spiir_trig_cluster c; /* its state then */
    uint32_t t;              /* template */
    uint32_t reserved;       /* 0 */
} tr_spiir_trig_event;

/*
 * The trigger of an open cluster c of template t: the peak refined by the
 * vertex of the parabola through |z| at the candidate and its two neighbours,
 * when both are known and the candidate is a strict local maximum. Every
 * variant makes its triggers here, so they agree bit for bit.
 */
static inline void tr_spiir_trig_make(const tr_spiir_trig_cluster *c, uint32_t t,
                                      tr_spiir_trigger *out)
{
    double delta = 0.0;
    const double y1 = sqrt(c->val);
    if (c->prev != TR_SPIIR_TRIG_NO_VALUE && c->next != TR_SPIIR_TRIG_NO_VALUE &&
        c->val > c->prev && c->val > c->next) {
        const double y0 = sqrt(c->prev), y2 = sqrt(c->next);
        /* Vertex of the parabola through (-1, y0), (0, y1), (1, y2). */
        delta = 0.5 * (y0 - y2) / (y0 - 2.0 * y1 + y2);
        if (delta > 0.5) delta = 0.5;
        if (delta < -0.5) delta = -0.5;
    }
    out->sample = c->k;
    out->peak = (double)c->k + delta;
    out->template_index = t;
    out->snr = (float)y1;
    out->re = c->re;
    out->im = c->im;
    out->reserved = 0;
}

typedef struct tr_cuda_spiir_trig tr_cuda_spiir_trig;

/* Device list entries: at least ntemplates (a flush and any one sample fit). */
tr_status tr_cuda_spiir_trig_create(int device, uint32_t ntemplates, uint32_t window,
                                    size_t capacity, tr_cuda_spiir_trig **ctx,
                                    tr_error *err);
void tr_cuda_spiir_trig_destroy(tr_cuda_spiir_trig *ctx);

/* Every cluster closed, no sample seen. */
tr_status tr_cuda_spiir_trig_reset(tr_cuda_spiir_trig *ctx, tr_error *err);

/* The ntemplates cluster states to the host (get) or from it (set). */
tr_status tr_cuda_spiir_trig_get(tr_cuda_spiir_trig *ctx, tr_spiir_trig_cluster *c,
                                 tr_error *err);
tr_status tr_cuda_spiir_trig_set(tr_cuda_spiir_trig *ctx, const tr_spiir_trig_cluster *c,
                                 tr_error *err);

/*
 * Scan n rows of SNR (snr[(k * ntemplates + t) * 2 + {0, 1}], device memory
 * when on_device, 8-byte aligned; else host memory, copied in), row 0 being
 * sample pos0, against threshold^2 in double. Stops before the first row at
 * which fewer than ntemplates of `room` entries would be left (the rule of
 * tr_spiir_triggers_process). *ev (owned by the context, valid until the next
 * call) receives *nev decided clusters in the order of the deciding sample,
 * then of template; *consumed the rows scanned. A device list that fills up
 * is never lost: the scan is cut before the first row whose clusters did not
 * fit and resumed from there.
 */
tr_status tr_cuda_spiir_trig_scan(tr_cuda_spiir_trig *ctx, const float *snr, size_t n,
                                  int on_device, uint64_t pos0, float threshold,
                                  size_t room, const tr_spiir_trig_event **ev,
                                  size_t *nev, size_t *consumed, tr_error *err);

/* Decide every open cluster at sample pos (template order) and close it. */
tr_status tr_cuda_spiir_trig_flush(tr_cuda_spiir_trig *ctx, uint64_t pos,
                                   const tr_spiir_trig_event **ev, size_t *nev,
                                   tr_error *err);

/* Scan rounds the last scan call needed (1 unless the device list filled up). */
uint32_t tr_cuda_spiir_trig_rounds(const tr_cuda_spiir_trig *ctx);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_SPIIR_TRIGGERS_CUDA_H */
