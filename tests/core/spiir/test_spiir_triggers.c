/*
 * Tests of the SPIIR trigger clustering (<transient/spiir_triggers.h>):
 * against an offline statement of the definition on random SNR streams with
 * random chunkings (1 included) and small output buffers, the peak
 * interpolation, non-finite values, threshold changes and invalid arguments;
 * the FAST variant (1 and several threads, AVX2 and generic scan kernels)
 * against REFERENCE call by call.
 */
#include <transient/spiir_triggers.h>

#include "spiir/spiir_triggers_internal.h"
#include "spiir/triggers_test_driver.h"

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

typedef struct {
    uint64_t sample;
    uint32_t t;
    float snr;
    uint64_t decided; /* sample that decides it; UINT64_MAX: the flush */
} expect_t;

static int cmp_expect(const void *a, const void *b)
{
    const expect_t *x = a, *y = b;
    if (x->decided != y->decided) return x->decided < y->decided ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* The definition, offline: per template, a cluster starts at the first sample
 * above the threshold; its peak moves to every later sample with a larger value
 * (above the threshold) within `window` samples of the current peak; it is
 * decided `window` samples after the final peak, or by the flush. */
/* |z|^2 as the definition has it: re^2 + im^2 in double (compared with the
 * threshold's square; |z| is its square root). */
static double mag2(const float *z)
{
    return (double)z[0] * (double)z[0] + (double)z[1] * (double)z[1];
}

static size_t oracle(const float *snr, size_t n, uint32_t nt, double thr, uint32_t window,
                     expect_t *out)
{
    size_t m = 0;
    for (uint32_t t = 0; t < nt; t++) {
        size_t k = 0;
        for (;;) {
            size_t s = k;
            double vs = 0.0;
            for (; s < n; s++) {
                vs = mag2(snr + (s * nt + t) * 2);
                if (isfinite(vs) && vs > thr * thr) break;
            }
            if (s >= n) break;
            size_t p = s;
            double vp = vs;
            size_t j = s + 1;
            for (; j < n && j - p <= window; j++) {
                double v = mag2(snr + (j * nt + t) * 2);
                if (isfinite(v) && v > thr * thr && v > vp) {
                    p = j;
                    vp = v;
                }
            }
            out[m].sample = p;
            out[m].t = t;
            out[m].snr = (float)sqrt(vp);
            if (j - p > window) {
                out[m++].decided = p + window;
                k = p + window + 1;
            } else {
                out[m++].decided = UINT64_MAX;
                break;
            }
        }
    }
    qsort(out, m, sizeof *out, cmp_expect);
    return m;
}

/* Random SNR: noise of rms ~1.4 with bumps of random height and width. */
static void random_snr(float *snr, size_t n, uint32_t nt, tu_rng *r)
{
    for (size_t i = 0; i < n * nt * 2; i++)
        snr[i] = (float)tu_gauss(r);
    for (uint32_t t = 0; t < nt; t++) {
        int bumps = (int)tu_range(r, 0, 12);
        for (int b = 0; b < bumps; b++) {
            double c = tu_uniform(r) * (double)n, w = 1.0 + 20.0 * tu_uniform(r);
            double h = 3.0 + 20.0 * tu_uniform(r), ph = 6.28 * tu_uniform(r);
            for (size_t k = 0; k < n; k++) {
                double g = h * exp(-0.5 * ((double)k - c) * ((double)k - c) / (w * w));
                snr[(k * nt + t) * 2] += (float)(g * cos(ph));
                snr[(k * nt + t) * 2 + 1] += (float)(g * sin(ph));
            }
        }
    }
    /* Plateaus: equal values keep the earlier sample. */
    if (n > 20) {
        uint32_t t = (uint32_t)tu_range(r, 0, nt - 1);
        size_t k = (size_t)tu_range(r, 0, (long)n - 4);
        for (int i = 0; i < 3; i++) {
            snr[((k + i) * nt + t) * 2] = 30.0f;
            snr[((k + i) * nt + t) * 2 + 1] = 0.0f;
        }
    }
}

/* Run the object over snr with random chunks and output capacities. */
static size_t run(tr_spiir_triggers *q, const float *snr, size_t n, uint32_t nt,
                  tu_rng *r, int chunk1, tr_spiir_trigger *all, size_t all_cap)
{
    size_t m = 0, done = 0;
    tr_spiir_trigger *buf = malloc(sizeof *buf * (4 * nt + 8));
    while (done < n) {
        size_t want = chunk1 ? 1 : (size_t)tu_range(r, 0, 300);
        if (want > n - done) want = n - done;
        size_t cap = (size_t)tu_range(r, nt, 4 * nt + 8);
        size_t fed = 0;
        do {
            size_t consumed = 0, nout = 0;
            tr_status s = tr_spiir_triggers_process(
                q, snr + (done + fed) * nt * 2, want - fed, buf, cap, &consumed, &nout);
            CHECK(s == TR_OK, "process: %s", tr_spiir_triggers_last_error(q));
            if (s != TR_OK) goto out;
            for (size_t i = 0; i < nout && m < all_cap; i++)
                all[m++] = buf[i];
            fed += consumed;
            if (want > 0) CHECK(consumed > 0, "no progress with cap %zu >= %u", cap, nt);
            if (consumed == 0) break;
        } while (fed < want);
        done += want;
    }
    {
        size_t nout = 0;
        tr_status s = tr_spiir_triggers_flush(q, buf, 4 * nt + 8, &nout);
        CHECK(s == TR_OK, "flush");
        for (size_t i = 0; i < nout && m < all_cap; i++)
            all[m++] = buf[i];
    }
out:
    free(buf);
    return m;
}

static void test_random(void)
{
    tu_rng r = {12345};
    for (int trial = 0; trial < 60; trial++) {
        const uint32_t nt = (uint32_t)tu_range(&r, 1, 7);
        const size_t n = (size_t)tu_range(&r, 0, 3000);
        const uint32_t window = (uint32_t)tu_range(&r, 1, 80);
        const float thr = (float)(3.0 + 6.0 * tu_uniform(&r));
        float *snr = malloc(sizeof(float) * (n * nt * 2 + 1));
        random_snr(snr, n, nt, &r);
        expect_t *ex = malloc(sizeof *ex * (n * nt + 1));
        const size_t m = oracle(snr, n, nt, thr, window, ex);

        tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
        cfg.ntemplates = nt;
        cfg.threshold = thr;
        cfg.window = window;
        tr_error err;
        tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
        CHECK(q != NULL, "create: %s", err.message);
        if (!q) return;
        tr_spiir_trigger *got = malloc(sizeof *got * (n * nt + nt + 1));
        tr_spiir_trigger *got1 = malloc(sizeof *got1 * (n * nt + nt + 1));
        const size_t g = run(q, snr, n, nt, &r, 0, got, n * nt + nt + 1);
        CHECK(tr_spiir_triggers_position(q) == n, "position %llu, n %zu",
              (unsigned long long)tr_spiir_triggers_position(q), n);
        tr_spiir_triggers_reset(q);
        const size_t g1 =
            (trial % 4 == 0) ? run(q, snr, n, nt, &r, 1, got1, n * nt + nt + 1) : g;
        if (trial % 4 != 0) memcpy(got1, got, sizeof *got * g);

        CHECK(g == m && g1 == m, "trial %d: %zu and %zu triggers, expected %zu", trial, g,
              g1, m);
        int bad = 0;
        for (size_t i = 0; i < m && i < g && i < g1; i++) {
            const tr_spiir_trigger *a = &got[i], *b = &got1[i];
            if (a->sample != ex[i].sample || a->template_index != ex[i].t ||
                a->snr != ex[i].snr || b->sample != a->sample ||
                b->template_index != a->template_index || b->snr != a->snr ||
                b->peak != a->peak || b->re != a->re || b->im != a->im ||
                !(fabs(a->peak - (double)a->sample) <= 0.5) || a->reserved != 0) {
                if (!bad)
                    fprintf(stderr,
                            "trial %d trigger %zu: got (%llu, t%u, %g, peak %g), "
                            "expected (%llu, t%u, %g)\n",
                            trial, i, (unsigned long long)a->sample, a->template_index,
                            (double)a->snr, a->peak, (unsigned long long)ex[i].sample,
                            ex[i].t, (double)ex[i].snr);
                bad++;
            }
            /* The stored z is the value at the peak. */
            const float *z = snr + (a->sample * nt + a->template_index) * 2;
            if (a->re != z[0] || a->im != z[1]) bad++;
        }
        CHECK(bad == 0, "trial %d: %d triggers differ", trial, bad);
        /* Triggers of one template more than window apart. */
        for (size_t i = 0; i < g; i++)
            for (size_t j = i + 1; j < g; j++)
                if (got[i].template_index == got[j].template_index) {
                    uint64_t a = got[i].sample, b = got[j].sample;
                    uint64_t d = a > b ? a - b : b - a;
                    if (d <= window) bad++;
                }
        CHECK(bad == 0, "trial %d: triggers of a template within the window", trial);
        tr_spiir_triggers_destroy(q);
        free(snr);
        free(ex);
        free(got);
        free(got1);
    }
}

/* A sampled parabola peaks where the interpolation says; a Gaussian nearly so. */
static void test_interpolation(void)
{
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.threshold = 1.0f;
    cfg.window = 12; /* longer than the peaks above the threshold: one trigger each */
    tr_error err;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
    CHECK(q != NULL, "create");
    if (!q) return;
    float snr[2 * 40];
    for (int k = 0; k < 40; k++) {
        double d = k - 20.3;
        snr[2 * k] = (float)(0.6 * (100.0 - d * d)); /* negative far out: |z| is a V */
        snr[2 * k + 1] = 0.0f;
    }
    for (int k = 0; k < 40; k++)
        if (fabs(k - 20.3) > 9.0) snr[2 * k] = 0.0f;
    tr_spiir_trigger out[4];
    size_t consumed = 0, nout = 0;
    tr_spiir_triggers_process(q, snr, 40, out, 4, &consumed, &nout);
    CHECK(consumed == 40 && nout == 1, "parabola: consumed %zu, %zu triggers", consumed,
          nout);
    if (nout == 1) {
        CHECK(out[0].sample == 20, "parabola peak at %llu",
              (unsigned long long)out[0].sample);
        CHECK(fabs(out[0].peak - 20.3) < 1e-5, "parabola vertex %.7f, expected 20.3",
              out[0].peak);
    }
    tr_spiir_triggers_reset(q);
    for (int k = 0; k < 40; k++) {
        double d = k - 17.8;
        snr[2 * k] = (float)(7.0 * exp(-0.5 * d * d / 9.0));
        snr[2 * k + 1] = (float)(7.0 * exp(-0.5 * d * d / 9.0));
    }
    tr_spiir_triggers_process(q, snr, 40, out, 4, &consumed, &nout);
    CHECK(nout == 1 && out[0].sample == 18 && fabs(out[0].peak - 17.8) < 0.05,
          "gaussian: %zu triggers, peak %g", nout, nout ? out[0].peak : -1.0);
    /* A peak at the last sample, decided by the flush: no neighbour after it. */
    tr_spiir_triggers_reset(q);
    tr_spiir_triggers_process(q, snr, 15, out, 4, &consumed, &nout);
    CHECK(nout == 0, "rising edge: %zu triggers", nout);
    tr_spiir_triggers_flush(q, out, 4, &nout);
    CHECK(nout == 1 && out[0].sample == 14 && out[0].peak == 14.0, "flushed peak %g",
          nout ? out[0].peak : -1.0);
    tr_spiir_triggers_flush(q, out, 4, &nout);
    CHECK(nout == 0, "second flush: %zu triggers", nout);
    tr_spiir_triggers_destroy(q);
}

static void test_edges_and_errors(void)
{
    tr_error err;
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    CHECK(cfg.ntemplates == 1 && cfg.window == 64 && cfg.threshold == 8.0f &&
              cfg.variant == TR_VARIANT_FAST && cfg.nthreads == 0,
          "defaults");

    tr_spiir_triggers_config bad = cfg;
    bad.ntemplates = 0;
    CHECK(!tr_spiir_triggers_create(&bad, &err) && err.code == TR_ERR_INVALID &&
              strstr(err.message, "ntemplates"),
          "ntemplates 0: %s", err.message);
    bad = cfg;
    bad.window = 0;
    CHECK(!tr_spiir_triggers_create(&bad, &err) && strstr(err.message, "window"),
          "window 0: %s", err.message);
    bad = cfg;
    bad.threshold = NAN;
    CHECK(!tr_spiir_triggers_create(&bad, &err) && strstr(err.message, "threshold"),
          "threshold NaN: %s", err.message);
    bad.threshold = -1.0f;
    CHECK(!tr_spiir_triggers_create(&bad, &err), "threshold -1");
    CHECK(!tr_spiir_triggers_create(NULL, &err) && err.code == TR_ERR_INVALID,
          "NULL cfg");

    cfg.ntemplates = 2;
    cfg.threshold = 5.0f;
    cfg.window = 3;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
    CHECK(q != NULL, "create");
    if (!q) return;
    tr_spiir_trigger out[8];
    size_t consumed = 7, nout = 7;
    CHECK(tr_spiir_triggers_process(q, NULL, 0, out, 8, &consumed, &nout) == TR_OK &&
              consumed == 0 && nout == 0,
          "empty input");
    float z[2 * 2 * 12] = {0};
    CHECK(tr_spiir_triggers_process(q, NULL, 3, out, 8, &consumed, &nout) ==
              TR_ERR_INVALID,
          "NULL snr");
    CHECK(tr_spiir_triggers_process(q, z, 3, out, 8, NULL, &nout) == TR_ERR_INVALID,
          "NULL consumed");
    CHECK(tr_spiir_triggers_process(q, z, 3, out, 1, &consumed, &nout) == TR_OK &&
              consumed == 0,
          "cap below ntemplates: no progress, consumed %zu", consumed);
    CHECK(tr_spiir_triggers_flush(q, out, 1, &nout) == TR_ERR_INVALID, "flush cap 1");
    CHECK(tr_spiir_triggers_set_threshold(q, INFINITY) == TR_ERR_INVALID &&
              tr_spiir_triggers_threshold(q) == 5.0f,
          "set_threshold(inf) refused");

    /* Non-finite values never trigger and stop the interpolation. Template 0:
     * 6, NaN, 9 (peak), Inf, 2; template 1: Inf everywhere. */
    const float v0[12] = {0, 6, NAN, 9, INFINITY, 2, 0, 0, 0, 0, 0, 0};
    for (int k = 0; k < 12; k++) {
        z[(k * 2 + 0) * 2] = v0[k];
        z[(k * 2 + 1) * 2] = INFINITY;
        z[(k * 2 + 1) * 2 + 1] = NAN;
    }
    CHECK(tr_spiir_triggers_process(q, z, 12, out, 8, &consumed, &nout) == TR_OK, "nan");
    CHECK(consumed == 12 && nout == 1 && out[0].template_index == 0 &&
              out[0].sample == 3 && out[0].snr == 9.0f && out[0].peak == 3.0,
          "non-finite: %zu triggers, first at %llu (t%u, %g, peak %g)", nout,
          nout ? (unsigned long long)out[0].sample : 0ULL,
          nout ? out[0].template_index : 9u, nout ? (double)out[0].snr : 0.0,
          nout ? out[0].peak : 0.0);

    /* The threshold applies from the next sample; 0 makes every non-zero
     * sample part of a cluster. */
    CHECK(tr_spiir_triggers_set_threshold(q, 0.0f) == TR_OK &&
              tr_spiir_triggers_threshold(q) == 0.0f,
          "threshold 0");
    tr_spiir_triggers_reset(q);
    CHECK(tr_spiir_triggers_position(q) == 0 && tr_spiir_triggers_window(q) == 3,
          "reset");
    float y[2 * 2 * 10] = {0};
    for (int k = 0; k < 10; k++)
        y[(k * 2) * 2] = (float)(k == 4 ? 0.5 : 0.1);
    CHECK(tr_spiir_triggers_process(q, y, 10, out, 8, &consumed, &nout) == TR_OK &&
              nout == 2 && out[0].sample == 0 && out[1].sample == 4,
          "threshold 0: %zu triggers at %llu, %llu", nout,
          nout > 0 ? (unsigned long long)out[0].sample : 0ULL,
          nout > 1 ? (unsigned long long)out[1].sample : 0ULL);
    tr_spiir_triggers_destroy(q);
    tr_spiir_triggers_destroy(NULL);
    CHECK(tr_spiir_triggers_reset(NULL) == TR_ERR_INVALID, "reset NULL");
}

/* ---- FAST (threads, kernels) against REFERENCE, call by call ------------- */

#define NV 4 /* REFERENCE, FAST 1 thread, FAST 3 threads, FAST automatic */

static void test_variants_kernel(const char *kernel, uint64_t seed, int trials)
{
    tu_rng r = {seed};
    for (int trial = 0; trial < trials; trial++) {
        const uint32_t nt =
            (uint32_t)(tu_uniform(&r) < 0.3 ? tu_range(&r, 1, 8) : tu_range(&r, 9, 90));
        const size_t n = (size_t)tu_range(&r, 0, 5000);
        const int wc = (int)tu_range(&r, 0, 3);
        const uint32_t window = wc == 0   ? 1
                                : wc == 1 ? (uint32_t)tu_range(&r, 2, 20)
                                : wc == 2 ? (uint32_t)tu_range(&r, 20, 400)
                                          : (uint32_t)tu_range(&r, 400, 3000);
        const int tc = (int)tu_range(&r, 0, 9);
        const float thr = tc == 0   ? 0.0f
                          : tc == 1 ? 1e-20f
                          : tc == 2 ? 1e25f
                                    : (float)(2.0 + 8.0 * tu_uniform(&r));
        const double rms = tc == 1 ? 1e-19 : 1.0;
        float *snr = malloc(sizeof(float) * (n * nt * 2 + 2));
        variant_snr(snr, n, nt, rms, &r);

        tr_spiir_triggers *q[NV];
        tr_error err;
        for (int v = 0; v < NV; v++) {
            tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
            cfg.ntemplates = nt;
            cfg.threshold = thr;
            cfg.window = window;
            cfg.variant = v == 0 ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
            cfg.nthreads = v == 1 ? 1 : v == 2 ? 3 : 0;
            q[v] = tr_spiir_triggers_create(&cfg, &err);
            CHECK(q[v] != NULL, "create variant %d: %s", v, err.message);
            if (!q[v]) return;
        }
        /* 3 threads: parts of a multiple of 16 templates. */
        const uint32_t per = ((nt + 2) / 3 + 15) / 16 * 16;
        CHECK(tr_spiir_triggers_nthreads(q[1]) == 1 &&
                  tr_spiir_triggers_nthreads(q[2]) == (nt + per - 1) / per,
              "nt %u: threads %u, %u", nt, tr_spiir_triggers_nthreads(q[1]),
              tr_spiir_triggers_nthreads(q[2]));
        const size_t bufcap = 64 * (size_t)nt + 64;
        tr_spiir_trigger *buf[NV];
        for (int v = 0; v < NV; v++)
            buf[v] = malloc(sizeof(tr_spiir_trigger) * bufcap);
        const int chunk1 = trial % 7 == 0;
        size_t done = 0, total = 0;
        int bad = 0, calls = 0;
        while (done < n && !bad) {
            size_t want = chunk1 ? 1 : (size_t)tu_range(&r, 0, 1500);
            if (want > n - done) want = n - done;
            const int cc = (int)tu_range(&r, 0, 3);
            const size_t cap = cc == 0   ? nt
                               : cc == 1 ? (size_t)tu_range(&r, nt, 3 * nt)
                                         : (size_t)tu_range(&r, 3 * nt, bufcap);
            if (tu_uniform(&r) < 0.05) {
                const float t2 = (float)(2.0 + 8.0 * tu_uniform(&r));
                for (int v = 0; v < NV; v++)
                    tr_spiir_triggers_set_threshold(q[v], t2);
            }
            size_t consumed[NV], nout[NV];
            for (int v = 0; v < NV; v++) {
                tr_status st = tr_spiir_triggers_process(
                    q[v], snr + done * nt * 2, want, buf[v], cap, &consumed[v], &nout[v]);
                if (st != TR_OK) {
                    CHECK(0, "variant %d: %s", v, tr_spiir_triggers_last_error(q[v]));
                    bad++;
                }
            }
            calls++;
            for (int v = 1; v < NV && !bad; v++) {
                if (consumed[v] != consumed[0] || nout[v] != nout[0]) {
                    fprintf(stderr,
                            "%s trial %d call %d: variant %d consumed %zu nout %zu, "
                            "reference %zu %zu (cap %zu, want %zu)\n",
                            kernel, trial, calls, v, consumed[v], nout[v], consumed[0],
                            nout[0], cap, want);
                    bad++;
                    break;
                }
                for (size_t i = 0; i < nout[0]; i++)
                    if (!same_trigger(&buf[v][i], &buf[0][i])) {
                        fprintf(stderr,
                                "%s trial %d: variant %d trigger %zu (%llu t%u %g) != "
                                "(%llu t%u %g)\n",
                                kernel, trial, v, i, (unsigned long long)buf[v][i].sample,
                                buf[v][i].template_index, buf[v][i].peak,
                                (unsigned long long)buf[0][i].sample,
                                buf[0][i].template_index, buf[0][i].peak);
                        bad++;
                        break;
                    }
            }
            total += nout[0];
            done += consumed[0];
            if (want > 0 && consumed[0] == 0) {
                CHECK(0, "no progress");
                bad++;
            }
        }
        if (!bad) {
            size_t nf[NV];
            for (int v = 0; v < NV; v++)
                tr_spiir_triggers_flush(q[v], buf[v], bufcap, &nf[v]);
            for (int v = 1; v < NV; v++) {
                if (nf[v] != nf[0]) bad++;
                for (size_t i = 0; i < nf[0] && i < nf[v]; i++)
                    if (!same_trigger(&buf[v][i], &buf[0][i])) bad++;
                if (tr_spiir_triggers_position(q[v]) != n) bad++;
            }
            total += nf[0];
        }
        CHECK(bad == 0,
              "%s trial %d (nt %u, n %zu, window %u, threshold %g): FAST differs from "
              "REFERENCE",
              kernel, trial, nt, n, window, (double)thr);
        (void)total;
        for (int v = 0; v < NV; v++) {
            tr_spiir_triggers_destroy(q[v]);
            free(buf[v]);
        }
        free(snr);
    }
}

static void test_variants(void)
{
    test_variants_kernel("generic", 777, 25);
    if (tr_spiir_triggers_select("avx2"))
        test_variants_kernel("avx2", 778, 60);
    else
        fprintf(stderr, "test_spiir_triggers: no AVX2 here, generic kernel only\n");
    tr_spiir_triggers_select(NULL);
}

/* Dense triggers with a large cap (long stretches on the pool) and the block's
 * cap; then an object destroyed right after creation (the pool's shutdown). */
static void test_dense(void)
{
    tu_rng r = {4242};
    const uint32_t nt = 256, window = 3;
    const size_t n = 3000;
    float *snr = malloc(sizeof(float) * n * nt * 2);
    for (size_t i = 0; i < n * nt * 2; i++)
        snr[i] = (float)(3.0 * tu_gauss(&r));
    tr_spiir_triggers *q[2];
    tr_error err;
    for (int v = 0; v < 2; v++) {
        tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
        cfg.ntemplates = nt;
        cfg.threshold = 4.0f;
        cfg.window = window;
        cfg.variant = v ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
        cfg.nthreads = v ? 4 : 0;
        q[v] = tr_spiir_triggers_create(&cfg, &err);
        CHECK(q[v] != NULL, "create: %s", err.message);
        if (!q[v]) return;
    }
    const size_t cap = (size_t)nt * 400;
    tr_spiir_trigger *b0 = malloc(sizeof *b0 * cap), *b1 = malloc(sizeof *b1 * cap);
    size_t done = 0, total = 0;
    int bad = 0;
    while (done < n) {
        size_t c0, c1, n0, n1;
        tr_spiir_triggers_process(q[0], snr + done * nt * 2, n - done, b0, cap, &c0, &n0);
        tr_spiir_triggers_process(q[1], snr + done * nt * 2, n - done, b1, cap, &c1, &n1);
        if (c0 != c1 || n0 != n1) {
            bad++;
            break;
        }
        for (size_t i = 0; i < n0; i++)
            if (!same_trigger(&b0[i], &b1[i])) bad++;
        total += n0;
        done += c0;
        if (c0 == 0) break;
    }
    CHECK(bad == 0 && done == n && total > 10000, "dense: %d differ, %zu triggers", bad,
          total);
    for (int v = 0; v < 2; v++)
        tr_spiir_triggers_destroy(q[v]);
    free(b0);
    free(b1);
    free(snr);

    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = 200;
    cfg.nthreads = 5;
    tr_spiir_triggers *p = tr_spiir_triggers_create(&cfg, &err);
    CHECK(p && tr_spiir_triggers_nthreads(p) == 5, "5 threads");
    tr_spiir_triggers_destroy(p);
    cfg.nthreads = 65;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && strstr(err.message, "nthreads"),
          "nthreads 65: %s", err.message);
    cfg.nthreads = 0;
    cfg.variant = TR_VARIANT_PAPER;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && strstr(err.message, "variant"),
          "variant PAPER: %s", err.message);
}

/* Device SNR needs the CUDA backend: a clear error on the CPU, and CUDA
 * asked for without a usable GPU fails at create (test_spiir_triggers_gpu
 * covers the device itself). */
static void test_backends(void)
{
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    CHECK(cfg.backend == TR_BACKEND_AUTO && cfg.device == 0 && cfg.device_capacity == 0,
          "defaults");
    cfg.ntemplates = 4;
    cfg.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return;
    const float snr[8] = {0};
    tr_spiir_trigger out[4];
    size_t used = 9, nout = 9;
    CHECK(tr_spiir_triggers_process_device(q, snr, 1, out, 4, &used, &nout) ==
                  TR_ERR_UNSUPPORTED &&
              used == 0 && nout == 0 && strstr(tr_spiir_triggers_last_error(q), "CUDA"),
          "device SNR on the CPU: %s", tr_spiir_triggers_last_error(q));
    CHECK(tr_spiir_triggers_backend(q) == TR_BACKEND_CPU, "CPU backend");
    tr_spiir_triggers_destroy(q);
    cfg.backend = TR_BACKEND_AUTO;
    cfg.device_capacity = 3;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && strstr(err.message, "device_capacity"),
          "capacity 3 < 4 templates: %s", err.message);
    cfg.device_capacity = 0;
    cfg.device = -1;
    CHECK(!tr_spiir_triggers_create(&cfg, &err) && err.code == TR_ERR_INVALID,
          "device -1: %s", err.message);
    cfg.device = 0;
    if (tr_cuda_device_count(NULL, 0) == 0) {
        cfg.backend = TR_BACKEND_CUDA;
        CHECK(!tr_spiir_triggers_create(&cfg, &err) && err.code == TR_ERR_NO_DEVICE,
              "CUDA without a GPU: %s", err.message);
        cfg.backend = TR_BACKEND_AUTO;
        q = tr_spiir_triggers_create(&cfg, &err);
        CHECK(q && tr_spiir_triggers_backend(q) == TR_BACKEND_CPU &&
                  tr_spiir_triggers_process_device(q, snr, 1, out, 4, &used, &nout) ==
                      TR_ERR_UNSUPPORTED,
              "AUTO without a GPU takes no device SNR");
        tr_spiir_triggers_destroy(q);
    }
}

int main(void)
{
    test_backends();
    test_random();
    test_variants();
    test_dense();
    test_interpolation();
    test_edges_and_errors();
    return tu_finish("test_spiir_triggers");
}
