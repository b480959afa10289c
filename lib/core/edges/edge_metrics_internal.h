/*
 * Internal contract between the edge metrics object (edge_metrics.c), which
 * keeps the stream, and the definitions of one transition's metrics
 * (edge_metrics_ref.c).
 */
#ifndef TRANSIENT_EDGE_METRICS_INTERNAL_H
#define TRANSIENT_EDGE_METRICS_INTERNAL_H

#include <transient/edge_metrics.h>
#include <transient/edges.h>

#ifdef __cplusplus
extern "C" {
#endif

/* State levels and state boundaries in use. */
typedef struct {
    double s1;  /* low state level */
    double s2;  /* high state level */
    float low;  /* upper boundary of the low state */
    float high; /* lower boundary of the high state */
} tr_metric_levels;

/* The samples one transition may use, and what bounds them. */
typedef struct {
    const float *x; /* x[j - origin] is absolute sample j */
    int64_t origin; /* absolute index of x[0] */
    int64_t lo;     /* first usable sample */
    int64_t hi;     /* last usable sample */
    int lo_window;  /* lo is set by the window (not a neighbour or the record start) */
    int hi_window;  /* hi is set by the window */
    int hi_record;  /* hi is set by the end of the record */
} tr_metric_span;

/* Index of the last of x[0..n) outside the band lo <= x <= hi (compared in
 * double; non-finite samples are outside), or -1: the settling search, the
 * one loop whose length is the time between transitions. */
typedef int64_t (*tr_edge_metric_scan_fn)(const float *x, int64_t n, double lo,
                                          double hi);

/* Reference (edge_metrics_ref.c) and CPU fast (edge_metrics_cpu.c) scans. */
int64_t tr_edge_metric_last_outside_ref(const float *x, int64_t n, double lo, double hi);
int64_t tr_edge_metric_last_outside_cpu(const float *x, int64_t n, double lo, double hi);

/* Waveform metrics of r (time, sample, polarity set) from the span: fills
 * start ... settling and flags; leaves width, period, duty alone. */
void tr_edge_metric_compute(const tr_edge_metrics_config *cfg, tr_metric_levels lv,
                            const tr_metric_span *sp, tr_edge_metric_scan_fn last_outside,
                            tr_edge_metric *r);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_EDGE_METRICS_INTERNAL_H */
