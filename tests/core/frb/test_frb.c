/*
 * Tests of the FRB search pipeline (tr_frb): injected dispersed bursts
 * recovered (DM within one trial, time within the width, S/N within 10 % of
 * the injected optimum), nothing else above threshold in noise, the same
 * candidates for any chunking and block size and for packed input, the end
 * of the data, errors; with a file argument, the real 29.fil: one burst
 * near DM 475.3 at 2.029 s and nothing else above 8.
 *
 *   test_frb [29.fil] [--gpu]
 * --gpu: the CUDA backend against the CPU one (exit 77 without a device).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_util.h"
#include "frb_test_signals.h"

#include <transient/filterbank.h>
#include <transient/frb.h>

#define NCAND_MAX 4096

/* The small band up to DM 600 on the CPU. */
static tr_frb_config small_config(void)
{
    tr_frb_config c = frb_small_band(600.0);
    c.dedisp.zero_dm = 0; /* the injected optimum is that of the raw data */
    c.backend = TR_BACKEND_CPU;
    return c;
}

/* Runs x (n spectra) through a new tr_frb in calls of the given sizes
 * (chunk 0: random 1..max_chunk); candidates into out, returns their count
 * (or -1 on an error). */
static long run(const tr_frb_config *cfg, const float *x, size_t n, size_t chunk,
                size_t max_chunk, uint64_t seed, tr_frb_candidate *out, tr_frb **keep)
{
    tr_error err;
    tr_frb *q = tr_frb_create(cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return -1;
    const uint32_t nchan = cfg->dedisp.plan.nchan;
    tu_rng r = {seed};
    long got = 0;
    for (size_t k = 0; k < n;) {
        size_t len = chunk ? chunk : (size_t)tu_range(&r, 1, (long)max_chunk);
        if (len > n - k) len = n - k;
        const tr_status st = tr_frb_process(q, x + k * nchan, len);
        CHECK(st == TR_OK, "process: %s", tr_frb_last_error(q));
        if (st != TR_OK) break;
        got += (long)tr_frb_read(q, out + got, NCAND_MAX - (size_t)got);
        k += len;
    }
    const tr_status st = tr_frb_flush(q);
    CHECK(st == TR_OK, "flush: %s", tr_frb_last_error(q));
    got += (long)tr_frb_read(q, out + got, NCAND_MAX - (size_t)got);
    if (keep)
        *keep = q;
    else
        tr_frb_destroy(q);
    return got;
}

static int same_candidates(const tr_frb_candidate *a, long na, const tr_frb_candidate *b,
                           long nb)
{
    if (na != nb) return 0;
    for (long i = 0; i < na; i++)
        if (a[i].sample != b[i].sample || a[i].width != b[i].width ||
            a[i].dm_index != b[i].dm_index || a[i].snr != b[i].snr ||
            a[i].members != b[i].members || a[i].first != b[i].first ||
            a[i].end != b[i].end || a[i].dm_index_lo != b[i].dm_index_lo ||
            a[i].dm_index_hi != b[i].dm_index_hi)
            return 0;
    return 1;
}

/* Bursts at trial DMs (and one between trials): each found once, with its
 * DM, time and S/N; nothing else above threshold. */
static void test_injected(void)
{
    tr_frb_config cfg = small_config();
    tr_error err;
    tr_frb *probe = tr_frb_create(&cfg, &err);
    CHECK(probe != NULL, "create: %s", err.message);
    if (!probe) return;
    const uint32_t ndm = tr_frb_ndm(probe);
    const double *dms = tr_frb_dms(probe);
    const uint32_t L = tr_frb_max_delay(probe);
    CHECK(ndm > 8 && dms[0] == 0.0 && dms[ndm - 1] >= 600.0, "plan: %u trials up to %g",
          ndm, dms[ndm - 1]);
    /* Trials 2, ndm/3, ndm/2, 2 ndm/3 and one DM halfway between two trials. */
    const uint32_t di[5] = {2, ndm / 3, ndm / 2, 2 * ndm / 3, ndm - 3};
    frb_burst b[5];
    const uint32_t widths[5] = {1, 3, 8, 20, 4};
    const size_t gap = L + 200;
    for (int k = 0; k < 5; k++) {
        b[k].dm = k < 4 ? dms[di[k]] : 0.5 * (dms[di[k]] + dms[di[k] + 1]);
        b[k].start = (int64_t)(1500 + k * gap);
        b[k].width = widths[k];
        b[k].snr = 30.0;
    }
    const size_t n = 1500 + 5 * gap + L;
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 20.0, 2.0, b, 5, 11);
    tr_frb_candidate *c = malloc(NCAND_MAX * sizeof *c);
    if (!x || !c) {
        CHECK(0, "out of memory");
        goto done;
    }
    const long nc = run(&cfg, x, n, 4096, 0, 1, c, NULL);
    CHECK(nc == 5, "%ld candidates for 5 bursts", nc);
    for (int k = 0; k < 5; k++) {
        const tr_frb_candidate *m = NULL;
        for (long i = 0; i < nc; i++)
            if (llabs(c[i].sample - b[k].start) < (int64_t)gap / 2) m = &c[i];
        CHECK(m != NULL, "burst %d (DM %g, sample %lld) not found", k, b[k].dm,
              (long long)b[k].start);
        if (!m) continue;
        const int64_t centre = b[k].start + (b[k].width - 1) / 2;
        CHECK(llabs(m->sample - centre) <= (int64_t)b[k].width,
              "burst %d: sample %lld, injected centre %lld (width %u)", k,
              (long long)m->sample, (long long)centre, b[k].width);
        CHECK(fabs(m->time - m->sample * cfg.dedisp.plan.tsamp) < 1e-12, "time %g",
              m->time);
        const long dd = (long)m->dm_index - (long)di[k];
        CHECK(dd >= -1 && dd <= (k < 4 ? 1 : 2),
              "burst %d: trial %u (DM %g), injected trial %u (DM %g)", k, m->dm_index,
              m->dm, di[k], b[k].dm);
        CHECK(m->dm == dms[m->dm_index], "dm %g of trial %u", m->dm, m->dm_index);
        if (k < 4) {
            CHECK(fabs(m->snr - b[k].snr) <= 0.1 * b[k].snr,
                  "burst %d: S/N %.2f, injected optimum %.2f", k, m->snr, b[k].snr);
            CHECK(m->width == b[k].width, "burst %d: width %u, injected %u", k, m->width,
                  b[k].width);
        }
        CHECK(m->members >= 1 && m->dm_index_lo <= m->dm_index &&
                  m->dm_index <= m->dm_index_hi,
              "burst %d: members %llu, trials %u..%u", k, (unsigned long long)m->members,
              m->dm_index_lo, m->dm_index_hi);
    }
done:
    free(c);
    free(x);
    tr_frb_destroy(probe);
}

/* The same candidates (noise ones included, at a low threshold) for any
 * chunking, any block size and for packed 8-bit input. */
static void test_chunking(void)
{
    tr_frb_config cfg = small_config();
    cfg.threshold = 4.5f;
    cfg.search.norm.window = 256;
    frb_burst b = {150.0, 1400, 5, 25.0};
    const size_t n = 3000;
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 100.0, 10.0, &b, 1, 5);
    uint8_t *raw = malloc(n * cfg.dedisp.plan.nchan);
    tr_frb_candidate *c0 = malloc(NCAND_MAX * sizeof *c0);
    tr_frb_candidate *c1 = malloc(NCAND_MAX * sizeof *c1);
    if (!x || !raw || !c0 || !c1) {
        CHECK(0, "out of memory");
        goto done;
    }
    /* 8-bit values, so that the float and the packed input are the same data. */
    for (size_t i = 0; i < n * cfg.dedisp.plan.nchan; i++) {
        const float v = roundf(x[i]);
        x[i] = v < 0 ? 0 : v > 255 ? 255 : v;
        raw[i] = (uint8_t)x[i];
    }
    const long n0 = run(&cfg, x, n, n, 0, 1, c0, NULL);
    CHECK(n0 >= 2, "%ld candidates at threshold 4.5 (want the burst and some noise)", n0);
    const size_t chunks[4] = {1, 7, 0, 1000};
    for (int k = 0; k < 4; k++) {
        const long n1 = run(&cfg, x, n, chunks[k], 300, 9 + k, c1, NULL);
        CHECK(same_candidates(c0, n0, c1, n1), "chunk %zu: %ld candidates, whole: %ld",
              chunks[k], n1, n0);
    }
    tr_frb_config small_block = cfg;
    small_block.block = 13;
    const long n2 = run(&small_block, x, n, 0, 500, 3, c1, NULL);
    CHECK(same_candidates(c0, n0, c1, n2), "block 13: %ld candidates, block 16384: %ld",
          n2, n0);

    tr_frb_config rc = cfg;
    rc.dedisp.raw_nbits = 8;
    tr_error err;
    tr_frb *q = tr_frb_create(&rc, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (q) {
        long n3 = 0;
        for (size_t k = 0; k < n; k += 777) {
            const size_t len = n - k < 777 ? n - k : 777;
            CHECK(tr_frb_process_raw(q, raw + k * rc.dedisp.plan.nchan, len) == TR_OK,
                  "process_raw: %s", tr_frb_last_error(q));
        }
        CHECK(tr_frb_flush(q) == TR_OK, "flush: %s", tr_frb_last_error(q));
        n3 = (long)tr_frb_read(q, c1, NCAND_MAX);
        CHECK(same_candidates(c0, n0, c1, n3), "packed 8-bit: %ld candidates, float: %ld",
              n3, n0);
        CHECK(tr_frb_position(q) == n && tr_frb_searched(q) == n,
              "position %llu searched %llu", (unsigned long long)tr_frb_position(q),
              (unsigned long long)tr_frb_searched(q));
        tr_frb_destroy(q);
    }
done:
    free(c0);
    free(c1);
    free(raw);
    free(x);
}

/* Many DM trials (the search's statistics are kept for fewer samples then)
 * and long blocks: a burst early in a block is found, as with short blocks. */
static void test_many_trials(void)
{
    tr_frb_config cfg = small_config();
    cfg.dedisp.plan.nchan = 16;
    enum { NDM = 1500 };
    double *dms = malloc(NDM * sizeof *dms);
    for (int d = 0; dms && d < NDM; d++)
        dms[d] = 0.2 * d;
    cfg.dedisp.plan.dm_list = dms;
    cfg.dedisp.plan.ndm_list = NDM;
    frb_burst b = {150.0, 2500, 3, 30.0};
    const size_t n = 40000;
    float *x = dms ? frb_make_filterbank(&cfg.dedisp.plan, n, 10.0, 1.0, &b, 1, 6) : NULL;
    tr_frb_candidate *c0 = malloc(NCAND_MAX * sizeof *c0);
    tr_frb_candidate *c1 = malloc(NCAND_MAX * sizeof *c1);
    if (x && c0 && c1) {
        cfg.block = 40000;
        const long n0 = run(&cfg, x, n, n, 0, 1, c0, NULL);
        cfg.block = 100;
        const long n1 = run(&cfg, x, n, n, 0, 1, c1, NULL);
        CHECK(same_candidates(c0, n0, c1, n1),
              "block 40000: %ld candidates, block 100: %ld", n0, n1);
        CHECK(n0 == 1 && llabs(c0[0].sample - b.start - 1) <= 3 &&
                  fabs(c0[0].dm - 150.0) < 5,
              "%ld candidates; first at sample %lld DM %g", n0,
              n0 ? (long long)c0[0].sample : -1LL, n0 ? c0[0].dm : -1.0);
    } else {
        CHECK(0, "out of memory");
    }
    free(c0);
    free(c1);
    free(x);
    free(dms);
}

/* A burst so close to the end that its low channels are missing is still
 * found at the trials whose sums are complete, and the incomplete positions
 * (NaN in the plane) make nothing; keep_plane gives every searched sample. */
static void test_end_of_data(void)
{
    tr_frb_config cfg = small_config();
    cfg.keep_plane = 1;
    tr_error err;
    tr_frb *q = tr_frb_create(&cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return;
    const uint32_t L = tr_frb_max_delay(q);
    const size_t n = 3000 + L;
    frb_burst b = {0.0, (int64_t)(n - 10), 2, 30.0}; /* DM 0: complete at every trial 0 */
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 0.0, 1.0, &b, 1, 3);
    tr_frb_candidate c[64];
    size_t nc = 0;
    uint64_t planned = 0;
    int nan_seen = 0, nan_wrong = 0;
    for (size_t k = 0; x; k += 1000) {
        const size_t len = k >= n ? 0 : n - k < 1000 ? n - k : 1000;
        const tr_status st =
            len ? tr_frb_process(q, x + k * cfg.dedisp.plan.nchan, len) : tr_frb_flush(q);
        CHECK(st == TR_OK, "%s", tr_frb_last_error(q));
        const float *plane;
        size_t pn;
        int64_t first;
        CHECK(tr_frb_plane(q, &plane, &pn, &first) == TR_OK, "plane");
        CHECK(first == (int64_t)planned || pn == 0, "plane first %lld, expected %llu",
              (long long)first, (unsigned long long)planned);
        for (size_t j = 0; j < pn; j++)
            for (uint32_t d = 0; d < tr_frb_ndm(q); d++) {
                const int nan = isnan(plane[j * tr_frb_ndm(q) + d]);
                nan_seen |= nan;
                if (nan && d == 0) nan_wrong = 1; /* DM 0 is always complete */
            }
        planned += pn;
        nc += tr_frb_read(q, c + nc, 64 - nc);
        if (!len) break;
    }
    CHECK(planned == n, "plane: %llu samples per trial, %zu spectra",
          (unsigned long long)planned, n);
    CHECK(nan_seen && !nan_wrong, "incomplete positions: NaN seen %d, at DM 0 %d",
          nan_seen, nan_wrong);
    CHECK(nc == 1 && c[0].dm_index <= 1 && llabs(c[0].sample - b.start) <= 2,
          "%zu candidates; first at trial %u sample %lld", nc, nc ? c[0].dm_index : 0,
          nc ? (long long)c[0].sample : -1LL);
    CHECK(tr_frb_process(q, x, 1) == TR_ERR_STATE, "process after flush");
    CHECK(tr_frb_reset(q) == TR_OK && tr_frb_position(q) == 0, "reset");
    free(x);
    tr_frb_destroy(q);
}

/* Zero-DM subtraction removes an undispersed broadband pulse (DM 0 at every
 * trial is what it subtracts) but keeps a dispersed one. */
static void test_zero_dm(void)
{
    tr_frb_config cfg = small_config();
    frb_burst b[2] = {{0.0, 1500, 4, 40.0}, {400.0, 2500, 4, 40.0}};
    const size_t n = 4000;
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 3.0, 1.0, b, 2, 4);
    tr_frb_candidate c[64];
    for (int zero = 0; x && zero <= 1; zero++) {
        cfg.dedisp.zero_dm = zero;
        const long nc = run(&cfg, x, n, 1000, 0, 1, c, NULL);
        int broadband = 0, dispersed = 0;
        for (long i = 0; i < nc; i++) {
            broadband += llabs(c[i].sample - b[0].start) < 100;
            dispersed += llabs(c[i].sample - b[1].start) < 100 && c[i].snr > 30.0f;
        }
        CHECK(dispersed == 1, "zero_dm %d: dispersed burst found %d times", zero,
              dispersed);
        CHECK(broadband == !zero, "zero_dm %d: broadband pulse found %d times", zero,
              broadband);
    }
    free(x);
}

/* Bad configurations and input give errors with messages; empty data and
 * non-finite samples give no candidates. */
static void test_errors(void)
{
    tr_error err;
    tr_frb_config c = small_config();
    c.block = 0;
    CHECK(!tr_frb_create(&c, &err) && err.code == TR_ERR_INVALID &&
              strstr(err.message, "block"),
          "block 0: %s", err.message);
    c = small_config();
    c.threshold = NAN;
    CHECK(!tr_frb_create(&c, &err) && strstr(err.message, "threshold"),
          "threshold NaN: %s", err.message);
    c = small_config();
    c.dedisp.plan.nchan = 0;
    CHECK(!tr_frb_create(&c, &err) && err.code != TR_OK && err.message[0], "nchan 0: %s",
          err.message);
    c = small_config();
    c.search.max_width = 0;
    CHECK(!tr_frb_create(&c, &err) && strstr(err.message, "boxcar"), "max_width 0: %s",
          err.message);
    CHECK(!tr_frb_create(NULL, &err) && err.code == TR_ERR_INVALID, "NULL cfg");

    c = small_config();
    tr_frb *q = tr_frb_create(&c, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return;
    tr_frb_candidate out[8];
    CHECK(tr_frb_process(q, NULL, 0) == TR_OK, "empty process");
    CHECK(tr_frb_process(q, NULL, 3) == TR_ERR_INVALID, "NULL input");
    CHECK(tr_frb_flush(q) == TR_OK && tr_frb_read(q, out, 8) == 0, "empty data: %s",
          tr_frb_last_error(q));
    CHECK(tr_frb_flush(q) == TR_ERR_STATE, "second flush");
    CHECK(tr_frb_plane(q, NULL, NULL, NULL) == TR_ERR_INVALID, "plane without pointers");
    CHECK(tr_frb_reset(q) == TR_OK, "reset");
    const size_t n = 4000;
    float *x = frb_make_filterbank(&c.dedisp.plan, n, 0.0, 1.0, NULL, 0, 8);
    if (x) {
        for (size_t i = 2000 * 64; i < 2000 * 64 + 64 * 5; i += 7)
            x[i] = (i % 2) ? NAN : INFINITY;
        CHECK(tr_frb_process(q, x, n) == TR_OK && tr_frb_flush(q) == TR_OK, "%s",
              tr_frb_last_error(q));
        const size_t nc = tr_frb_read(q, out, 8);
        CHECK(nc == 0, "%zu candidates from noise with non-finite samples (S/N %g)", nc,
              nc ? out[0].snr : 0.0);
    }
    free(x);
    tr_frb_destroy(q);
}

/* The real burst: 29.fil, DM 0..1000, threshold 8. */
static void test_real_file(const char *path)
{
    tr_error err;
    tr_filterbank *fb = tr_filterbank_open(path, &err);
    CHECK(fb != NULL, "%s", err.message);
    if (!fb) return;
    const tr_filterbank_header *h = tr_filterbank_get_header(fb);
    tr_frb_config c = tr_frb_config_default();
    c.dedisp.plan.nchan = h->nchans;
    c.dedisp.plan.fch1 = h->fch1;
    c.dedisp.plan.foff = h->foff;
    c.dedisp.plan.tsamp = h->tsamp;
    c.dedisp.raw_nbits = h->nbits;
    c.backend = TR_BACKEND_CPU;
    tr_frb *q = tr_frb_create(&c, &err);
    CHECK(q != NULL, "create: %s", err.message);
    uint8_t *raw = malloc(1000 * h->spectrum_bytes);
    tr_frb_candidate out[64];
    size_t nc = 0;
    while (q && raw) {
        size_t got = 0;
        CHECK(tr_filterbank_read_raw(fb, raw, 1000, &got) == TR_OK, "read");
        const tr_status st = got ? tr_frb_process_raw(q, raw, got) : tr_frb_flush(q);
        CHECK(st == TR_OK, "%s", tr_frb_last_error(q));
        nc += tr_frb_read(q, out + nc, 64 - nc);
        if (!got || st != TR_OK) break;
    }
    CHECK(tr_frb_ndm(q) == 208, "%u DM trials for 0..1000 (dedisp/Heimdall: 208)",
          tr_frb_ndm(q));
    CHECK(nc == 1, "%zu candidates above 8 (want the one burst)", nc);
    for (size_t i = 0; i < nc; i++)
        printf("29.fil: DM %.2f time %.4f s sample %lld width %u S/N %.2f members %llu\n",
               out[i].dm, out[i].time, (long long)out[i].sample, out[i].width, out[i].snr,
               (unsigned long long)out[i].members);
    if (nc >= 1) {
        CHECK(fabs(out[0].dm - 475.3) < 10.0, "DM %g", out[0].dm);
        CHECK(fabs(out[0].time - 2.029) < 0.005, "time %g s", out[0].time);
        CHECK(out[0].snr > 12.0, "S/N %g", out[0].snr);
    }
    free(raw);
    tr_frb_destroy(q);
    tr_filterbank_close(fb);
}

/* The CUDA backend (device-resident or not, as `resident` says) finds the
 * events of the CPU backend: same positions, trials and widths, S/N within
 * the FAST tolerance of the search. */
static void gpu_compare(tr_frb_config cfg, const float *x, size_t n, long want,
                        int resident, const char *what)
{
    tr_frb_candidate *c0 = malloc(NCAND_MAX * sizeof *c0);
    tr_frb_candidate *c1 = malloc(NCAND_MAX * sizeof *c1);
    if (x && c0 && c1) {
        cfg.backend = TR_BACKEND_CPU;
        const long n0 = run(&cfg, x, n, 1000, 0, 1, c0, NULL);
        cfg.backend = TR_BACKEND_CUDA;
        tr_frb *q = NULL;
        const long n1 = run(&cfg, x, n, 0, 2000, 2, c1, &q);
        CHECK(q && tr_frb_backend(q) == TR_BACKEND_CUDA, "%s: backend", what);
        CHECK(q && tr_frb_device_resident(q) == resident, "%s: device-resident %d", what,
              q ? tr_frb_device_resident(q) : -1);
        CHECK(n0 == want && n1 == n0, "%s: CUDA %ld candidates, CPU %ld (want %ld)", what,
              n1, n0, want);
        const double tol = TR_BOXCAR_FAST_TOL(cfg.search.max_width);
        for (long i = 0; i < n0 && i < n1; i++)
            CHECK(c0[i].sample == c1[i].sample && c0[i].dm_index == c1[i].dm_index &&
                      c0[i].width == c1[i].width &&
                      fabs((double)c0[i].snr - c1[i].snr) <= tol * (1 + fabs(c0[i].snr)),
                  "%s: candidate %ld: CUDA (%lld, %u, %u, %g), CPU (%lld, %u, %u, %g)",
                  what, i, (long long)c1[i].sample, c1[i].dm_index, c1[i].width,
                  c1[i].snr, (long long)c0[i].sample, c0[i].dm_index, c0[i].width,
                  c0[i].snr);
        tr_frb_destroy(q);
    }
    free(c0);
    free(c1);
}

/* gpu_compare on two bursts (DM 200 and 450) in 6000 spectra. */
static void gpu_against_cpu(tr_frb_config cfg, int resident, const char *what)
{
    frb_burst b[2] = {{200.0, 1500, 4, 20.0}, {450.0, 3500, 12, 15.0}};
    const size_t n = 6000;
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 5.0, 1.0, b, 2, 21);
    CHECK(x != NULL, "out of memory");
    if (x) gpu_compare(cfg, x, n, 2, resident, what);
    free(x);
}

/* keep_plane on the device-resident chain: the plane comes down with the
 * CPU backend's values (NaN at the same incomplete positions at the end). */
static void gpu_plane(void)
{
    tr_frb_config cfg = small_config();
    cfg.keep_plane = 1;
    tr_error err;
    tr_frb *q[2] = {NULL, NULL};
    for (int k = 0; k < 2; k++) {
        cfg.backend = k ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
        q[k] = tr_frb_create(&cfg, &err);
        CHECK(q[k] != NULL, "create: %s", err.message);
    }
    if (!q[0] || !q[1]) goto done;
    CHECK(tr_frb_device_resident(q[1]) == 1, "plane: not device-resident");
    const size_t n = 2500 + tr_frb_max_delay(q[0]);
    const uint32_t ndm = tr_frb_ndm(q[0]);
    frb_burst b = {300.0, (int64_t)(n - 400), 3, 25.0};
    float *x = frb_make_filterbank(&cfg.dedisp.plan, n, 2.0, 1.0, &b, 1, 5);
    size_t bad = 0, nan_cpu = 0;
    /* calls of 700 spectra, then one flush (the first k >= n) */
    for (size_t k = 0; x && k < n + 700; k += 700) {
        const size_t len = k >= n ? 0 : n - k < 700 ? n - k : 700;
        const float *p[2];
        size_t pn[2];
        for (int j = 0; j < 2; j++) {
            const tr_status st =
                len ? tr_frb_process(q[j], x + k * cfg.dedisp.plan.nchan, len)
                    : tr_frb_flush(q[j]);
            CHECK(st == TR_OK, "plane: %s", tr_frb_last_error(q[j]));
            CHECK(tr_frb_plane(q[j], &p[j], &pn[j], NULL) == TR_OK, "plane");
        }
        CHECK(pn[0] == pn[1], "plane: %zu positions on CUDA, %zu on the CPU", pn[1],
              pn[0]);
        for (size_t i = 0; pn[0] == pn[1] && i < pn[0] * ndm; i++) {
            const float a = p[0][i], g = p[1][i];
            nan_cpu += isnan(a) != 0;
            if (isnan(a) != isnan(g) ||
                (!isnan(a) && fabsf(a - g) > 1e-4f * (1 + fabsf(a))))
                bad++;
        }
    }
    CHECK(nan_cpu > 0 && bad == 0, "plane: %zu values differ (%zu NaN on the CPU)", bad,
          nan_cpu);
    free(x);
done:
    tr_frb_destroy(q[0]);
    tr_frb_destroy(q[1]);
}

/* Scrunching on 64 channels at 25 us, DM 0 to 1000 (factors up to 8): the
 * configurations without (cfg) and with (sc) scrunching, a burst of width 32
 * at a factor-8 trial (b) in n spectra of noise, returned. */
static float *scrunch_case(tr_frb_config *cfg, tr_frb_config *sc, frb_burst *b, size_t *n)
{
    *cfg = frb_small_band(1000.0);
    cfg->dedisp.zero_dm = 0;
    cfg->backend = TR_BACKEND_CPU;
    cfg->dedisp.plan.tsamp = 2.5e-5;
    cfg->search.norm.mode = TR_BOXCAR_NORM_LEVELS;
    *sc = *cfg;
    sc->dedisp.plan.scrunch = 1;
    tr_error err;
    tr_frb *probe = tr_frb_create(sc, &err);
    CHECK(probe != NULL, "create: %s", err.message);
    if (!probe) return NULL;
    const uint32_t ndm = tr_frb_ndm(probe), di = ndm - 5;
    uint32_t *f = malloc(ndm * sizeof *f);
    CHECK(f && tr_dedisp_scrunch_factors(&sc->dedisp.plan, f, ndm, &err) == ndm, "%s",
          err.message);
    CHECK(f && f[0] == 1 && f[di] == 8, "factors %u .. %u", f ? f[0] : 0, f ? f[di] : 0);
    const frb_burst burst = {tr_frb_dms(probe)[di], 6000, 32, 30.0};
    *b = burst;
    *n = 6000 + tr_frb_max_delay(probe) + 4000;
    tr_frb_destroy(probe);
    free(f);
    return frb_make_filterbank(&cfg->dedisp.plan, *n, 20.0, 2.0, b, 1, 11);
}

/* The CUDA backend finds the candidates of the CPU backend: device-resident
 * (the tile of a search up to width 64 divides the window of 1024), and
 * through the host (a window the device normalisation cannot take). */
static int test_gpu(void)
{
    char why[256] = "";
    if (tr_cuda_device_count(why, sizeof why) < 1) {
        printf("test_frb --gpu: skipped (%s)\n", why);
        return 77;
    }
    gpu_against_cpu(small_config(), 1, "device-resident");
    tr_frb_config c = small_config();
    c.search.norm.window = 1000;
    gpu_against_cpu(c, 0, "window 1000, through the host");
    c = small_config();
    c.search.norm.mode = TR_BOXCAR_NORM_LEVELS;
    gpu_against_cpu(c, 1, "device-resident, LEVELS");
    {
        tr_frb_config cfg, sc;
        frb_burst b;
        size_t n = 0;
        float *x = scrunch_case(&cfg, &sc, &b, &n);
        if (x) gpu_compare(sc, x, n, 1, 1, "device-resident, LEVELS, scrunched");
        free(x);
    }
    gpu_plane();
    return tu_finish("test_frb --gpu");
}

/* Scrunching (dedisp's adaptive dt) on 64 channels at 25 us, DM 0 to 1000
 * (factors up to 8): a burst at a factor-8 trial is found as without
 * scrunching, its S/N within 15 % of the unscrunched search's, nothing else;
 * the candidates do not depend on the chunking; WHITE statistics are
 * refused. */
static void test_scrunched(void)
{
    tr_frb_config cfg, sc;
    frb_burst b;
    size_t n = 0;
    tr_error err;
    float *x = scrunch_case(&cfg, &sc, &b, &n);
    tr_frb_candidate *full = malloc(NCAND_MAX * sizeof *full);
    tr_frb_candidate *c = malloc(NCAND_MAX * sizeof *c);
    tr_frb_candidate *c2 = malloc(NCAND_MAX * sizeof *c2);
    if (!x || !full || !c || !c2) {
        CHECK(0, "out of memory");
        goto done;
    }
    const long nf = run(&cfg, x, n, 4096, 0, 1, full, NULL);
    const long nc = run(&sc, x, n, 4096, 0, 1, c, NULL);
    CHECK(nf == 1 && nc == 1, "%ld candidates unscrunched, %ld scrunched for 1 burst", nf,
          nc);
    if (nf == 1 && nc == 1) {
        CHECK(llabs(c[0].sample - full[0].sample) <= (int64_t)b.width &&
                  labs((long)c[0].dm_index - (long)full[0].dm_index) <= 1,
              "scrunched at sample %lld trial %u, unscrunched %lld trial %u",
              (long long)c[0].sample, c[0].dm_index, (long long)full[0].sample,
              full[0].dm_index);
        CHECK(fabs(c[0].snr - full[0].snr) <= 0.15 * full[0].snr,
              "S/N %.2f scrunched, %.2f unscrunched", c[0].snr, full[0].snr);
    }
    const long n2 = run(&sc, x, n, 0, 300, 7, c2, NULL);
    CHECK(same_candidates(c, nc, c2, n2), "scrunched candidates depend on the chunking");
    sc.search.norm.mode = TR_BOXCAR_NORM_WHITE;
    CHECK(tr_frb_create(&sc, &err) == NULL && strstr(err.message, "LEVELS"),
          "WHITE with scrunching: %s", err.message);
done:
    free(x);
    free(full);
    free(c);
    free(c2);
}

int main(int argc, char **argv)
{
    const char *file = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--gpu")) return test_gpu();
        file = argv[i];
    }
    test_errors();
    test_injected();
    test_chunking();
    test_zero_dm();
    test_many_trials();
    test_end_of_data();
    test_scrunched();
    if (file) test_real_file(file);
    return tu_finish("test_frb");
}
