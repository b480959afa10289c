/*
 * GPU tests of the candidates' CUDA backend (<transient/candidates.h>,
 * cuda/boxcar/candidates_cuda.cu) through the public API. Exit 77 (skipped)
 * when no GPU is usable.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 *  1. tr_candidates with backend CUDA against the CPU backend, call by call
 *     (the same events in the same order, ties in the closing order compared
 *     as sets; the same open count, closed position and peak count): 1, 3, 64
 *     and 1024 channels, noise, bursts, NaN/Inf, chunk size 1, random chunks
 *     and one call, threshold changes between calls, host pointers and
 *     device pointers (tr_candidates_process_device, both layouts), flush,
 *     reset, a dense stream that makes every device buffer grow.
 *  2. The search on the device (tr_boxcar_process_device; FIXED, and WHITE
 *     and LEVELS measured on the device, with window 0 held (first_own, the
 *     default) and with the warm-up; both layouts; 1 and 64 channels;
 *     NaN/Inf; random pieces) with tr_boxcar_candidates_process_device: S/N
 *     within twice TR_BOXCAR_FAST_TOL of the CPU search of the same samples
 *     (each is within it of the reference), flush included, the same
 *     non-finite count; the same events as the CPU clustering of the same
 *     S/N downloaded (warm-up masked alike); the two strong pulses found over
 *     the same samples as by the CPU search and clustering, S/N within the
 *     tolerance. tr_boxcar_search_candidates (host samples, S/N kept on the
 *     device) gives, call by call, the events of the CPU clustering of the
 *     device S/N of positions >= 0.
 *     Calls of several pieces give the events of calls of one piece; a
 *     pipelined stream of calls (tr_boxcar_search_candidates_pipelined) the
 *     events of single calls, threshold changes included.
 *  3. A CPU object refuses device pointers (TR_ERR_UNSUPPORTED).
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include "bench_device.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "boxcar/candidates_test_streams.h"

static size_t read_all(tr_candidates *c, tr_candidate **out)
{
    const size_t n = tr_candidates_pending(c);
    *out = malloc((n + 1) * sizeof **out);
    return tr_candidates_read(c, *out, n);
}

/* Events kept across calls. */
typedef struct {
    tr_candidate *v;
    size_t n;
} evlist;

/* The events and counters of one call of both objects; keep: NULL, or where
 * the GPU's events are appended. */
static void compare(const char *what, size_t call, tr_candidates *cpu, tr_candidates *gpu,
                    evlist *keep)
{
    tr_candidate *a, *b;
    const size_t na = read_all(cpu, &a), nb = read_all(gpu, &b);
    if (keep && nb) {
        keep->v = realloc(keep->v, (keep->n + nb) * sizeof *b);
        for (size_t i = 0; i < nb; i++)
            keep->v[keep->n++] = b[i];
    }
    CHECK(cts_compare(a, na, b, nb) == 0, "%s call %zu: events differ (%zu cpu, %zu gpu)",
          what, call, na, nb);
    CHECK(tr_candidates_open(cpu) == tr_candidates_open(gpu), "%s call %zu: open", what,
          call);
    CHECK(tr_candidates_closed(cpu) == tr_candidates_closed(gpu), "%s call %zu: closed",
          what, call);
    CHECK(tr_candidates_position(cpu) == tr_candidates_position(gpu),
          "%s call %zu: position", what, call);
    CHECK(tr_candidates_peaks(cpu) == tr_candidates_peaks(gpu), "%s call %zu: peaks",
          what, call);
    free(a);
    free(b);
}

typedef struct {
    uint32_t nchan;
    size_t n;
    double noise;
    size_t gap;
    float thr;
    uint32_t link_time, link_chan;
    double link_width;
    uint64_t max_span;
    int chunks; /* 0: size 1, 1: random, 2: one call */
    int buffer; /* 0: host, 1: device time-major, 2: device channel-major */
} gcase;

static void test_backends(void)
{
    const gcase cases[] = {
        {1, 4000, 1.0, 100, 6.0f, 0, 1, 0.0, 0, 0, 0},
        {3, 20000, 1.5, 100, 5.0f, 2, 1, 2.0, 50, 1, 1},
        {64, 20000, 1.2, 20, 5.5f, 1, 1, 0.0, 0, 1, 2},
        {1024, 2000, 1.0, 4, 6.0f, 0, 2, 1.5, 0, 1, 1},
        {1024, 2000, 1.0, 4, 6.0f, 3, 1, 0.0, 30, 2, 2},
        {64, 50000, 1.5, 10, 3.0f, 20, 1, 2.0, 0, 2, 1}, /* dense: buffers grow */
        /* one channel, any widths: the device's runs, cut by span limits */
        {1, 50000, 1.5, 5, 2.0f, 3, 1, 0.0, 37, 1, 1},
        {1, 200000, 1.5, 10, 3.0f, 0, 1, 0.0, 300, 2, 2},
        {1, 30000, 2.0, 0, 1.0f, 1, 1, 0.0, 0, 1, 0},
    };
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const gcase *t = &cases[ci];
        const uint32_t C = t->nchan;
        tu_rng r = {1000 + ci};
        float *snr = malloc(t->n * C * sizeof *snr), *cm = malloc(t->n * C * sizeof *cm);
        int32_t *width = malloc(t->n * C * sizeof *width);
        int32_t *cw = malloc(t->n * C * sizeof *cw);
        cts_stream(&r, t->n, C, t->noise, t->gap, 64, snr, width);
        tr_candidates_config cfg = tr_candidates_config_default();
        cfg.nchan = C;
        cfg.threshold = t->thr;
        cfg.link_time = t->link_time;
        cfg.link_chan = t->link_chan;
        cfg.link_width = t->link_width;
        cfg.max_span = t->max_span;
        cfg.start_position = -3;
        tr_error err;
        tr_candidates *cpu = tr_candidates_create(&cfg, &err);
        cfg.backend = TR_BACKEND_CUDA;
        tr_candidates *gpu = tr_candidates_create(&cfg, &err);
        CHECK(gpu != NULL, "case %zu: create CUDA: %s", ci, err.message);
        void *ds = NULL, *dw = NULL;
        if (!gpu || tr_bench_dev_alloc(0, t->n * C * 4, &ds) != TR_OK ||
            tr_bench_dev_alloc(0, t->n * C * 4, &dw) != TR_OK) {
            CHECK(0, "case %zu: setup", ci);
            goto done;
        }
        CHECK(tr_candidates_backend(gpu) == TR_BACKEND_CUDA, "case %zu: backend", ci);
        for (int pass = 0; pass < 2; pass++) {
            size_t done = 0, call = 0;
            while (done < t->n) {
                size_t m = t->chunks == 0   ? 1
                           : t->chunks == 1 ? (size_t)tu_range(&r, 0, 3000)
                                            : t->n;
                if (pass == 1) m = t->n;
                if (m > t->n - done) m = t->n - done;
                if (tu_range(&r, 0, 9) == 0) {
                    const float thr = t->thr + (float)tu_range(&r, -1, 2);
                    tr_candidates_set_threshold(cpu, thr);
                    tr_candidates_set_threshold(gpu, thr);
                }
                const float *s = snr + done * C;
                const int32_t *w = width + done * C;
                CHECK(tr_candidates_process(cpu, s, w, m) == TR_OK, "cpu process");
                tr_status st;
                if (t->buffer == 0) {
                    st = tr_candidates_process(gpu, s, w, m);
                } else {
                    const int chm = t->buffer == 2;
                    for (size_t k = 0; k < m; k++)
                        for (uint32_t c = 0; c < C; c++) {
                            const size_t i = chm ? c * m + k : k * C + c;
                            cm[i] = s[k * C + c];
                            cw[i] = w[k * C + c];
                        }
                    st = tr_bench_dev_upload(ds, cm, m * C * 4);
                    if (st == TR_OK) st = tr_bench_dev_upload(dw, cw, m * C * 4);
                    if (st == TR_OK)
                        st = tr_candidates_process_device(gpu, (const float *)ds,
                                                          (const int32_t *)dw, m, chm);
                }
                CHECK(st == TR_OK, "case %zu: gpu process: %s", ci,
                      tr_candidates_last_error(gpu));
                compare("backends", call++, cpu, gpu, NULL);
                done += m;
            }
            CHECK(tr_candidates_flush(cpu) == TR_OK && tr_candidates_flush(gpu) == TR_OK,
                  "case %zu: flush", ci);
            compare("backends flush", call, cpu, gpu, NULL);
            CHECK(tr_candidates_reset(cpu) == TR_OK && tr_candidates_reset(gpu) == TR_OK,
                  "case %zu: reset", ci);
            tr_candidates_set_threshold(cpu, t->thr);
            tr_candidates_set_threshold(gpu, t->thr);
        }
    done:
        tr_bench_dev_free(ds);
        tr_bench_dev_free(dw);
        tr_candidates_destroy(cpu);
        tr_candidates_destroy(gpu);
        free(snr);
        free(cm);
        free(width);
        free(cw);
    }
}

/* The search on the device followed by the device clustering. */
static void test_search(void)
{
    const uint32_t chans[] = {1, 64};
    const tr_boxcar_norm_mode modes[] = {TR_BOXCAR_NORM_FIXED, TR_BOXCAR_NORM_WHITE,
                                         TR_BOXCAR_NORM_LEVELS};
    for (int mo = 0; mo < 5; mo++) /* FIXED; WHITE, LEVELS with first_own 1, 0 */
        for (int li = 0; li < 2; li++)
            for (size_t cc = 0; cc < 2; cc++) {
                const int mi = mo < 3 ? mo : mo - 2;
                const uint32_t C = chans[cc];
                const size_t n = 70000;
                tu_rng r = {500 + cc + 10 * li + 100 * mo};
                float *x = malloc(n * C * sizeof *x), *buf = malloc(n * C * sizeof *buf);
                float *ys = malloc(n * C * sizeof *ys), *yc = malloc(n * C * sizeof *yc);
                int32_t *wc = malloc(n * C * sizeof *wc);
                int32_t *ws = malloc(n * C * sizeof *ws);
                for (size_t i = 0; i < n * C; i++)
                    x[i] = (float)tu_gauss(&r);
                for (size_t i = 0; i < n * C; i += 997)
                    x[i] = i % 2 ? NAN : INFINITY;
                /* strong pulses: width 40 at 20000, width 3 at 45000 */
                for (uint32_t c = 0; c < C; c++) {
                    for (size_t k = 20000; k < 20040; k++)
                        x[k * C + c] += 3.0f;
                    for (size_t k = 45000; k < 45003; k++)
                        x[k * C + c] += 12.0f;
                }
                tr_boxcar_config bc = tr_boxcar_config_default();
                bc.nchan = C;
                bc.max_width = 256;
                bc.norm.mode = modes[mi];
                bc.norm.first_own = mo < 3; /* window 0 held, or the warm-up */
                bc.device_layout = li ? TR_BOXCAR_CHANNEL_MAJOR : TR_BOXCAR_TIME_MAJOR;
                tr_error err;
                bc.backend = TR_BACKEND_CUDA;
                tr_boxcar *g = tr_boxcar_create(&bc, &err);
                bc.backend = TR_BACKEND_CPU;
                tr_boxcar *h = tr_boxcar_create(&bc, &err);
                tr_candidates_config cfg = tr_candidates_config_default();
                cfg.nchan = C;
                cfg.threshold = 7.0f;
                cfg.start_position = -(int64_t)tr_boxcar_latency(h);
                tr_candidates *href = tr_candidates_create(&cfg, &err); /* CPU search */
                tr_candidates *same =
                    tr_candidates_create(&cfg, &err); /* GPU S/N on CPU */
                cfg.backend = TR_BACKEND_CUDA;
                tr_candidates *dev = tr_candidates_create(&cfg, &err);
                /* host samples searched and clustered on the device (time-major):
                 * against the CPU clustering of the downloaded S/N, positions >= 0 */
                cfg.start_position = 0;
                tr_candidates *hc = tr_candidates_create(&cfg, &err);
                cfg.backend = TR_BACKEND_CPU;
                tr_candidates *hc_ref = tr_candidates_create(&cfg, &err);
                bc.backend = TR_BACKEND_CUDA;
                bc.device_layout = TR_BOXCAR_TIME_MAJOR;
                /* pieces of at most 1000 samples: calls of up to 9000 take
                 * several, copied in while the one before is searched */
                bc.batch = 1000;
                tr_boxcar *ga = tr_boxcar_create(&bc, &err);
                void *dx = NULL, *dy = NULL, *dw = NULL;
                if (!g || !h || !href || !same || !dev || !hc || !hc_ref || !ga ||
                    tr_bench_dev_alloc(0, n * C * 4, &dx) != TR_OK ||
                    tr_bench_dev_alloc(0, n * C * 4, &dy) != TR_OK ||
                    tr_bench_dev_alloc(0, n * C * 4, &dw) != TR_OK) {
                    CHECK(0, "search setup: %s", err.message);
                    goto done;
                }
                size_t done_ = 0, call = 0;
                evlist got = {NULL, 0};
                while (done_ < n) {
                    size_t m = (size_t)tu_range(&r, 1, 9000);
                    if (m > n - done_) m = n - done_;
                    const uint64_t pos = tr_boxcar_position(g);
                    const int64_t p0 = (int64_t)pos - (int64_t)tr_boxcar_latency(g);
                    /* host search + host clustering */
                    CHECK(tr_boxcar_process(h, x + done_ * C, m, yc, wc) == TR_OK,
                          "cpu search");
                    CHECK(tr_boxcar_candidates_process(
                              href, h, (uint64_t)(p0 < 0 ? 0 : p0), yc, wc, m) == TR_OK,
                          "cpu clustering");
                    /* device search + device clustering */
                    for (size_t k = 0; k < m; k++)
                        for (uint32_t c = 0; c < C; c++)
                            buf[li ? c * m + k : k * C + c] = x[(done_ + k) * C + c];
                    CHECK(tr_bench_dev_upload(dx, buf, m * C * 4) == TR_OK, "upload");
                    CHECK(tr_boxcar_process_device(g, dx, m, dy, dw) == TR_OK,
                          "device search: %s", tr_boxcar_last_error(g));
                    CHECK(tr_boxcar_candidates_process_device(
                              dev, g, (uint64_t)(p0 < 0 ? 0 : p0), dy, dw, m) == TR_OK,
                          "device clustering: %s", tr_candidates_last_error(dev));
                    /* the device S/N clustered on the CPU: the same events */
                    CHECK(tr_bench_dev_download(buf, dy, m * C * 4) == TR_OK &&
                              tr_bench_dev_download(ws, dw, m * C * 4) == TR_OK,
                          "download");
                    const double tol = 2.0 * TR_BOXCAR_FAST_TOL(tr_boxcar_lend(h));
                    size_t bad = 0;
                    for (size_t k = 0; k < m; k++)
                        for (uint32_t c = 0; c < C; c++) {
                            ys[k * C + c] = buf[li ? c * m + k : k * C + c];
                            bad += !(fabs(ys[k * C + c] - yc[k * C + c]) <=
                                     tol * (1.0 + fabs(yc[k * C + c])));
                        }
                    CHECK(bad == 0, "mode %d: %zu device S/N values off the CPU's",
                          (int)modes[mi], bad);
                    int32_t *wt = malloc(m * C * sizeof *wt);
                    for (size_t k = 0; k < m; k++)
                        for (uint32_t c = 0; c < C; c++)
                            wt[k * C + c] = ws[li ? c * m + k : k * C + c];
                    CHECK(tr_boxcar_candidates_process(
                              same, h, (uint64_t)(p0 < 0 ? 0 : p0), ys, wt, m) == TR_OK,
                          "cpu of gpu");
                    if (li == 0) {
                        const size_t neg = p0 >= 0             ? 0
                                           : (size_t)(-p0) < m ? (size_t)(-p0)
                                                               : m;
                        CHECK(tr_boxcar_search_candidates(hc, ga, x + done_ * C, m) ==
                                  TR_OK,
                              "search_candidates: %s", tr_boxcar_last_error(ga));
                        CHECK(tr_boxcar_candidates_process(
                                  hc_ref, h, (uint64_t)(p0 + (int64_t)neg), ys + neg * C,
                                  wt + neg * C, m - neg) == TR_OK,
                              "cpu of gpu, positions >= 0");
                        compare("search_candidates", call, hc_ref, hc, NULL);
                    }
                    free(wt);
                    compare("search", call++, same, dev, &got);
                    done_ += m;
                }
                CHECK(tr_boxcar_nonfinite(g) == tr_boxcar_nonfinite(h),
                      "non-finite counts");
                {
                    /* flush of the device stream: host buffers, the same S/N */
                    const size_t L = tr_boxcar_latency(h);
                    CHECK(tr_boxcar_flush(h, yc, wc) == TR_OK &&
                              tr_boxcar_flush(g, ys, ws) == TR_OK,
                          "flush: %s", tr_boxcar_last_error(g));
                    const double tol = 2.0 * TR_BOXCAR_FAST_TOL(tr_boxcar_lend(h));
                    size_t bad = 0;
                    for (size_t i = 0; i < L * C; i++)
                        bad += !(fabs(ys[i] - yc[i]) <= tol * (1.0 + fabs(yc[i])));
                    CHECK(bad == 0, "flush: %zu S/N values off", bad);
                }
                tr_candidates_flush(same);
                tr_candidates_flush(dev);
                tr_candidates_flush(href);
                compare("search flush", call, same, dev, &got);
                /* the strong events of the CPU search: one GPU event over the same
                 * samples with the S/N within the tolerance */
                {
                    tr_candidate *a;
                    const size_t na = read_all(href, &a);
                    size_t strong = 0;
                    for (size_t i = 0; i < na; i++) {
                        if (a[i].snr < 15.0f) continue;
                        strong++;
                        size_t match = 0;
                        for (size_t j = 0; j < got.n; j++) {
                            const tr_candidate *b = &got.v[j];
                            if (b->first >= a[i].end || a[i].first >= b->end) continue;
                            const double tol = TR_BOXCAR_FAST_TOL(tr_boxcar_lend(h)) *
                                               (1.0 + fabs(a[i].snr));
                            CHECK(fabs(a[i].snr - b->snr) <= tol, "pulse S/N %g vs %g",
                                  a[i].snr, b->snr);
                            match++;
                        }
                        CHECK(match == 1, "event at %lld: %zu GPU events over it",
                              (long long)a[i].start, match);
                    }
                    CHECK(strong == 2, "the two pulses found (%zu strong events)",
                          strong);
                    free(a);
                }
                free(got.v);
            done:
                tr_bench_dev_free(dx);
                tr_bench_dev_free(dy);
                tr_bench_dev_free(dw);
                tr_boxcar_destroy(g);
                tr_boxcar_destroy(h);
                tr_candidates_destroy(href);
                tr_candidates_destroy(same);
                tr_candidates_destroy(dev);
                tr_candidates_destroy(hc);
                tr_candidates_destroy(hc_ref);
                tr_boxcar_destroy(ga);
                free(x);
                free(buf);
                free(ys);
                free(ws);
                free(yc);
                free(wc);
            }
}

static void test_cpu_refuses(void)
{
    tr_candidates_config cfg = tr_candidates_config_default();
    tr_error err;
    tr_candidates *c = tr_candidates_create(&cfg, &err);
    float v = 0.0f;
    CHECK(tr_candidates_process_device(c, &v, NULL, 1, 0) == TR_ERR_UNSUPPORTED,
          "CPU object with device pointers");
    tr_candidates_destroy(c);
}

/* tr_boxcar_search_candidates with calls of several pieces (search and
 * clustering side by side) and with calls cut in two, from page-locked and
 * pageable memory, FIXED and WHITE: the same events as the same stream in
 * calls of 3000 samples (one piece each). */
static void test_search_pieces(void)
{
    const uint32_t C = 64;
    const size_t n = 300000;
    for (int white = 0; white < 2; white++)
        for (int pinned = 0; pinned < 2; pinned++) {
            tu_rng r = {900 + white + 2 * pinned};
            tr_boxcar_config bc = tr_boxcar_config_default();
            bc.nchan = C;
            bc.max_width = 256;
            bc.backend = TR_BACKEND_CUDA;
            bc.norm.mode = white ? TR_BOXCAR_NORM_WHITE : TR_BOXCAR_NORM_FIXED;
            bc.batch = 131072;
            tr_candidates_config cc = tr_candidates_config_default();
            cc.nchan = C;
            cc.threshold = 7.0f;
            cc.backend = TR_BACKEND_CUDA;
            tr_error err;
            tr_boxcar *big = tr_boxcar_create(&bc, &err);
            tr_boxcar *small = tr_boxcar_create(&bc, &err);
            tr_candidates *cb = tr_candidates_create(&cc, &err);
            tr_candidates *cs = tr_candidates_create(&cc, &err);
            float *x = NULL;
            if (big)
                x = pinned ? tr_boxcar_host_alloc(big, n * C * sizeof *x)
                           : malloc(n * C * sizeof *x);
            if (!big || !small || !cb || !cs || !x) {
                CHECK(0, "pieces setup: %s", err.message);
                goto done;
            }
            for (size_t i = 0; i < n * C; i++)
                x[i] = (float)tu_gauss(&r);
            for (size_t k = 5000; k < n; k += 7919)
                for (size_t j = 0; j < 20; j++)
                    x[(k + j) * C + (k % C)] += 4.0f;
            x[777 * C + 5] = NAN;
            /* pieces of at most 65536 samples (2^22 values): calls of 131072
             * (two pieces), 40000 (one), 65536 and the rest, 63392 (each cut
             * in two) */
            const size_t calls[] = {131072, 40000, 65536, n};
            size_t done_ = 0, nb = 0, ns = 0;
            tr_candidate *eb = NULL, *es = NULL;
            for (size_t i = 0; i < 4 && done_ < n; i++) {
                const size_t m = calls[i] < n - done_ ? calls[i] : n - done_;
                CHECK(tr_boxcar_search_candidates(cb, big, x + done_ * C, m) == TR_OK,
                      "pieces call %zu: %s", i, tr_boxcar_last_error(big));
                done_ += m;
            }
            for (size_t k = 0; k < n; k += 3000) {
                const size_t m = 3000 < n - k ? 3000 : n - k;
                CHECK(tr_boxcar_search_candidates(cs, small, x + k * C, m) == TR_OK,
                      "small calls: %s", tr_boxcar_last_error(small));
            }
            CHECK(tr_candidates_flush(cb) == TR_OK && tr_candidates_flush(cs) == TR_OK,
                  "pieces flush");
            nb = read_all(cb, &eb);
            ns = read_all(cs, &es);
            CHECK(nb > 20, "pieces: %zu events (pulses every 7919 samples)", nb);
            CHECK(cts_compare(es, ns, eb, nb) == 0,
                  "pieces (%s, %s): %zu events in pieces, %zu in small calls",
                  white ? "white" : "fixed", pinned ? "page-locked" : "pageable", nb, ns);
            CHECK(tr_boxcar_nonfinite(big) == tr_boxcar_nonfinite(small) &&
                      tr_boxcar_nonfinite(big) >= 1,
                  "pieces: non-finite counts %llu, %llu",
                  (unsigned long long)tr_boxcar_nonfinite(big),
                  (unsigned long long)tr_boxcar_nonfinite(small));
            free(eb);
            free(es);
        done:
            if (x && pinned) tr_boxcar_host_free(big, x);
            if (!pinned) free(x);
            tr_candidates_destroy(cb);
            tr_candidates_destroy(cs);
            tr_boxcar_destroy(big);
            tr_boxcar_destroy(small);
        }
}

/* tr_boxcar_search_candidates_pipelined (a call's last piece searched
 * beside the copy of the next call's first, the piece before it clustered
 * there too): the same events as tr_boxcar_search_candidates over the same
 * calls, with threshold changes between calls (each piece clustered with the
 * threshold in effect when its samples were given), calls of 1 to 70000
 * samples, 1 and 64 channels, FIXED and WHITE, dense pulses; the samples
 * consumed after every call; single calls and drains between pipelined ones;
 * the drain, the flush's drain, and another candidates object refused while
 * a piece waits. */
static void test_search_pipelined(void)
{
    for (int cfgi = 0; cfgi < 4; cfgi++) {
        const uint32_t C = cfgi < 2 ? 1 : 64;
        const int white = cfgi % 2;
        const size_t n = C == 1 ? 3000000 : 200000;
        tu_rng r = {4200 + (uint64_t)cfgi};
        tr_boxcar_config bc = tr_boxcar_config_default();
        bc.nchan = C;
        bc.max_width = 256;
        bc.backend = TR_BACKEND_CUDA;
        bc.norm.mode = white ? TR_BOXCAR_NORM_WHITE : TR_BOXCAR_NORM_FIXED;
        bc.batch = 1048576;
        tr_candidates_config cc = tr_candidates_config_default();
        cc.nchan = C;
        cc.threshold = 7.0f;
        cc.backend = TR_BACKEND_CUDA;
        tr_error err;
        tr_boxcar *qa = tr_boxcar_create(&bc, &err);
        tr_boxcar *qb = tr_boxcar_create(&bc, &err);
        tr_candidates *ca = tr_candidates_create(&cc, &err);
        tr_candidates *cb = tr_candidates_create(&cc, &err);
        tr_candidates *other = tr_candidates_create(&cc, &err);
        float *x = malloc(n * C * sizeof *x);
        tr_candidate *ea = NULL, *eb = NULL;
        size_t na = 0, nb = 0, calls = 0;
        if (!qa || !qb || !ca || !cb || !other || !x) {
            CHECK(0, "pipelined setup: %s", err.message);
            goto done;
        }
        for (size_t i = 0; i < n * C; i++)
            x[i] = (float)tu_gauss(&r);
        /* a pulse every 4096 samples (every one a burst of peaks) */
        for (size_t k = 2048, j = 0; k + 64 < n; k += 4096, j++) {
            const unsigned w = 1u << (j % 7);
            const float a = (float)((12.0 + 20.0 * tu_uniform(&r)) / sqrt((double)w));
            for (unsigned i = 0; i < w; i++)
                x[(k + i) * C + (j * 7) % C] += a;
        }
        x[1234 * C] = NAN;
        for (size_t done_ = 0; done_ < n; calls++) {
            const int kind = (int)tu_range(&r, 0, 5);
            size_t m = kind == 0   ? (size_t)tu_range(&r, 1, 3)
                       : kind == 1 ? (size_t)tu_range(&r, 1, 5000)
                                   : (size_t)tu_range(&r, 5000, 70000);
            if (m > n - done_) m = n - done_;
            if (tu_range(&r, 0, 7) == 0) {
                const float thr = 6.5f + 0.5f * (float)tu_range(&r, 0, 3);
                tr_candidates_set_threshold(ca, thr);
                tr_candidates_set_threshold(cb, thr);
            }
            const int mix = (int)tu_range(&r, 0, 11);
            if (mix == 0) {
                CHECK(tr_boxcar_search_candidates(ca, qa, x + done_ * C, m) == TR_OK,
                      "single call %zu between pipelined ones: %s", calls,
                      tr_boxcar_last_error(qa));
            } else {
                CHECK(tr_boxcar_search_candidates_pipelined(ca, qa, x + done_ * C, m) ==
                          TR_OK,
                      "pipelined call %zu: %s", calls, tr_boxcar_last_error(qa));
                if (mix == 1)
                    CHECK(tr_boxcar_search_candidates_drain(qa) == TR_OK,
                          "drain after call %zu: %s", calls, tr_boxcar_last_error(qa));
            }
            CHECK(tr_boxcar_search_candidates(cb, qb, x + done_ * C, m) == TR_OK,
                  "reference call %zu: %s", calls, tr_boxcar_last_error(qb));
            done_ += m;
            CHECK(tr_boxcar_position(qa) == done_ && tr_boxcar_position(qb) == done_,
                  "call %zu: samples consumed %llu, %llu, given %zu", calls,
                  (unsigned long long)tr_boxcar_position(qa),
                  (unsigned long long)tr_boxcar_position(qb), done_);
        }
        CHECK(tr_boxcar_search_candidates_pipelined(other, qa, x, 1) == TR_ERR_STATE,
              "another candidates object while a piece waits");
        CHECK(tr_candidates_pending(ca) <= tr_candidates_pending(cb),
              "pipelined events come no earlier");
        if (cfgi % 2 == 0) {
            CHECK(tr_boxcar_search_candidates_drain(qa) == TR_OK, "drain: %s",
                  tr_boxcar_last_error(qa));
        } else {
            /* the flush drains first */
            const size_t L = tr_boxcar_latency(qa);
            float *y = malloc(L * C * sizeof *y);
            int32_t *w = malloc(L * C * sizeof *w);
            CHECK(y && w && tr_boxcar_flush(qa, y, w) == TR_OK, "flush: %s",
                  tr_boxcar_last_error(qa));
            free(y);
            free(w);
        }
        CHECK(tr_candidates_flush(ca) == TR_OK && tr_candidates_flush(cb) == TR_OK,
              "pipelined flush");
        na = read_all(ca, &ea);
        nb = read_all(cb, &eb);
        CHECK(nb > (C == 1 ? 500u : 30u), "pipelined: %zu events", nb);
        CHECK(cts_compare(eb, nb, ea, na) == 0,
              "pipelined (%u channels, %s): %zu events, %zu by single calls (%zu calls)",
              C, white ? "white" : "fixed", na, nb, calls);
        CHECK(tr_candidates_peaks(ca) == tr_candidates_peaks(cb), "pipelined peaks");
    done:
        free(ea);
        free(eb);
        free(x);
        tr_candidates_destroy(ca);
        tr_candidates_destroy(cb);
        tr_candidates_destroy(other);
        tr_boxcar_destroy(qa);
        tr_boxcar_destroy(qb);
    }
}

int main(void)
{
    char why[256];
    if (tr_cuda_device_count(why, sizeof why) == 0) {
        printf("test_candidates_gpu: skipped (%s)\n", why);
        return 77;
    }
    test_backends();
    test_search();
    test_search_pieces();
    test_search_pipelined();
    test_cpu_refuses();
    return tu_finish("test_candidates_gpu");
}
