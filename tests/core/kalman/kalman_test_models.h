/* Random AR models of the Kalman-bank C tests. */
#ifndef TRANSIENT_TEST_KALMAN_MODELS_H
#define TRANSIENT_TEST_KALMAN_MODELS_H

#include <math.h>
#include <stdint.h>

#include "common/test_util.h"

/* Random stable AR(p) from roots of radius <= rmax (real roots and complex
 * conjugate pairs): coefficients a with x_t = sum a_i x_{t-i} + w_t. */
static inline void random_ar(tu_rng *g, uint32_t p, double rmax, double *a)
{
    double c[40] = {1.0}; /* polynomial 1 + c1 z^-1 + ... (product of root factors) */
    uint32_t deg = 0;
    while (deg < p) {
        const double rad = rmax * (0.2 + 0.8 * tu_uniform(g));
        double t[40] = {0};
        if (p - deg >= 2 && tu_uniform(g) < 0.6) {
            const double th = 3.14159 * tu_uniform(g);
            const double s1 = -2.0 * rad * cos(th), s2 = rad * rad; /* z^2 + s1 z + s2 */
            for (uint32_t i = 0; i <= deg; i++) {
                t[i] += c[i];
                t[i + 1] += s1 * c[i];
                t[i + 2] += s2 * c[i];
            }
            deg += 2;
        } else {
            const double root = (tu_uniform(g) < 0.5 ? -1.0 : 1.0) * rad;
            for (uint32_t i = 0; i <= deg; i++) {
                t[i] += c[i];
                t[i + 1] -= root * c[i];
            }
            deg += 1;
        }
        for (uint32_t i = 0; i <= deg; i++)
            c[i] = t[i];
    }
    for (uint32_t i = 0; i < p; i++)
        a[i] = -c[i + 1];
}

/* Random stable AR(p), real roots only: product of first-order sections with
 * |root| <= rmax. */
static inline void random_ar_real(tu_rng *g, uint32_t p, double rmax, double *a)
{
    double c[16] = {1.0};
    for (uint32_t deg = 0; deg < p; deg++) {
        const double root = (tu_uniform(g) < 0.5 ? -1.0 : 1.0) * rmax * tu_uniform(g);
        for (uint32_t i = deg + 1; i >= 1; i--)
            c[i] -= root * c[i - 1];
    }
    for (uint32_t i = 0; i < p; i++)
        a[i] = -c[i + 1];
}

#endif
