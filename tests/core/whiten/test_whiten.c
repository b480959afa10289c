/*
 * tr_whiten (<transient/whiten.h>): every variant against the reference
 * (direct convolution in double) on AR(1) coloured noise with random
 * filters, random chunkings (one sample per call included), NaN/Inf input
 * and empty calls; bit-identical output across chunkings; the impulse
 * response and the latency; the gate; unit variance per frequency bin of
 * whitened noise; configuration errors. With --gpu the CUDA backend against
 * the reference; exit 77 without a GPU.
 */
#include <transient/whiten.h>

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

static int use_gpu;

/* x[n] = a x[n-1] + e[n], e standard normal. */
static void ar1_noise(tu_rng *r, double a, float *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
        s = a * s + tu_gauss(r);
        x[i] = (float)s;
    }
}

/* Its one-sided PSD: (2 / rate) / |1 - a exp(-i w)|^2. */
static void ar1_psd(double a, double rate, size_t nfft, double *psd)
{
    for (size_t k = 0; k <= nfft / 2; ++k) {
        const double w = 2.0 * 3.14159265358979323846 * (double)k / (double)nfft;
        psd[k] = (2.0 / rate) / (1.0 - 2.0 * a * cos(w) + a * a);
    }
}

static tr_whiten *make(const tr_whiten_config *c)
{
    tr_error err;
    tr_whiten *q = tr_whiten_create(c, &err);
    CHECK(q != NULL, "create: %s", err.message);
    return q;
}

/* Process x in chunks: one call (r NULL), one sample per call (ones), or
 * random sizes with empty calls between. */
static void run(tr_whiten *q, const float *x, size_t n, float *y, tu_rng *r, int ones)
{
    for (size_t done = 0; done < n;) {
        size_t m = n - done;
        if (ones)
            m = 1;
        else if (r) {
            const long pick = tu_range(r, 0, 3);
            m = pick == 0 ? 1 : (size_t)tu_range(r, 1, pick == 1 ? 50 : 3000);
            if (m > n - done) m = n - done;
            CHECK(tr_whiten_process(q, NULL, 0, NULL) == TR_OK, "empty call");
        }
        CHECK(tr_whiten_process(q, x + done, m, y + done) == TR_OK, "process: %s",
              tr_whiten_last_error(q));
        done += m;
    }
    CHECK(tr_whiten_position(q) == n, "position %llu, want %zu",
          (unsigned long long)tr_whiten_position(q), n);
}

/* Relative RMS difference of b from a; -1 where zeros differ (gates). */
static double rel_rms(const float *a, const float *b, size_t n)
{
    double e = 0, s = 0;
    for (size_t i = 0; i < n; ++i) {
        if ((a[i] == 0.0f) != (b[i] == 0.0f)) return -1.0;
        e += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        s += (double)a[i] * a[i];
    }
    return s > 0 ? sqrt(e / s) : sqrt(e);
}

static tr_backend fast_backend(void)
{
    return use_gpu ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
}

static void test_variants(void)
{
    tu_rng r = {2026};
    double psd[257];
    for (int trial = 0; trial < 24; ++trial) {
        const size_t nfft = (size_t)64 << tu_range(&r, 0, 2);
        const double rate = 1000.0, a = 0.3 + 0.65 * tu_uniform(&r);
        ar1_psd(a, rate, nfft, psd);
        tr_whiten_config c = tr_whiten_config_default();
        c.rate = rate;
        c.psd = psd;
        c.nfft = nfft;
        c.fmin = tu_range(&r, 0, 1) ? 0.0 : 150.0 * tu_uniform(&r);
        c.half_len = (size_t)tu_range(&r, 1, (long)nfft / 2 - 1);
        const size_t L = 2 * c.half_len + 1;
        c.fft_len =
            tu_range(&r, 0, 1) ? 0 : (size_t)tu_range(&r, (long)L + 1, 4 * (long)L);
        c.batch = (size_t)tu_range(&r, 1, 8);
        const size_t n = (size_t)tu_range(&r, 1, 6000);
        float *x = (float *)malloc(n * sizeof *x);
        float *ref = (float *)malloc(n * sizeof *ref);
        float *y1 = (float *)malloc(n * sizeof *y1);
        float *y2 = (float *)malloc(n * sizeof *y2);
        ar1_noise(&r, a, x, n);
        if (trial % 3 == 0)
            for (int k = 0; k < 3; ++k) {
                const size_t at = (size_t)tu_range(&r, 0, (long)n - 1);
                x[at] = k == 0 ? NAN : k == 1 ? INFINITY : -INFINITY;
            }
        c.backend = TR_BACKEND_CPU;
        c.variant = TR_VARIANT_REFERENCE;
        tr_whiten *qr = make(&c);
        c.backend = fast_backend();
        c.variant = TR_VARIANT_FAST;
        tr_whiten *qf = make(&c);
        if (!qr || !qf) goto next;
        CHECK(tr_whiten_latency(qr) == tr_whiten_latency(qf), "latency differs");
        CHECK(tr_whiten_backend(qf) == fast_backend(), "backend");
        run(qr, x, n, ref, NULL, 0);
        run(qf, x, n, y1, NULL, 0);
        const double e = rel_rms(ref, y1, n);
        CHECK(e >= 0 && e < 1e-4,
              "trial %d (nfft %zu, half %zu, M %zu): rel. RMS error %g", trial, nfft,
              c.half_len, tr_whiten_fft_len(qf), e);
        CHECK(tr_whiten_gated(qr) == tr_whiten_gated(qf), "gated %llu vs %llu",
              (unsigned long long)tr_whiten_gated(qr),
              (unsigned long long)tr_whiten_gated(qf));
        /* Any chunking gives the same bits, for the reference and the fast variant. */
        for (int pass = 0; pass < 2; ++pass) {
            tr_whiten *q = pass ? qf : qr;
            const float *want = pass ? y1 : ref;
            CHECK(tr_whiten_reset(q) == TR_OK, "reset");
            run(q, x, n, y2, &r, 0);
            CHECK(!memcmp(want, y2, n * sizeof *y2),
                  "trial %d pass %d: chunking changed bits", trial, pass);
            if (n <= 2500) {
                tr_whiten_reset(q);
                run(q, x, n, y2, NULL, 1);
                CHECK(!memcmp(want, y2, n * sizeof *y2),
                      "trial %d pass %d: one sample per call changed bits", trial, pass);
            }
        }
    next:
        tr_whiten_destroy(qr);
        tr_whiten_destroy(qf);
        free(x);
        free(ref);
        free(y1);
        free(y2);
    }
}

/* A filter for the AR(1) PSD of coefficient a at 512 Hz on 256 points
 * (psd: 129 values, filled here). */
static tr_whiten_config small_config(double a, double fmin, size_t half, double *psd)
{
    ar1_psd(a, 512.0, 256, psd);
    tr_whiten_config c = tr_whiten_config_default();
    c.rate = 512.0;
    c.psd = psd;
    c.nfft = 256;
    c.fmin = fmin;
    c.half_len = half;
    return c;
}

/* An impulse at p0 comes out as the taps, centred D samples later. */
static void test_impulse(void)
{
    double psd[129], taps[65];
    tr_whiten_config c = small_config(0.8, 10.0, 32, psd);
    for (int v = 0; v < 2; ++v) {
        c.variant = v ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
        c.backend = v ? fast_backend() : TR_BACKEND_CPU;
        tr_whiten *q = make(&c);
        if (!q) return;
        CHECK(tr_whiten_taps(q, taps, 65) == TR_OK, "taps");
        const size_t D = (size_t)tr_whiten_latency(q), p0 = 300, n = p0 + D + 200;
        CHECK(D == 32 + tr_whiten_fft_len(q) - 65 + 1, "latency %zu", D);
        CHECK(tr_whiten_fft_len(q) == 256, "default fft_len %zu (power of two >= 2L)",
              tr_whiten_fft_len(q));
        float *x = (float *)calloc(n, sizeof *x), *y = (float *)malloc(n * sizeof *y);
        x[p0] = 1.0f;
        run(q, x, n, y, NULL, 0);
        double worst = 0, peak = 0;
        for (size_t i = 0; i < n; ++i) {
            const long j = (long)i - (long)(p0 + D);
            const double want = j >= -32 && j <= 32 ? taps[j + 32] : 0.0;
            if (fabs(want) > peak) peak = fabs(want);
            if (fabs(y[i] - want) > worst) worst = fabs(y[i] - want);
        }
        CHECK(worst <= (v ? 1e-5 : 1e-7) * peak,
              "variant %d: impulse off by %g (peak %g)", v, worst, peak);
        /* Zero phase: the taps are symmetric. */
        CHECK(taps[0] == taps[64] && taps[10] == taps[54], "taps not symmetric");
        free(x);
        free(y);
        tr_whiten_destroy(q);
    }
}

/* A NaN gates z[b - half .. b + half] to 0; everything else is what a 0 at b gives. */
static void test_gate(void)
{
    double psd[129];
    tr_whiten_config c = small_config(0.5, 0.0, 20, psd);
    const size_t n = 3000, b = 1000, b2 = 1030;
    float *x = (float *)malloc(n * sizeof *x), *y0 = (float *)malloc(n * sizeof *y0),
          *y1 = (float *)malloc(n * sizeof *y1);
    tu_rng r = {5};
    for (int v = 0; v < 2; ++v) {
        c.variant = v ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
        c.backend = v ? fast_backend() : TR_BACKEND_CPU;
        ar1_noise(&r, 0.5, x, n);
        x[b] = x[b2] = 0.0f;
        tr_whiten *q = make(&c);
        if (!q) break;
        const size_t D = (size_t)tr_whiten_latency(q);
        run(q, x, n, y0, NULL, 0);
        tr_whiten_reset(q);
        x[b] = NAN;
        x[b2] = INFINITY;
        run(q, x, n, y1, &r, 0);
        size_t differ = 0;
        for (size_t i = D; i < n; ++i) {
            const size_t t = i - D;
            const int in_gate = t + 20 >= b && t <= b2 + 20;
            if (in_gate) {
                CHECK(y1[i] == 0.0f, "z[%zu] not gated", t);
            } else if (y1[i] != y0[i]) {
                ++differ;
            }
        }
        CHECK(differ == 0, "variant %d: %zu outputs outside the gate changed", v, differ);
        CHECK(tr_whiten_gated(q) == b2 - b + 41, "gated %llu",
              (unsigned long long)tr_whiten_gated(q));
        /* The state is clean: after the gate the stream is whitened again. */
        CHECK(isfinite(y1[n - 1]) && y1[n - 1] != 0.0f, "output after the gate");
        tr_whiten_destroy(q);
    }
    free(x);
    free(y0);
    free(y1);
}

/* Whitened AR(1) noise: the Welch PSD of the output is 2 / rate (unit
 * variance) in every bin above fmin, and 0 below. */
static void test_unit_variance(void)
{
    const double rate = 4096.0, a = 0.9, fmin = 20.0;
    const size_t nfft = 1024, n = (size_t)1 << 19;
    double psd[513];
    ar1_psd(a, rate, nfft, psd);
    tr_whiten_config c = tr_whiten_config_default();
    c.rate = rate;
    c.psd = psd;
    c.nfft = nfft;
    c.fmin = fmin;
    c.backend = fast_backend();
    tr_whiten *q = make(&c);
    if (!q) return;
    float *x = (float *)malloc(n * sizeof *x), *y = (float *)malloc(n * sizeof *y);
    tu_rng r = {99};
    ar1_noise(&r, a, x, n);
    run(q, x, n, y, NULL, 0);
    const size_t skip = (size_t)tr_whiten_latency(q) + 2 * tr_whiten_half_len(q);
    double out[257], var = 0;
    tr_error err;
    CHECK(tr_psd_welch(y + skip, n - skip, rate, 512, out, &err) == TR_OK, "%s",
          err.message);
    for (size_t i = skip; i < n; ++i)
        var += (double)y[i] * y[i] / (double)(n - skip);
    const double unit = 2.0 / rate, df = rate / 512.0;
    double worst = 0, mean = 0;
    size_t used = 0;
    for (size_t k = 1; k < 256; ++k) {
        const double f = k * df;
        if (f < fmin + 64.0) {
            if (f < fmin - 40.0) CHECK(out[k] < 1e-3 * unit, "bin %g Hz not removed", f);
            continue;
        }
        const double ratio = out[k] / unit;
        mean += ratio;
        ++used;
        if (fabs(ratio - 1.0) > worst) worst = fabs(ratio - 1.0);
    }
    mean /= (double)used;
    CHECK(fabs(mean - 1.0) < 0.02, "mean whitened PSD %g of unit", mean);
    CHECK(worst < 0.2, "a bin is %g off unit", worst);
    CHECK(fabs(var / (1.0 - 2.0 * fmin / rate) - 1.0) < 0.03, "variance %g", var);
    free(x);
    free(y);
    tr_whiten_destroy(q);
}

static void expect_fail(const tr_whiten_config *c, tr_status code, const char *text)
{
    tr_error err;
    tr_whiten *q = tr_whiten_create(c, &err);
    CHECK(q == NULL && err.code == code && strstr(err.message, text),
          "want %d '%s', got %d '%s'", (int)code, text, (int)err.code, err.message);
    tr_whiten_destroy(q);
}

static void test_config(void)
{
    double psd[129];
    tr_whiten_config c = small_config(0.5, 15.0, 0, psd), b;
    c.backend = TR_BACKEND_CPU;
    b = c;
    b.psd = NULL;
    expect_fail(&b, TR_ERR_INVALID, "NULL psd");
    b = c;
    b.fmin = 256.0;
    expect_fail(&b, TR_ERR_INVALID, "fmin");
    b = c;
    b.fmin = -1.0;
    expect_fail(&b, TR_ERR_INVALID, "fmin");
    b = c;
    b.half_len = 128;
    expect_fail(&b, TR_ERR_INVALID, "half_len");
    b = c;
    b.half_len = 10;
    b.fft_len = 21;
    expect_fail(&b, TR_ERR_INVALID, "fft_len");
    b = c;
    b.nfft = 255;
    expect_fail(&b, TR_ERR_INVALID, "nfft");
    b = c;
    b.variant = TR_VARIANT_PAPER;
    b.backend = TR_BACKEND_AUTO;
    expect_fail(&b, TR_ERR_UNSUPPORTED, "paper");
    double bad[129];
    memcpy(bad, psd, sizeof bad);
    bad[100] = 0.0;
    b = c;
    b.psd = bad;
    expect_fail(&b, TR_ERR_INVALID, "bin 100");
    bad[100] = NAN;
    expect_fail(&b, TR_ERR_INVALID, "bin 100");
    /* Below fmin the PSD is not looked at. */
    memcpy(bad, psd, sizeof bad);
    bad[3] = NAN;
    b.fmin = 8.0;
    tr_whiten *q = make(&b);
    CHECK(tr_whiten_process(q, NULL, 0, NULL) == TR_OK, "empty input");
    CHECK(tr_whiten_process(q, NULL, 5, NULL) == TR_ERR_INVALID, "NULL buffers");
    CHECK(strstr(tr_whiten_last_error(q), "NULL") != NULL, "%s", tr_whiten_last_error(q));
    tr_whiten_destroy(q);
    /* The design curve is infinite below 10 Hz: fmin must be >= 10 Hz. */
    double design[2049];
    tr_error err;
    CHECK(tr_psd_design(4096.0, 4096, design, &err) == TR_OK, "%s", err.message);
    b = c;
    b.rate = 4096.0;
    b.nfft = 4096;
    b.psd = design;
    b.fmin = 5.0;
    expect_fail(&b, TR_ERR_INVALID, "5 Hz");
    b.fmin = 10.0;
    q = make(&b);
    tr_whiten_destroy(q);
    if (!use_gpu && tr_cuda_device_count(NULL, 0) == 0) {
        b = c;
        b.backend = TR_BACKEND_CUDA;
        expect_fail(&b, TR_ERR_NO_DEVICE, "CUDA");
        b.backend = TR_BACKEND_AUTO;
        q = make(&b);
        CHECK(q && tr_whiten_backend(q) == TR_BACKEND_CPU, "AUTO falls back to the CPU");
        tr_whiten_destroy(q);
    }
    CHECK(tr_whiten_process(NULL, NULL, 0, NULL) == TR_ERR_INVALID, "NULL object");
}

int main(int argc, char **argv)
{
    use_gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    if (use_gpu) {
        char why[256];
        if (tr_cuda_device_count(why, sizeof why) == 0) {
            printf("test_whiten --gpu: skipped (%s)\n", why);
            return 77;
        }
    }
    test_variants();
    test_impulse();
    test_gate();
    test_unit_variance();
    test_config();
    return tu_finish(use_gpu ? "test_whiten --gpu" : "test_whiten");
}
