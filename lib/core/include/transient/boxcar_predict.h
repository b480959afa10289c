/*
 * Sensitivity predictor of the boxcar search: recovered S/N bounds and signal
 * losses of any set of evaluated boxcars, for rectangular pulses of width
 * S = 1 .. smax in the idealised model (noise-free, mu = 0, sigma = 1, pulse
 * amplitude C / sqrt(S) so that the matched boxcar gives S/N = C; all values
 * here are for C = 1, i.e. RSNR / SNR_T).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * Appendix A, equations 22-31, and equations 8, 9 and 19.
 *
 * For Python (pybind11 on numpy arrays): every quantity is available from
 * plain arrays, no opaque object needed:
 *   tr_boxcar_predict(widths[nb], separations[nb], nb, smax,
 *                     rsnr_max[smax], rsnr_min[smax], psi_1[smax], psi_w[smax],
 *                     mean_psi_1[smax], mean_psi_w[smax])          (eqs. 24, 31, 9, 8,
 * 19) tr_boxcar_predict_exact(widths, separations, nb, smax, rsnr_max[smax],
 * rsnr_min[smax], best_width[smax]) tr_boxcar_rsnr_max_single(S, L),
 * tr_boxcar_rsnr_min_single(S, L, Ls)  (eqs. 23, 30) tr_boxcar_cumulative_mean(psi[n], n,
 * out[n])                  (eq. 19) The widths and separations of a search come from
 * tr_boxcar_plan_list (boxcar.h); tr_boxcar_predict_plan does the same from a plan
 * pointer. Output arrays may be NULL (not computed); index k holds pulse width S = k+1.
 *
 * Definitions (S pulse width, L boxcar width, Ls its separation = the stride
 * of its stage; every width of a plan is evaluated at every multiple of Ls)
 *   eq. 23  RSNR_max(S; L) = sqrt(S / L)            S < L
 *                            sqrt(L / S)            S >= L
 *   eq. 30  RSNR_min(S; L) = sqrt(S / L)            S <= L - Ls
 *                            d< / sqrt(L S)         L - Ls < S < L,  d< = S - floor((S -
 * L + Ls) / 2) d> / sqrt(L S)         L <= S < L + Ls, d> = L - floor((L + Ls - S) / 2)
 *                            sqrt(L / S)            S >= L + Ls
 *           Eq. 30 assumes that the boxcars of one width cover every sample
 *           (L >= Ls, true for every BoxDIT, IGRID and ideal plan); for
 *           L < Ls its coverage goes negative and we clamp it at 0 (a pulse
 *           can fall into a gap). With that clamp eq. 30 equals the exact
 *           worst case of a single width for every S, L, Ls (tested).
 *   eq. 24  RSNR_max(S) = max over L of RSNR_max(S; L)
 *   eq. 31  RSNR_min(S) = max over L of RSNR_min(S; L)
 *   eq. 9   Psi_1(S) = 1 - RSNR_max(S)    (systematic loss)
 *   eq. 8   Psi_w(S) = 1 - RSNR_min(S)    (worst-case loss)
 *   eq. 19  <Psi(S0)> = sum_{s=1}^{S0} Psi(s) / S0.
 *           The paper prints the denominator S0 - 1, which is undefined at
 *           S0 = 1 and is not a mean; we divide by the number of terms
 *           (the difference is below 1/S0 of the value).
 *
 * RSNR_max(S) is attained (a pulse aligned with the best boxcar), so a
 * measured maximum equals it. Eq. 31 is a LOWER bound of the true worst case:
 * it takes the best width's worst position, while the search takes, at each
 * position, the best over all widths (min over positions of a max >= max of
 * the per-width minima). So measured worst losses are at most Psi_w and
 * usually smaller (paper section 4.2.1). tr_boxcar_predict_exact computes the
 * true worst case of the noise-free model: the minimum over pulse positions of
 * the maximum over every evaluated boxcar, exactly what a noise-free slide of
 * the pulse over all positions measures (tests/core/boxcar/test_boxcar_predict.c checks
 * both against brute force).
 */
#ifndef TRANSIENT_BOXCAR_PREDICT_H
#define TRANSIENT_BOXCAR_PREDICT_H

#include <transient/common.h>
#include <transient/boxcar.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Eq. 23: best-case recovered S/N (C = 1) of one boxcar of width L >= 1. */
double tr_boxcar_rsnr_max_single(uint32_t S, uint32_t L);

/* Eq. 30: worst-case recovered S/N (C = 1) of width L >= 1, separation Ls >= 1. */
double tr_boxcar_rsnr_min_single(uint32_t S, uint32_t L, uint32_t Ls);

/*
 * Eqs. 24, 31, 9, 8 and 19 for S = 1 .. smax over the nb boxcar widths
 * widths[k] (>= 1) with separations separations[k] (>= 1). Any output may be
 * NULL. TR_ERR_INVALID on nb = 0, smax = 0 or a zero entry.
 */
tr_status tr_boxcar_predict(const uint32_t *widths, const uint32_t *separations,
                            uint32_t nb, uint32_t smax, double *rsnr_max,
                            double *rsnr_min, double *psi_1, double *psi_w,
                            double *mean_psi_1, double *mean_psi_w);

/* The same for a plan's evaluated boxcars (tr_boxcar_plan_list). */
tr_status tr_boxcar_predict_plan(const tr_boxcar_plan *plan, uint32_t smax,
                                 double *rsnr_max, double *rsnr_min, double *psi_1,
                                 double *psi_w, double *mean_psi_1, double *mean_psi_w);

/*
 * True extremes of the noise-free model for S = 1 .. smax: with the pulse
 * starting at every offset t in [0, lcm of the separations) (all separations
 * are then periodic), rsnr_max[S-1] = max over t of the best boxcar's S/N,
 * rsnr_min[S-1] = min over t of it, best_width[S-1] = the width that gives
 * rsnr_max (smallest on ties). Separations must be powers of two. Cost
 * O(smax * nb * max separation); any output may be NULL.
 */
tr_status tr_boxcar_predict_exact(const uint32_t *widths, const uint32_t *separations,
                                  uint32_t nb, uint32_t smax, double *rsnr_max,
                                  double *rsnr_min, uint32_t *best_width);

/* Eq. 19 (divided by the count, see above): out[k] = mean of psi[0..k]. */
tr_status tr_boxcar_cumulative_mean(const double *psi, uint32_t n, double *out);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_PREDICT_H */
