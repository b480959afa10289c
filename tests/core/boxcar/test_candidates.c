/*
 * Candidates: streaming friends-of-friends against a brute-force clustering
 * of all peaks at once (O(peaks^2) union-find with the same friendship
 * rules), emission order independent of chunking (chunk size 1 included),
 * events emitted once they cannot grow, max_span truncation, NaN, flush,
 * empty input, invalid configurations, a search output end to end, and the
 * scan kernels (generic, AVX2) against the per-position loop call by call.
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include "boxcar/candidates_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/test_util.h"

typedef struct {
    int64_t p;
    uint32_t c, w;
    float s;
} peak_t;

static int64_t P_END(const peak_t *a)
{
    return a->p + a->w;
}

static int friends(const peak_t *a, const peak_t *b, const tr_candidates_config *cfg)
{
    const peak_t *x = a->p <= b->p ? a : b, *y = a->p <= b->p ? b : a;
    if (y->p - P_END(x) > (int64_t)cfg->link_time) return 0;
    const uint32_t dc = a->c > b->c ? a->c - b->c : b->c - a->c;
    if (dc > cfg->link_chan) return 0;
    if (cfg->link_width != 0.0) {
        const uint32_t lo = a->w < b->w ? a->w : b->w, hi = a->w < b->w ? b->w : a->w;
        if ((double)hi > cfg->link_width * lo) return 0;
    }
    return 1;
}

static size_t uf_find(size_t *par, size_t i)
{
    while (par[i] != i)
        i = par[i] = par[par[i]];
    return i;
}

static int cmp_ev(const void *pa, const void *pb)
{
    const tr_candidate *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    if (a->channel != b->channel) return a->channel < b->channel ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return 0;
}

/* Brute force events of all peaks (in stream order). */
static size_t brute(const peak_t *pk, size_t n, const tr_candidates_config *cfg,
                    tr_candidate *out)
{
    size_t *par = malloc((n + 1) * sizeof *par);
    for (size_t i = 0; i < n; i++)
        par[i] = i;
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (friends(&pk[i], &pk[j], cfg)) {
                const size_t a = uf_find(par, i), b = uf_find(par, j);
                if (a != b) par[b] = a;
            }
    size_t ne = 0;
    size_t *slot = malloc((n + 1) * sizeof *slot);
    for (size_t i = 0; i < n; i++)
        slot[i] = (size_t)-1;
    for (size_t i = 0; i < n; i++) { /* stream order: the first best stays */
        const size_t r = uf_find(par, i);
        const peak_t *x = &pk[i];
        if (slot[r] == (size_t)-1) {
            slot[r] = ne;
            tr_candidate *e = &out[ne++];
            memset(e, 0, sizeof *e);
            e->start = x->p;
            e->peak = x->p + (x->w - 1) / 2;
            e->first = x->p;
            e->end = P_END(x);
            e->members = 1;
            e->snr = x->s;
            e->width = e->width_lo = e->width_hi = x->w;
            e->channel = e->chan_lo = e->chan_hi = x->c;
            continue;
        }
        tr_candidate *e = &out[slot[r]];
        if (x->s > e->snr) {
            e->snr = x->s;
            e->start = x->p;
            e->peak = x->p + (x->w - 1) / 2;
            e->width = x->w;
            e->channel = x->c;
        }
        if (x->p < e->first) e->first = x->p;
        if (P_END(x) > e->end) e->end = P_END(x);
        e->members++;
        if (x->c < e->chan_lo) e->chan_lo = x->c;
        if (x->c > e->chan_hi) e->chan_hi = x->c;
        if (x->w < e->width_lo) e->width_lo = x->w;
        if (x->w > e->width_hi) e->width_hi = x->w;
    }
    free(par);
    free(slot);
    return ne;
}

static int same_event(const tr_candidate *a, const tr_candidate *b)
{
    return a->start == b->start && a->peak == b->peak && a->first == b->first &&
           a->end == b->end && a->members == b->members && a->snr == b->snr &&
           a->width == b->width && a->channel == b->channel && a->chan_lo == b->chan_lo &&
           a->chan_hi == b->chan_hi && a->width_lo == b->width_lo &&
           a->width_hi == b->width_hi && a->truncated == b->truncated;
}

/* Stream snr/width through q in chunks; events in emission order into ev.
 * Checks that every event read after a call could not grow any more. */
static size_t stream(tr_candidates *q, const float *snr, const int32_t *wd, size_t n,
                     uint32_t C, tu_rng *r, long cmax, tr_candidate *ev, size_t cap,
                     uint32_t link_time, int *late)
{
    size_t k = 0, ne = 0;
    while (k < n) {
        size_t m = cmax ? (size_t)tu_range(r, 1, cmax) : n - k;
        if (m > n - k) m = n - k;
        CHECK(tr_candidates_process(q, snr + k * C, wd ? wd + k * C : NULL, m) == TR_OK,
              "process");
        k += m;
        const size_t got = tr_candidates_read(q, ev + ne, cap - ne);
        for (size_t i = ne; i < ne + got; i++)
            if (!ev[i].truncated &&
                !(ev[i].end + (int64_t)link_time < tr_candidates_position(q)))
                (*late)++;
        ne += got;
    }
    tr_candidates_flush(q);
    ne += tr_candidates_read(q, ev + ne, cap - ne);
    return ne;
}

static void test_random(void)
{
    tu_rng r = {81};
    for (int it = 0; it < 60; it++) {
        /* from it 40: many channels, wide channel links, dense peaks */
        const int wide = it >= 40;
        const uint32_t C = (uint32_t)tu_range(&r, 1, wide ? 40 : 6);
        const size_t n = (size_t)tu_range(&r, 50, wide ? 300 : 1500);
        tr_candidates_config cfg = tr_candidates_config_default();
        cfg.nchan = C;
        cfg.threshold = 5.0f;
        cfg.link_time = (uint32_t)tu_range(&r, 0, 6);
        cfg.link_chan = (uint32_t)tu_range(&r, 0, wide ? 12 : 2);
        cfg.link_width = (it % 3 == 0) ? 0.0 : 1.0 + 2.0 * tu_uniform(&r);
        cfg.start_position = tu_range(&r, -50, 50);
        const double dens = 0.002 + (wide ? 0.3 : 0.05) * tu_uniform(&r);
        float *snr = malloc(n * C * sizeof *snr);
        int32_t *wd = malloc(n * C * sizeof *wd);
        peak_t *pk = malloc(n * C * sizeof *pk);
        size_t np = 0;
        for (size_t k = 0; k < n; k++)
            for (uint32_t c = 0; c < C; c++) {
                const int hit = tu_uniform(&r) < dens;
                /* quantised S/N: ties happen */
                float s = hit ? 5.0f + (float)tu_range(&r, 0, 8) * 0.5f
                              : (float)(3.0 * tu_uniform(&r));
                if (!hit && tu_uniform(&r) < 0.01) s = NAN;
                const int32_t w = (int32_t)tu_range(&r, 0, 20); /* 0 counts as 1 */
                snr[k * C + c] = s;
                wd[k * C + c] = w;
                if (s >= 5.0f) {
                    pk[np].p = cfg.start_position + (int64_t)k;
                    pk[np].c = c;
                    pk[np].w = w < 1 ? 1 : (uint32_t)w;
                    pk[np].s = s;
                    np++;
                }
            }
        tr_candidate *ref = malloc((np + 1) * sizeof *ref);
        const size_t nref = brute(pk, np, &cfg, ref);
        qsort(ref, nref, sizeof *ref, cmp_ev);
        tr_error err;
        tr_candidates *q = tr_candidates_create(&cfg, &err);
        CHECK(q != NULL, "create: %s", err.message);
        if (!q) return;
        tr_candidate *ev0 = malloc((np + 1) * sizeof *ev0);
        tr_candidate *ev1 = malloc((np + 1) * sizeof *ev1);
        int late = 0;
        const size_t n0 =
            stream(q, snr, wd, n, C, &r, 0, ev0, np + 1, cfg.link_time, &late);
        CHECK(tr_candidates_peaks(q) == np, "peaks %llu vs %zu",
              (unsigned long long)tr_candidates_peaks(q), np);
        /* the same sequence for any chunking */
        for (long cmax = 1; cmax <= 400; cmax *= 20) {
            tr_candidates_reset(q);
            const size_t n1 =
                stream(q, snr, wd, n, C, &r, cmax, ev1, np + 1, cfg.link_time, &late);
            int same = n1 == n0;
            for (size_t i = 0; same && i < n0; i++)
                same = same_event(&ev0[i], &ev1[i]);
            CHECK(same, "it %d chunks <= %ld: %zu vs %zu events or order differs", it,
                  cmax, n1, n0);
        }
        CHECK(late == 0, "it %d: %d events read before they were closed", it, late);
        /* the same set as brute force */
        qsort(ev0, n0, sizeof *ev0, cmp_ev);
        int same = n0 == nref;
        size_t bad = 0;
        for (size_t i = 0; same && i < n0; i++)
            if (!same_event(&ev0[i], &ref[i])) {
                same = 0;
                bad = i;
            }
        CHECK(same,
              "it %d (C %u lt %u lc %u lw %g): %zu events vs brute %zu (first diff %zu)",
              it, C, cfg.link_time, cfg.link_chan, cfg.link_width, n0, nref, bad);
        uint64_t members = 0;
        for (size_t i = 0; i < n0; i++)
            members += ev0[i].members;
        CHECK(members == np, "members add up");
        tr_candidates_destroy(q);
        free(snr);
        free(wd);
        free(pk);
        free(ref);
        free(ev0);
        free(ev1);
    }
}

static void test_rules(void)
{
    tr_candidates_config cfg = tr_candidates_config_default();
    cfg.nchan = 3;
    cfg.threshold = 6.0f;
    cfg.link_chan = 1;
    tr_error err;
    tr_candidates *q = tr_candidates_create(&cfg, &err);
    /* channel 0 and 2 peaks overlap in time but are 2 channels apart: two
     * events; a peak in channel 1 links them into one */
    float s[3 * 10] = {0};
    int32_t w[3 * 10] = {0};
    s[2 * 3 + 0] = 7.0f, w[2 * 3 + 0] = 4;
    s[3 * 3 + 2] = 9.0f, w[3 * 3 + 2] = 2;
    tr_candidates_process(q, s, w, 10);
    tr_candidates_flush(q);
    tr_candidate ev[4];
    CHECK(tr_candidates_read(q, ev, 4) == 2, "two events");
    s[4 * 3 + 1] = 6.5f, w[4 * 3 + 1] = 1;
    tr_candidates_reset(q);
    tr_candidates_process(q, s, w, 10);
    tr_candidates_flush(q);
    size_t n = tr_candidates_read(q, ev, 4);
    CHECK(n == 1 && ev[0].members == 3 && ev[0].snr == 9.0f && ev[0].channel == 2 &&
              ev[0].start == 3 && ev[0].width == 2 && ev[0].peak == 3 &&
              ev[0].first == 2 && ev[0].end == 6 && ev[0].chan_lo == 0 &&
              ev[0].chan_hi == 2 && ev[0].width_lo == 1 && ev[0].width_hi == 4,
          "linked event: n %zu members %llu snr %g", n,
          (unsigned long long)(n ? ev[0].members : 0), n ? ev[0].snr : 0.0f);
    /* emitted as soon as it cannot grow: end 6, link_time 0: closed at 7 */
    tr_candidates_reset(q);
    tr_candidates_process(q, s, w, 6);
    CHECK(tr_candidates_pending(q) == 0 && tr_candidates_open(q) == 1, "still open at 6");
    tr_candidates_process(q, s + 18, w + 18, 1);
    CHECK(tr_candidates_pending(q) == 1 && tr_candidates_open(q) == 0, "closed at 7");
    tr_candidates_destroy(q);

    /* max_span truncation on a continuous run of peaks */
    cfg = tr_candidates_config_default();
    cfg.max_span = 100;
    q = tr_candidates_create(&cfg, &err);
    float *run = malloc(1000 * sizeof *run);
    for (int i = 0; i < 1000; i++)
        run[i] = 10.0f;
    tr_candidates_process(q, run, NULL, 1000);
    tr_candidates_flush(q);
    tr_candidate evs[32];
    n = tr_candidates_read(q, evs, 32);
    int ok = n == 10;
    for (size_t i = 0; i + 1 < n; i++)
        ok &= evs[i].truncated == 1 && evs[i].members == 101 &&
              evs[i].first == 101 * (int64_t)i;
    CHECK(ok && !evs[n - 1].truncated, "truncated events: %zu", n);
    free(run);
    tr_candidates_destroy(q);

    /* closed position, horizon, threshold changes */
    cfg = tr_candidates_config_default();
    cfg.max_span = 50;
    q = tr_candidates_create(&cfg, &err);
    CHECK(tr_candidates_horizon(q) == 51, "horizon");
    float v[40];
    for (int i = 0; i < 40; i++)
        v[i] = (i >= 10 && i < 20) || i >= 30 ? 7.0f : 0.0f;
    tr_candidates_process(q, v, NULL, 25);
    CHECK(tr_candidates_closed(q) == 25 && tr_candidates_pending(q) == 1, "closed %lld",
          (long long)tr_candidates_closed(q));
    tr_candidates_process(q, v + 25, NULL, 7);
    CHECK(tr_candidates_closed(q) == 30 && tr_candidates_open(q) == 1, "open at 30: %lld",
          (long long)tr_candidates_closed(q));
    CHECK(tr_candidates_set_threshold(q, 8.0f) == TR_OK &&
              tr_candidates_threshold(q) == 8.0f,
          "set threshold");
    CHECK(tr_candidates_set_threshold(q, INFINITY) == TR_ERR_INVALID, "threshold Inf");
    tr_candidates_process(q, v + 32, NULL, 8);
    tr_candidates_flush(q);
    CHECK(tr_candidates_peaks(q) == 12 && tr_candidates_pending(q) == 2,
          "peaks after the threshold change: %llu",
          (unsigned long long)tr_candidates_peaks(q));
    tr_candidates_destroy(q);
    cfg = tr_candidates_config_default();
    q = tr_candidates_create(&cfg, &err);
    CHECK(tr_candidates_horizon(q) == UINT64_MAX, "horizon without max_span");
    tr_candidates_destroy(q);

    /* empty input, NULL */
    q = tr_candidates_create(&cfg, &err);
    CHECK(tr_candidates_process(q, NULL, NULL, 0) == TR_OK, "empty");
    CHECK(tr_candidates_process(q, NULL, NULL, 5) == TR_ERR_INVALID &&
              strlen(tr_candidates_last_error(q)) > 0,
          "NULL snr");
    CHECK(tr_candidates_flush(q) == TR_OK && tr_candidates_pending(q) == 0,
          "flush empty");
    tr_candidates_destroy(q);
}

static void test_invalid(void)
{
    tr_error err;
    CHECK(tr_candidates_create(NULL, &err) == NULL && err.code == TR_ERR_INVALID, "NULL");
    tr_candidates_config c = tr_candidates_config_default();
    c.nchan = 0;
    CHECK(tr_candidates_create(&c, &err) == NULL &&
              strncmp(err.message, "candidates: ", 12) == 0,
          "nchan 0");
    c = tr_candidates_config_default();
    c.threshold = NAN;
    CHECK(tr_candidates_create(&c, &err) == NULL, "threshold NaN");
    c = tr_candidates_config_default();
    c.link_width = 0.5;
    CHECK(tr_candidates_create(&c, &err) == NULL, "link_width 0.5");
    c = tr_candidates_config_default();
    c.link_time = 1u << 31;
    CHECK(tr_candidates_create(&c, &err) == NULL, "link_time huge");
    tr_candidates_destroy(NULL);
    CHECK(tr_candidates_reset(NULL) == TR_ERR_INVALID, "reset NULL");
}

/* End to end: a rectangular pulse in white noise through the search. */
static void test_search(void)
{
    tu_rng r = {99};
    const uint32_t C = 4, n = 20000, S = 40;
    const int64_t t0 = 12345;
    tr_boxcar_config bc = tr_boxcar_config_default();
    bc.nchan = C;
    bc.max_width = 256;
    bc.backend = TR_BACKEND_CPU;
    bc.norm.mode = TR_BOXCAR_NORM_FIXED;
    tr_error err;
    tr_boxcar *b = tr_boxcar_create(&bc, &err);
    CHECK(b != NULL, "boxcar: %s", err.message);
    if (!b) return;
    const uint32_t lat = tr_boxcar_latency(b);
    float *x = malloc((size_t)(n + lat) * C * sizeof *x);
    float *y = malloc((size_t)(n + lat) * C * sizeof *y);
    int32_t *w = malloc((size_t)(n + lat) * C * sizeof *w);
    for (size_t i = 0; i < (size_t)n * C; i++)
        x[i] = (float)tu_gauss(&r);
    /* S/N 20 pulse in channels 1 and 2 */
    for (int64_t i = t0; i < t0 + S; i++)
        for (uint32_t c = 1; c <= 2; c++)
            x[i * C + c] += (float)(20.0 / sqrt((double)S));
    tr_boxcar_process(b, x, n, y, w);
    tr_boxcar_flush(b, y + (size_t)n * C, w + (size_t)n * C);
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = C;
    cc.threshold = 8.0f;
    cc.start_position = -(int64_t)lat;
    tr_candidates *q = tr_candidates_create(&cc, &err);
    tr_candidates_process(q, y, w, n + lat);
    tr_candidates_flush(q);
    tr_candidate ev[16];
    const size_t ne = tr_candidates_read(q, ev, 16);
    CHECK(ne == 1, "one event, got %zu", ne);
    if (ne >= 1)
        CHECK(llabs(ev[0].start - t0) <= 4 && abs((int)ev[0].width - (int)S) <= 8 &&
                  ev[0].snr > 15.0f && ev[0].chan_lo == 1 && ev[0].chan_hi == 2 &&
                  ev[0].members > 10,
              "event start %lld width %u snr %g chans %u..%u members %llu",
              (long long)ev[0].start, ev[0].width, ev[0].snr, ev[0].chan_lo,
              ev[0].chan_hi, (unsigned long long)ev[0].members);
    tr_candidates_destroy(q);
    tr_boxcar_destroy(b);
    free(x);
    free(y);
    free(w);
}

/* One stream through the selected kernel with the chunk sizes chunks[]; per
 * call the events read and the state (position, closed, open, peaks) go to
 * log. Returns the entries written. */
typedef struct {
    int64_t position, closed;
    size_t open, events;
    uint64_t peaks;
} state_t;

static size_t run_kernel(const tr_candidates_config *cfg, const float *snr,
                         const int32_t *wd, const size_t *chunks, size_t ncalls,
                         const float *thr, tr_candidate *ev, size_t cap, state_t *log)
{
    tr_error err;
    tr_candidates *q = tr_candidates_create(cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return 0;
    const uint32_t C = cfg->nchan;
    size_t k = 0, ne = 0;
    for (size_t i = 0; i < ncalls; i++) {
        if (thr) CHECK(tr_candidates_set_threshold(q, thr[i]) == TR_OK, "threshold");
        CHECK(tr_candidates_process(q, snr + k * C, wd ? wd + k * C : NULL, chunks[i]) ==
                  TR_OK,
              "process");
        k += chunks[i];
        ne += tr_candidates_read(q, ev + ne, cap - ne);
        log[i].position = tr_candidates_position(q);
        log[i].closed = tr_candidates_closed(q);
        log[i].open = tr_candidates_open(q);
        log[i].events = ne;
        log[i].peaks = tr_candidates_peaks(q);
    }
    tr_candidates_flush(q);
    ne += tr_candidates_read(q, ev + ne, cap - ne);
    log[ncalls].events = ne;
    tr_candidates_destroy(q);
    return ne;
}

static void test_kernels(void)
{
    static const char *names[] = {"generic", "avx2"};
    tu_rng r = {1234};
    int ran_avx2 = 0;
    for (int it = 0; it < 120; it++) {
        const uint32_t C = (uint32_t)tu_range(&r, 1, it % 4 == 0 ? 70 : 5);
        const size_t n = (size_t)tu_range(&r, 1, it % 5 == 0 ? 20000 : 3000);
        tr_candidates_config cfg = tr_candidates_config_default();
        cfg.nchan = C;
        cfg.threshold = 5.0f;
        cfg.link_time = (uint32_t)tu_range(&r, 0, 8);
        cfg.link_chan = (uint32_t)tu_range(&r, 0, 2);
        cfg.link_width = ((it / 3) % 3 != 2) ? 0.0 : 1.0 + 2.0 * tu_uniform(&r);
        cfg.start_position = tu_range(&r, -300, 300);
        cfg.max_span = it % 2 ? 0 : (uint64_t)tu_range(&r, 1, 200);
        /* dense, sparse and very sparse peaks; bursts of peaks */
        const int mode = it % 3;
        const double dens = mode == 0   ? 0.02 + 0.3 * tu_uniform(&r)
                            : mode == 1 ? 0.0005 + 0.005 * tu_uniform(&r)
                                        : 0.00002;
        float *snr = malloc(n * C * sizeof *snr);
        int32_t *wd = malloc(n * C * sizeof *wd);
        size_t burst = 0;
        for (size_t v = 0; v < n * C; v++) {
            if (burst == 0 && tu_uniform(&r) < dens * 0.05)
                burst = (size_t)tu_range(&r, 1, 300);
            const int hit = burst > 0 ? tu_uniform(&r) < 0.5 : tu_uniform(&r) < dens;
            if (burst) burst--;
            float s = hit ? 5.0f + (float)tu_range(&r, 0, 8) * 0.5f
                          : (float)(5.0 * tu_uniform(&r) - 0.5);
            const double u = tu_uniform(&r);
            if (u < 0.005)
                s = NAN;
            else if (u < 0.007)
                s = INFINITY;
            else if (u < 0.009)
                s = -INFINITY;
            else if (u < 0.011)
                s = 5.0f; /* exactly the threshold */
            else if (u < 0.013)
                s = nextafterf(5.0f, 0.0f);
            snr[v] = s;
            wd[v] = (int32_t)tu_range(&r, -2, 40);
        }
        /* chunkings: 1, small, large, one call */
        size_t *chunks = malloc((n + 1) * sizeof *chunks);
        float *thr = malloc((n + 1) * sizeof *thr);
        const long cmax = it % 4 == 0   ? 1
                          : it % 4 == 1 ? 17
                          : it % 4 == 2 ? 1000
                                        : (long)n;
        size_t ncalls = 0;
        for (size_t k = 0; k < n;) {
            size_t m = (size_t)tu_range(&r, 1, cmax);
            if (m > n - k) m = n - k;
            thr[ncalls] = it % 7 == 0 ? 4.5f + (float)tu_range(&r, 0, 3) * 0.5f : 5.0f;
            chunks[ncalls++] = m;
            k += m;
        }
        const size_t cap = n * C + 1;
        tr_candidate *ev0 = malloc(cap * sizeof *ev0);
        tr_candidate *ev1 = malloc(cap * sizeof *ev1);
        state_t *log0 = malloc((ncalls + 1) * sizeof *log0);
        state_t *log1 = malloc((ncalls + 1) * sizeof *log1);
        CHECK(tr_candidates_select("reference") == 1, "reference kernel");
        const size_t n0 = run_kernel(&cfg, snr, it % 11 == 5 ? NULL : wd, chunks, ncalls,
                                     it % 7 == 0 ? thr : NULL, ev0, cap, log0);
        for (int kk = 0; kk < 2; kk++) {
            if (!tr_candidates_select(names[kk])) continue;
            if (kk == 1) ran_avx2 = 1;
            const size_t n1 =
                run_kernel(&cfg, snr, it % 11 == 5 ? NULL : wd, chunks, ncalls,
                           it % 7 == 0 ? thr : NULL, ev1, cap, log1);
            int same = n1 == n0;
            size_t bad = 0;
            for (size_t i = 0; same && i < n0; i++)
                if (!same_event(&ev0[i], &ev1[i])) {
                    same = 0;
                    bad = i;
                }
            CHECK(same, "it %d %s (C %u n %zu): %zu vs %zu events, first diff %zu", it,
                  names[kk], C, n, n1, n0, bad);
            int same_state = 1;
            for (size_t i = 0; same_state && i < ncalls; i++)
                same_state =
                    log0[i].position == log1[i].position &&
                    log0[i].closed == log1[i].closed && log0[i].open == log1[i].open &&
                    log0[i].events == log1[i].events && log0[i].peaks == log1[i].peaks;
            CHECK(same_state, "it %d %s: state after a call differs", it, names[kk]);
        }
        tr_candidates_select(NULL);
        free(snr);
        free(wd);
        free(chunks);
        free(thr);
        free(ev0);
        free(ev1);
        free(log0);
        free(log1);
    }
    if (!ran_avx2) printf("test_candidates: no AVX2 here, generic kernel only\n");
    CHECK(tr_candidates_select("nonsense") == 0, "unknown kernel refused");
    CHECK(tr_candidates_select(NULL) == 1, "best kernel");
}

/* Every value above threshold, a channel link as wide as the channels: one
 * event, and the channels looked at grow like channels + peaks per position,
 * not peaks x link_chan. */
static void test_wide_link(void)
{
    const uint32_t C = 4096;
    const size_t n = 16;
    float *snr = malloc(n * C * sizeof *snr);
    for (size_t i = 0; i < n * C; i++)
        snr[i] = 10.0f;
    tr_candidates_config cfg = tr_candidates_config_default();
    cfg.nchan = C;
    cfg.link_chan = C;
    tr_error err;
    tr_candidates *q = tr_candidates_create(&cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return;
    CHECK(tr_candidates_process(q, snr, NULL, n) == TR_OK, "process");
    CHECK(tr_candidates_flush(q) == TR_OK, "flush");
    tr_candidate ev[2];
    const size_t ne = tr_candidates_read(q, ev, 2);
    CHECK(ne == 1 && ev[0].members == (uint64_t)n * C && ev[0].chan_lo == 0 &&
              ev[0].chan_hi == C - 1,
          "%zu events, %llu members", ne, ne ? (unsigned long long)ev[0].members : 0ull);
    if (strcmp(tr_candidates_kernel(), "reference") != 0)
        CHECK(tr_candidates_visits(q) <= 2 * (uint64_t)n * C,
              "%llu channels looked at for %zu peaks",
              (unsigned long long)tr_candidates_visits(q), n * C);
    tr_candidates_destroy(q);
    free(snr);
}

int main(void)
{
    test_random();
    test_wide_link();
    test_rules();
    test_invalid();
    test_search();
    test_kernels();
    return tu_finish("test_candidates");
}
