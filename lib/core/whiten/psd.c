/*
 * PSD estimates on a frequency grid (<transient/whiten.h>): Welch's median
 * estimate from data, and the Advanced LIGO design fit.
 *
 * Papers: P. D. Welch, IEEE Trans. Audio Electroacoust. 15, 70 (1967);
 * B. Allen et al., Phys. Rev. D 85, 122006 (2012) (median averaging, as
 * scipy.signal.welch(average='median') and PyCBC compute it);
 * B. S. Sathyaprakash, B. F. Schutz, Living Rev. Relativ. 12, 2 (2009),
 * section 4 (the Advanced LIGO fit).
 */
#include "common/core_util.h"
#include "whiten/whiten_internal.h"

#include <math.h>
#include <stdlib.h>

size_t tr_psd_len(size_t nfft)
{
    return nfft / 2 + 1;
}

tr_status tr_psd_check_grid(const char *who, double rate, size_t nfft, tr_error *err)
{
    if (!(rate > 0.0) || !isfinite(rate))
        return tr_fail(err, TR_ERR_INVALID, "%s: rate must be finite and > 0, got %g",
                       who, rate);
    if (nfft < 4 || nfft % 2 != 0 || nfft > TR_PSD_MAX_NFFT)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: nfft must be even and in [4, %zu], got %zu", who,
                       (size_t)TR_PSD_MAX_NFFT, nfft);
    return TR_OK;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Bias of the median of m chi^2_2 variables against their mean (scipy's
 * _median_bias). */
static double median_bias(size_t m)
{
    double b = 1.0;
    for (size_t i = 1; i <= (m - 1) / 2; ++i)
        b += 1.0 / (2.0 * (double)i + 1.0) - 1.0 / (2.0 * (double)i);
    return b;
}

/* Median of v[0 .. m) (sorted in place): the mean of the middle two for even m. */
static double median(double *v, size_t m)
{
    qsort(v, m, sizeof *v, cmp_double);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

tr_status tr_psd_welch(const float *x, size_t n, double rate, size_t nfft, double *psd,
                       tr_error *err)
{
    tr_status s = tr_psd_check_grid("psd_welch", rate, nfft, err);
    if (s != TR_OK) return s;
    if (!psd || (n && !x)) return tr_fail(err, TR_ERR_INVALID, "psd_welch: NULL buffer");
    if (n < nfft)
        return tr_fail(err, TR_ERR_INVALID,
                       "psd_welch: %zu samples do not fill one segment of nfft = %zu", n,
                       nfft);
    const size_t step = nfft / 2, nbin = tr_psd_len(nfft);
    const size_t nseg = (n - nfft) / step + 1;
    if (nseg > SIZE_MAX / sizeof(double) / nbin)
        return tr_fail(err, TR_ERR_NOMEM, "psd_welch: too many segments (%zu)", nseg);
    tr_dft d;
    s = tr_dft_make(&d, nfft, 0, "psd_welch", err);
    if (s != TR_OK) return s;
    double *win = (double *)malloc(nfft * sizeof *win);
    double *vals = (double *)malloc(nseg * nbin * sizeof *vals); /* bin-major */
    if (!win || !vals) {
        s = tr_fail(err, TR_ERR_NOMEM, "psd_welch: cannot allocate %zu segments of %zu",
                    nseg, nfft);
        goto done;
    }
    const double pi = 3.14159265358979323846;
    double sumw2 = 0.0;
    for (size_t j = 0; j < nfft; ++j) {
        win[j] = 0.5 - 0.5 * cos(2.0 * pi * (double)j / (double)nfft);
        sumw2 += win[j] * win[j];
    }
    const double scale = 1.0 / (rate * sumw2);
    for (size_t g = 0; g < nseg; ++g) {
        const float *xs = x + g * step;
        double mean = 0.0;
        for (size_t j = 0; j < nfft; ++j)
            mean += xs[j];
        mean /= (double)nfft;
        for (size_t j = 0; j < nfft; ++j)
            d.real[j] = ((double)xs[j] - mean) * win[j];
        fftw_execute(d.plan);
        for (size_t k = 0; k < nbin; ++k) {
            const double re = d.cplx[k][0], im = d.cplx[k][1];
            double p = (re * re + im * im) * scale;
            if (k != 0 && k != nbin - 1) p *= 2.0;
            vals[k * nseg + g] = p;
        }
    }
    const double bias = median_bias(nseg);
    for (size_t k = 0; k < nbin; ++k)
        psd[k] = median(vals + k * nseg, nseg) / bias;
    tr_clear(err);
done:
    tr_dft_free(&d);
    free(win);
    free(vals);
    return s;
}

double tr_psd_design_at(double f)
{
    if (!(f >= TR_PSD_DESIGN_FLOOR)) return INFINITY;
    const double x = f / 215.0, x2 = x * x;
    return 1e-49 * (pow(x, -4.14) - 5.0 / x2 +
                    111.0 * (1.0 - x2 + 0.5 * x2 * x2) / (1.0 + 0.5 * x2));
}

tr_status tr_psd_design(double rate, size_t nfft, double *psd, tr_error *err)
{
    tr_status s = tr_psd_check_grid("psd_design", rate, nfft, err);
    if (s != TR_OK) return s;
    if (!psd) return tr_fail(err, TR_ERR_INVALID, "psd_design: NULL buffer");
    for (size_t k = 0; k < tr_psd_len(nfft); ++k)
        psd[k] = tr_psd_design_at((double)k * rate / (double)nfft);
    tr_clear(err);
    return TR_OK;
}
