/*
 * Tests of the SPIIR trigger clustering (include/transient/spiir_triggers.h):
 * against an offline statement of the definition on random SNR streams with
 * random chunkings (1 included) and small output buffers, the peak
 * interpolation, non-finite values, threshold changes and invalid arguments.
 */
#include <transient/spiir_triggers.h>

#include <math.h>
#include <stdlib.h>

#include "test_util.h"

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
    CHECK(cfg.ntemplates == 1 && cfg.window == 64 && cfg.threshold == 8.0f, "defaults");

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

int main(void)
{
    test_random();
    test_interpolation();
    test_edges_and_errors();
    return tu_finish("test_spiir_triggers");
}
