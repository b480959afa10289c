/*
 * tr_boxcar_candidates_process against the masking written out value by
 * value (the S/N of a channel at -inf wherever tr_boxcar_norm_ready says 0,
 * then tr_candidates_process), for a WHITE search whose channels warm up at
 * different times (constant data counts as not measured) with pulses inside
 * and after the warm-up, cut into calls of several sizes, and for FIXED
 * normalisation (nothing masked). The warm-up pulses must be masked: the
 * unmasked clustering finds more events. tr_boxcar_ready_piece (the parts of
 * the device clustering) is checked on every call: windows with a
 * warming-up channel alone with their flags, maximal runs of ready windows
 * without.
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "boxcar/candidates_internal.h"
#include "common/test_util.h"

enum { C = 3, N = 6000, W = 512, MAXEV = 4096 };

typedef struct {
    tr_candidate ev[MAXEV];
    size_t n;
} events_t;

static void read_all(tr_candidates *q, events_t *e)
{
    for (;;) {
        const size_t room = MAXEV - e->n;
        const size_t got = tr_candidates_read(q, e->ev + e->n, room);
        e->n += got;
        if (got == 0 || e->n == MAXEV) return;
    }
}

static int same(const tr_candidate *a, const tr_candidate *b)
{
    return a->start == b->start && a->peak == b->peak && a->first == b->first &&
           a->end == b->end && a->members == b->members && a->snr == b->snr &&
           a->width == b->width && a->channel == b->channel && a->chan_lo == b->chan_lo &&
           a->chan_hi == b->chan_hi && a->width_lo == b->width_lo &&
           a->width_hi == b->width_hi && a->truncated == b->truncated;
}

/* Noise of sigma 3 (the warm-up assumes 1), channel 0 constant for its first
 * three windows, pulses in the first window and later. */
static void make_input(float *x)
{
    tu_rng r = {7};
    for (size_t i = 0; i < (size_t)N * C; i++)
        x[i] = (float)(3.0 * tu_gauss(&r));
    for (size_t i = 0; i < 3 * W; i++)
        x[i * C] = 0.0f;
    static const size_t at[] = {100, 300, 1700, 2500, 4100, 5200};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++)
        for (size_t i = at[k]; i < at[k] + 16; i++)
            for (uint32_t c = 0; c < C; c++)
                x[i * C + c] += 12.0f;
}

/* The parts tr_boxcar_ready_piece cuts positions [p, p + n) into. */
static void check_pieces(const tr_boxcar *s, uint64_t p, size_t n)
{
    const uint32_t Wn = tr_boxcar_norm_window(tr_boxcar_get_norm(s));
    uint8_t skip[C];
    for (size_t k = 0; k < n;) {
        const uint8_t *flags = NULL;
        const size_t len = tr_boxcar_ready_piece(s, p + k, n - k, skip, &flags);
        CHECK(len >= 1 && len <= n - k, "ready piece at %llu: length %zu of %zu",
              (unsigned long long)(p + k), len, n - k);
        if (len < 1 || len > n - k) return;
        const uint64_t a = p + k, b = p + k + len - 1;
        if (flags) {
            int some = 0;
            for (uint32_t c = 0; c < C; c++) {
                CHECK(flags[c] == !tr_boxcar_ready(s, a, c),
                      "ready piece at %llu: flag of channel %u", (unsigned long long)a,
                      c);
                some |= flags[c];
            }
            CHECK(some && Wn > 0 && a / Wn == b / Wn,
                  "ready piece at %llu: a flagged part is one window with a warming-up "
                  "channel",
                  (unsigned long long)a);
        } else {
            int all = 1;
            for (uint64_t q = a; q <= b && Wn > 0; q += Wn - q % Wn)
                for (uint32_t c = 0; c < C; c++)
                    all &= tr_boxcar_ready(s, q, c) != 0;
            int next_ready = 1; /* the window after the run, if the call has it */
            if (k + len < n)
                for (uint32_t c = 0; c < C; c++)
                    next_ready &= tr_boxcar_ready(s, b + 1, c) != 0;
            CHECK(all && (k + len == n || !next_ready),
                  "ready piece at %llu, %zu positions: not a maximal ready run",
                  (unsigned long long)a, len);
        }
        k += len;
    }
}

/* One stream in calls of `chunk` samples: the tested function into a, the
 * value-by-value masking into b, no masking into raw. */
static void run(tr_boxcar_norm_mode mode, size_t chunk, events_t *a, events_t *b,
                events_t *raw)
{
    tr_boxcar_config bc = tr_boxcar_config_default();
    bc.nchan = C;
    bc.max_width = 32;
    bc.backend = TR_BACKEND_CPU;
    bc.norm.mode = mode;
    bc.norm.window = W;
    bc.norm.history = 2;
    bc.norm.fixed_mean = 0.0;
    bc.norm.fixed_sigma = 3.0;
    tr_error err;
    tr_boxcar *s = tr_boxcar_create(&bc, &err);
    CHECK(s != NULL, "boxcar: %s", err.message);
    if (!s) return;
    const uint32_t lat = tr_boxcar_latency(s);
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = C;
    cc.threshold = 7.0f;
    tr_candidates *qa = tr_candidates_create(&cc, &err);
    tr_candidates *qb = tr_candidates_create(&cc, &err);
    tr_candidates *qr = tr_candidates_create(&cc, &err);
    float *x = malloc((size_t)N * C * sizeof *x);
    float *y = malloc((size_t)(N + lat) * C * sizeof *y);
    int32_t *w = malloc((size_t)(N + lat) * C * sizeof *w);
    float *m = malloc((size_t)(N + lat) * C * sizeof *m);
    make_input(x);
    a->n = b->n = raw->n = 0;
    for (size_t done = 0; done <= N; done += chunk) {
        const uint64_t pos_in = tr_boxcar_position(s);
        size_t n;
        if (done < N) {
            n = N - done < chunk ? N - done : chunk;
            CHECK(tr_boxcar_process(s, x + done * C, n, y, w) == TR_OK, "process");
        } else {
            n = lat;
            CHECK(tr_boxcar_flush(s, y, w) == TR_OK, "flush");
        }
        /* as a stream block: only search positions >= 0 */
        const size_t skip = pos_in >= lat ? 0 : (lat - pos_in < n ? lat - pos_in : n);
        const size_t k = n - skip;
        const uint64_t p0 = pos_in + skip - lat;
        const float *ys = y + skip * C;
        const int32_t *ws = w + skip * C;
        CHECK(tr_boxcar_candidates_process(qa, s, p0, ys, ws, k) == TR_OK, "tested");
        check_pieces(s, p0, k);
        const tr_boxcar_norm *norm = tr_boxcar_get_norm(s);
        for (size_t j = 0; j < k; j++)
            for (uint32_t c = 0; c < C; c++)
                m[j * C + c] =
                    tr_boxcar_norm_ready(norm, p0 + j, c) ? ys[j * C + c] : -INFINITY;
        CHECK(tr_candidates_process(qb, m, ws, k) == TR_OK, "masked");
        CHECK(tr_candidates_process(qr, ys, ws, k) == TR_OK, "raw");
        read_all(qa, a);
        read_all(qb, b);
        read_all(qr, raw);
        if (done == N) break;
    }
    tr_candidates_flush(qa);
    tr_candidates_flush(qb);
    tr_candidates_flush(qr);
    read_all(qa, a);
    read_all(qb, b);
    read_all(qr, raw);
    free(x);
    free(y);
    free(w);
    free(m);
    tr_candidates_destroy(qa);
    tr_candidates_destroy(qb);
    tr_candidates_destroy(qr);
    tr_boxcar_destroy(s);
}

static void check_same(const events_t *a, const events_t *b, const char *what,
                       size_t chunk)
{
    CHECK(a->n == b->n, "%s chunk %zu: %zu events, expected %zu", what, chunk, a->n,
          b->n);
    const size_t n = a->n < b->n ? a->n : b->n;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += !same(&a->ev[i], &b->ev[i]);
    CHECK(bad == 0, "%s chunk %zu: %zu events differ", what, chunk, bad);
}

int main(void)
{
    static events_t a, b, raw;
    static const size_t chunks[] = {1, 7, 300, W, 4096, N};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
        run(TR_BOXCAR_NORM_WHITE, chunks[i], &a, &b, &raw);
        check_same(&a, &b, "white", chunks[i]);
        CHECK(a.n >= 4, "white chunk %zu: the later pulses are found (%zu events)",
              chunks[i], a.n);
        CHECK(raw.n > a.n, "white chunk %zu: warm-up masked (%zu raw events, %zu)",
              chunks[i], raw.n, a.n);
        run(TR_BOXCAR_NORM_FIXED, chunks[i], &a, &b, &raw);
        check_same(&a, &b, "fixed", chunks[i]);
        check_same(&a, &raw, "fixed unmasked", chunks[i]);
        CHECK(a.n >= 6, "fixed chunk %zu: every pulse is found (%zu events)", chunks[i],
              a.n);
    }
    return tu_finish("test_boxcar_candidates");
}
