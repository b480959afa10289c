/*
 * IEEE Std 181 edge metrics: analytic waveforms (linear ramp, RC edge,
 * second-order step, jittered clock), chunk invariance through the edge
 * localizer, NaN/Inf and the edges of a record.
 *
 * Usage: test_edge_metrics         CPU
 *        test_edge_metrics --gpu   the CUDA backend's metrics against the CPU's
 *                                  (exit 77 = skipped without a GPU)
 */
#include <transient/transient.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_util.h"
#include "edges/edge_metrics_internal.h"

#define SKIP 77
#define PI   3.14159265358979323846

static tr_edges_config metrics_config(void)
{
    tr_edges_config c = tr_edges_config_default(); /* levels 0.1 / 0.5 / 0.9 */
    c.backend = TR_BACKEND_CPU;
    c.metrics = 1;
    return c;
}

/* Run the localizer with metrics in chunks of at most chunk_max (0: one call)
 * with output capacities up to cap_max; returns the records (count in *n). */
static tr_edge_metric *run(const tr_edges_config *cfg, const float *x, size_t n,
                           size_t chunk_max, size_t cap_max, tu_rng *r, size_t *count)
{
    tr_error err;
    tr_edges *q = tr_edges_create(cfg, &err);
    *count = 0;
    if (!q) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return NULL;
    }
    tr_edge *e = malloc((n + 1) * sizeof *e);
    tr_edge_metric *m = malloc((n + 1) * sizeof *m);
    size_t pos = 0, nm = 0, spins = 0;
    int ok = 1;
    while (ok && pos < n && spins++ < 100 * n + 100) {
        size_t chunk = chunk_max ? (size_t)tu_range(r, 1, (long)chunk_max) : n - pos;
        if (chunk > n - pos) chunk = n - pos;
        size_t cap = cap_max ? (size_t)tu_range(r, 0, (long)cap_max) : n + 1;
        size_t c = 0, k = 0, got = 0;
        ok = tr_edges_process(q, x + pos, chunk, e, cap, &c, &k) == TR_OK &&
             tr_edges_metrics_read(q, m + nm, n + 1 - nm, &got) == TR_OK;
        pos += c;
        nm += got;
    }
    for (size_t k = 1; ok && k > 0;) {
        size_t got = 0;
        ok = tr_edges_flush(q, e, n + 1, &k) == TR_OK &&
             tr_edges_metrics_read(q, m + nm, n + 1 - nm, &got) == TR_OK;
        nm += got;
    }
    if (!ok || pos < n) fprintf(stderr, "run failed: %s\n", tr_edges_last_error(q));
    tr_edges_destroy(q);
    free(e);
    *count = nm;
    if (!ok || pos < n) {
        free(m);
        return NULL;
    }
    return m;
}

static int same_double(double a, double b)
{
    return (a != a && b != b) || a == b;
}

static int same_records(const tr_edge_metric *a, const tr_edge_metric *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double *pa = &a[i].start, *pb = &b[i].start;
        const size_t nd = (size_t)(&a[i].duty - &a[i].start) + 1;
        int same = a[i].sample == b[i].sample && a[i].polarity == b[i].polarity &&
                   a[i].flags == b[i].flags && same_double(a[i].time, b[i].time);
        for (size_t d = 0; d < nd; d++)
            same = same && same_double(pa[d], pb[d]);
        if (!same) {
            fprintf(stderr, "record %zu differs (sample %lld / %lld)\n", i,
                    (long long)a[i].sample, (long long)b[i].sample);
            return 0;
        }
    }
    return 1;
}

/* A periodic pulse train from edge(phase, polarity) written around each edge. */
typedef double (*edge_fn)(double t, int rising, double p);

static float *train(size_t n, double period, double start, edge_fn f, double p)
{
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        const double t = (double)i - start;
        double v = 0.0;
        if (t >= 0.0) {
            const double half = period / 2.0;
            const double k = floor(t / half);
            const int rising = ((long)k % 2) == 0;
            v = f(t - k * half, rising, p);
        }
        x[i] = (float)v;
    }
    return x;
}

static double ramp(double t, int rising, double len)
{
    const double u = t < len ? t / len : 1.0;
    return rising ? u : 1.0 - u;
}

static double rc(double t, int rising, double tau)
{
    const double u = 1.0 - exp(-t / tau);
    return rising ? u : 1.0 - u;
}

/* Unit step response of a second-order system, damping zeta, wn = 2 pi / 400. */
static double second_order(double t, int rising, double zeta)
{
    const double wn = 2.0 * PI / 400.0, wd = wn * sqrt(1.0 - zeta * zeta);
    const double phi = acos(zeta);
    const double u =
        1.0 - exp(-zeta * wn * t) / sqrt(1.0 - zeta * zeta) * sin(wd * t + phi);
    return rising ? u : 1.0 - u;
}

/* The metrics of a train (one call, default settings). */
static tr_edge_metric *measure_train(size_t n, double period, double start, edge_fn f,
                                     double p, size_t *nm)
{
    float *x = train(n, period, start, f, p);
    tr_edges_config c = metrics_config();
    tu_rng r = {1};
    tr_edge_metric *m = run(&c, x, n, 0, 0, &r, nm);
    free(x);
    return m;
}

static void test_ramp(void)
{
    size_t nm = 0;
    tr_edge_metric *m = measure_train(20000, 1000.0, 100.3, ramp, 40.0, &nm);
    CHECK(m && nm == 40, "ramp: 40 transitions, got %zu", nm);
    for (size_t i = 0; m && i < nm; i++) {
        CHECK(fabs(m[i].duration - 32.0) < 1e-4, "ramp: 10-90 = 0.8 * 40, got %g",
              m[i].duration);
        CHECK(fabs(m[i].duration2 - 24.0) < 1e-4, "ramp: 20-80 = 0.6 * 40, got %g",
              m[i].duration2);
        CHECK(fabs(m[i].slew - m[i].polarity / 40.0) < 1e-7, "ramp: slew 1/40, got %g",
              m[i].slew);
        CHECK(m[i].overshoot < 1e-4 && m[i].pre_undershoot < 1e-4, "ramp: no aberration");
        CHECK(fabs(m[i].settling - 0.48 * 40.0) < 1e-3,
              "ramp: settling to 2 %% = 19.2, %g", m[i].settling);
        if (i + 2 < nm) {
            CHECK(fabs(m[i].width - 500.0) < 1e-4 && fabs(m[i].period - 1000.0) < 1e-4 &&
                      fabs(m[i].duty - 0.5) < 1e-7,
                  "ramp: width 500, period 1000, duty 0.5: %g %g %g", m[i].width,
                  m[i].period, m[i].duty);
        }
        CHECK(m[i].flags == 0, "ramp: flags %u", m[i].flags);
    }
    CHECK(m && isnan(m[nm - 1].width) && isnan(m[nm - 2].period),
          "ramp: last pulses open");
    free(m);
}

static void test_rc(void)
{
    const double tau = 50.0;
    size_t nm = 0;
    tr_edge_metric *m = measure_train(40000, 4000.0, 77.7, rc, tau, &nm);
    CHECK(m && nm == 20, "rc: 20 transitions, got %zu", nm);
    for (size_t i = 0; m && i < nm; i++) {
        CHECK(fabs(m[i].duration - tau * log(9.0)) < 2e-3 * tau,
              "rc: 10-90 = tau ln 9 = %g, got %g", tau * log(9.0), m[i].duration);
        CHECK(fabs(m[i].duration2 - tau * log(4.0)) < 2e-3 * tau,
              "rc: 20-80 = tau ln 4, got %g", m[i].duration2);
        CHECK(fabs(m[i].settling - tau * log(25.0)) < 2e-3 * tau,
              "rc: settling 50 %% to 98 %% = tau ln 25, got %g", m[i].settling);
    }
    free(m);
}

static void test_second_order(void)
{
    const double zetas[] = {0.2, 0.4, 0.6};
    for (int z = 0; z < 3; z++) {
        size_t nm = 0;
        tr_edge_metric *m =
            measure_train(30000, 6000.0, 10.25, second_order, zetas[z], &nm);
        const double os = 100.0 * exp(-zetas[z] * PI / sqrt(1.0 - zetas[z] * zetas[z]));
        CHECK(m && nm == 10, "2nd order: 10 transitions, got %zu", nm);
        for (size_t i = 0; m && i < nm; i++)
            CHECK(fabs(m[i].overshoot - os) < 0.02,
                  "2nd order zeta %g: overshoot %g %%, got %g", zetas[z], os,
                  m[i].overshoot);
        free(m);
    }
}

static void test_jitter(void)
{
    const double period = 100.0, sigma = 0.5;
    const size_t edges = 4000, n = (size_t)(period / 2.0 * (double)edges) + 200;
    float *x = malloc(n * sizeof *x);
    double *at = malloc((edges + 1) * sizeof *at);
    tu_rng r = {4};
    for (size_t k = 0; k <= edges; k++)
        at[k] = 60.0 + period / 2.0 * k + sigma * tu_gauss(&r);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) { /* 8-sample linear edges centred on at[k] */
        while (k + 1 <= edges && (double)i > at[k] + period / 4.0)
            k++;
        const int rising = k % 2 == 0;
        double u = ((double)i - at[k]) / 8.0 + 0.5;
        u = u < 0.0 ? 0.0 : (u > 1.0 ? 1.0 : u);
        x[i] = (float)(rising ? u : (k == 0 ? 0.0 : 1.0 - u));
    }
    tr_edges_config c = metrics_config();
    size_t nm = 0;
    tr_edge_metric *m = run(&c, x, n, 0, 0, &r, &nm);
    double *t = malloc(nm * sizeof *t), *tie = malloc(nm * sizeof *tie);
    size_t nr = 0;
    for (size_t i = 0; m && i < nm; i++)
        if (m[i].polarity > 0) t[nr++] = m[i].time;
    double rms = 0, pp = 0;
    tr_error err;
    CHECK(tr_edge_tie(t, nr, 0.0, 0, tie, &rms, &pp, &err) == TR_OK, "tie: %s",
          err.message);
    CHECK(fabs(rms - sigma) < 0.05 * sigma, "tie: rising edges, RMS %g of injected %g",
          rms, sigma);
    CHECK(pp > 4.0 * sigma && pp < 10.0 * sigma, "tie: peak-to-peak %g", pp);
    for (size_t i = 0; m && i < nm; i++)
        t[i] = m[i].time;
    CHECK(tr_edge_tie(t, nm, period / 2.0, 500, tie, &rms, NULL, &err) == TR_OK,
          "tie ui");
    CHECK(fabs(rms - sigma) < 0.05 * sigma, "tie: all edges, ui, windows of 500: RMS %g",
          rms);
    CHECK(tr_edge_tie(t, nm, 0.0, 2, tie, &rms, NULL, &err) == TR_ERR_INVALID,
          "tie: a window of 2 rejected");
    t[1] = t[0];
    CHECK(tr_edge_tie(t, nm, 0.0, 0, tie, &rms, NULL, &err) == TR_ERR_INVALID,
          "tie: non-increasing times rejected");
    free(t);
    free(tie);
    free(m);
    free(at);
    free(x);
}

/* Pulses with ringing, noise, runts and the odd NaN/Inf. */
static float *noisy_pulses(size_t n, tu_rng *r)
{
    float *x = malloc(n * sizeof *x);
    size_t i = 0;
    int high = 0;
    while (i < n) {
        const size_t width = (size_t)tu_range(r, 5, 400);
        const double runt = tu_uniform(r) < 0.1 ? 0.6 : 0.0;
        for (size_t j = 0; j < width && i < n; j++, i++) {
            const double k = (double)j;
            double v = high ? 1.0 - exp(-k / 3.0) : exp(-k / 3.0);      /* RC edge */
            v += 0.2 * exp(-k / 10.0) * sin(0.9 * k) * (high ? 1 : -1); /* ringing */
            if (runt > 0 && j > width / 2 && j < width / 2 + 6)
                v = high ? 1 - runt : runt;
            v += 0.02 * tu_gauss(r);
            x[i] = (float)v;
            if (tu_uniform(r) < 0.002) x[i] = tu_uniform(r) < 0.5 ? NAN : -INFINITY;
        }
        high = !high;
    }
    return x;
}

static void test_chunking(void)
{
    tu_rng r = {5};
    const size_t n = 60000;
    float *x = noisy_pulses(n, &r);
    const size_t windows[] = {65536, 40};
    for (int w = 0; w < 2; w++) {
        for (int mode = 0; mode < 2; mode++) {
            tr_edges_config c = metrics_config();
            c.metrics_cfg.window = windows[w];
            if (mode) {
                c.levels_mode = TR_LEVELS_AUTO;
                c.level_samples = 5000;
                c.level_interval = 7000;
            }
            size_t n0 = 0, n1 = 0, n2 = 0;
            tr_edge_metric *a = run(&c, x, n, 0, 0, &r, &n0);
            tr_edge_metric *b = run(&c, x, n, 1, 2, &r, &n1);
            c.variant = TR_VARIANT_REFERENCE; /* the oracle, chunked */
            tr_edge_metric *d = run(&c, x, n, 997, 5, &r, &n2);
            CHECK(a && b && d && n0 > 100 && n0 == n1 && n0 == n2,
                  "chunking: counts %zu %zu %zu (window %zu, auto %d)", n0, n1, n2,
                  windows[w], mode);
            if (a && b && d && n0 == n1 && n0 == n2)
                CHECK(same_records(a, b, n0) && same_records(a, d, n0),
                      "chunking: identical records (window %zu, auto %d)", windows[w],
                      mode);
            size_t clipped = 0;
            for (size_t i = 0; a && i < n0; i++)
                clipped += (a[i].flags & TR_METRIC_CLIPPED) != 0;
            CHECK(w == 0 ? clipped == 0 : clipped > 0, "window %zu: %zu clipped",
                  windows[w], clipped);
            free(a);
            free(b);
            free(d);
        }
    }
    free(x);
}

/* The fast settling scan against the reference, at the band's float edges. */
static void test_scan(void)
{
    tu_rng r = {9};
    float x[300];
    for (int trial = 0; trial < 2000; trial++) {
        const double lo = 0.3 + 0.1 * tu_uniform(&r), hi = lo + 0.05 * tu_uniform(&r);
        const float edges[] = {(float)lo,
                               nextafterf((float)lo, 0),
                               nextafterf((float)lo, 1),
                               (float)hi,
                               nextafterf((float)hi, 0),
                               nextafterf((float)hi, 1),
                               NAN,
                               INFINITY};
        const int n = (int)tu_range(&r, 0, 300);
        for (int i = 0; i < n; i++)
            x[i] = tu_uniform(&r) < 0.97 ? (float)(lo + (hi - lo) * tu_uniform(&r))
                                         : edges[tu_range(&r, 0, 7)];
        const int64_t a = tr_edge_metric_last_outside_ref(x, n, lo, hi);
        const int64_t b = tr_edge_metric_last_outside_cpu(x, n, lo, hi);
        if (a != b) {
            CHECK(0, "scan: fast %lld, reference %lld", (long long)b, (long long)a);
            return;
        }
    }
    CHECK(1, "scan: fast equals reference");
}

static void test_record_edges(void)
{
    tr_edges_config c = metrics_config();
    tu_rng r = {6};
    size_t nm = 0;
    /* A record that ends mid-transition: confirmed at 0.92, 90 % reached. */
    float end[] = {0, 0, 0, 0.2f, 0.4f, 0.6f, 0.8f, 0.92f};
    tr_edge_metric *m = run(&c, end, 8, 0, 0, &r, &nm);
    CHECK(m && nm == 1 && fabs(m[0].duration - (6.0 + 0.1 / 0.12 - 2.5)) < 1e-5,
          "ends mid-transition: duration");
    CHECK(m && isnan(m[0].settling) && (m[0].flags & TR_METRIC_RECORD_END),
          "ends mid-transition: not settled, RECORD_END");
    free(m);
    /* A runt gives no transition and no record; NaN hides a crossing. */
    float runt[] = {0, 0, 0.6f, 0.6f, 0, 0, 0.5f, 1, 1, 1, NAN, 1, 0, 0};
    m = run(&c, runt, 14, 0, 0, &r, &nm);
    CHECK(m && nm == 2 && m[0].sample == 7 && m[0].time == 6.0, "runt: no record");
    free(m);
    float hidden[] = {0, 0, NAN, 1, 1, 1, 0, 0, 0};
    m = run(&c, hidden, 9, 0, 0, &r, &nm);
    CHECK(m && nm == 2 && isnan(m[0].time) && isnan(m[0].duration) && isnan(m[0].width),
          "hidden crossing: NaN metrics");
    CHECK(m && m[1].duration > 0.0 && isnan(m[1].width), "hidden: the next one measured");
    free(m);
    /* Inf in the pre-transition region is skipped, not a deviation. */
    float inf[] = {0, INFINITY, 0, 0, 0, 0, 0.5f, 1, 1, 1, 1, 1, 1};
    m = run(&c, inf, 13, 0, 0, &r, &nm);
    CHECK(m && nm == 1 && m[0].pre_overshoot == 0.0, "Inf skipped in regions");
    free(m);
    m = run(&c, inf, 0, 0, 0, &r, &nm);
    CHECK(m && nm == 0, "empty input");
    free(m);
}

static void test_api(void)
{
    tr_error err;
    tr_edge_metrics_config mc = tr_edge_metrics_config_default();
    mc.ref_low_pct = 95;
    CHECK(!tr_edge_metrics_create(&mc, &err) && strstr(err.message, "reference"),
          "bad reference levels rejected: %s", err.message);
    mc = tr_edge_metrics_config_default();
    mc.low_level = 0.0;
    CHECK(!tr_edge_metrics_create(&mc, &err) && strstr(err.message, "high_level"),
          "one state level alone rejected");
    mc = tr_edge_metrics_config_default();
    mc.window = 1;
    CHECK(!tr_edge_metrics_create(&mc, &err), "window 1 rejected");
    mc = tr_edge_metrics_config_default();
    tr_edge_metrics *m = tr_edge_metrics_create(&mc, &err);
    tr_edge e = {1.5, 2, 1, 0};
    float x[4] = {0, 0, 1, 1};
    CHECK(tr_edge_metrics_feed(m, x, 4, &e, 1) == TR_ERR_STATE, "levels needed first");
    CHECK(tr_edge_metrics_set_levels(m, 0, 1, 0.1f, 0.9f) == TR_OK, "set levels");
    e.sample = 9;
    CHECK(tr_edge_metrics_feed(m, x, 4, &e, 1) == TR_ERR_INVALID &&
              strstr(tr_edge_metrics_last_error(m), "sample 9"),
          "transition outside its samples rejected");
    tr_edge_metrics_destroy(m);
    tr_edges_config c = tr_edges_config_default();
    c.backend = TR_BACKEND_CPU;
    tr_edges *q = tr_edges_create(&c, &err);
    size_t k;
    tr_edge_metric out;
    CHECK(tr_edges_metrics_read(q, &out, 1, &k) == TR_ERR_STATE,
          "metrics off: state error");
    tr_edges_destroy(q);
    /* Explicit state levels win over the boundaries. */
    c = metrics_config();
    c.metrics_cfg.low_level = -1.0;
    c.metrics_cfg.high_level = 3.0;
    float y[] = {-1, -1, -1, 0.0f, 1.0f, 3, 3, 3, 3, 3, 3};
    tu_rng r = {7};
    size_t nm;
    tr_edge_metric *rec = run(&c, y, 11, 0, 0, &r, &nm);
    /* 10 % of 4 above -1 is -0.6: crossed in [2, 3] at 2.4; 90 % = 2.6 in [4, 5]. */
    CHECK(rec && nm == 1 && fabs(rec[0].start - 2.4) < 1e-9 &&
              fabs(rec[0].end - 4.8) < 1e-9,
          "explicit state levels: %g %g", rec ? rec[0].start : 0, rec ? rec[0].end : 0);
    free(rec);
}

/* The CUDA backend finds the transitions; the metrics are the CPU's. */
static void test_gpu(void)
{
    tu_rng r = {8};
    const size_t n = 1 << 20;
    float *x = noisy_pulses(n, &r);
    tr_edges_config c = metrics_config();
    size_t n0 = 0, n1 = 0;
    tr_edge_metric *a = run(&c, x, n, 0, 0, &r, &n0);
    c.backend = TR_BACKEND_CUDA;
    c.batch = 1 << 16;
    tr_edge_metric *b = run(&c, x, n, 100000, 0, &r, &n1);
    CHECK(a && b && n0 > 1000 && n0 == n1 && same_records(a, b, n0),
          "gpu: CUDA backend's metrics equal the CPU's (%zu, %zu)", n0, n1);
    free(a);
    free(b);
    free(x);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--gpu")) {
        char why[160];
        if (tr_cuda_device_count(why, sizeof why) == 0) {
            printf("test_edge_metrics --gpu: skipped: %s\n", why);
            return SKIP;
        }
        test_gpu();
        return tu_finish("test_edge_metrics --gpu");
    }
    test_ramp();
    test_rc();
    test_second_order();
    test_jitter();
    test_chunking();
    test_scan();
    test_record_edges();
    test_api();
    return tu_finish("test_edge_metrics");
}
