/*
 * Edge localizer: every variant against the reference, bit for bit.
 *
 * Usage: test_edges          CPU variants (reference chunked, optimized with
 *                            each classifier kernel)
 *        test_edges --gpu    CUDA variants (exit 77 = skipped without a GPU)
 */
#include <transient/transient.h>

#include <math.h>
#include <stdlib.h>

#include "edges/edges_internal.h"
#include "common/test_util.h"

#define SKIP 77

static const tr_edges_lv LV = {0.1f, 0.5f, 0.9f};

/* ---- signals ------------------------------------------------------------ */

/* Samples drawn from an alphabet of awkward values (exactly l, m, h, next to m,
 * NaN, +-Inf), in runs so that long intermediate stretches occur. */
static void gen_alphabet(float *x, size_t n, tu_rng *r)
{
    const float vals[] = {LV.low,
                          LV.mid,
                          LV.high,
                          0.0f,
                          1.0f,
                          0.3f,
                          0.7f,
                          nextafterf(LV.mid, 0.0f),
                          nextafterf(LV.mid, 1.0f),
                          NAN,
                          INFINITY,
                          -INFINITY,
                          -5.0f,
                          5.0f};
    const int nv = sizeof vals / sizeof vals[0];
    size_t i = 0;
    while (i < n) {
        size_t run = (size_t)tu_range(r, 1, tu_uniform(r) < 0.1 ? 200 : 4);
        int intermediate_only = tu_uniform(r) < 0.2;
        for (size_t k = 0; k < run && i < n; k++, i++) {
            if (intermediate_only)
                x[i] = (float)(0.15 + 0.7 * tu_uniform(r));
            else if (tu_uniform(r) < 0.3)
                x[i] = (float)(-0.2 + 1.4 * tu_uniform(r));
            else
                x[i] = vals[tu_range(r, 0, nv - 1)];
        }
    }
}

/* A pulse train: noise, ringing after edges, runts, oscillation around mid. */
static void gen_pulses(float *x, size_t n, tu_rng *r, double noise)
{
    size_t i = 0;
    int high = 0;
    while (i < n) {
        size_t width = (size_t)tu_range(r, 3, 300);
        double target = high ? 1.0 : 0.0;
        double kind = tu_uniform(r);
        for (size_t k = 0; k < width && i < n; k++, i++) {
            double v = target;
            if (kind < 0.15 && k < width / 2) /* runt towards the other state */
                v = high ? 1.0 - 0.6 * sin(3.14159 * k / (width / 2.0))
                         : 0.6 * sin(3.14159 * k / (width / 2.0));
            else if (kind < 0.3 && k < 12) /* oscillation around mid */
                v = 0.5 + (k % 2 ? 0.08 : -0.08) * (high ? 1 : -1);
            v += (high ? -0.3 : 0.3) * exp(-k / 4.0) * cos(1.7 * k); /* ringing */
            v += noise * tu_gauss(r);
            x[i] = (float)v;
            if (tu_uniform(r) < 0.001) x[i] = tu_uniform(r) < 0.5 ? NAN : INFINITY;
        }
        high = !high;
    }
}

/* ---- running a configuration ------------------------------------------- */

typedef struct {
    const char *name;
    tr_backend backend;
    tr_variant variant;
    const char *kernel; /* CPU classifier, or NULL */
} variant_t;

/* chunk_max == 0: one call; chunk_max == 1: one sample per call. Small random
 * output capacities when tight_out. Returns transitions (or -1 on error). */
static long run_object(const tr_edges_config *cfg, const float *x, size_t n, tr_edge *out,
                       size_t chunk_max, int tight_out, tu_rng *r)
{
    tr_error err;
    tr_edges *q = tr_edges_create(cfg, &err);
    if (!q) {
        fprintf(stderr, "create failed: %s\n", err.message);
        return -1;
    }
    size_t pos = 0, nout = 0;
    int stalls = 0;
    while (pos < n) {
        size_t chunk = chunk_max ? (size_t)tu_range(r, 1, (long)chunk_max) : n - pos;
        if (chunk > n - pos) chunk = n - pos;
        size_t cap = tight_out ? (size_t)tu_range(r, 0, 3) : n - nout;
        if (cap > n - nout) cap = n - nout;
        size_t c = 0, k = 0;
        tr_status s = tr_edges_process(q, x + pos, chunk, out + nout, cap, &c, &k);
        if (s != TR_OK) {
            fprintf(stderr, "process failed: %s\n", tr_edges_last_error(q));
            tr_edges_destroy(q);
            return -1;
        }
        pos += c;
        nout += k;
        stalls = (c == 0 && k == 0) ? stalls + 1 : 0;
        if (stalls > 1000) {
            fprintf(stderr, "no progress\n");
            tr_edges_destroy(q);
            return -1;
        }
    }
    for (;;) { /* auto levels: whatever is still held */
        size_t k = 0;
        if (tr_edges_flush(q, out + nout, n - nout, &k) != TR_OK) break;
        nout += k;
        if (k == 0) break;
    }
    tr_edges_destroy(q);
    return (long)nout;
}

static int same_edges(const tr_edge *a, const tr_edge *b, long n)
{
    for (long i = 0; i < n; i++) {
        /* Bitwise: NaN times must match too. */
        if (memcmp(&a[i].time, &b[i].time, sizeof(double)) ||
            a[i].sample != b[i].sample || a[i].polarity != b[i].polarity) {
            fprintf(stderr,
                    "  first difference at %ld: (%.17g, %lld, %d) vs (%.17g, %lld, %d)\n",
                    i, a[i].time, (long long)a[i].sample, a[i].polarity, b[i].time,
                    (long long)b[i].sample, b[i].polarity);
            return 0;
        }
    }
    return 1;
}

static tr_edges_config fixed_config(void)
{
    tr_edges_config c = tr_edges_config_default();
    c.low = LV.low;
    c.mid = LV.mid;
    c.high = LV.high;
    return c;
}

/* Compare one variant with the reference on many random signals/chunkings. */
static void compare_variant(const variant_t *v, int auto_levels)
{
    tu_rng r = {0x5eed0000u + (uint64_t)auto_levels};
    const size_t sizes[] = {0, 1, 2, 63, 64, 65, 127, 1000, 4097, 100000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int kind = 0; kind < 3; kind++) {
            const size_t n = sizes[si];
            float *x = malloc((n + 1) * sizeof *x);
            tr_edge *ref = malloc((n + 1) * sizeof *ref);
            tr_edge *got = malloc((n + 1) * sizeof *got);
            if (kind == 0)
                gen_alphabet(x, n, &r);
            else
                gen_pulses(x, n, &r, kind == 1 ? 0.02 : 0.12);

            tr_edges_config cfg = fixed_config();
            if (auto_levels) {
                cfg.levels_mode = TR_LEVELS_AUTO;
                cfg.level_samples = 500;
                cfg.level_interval = 700;
            }
            tr_edges_config rc = cfg;
            rc.backend = TR_BACKEND_CPU;
            rc.variant = TR_VARIANT_REFERENCE;
            long nref = run_object(&rc, x, n, ref, 0, 0, &r);
            CHECK(nref >= 0, "reference failed");

            tr_edges_config vc = cfg;
            vc.backend = v->backend;
            vc.variant = v->variant;
            vc.batch = (size_t)tu_range(&r, 1, 5000); /* batches split the stream too */
            if (v->kernel) tr_edges_cpu_select(v->kernel);
            const size_t chunkings[] = {0, 1, 7, 300};
            for (int ci = 0; ci < 4; ci++) {
                for (int tight = 0; tight < 2; tight++) {
                    if (n > 5000 && (chunkings[ci] == 1 || tight)) continue; /* time */
                    long ngot = run_object(&vc, x, n, got, chunkings[ci], tight, &r);
                    CHECK(ngot == nref && same_edges(ref, got, nref),
                          "%s%s: n=%zu kind=%d chunk=%zu tight=%d: %ld vs reference %ld",
                          v->name, auto_levels ? " (auto levels)" : "", n, kind,
                          chunkings[ci], tight, ngot, nref);
                }
            }
            if (v->kernel) tr_edges_cpu_select(NULL);
            free(x);
            free(ref);
            free(got);
        }
    }
}

/* ---- hand-computed cases ------------------------------------------------ */

static void expect(const char *what, const float *x, size_t n, size_t nexp,
                   const double *times, const int64_t *samples, const int *pol)
{
    tr_edges_config c = fixed_config();
    c.backend = TR_BACKEND_CPU;
    const tr_variant vs[] = {TR_VARIANT_REFERENCE, TR_VARIANT_FAST};
    for (int vi = 0; vi < 2; vi++) {
        c.variant = vs[vi];
        tr_edge out[16];
        tu_rng r = {1};
        long k = run_object(&c, x, n, out, 0, 0, &r);
        int ok = k == (long)nexp;
        for (long i = 0; ok && i < k; i++) {
            int tsame = isnan(times[i]) ? isnan(out[i].time) : out[i].time == times[i];
            ok = tsame && out[i].sample == samples[i] && out[i].polarity == pol[i];
        }
        CHECK(ok, "%s (%s): got %ld transitions, first (%.17g, %lld, %d)", what,
              tr_variant_name(vs[vi]), k, k > 0 ? out[0].time : 0.0,
              k > 0 ? (long long)out[0].sample : -1LL, k > 0 ? out[0].polarity : 0);
    }
}

static void test_definition(void)
{
    {
        const float x[] = {0, 0, 1, 1, 0, 0};
        const double t[] = {1.5, 3.5};
        const int64_t s[] = {2, 4};
        const int p[] = {1, -1};
        expect("square wave", x, 6, 2, t, s, p);
    }
    {
        const float x[] = {0, 0.6f, 0, 1}; /* runt then a real edge */
        const double t[] = {2.5};
        const int64_t s[] = {3};
        const int p[] = {1};
        expect("runt", x, 4, 1, t, s, p);
    }
    {
        const float x[] = {0, 0.6f, 0.4f, 0.6f, 1}; /* oscillation around mid */
        const double t[] = {0.0 + (0.5 - 0.0) / ((double)0.6f - 0.0)};
        const int64_t s[] = {4};
        const int p[] = {1};
        expect("oscillation", x, 5, 1, t, s, p);
    }
    {
        const float x[] = {0, 0.5f, 1}; /* a sample exactly at mid counts as above */
        const double t[] = {1.0};
        const int64_t s[] = {2};
        const int p[] = {1};
        expect("sample at mid", x, 3, 1, t, s, p);
    }
    {
        const float x[] = {0.1f, 0.9f, 0.5f, 0.1f}; /* exactly at l and h */
        const double t[] = {0.0 + (0.5 - (double)0.1f) / ((double)0.9f - (double)0.1f),
                            2.0 + (0.5 - 0.5) / ((double)0.1f - 0.5)};
        const int64_t s[] = {1, 3};
        const int p[] = {1, -1};
        expect("samples at l and h", x, 4, 2, t, s, p);
    }
    {
        const float x[] = {0, NAN, 1, INFINITY, -INFINITY, 0}; /* hidden crossings */
        const double t[] = {NAN, NAN};
        const int64_t s[] = {2, 5};
        const int p[] = {1, -1};
        expect("non-finite samples", x, 6, 2, t, s, p);
    }
    {
        const float x[] = {0.5f, 0.7f, 0.3f, 1, 0}; /* no state before sample 3 */
        const double t[] = {3.5};
        const int64_t s[] = {4};
        const int p[] = {-1};
        expect("no initial state", x, 5, 1, t, s, p);
    }
}

/* ---- API behaviour ------------------------------------------------------ */

static void test_api(void)
{
    tr_error err;
    tr_edges_config c = fixed_config();
    c.mid = 0.95f;
    CHECK(tr_edges_create(&c, &err) == NULL && err.code == TR_ERR_INVALID &&
              err.message[0],
          "mid above high must be rejected");
    c = fixed_config();
    c.low = NAN;
    CHECK(tr_edges_create(&c, &err) == NULL && err.code == TR_ERR_INVALID, "NaN level");
    c = fixed_config();
    c.levels_mode = TR_LEVELS_AUTO;
    c.tolerance_pct = 60;
    CHECK(tr_edges_create(&c, &err) == NULL && err.code == TR_ERR_INVALID,
          "tolerance 60%%");
    c = fixed_config();
    c.variant = TR_VARIANT_REFERENCE;
    c.backend = TR_BACKEND_CUDA;
    CHECK(tr_edges_create(&c, &err) == NULL && err.code == TR_ERR_INVALID,
          "reference on CUDA");
    CHECK(tr_edges_create(NULL, &err) == NULL && err.code == TR_ERR_INVALID,
          "NULL config");

    char why[128];
    if (tr_cuda_device_count(why, sizeof why) == 0) {
        c = fixed_config();
        c.backend = TR_BACKEND_CUDA;
        CHECK(tr_edges_create(&c, &err) == NULL && err.code == TR_ERR_NO_DEVICE &&
                  strlen(err.message) > 10,
              "explicit CUDA without a GPU must fail clearly");
        c.backend = TR_BACKEND_AUTO;
        tr_edges *q = tr_edges_create(&c, &err);
        CHECK(q && tr_edges_backend(q) == TR_BACKEND_CPU, "AUTO falls back to CPU");
        tr_edges_destroy(q);
    }

    c = fixed_config();
    c.backend = TR_BACKEND_CPU;
    tr_edges *q = tr_edges_create(&c, &err);
    size_t used = 1, k = 1;
    CHECK(tr_edges_process(q, NULL, 0, NULL, 0, &used, &k) == TR_OK && used == 0 &&
              k == 0,
          "empty input");
    CHECK(tr_edges_process(q, NULL, 5, NULL, 0, &used, &k) == TR_ERR_INVALID &&
              tr_edges_last_error(q)[0],
          "NULL samples");
    CHECK(tr_edges_set_levels(q, 1, 0, 2) == TR_ERR_INVALID, "bad set_levels");
    float lo, mi, hi;
    CHECK(tr_edges_get_levels(q, &lo, &mi, &hi) == TR_OK && lo == c.low && mi == c.mid,
          "bad set_levels leaves levels unchanged");
    const float x[] = {0, 1, 0, 1};
    tr_edge out[4];
    tr_edges_process(q, x, 4, out, 4, &used, &k);
    CHECK(k == 3 && tr_edges_position(q) == 4, "three edges, position 4");
    /* A NaN sample does not poison the state machine. */
    const float y[] = {NAN, NAN, 0, 1};
    tr_edges_process(q, y, 4, out, 4, &used, &k);
    CHECK(k == 2 && out[0].polarity == -1 && isnan(out[0].time) && out[1].time == 6.5 &&
              out[1].sample == 7,
          "edges after NaN samples: k=%zu", k);
    tr_edges_reset(q);
    CHECK(tr_edges_position(q) == 0, "reset");
    CHECK(tr_edges_process_device(q, x, 4, out, 4, &used, &k) == TR_ERR_UNSUPPORTED,
          "device samples on the CPU backend");
    tr_edges_destroy(q);
    tr_edges_destroy(NULL);

    /* Auto levels: a constant start never estimates, nothing is lost. */
    c = fixed_config();
    c.levels_mode = TR_LEVELS_AUTO;
    c.level_samples = 100;
    c.backend = TR_BACKEND_CPU;
    q = tr_edges_create(&c, &err);
    float z[1000];
    for (int i = 0; i < 1000; i++)
        z[i] = i < 500 ? 2.0f : (i / 10) % 2 ? 3.0f : 2.0f;
    tr_edge e[1000];
    tr_edges_process(q, z, 1000, e, 1000, &used, &k);
    size_t k2 = 0;
    tr_edges_flush(q, e + k, 1000 - k, &k2);
    CHECK(k + k2 == 49 && e[0].sample == 510, "auto levels after a constant start: %zu",
          k + k2);
    tr_edges_destroy(q);
}

static void test_statelevels(void)
{
    tu_rng r = {7};
    float x[20000];
    for (int i = 0; i < 20000; i++)
        x[i] = (float)((i / 100) % 2 ? 3.3 : 0.2) + 0.02f * (float)tu_gauss(&r);
    tr_statelevels sl;
    tr_error err;
    CHECK(tr_statelevels_estimate(x, 20000, 100, 10, 50, &sl, &err) == TR_OK, "%s",
          err.message);
    CHECK(fabs(sl.low_level - 0.2) < 0.05 && fabs(sl.high_level - 3.3) < 0.05,
          "levels %g %g", sl.low_level, sl.high_level);
    CHECK(fabs(sl.mid - 1.75) < 0.05 && fabs(sl.low - (sl.low_level + 0.31)) < 0.01,
          "refs");
    const float flat[4] = {1, 1, 1, NAN};
    CHECK(tr_statelevels_estimate(flat, 4, 100, 10, 50, &sl, &err) == TR_ERR_INVALID &&
              err.message[0],
          "flat signal");
    CHECK(tr_statelevels_estimate(x, 100, 1, 10, 50, &sl, &err) == TR_ERR_INVALID,
          "1 bin");
    CHECK(tr_statelevels_estimate(x, 100, 100, 10, 95, &sl, &err) == TR_ERR_INVALID,
          "mid 95");
}

static void test_pulses(void)
{
    const tr_edge e[] = {
        {10.5, 11, 1, 0}, {20.5, 21, -1, 0}, {40.5, 41, 1, 0}, {NAN, 52, -1, 0}};
    tr_pulse p[3];
    CHECK(tr_edges_to_pulses(e, 4, p) == 3, "count");
    CHECK(p[0].width == 10 && p[0].period == 30 && fabs(p[0].duty - 1.0 / 3) < 1e-12 &&
              p[0].polarity == 1,
          "first pulse");
    CHECK(p[1].width == 20 && p[1].polarity == -1 && isnan(p[1].period), "second pulse");
    CHECK(isnan(p[2].width) && isnan(p[2].period), "NaN propagates");
    CHECK(tr_edges_to_pulses(e, 1, p) == 0, "one edge, no pulse");
}

int main(int argc, char **argv)
{
    int gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    if (gpu) {
        char why[160];
        if (tr_cuda_device_count(why, sizeof why) == 0) {
            printf("test_edges --gpu: skipped: %s\n", why);
            return SKIP;
        }
        const variant_t vs[] = {{"cuda-fast", TR_BACKEND_CUDA, TR_VARIANT_FAST, NULL},
                                {"cuda-paper", TR_BACKEND_CUDA, TR_VARIANT_PAPER, NULL}};
        for (int i = 0; i < 2; i++) {
            compare_variant(&vs[i], 0);
            compare_variant(&vs[i], 1);
        }
        return tu_finish("test_edges --gpu");
    }
    test_definition();
    test_api();
    test_statelevels();
    test_pulses();
    const variant_t vs[] = {{"reference", TR_BACKEND_CPU, TR_VARIANT_REFERENCE, NULL},
                            {"cpu-generic", TR_BACKEND_CPU, TR_VARIANT_FAST, "generic"},
                            {"cpu-sse2", TR_BACKEND_CPU, TR_VARIANT_FAST, "sse2"},
                            {"cpu-avx2", TR_BACKEND_CPU, TR_VARIANT_FAST, "avx2"}};
    for (int i = 0; i < 4; i++) {
        if (vs[i].kernel && !tr_edges_cpu_select(vs[i].kernel)) {
            printf("%s: not supported on this CPU, skipped\n", vs[i].name);
            continue;
        }
        tr_edges_cpu_select(NULL);
        compare_variant(&vs[i], 0);
        compare_variant(&vs[i], 1);
    }
    return tu_finish("test_edges");
}
