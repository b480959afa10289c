/*
 * IEEE Std 181-2003 state-level estimation by the histogram mode method.
 *
 * The samples' range [min, max] is split into `bins` equal bins. The low state
 * level is the centre of the most populated bin in the lower half of the
 * histogram, the high state level that of the upper half (ties: the bin
 * farthest from the middle, i.e. the most extreme). With amplitude
 * A = high_level - low_level, the reference levels are
 *   low  boundary l = low_level  + tolerance_pct / 100 * A
 *   high boundary h = high_level - tolerance_pct / 100 * A
 *   mid reference m = low_level  + mid_pct / 100 * A
 * Non-finite samples are ignored.
 */
#ifndef TRANSIENT_STATELEVELS_H
#define TRANSIENT_STATELEVELS_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    double low_level;  /* estimated low state level */
    double high_level; /* estimated high state level */
    float low;         /* upper boundary of the low state, l */
    float mid;         /* mid reference level, m */
    float high;        /* lower boundary of the high state, h */
} tr_statelevels;

/*
 * Estimate state levels from n samples with the given number of histogram bins
 * (>= 2, even counts split cleanly), tolerance_pct in (0, 50) and mid_pct in
 * (tolerance_pct, 100 - tolerance_pct). Fails with TR_ERR_INVALID (and a message
 * in err, if given) when the arguments are out of range, fewer than two finite
 * samples are given or the finite samples are all equal.
 */
tr_status tr_statelevels_estimate(const float *x, size_t n, unsigned bins,
                                  double tolerance_pct, double mid_pct,
                                  tr_statelevels *out, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_STATELEVELS_H */
