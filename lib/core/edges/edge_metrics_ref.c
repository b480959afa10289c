/*
 * The metrics of one transition, read off the definitions of IEEE Std 181-2003
 * (reference-level instants, transition duration, aberration regions, settling
 * time) as <transient/edge_metrics.h> states them, one sample at a time.
 * The transitions come from the localizer of Khambadkar, Barford and Harris,
 * "Massively Parallel Localization of Pulsed Signal Transitions Using a GPU".
 */
#include "edges/edge_metrics_internal.h"

#include <math.h>

/* What a search or region ran into. */
typedef struct {
    int lo; /* wanted samples before the span */
    int hi; /* wanted samples after the span */
} hits;

static int finite_f(float v)
{
    return (v - v) == 0.0f;
}

static float at(const tr_metric_span *sp, int64_t j)
{
    return sp->x[j - sp->origin];
}

/* x[j] and x[j+1] bracket level in direction dir (+1: x[j] < r <= x[j+1]). */
static int brackets(float a, float b, double r, int dir)
{
    return dir > 0 ? ((double)a < r && r <= (double)b)
                   : ((double)b < r && r <= (double)a);
}

static double interpolate(int64_t j, float a, float b, double r)
{
    return (double)j + (r - (double)a) / ((double)b - (double)a);
}

/* Last crossing of r in direction dir in an interval [j, j+1] with j <= from. */
static double cross_back(const tr_metric_span *sp, int64_t from, double r, int dir,
                         hits *h)
{
    for (int64_t j = from; j >= sp->lo; j--) {
        const float a = at(sp, j), b = at(sp, j + 1);
        if (!finite_f(a) || !finite_f(b)) return NAN;
        if (brackets(a, b, r, dir)) return interpolate(j, a, b, r);
    }
    h->lo = 1;
    return NAN;
}

/* First crossing of r in direction dir in an interval [j, j+1] with j >= from. */
static double cross_fwd(const tr_metric_span *sp, int64_t from, double r, int dir,
                        hits *h)
{
    for (int64_t j = from; j + 1 <= sp->hi; j++) {
        const float a = at(sp, j), b = at(sp, j + 1);
        if (!finite_f(a) || !finite_f(b)) return NAN;
        if (brackets(a, b, r, dir)) return interpolate(j, a, b, r);
    }
    h->hi = 1;
    return NAN;
}

/* Reference-level instants of one pair (lo_pct, hi_pct) around interval i0. */
static void instants(const tr_metric_span *sp, int64_t i0, int pol, double s1, double amp,
                     double lo_pct, double hi_pct, double *start, double *end, hits *h)
{
    const double r_lo = s1 + lo_pct / 100.0 * amp;
    const double r_hi = s1 + hi_pct / 100.0 * amp;
    *start = cross_back(sp, i0, pol > 0 ? r_lo : r_hi, pol, h);
    *end = cross_fwd(sp, i0, pol > 0 ? r_hi : r_lo, pol, h);
}

/* Greatest deviations beyond (over) and short of (under) level over samples
 * [a, b], in the direction pol, in % of amp; 0 when none, NaN for no sample.
 * The deviation is monotonic in the sample, so the extremes give it. */
static void deviations(const tr_metric_span *sp, double a, double b, double level,
                       int pol, double amp, double *over, double *under, hits *h)
{
    int64_t j0 = (int64_t)ceil(a), j1 = (int64_t)floor(b);
    if (j0 < sp->lo) {
        h->lo = 1;
        j0 = sp->lo;
    }
    if (j1 > sp->hi) {
        h->hi = 1;
        j1 = sp->hi;
    }
    float lo = INFINITY, hi = -INFINITY;
    int any = 0;
    for (int64_t j = j0; j <= j1; j++) {
        const float v = at(sp, j);
        if (!finite_f(v)) continue;
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        any = 1;
    }
    if (!any) {
        *over = *under = NAN;
        return;
    }
    const double most = pol > 0 ? hi : lo, least = pol > 0 ? lo : hi;
    const double o = pol * (most - level) / amp * 100.0;
    const double u = -(pol * (least - level) / amp * 100.0);
    *over = o > 0.0 ? o : 0.0;
    *under = u > 0.0 ? u : 0.0;
}

/* Last sample at or before i0 in the initial state (IEEE 181: the fixed
 * instant that ends the pre-transition aberration region), or -1. */
static int64_t last_in_initial_state(const tr_metric_span *sp, int64_t i0, int pol,
                                     tr_metric_levels lv, hits *h)
{
    for (int64_t j = i0; j >= sp->lo; j--) {
        const float v = at(sp, j);
        if (!finite_f(v)) continue;
        if (pol > 0 ? v <= lv.low : v >= lv.high) return j;
    }
    h->lo = 1;
    return -1;
}

/* The band [lo, hi] holds v (non-finite samples never are inside). */
static int in_band(float v, double lo, double hi)
{
    return lo <= (double)v && (double)v <= hi;
}

int64_t tr_edge_metric_last_outside_ref(const float *x, int64_t n, double lo, double hi)
{
    int64_t j = n - 1;
    while (j >= 0 && in_band(x[j], lo, hi))
        j--;
    return j;
}

/* Settling: from t to the last entry into the band [lo, hi] around the final
 * level. When the next transition ends the search, the run outside the band
 * that leads into it is its departure, not a failure to settle. */
static double settling(const tr_metric_span *sp, int64_t i0, double t, double lo,
                       double hi, tr_edge_metric_scan_fn last_outside, hits *h)
{
    int64_t j = sp->hi;
    if (!sp->hi_window && !sp->hi_record) {
        while (j >= i0 && !in_band(at(sp, j), lo, hi))
            j--;
        if (j < i0) return NAN; /* never inside the band */
    }
    j = i0 + last_outside(&sp->x[i0 - sp->origin], j - i0 + 1, lo, hi);
    if (j < i0) return (double)i0 - t; /* inside the band over the whole search */
    if (j == sp->hi) {                 /* outside the band where the search ends */
        h->hi = 1;
        return NAN;
    }
    const float v = at(sp, j);
    if (!finite_f(v)) return (double)(j + 1) - t;
    return interpolate(j, v, at(sp, j + 1), (double)v > hi ? hi : lo) - t;
}

void tr_edge_metric_compute(const tr_edge_metrics_config *cfg, tr_metric_levels lv,
                            const tr_metric_span *sp, tr_edge_metric_scan_fn last_outside,
                            tr_edge_metric *r)
{
    r->start = r->end = r->duration = r->duration2 = r->slew = NAN;
    r->overshoot = r->undershoot = r->pre_overshoot = r->pre_undershoot = NAN;
    r->settling = NAN;
    r->flags = 0;
    if (r->time != r->time) return; /* the crossing was hidden by non-finite samples */

    const int pol = r->polarity > 0 ? 1 : -1;
    const double amp = lv.s2 - lv.s1;
    const double s_init = pol > 0 ? lv.s1 : lv.s2;
    const double s_final = pol > 0 ? lv.s2 : lv.s1;
    const int64_t i0 = (int64_t)floor(r->time);
    hits h = {0, 0};
    if (i0 < sp->lo) {
        h.lo = 1;
    } else {
        double s2, e2;
        instants(sp, i0, pol, lv.s1, amp, cfg->ref_low_pct, cfg->ref_high_pct, &r->start,
                 &r->end, &h);
        instants(sp, i0, pol, lv.s1, amp, cfg->ref2_low_pct, cfg->ref2_high_pct, &s2, &e2,
                 &h);
        r->duration = r->end - r->start;
        r->duration2 = e2 - s2;
        r->slew =
            pol * (cfg->ref_high_pct - cfg->ref_low_pct) / 100.0 * amp / r->duration;
        if (r->duration == r->duration) {
            const double len = cfg->region_factor * r->duration;
            deviations(sp, (double)r->sample, (double)r->sample + len, s_final, pol, amp,
                       &r->overshoot, &r->undershoot, &h);
            const int64_t a = last_in_initial_state(sp, i0, pol, lv, &h);
            if (a >= 0)
                deviations(sp, (double)a - len, (double)a, s_init, pol, amp,
                           &r->pre_overshoot, &r->pre_undershoot, &h);
        }
        const double band = cfg->settle_pct / 100.0 * amp;
        r->settling =
            settling(sp, i0, r->time, s_final - band, s_final + band, last_outside, &h);
    }
    if ((h.lo && sp->lo_window) || (h.hi && sp->hi_window)) r->flags |= TR_METRIC_CLIPPED;
    if (h.hi && sp->hi_record) r->flags |= TR_METRIC_RECORD_END;
}
