/*
 * Synthetic pulsed test signals for the benchmark and the tests: a two-level
 * pulse train with random widths, finite rise times, noise, ringing after each
 * edge, runts, oscillation around mid before settling and optional NaN/Inf
 * drops. Deterministic from the seed: the same configuration gives the same
 * samples, bit for bit, on any IEEE 754 machine (own PRNG, no libm calls in the
 * sample path).
 */
#ifndef TRANSIENT_APPS_SIGNALS_H
#define TRANSIENT_APPS_SIGNALS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    float low_level;    /* nominal low state level (default 0) */
    float high_level;   /* nominal high state level (default 1), > low_level */
    double min_width;   /* shortest time between edges, samples (default 24) */
    double max_width;   /* longest time between edges, samples (default 200) */
    double rise;        /* duration of an edge's ramp, samples (default 3) */
    double noise_rms;   /* noise, fraction of the amplitude (default 0.02) */
    double ring_amp;    /* ringing after an edge, fraction of the amplitude (0.08) */
    double ring_period; /* ringing period, samples (default 7) */
    double ring_decay;  /* ringing e-folding time, samples (default 4) */
    double runt_prob;   /* probability that an edge is a runt instead (0.05) */
    double osc_prob;    /* probability that an edge dithers around mid (0.05) */
    double drop_prob;   /* probability per pulse of a NaN/Inf burst (default 0) */
    uint64_t seed;      /* PRNG seed (default 1) */
} tr_sig_config;

/* What the generator used and made. */
typedef struct {
    float low_level, high_level; /* nominal state levels */
    float low, mid, high;        /* reference levels: 10 %, 50 %, 90 % of amplitude */
    size_t edges;                /* completed state changes (the transitions to expect) */
    size_t runts;                /* excursions past mid that return to the old state */
    size_t oscillations;         /* edges that dither around mid before settling */
    size_t drops;                /* NaN/Inf samples written */
} tr_sig_info;

tr_sig_config tr_sig_config_default(void);

/*
 * Fill x[0..n) with the signal described by cfg; info (if not NULL) gets the
 * levels and the counts. The noise is bounded (3.5 rms), and with the default
 * amplitudes every sample stays within its intended state, so that a detector
 * with info's levels finds exactly info->edges transitions. Returns 0, or -1 if
 * cfg is invalid.
 */
int tr_sig_generate(const tr_sig_config *cfg, float *x, size_t n, tr_sig_info *info);

/*
 * Transitions in x[0..n) by the definition of edges.h (levels only: a sample
 * <= low is low, >= high is high, anything else, non-finite included, is
 * intermediate; a transition is a sample in the other state). The count
 * tr_sig_generate reports, for any prefix of a signal.
 */
size_t tr_sig_count_transitions(const float *x, size_t n, float low, float high);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_APPS_SIGNALS_H */
