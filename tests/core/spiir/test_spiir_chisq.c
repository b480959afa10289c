/*
 * Tests of the autocorrelation chi-square (<transient/spiir_chisq.h>): against
 * the definition written out in complex double on random SNR streams and
 * autocorrelations (peaks in the middle and at both ends of the stretch, where
 * lags are left out), a stream that follows the autocorrelation exactly
 * (chisq 0), the value 1 of gstlal's normalisation for the noise term of a
 * known case, NaN input and invalid arguments.
 */
#include <transient/spiir_chisq.h>

#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

/* The definition: sum over lags j with rows p + j in [0, n) of
 * |A[j] z[p] - z[p + j]|^2, over 2 m - sum |A[j]|^2 (m lags used). */
static double definition(const float *snr, size_t n, uint32_t nt, uint32_t t, long p,
                         const double *ac, long half)
{
    const double complex zp = snr[(p * nt + t) * 2] + I * snr[(p * nt + t) * 2 + 1];
    double sum = 0, a2 = 0, m = 0;
    for (long j = -half; j <= half; j++) {
        if (p + j < 0 || p + j >= (long)n) continue;
        const double complex a = ac[2 * (j + half)] + I * ac[2 * (j + half) + 1];
        const size_t r = ((size_t)(p + j) * nt + t) * 2;
        const double complex z = snr[r] + I * snr[r + 1];
        sum += pow(cabs(a * zp - z), 2);
        a2 += pow(cabs(a), 2);
        m += 1;
    }
    return sum / (2 * m - a2);
}

static void test_random(void)
{
    tu_rng rng = {12345};
    for (int trial = 0; trial < 200; trial++) {
        const uint32_t nt = (uint32_t)tu_range(&rng, 1, 5);
        const size_t n = (size_t)tu_range(&rng, 1, 300);
        const uint32_t half = (uint32_t)tu_range(&rng, 1, 120);
        float *snr = malloc(n * nt * 2 * sizeof(float));
        double *ac = malloc((2 * half + 1) * 2 * sizeof(double));
        for (size_t i = 0; i < n * nt * 2; i++)
            snr[i] = (float)(5 * tu_gauss(&rng));
        for (uint32_t i = 0; i < 2 * half + 1; i++) {
            ac[2 * i] = tu_gauss(&rng) * 0.5;
            ac[2 * i + 1] = tu_gauss(&rng) * 0.5;
        }
        ac[2 * half] = 1.0;
        ac[2 * half + 1] = 0.0;
        const uint32_t t = (uint32_t)tu_range(&rng, 0, nt - 1);
        const int where = trial % 3;
        const uint64_t p = where == 0   ? 0
                           : where == 1 ? n - 1
                                        : (uint64_t)tu_range(&rng, 0, n - 1);
        double got = -1;
        tr_error err;
        const tr_status st = tr_spiir_autochisq(snr, n, nt, t, p, ac, half, &got, &err);
        const double want = definition(snr, n, nt, t, (long)p, ac, half);
        CHECK(st == TR_OK, "status %d: %s", (int)st, err.message);
        CHECK(fabs(got - want) <= 1e-12 * fabs(want) + 1e-300,
              "trial %d: %.17g, definition %.17g", trial, got, want);
        free(snr);
        free(ac);
    }
}

/* A stream that is exactly the autocorrelation times the peak: chisq 0. And
 * z[p] alone changed by d (A = delta at 0, half 1, both neighbours given):
 * the sum is |z[p-1]|^2 + |z[p+1]|^2 and the norm 2 x 3 - 1 = 5. */
static void test_exact(void)
{
    enum { N = 41, HALF = 20 };
    double ac[(2 * HALF + 1) * 2];
    float snr[N * 2];
    const double complex zp = 7.0 - 3.0 * I;
    for (int j = -HALF; j <= HALF; j++) {
        const double complex a = cexp(-0.01 * j * j + 0.3 * I * j);
        ac[2 * (j + HALF)] = creal(a);
        ac[2 * (j + HALF) + 1] = cimag(a);
        snr[2 * (j + HALF)] = (float)creal(a * zp);
        snr[2 * (j + HALF) + 1] = (float)cimag(a * zp);
    }
    double c = -1;
    CHECK(tr_spiir_autochisq(snr, N, 1, 0, HALF, ac, HALF, &c, NULL) == TR_OK, "status");
    CHECK(c < 1e-12, "exact autocorrelation: chisq %g, not 0", c);

    const double delta[6] = {0, 0, 1, 0, 0, 0};
    const float z3[6] = {1.0f, 2.0f, 10.0f, 0.0f, -3.0f, 0.5f};
    CHECK(tr_spiir_autochisq(z3, 3, 1, 0, 1, delta, 1, &c, NULL) == TR_OK, "status");
    CHECK(fabs(c - (5.0 + 9.25) / 5.0) < 1e-12, "delta autocorrelation: %g", c);
}

static void test_bad(void)
{
    float snr[8] = {0, 0, 1, 0, NAN, 0, 0, 0};
    double ac[6] = {0.5, 0, 1, 0, 0.5, 0};
    double c = 0;
    tr_error err;
    CHECK(tr_spiir_autochisq(snr, 4, 1, 0, 1, ac, 1, &c, &err) == TR_OK, "status");
    CHECK(isnan(c), "NaN in the window: %g", c);
    CHECK(tr_spiir_autochisq(snr, 4, 1, 0, 0, ac, 1, &c, &err) == TR_OK && isfinite(c),
          "NaN outside the window: %g", c);
    CHECK(tr_spiir_autochisq(NULL, 4, 1, 0, 1, ac, 1, &c, &err) == TR_ERR_INVALID,
          "NULL");
    CHECK(tr_spiir_autochisq(snr, 4, 1, 1, 1, ac, 1, &c, &err) == TR_ERR_INVALID,
          "template");
    CHECK(strstr(err.message, "template 1") != NULL, "message: %s", err.message);
    CHECK(tr_spiir_autochisq(snr, 4, 1, 0, 4, ac, 1, &c, &err) == TR_ERR_INVALID, "peak");
    CHECK(tr_spiir_autochisq(snr, 4, 1, 0, 1, ac, 0, &c, &err) == TR_ERR_INVALID,
          "half 0");
    ac[1] = INFINITY;
    CHECK(tr_spiir_autochisq(snr, 4, 1, 0, 1, ac, 1, &c, &err) == TR_ERR_INVALID,
          "non-finite autocorrelation");
}

int main(void)
{
    test_random();
    test_exact();
    test_bad();
    return tu_finish("test_spiir_chisq");
}
