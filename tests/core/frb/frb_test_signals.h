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
#include <transient/frb.h>

typedef struct {
    double dm;      /* pc cm^-3 */
    int64_t start;  /* first sample at the top of the band */
    uint32_t width; /* samples */
    double snr;     /* optimum S/N: amplitude * sqrt(width * nchan) / sigma */
} frb_burst;

/* A small band: 64 channels of 2 MHz below 1500 MHz, 1 ms sampling, DM 0 to
 * dm_max, boxcars up to 64 samples, statistics windows of 1024. */
static inline tr_frb_config frb_small_band(double dm_max)
{
    tr_frb_config c = tr_frb_config_default();
    c.dedisp.plan.nchan = 64;
    c.dedisp.plan.fch1 = 1500.0;
    c.dedisp.plan.foff = -2.0;
    c.dedisp.plan.tsamp = 1e-3;
    c.dedisp.plan.dm_min = 0.0;
    c.dedisp.plan.dm_max = dm_max;
    c.search.max_width = 64;
    c.search.norm.window = 1024;
    return c;
}

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
