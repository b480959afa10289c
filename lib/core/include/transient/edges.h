/*
 * Edge (transition) localizer with IEEE Std 181 state levels.
 *
 * Paper: V. Khambadkar, L. Barford, F. C. Harris Jr., "Massively Parallel
 * Localization of Pulsed Signal Transitions Using a GPU" (transition localization
 * per IEEE Std 181-2003).
 *
 * Definition (all variants produce exactly these transitions, bit for bit):
 *   level(x) = LOW if x <= low, HIGH if x >= high, otherwise intermediate.
 *   Non-finite samples (NaN, +-Inf) are intermediate and never part of a crossing.
 *   A rising crossing of mid lies between samples i-1 and i when
 *   x[i-1] < mid <= x[i]; a falling one when x[i] < mid <= x[i-1]. Its time is
 *   (i-1) + (mid - x[i-1]) / (x[i] - x[i-1]), computed in double.
 *   A transition happens at the first sample that reaches the other state after
 *   the signal was last in one state. Its time is the first crossing of mid (in
 *   the direction of the transition) after the last sample in the old state.
 *   Runts (excursions that return to the old state) give no transition, and
 *   oscillation around mid gives one transition at its first crossing. Samples
 *   before the first sample in a state give none. If non-finite samples hid the
 *   crossing, the transition is still reported with time = NaN.
 *   The result does not depend on how the stream is split into process() calls.
 */
#ifndef TRANSIENT_EDGES_H
#define TRANSIENT_EDGES_H

#include <transient/common.h>
#include <transient/edge_metrics.h>
#include <transient/statelevels.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How the low/mid/high reference levels are obtained. */
typedef enum {
    TR_LEVELS_FIXED = 0, /* use config.low, config.mid, config.high */
    TR_LEVELS_AUTO = 1   /* estimate per IEEE Std 181 from the first level_samples */
} tr_levels_mode;

typedef struct {
    tr_levels_mode levels_mode; /* fixed levels or histogram estimate (default FIXED) */
    float low;                  /* fixed: upper boundary of the low state, l */
    float mid;                  /* fixed: mid reference level, m (low < mid < high) */
    float high;                 /* fixed: lower boundary of the high state, h */
    double tolerance_pct;       /* auto: state boundaries, % of amplitude (default 10) */
    double mid_pct;             /* auto: mid reference, % of amplitude (default 50) */
    unsigned hist_bins;         /* auto: histogram bins (default 100) */
    size_t level_samples;       /* auto: samples per estimate (default 65536) */
    uint64_t level_interval;    /* auto: re-estimate every this many samples, 0 = never */
    tr_backend backend;         /* AUTO, CPU or CUDA (default AUTO) */
    int device;                 /* CUDA device index (default 0) */
    tr_variant variant;         /* FAST (default), REFERENCE (CPU) or PAPER (CUDA) */
    size_t batch;               /* CUDA: samples per device batch (default 1 << 22) */
    int metrics;                /* compute IEEE 181 metrics (edge_metrics.h), default 0 */
    tr_edge_metrics_config metrics_cfg; /* their settings (state levels NaN: from the
                                           levels, with tolerance_pct in fixed mode) */
} tr_edges_config;

/* One transition. */
typedef struct tr_edge {
    double time;      /* absolute sample index of the mid crossing (NaN: hidden) */
    int64_t sample;   /* absolute index of the first sample in the new state */
    int32_t polarity; /* +1 rising (low to high), -1 falling (high to low) */
    int32_t reserved; /* zero */
} tr_edge;

typedef struct tr_edges tr_edges;

/* Defaults: fixed levels 0.1/0.5/0.9, auto parameters as documented above. */
tr_edges_config tr_edges_config_default(void);

/* Validate cfg and create a localizer; NULL on failure with err filled. */
tr_edges *tr_edges_create(const tr_edges_config *cfg, tr_error *err);

void tr_edges_destroy(tr_edges *q);

/* Forget all stream state (position back to 0, levels re-estimated if auto). */
tr_status tr_edges_reset(tr_edges *q);

/*
 * Process n samples, continuing from the previous call. Transitions go to out
 * (capacity out_cap), oldest first. If out fills up, processing stops at the
 * first sample whose transition does not fit (*n_consumed < n; the state is kept
 * just before that sample): call again with the remaining samples. At most one
 * transition is confirmed per sample, so with out_cap >= n every sample is consumed.
 * n == 0 is valid. In auto-levels mode the first level_samples samples are held
 * until the levels are known; their transitions come out on a later call (or
 * from tr_edges_flush).
 */
tr_status tr_edges_process(tr_edges *q, const float *x, size_t n, tr_edge *out,
                           size_t out_cap, size_t *n_consumed, size_t *n_out);

/*
 * End of stream in auto-levels mode: estimate the levels from the samples held
 * so far (if not yet estimated) and process them. Same out/capacity contract as
 * process(); call until *n_out < out_cap or nothing is held. Once nothing is
 * held, the metrics (cfg.metrics) of the last transitions are finished too.
 */
tr_status tr_edges_flush(tr_edges *q, tr_edge *out, size_t out_cap, size_t *n_out);

/*
 * CUDA backend only: process n samples that already live in device memory,
 * writing transitions to device memory d_out (capacity out_cap). Runs on the
 * object's stream and returns when the results are complete. Fixed levels (or
 * levels already estimated) are required.
 */
tr_status tr_edges_process_device(tr_edges *q, const float *d_x, size_t n, tr_edge *d_out,
                                  size_t out_cap, size_t *n_consumed, size_t *n_out);

/*
 * With cfg.metrics: take up to cap finished metric records of the transitions
 * processed so far, oldest first. A record is finished once its waveform
 * search is done (the next transition, metrics_cfg.window samples, or the end
 * of the stream) and the two following transitions are known (width, period);
 * tr_edges_flush at the end of the stream finishes the rest. TR_ERR_STATE
 * without cfg.metrics.
 */
tr_status tr_edges_metrics_read(tr_edges *q, tr_edge_metric *out, size_t cap,
                                size_t *n_out);

/* Change the levels at run time (validated; applies from the next sample). */
tr_status tr_edges_set_levels(tr_edges *q, float low, float mid, float high);

/* Change the auto-mode percentages (validated; used by the next estimate). */
tr_status tr_edges_set_percentages(tr_edges *q, double tolerance_pct, double mid_pct);

/* Current levels; returns TR_ERR_STATE while auto levels are not estimated yet. */
tr_status tr_edges_get_levels(const tr_edges *q, float *low, float *mid, float *high);

/* Absolute index of the next sample process() expects. */
uint64_t tr_edges_position(const tr_edges *q);

/* Backend and variant actually in use (AUTO resolved). */
tr_backend tr_edges_backend(const tr_edges *q);
tr_variant tr_edges_variant(const tr_edges *q);

/* Message of the last failed call on q ("" if none). */
const char *tr_edges_last_error(const tr_edges *q);

/* ---- derived pulse measurements --------------------------------------- */

/* A pulse between two consecutive transitions. */
typedef struct {
    double start;     /* time of the opening transition */
    double width;     /* time to the next transition (NaN if either time is NaN) */
    double period;    /* time to the next transition of the same polarity, or NaN */
    double duty;      /* width / period, or NaN */
    int32_t polarity; /* +1 high pulse (opened by a rising edge), -1 low pulse */
    int32_t reserved; /* zero */
} tr_pulse;

/*
 * Pulses from n consecutive transitions: n-1 pulses written to out (which must
 * hold n-1 entries; nothing is written for n < 2). Returns the count.
 */
size_t tr_edges_to_pulses(const tr_edge *edges, size_t n, tr_pulse *out);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_EDGES_H */
