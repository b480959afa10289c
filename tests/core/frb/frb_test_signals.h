/*
 * Test filterbanks for the FRB search: Gaussian noise spectra with dispersed
 * rectangular bursts, delayed channel by channel with tr_dedisp_delay (the
 * delays the search removes), so that a burst at a trial DM dedisperses into
 * an exact rectangle of nused * amplitude.
 */
#ifndef TRANSIENT_TESTS_FRB_TEST_SIGNALS_H
#define TRANSIENT_TESTS_FRB_TEST_SIGNALS_H

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

#include <transient/dedisp.h>

typedef struct {
    double dm;      /* pc cm^-3 */
    int64_t start;  /* first sample at the top of the band */
    uint32_t width; /* samples */
    double snr;     /* optimum S/N: amplitude * sqrt(width * nchan) / sigma */
} frb_burst;

/* n spectra of nchan channels, N(mean, sigma^2) noise, the bursts added. */
static inline float *frb_make_filterbank(const tr_dedisp_plan_config *plan, size_t n,
                                         double mean, double sigma, const frb_burst *b,
                                         size_t nb, uint64_t seed)
{
    const uint32_t nchan = plan->nchan;
    float *x = malloc(n * nchan * sizeof *x);
    if (!x) return NULL;
    tu_rng r = {seed};
    for (size_t i = 0; i < n * nchan; i++)
        x[i] = (float)(mean + sigma * tu_gauss(&r));
    for (size_t k = 0; k < nb; k++) {
        const double amp = b[k].snr * sigma / sqrt((double)b[k].width * nchan);
        for (uint32_t c = 0; c < nchan; c++) {
            const int64_t t0 = b[k].start + tr_dedisp_delay(plan, b[k].dm, c);
            for (uint32_t j = 0; j < b[k].width; j++)
                if (t0 + j >= 0 && (size_t)(t0 + j) < n)
                    x[(size_t)(t0 + j) * nchan + c] += (float)amp;
        }
    }
    return x;
}

#endif /* TRANSIENT_TESTS_FRB_TEST_SIGNALS_H */
