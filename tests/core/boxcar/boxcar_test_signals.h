/* Test signals of the boxcar C tests: Gaussian noise and rectangular pulses
 * in channel-interleaved streams (sample t of channel c at x[t * C + c]). */
#ifndef TRANSIENT_TEST_BOXCAR_SIGNALS_H
#define TRANSIENT_TEST_BOXCAR_SIGNALS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/test_util.h"

static inline float *noise(tu_rng *r, size_t n, double mean, double sigma)
{
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(mean + sigma * tu_gauss(r));
    return x;
}

/* Add count rectangular pulses of random channel, width (1..max_w), start
 * and S/N (3..max_snr, in units of sigma over the pulse's width). */
static inline void add_pulses(tu_rng *r, float *x, size_t n, uint32_t C, int count,
                              uint32_t max_w, double sigma, long max_snr)
{
    for (int k = 0; k < count; k++) {
        const uint32_t c = (uint32_t)tu_range(r, 0, C - 1);
        const uint32_t w = (uint32_t)tu_range(r, 1, max_w);
        const size_t p = (size_t)tu_range(r, 0, (long)n - 1);
        const double a = sigma * tu_range(r, 3, max_snr) / sqrt((double)w);
        for (uint32_t j = 0; j < w && p + j < n; j++)
            x[(p + j) * C + c] += (float)a;
    }
}

#endif
