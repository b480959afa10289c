/*
 * SPIIR filter bank: every variant against the reference (relative RMS error),
 * chunking invariance (bit for bit), analytic responses, bank validation and
 * files, the non-finite input policy and backend errors.
 *
 * Usage: test_spiir          CPU variants (reference, optimized with each kernel)
 *        test_spiir --gpu    CUDA variants FAST and PAPER (exit 77 = skipped
 *                            without a GPU)
 */
#define _DEFAULT_SOURCE /* setenv */
#include <transient/spiir.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spiir/spiir_variants.h"
#include "common/test_util.h"
#include "spiir_test_compare.h"

#define SKIP 77

/* ---- banks and signals ------------------------------------------------- */

/* Random bank: poles with 1 - |a1| log-uniform in [min_gap, 0.3] (down to
 * 1e-4: long memories, where float32 errors accumulate), random phases and
 * gains, delays in [0, max_delay]. Filter counts per template in [lo, hi]. */
static tr_spiir_bank *random_bank(tu_rng *r, uint32_t ntemplates, uint32_t lo,
                                  uint32_t hi, int32_t max_delay, double min_gap,
                                  int flat_gains)
{
    uint32_t *counts = malloc(ntemplates * sizeof *counts);
    uint64_t total = 0;
    for (uint32_t t = 0; t < ntemplates; t++) {
        counts[t] = (uint32_t)tu_range(r, lo, hi);
        total += counts[t];
    }
    tr_spiir_filter *f = calloc(total, sizeof *f);
    const double lg_min = log10(min_gap), lg_max = log10(0.3);
    for (uint64_t i = 0; i < total; i++) {
        const double gap = pow(10.0, lg_min + (lg_max - lg_min) * tu_uniform(r));
        const double th = 6.283185307179586 * tu_uniform(r);
        f[i].a1_re = (1.0 - gap) * cos(th);
        f[i].a1_im = (1.0 - gap) * sin(th);
        /* Gains scaled like a matched filter's (sharp poles get small gains),
         * or not: then the sharpest poles dominate the output, and with them
         * the error of a pole rounded to float. */
        const double g = flat_gains ? 1.0 : sqrt(gap);
        f[i].b0_re = g * tu_gauss(r);
        f[i].b0_im = g * tu_gauss(r);
        f[i].delay = (int32_t)tu_range(r, 0, max_delay);
        f[i].level = 0;
    }
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(f, counts, ntemplates, 1.0 / 4096, &err);
    CHECK(b != NULL, "random bank: %s", err.message);
    free(f);
    free(counts);
    return b;
}

/* White noise, with a chirp-like tone on top. */
static void gen_signal(float *x, size_t nvals, tu_rng *r)
{
    for (size_t i = 0; i < nvals; i++)
        x[i] = (float)(tu_gauss(r) + 0.5 * sin(1e-6 * (double)i * (double)i));
}

/* ---- running a configuration ------------------------------------------- */

typedef struct {
    const char *name;
    tr_backend backend;
    tr_variant variant;
    const char *kernel; /* CPU kernel, or NULL */
} variant_t;

/* Filter n samples with chunks of random size in [1, chunk_max] (0: one
 * call). Returns 0 on success. */
static int run_object(const tr_spiir_bank *b, const variant_t *v, int cplx,
                      const float *x, size_t n, float *snr, size_t chunk_max, tu_rng *r,
                      uint64_t *nonfinite)
{
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = v->backend;
    cfg.variant = v->variant;
    cfg.complex_input = cplx;
    cfg.batch = (size_t)tu_range(r, 1, 5000); /* device batches split the stream too */
    tr_error err;
    if (v->kernel) tr_spiir_cpu_select(v->kernel);
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    if (!q) {
        fprintf(stderr, "%s: create failed: %s\n", v->name, err.message);
        tr_spiir_cpu_select(NULL);
        return -1;
    }
    const size_t per = (size_t)tr_spiir_bank_templates(b) * 2;
    const size_t w = cplx ? 2 : 1;
    size_t pos = 0;
    int rc = 0;
    while (pos < n && rc == 0) {
        size_t chunk = chunk_max ? (size_t)tu_range(r, 1, (long)chunk_max) : n - pos;
        if (chunk > n - pos) chunk = n - pos;
        if (tr_spiir_process(q, x + pos * w, chunk, snr + pos * per) != TR_OK) {
            fprintf(stderr, "%s: process failed: %s\n", v->name, tr_spiir_last_error(q));
            rc = -1;
        }
        pos += chunk;
    }
    if (rc == 0 && tr_spiir_position(q) != n) {
        fprintf(stderr, "%s: position %llu, expected %zu\n", v->name,
                (unsigned long long)tr_spiir_position(q), n);
        rc = -1;
    }
    if (nonfinite) *nonfinite = tr_spiir_nonfinite(q);
    tr_spiir_destroy(q);
    tr_spiir_cpu_select(NULL);
    return rc;
}

static int all_finite(const float *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((a[i] - a[i]) == 0.0f)) return 0;
    return 1;
}

/* Equations 7-8 on the whole input at once, in double (x[j] = 0 for j < 0). */
static void direct_definition(const tr_spiir_bank *b, int cplx, const float *x, size_t n,
                              float *snr)
{
    const uint32_t nt = tr_spiir_bank_templates(b);
    for (uint32_t t = 0; t < nt; t++) {
        double *zr = calloc(n, sizeof *zr), *zi = calloc(n, sizeof *zi);
        for (uint32_t i = 0; i < tr_spiir_bank_filters(b, t); i++) {
            const tr_spiir_filter *f = tr_spiir_bank_filter(b, t, i);
            double yr = 0.0, yi = 0.0;
            for (size_t k = 0; k < n; k++) {
                double xr = 0.0, xi = 0.0;
                if (k >= (size_t)f->delay) {
                    const size_t j = k - (size_t)f->delay;
                    xr = cplx ? x[2 * j] : x[j];
                    xi = cplx ? x[2 * j + 1] : 0.0;
                }
                const double nr =
                    f->a1_re * yr - f->a1_im * yi + f->b0_re * xr - f->b0_im * xi;
                const double ni =
                    f->a1_re * yi + f->a1_im * yr + f->b0_re * xi + f->b0_im * xr;
                yr = nr;
                yi = ni;
                zr[k] += yr;
                zi[k] += yi;
            }
        }
        for (size_t k = 0; k < n; k++) {
            snr[(k * nt + t) * 2] = (float)(2.0 * tr_spiir_bank_dt(b) * zr[k]);
            snr[(k * nt + t) * 2 + 1] = (float)(2.0 * tr_spiir_bank_dt(b) * zi[k]);
        }
        free(zr);
        free(zi);
    }
}

static const variant_t REF = {"reference", TR_BACKEND_CPU, TR_VARIANT_REFERENCE, NULL};

/*
 * Accuracy: a long stream (1e6 samples) through a few templates with poles
 * down to 1 - |a1| = 1e-4, against the reference in complex double.
 */
static void test_accuracy(const variant_t *v)
{
    tu_rng r = {0xacc0};
    const size_t n = 1000000;
    for (int cplx = 0; cplx < 2; cplx++) {
        tr_spiir_bank *b = random_bank(&r, 3, 5, 20, 300, 1e-4, 1);
        const size_t nt = tr_spiir_bank_templates(b);
        float *x = malloc(n * 2 * sizeof *x);
        float *ref = malloc(n * nt * 2 * sizeof *ref);
        float *got = malloc(n * nt * 2 * sizeof *got);
        gen_signal(x, n * (cplx ? 2 : 1), &r);
        int ok = run_object(b, &REF, cplx, x, n, ref, 0, &r, NULL) == 0 &&
                 run_object(b, v, cplx, x, n, got, 0, &r, NULL) == 0;
        const double e = ok ? rel_rms(got, ref, n * nt * 2) : INFINITY;
        CHECK(ok && e <= 1e-4 && all_finite(got, n * nt * 2),
              "%s %s input: relative RMS error %.3g over %zu samples", v->name,
              cplx ? "complex" : "real", e, n);
        printf("%s, %s input: relative RMS error %.3g\n", v->name,
               cplx ? "complex" : "real", e);
        free(x);
        free(ref);
        free(got);
        tr_spiir_bank_destroy(b);
    }
}

/*
 * Chunking: the same stream in one call, in random chunks and one sample per
 * call gives the same bits; also against the reference on varied shapes
 * (templates of 1 to 40 filters: partial vector groups, many templates).
 */
static void test_chunking(const variant_t *v)
{
    tu_rng r = {0xc4c4 + (uint64_t)v->variant};
    const size_t sizes[] = {1, 7, 33, 1000, 5000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int cplx = 0; cplx < 2; cplx++) {
            const size_t n = sizes[si];
            const uint32_t nt = (uint32_t)tu_range(&r, 1, 11);
            tr_spiir_bank *b = random_bank(
                &r, nt, 1, 40, si % 2 ? 5000 : (int32_t)tu_range(&r, 0, 9), 1e-3, 0);
            float *x = malloc(n * 2 * sizeof *x);
            float *ref = malloc(n * nt * 2 * sizeof *ref);
            float *one = malloc(n * nt * 2 * sizeof *one);
            float *got = malloc(n * nt * 2 * sizeof *got);
            gen_signal(x, n * (cplx ? 2 : 1), &r);
            CHECK(run_object(b, &REF, cplx, x, n, ref, 0, &r, NULL) == 0, "reference");
            CHECK(run_object(b, v, cplx, x, n, one, 0, &r, NULL) == 0, "%s", v->name);
            const double e = rel_rms(one, ref, n * nt * 2);
            CHECK(e <= 1e-5, "%s: n=%zu nt=%u %s: error %.3g against the reference",
                  v->name, n, nt, cplx ? "complex" : "real", e);
            const size_t chunkings[] = {1, 3, 100, 4500};
            for (int ci = 0; ci < 4; ci++) {
                if (chunkings[ci] == 1 && n > 1000) continue; /* time */
                CHECK(run_object(b, v, cplx, x, n, got, chunkings[ci], &r, NULL) == 0,
                      "%s", v->name);
                CHECK(!memcmp(got, one, n * nt * 2 * sizeof *got),
                      "%s: n=%zu nt=%u %s, chunks up to %zu: not bit-identical", v->name,
                      n, nt, cplx ? "complex" : "real", chunkings[ci]);
            }
            free(x);
            free(ref);
            free(one);
            free(got);
            tr_spiir_bank_destroy(b);
        }
    }
    /* A long stream through a delay line that slides many times, against the
     * definition evaluated here on the whole input (an oracle that shares no
     * code with the library's delay line). */
    for (int cplx = 0; cplx < 2; cplx++) {
        const size_t n = 30000;
        tr_spiir_bank *b = random_bank(&r, 2, 3, 9, 3000, 1e-3, 0);
        float *x = malloc(n * 2 * sizeof *x);
        float *want = malloc(n * 4 * sizeof *want), *one = malloc(n * 4 * sizeof *one);
        float *got = malloc(n * 4 * sizeof *got);
        gen_signal(x, n * 2, &r);
        direct_definition(b, cplx, x, n, want);
        CHECK(run_object(b, v, cplx, x, n, one, 0, &r, NULL) == 0, "%s", v->name);
        CHECK(run_object(b, v, cplx, x, n, got, 1, &r, NULL) == 0, "%s", v->name);
        const double e = rel_rms(one, want, n * 4);
        CHECK(e <= 1e-5,
              "%s %s: error %.3g against the definition over a sliding delay line",
              v->name, cplx ? "complex" : "real", e);
        CHECK(!memcmp(got, one, n * 4 * sizeof *got),
              "%s: one sample per call over a sliding delay line", v->name);
        free(x);
        free(want);
        free(one);
        free(got);
        tr_spiir_bank_destroy(b);
    }
}

/*
 * NaN/Inf input: finite output equal to the output with those values zeroed,
 * and the count of replaced values.
 */
static void test_nonfinite(const variant_t *v)
{
    tu_rng r = {0xbad};
    const size_t n = 3000;
    for (int cplx = 0; cplx < 2; cplx++) {
        tr_spiir_bank *b = random_bank(&r, 3, 1, 12, 50, 1e-3, 0);
        const size_t nv = n * (cplx ? 2 : 1), nout = n * 3 * 2;
        float *x = malloc(nv * sizeof *x), *x0 = malloc(nv * sizeof *x0);
        float *a = malloc(nout * sizeof *a), *c = malloc(nout * sizeof *c);
        gen_signal(x, nv, &r);
        memcpy(x0, x, nv * sizeof *x);
        uint64_t bad = 0;
        const float specials[] = {NAN, INFINITY, -INFINITY, -NAN};
        for (size_t i = 0; i < nv; i += (size_t)tu_range(&r, 1, 60)) {
            x[i] = specials[tu_range(&r, 0, 3)];
            x0[i] = 0.0f;
            bad++;
        }
        uint64_t counted = 0;
        CHECK(run_object(b, v, cplx, x, n, a, 97, &r, &counted) == 0, "%s", v->name);
        CHECK(run_object(b, v, cplx, x0, n, c, 0, &r, NULL) == 0, "%s", v->name);
        CHECK(all_finite(a, nout), "%s: non-finite output after NaN/Inf input", v->name);
        CHECK(!memcmp(a, c, nout * sizeof *a),
              "%s %s: NaN/Inf input differs from zeroed input", v->name,
              cplx ? "complex" : "real");
        CHECK(counted == bad, "%s: nonfinite count %llu, expected %llu", v->name,
              (unsigned long long)counted, (unsigned long long)bad);
        free(x);
        free(x0);
        free(a);
        free(c);
        tr_spiir_bank_destroy(b);
    }
}

/*
 * 640 templates of 449-512 filters with real input (one warp per template,
 * 16 filters per lane): the CUDA FAST variant with its samples in a shared-memory
 * window (delays up to 3000) and from global memory (TR_SPIIR_CUDA_WINDOW=0,
 * and delays up to 20000, whose window would not fit), each against the
 * reference and the same bits for any chunking. The window kernel places the
 * filters on other lanes, so its sums round differently: its bits differ from
 * the global kernel's, which shows that it ran.
 */
static void test_wide_templates(const variant_t *v)
{
    tu_rng r = {0x51de};
    /* Enough templates for whole batches of one warp each on GPUs of up to
     * 160 SMs (fewer take segmented time, spiir_cuda.cu); more samples than
     * a window holds, so that windows are refilled. */
    const size_t n = 1200;
    const uint32_t nt = 640;
    const size_t nout = n * nt * 2;
    for (int k = 0; k < 3; k++) {
        const int32_t max_delay = k == 2 ? 20000 : 3000;
        const double min_gap = k == 1 ? 1e-4 : 1e-3; /* k = 1: split poles */
        tr_spiir_bank *b = random_bank(&r, nt, 449, 512, max_delay, min_gap, 0);
        float *x = malloc(n * sizeof *x), *ref = malloc(nout * sizeof *ref);
        float *one[2] = {malloc(nout * sizeof(float)), malloc(nout * sizeof(float))};
        float *got = malloc(nout * sizeof *got);
        gen_signal(x, n, &r);
        CHECK(run_object(b, &REF, 0, x, n, ref, 0, &r, NULL) == 0, "reference");
        for (int w = 0; w < 2; w++) {
            const char *path = w ? "global" : "default";
            if (w) setenv("TR_SPIIR_CUDA_WINDOW", "0", 1);
            CHECK(run_object(b, v, 0, x, n, one[w], 0, &r, NULL) == 0, "%s", v->name);
            const double e = rel_rms(one[w], ref, nout);
            CHECK(e <= 1e-5, "%s %s, delays up to %d: error %.3g against the reference",
                  v->name, path, (int)max_delay, e);
            const size_t chunkings[] = {1, 3, 100, 4500};
            for (int ci = 0; ci < 4; ci++) {
                CHECK(run_object(b, v, 0, x, n, got, chunkings[ci], &r, NULL) == 0, "%s",
                      v->name);
                CHECK(!memcmp(got, one[w], nout * sizeof *got),
                      "%s %s, delays up to %d, chunks up to %zu: not bit-identical",
                      v->name, path, (int)max_delay, chunkings[ci]);
            }
            unsetenv("TR_SPIIR_CUDA_WINDOW");
        }
        const int same = !memcmp(one[0], one[1], nout * sizeof(float));
        CHECK(k == 2 ? same : !same,
              "%s, delays up to %d: the default and the global kernel give %s bits",
              v->name, (int)max_delay, same ? "the same" : "different");
        printf("%s, templates of 449-512 filters, delays up to %d: %s kernel\n", v->name,
               (int)max_delay, same ? "global" : "window");
        free(x);
        free(ref);
        free(one[0]);
        free(one[1]);
        free(got);
        tr_spiir_bank_destroy(b);
    }
}

/*
 * Two objects whose window kernels need windows of different sizes (delays up
 * to 3000 and up to 400), the larger created first, called in turns: each
 * gives the bits it gives alone (the kernel's shared-memory limit must fit
 * both).
 */
static void test_two_windows(const variant_t *v)
{
    tu_rng r = {0x2a2a};
    const size_t n = 700;
    const uint32_t nt = 640;
    const size_t nout = n * nt * 2;
    tr_spiir_bank *b[2] = {random_bank(&r, nt, 449, 512, 3000, 1e-3, 0),
                           random_bank(&r, nt, 449, 512, 400, 1e-3, 0)};
    float *x = malloc(n * sizeof *x);
    float *alone[2] = {malloc(nout * sizeof(float)), malloc(nout * sizeof(float))};
    float *turns[2] = {malloc(nout * sizeof(float)), malloc(nout * sizeof(float))};
    gen_signal(x, n, &r);
    for (int i = 0; i < 2; i++)
        CHECK(run_object(b[i], v, 0, x, n, alone[i], 0, &r, NULL) == 0, "%s", v->name);
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = v->backend;
    cfg.variant = v->variant;
    tr_error err;
    tr_spiir *q[2] = {tr_spiir_create(&cfg, b[0], &err), NULL};
    CHECK(q[0] != NULL, "%s: create: %s", v->name, err.message);
    q[1] = tr_spiir_create(&cfg, b[1], &err);
    CHECK(q[1] != NULL, "%s: create: %s", v->name, err.message);
    for (size_t pos = 0; q[0] && q[1] && pos < n; pos += 100)
        for (int i = 0; i < 2; i++)
            CHECK(tr_spiir_process(q[i], x + pos, 100, turns[i] + pos * nt * 2) == TR_OK,
                  "%s: object %d in turns: %s", v->name, i, tr_spiir_last_error(q[i]));
    for (int i = 0; i < 2; i++)
        CHECK(q[0] && q[1] && !memcmp(turns[i], alone[i], nout * sizeof(float)),
              "%s: object %d in turns with another window size: not the bits it gives "
              "alone",
              v->name, i);
    for (int i = 0; i < 2; i++) {
        tr_spiir_destroy(q[i]);
        tr_spiir_bank_destroy(b[i]);
        free(alone[i]);
        free(turns[i]);
    }
    free(x);
}

/* ---- analytic checks on tiny banks ---------------------------------------- */

/* Impulse response of one filter: z[k] = 2 dt b0 a1^(k-d) for k >= d, else 0;
 * a second filter in the template adds its own. */
static void test_impulse(tr_variant variant)
{
    const double dt = 0.25;
    const tr_spiir_filter fs[2] = {{0.9, 0.3, 0.5, -0.25, 3, 0},
                                   {-0.5, 0.5, 1.0, 0.0, 0, 2}};
    for (int nf = 1; nf <= 2; nf++) {
        const uint32_t counts[1] = {(uint32_t)nf};
        tr_error err;
        tr_spiir_bank *b = tr_spiir_bank_create(fs, counts, 1, dt, &err);
        CHECK(b != NULL, "%s", err.message);
        if (!b) return;
        tr_spiir_config cfg = tr_spiir_config_default();
        cfg.backend = TR_BACKEND_CPU;
        cfg.variant = variant;
        tr_spiir *q = tr_spiir_create(&cfg, b, &err);
        CHECK(q != NULL, "%s", err.message);
        float x[40] = {0}, z[80];
        x[0] = 1.0f;
        CHECK(tr_spiir_process(q, x, 40, z) == TR_OK, "process");
        double worst = 0.0;
        for (int k = 0; k < 40; k++) {
            double er = 0.0, ei = 0.0;
            for (int l = 0; l < nf; l++) {
                const tr_spiir_filter *f = &fs[l];
                if (k < f->delay) continue;
                /* b0 a1^(k-d) by repeated multiplication in double */
                double pr = f->b0_re, pi = f->b0_im;
                for (int i = 0; i < k - f->delay; i++) {
                    const double t = pr * f->a1_re - pi * f->a1_im;
                    pi = pr * f->a1_im + pi * f->a1_re;
                    pr = t;
                }
                er += 2 * dt * pr;
                ei += 2 * dt * pi;
            }
            const double d = fmax(fabs(z[2 * k] - er), fabs(z[2 * k + 1] - ei));
            if (d > worst) worst = d;
        }
        CHECK(worst < 1e-6, "%s, %d filter(s): impulse response off by %g",
              tr_variant_name(variant), nf, worst);
        /* Reset: the same response again. */
        float z2[80];
        CHECK(tr_spiir_reset(q) == TR_OK && tr_spiir_position(q) == 0, "reset");
        CHECK(tr_spiir_process(q, x, 40, z2) == TR_OK && !memcmp(z, z2, sizeof z),
              "%s: output after reset differs", tr_variant_name(variant));
        tr_spiir_destroy(q);
        tr_spiir_bank_destroy(b);
    }
}

/* ---- bank validation and files -------------------------------------------- */

static void expect_reject(const char *what, const tr_spiir_filter *f,
                          const uint32_t *counts, uint32_t nt, double dt,
                          const char *needle)
{
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(f, counts, nt, dt, &err);
    CHECK(b == NULL && err.code == TR_ERR_INVALID && strstr(err.message, needle),
          "%s: expected rejection mentioning \"%s\", got \"%s\"", what, needle,
          b ? "(accepted)" : err.message);
    tr_spiir_bank_destroy(b);
}

static void test_bank_validation(void)
{
    const tr_spiir_filter good = {0.5, 0.5, 1.0, 0.0, 2, 0};
    tr_spiir_filter f[2] = {good, good};
    const uint32_t c1[1] = {2}, c2[2] = {2, 0};
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(f, c1, 1, 1e-3, &err);
    CHECK(b && err.code == TR_OK, "good bank: %s", err.message);
    CHECK(tr_spiir_bank_templates(b) == 1 && tr_spiir_bank_filters(b, 0) == 2 &&
              tr_spiir_bank_total_filters(b) == 2 && tr_spiir_bank_dt(b) == 1e-3 &&
              tr_spiir_bank_max_delay(b) == 2 && tr_spiir_bank_filter(b, 0, 1) &&
              !tr_spiir_bank_filter(b, 0, 2) && !tr_spiir_bank_filter(b, 1, 0),
          "accessors");
    tr_spiir_bank_destroy(b);

    f[1].a1_re = 0.8;
    f[1].a1_im = 0.6; /* |a1| = 1 */
    expect_reject("|a1| = 1", f, c1, 1, 1e-3, "|a1|");
    f[1].a1_re = 1.5;
    f[1].a1_im = 0.0;
    expect_reject("|a1| > 1", f, c1, 1, 1e-3, "|a1|");
    f[1] = good;
    f[1].delay = -1;
    expect_reject("negative delay", f, c1, 1, 1e-3, "delay");
    f[1].delay = TR_SPIIR_MAX_DELAY + 1;
    expect_reject("huge delay", f, c1, 1, 1e-3, "delay");
    f[1] = good;
    f[1].b0_im = NAN;
    expect_reject("NaN coefficient", f, c1, 1, 1e-3, "non-finite");
    f[1] = good;
    f[1].a1_re = INFINITY;
    expect_reject("Inf pole", f, c1, 1, 1e-3, "non-finite");
    f[1] = good;
    f[1].level = TR_SPIIR_MAX_LEVEL + 1;
    expect_reject("level", f, c1, 1, 1e-3, "level");
    f[1] = good;
    expect_reject("empty template", f, c2, 2, 1e-3, "empty");
    expect_reject("no templates", f, c1, 0, 1e-3, "at least one template");
    expect_reject("dt = 0", f, c1, 1, 0.0, "dt");
    expect_reject("dt < 0", f, c1, 1, -1.0, "dt");
    expect_reject("dt NaN", f, c1, 1, NAN, "dt");
    expect_reject("NULL filters", NULL, c1, 1, 1e-3, "NULL");
    expect_reject("NULL counts", f, NULL, 1, 1e-3, "NULL");
}

static long file_size(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return -1;
    fseek(fp, 0, SEEK_END);
    long s = ftell(fp);
    fclose(fp);
    return s;
}

static void write_bytes(const char *path, const unsigned char *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(p, 1, n, fp);
        fclose(fp);
    }
}

static void expect_load_fail(const char *what, const char *path)
{
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_load(path, &err);
    CHECK(b == NULL && err.code != TR_OK && err.message[0], "%s: loaded anyway", what);
    tr_spiir_bank_destroy(b);
}

static void test_files(void)
{
    tu_rng r = {0xf11e};
    const char *path = "test_spiir_bank.bin", *bad = "test_spiir_bad.bin";
    tr_spiir_bank *b = random_bank(&r, 5, 1, 9, 100, 1e-3, 0);
    tr_error err;
    CHECK(tr_spiir_bank_save(b, path, &err) == TR_OK, "save: %s", err.message);
    tr_spiir_bank *c = tr_spiir_bank_load(path, &err);
    CHECK(c != NULL, "load: %s", err.message);
    int same = c && tr_spiir_bank_templates(c) == tr_spiir_bank_templates(b) &&
               tr_spiir_bank_dt(c) == tr_spiir_bank_dt(b) &&
               tr_spiir_bank_max_delay(c) == tr_spiir_bank_max_delay(b);
    for (uint32_t t = 0; same && t < tr_spiir_bank_templates(b); t++) {
        same = tr_spiir_bank_filters(c, t) == tr_spiir_bank_filters(b, t);
        for (uint32_t i = 0; same && i < tr_spiir_bank_filters(b, t); i++)
            same = !memcmp(tr_spiir_bank_filter(b, t, i), tr_spiir_bank_filter(c, t, i),
                           sizeof(tr_spiir_filter));
    }
    CHECK(same, "round trip changed the bank");
    const long size = file_size(path);
    CHECK(size == 24 + 4 * 5 + 40 * (long)tr_spiir_bank_total_filters(b), "file size %ld",
          size);

    /* Corruptions of the saved bytes. */
    unsigned char *bytes = malloc((size_t)size + 8);
    FILE *fp = fopen(path, "rb");
    CHECK(fp && fread(bytes, 1, (size_t)size, fp) == (size_t)size, "read back");
    if (fp) fclose(fp);
    write_bytes(bad, bytes, (size_t)size - 1);
    expect_load_fail("truncated by one byte", bad);
    write_bytes(bad, bytes, 20);
    expect_load_fail("truncated header", bad);
    write_bytes(bad, bytes, 0);
    expect_load_fail("empty file", bad);
    memset(bytes + size, 0, 8);
    write_bytes(bad, bytes, (size_t)size + 3);
    expect_load_fail("trailing bytes", bad);
    bytes[0] ^= 1;
    write_bytes(bad, bytes, (size_t)size);
    expect_load_fail("bad magic", bad);
    bytes[0] ^= 1;
    unsigned char save[4];
    memcpy(save, bytes + 8, 4);
    memset(bytes + 8, 0xff, 4); /* 4 billion templates */
    write_bytes(bad, bytes, (size_t)size);
    expect_load_fail("absurd template count", bad);
    memcpy(bytes + 8, save, 4);
    memset(bytes + 24, 0xff, 4); /* 4 billion filters in template 0 */
    write_bytes(bad, bytes, (size_t)size);
    expect_load_fail("absurd filter count", bad);
    /* A pole moved onto the unit circle: validated like create. */
    fp = fopen(path, "rb");
    CHECK(fp && fread(bytes, 1, (size_t)size, fp) == (size_t)size, "read back");
    if (fp) fclose(fp);
    const unsigned char one[8] = {0, 0, 0, 0, 0, 0, 0xf0, 0x3f}; /* 1.0 */
    memcpy(bytes + 24 + 4 * 5, one, 8);
    memset(bytes + 24 + 4 * 5 + 8, 0, 8);
    write_bytes(bad, bytes, (size_t)size);
    tr_spiir_bank *u = tr_spiir_bank_load(bad, &err);
    CHECK(!u && strstr(err.message, "|a1|"), "unstable pole in a file: %s",
          u ? "(accepted)" : err.message);
    tr_spiir_bank_destroy(u);
    expect_load_fail("missing file", "no/such/dir/bank.bin");
    free(bytes);
    remove(path);
    remove(bad);
    tr_spiir_bank_destroy(b);
    tr_spiir_bank_destroy(c);
}

/* ---- object API ------------------------------------------------------------ */

static void test_api(void)
{
    const tr_spiir_filter f = {0.5, 0.0, 1.0, 0.0, 0, 0};
    const uint32_t c1[1] = {1};
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_create(&f, c1, 1, 1.0, &err);
    tr_spiir_config cfg = tr_spiir_config_default();
    CHECK(cfg.backend == TR_BACKEND_AUTO && cfg.variant == TR_VARIANT_FAST &&
              cfg.batch == 4096 && cfg.complex_input == 0,
          "defaults");

    /* AUTO falls back to the CPU without a GPU. */
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    CHECK(q != NULL, "%s", err.message);
    char why[160];
    const int ngpu = tr_cuda_device_count(why, sizeof why);
    if (ngpu == 0)
        CHECK(tr_spiir_backend(q) == TR_BACKEND_CPU, "AUTO without GPU is CPU");
    /* Empty input and NULL checks. */
    CHECK(tr_spiir_process(q, NULL, 0, NULL) == TR_OK && tr_spiir_position(q) == 0,
          "empty input");
    float z[2];
    CHECK(tr_spiir_process(q, NULL, 1, z) == TR_ERR_INVALID &&
              strstr(tr_spiir_last_error(q), "NULL"),
          "NULL samples");
    float x1 = 1.0f;
    CHECK(tr_spiir_process(q, &x1, 1, NULL) == TR_ERR_INVALID, "NULL output");
    CHECK(tr_spiir_process(q, &x1, 1, z) == TR_OK && z[0] == 2.0f && z[1] == 0.0f &&
              tr_spiir_templates(q) == 1,
          "one sample: %g %g", z[0], z[1]);
    if (tr_spiir_backend(q) == TR_BACKEND_CPU)
        CHECK(tr_spiir_process_device(q, &x1, 1, z) == TR_ERR_UNSUPPORTED,
              "process_device on the CPU");
    tr_spiir_destroy(q);

    /* Explicit CUDA without a GPU. */
    cfg.backend = TR_BACKEND_CUDA;
    q = tr_spiir_create(&cfg, b, &err);
    if (ngpu == 0)
        CHECK(!q && err.code == TR_ERR_NO_DEVICE && err.message[0],
              "explicit CUDA without GPU: %d %s", err.code, err.message);
    tr_spiir_destroy(q);
    cfg = tr_spiir_config_default();
    cfg.variant = TR_VARIANT_PAPER;
    q = tr_spiir_create(&cfg, b, &err);
    if (ngpu == 0) CHECK(!q && err.code == TR_ERR_NO_DEVICE, "paper variant without GPU");
    tr_spiir_destroy(q);

    /* Invalid configurations. */
    const struct {
        const char *what;
        tr_spiir_config c;
    } bad[] = {
        {"reference on CUDA", {0, TR_BACKEND_CUDA, 0, TR_VARIANT_REFERENCE, 4096, 0}},
        {"paper on the CPU", {0, TR_BACKEND_CPU, 0, TR_VARIANT_PAPER, 4096, 0}},
        {"complex_input 2", {2, TR_BACKEND_CPU, 0, TR_VARIANT_FAST, 4096, 0}},
        {"batch 0", {0, TR_BACKEND_CPU, 0, TR_VARIANT_FAST, 0, 0}},
        {"device -1", {0, TR_BACKEND_CPU, -1, TR_VARIANT_FAST, 4096, 0}},
        {"backend 7", {0, (tr_backend)7, 0, TR_VARIANT_FAST, 4096, 0}},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q = tr_spiir_create(&bad[i].c, b, &err);
        CHECK(!q && err.code == TR_ERR_INVALID && err.message[0], "%s accepted",
              bad[i].what);
        tr_spiir_destroy(q);
    }
    cfg = tr_spiir_config_default();
    CHECK(!tr_spiir_create(&cfg, NULL, &err) && err.code == TR_ERR_INVALID, "NULL bank");
    CHECK(!tr_spiir_create(NULL, b, &err) && err.code == TR_ERR_INVALID, "NULL config");

    /* The object keeps its own copy of the bank. */
    cfg.backend = TR_BACKEND_CPU;
    q = tr_spiir_create(&cfg, b, &err);
    tr_spiir_bank_destroy(b);
    CHECK(q && tr_spiir_process(q, &x1, 1, z) == TR_OK && z[0] == 2.0f,
          "bank destroyed after create");
    tr_spiir_destroy(q);
}

/* The kernels of the optimized variant give the same bits. */
static void test_kernels_agree(void)
{
    if (!tr_spiir_cpu_select("avx2")) {
        tr_spiir_cpu_select(NULL);
        printf("avx2 kernel not supported on this CPU: kernel agreement not checked\n");
        return;
    }
    tu_rng r = {0x6e6e};
    const variant_t gen = {"cpu-generic", TR_BACKEND_CPU, TR_VARIANT_FAST, "generic"};
    const variant_t avx = {"cpu-avx2", TR_BACKEND_CPU, TR_VARIANT_FAST, "avx2"};
    /* Poles down to 1 - |a1| = 1e-4 run with the lo parts, down to 1e-3
     * without them: both paths of both kernels. */
    for (int k = 0; k < 4; k++) {
        const int cplx = k & 1;
        const size_t n = 2000;
        tr_spiir_bank *b = random_bank(&r, 13, 1, 70, 400, k < 2 ? 1e-4 : 1e-3, 0);
        float *x = malloc(n * 2 * sizeof *x);
        float *a = malloc(n * 13 * 2 * sizeof *a), *c = malloc(n * 13 * 2 * sizeof *c);
        gen_signal(x, n * 2, &r);
        CHECK(run_object(b, &gen, cplx, x, n, a, 0, &r, NULL) == 0, "generic");
        CHECK(run_object(b, &avx, cplx, x, n, c, 77, &r, NULL) == 0, "avx2");
        CHECK(!memcmp(a, c, n * 13 * 2 * sizeof *a),
              "generic and avx2 kernels differ (%s)", cplx ? "complex" : "real");
        free(x);
        free(a);
        free(c);
        tr_spiir_bank_destroy(b);
    }
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    if (gpu) {
        char why[160];
        if (tr_cuda_device_count(why, sizeof why) == 0) {
            printf("test_spiir --gpu: skipped: %s\n", why);
            return SKIP;
        }
        const variant_t vs[] = {{"cuda-fast", TR_BACKEND_CUDA, TR_VARIANT_FAST, NULL},
                                {"cuda-paper", TR_BACKEND_CUDA, TR_VARIANT_PAPER, NULL}};
        for (int i = 0; i < 2; i++) {
            test_accuracy(&vs[i]);
            test_chunking(&vs[i]);
            test_nonfinite(&vs[i]);
        }
        test_wide_templates(&vs[0]);
        test_two_windows(&vs[0]);
        return tu_finish("test_spiir --gpu");
    }
    test_bank_validation();
    test_files();
    test_api();
    test_impulse(TR_VARIANT_REFERENCE);
    test_impulse(TR_VARIANT_FAST);
    test_kernels_agree();
    const variant_t vs[] = {REF,
                            {"cpu-generic", TR_BACKEND_CPU, TR_VARIANT_FAST, "generic"},
                            {"cpu-avx2", TR_BACKEND_CPU, TR_VARIANT_FAST, "avx2"}};
    for (int i = 0; i < 3; i++) {
        if (vs[i].kernel && !tr_spiir_cpu_select(vs[i].kernel)) {
            printf("%s: not supported on this CPU, skipped\n", vs[i].name);
            continue;
        }
        tr_spiir_cpu_select(NULL);
        if (i > 0) test_accuracy(&vs[i]);
        test_chunking(&vs[i]);
        test_nonfinite(&vs[i]);
    }
    return tu_finish("test_spiir");
}
