/*
 * The first statistics window and short streams (norm.first_own, the
 * default): a burst in the first window of a short recording (4,000 samples,
 * shorter than the default 16,384-sample window) and of a long stream is
 * found with the default settings, by the reference and the CPU FAST
 * variant, for every chunking (chunk size 1 included); the warnings say what
 * was done (short stream, stream shorter than L_end, a channel without
 * statistics); first_own = 0 keeps the former warm-up (latency L_end - 1, no
 * candidates from window 0).
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include "common/test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Noise of mean 3 and sigma 2 (the warm-up values 0 and 1 would be far off),
 * a rectangular burst of S/N snr over its width at [at, at + w) of channel c. */
static float *series(tu_rng *r, size_t n, uint32_t C, uint32_t c, size_t at, uint32_t w,
                     double snr)
{
    float *x = malloc(n * C * sizeof *x);
    for (size_t i = 0; i < n * C; i++)
        x[i] = (float)(3.0 + 2.0 * tu_gauss(r));
    for (uint32_t j = 0; j < w; j++)
        x[(at + j) * C + c] += (float)(2.0 * snr / sqrt((double)w));
    return x;
}

typedef struct {
    tr_candidate ev[64];
    size_t n;
    unsigned warn;
    char msg[512];
    float *y;     /* every output, (n + lat) * C */
    uint32_t lat; /* latency of the search */
} result_t;

/* Search x (n samples) in calls of at most `chunk` samples (0: one call,
 * random sizes when > 1) and cluster the outputs at threshold 6. */
static int search(const tr_boxcar_config *cfg, const float *x, size_t n, size_t chunk,
                  tu_rng *r, result_t *res)
{
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return 0;
    const uint32_t C = cfg->nchan, lat = tr_boxcar_latency(q);
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = C;
    cc.threshold = 6.0f;
    tr_candidates *cand = tr_candidates_create(&cc, &err);
    CHECK(cand != NULL, "candidates: %s", err.message);
    res->lat = lat;
    res->y = malloc((n + lat) * C * sizeof(float));
    int32_t *w = malloc((n + lat) * C * sizeof(int32_t));
    res->n = 0;
    size_t done = 0;
    while (done < n) {
        size_t m = n - done;
        if (chunk == 1) m = 1;
        if (chunk > 1) m = (size_t)tu_range(r, 1, (long)chunk);
        if (m > n - done) m = n - done;
        CHECK(tr_boxcar_process(q, x + done * C, m, res->y + done * C, w + done * C) ==
                  TR_OK,
              "process: %s", tr_boxcar_last_error(q));
        done += m;
    }
    CHECK(tr_boxcar_warnings(q) == 0 || n >= tr_boxcar_norm_window(tr_boxcar_get_norm(q)),
          "no end-of-stream warning before the flush");
    CHECK(tr_boxcar_flush(q, res->y + n * C, w + n * C) == TR_OK, "flush: %s",
          tr_boxcar_last_error(q));
    /* positions >= 0 only, through the warm-up masking of the core */
    CHECK(tr_boxcar_candidates_process(cand, q, 0, res->y + (size_t)lat * C,
                                       w + (size_t)lat * C, n) == TR_OK,
          "candidates");
    CHECK(tr_candidates_flush(cand) == TR_OK, "candidates flush");
    res->n = tr_candidates_read(cand, res->ev, 64);
    res->warn = tr_boxcar_warnings(q);
    snprintf(res->msg, sizeof res->msg, "%s", tr_boxcar_warning(q));
    free(w);
    tr_candidates_destroy(cand);
    tr_boxcar_destroy(q);
    return 1;
}

/* The burst is the one event, at its place, with about its S/N. */
static void check_found(const result_t *res, const char *what, size_t at, uint32_t w,
                        double snr)
{
    CHECK(res->n == 1, "%s: %zu events, expected the burst", what, res->n);
    if (res->n < 1) return;
    const tr_candidate *e = &res->ev[0];
    CHECK(e->start <= (int64_t)(at + w) && e->start + e->width >= (int64_t)at,
          "%s: event at %lld width %u, burst at %zu width %u", what, (long long)e->start,
          e->width, at, w);
    CHECK(fabs(e->snr - snr) < 0.25 * snr, "%s: S/N %.2f, burst %.1f", what, e->snr, snr);
}

/* A burst in the first 1,000 samples of a 4,000-sample series, default
 * settings (window 16,384): held to the flush, normalised by the statistics
 * of the 4,000 samples, found; the same bits for every chunking. */
static void test_short_recording(void)
{
    tu_rng r = {404};
    const size_t n = 4000, at = 600;
    const uint32_t w = 16;
    float *x = series(&r, n, 1, 0, at, w, 15.0);
    for (int v = 0; v < 2; v++) {
        tr_boxcar_config cfg = tr_boxcar_config_default();
        cfg.backend = TR_BACKEND_CPU;
        cfg.variant = v ? TR_VARIANT_FAST : TR_VARIANT_REFERENCE;
        result_t a, b, c;
        const char *name = v ? "fast" : "reference";
        if (!search(&cfg, x, n, 0, &r, &a) || !search(&cfg, x, n, 1, &r, &b) ||
            !search(&cfg, x, n, 777, &r, &c))
            continue;
        check_found(&a, name, at, w, 15.0);
        const uint32_t lat = a.lat;
        CHECK(lat >= 16384 + 1023, "%s: latency %u holds the window", name, lat);
        CHECK(!memcmp(a.y, b.y, (n + lat) * sizeof(float)) &&
                  !memcmp(a.y, c.y, (n + lat) * sizeof(float)),
              "%s: outputs depend on the chunking", name);
        CHECK(b.n == a.n && c.n == a.n, "%s: events depend on the chunking", name);
        CHECK(a.warn == TR_BOXCAR_WARN_SHORT_STREAM, "%s: warnings %#x (%s)", name,
              a.warn, a.msg);
        CHECK(strstr(a.msg, "4000 samples") && strstr(a.msg, "16384"),
              "%s: the warning says what was done: \"%s\"", name, a.msg);
        free(a.y);
        free(b.y);
        free(c.y);
    }
    free(x);
}

/* A burst in the first window of a long stream (3 windows, 2 channels, LEVELS
 * too): found, the same for every chunking, no warning. */
static void test_first_window_long(void)
{
    tu_rng r = {405};
    const uint32_t W = 2048, C = 2;
    const size_t n = 3 * W, at = 300;
    const uint32_t w = 40;
    float *x = series(&r, n, C, 1, at, w, 12.0);
    for (int mode = 0; mode < 2; mode++) {
        tr_boxcar_config cfg = tr_boxcar_config_default();
        cfg.backend = TR_BACKEND_CPU;
        cfg.nchan = C;
        cfg.max_width = 128;
        cfg.norm.window = W;
        cfg.norm.mode = mode ? TR_BOXCAR_NORM_LEVELS : TR_BOXCAR_NORM_WHITE;
        result_t a, b, ref;
        if (!search(&cfg, x, n, 0, &r, &a) || !search(&cfg, x, n, 1, &r, &b)) continue;
        cfg.variant = TR_VARIANT_REFERENCE;
        if (!search(&cfg, x, n, 333, &r, &ref)) continue;
        check_found(&a, mode ? "levels" : "white", at, w, 12.0);
        check_found(&ref, mode ? "levels reference" : "white reference", at, w, 12.0);
        CHECK(!memcmp(a.y, b.y, (n + a.lat) * C * sizeof(float)),
              "mode %d: outputs depend on the chunking", mode);
        CHECK(a.warn == 0 && ref.warn == 0, "mode %d: warnings %#x (%s)", mode, a.warn,
              a.msg);
        free(a.y);
        free(b.y);
        free(ref.y);
    }
    /* first_own = 0: the former warm-up, the burst is not a candidate */
    tr_boxcar_config cfg = tr_boxcar_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.nchan = C;
    cfg.max_width = 128;
    cfg.norm.window = W;
    cfg.norm.first_own = 0;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&cfg, &err);
    CHECK(q && tr_boxcar_latency(q) == tr_boxcar_lend(q) - 1,
          "first_own 0: latency L_end - 1");
    tr_boxcar_destroy(q);
    result_t o;
    if (search(&cfg, x, n, 0, &r, &o)) {
        CHECK(o.n == 0, "first_own 0: %zu events from the first window", o.n);
        free(o.y);
    }
    free(x);
}

/* Warnings: a stream shorter than L_end; a channel whose first window is
 * constant; an empty stream; none in FIXED mode on a long stream. */
static void test_warnings(void)
{
    tu_rng r = {406};
    tr_boxcar_config cfg = tr_boxcar_config_default();
    cfg.backend = TR_BACKEND_CPU;
    result_t a;
    float *x = series(&r, 500, 1, 0, 100, 8, 20.0);
    if (search(&cfg, x, 500, 64, &r, &a)) {
        CHECK(a.warn == (TR_BOXCAR_WARN_SHORT_STREAM | TR_BOXCAR_WARN_NARROW),
              "500 samples: warnings %#x (%s)", a.warn, a.msg);
        CHECK(strstr(a.msg, "500 samples") && strstr(a.msg, "widest boxcar"),
              "500 samples: \"%s\"", a.msg);
        check_found(&a, "500 samples", 100, 8, 20.0);
        free(a.y);
    }
    /* channel 0 constant: no statistics, masked; channel 1 searched */
    cfg.nchan = 2;
    float *x2 = series(&r, 3000, 2, 1, 700, 8, 15.0);
    for (size_t i = 0; i < 3000; i++)
        x2[i * 2] = 5.0f;
    if (search(&cfg, x2, 3000, 0, &r, &a)) {
        CHECK(a.warn == (TR_BOXCAR_WARN_SHORT_STREAM | TR_BOXCAR_WARN_UNMEASURED),
              "constant channel: warnings %#x (%s)", a.warn, a.msg);
        CHECK(strstr(a.msg, "1 of 2 channel(s)") != NULL, "constant channel: \"%s\"",
              a.msg);
        check_found(&a, "constant channel", 700, 8, 15.0);
        free(a.y);
    }
    /* empty stream */
    cfg.nchan = 1;
    if (search(&cfg, x, 0, 0, &r, &a)) {
        CHECK(a.warn == TR_BOXCAR_WARN_NARROW && a.n == 0, "empty: warnings %#x (%s)",
              a.warn, a.msg);
        free(a.y);
    }
    /* FIXED: nothing held, nothing to warn about on a long stream */
    cfg.norm.mode = TR_BOXCAR_NORM_FIXED;
    cfg.norm.fixed_mean = 3.0;
    cfg.norm.fixed_sigma = 2.0;
    if (search(&cfg, x2, 1500, 0, &r, &a)) {
        CHECK(a.warn == 0, "fixed: warnings %#x (%s)", a.warn, a.msg);
        free(a.y);
    }
    /* reset clears them */
    cfg = tr_boxcar_config_default();
    cfg.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&cfg, &err);
    const uint32_t lat = tr_boxcar_latency(q);
    float *y = malloc((500 + lat) * sizeof *y);
    tr_boxcar_process(q, x, 500, y, NULL);
    tr_boxcar_flush(q, y + 500, NULL);
    CHECK(tr_boxcar_warnings(q) != 0, "warned");
    tr_boxcar_reset(q);
    CHECK(tr_boxcar_warnings(q) == 0 && tr_boxcar_warning(q)[0] == '\0',
          "reset clears the warnings");
    free(y);
    tr_boxcar_destroy(q);
    free(x);
    free(x2);
}

int main(void)
{
    test_short_recording();
    test_first_window_long();
    test_warnings();
    return tu_finish("test_boxcar_short");
}
