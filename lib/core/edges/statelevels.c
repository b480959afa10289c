/*
 * State levels by the histogram mode method of IEEE Std 181-2003 (5.2.1.3):
 * the histogram of the waveform values is split into a lower and an upper half,
 * and the mode of each half is taken as that state's level.
 */
#include <transient/statelevels.h>

#include "common/core_util.h"

#include <math.h>
#include <stdlib.h>

#define TR_MAX_BINS (1u << 24)

/* Non-finite samples carry no level information. */
static int is_finite(float x)
{
    return (x - x) == 0.0f;
}

tr_status tr_statelevels_estimate(const float *x, size_t n, unsigned bins,
                                  double tolerance_pct, double mid_pct,
                                  tr_statelevels *out, tr_error *err)
{
    if (!out || (!x && n > 0))
        return tr_fail(err, TR_ERR_INVALID, "state levels: NULL samples or output");
    if (bins < 2 || bins > TR_MAX_BINS)
        return tr_fail(err, TR_ERR_INVALID,
                       "state levels: bins must be in [2, %u], got %u", TR_MAX_BINS,
                       bins);
    if (!(tolerance_pct > 0.0 && tolerance_pct < 50.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "state levels: tolerance_pct must be in (0, 50), got %g",
                       tolerance_pct);
    if (!(mid_pct > tolerance_pct && mid_pct < 100.0 - tolerance_pct))
        return tr_fail(err, TR_ERR_INVALID,
                       "state levels: mid_pct must lie between the state boundaries "
                       "(%g, %g), got %g",
                       tolerance_pct, 100.0 - tolerance_pct, mid_pct);

    size_t finite = 0;
    float lo = 0.0f, hi = 0.0f;
    for (size_t i = 0; i < n; i++) {
        if (!is_finite(x[i])) continue;
        if (finite == 0 || x[i] < lo) lo = x[i];
        if (finite == 0 || x[i] > hi) hi = x[i];
        finite++;
    }
    if (finite < 2 || !(hi > lo))
        return tr_fail(err, TR_ERR_INVALID,
                       "state levels: need at least two distinct finite samples "
                       "(got %zu finite of %zu, range [%g, %g])",
                       finite, n, (double)lo, (double)hi);

    size_t *hist = calloc(bins, sizeof *hist);
    if (!hist)
        return tr_fail(err, TR_ERR_NOMEM, "state levels: cannot allocate %u bins", bins);
    const double width = ((double)hi - (double)lo) / bins;
    for (size_t i = 0; i < n; i++) {
        if (!is_finite(x[i])) continue;
        size_t b = (size_t)(((double)x[i] - (double)lo) / width);
        hist[b < bins ? b : bins - 1]++;
    }
    /* Modes of each half; ties go to the bin farthest from the middle. */
    const unsigned half = bins / 2;
    unsigned lo_bin = 0, hi_bin = bins - 1;
    for (unsigned b = 0; b < half; b++)
        if (hist[b] > hist[lo_bin]) lo_bin = b;
    for (unsigned b = bins - 1; b >= half && b < bins; b--)
        if (hist[b] > hist[hi_bin]) hi_bin = b;
    free(hist);

    out->low_level = (double)lo + (lo_bin + 0.5) * width;
    out->high_level = (double)lo + (hi_bin + 0.5) * width;
    const double amp = out->high_level - out->low_level;
    out->low = (float)(out->low_level + tolerance_pct / 100.0 * amp);
    out->high = (float)(out->high_level - tolerance_pct / 100.0 * amp);
    out->mid = (float)(out->low_level + mid_pct / 100.0 * amp);
    if (!(out->low < out->mid && out->mid < out->high))
        return tr_fail(err, TR_ERR_INVALID,
                       "state levels: estimated levels collapse in float (%g, %g, %g)",
                       (double)out->low, (double)out->mid, (double)out->high);
    tr_clear(err);
    return TR_OK;
}
