/*
 * IEEE Std 181 transition and pulse metrics of the edges the localizer finds.
 *
 * Standard: IEEE Std 181-2003 "Transitions, pulses, and related waveforms"
 * (the reference of Khambadkar, Barford, Harris, "Massively Parallel
 * Localization of Pulsed Signal Transitions Using a GPU"); the metric names
 * follow MATLAB's (risetime, falltime, slewrate, overshoot, undershoot,
 * settlingtime, pulsewidth, pulseperiod, dutycycle).
 *
 * Definitions, for a transition with mid-reference instant t (tr_edge.time),
 * confirming sample s (tr_edge.sample) and polarity p (+1 rising, -1 falling);
 * state levels S1 < S2, amplitude A = S2 - S1; all instants in samples:
 *   reference levels  r_lo = S1 + ref_low_pct / 100 * A, r_hi likewise.
 *   start, end        the reference-level instants: for a rising transition the
 *                     last crossing of r_lo at or before the mid crossing's
 *                     sample interval, and the first crossing of r_hi at or after
 *                     it (falling: r_hi backwards, r_lo forwards); crossings
 *                     bracket like the mid crossing (x[j] < r <= x[j+1] rising)
 *                     and are interpolated linearly between the two samples.
 *   duration          end - start (rise or fall time); duration2 likewise with
 *                     the second reference pair (default 20 %/80 %).
 *   slew              p * (r_hi - r_lo) / duration (signed, units per sample).
 *   aberration regions (IEEE 181): pre-transition [a - f * duration, a] where a
 *                     is the last sample before the mid crossing in the initial
 *                     state; post-transition [s, s + f * duration] (s is the
 *                     first sample in the final state); f = region_factor.
 *   overshoot         the greatest deviation beyond the final state level in the
 *                     direction of the transition over the post-transition
 *                     region, in % of A (0 when none); undershoot the greatest
 *                     deviation short of it. pre_overshoot, pre_undershoot: the
 *                     same against the initial state level over the
 *                     pre-transition region.
 *   settling          from t to the last crossing (interpolated) of the band
 *                     |x - S_final| <= settle_pct / 100 * A before the search
 *                     ends; NaN if the signal is outside the band at the end.
 *   width             time to the next transition (pulse duration, IEEE 181:
 *                     between the mid-reference instants); period to the next
 *                     transition of the same polarity; duty = width / period.
 * Every search and region stays between the neighbouring transitions' mid
 * crossings (the interval of the record that belongs to this transition) and
 * within window samples of s; flags say when the window or the end of the
 * record cut one short. Non-finite samples hold no level: regions skip them,
 * a crossing search stops at them (NaN). A NaN transition time gives NaN
 * metrics. The results do not depend on how the stream is split into calls.
 */
#ifndef TRANSIENT_EDGE_METRICS_H
#define TRANSIENT_EDGE_METRICS_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double
        low_level; /* state level S1; NaN with high_level NaN: from the edges' levels */
    double high_level;    /* state level S2 (> low_level) */
    double ref_low_pct;   /* lower reference level, % of amplitude (default 10) */
    double ref_high_pct;  /* upper reference level, % of amplitude (default 90) */
    double ref2_low_pct;  /* second pair, lower (default 20) */
    double ref2_high_pct; /* second pair, upper (default 80) */
    double
        region_factor;  /* aberration region length in transition durations (default 3) */
    double settle_pct;  /* settling band half-width, % of amplitude (default 2) */
    size_t window;      /* samples used each side of s (default 65536) */
    tr_variant variant; /* FAST (default) or REFERENCE settling search: same results */
} tr_edge_metrics_config;

/* flags of a tr_edge_metric */
enum {
    TR_METRIC_CLIPPED = 1,   /* a search or region was cut by the window */
    TR_METRIC_RECORD_END = 2 /* the record ended before the post-transition search did */
};

/* The metrics of one transition (times and durations in samples). */
typedef struct {
    double time;           /* mid-reference instant (as tr_edge.time) */
    int64_t sample;        /* first sample in the new state (as tr_edge.sample) */
    int32_t polarity;      /* +1 rising, -1 falling */
    uint32_t flags;        /* TR_METRIC_* */
    double start;          /* first reference-level instant */
    double end;            /* second reference-level instant */
    double duration;       /* end - start: rise or fall time */
    double duration2;      /* the same with the second reference pair */
    double slew;           /* slew rate, level units per sample, signed */
    double overshoot;      /* post-transition region, % of amplitude */
    double undershoot;     /* post-transition region, % of amplitude */
    double pre_overshoot;  /* pre-transition region, % of amplitude */
    double pre_undershoot; /* pre-transition region, % of amplitude */
    double settling;       /* settling time (NaN: not settled) */
    double width;          /* to the next transition (NaN: none) */
    double period;         /* to the next transition of this polarity (NaN: none) */
    double duty;           /* width / period */
} tr_edge_metric;

typedef struct tr_edge_metrics tr_edge_metrics;

struct tr_edge; /* one transition, <transient/edges.h> */

/* Defaults as documented above. */
tr_edge_metrics_config tr_edge_metrics_config_default(void);

/* Validate cfg and create; NULL on failure with err filled. */
tr_edge_metrics *tr_edge_metrics_create(const tr_edge_metrics_config *cfg, tr_error *err);

void tr_edge_metrics_destroy(tr_edge_metrics *m);

/* Forget the stream (position back to 0, pending records dropped; levels kept). */
tr_status tr_edge_metrics_reset(tr_edge_metrics *m);

/*
 * Levels used from now on: state levels S1 < S2 (ignored when the config gives
 * them) and the state boundaries low < high of the localizer.
 */
tr_status tr_edge_metrics_set_levels(tr_edge_metrics *m, double low_level,
                                     double high_level, float low, float high);

/*
 * Continue the stream with n samples and the k transitions the localizer
 * confirmed in them (tr_edge.sample in the samples given so far, increasing).
 * Finished records are queued for tr_edge_metrics_read. Levels must be set
 * before the first transition.
 */
tr_status tr_edge_metrics_feed(tr_edge_metrics *m, const float *x, size_t n,
                               const struct tr_edge *edges, size_t k);

/* End of record: finish every pending transition (flags RECORD_END where cut). */
tr_status tr_edge_metrics_finish(tr_edge_metrics *m);

/* Take up to cap finished records, oldest first. */
tr_status tr_edge_metrics_read(tr_edge_metrics *m, tr_edge_metric *out, size_t cap,
                               size_t *n_out);

/* Message of the last failed call on m ("" if none). */
const char *tr_edge_metrics_last_error(const tr_edge_metrics *m);

/*
 * Time-interval error against an ideal clock fitted by least squares.
 * times: n transition instants (samples, increasing; NaN ones are skipped and
 * get NaN). ui: the nominal unit interval in samples, or 0 when every given
 * transition is one clock period (a clock's rising edges). Edge k is given the
 * clock index m_k = k (ui == 0) or round((t_k - t_first) / ui) within its
 * window; the ideal clock is the least-squares line t = a + b * m over the
 * window, and tie[k] = t_k - (a + b * m_k). Windows are consecutive blocks of
 * `window` finite instants (0: the whole array; a last short block with fewer
 * than 3 instants joins the previous one). rms and pk_pk (either may be NULL)
 * summarise all finite TIE values. Fails on ui < 0, a window of 1 or 2 or
 * non-increasing times.
 */
tr_status tr_edge_tie(const double *times, size_t n, double ui, size_t window,
                      double *tie, double *rms, double *pk_pk, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_EDGE_METRICS_H */
