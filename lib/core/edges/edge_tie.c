/*
 * Time-interval error of transitions against an ideal clock recovered by a
 * least-squares line (IEEE Std 181-2003 and jitter practice: TIE is the
 * difference between each transition instant and the corresponding instant
 * of the ideal clock). Transitions from Khambadkar, Barford, Harris,
 * "Massively Parallel Localization of Pulsed Signal Transitions Using a GPU".
 */
#include <transient/edge_metrics.h>

#include "common/core_util.h"

#include <math.h>

/* Fit t = a + b * m over the finite instants [i0, i1) and write their TIE. */
static void fit_window(const double *t, size_t i0, size_t i1, double ui, double *tie)
{
    double t_first = NAN;
    size_t count = 0;
    double sm = 0.0, st = 0.0;
    for (size_t i = i0; i < i1; i++) {
        if (t[i] != t[i]) continue;
        if (count == 0) t_first = t[i];
        const double m = ui > 0.0 ? floor((t[i] - t_first) / ui + 0.5) : (double)count;
        tie[i] = m; /* the clock index, replaced by the error below */
        sm += m;
        st += t[i] - t_first;
        count++;
    }
    const double mm = sm / (double)count, tm = st / (double)count;
    double sxy = 0.0, sxx = 0.0;
    for (size_t i = i0; i < i1; i++) {
        if (t[i] != t[i]) continue;
        sxy += (tie[i] - mm) * (t[i] - t_first - tm);
        sxx += (tie[i] - mm) * (tie[i] - mm);
    }
    const double b = sxx > 0.0 ? sxy / sxx : 0.0;
    for (size_t i = i0; i < i1; i++)
        tie[i] = t[i] != t[i] ? NAN : (t[i] - t_first - tm) - b * (tie[i] - mm);
}

tr_status tr_edge_tie(const double *times, size_t n, double ui, size_t window,
                      double *tie, double *rms, double *pk_pk, tr_error *err)
{
    if ((!times || !tie) && n > 0)
        return tr_fail(err, TR_ERR_INVALID, "edge TIE: NULL times or output");
    if (!(ui >= 0.0 && isfinite(ui)))
        return tr_fail(err, TR_ERR_INVALID,
                       "edge TIE: ui must be finite and >= 0, got %g", ui);
    if (window == 1 || window == 2)
        return tr_fail(err, TR_ERR_INVALID,
                       "edge TIE: window must be 0 (the whole record) or at least 3 "
                       "instants, got %zu",
                       window);
    double last = -INFINITY;
    size_t finite = 0;
    for (size_t i = 0; i < n; i++) {
        if (times[i] != times[i]) continue;
        if (!(times[i] > last) || !isfinite(times[i]))
            return tr_fail(err, TR_ERR_INVALID,
                           "edge TIE: times must increase (instant %zu is %g after %g)",
                           i, times[i], last);
        last = times[i];
        finite++;
    }
    /* Window boundaries by counts of finite instants. */
    const size_t w = window == 0 || window > finite ? finite : window;
    size_t i0 = 0, seen = 0;
    for (size_t i = 0; i < n; i++) {
        if (times[i] != times[i]) continue;
        seen++;
        const int closes = seen % w == 0 && finite - seen >= 3;
        if (closes || seen == finite) {
            fit_window(times, i0, i + 1, ui, tie);
            i0 = i + 1;
        }
    }
    for (size_t i = i0; i < n; i++)
        tie[i] = NAN; /* trailing NaN instants */
    double s2 = 0.0, lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        if (tie[i] != tie[i]) continue;
        s2 += tie[i] * tie[i];
        if (tie[i] < lo) lo = tie[i];
        if (tie[i] > hi) hi = tie[i];
    }
    if (rms) *rms = finite > 0 ? sqrt(s2 / (double)finite) : NAN;
    if (pk_pk) *pk_pk = finite > 0 ? hi - lo : NAN;
    tr_clear(err);
    return TR_OK;
}
