/*
 * Edge localizer on a real oscilloscope recording, checked against a logic
 * analyzer that sampled the same wire.
 *
 * Usage: test_edges_recording ANALOG.f32 LOGIC.u8
 *   ANALOG.f32  raw little-endian float32 samples of the analog channel
 *   LOGIC.u8    raw uint8 samples of the logic probe, one 0 or 1 per sample
 * Both come from examples/data/i2c_sda_analog_8MHz.sr through
 * tests/tools/sr_extract.py: the SDA line of an I2C bus at 8 MHz, 5,832,000
 * samples, 18,403 transitions.
 *
 * The localizer runs with auto levels (IEEE 181 histogram estimate) in every
 * available variant: CPU reference, CPU fast and, when a GPU is usable, CUDA
 * fast and CUDA paper. Checks:
 *  (a) every variant gives the same transitions as the CPU reference, bit for
 *      bit, and the same levels as tr_statelevels_estimate() on the record;
 *  (b) the transitions agree with the logic probe's: equal count, equal
 *      polarity, and each mid crossing within LAG_NOMINAL +- LAG_TOL samples
 *      after the logic transition (see below).
 *
 * Levels: the first 848,748 samples (0.1 s) are an idle bus while the EEPROM
 * powers up, so an estimate over a leading window of the default size sees
 * one state only and the levels would sit inside the noise. The estimate is
 * taken over the whole record (level_samples = n): low level -0.062 V, high
 * level 3.121 V, boundaries 0.257 V / 2.803 V, mid 1.530 V.
 *
 * Tolerance. Let L be the index of the first logic sample with the new value
 * and t the interpolated analog mid crossing. Measured on this record:
 * t - L = 3.65 .. 4.90 on rising edges and 2.71 .. 3.80 on falling edges,
 * constant over the whole 0.73 s (one sample clock for both channels). It is
 * made of
 *  - logic quantization: the wire crossed the logic threshold somewhere in
 *    (L - 1, L], up to 1 sample (125 ns);
 *  - a fixed skew between the instrument's analog and logic inputs of about
 *    3 to 4 samples: on falling edges the analog drops from the high level
 *    through mid within one sample (1.56 V/sample), so there t - L is the skew
 *    alone (2.71 .. 3.80);
 *  - logic threshold vs analog mid: rising edges are the RC rise of the
 *    open-drain pull-up (10-90 % about 12.5 samples = 1.56 us, 0.31 V/sample
 *    at mid), so the analog reaches mid about one sample after the logic
 *    input (threshold near 1.2 V) switched: rising lag 1 sample longer;
 *  - 8-bit quantization of the analog channel (0.078 V steps): at most
 *    0.25 sample of interpolation error on rising edges, 0.05 on falling ones.
 * Allowed: LAG_NOMINAL = 4 samples (500 ns) +- LAG_TOL = 2 samples (250 ns),
 * i.e. 2 .. 6, at least 0.7 sample outside every measured value. A localizer
 * off by a whole sample in its interpolation, one that reports the first
 * sample in the new state (11 to 14 samples after L) instead of the mid
 * crossing, or one that misses or invents a transition fails.
 */
#include <transient/transient.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_util.h"

#define LAG_NOMINAL 4.0  /* samples the analog mid crossing lags the logic edge */
#define LAG_TOL     2.0  /* allowed deviation from LAG_NOMINAL, samples */
#define OUT_CAP     4096 /* transitions per process()/flush() call */

typedef struct {
    tr_edge *v;
    size_t n, cap;
} edge_vec;

static int vec_append(edge_vec *e, const tr_edge *src, size_t k)
{
    if (e->n + k > e->cap) {
        size_t cap = e->cap ? e->cap : 1024;
        while (cap < e->n + k)
            cap *= 2;
        tr_edge *v = realloc(e->v, cap * sizeof *v);
        if (!v) return -1;
        e->v = v;
        e->cap = cap;
    }
    if (k) memcpy(e->v + e->n, src, k * sizeof *src);
    e->n += k;
    return 0;
}

/* Whole file into memory; *size gets its length in bytes. NULL on failure. */
static void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    unsigned char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        unsigned char *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    if (buf && ferror(f)) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = n;
    return buf;
}

/* The raw analog file is little-endian; swap on big-endian hosts. */
static void float32_from_le(float *x, size_t n)
{
    const uint32_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    if (first == 1) return;
    for (size_t i = 0; i < n; i++) {
        unsigned char *b = (unsigned char *)&x[i], t;
        t = b[0], b[0] = b[3], b[3] = t;
        t = b[1], b[1] = b[2], b[2] = t;
    }
}

typedef struct {
    tr_backend backend;
    tr_variant variant;
    size_t chunk; /* samples per process() call */
    const char *name;
} variant_spec;

/*
 * Run one variant over x with auto levels estimated from the whole record.
 * Returns 0 and fills *res and lv[3] (low, mid, high), or -1 with a message.
 */
static int run_variant(const variant_spec *vs, const float *x, size_t n, edge_vec *res,
                       float lv[3])
{
    tr_edges_config cfg = tr_edges_config_default();
    cfg.levels_mode = TR_LEVELS_AUTO;
    cfg.hist_bins = 100;
    cfg.tolerance_pct = 10.0;
    cfg.mid_pct = 50.0;
    cfg.level_samples = n;
    cfg.level_interval = 0;
    cfg.backend = vs->backend;
    cfg.variant = vs->variant;

    tr_error err;
    tr_edges *q = tr_edges_create(&cfg, &err);
    if (!q) {
        fprintf(stderr, "%s: create failed: %s (%s)\n", vs->name, err.message,
                tr_strerror(err.code));
        return -1;
    }
    tr_edge *buf = malloc(OUT_CAP * sizeof *buf);
    int rc = buf ? 0 : -1;
    size_t pos = 0, used, k;
    while (rc == 0 && pos < n) {
        size_t len = n - pos < vs->chunk ? n - pos : vs->chunk;
        tr_status s = tr_edges_process(q, x + pos, len, buf, OUT_CAP, &used, &k);
        if (s != TR_OK || (used == 0 && k == 0) || vec_append(res, buf, k)) {
            fprintf(stderr, "%s: process at %zu failed: %s\n", vs->name, pos,
                    s != TR_OK ? tr_edges_last_error(q) : "no progress or no memory");
            rc = -1;
        }
        pos += used;
    }
    do {
        k = 0;
        if (rc) break;
        tr_status s = tr_edges_flush(q, buf, OUT_CAP, &k);
        if (s != TR_OK || vec_append(res, buf, k)) {
            fprintf(stderr, "%s: flush failed: %s\n", vs->name,
                    s != TR_OK ? tr_edges_last_error(q) : "no memory");
            rc = -1;
        }
    } while (k == OUT_CAP);
    if (rc == 0 && tr_edges_get_levels(q, &lv[0], &lv[1], &lv[2]) != TR_OK) {
        fprintf(stderr, "%s: no levels after flush: %s\n", vs->name,
                tr_edges_last_error(q));
        rc = -1;
    }
    if (rc == 0 &&
        (tr_edges_backend(q) != vs->backend || tr_edges_variant(q) != vs->variant)) {
        fprintf(stderr, "%s: ran as %s/%s\n", vs->name,
                tr_backend_name(tr_edges_backend(q)),
                tr_variant_name(tr_edges_variant(q)));
        rc = -1;
    }
    if (rc == 0 && tr_edges_position(q) != (uint64_t)n) {
        fprintf(stderr, "%s: position %llu after %zu samples\n", vs->name,
                (unsigned long long)tr_edges_position(q), n);
        rc = -1;
    }
    free(buf);
    tr_edges_destroy(q);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s ANALOG.f32 LOGIC.u8\n", argv[0]);
        return 2;
    }
    size_t abytes = 0, n_logic = 0;
    float *x = read_file(argv[1], &abytes);
    unsigned char *logic = read_file(argv[2], &n_logic);
    if (!x || !logic) {
        fprintf(stderr, "cannot read %s\n", !x ? argv[1] : argv[2]);
        return 2;
    }
    size_t n = abytes / sizeof(float);
    float32_from_le(x, n);
    CHECK(abytes % sizeof(float) == 0, "%s: %zu bytes is not whole float32 samples",
          argv[1], abytes);
    CHECK(n == n_logic && n >= 2, "analog %zu samples, logic %zu samples", n, n_logic);
    if (n != n_logic || n < 2) return tu_finish("test_edges_recording");

    /* ---- logic transitions: first sample with the new value ---- */
    size_t nl = 0, bad_values = 0;
    for (size_t i = 0; i < n; i++)
        bad_values += logic[i] > 1;
    CHECK(bad_values == 0, "%zu logic samples are neither 0 nor 1", bad_values);
    for (size_t i = 1; i < n; i++)
        nl += logic[i] != logic[i - 1];
    int64_t *lidx = malloc((nl ? nl : 1) * sizeof *lidx);
    if (!lidx) return 2;
    for (size_t i = 1, k = 0; i < n; i++)
        if (logic[i] != logic[i - 1]) lidx[k++] = (int64_t)i;
    CHECK(nl > 0, "the logic probe has transitions");

    /* ---- levels the auto mode must arrive at ---- */
    tr_statelevels sl;
    tr_error err;
    tr_status s = tr_statelevels_estimate(x, n, 100, 10.0, 50.0, &sl, &err);
    CHECK(s == TR_OK, "state levels: %s", err.message);

    /* ---- every variant ---- */
    char why[256] = "";
    int ndev = tr_cuda_device_count(why, sizeof why);
    const variant_spec specs[] = {
        {TR_BACKEND_CPU, TR_VARIANT_REFERENCE, (size_t)-1, "cpu/reference"},
        {TR_BACKEND_CPU, TR_VARIANT_FAST, 65537, "cpu/fast"},
        {TR_BACKEND_CUDA, TR_VARIANT_FAST, 1 << 20, "cuda/fast"},
        {TR_BACKEND_CUDA, TR_VARIANT_PAPER, 1000003, "cuda/paper"},
    };
    const int nspecs = sizeof specs / sizeof specs[0];
    edge_vec res[sizeof specs / sizeof specs[0]];
    memset(res, 0, sizeof res);
    char ran[256] = "";
    for (int v = 0; v < nspecs; v++) {
        if (specs[v].backend == TR_BACKEND_CUDA && ndev <= 0) {
            printf("%s: skipped (%s)\n", specs[v].name, why[0] ? why : "no CUDA device");
            continue;
        }
        float lv[3];
        int rc = run_variant(&specs[v], x, n, &res[v], lv);
        CHECK(rc == 0, "%s ran", specs[v].name);
        if (rc) continue;
        CHECK(lv[0] == sl.low && lv[1] == sl.mid && lv[2] == sl.high,
              "%s: auto levels %.9g/%.9g/%.9g, estimate %.9g/%.9g/%.9g", specs[v].name,
              lv[0], lv[1], lv[2], sl.low, sl.mid, sl.high);
        if (v > 0) {
            /* (a) bit-identical to the reference */
            int same = res[v].n == res[0].n &&
                       (res[0].n == 0 ||
                        memcmp(res[v].v, res[0].v, res[0].n * sizeof(tr_edge)) == 0);
            if (!same) {
                size_t k = 0, m = res[v].n < res[0].n ? res[v].n : res[0].n;
                while (k < m && memcmp(&res[v].v[k], &res[0].v[k], sizeof(tr_edge)) == 0)
                    k++;
                fprintf(stderr,
                        "%s: %zu transitions vs reference %zu; first difference at "
                        "#%zu\n",
                        specs[v].name, res[v].n, res[0].n, k);
            }
            CHECK(same, "%s identical to cpu/reference", specs[v].name);
        }
        strcat(ran, ran[0] ? " " : "");
        strcat(ran, specs[v].name);
    }

    /* ---- (b) against the logic probe ---- */
    const edge_vec *e = &res[0];
    size_t na = e->n, nrise = 0, outside = 0, wrong_pol = 0;
    double lag_min[2] = {INFINITY, INFINITY}, lag_max[2] = {-INFINITY, -INFINITY};
    CHECK(na == nl, "analog %zu transitions, logic %zu", na, nl);
    for (size_t k = 0; k < na; k++)
        nrise += e->v[k].polarity > 0;
    for (size_t k = 0; k < na && k < nl; k++) {
        int pol = logic[lidx[k]] ? +1 : -1;
        const tr_edge *t = &e->v[k];
        double lag = t->time - (double)lidx[k];
        int r = t->polarity > 0;
        if (t->polarity != pol) {
            if (wrong_pol++ < 5)
                fprintf(stderr, "transition #%zu: polarity %d, logic %d at %lld\n", k,
                        t->polarity, pol, (long long)lidx[k]);
            continue;
        }
        if (lag < lag_min[r]) lag_min[r] = lag;
        if (lag > lag_max[r]) lag_max[r] = lag;
        if (!(fabs(lag - LAG_NOMINAL) <= LAG_TOL)) { /* NaN time fails too */
            if (outside++ < 5)
                fprintf(stderr,
                        "transition #%zu at %.3f: %.3f samples after the logic "
                        "transition at %lld (allowed %.1f..%.1f)\n",
                        k, t->time, lag, (long long)lidx[k], LAG_NOMINAL - LAG_TOL,
                        LAG_NOMINAL + LAG_TOL);
        }
    }
    CHECK(wrong_pol == 0, "%zu transitions with the wrong polarity", wrong_pol);
    CHECK(outside == 0, "%zu transitions outside the lag window", outside);

    printf("edges_recording: %zu samples, levels %.4f/%.4f/%.4f, %zu transitions "
           "(%zu rising), identical in: %s; logic %zu transitions, lag rising "
           "%.2f..%.2f falling %.2f..%.2f samples (allowed %.0f..%.0f)\n",
           n, sl.low, sl.mid, sl.high, na, nrise, ran[0] ? ran : "none", nl, lag_min[1],
           lag_max[1], lag_min[0], lag_max[0], LAG_NOMINAL - LAG_TOL,
           LAG_NOMINAL + LAG_TOL);

    for (int v = 0; v < nspecs; v++)
        free(res[v].v);
    free(lidx);
    free(logic);
    free(x);
    return tu_finish("test_edges_recording");
}
