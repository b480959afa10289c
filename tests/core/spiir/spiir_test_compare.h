/* Comparison of filter-bank outputs in the SPIIR C tests. */
#ifndef TRANSIENT_TEST_SPIIR_COMPARE_H
#define TRANSIENT_TEST_SPIIR_COMPARE_H

#include <math.h>
#include <stddef.h>

/* ||a - b|| / ||b|| over all n values (||a - b|| where b is all zero). */
static inline double rel_rms(const float *a, const float *b, size_t n)
{
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < n; i++) {
        const double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

#endif
