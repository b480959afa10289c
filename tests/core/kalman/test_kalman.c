/*
 * Kalman-bank detector: fast variants against the reference (random models
 * and data, bursts, random chunkings, non-finite samples, run-time settings),
 * invalid configurations, events, and detection quality against an energy
 * detector at a false-alarm rate of 1e-4 per sample.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector".
 *
 *   test_kalman            CPU tests
 *   test_kalman --gpu      the CUDA variants against the reference (77: no GPU)
 *   test_kalman --roc F    also write the ROC data of the quality test to F
 */
#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"
#include "kalman_test_models.h"

#include "kalman/kalman_internal.h"
#include <transient/kalman.h>

static double tol_of(double ref)
{
    return 1e-3 * (fabs(ref) > 1.0 ? fabs(ref) : 1.0);
}

/* Simulate the model: AR noise + white measurement noise, and target bursts
 * (AR driven by enveloped innovations, M-1 samples) at the given onsets. */
typedef struct {
    uint32_t M, pn, px;
    double an[8], ax[8], sn, sx, R;
} sim_model;

static void simulate(tu_rng *g, const sim_model *s, size_t len, const size_t *onsets,
                     size_t nb, float *out)
{
    double nh[8] = {0}, xh[8] = {0};
    size_t next = 0;
    long since = -1; /* samples since the current onset, -1: none */
    for (size_t t = 0; t < len; t++) {
        double nv = sqrt(s->sn) * tu_gauss(g);
        for (uint32_t i = 0; i < s->pn; i++)
            nv += s->an[i] * nh[i];
        for (uint32_t i = 7; i >= 1; i--)
            nh[i] = nh[i - 1];
        nh[0] = nv;
        if (next < nb && onsets[next] == t) {
            since = 0;
            next++;
            for (int i = 0; i < 8; i++)
                xh[i] = 0.0;
        }
        double xv = 0.0;
        if (since >= 0 && since < (long)s->M - 1) {
            xv = sqrt(s->sx) * tu_gauss(g);
            for (uint32_t i = 0; i < s->px; i++)
                xv += s->ax[i] * xh[i];
            for (uint32_t i = 7; i >= 1; i--)
                xh[i] = xh[i - 1];
            xh[0] = xv;
            since++;
        } else {
            since = -1;
        }
        out[t] = (float)(nv + xv + sqrt(s->R) * tu_gauss(g));
    }
}

static tr_kalman_model *design_of(const sim_model *s, tr_error *err)
{
    tr_kalman_design d = tr_kalman_design_default();
    d.M = s->M;
    d.noise_order = s->pn;
    d.noise_ar = s->an;
    d.noise_var = s->sn;
    d.meas_var = s->R;
    d.target_order = s->px;
    d.target_ar = s->ax;
    d.target_var = s->sx;
    return tr_kalman_model_design(&d, err);
}

static tr_kalman *make(const tr_kalman_model *m, tr_variant v, tr_backend b, uint32_t Ns,
                       double alpha, double thr)
{
    tr_kalman_config c = tr_kalman_config_default();
    c.variant = v;
    c.backend = b;
    c.Ns = Ns;
    c.alpha = alpha;
    c.threshold = thr;
    tr_error err;
    tr_kalman *q = tr_kalman_create(&c, m, &err);
    if (!q) fprintf(stderr, "create: %s\n", err.message);
    return q;
}

/* Feed x with random chunk sizes (first part one sample per call). */
static void feed(tu_rng *g, tr_kalman *q, const float *x, size_t n, double *llr,
                 uint8_t *dec, int chunky)
{
    size_t done = 0;
    while (done < n) {
        size_t m = n - done;
        if (chunky) {
            if (done < 300)
                m = 1;
            else if (tu_uniform(g) < 0.3)
                m = (size_t)tu_range(g, 0, 7);
            else
                m = (size_t)tu_range(g, 1, 5000);
            if (m > n - done) m = n - done;
        }
        tr_status s = tr_kalman_process_f64(q, x + done, m, llr + done, dec + done);
        if (s != TR_OK) {
            CHECK(0, "process: %s", tr_kalman_last_error(q));
            return;
        }
        done += m;
    }
}

typedef struct {
    double worst;    /* worst |diff| / tol */
    size_t bad_dec;  /* decisions that differ away from the threshold */
    size_t nonfin;   /* non-finite LLRs of the fast variant */
    size_t compared; /* samples compared */
} cmp_stats;

static cmp_stats compare(const double *ref, const uint8_t *dref, const double *f,
                         const uint8_t *df, size_t n, double thr)
{
    cmp_stats c = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(f[i])) c.nonfin++;
        if (!isfinite(ref[i])) continue; /* beyond the literal reference's range */
        c.compared++;
        const double r = fabs(f[i] - ref[i]) / tol_of(ref[i]);
        if (!(r <= c.worst)) c.worst = r;
        if (dref[i] != df[i] && fabs(ref[i] - thr) > tol_of(ref[i])) c.bad_dec++;
    }
    return c;
}

/* One random model and stream: fast (both kernels, random chunking) vs reference. */
static void one_trial(tu_rng *g, int trial, uint32_t M, uint32_t Q, size_t len,
                      int with_nonfinite)
{
    sim_model s;
    memset(&s, 0, sizeof s);
    s.M = M;
    s.pn = (uint32_t)tu_range(g, 1, Q);
    s.px = (uint32_t)tu_range(g, 1, Q);
    if (tu_uniform(g) < 0.5)
        s.pn = Q;
    else
        s.px = Q;
    random_ar(g, s.pn, 0.9, s.an);
    random_ar(g, s.px, 0.95, s.ax);
    s.sn = 0.5 + tu_uniform(g);
    s.R = tu_uniform(g) < 0.3 ? 0.0 : 0.2 * tu_uniform(g);
    /* Target strength: the evidence a whole burst brings is about M times the
     * KL divergence rate (1/2pi) int (rho - log(1 + rho)) / 2 dw, rho(w) the
     * target's spectrum over the noise's; choose target_var so that it is 30
     * to 250 nats: strong bursts, yet inside the literal reference's double
     * range (about +-700). */
    double ratio[257];
    for (int f = 0; f <= 256; f++) {
        const double w = 3.141592653589793 * (f + 0.5) / 257.0;
        double xr = 1.0, xi = 0.0, nr = 1.0, ni = 0.0;
        for (uint32_t i = 0; i < s.px; i++) {
            xr -= s.ax[i] * cos(w * (i + 1));
            xi += s.ax[i] * sin(w * (i + 1));
        }
        for (uint32_t i = 0; i < s.pn; i++) {
            nr -= s.an[i] * cos(w * (i + 1));
            ni += s.an[i] * sin(w * (i + 1));
        }
        ratio[f] = (1.0 / (xr * xr + xi * xi)) / (s.sn / (nr * nr + ni * ni) + s.R);
    }
    const double want = (30.0 + 220.0 * tu_uniform(g)) / (M - 1);
    double lo = -30.0, hi = 30.0; /* log(target_var) */
    for (int it = 0; it < 80; it++) {
        const double mid = 0.5 * (lo + hi), v = exp(mid);
        double kl = 0.0;
        for (int f = 0; f <= 256; f++)
            kl += 0.5 * (v * ratio[f] - log1p(v * ratio[f])) / 257.0;
        if (kl > want)
            hi = mid;
        else
            lo = mid;
    }
    s.sx = exp(0.5 * (lo + hi));
    tr_error err;
    tr_kalman_model *m = design_of(&s, &err);
    CHECK(m != NULL, "trial %d: design: %s", trial, err.message);
    if (!m) return;
    /* bursts */
    size_t onsets[64], nb = 0;
    for (size_t t = (size_t)tu_range(g, 0, M); t + M < len && nb < 64;
         t += M + (size_t)tu_range(g, M / 2, 4 * M))
        onsets[nb++] = t;
    float *x = malloc(len * sizeof(float));
    simulate(g, &s, len, onsets, tu_uniform(g) < 0.2 ? 0 : nb, x);
    if (with_nonfinite) {
        for (int i = 0; i < 12; i++) {
            const size_t at = (size_t)tu_range(g, 0, (long)len - 1);
            x[at] = i % 3 == 0 ? NAN : i % 3 == 1 ? INFINITY : -INFINITY;
        }
        for (size_t i = len / 2; i < len / 2 + 20 && i < len; i++)
            x[i] = NAN; /* a gap */
    }
    const uint32_t Ns = (uint32_t)tu_range(g, 1, M - 1);
    const double alpha = pow(10.0, -tu_range(g, 2, 12));
    const double thr = 2.0 * tu_uniform(g) - 1.0;
    double *lr = malloc(len * sizeof(double)), *lf = malloc(len * sizeof(double)),
           *l1 = malloc(len * sizeof(double));
    uint8_t *dr = malloc(len), *df = malloc(len), *d1 = malloc(len);
    tr_kalman *ref = make(m, TR_VARIANT_REFERENCE, TR_BACKEND_CPU, Ns, alpha, thr);
    CHECK(ref != NULL, "trial %d: reference create", trial);
    if (ref) {
        feed(g, ref, x, len, lr, dr, 0);
        const char *kernels[2] = {"generic", "avx2"};
        for (int kk = 0; kk < 2; kk++) {
            if (!tr_kalman_cpu_select(kernels[kk])) continue;
            tr_kalman *f = make(m, TR_VARIANT_FAST, TR_BACKEND_CPU, Ns, alpha, thr);
            CHECK(f != NULL, "fast create");
            if (!f) continue;
            feed(g, f, x, len, lf, df, 1);
            const cmp_stats c = compare(lr, dr, lf, df, len, thr);
            double lo = INFINITY, hi = -INFINITY;
            for (size_t i = 0; i < len; i++) {
                lo = lr[i] < lo ? lr[i] : lo;
                hi = lr[i] > hi ? lr[i] : hi;
            }
            printf("trial %d (%s, M=%u Q=%u len=%zu, LLR %.4g..%.4g): worst |diff|/tol "
                   "%.3g\n",
                   trial, kernels[kk], M, Q, len, lo, hi, c.worst);
            CHECK(c.worst <= 1.0 && c.bad_dec == 0 && c.nonfin == 0 &&
                      c.compared > len * 9 / 10,
                  "trial %d (%s, M=%u Q=%u Ns=%u alpha=%g len=%zu nonfinite=%d): worst "
                  "|diff|/tol %g, %zu decisions differ, %zu non-finite, %zu compared",
                  trial, kernels[kk], M, Q, Ns, alpha, len, with_nonfinite, c.worst,
                  c.bad_dec, c.nonfin, c.compared);
            CHECK(tr_kalman_position(f) == len, "position");
            CHECK(tr_kalman_nonfinite(f) == tr_kalman_nonfinite(ref),
                  "non-finite counts differ: %llu vs %llu",
                  (unsigned long long)tr_kalman_nonfinite(f),
                  (unsigned long long)tr_kalman_nonfinite(ref));
            /* chunking independence: one call gives the same bits */
            tr_kalman_reset(f);
            feed(g, f, x, len, l1, d1, 0);
            CHECK(memcmp(l1, lf, len * sizeof(double)) == 0 && memcmp(d1, df, len) == 0,
                  "trial %d (%s): output depends on the chunking", trial, kernels[kk]);
            tr_kalman_destroy(f);
        }
        tr_kalman_cpu_select(NULL);
        if (with_nonfinite)
            CHECK(tr_kalman_nonfinite(ref) >= 1, "non-finite samples must be counted");
        tr_kalman_destroy(ref);
    }
    free(x);
    free(lr);
    free(lf);
    free(l1);
    free(dr);
    free(df);
    free(d1);
    tr_kalman_model_destroy(m);
}

static void test_against_reference(void)
{
    tu_rng g = {77};
    int trial = 0;
    /* small M, long streams */
    for (int i = 0; i < 14; i++, trial++) {
        const uint32_t M = (uint32_t)(i < 3 ? 3 + i : tu_range(&g, 8, 200));
        const uint32_t Q = (uint32_t)tu_range(&g, 1, 6);
        one_trial(&g, trial, M, Q, 30000, i % 3 == 2);
    }
    /* large M: streams of several target durations */
    const uint32_t bigM[3] = {700, 1500, 3000};
    for (int i = 0; i < 3; i++, trial++) {
        const uint32_t Q = (uint32_t)tu_range(&g, 1, 4);
        one_trial(&g, trial, bigM[i], Q, 4 * (size_t)bigM[i] + 1000, i == 1);
    }
}

/* Run-time settings: the same changes at the same positions in both variants. */
static void test_setters(void)
{
    tu_rng g = {5};
    sim_model s = {60, 2, 2, {0.5, -0.2}, {1.2, -0.6}, 1.0, 0.8, 0.05};
    tr_error err;
    tr_kalman_model *m = design_of(&s, &err);
    CHECK(m != NULL, "%s", err.message);
    if (!m) return;
    const size_t len = 20000;
    size_t onsets[40], nb = 0;
    for (size_t t = 100; t + 60 < len && nb < 40; t += 450)
        onsets[nb++] = t;
    float *x = malloc(len * sizeof(float));
    simulate(&g, &s, len, onsets, nb, x);
    double *lr = malloc(len * sizeof(double)), *lf = malloc(len * sizeof(double));
    uint8_t *dr = malloc(len), *df = malloc(len);
    tr_kalman *q[2] = {make(m, TR_VARIANT_REFERENCE, TR_BACKEND_CPU, 10, 1e-9, 0.0),
                       make(m, TR_VARIANT_FAST, TR_BACKEND_CPU, 10, 1e-9, 0.0)};
    double *out[2] = {lr, lf};
    uint8_t *dout[2] = {dr, df};
    for (int v = 0; v < 2; v++) {
        if (!q[v]) continue;
        for (size_t at = 0; at < len; at += 2500) {
            const int step = (int)(at / 2500);
            CHECK(tr_kalman_set_ns(q[v], (uint32_t)(1 + (step * 7) % 59)) == TR_OK,
                  "set_ns");
            CHECK(tr_kalman_set_alpha(q[v], pow(10.0, -(2 + step % 9))) == TR_OK,
                  "set_alpha");
            CHECK(tr_kalman_set_threshold(q[v], -2.0 + 0.5 * step) == TR_OK,
                  "set_threshold");
            tr_kalman_process_f64(q[v], x + at, 2500, out[v] + at, dout[v] + at);
        }
        CHECK(tr_kalman_set_ns(q[v], 0) == TR_ERR_INVALID, "N_s = 0 accepted");
        CHECK(tr_kalman_set_ns(q[v], 60) == TR_ERR_INVALID, "N_s = M accepted");
        CHECK(tr_kalman_set_alpha(q[v], 0.0) == TR_ERR_INVALID, "alpha = 0 accepted");
        CHECK(tr_kalman_set_alpha(q[v], 1.0) == TR_ERR_INVALID, "alpha = 1 accepted");
        CHECK(tr_kalman_set_alpha(q[v], NAN) == TR_ERR_INVALID, "alpha NaN accepted");
        CHECK(tr_kalman_set_threshold(q[v], NAN) == TR_ERR_INVALID,
              "threshold NaN accepted");
        CHECK(tr_kalman_ns(q[v]) == 1 + (7 * 7) % 59, "N_s changed by a rejected call");
    }
    if (q[0] && q[1]) {
        double worst = 0.0;
        size_t bad = 0;
        for (size_t i = 0; i < len; i++) {
            const double thr = -2.0 + 0.5 * (double)(i / 2500);
            const double r = fabs(lf[i] - lr[i]) / tol_of(lr[i]);
            if (!(r <= worst)) worst = r;
            if (dr[i] != df[i] && fabs(lr[i] - thr) > tol_of(lr[i])) bad++;
        }
        CHECK(worst <= 1.0 && bad == 0, "setters: worst %g, %zu decisions differ", worst,
              bad);
    }
    tr_kalman_destroy(q[0]);
    tr_kalman_destroy(q[1]);
    free(x);
    free(lr);
    free(lf);
    free(dr);
    free(df);
    tr_kalman_model_destroy(m);
}

static void test_invalid_and_empty(void)
{
    sim_model s = {20, 1, 1, {0.5}, {0.8}, 1.0, 1.0, 0.0};
    tr_error err;
    tr_kalman_model *m = design_of(&s, &err);
    if (!m) {
        CHECK(0, "%s", err.message);
        return;
    }
    tr_kalman_config c = tr_kalman_config_default();
    CHECK(c.alpha == 1e-9 && c.Ns == 1, "defaults");
    struct {
        tr_kalman_config c;
        tr_status want;
        const char *what;
    } bad[12];
    int nb = 0;
    bad[nb].c = c, bad[nb].c.Ns = 0, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "Ns 0";
    bad[nb].c = c, bad[nb].c.Ns = 20, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "Ns M";
    bad[nb].c = c, bad[nb].c.alpha = 0, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "a 0";
    bad[nb].c = c, bad[nb].c.alpha = 1, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "a 1";
    bad[nb].c = c, bad[nb].c.alpha = NAN, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "a NaN";
    bad[nb].c = c, bad[nb].c.threshold = NAN, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "threshold NaN";
    bad[nb].c = c, bad[nb].c.max_events = 0, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "max_events 0";
    bad[nb].c = c, bad[nb].c.batch = 0, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "batch 0";
    bad[nb].c = c, bad[nb].c.device = -1, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "device -1";
    bad[nb].c = c, bad[nb].c.backend = (tr_backend)9, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "backend 9";
    bad[nb].c = c, bad[nb].c.variant = TR_VARIANT_PAPER,
    bad[nb].c.backend = TR_BACKEND_CPU, bad[nb].want = TR_ERR_INVALID,
    bad[nb++].what = "paper on CPU";
    for (int i = 0; i < nb; i++) {
        tr_kalman *q = tr_kalman_create(&bad[i].c, m, &err);
        CHECK(!q && err.code == bad[i].want && err.message[0], "%s must be rejected",
              bad[i].what);
        tr_kalman_destroy(q);
    }
    CHECK(!tr_kalman_create(&c, NULL, &err) && err.code == TR_ERR_INVALID, "NULL model");
    CHECK(!tr_kalman_create(NULL, m, &err) && err.code == TR_ERR_INVALID, "NULL config");
    if (tr_cuda_device_count(NULL, 0) == 0) {
        tr_kalman_config cc = c;
        cc.backend = TR_BACKEND_CUDA;
        CHECK(!tr_kalman_create(&cc, m, &err) && err.code == TR_ERR_NO_DEVICE,
              "explicit CUDA without a GPU must be TR_ERR_NO_DEVICE");
    }
    /* AUTO falls back to the CPU; empty input; device path unsupported */
    tr_kalman *q = tr_kalman_create(&c, m, &err);
    CHECK(q != NULL, "%s", err.message);
    if (q) {
        if (tr_cuda_device_count(NULL, 0) == 0)
            CHECK(tr_kalman_backend(q) == TR_BACKEND_CPU,
                  "AUTO must fall back to the CPU");
        CHECK(tr_kalman_process(q, NULL, 0, NULL, NULL) == TR_OK, "empty input");
        CHECK(tr_kalman_position(q) == 0, "empty input moved the position");
        CHECK(tr_kalman_process(q, NULL, 5, NULL, NULL) == TR_ERR_INVALID,
              "NULL samples");
        float x[3] = {0.1f, 0.2f, 0.3f};
        CHECK(tr_kalman_process(q, x, 3, NULL, NULL) == TR_OK, "no outputs wanted");
        if (tr_kalman_backend(q) == TR_BACKEND_CPU)
            CHECK(tr_kalman_process_device(q, x, 3, NULL, NULL) == TR_ERR_UNSUPPORTED,
                  "process_device on the CPU");
        CHECK(tr_kalman_M(q) == 20 && tr_kalman_Q(q) == 1, "M, Q");
        tr_kalman_destroy(q);
    }
    /* all samples non-finite: the detector moves on and recovers */
    c.variant = TR_VARIANT_FAST;
    c.backend = TR_BACKEND_CPU;
    q = tr_kalman_create(&c, m, &err);
    if (q) {
        float x[2000];
        float l[2000];
        tu_rng g = {3};
        for (int i = 0; i < 2000; i++)
            x[i] = i < 1000 ? (i % 2 ? NAN : INFINITY) : (float)tu_gauss(&g);
        tr_kalman_process(q, x, 2000, l, NULL);
        int finite = 1;
        for (int i = 0; i < 2000; i++)
            finite &= isfinite(l[i]);
        CHECK(finite, "LLR must stay finite through non-finite samples");
        CHECK(tr_kalman_nonfinite(q) == 1000, "non-finite count %llu",
              (unsigned long long)tr_kalman_nonfinite(q));
        tr_kalman_destroy(q);
    }
    tr_kalman_model_destroy(m);
}

/* Events: strong bursts give START/END pairs around the true onsets. */
static void test_events(void)
{
    tu_rng g = {11};
    sim_model s = {80, 2, 2, {1.0, -0.5}, {-0.5, -0.3}, 1.0, 6.0, 0.01};
    tr_error err;
    tr_kalman_model *m = design_of(&s, &err);
    if (!m) {
        CHECK(0, "%s", err.message);
        return;
    }
    const size_t len = 30000;
    size_t onsets[20], nb = 0;
    for (size_t t = 1000; t + 80 < len && nb < 20; t += 1400)
        onsets[nb++] = t;
    float *x = malloc(len * sizeof(float));
    simulate(&g, &s, len, onsets, nb, x);
    tr_kalman_config c = tr_kalman_config_default();
    c.backend = TR_BACKEND_CPU;
    c.Ns = 40;
    c.threshold = 5.0;
    c.max_events = 8; /* small: exercises the queue while reading as we go */
    tr_kalman *q = tr_kalman_create(&c, m, &err);
    CHECK(q != NULL, "%s", err.message);
    if (q) {
        tr_kalman_event ev[64], got[8];
        size_t ne = 0;
        for (size_t at = 0; at < len; at += 777) {
            const size_t n = len - at < 777 ? len - at : 777;
            tr_kalman_process(q, x + at, n, NULL, NULL);
            size_t k;
            while ((k = tr_kalman_events(q, got, 3)) > 0)
                for (size_t i = 0; i < k && ne < 64; i++)
                    ev[ne++] = got[i];
        }
        CHECK(tr_kalman_events_dropped(q) == 0, "events dropped");
        size_t found = 0, starts = 0, ends = 0, ok_onset = 0;
        for (size_t i = 0; i < ne; i++) {
            if (ev[i].type == TR_KALMAN_EVENT_START) starts++;
            if (ev[i].type != TR_KALMAN_EVENT_END) continue;
            ends++;
            CHECK(ev[i].start < ev[i].end && ev[i].peak >= ev[i].start &&
                      ev[i].peak < ev[i].end && ev[i].peak_llr > 5.0,
                  "malformed event");
            for (size_t b = 0; b < nb; b++)
                if (ev[i].start >= onsets[b] && ev[i].start < onsets[b] + 80) {
                    found++;
                    const long d = (long)ev[i].onset - (long)onsets[b];
                    if (d >= -5 && d <= 5) ok_onset++;
                }
        }
        CHECK(starts >= ends && starts <= ends + 1, "START/END pairing %zu/%zu", starts,
              ends);
        CHECK(found >= nb - 1, "found %zu of %zu bursts", found, nb);
        CHECK(ok_onset >= found * 3 / 4, "onset within 5 samples for %zu of %zu",
              ok_onset, found);
        CHECK(ends <= nb + 2, "too many events: %zu for %zu bursts", ends, nb);
        tr_kalman_destroy(q);
    }
    free(x);
    tr_kalman_model_destroy(m);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/*
 * Detection quality: bursts of an AR(2) target in AR(2) noise of the same
 * spectral shape (the target only raises the variance, by 0 dB at its peak
 * innovation), plus a little white measurement noise. Statistic per burst: its maximum
 * over the target's samples. The threshold of each detector is the one that gives a
 * false-alarm rate of 1e-4 per sample on a noise-only stream. The energy detector is the
 * moving average of x^2 over N_s samples.
 */
static void test_quality(const char *roc_path)
{
    tu_rng g = {2026};
    const uint32_t M = 92, Ns = 30;
    sim_model s = {
        M,   2,   2,   {2 * 0.8 * cos(0.3), -0.64}, {2 * 0.8 * cos(0.3), -0.64},
        1.0, 1.0, 0.05};
    tr_error err;
    tr_kalman_model *m = design_of(&s, &err);
    if (!m) {
        CHECK(0, "%s", err.message);
        return;
    }
    const size_t nnoise = 600000, nb = 400, gap = 3 * M, nburst = nb * gap;
    float *x0 = malloc(nnoise * sizeof(float)), *x1 = malloc(nburst * sizeof(float));
    size_t *onsets = malloc(nb * sizeof(size_t));
    for (size_t b = 0; b < nb; b++)
        onsets[b] = b * gap + M;
    simulate(&g, &s, nnoise, NULL, 0, x0);
    simulate(&g, &s, nburst, onsets, nb, x1);
    double *k0 = malloc(nnoise * sizeof(double)), *k1 = malloc(nburst * sizeof(double));
    double *e0 = malloc(nnoise * sizeof(double)), *e1 = malloc(nburst * sizeof(double));
    tr_kalman *q = make(m, TR_VARIANT_FAST, TR_BACKEND_CPU, Ns, 1e-9, 0.0);
    if (!q) return;
    tr_kalman_process_f64(q, x0, nnoise, k0, NULL);
    tr_kalman_reset(q);
    tr_kalman_process_f64(q, x1, nburst, k1, NULL);
    tr_kalman_destroy(q);
    const float *xs[2] = {x0, x1};
    double *es[2] = {e0, e1};
    const size_t ns[2] = {nnoise, nburst};
    for (int w = 0; w < 2; w++) {
        double acc = 0.0;
        for (size_t i = 0; i < ns[w]; i++) {
            acc += (double)xs[w][i] * xs[w][i];
            if (i >= Ns) acc -= (double)xs[w][i - Ns] * xs[w][i - Ns];
            es[w][i] = acc / Ns;
        }
    }
    /* per-burst maxima */
    double *kb = malloc(nb * sizeof(double)), *eb = malloc(nb * sizeof(double));
    for (size_t b = 0; b < nb; b++) {
        kb[b] = eb[b] = -INFINITY;
        for (size_t t = onsets[b]; t < onsets[b] + M - 1; t++) {
            if (k1[t] > kb[b]) kb[b] = k1[t];
            if (e1[t] > eb[b]) eb[b] = e1[t];
        }
    }
    /* thresholds at Pfa = 1e-4 per sample (skip the first M samples) */
    const size_t skip = M, nn = nnoise - skip;
    qsort(k0 + skip, nn, sizeof(double), cmp_double);
    qsort(e0 + skip, nn, sizeof(double), cmp_double);
    const size_t qi = nn - (size_t)(1e-4 * (double)nn) - 1;
    const double tk = k0[skip + qi], te = e0[skip + qi];
    size_t dk = 0, de = 0;
    for (size_t b = 0; b < nb; b++) {
        dk += kb[b] > tk;
        de += eb[b] > te;
    }
    const double pdk = (double)dk / nb, pde = (double)de / nb;
    printf("quality: Pfa 1e-4/sample: Kalman Pd %.3f (threshold %.3f), energy Pd %.3f "
           "(threshold %.4f)\n",
           pdk, tk, pde, te);
    CHECK(pdk >= pde, "Kalman Pd %.3f below the energy detector's %.3f", pdk, pde);
    CHECK(pdk > 0.5, "Kalman Pd %.3f too low for this SNR", pdk);
    if (roc_path) {
        FILE *f = fopen(roc_path, "w");
        CHECK(f != NULL, "cannot write %s", roc_path);
        if (f) {
            fprintf(f,
                    "# detector pfa_per_sample pd (M=%u Ns=%u, %zu noise samples, %zu "
                    "bursts)\n",
                    M, Ns, nn, nb);
            const double *sorted[2] = {k0 + skip, e0 + skip};
            const double *bm[2] = {kb, eb};
            const char *name[2] = {"kalman", "energy"};
            for (int w = 0; w < 2; w++)
                for (double lp = -5.5; lp <= 0.0; lp += 0.1) {
                    const double pfa = pow(10.0, lp);
                    size_t idx = nn - (size_t)(pfa * (double)nn);
                    if (idx >= nn) idx = nn - 1;
                    const double t = sorted[w][idx];
                    size_t d = 0;
                    for (size_t b = 0; b < nb; b++)
                        d += bm[w][b] > t;
                    fprintf(f, "%s %.6g %.6g\n", name[w], pfa, (double)d / nb);
                }
            fclose(f);
        }
    }
    free(x0);
    free(x1);
    free(onsets);
    free(k0);
    free(k1);
    free(e0);
    free(e1);
    free(kb);
    free(eb);
    tr_kalman_model_destroy(m);
}

/*
 * The batched (diagonal) formulation of docs/kalman.md and kalman_internal.h,
 * written out plainly in double, against the reference: the noise-only
 * filter first, then every diagonal s (onset sample) on its own with
 * Dt_{s,k} = sum (q_i - q_M) along it, then the lag-M recursion
 *   c_X[j] = log(1 - alpha + alpha exp(Dt_{j-M+1,M-1} - (C[j-1] - C[j-M])))
 * with C its prefix sum, then d_k[j] = log(alpha) + Dt_{j-k+1,k} - (C[j] - C[j-k])
 * and the LLR as two log-sum-exps. This checks the equations the fast
 * variants are built on, independently of any kernel.
 */
static double lse_add(double a, double b)
{
    const double m = a > b ? a : b;
    if (m == -INFINITY) return -INFINITY;
    return m + log(exp(a - m) + exp(b - m));
}

static void test_batched_formulation(void)
{
    tu_rng g = {4242};
    for (int trial = 0; trial < 6; trial++) {
        sim_model s;
        memset(&s, 0, sizeof s);
        s.M = (uint32_t)tu_range(&g, 3, 60);
        s.pn = (uint32_t)tu_range(&g, 1, 4);
        s.px = (uint32_t)tu_range(&g, 1, 4);
        random_ar(&g, s.pn, 0.9, s.an);
        random_ar(&g, s.px, 0.9, s.ax);
        s.sn = 1.0;
        s.sx = 0.3 + tu_uniform(&g);
        s.R = 0.05;
        tr_error err;
        tr_kalman_model *m = design_of(&s, &err);
        if (!m) {
            CHECK(0, "%s", err.message);
            continue;
        }
        const uint32_t M = s.M, n = m->n, Q = m->Q;
        const uint32_t Ns = (uint32_t)tu_range(&g, 1, M - 1);
        const double alpha = 1e-4, la = log(alpha), l1a = log1p(-alpha);
        const size_t N = 3000;
        size_t onsets[40], nb = 0;
        for (size_t t = 50; t + M < N && nb < 40; t += 3 * M + 40)
            onsets[nb++] = t;
        float *x = malloc(N * sizeof(float));
        simulate(&g, &s, N, onsets, nb, x);
        x[N / 2] = NAN;
        double *zM = calloc((N + 1) * n, sizeof(double)), *qM = calloc(N, sizeof(double));
        double *R =
            malloc(N * (size_t)M * sizeof(double)); /* R[j*M + k] = Dt at (j, k) */
        double *C = calloc(N + 1, sizeof(double));  /* C[j+1] = C[j], C[0] = C[-1] */
        double *lb = malloc(N * sizeof(double)), *lr = malloc(N * sizeof(double));
        uint8_t *dr = malloc(N);
        double u[64];
        /* 1. noise-only filter: zM[j] = prediction for sample j */
        for (size_t j = 0; j < N; j++) {
            const double *z = zM + j * n, *K = m->K + (size_t)(M - 1) * n;
            const int miss = !isfinite(x[j]);
            const double e = miss ? 0.0 : x[j] - (z[0] + z[Q]);
            qM[j] = miss ? 0.0 : m->c[M - 1] - m->h[M - 1] * e * e;
            for (uint32_t i = 0; i < n; i++)
                u[i] = z[i] + K[i] * e;
            for (uint32_t i = 0; i < n; i++) {
                double v = 0.0;
                for (uint32_t l = 0; l < n; l++)
                    v += m->A[i * n + l] * u[l];
                zM[(j + 1) * n + i] = v;
            }
        }
        /* 2. diagonals, each on its own */
        for (size_t i = 0; i < N * (size_t)M; i++)
            R[i] = -INFINITY;
        for (size_t sd = 0; sd < N; sd++) {
            double z[64], Dt = 0.0;
            memcpy(z, zM + sd * n, n * sizeof(double));
            for (uint32_t k = 1; k <= M - 1 && sd + k - 1 < N; k++) {
                const size_t j = sd + k - 1;
                const double *K = m->K + (size_t)(k - 1) * n;
                const int miss = !isfinite(x[j]);
                const double e = miss ? 0.0 : x[j] - (z[0] + z[Q]);
                const double q = miss ? 0.0 : m->c[k - 1] - m->h[k - 1] * e * e;
                Dt += q - qM[j];
                R[j * M + k] = Dt;
                for (uint32_t i = 0; i < n; i++)
                    u[i] = z[i] + K[i] * e;
                for (uint32_t i = 0; i < n; i++) {
                    double v = 0.0;
                    for (uint32_t l = 0; l < n; l++)
                        v += m->A[i * n + l] * u[l];
                    z[i] = v;
                }
            }
        }
        /* 3. the normaliser, a scalar recursion with lag M; 4. the LLR */
#define CAT(t) C[(t) + 1] /* C[t] for t >= -1 */
        for (size_t j = 0; j < N; j++) {
            double term = -INFINITY;
            if (j + 1 >= M) {
                /* the diagonal s = j-M+1 >= 0 reached k = M-1 at sample j-1 */
                term = la + R[(j - 1) * M + (M - 1)] -
                       (CAT((long)j - 1) - CAT((long)j - (long)M));
            }
            CAT((long)j) = CAT((long)j - 1) + lse_add(l1a, term);
            double pres = -INFINITY, abs = 0.0;
            for (uint32_t k = 1; k <= M - 1; k++) {
                if (k > j + 1) break; /* diagonal before the stream: d = -inf */
                const double d =
                    la + R[j * M + k] - (CAT((long)j) - CAT((long)j - (long)k));
                if (k <= Ns)
                    pres = lse_add(pres, d);
                else
                    abs = lse_add(abs, d);
            }
            lb[j] = pres - abs;
        }
#undef CAT
        tr_kalman *ref = make(m, TR_VARIANT_REFERENCE, TR_BACKEND_CPU, Ns, alpha, 0.0);
        if (ref) {
            tr_kalman_process_f64(ref, x, N, lr, dr);
            double worst = 0.0;
            size_t cmp = 0;
            for (size_t j = 0; j < N; j++) {
                if (!isfinite(lr[j])) continue;
                cmp++;
                const double e =
                    fabs(lb[j] - lr[j]) / (1e-9 * (fabs(lr[j]) > 1 ? fabs(lr[j]) : 1));
                if (!(e <= worst)) worst = e;
            }
            CHECK(worst <= 1.0 && cmp > N * 9 / 10,
                  "batched formulation (M=%u Q=%u Ns=%u): worst |diff| / 1e-9 "
                  "max(1,|LLR|) = %g "
                  "over %zu samples",
                  M, Q, Ns, worst, cmp);
            tr_kalman_destroy(ref);
        }
        free(x);
        free(zM);
        free(qM);
        free(R);
        free(C);
        free(lb);
        free(lr);
        free(dr);
        tr_kalman_model_destroy(m);
    }
}

/* GPU: the CUDA variants against the reference (needs a GPU, else 77). */
static int test_gpu(void)
{
    if (tr_cuda_device_count(NULL, 0) == 0) {
        printf("test_kalman --gpu: no usable GPU, skipped\n");
        return 77;
    }
    tu_rng g = {99};
    const uint32_t Ms[3] = {92, 1024, 3000};
    for (int i = 0; i < 3; i++) {
        sim_model s;
        memset(&s, 0, sizeof s);
        s.M = Ms[i];
        s.pn = s.px = 4;
        random_ar(&g, 4, 0.9, s.an);
        random_ar(&g, 4, 0.95, s.ax);
        s.sn = 1.0;
        s.sx = 0.05;
        s.R = 0.05;
        tr_error err;
        tr_kalman_model *m = design_of(&s, &err);
        if (!m) continue;
        const size_t len = 3 * (size_t)s.M + 8000;
        size_t onsets[64], nb = 0;
        for (size_t t = 200; t + s.M < len && nb < 64; t += 2 * s.M + 500)
            onsets[nb++] = t;
        float *x = malloc(len * sizeof(float));
        simulate(&g, &s, len, onsets, nb, x);
        x[len / 3] = NAN;
        double *lr = malloc(len * sizeof(double)), *lf = malloc(len * sizeof(double));
        uint8_t *dr = malloc(len), *df = malloc(len);
        tr_kalman *ref =
            make(m, TR_VARIANT_REFERENCE, TR_BACKEND_CPU, s.M / 4, 1e-9, 0.0);
        feed(&g, ref, x, len, lr, dr, 0);
        const tr_variant vs[2] = {TR_VARIANT_FAST, TR_VARIANT_PAPER};
        for (int v = 0; v < 2; v++) {
            if (vs[v] == TR_VARIANT_PAPER && len > 30000) continue; /* slow by design */
            tr_kalman *f = make(m, vs[v], TR_BACKEND_CUDA, s.M / 4, 1e-9, 0.0);
            CHECK(f != NULL, "CUDA %s create (M=%u)", tr_variant_name(vs[v]), s.M);
            if (!f) continue;
            feed(&g, f, x, len, lf, df, 1);
            const cmp_stats c = compare(lr, dr, lf, df, len, 0.0);
            CHECK(
                c.worst <= 1.0 && c.bad_dec == 0 && c.nonfin == 0,
                "CUDA %s M=%u: worst |diff|/tol %g, %zu decisions differ, %zu non-finite",
                tr_variant_name(vs[v]), s.M, c.worst, c.bad_dec, c.nonfin);
            tr_kalman_destroy(f);
        }
        tr_kalman_destroy(ref);
        free(x);
        free(lr);
        free(lf);
        free(dr);
        free(df);
        tr_kalman_model_destroy(m);
    }
    return tu_finish("test_kalman --gpu");
}

int main(int argc, char **argv)
{
    const char *roc = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu")) return test_gpu();
        if (!strcmp(argv[i], "--roc") && i + 1 < argc) roc = argv[++i];
    }
    test_invalid_and_empty();
    test_setters();
    test_events();
    test_batched_formulation();
    test_against_reference();
    test_quality(roc);
    return tu_finish("test_kalman");
}
