/*
 * Tests of the FRB search over a device list (tr_frb_config.ndevices): the
 * configuration errors (any machine), and with --gpu the candidates of the
 * DM trials split over the lists {0, 0} and {0, 0, 0} (and {0, 1}, {1, 0, 1}
 * where two GPUs exist) against those of device 0 alone, bit for bit and
 * call by call: random filterbanks with injected bursts (some on the trials
 * where the ranges meet), NaN and Inf samples, random chunkings (one
 * spectrum per call included), blocks of 16384 and 13 spectra, float and
 * packed 8-bit input, measured (WHITE) and given (FIXED, per trial)
 * statistics.
 *
 *   test_frb_devices [--gpu]
 * --gpu: exit 77 without a device.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/test_util.h"
#include "frb_test_signals.h"

#include <transient/frb.h>

#define NCAND_MAX 4096

/* The small band up to DM 1000 on CUDA. */
static tr_frb_config base_config(void)
{
    tr_frb_config c = frb_small_band(1000.0);
    c.backend = TR_BACKEND_CUDA;
    return c;
}

static void set_devices(tr_frb_config *c, const int *dev, uint32_t n)
{
    c->ndevices = n;
    for (uint32_t j = 0; j < n; j++)
        c->devices[j] = dev[j];
}

/* Configurations a device list cannot have: errors at create, whatever the
 * machine (they are checked before any device is touched). */
static void test_errors(void)
{
    tr_error err;
    tr_frb_config c = base_config();
    c.ndevices = TR_FRB_MAX_DEVICES + 1;
    CHECK(tr_frb_create(&c, &err) == NULL && strstr(err.message, "at most"),
          "too many devices: %s", err.message);
    const int neg[2] = {0, -1};
    c = base_config();
    set_devices(&c, neg, 2);
    CHECK(tr_frb_create(&c, &err) == NULL && strstr(err.message, "negative"),
          "a negative device: %s", err.message);
    const int two[2] = {0, 0};
    c = base_config();
    set_devices(&c, two, 2);
    c.backend = TR_BACKEND_CPU;
    CHECK(tr_frb_create(&c, &err) == NULL && strstr(err.message, "CUDA backend"),
          "two devices on the CPU backend: %s", err.message);
    c = base_config();
    set_devices(&c, two, 2);
    c.keep_plane = 1;
    CHECK(tr_frb_create(&c, &err) == NULL && strstr(err.message, "keep_plane"),
          "two devices with keep_plane: %s", err.message);
    const int three[3] = {0, 0, 0};
    const double dms[2] = {100.0, 200.0};
    c = base_config();
    set_devices(&c, three, 3);
    c.dedisp.plan.dm_list = dms;
    c.dedisp.plan.ndm_list = 2;
    CHECK(tr_frb_create(&c, &err) == NULL && strstr(err.message, "3 devices for 2 DM"),
          "three devices for two trials: %s", err.message);
    /* a list of one device is that device (the CPU ignores it) */
    const int one[1] = {0};
    c = base_config();
    set_devices(&c, one, 1);
    c.backend = TR_BACKEND_CPU;
    tr_frb *q = tr_frb_create(&c, &err);
    CHECK(q != NULL && tr_frb_ndevices(q) == 1, "one device on the CPU: %s", err.message);
    tr_frb_destroy(q);
}

/* The filterbank of case `seed`: noise, bursts at DMs across the plan (the
 * boundaries of the ranges of 2 and 3 devices included), a few NaN and Inf. */
static float *make_input(const tr_frb_config *c, size_t n, const double *dms,
                         uint32_t ndm, uint64_t seed)
{
    tu_rng r = {seed};
    frb_burst b[6];
    const uint32_t at[6] = {ndm / 2, ndm / 3, 2 * ndm / 3, ndm - 1, 1, ndm / 2 - 1};
    for (int i = 0; i < 6; i++) {
        b[i].dm = dms[at[i]];
        b[i].start = 1300 + 700 * i + tu_range(&r, 0, 100);
        b[i].width = (uint32_t)tu_range(&r, 1, 40);
        b[i].snr = 12.0 + 10.0 * tu_uniform(&r);
    }
    float *x = frb_make_filterbank(&c->dedisp.plan, n, 4.0, 1.0, b, 6, seed);
    for (int i = 0; x && i < 4; i++) {
        const size_t k = (size_t)tu_range(&r, 0, (long)(n * c->dedisp.plan.nchan - 1));
        x[k] = i % 2 ? NAN : INFINITY;
    }
    return x;
}

/* 8-bit samples of x: round(16 x), clipped to 0..255 (Inf to 255, NaN to 0). */
static uint8_t *pack8(const float *x, size_t nv)
{
    uint8_t *p = malloc(nv);
    for (size_t i = 0; p && i < nv; i++) {
        const float v = 16.0f * x[i];
        p[i] = !(v > 0.0f) ? 0 : v >= 255.0f ? 255 : (uint8_t)lrintf(v);
    }
    return p;
}

typedef struct {
    tr_frb_candidate *c; /* candidates in the order read */
    long n;
    long *after; /* candidates read after each call (calls + 1 entries: the flush) */
    size_t calls;
} frb_run;

/* x (or raw) through a new tr_frb of cfg in the calls of sizes chunks[0 ..
 * ncalls); the candidates read after every call and after the flush. */
static int run(const tr_frb_config *cfg, const float *x, const uint8_t *raw,
               const size_t *chunks, size_t ncalls, frb_run *out, uint32_t *ndev)
{
    tr_error err;
    tr_frb *q = tr_frb_create(cfg, &err);
    CHECK(q != NULL, "create (%u devices): %s", cfg->ndevices, err.message);
    if (!q) return 0;
    CHECK(tr_frb_device_resident(q), "not device-resident");
    *ndev = tr_frb_ndevices(q);
    const uint32_t nchan = cfg->dedisp.plan.nchan;
    out->n = 0;
    out->calls = ncalls;
    int ok = 1;
    size_t k = 0;
    for (size_t i = 0; i <= ncalls && ok; i++) {
        const tr_status st = i == ncalls ? tr_frb_flush(q)
                             : raw ? tr_frb_process_raw(q, raw + k * nchan, chunks[i])
                                   : tr_frb_process(q, x + k * nchan, chunks[i]);
        ok = st == TR_OK;
        CHECK(ok, "call %zu: %s", i, tr_frb_last_error(q));
        if (i < ncalls) k += chunks[i];
        out->n += (long)tr_frb_read(q, out->c + out->n, NCAND_MAX - (size_t)out->n);
        out->after[i] = out->n;
    }
    tr_frb_destroy(q);
    return ok;
}

static int same_candidate(const tr_frb_candidate *a, const tr_frb_candidate *b)
{
    return a->dm == b->dm && a->time == b->time && a->sample == b->sample &&
           a->start == b->start && a->width == b->width && a->snr == b->snr &&
           a->members == b->members && a->dm_index == b->dm_index &&
           a->dm_index_lo == b->dm_index_lo && a->dm_index_hi == b->dm_index_hi &&
           a->first == b->first && a->end == b->end && a->truncated == b->truncated;
}

/* b equals the one-device run a: every candidate, read after the same call. */
static void compare(const frb_run *a, const frb_run *b, const char *what)
{
    CHECK(a->n == b->n, "%s: %ld candidates, one device %ld", what, b->n, a->n);
    int same = a->n == b->n;
    for (long i = 0; same && i < a->n; i++) {
        same = same_candidate(&a->c[i], &b->c[i]);
        CHECK(same,
              "%s: candidate %ld: (%lld, %u, %u, %.9g), one device (%lld, %u, %u, %.9g)",
              what, i, (long long)b->c[i].sample, b->c[i].dm_index, b->c[i].width,
              b->c[i].snr, (long long)a->c[i].sample, a->c[i].dm_index, a->c[i].width,
              a->c[i].snr);
    }
    for (size_t i = 0; same && i <= a->calls; i++) {
        same = a->after[i] == b->after[i];
        CHECK(same, "%s: %ld candidates read after call %zu, one device %ld", what,
              b->after[i], i, a->after[i]);
    }
}

/* One filterbank through every device list in the same calls. mode 0: WHITE
 * statistics; 1: FIXED statistics given per trial (each device must take its
 * own); 2: scrunched (tolerance 1.99: factors 1, 2 from trial 24, 4 from 41
 * of 57, so that parts of a split plan start at factors above 1) with
 * LEVELS. */
static void one_case(uint64_t seed, int ngpu, uint32_t block, int packed, int mode)
{
    tr_frb_config cfg = base_config();
    cfg.block = block;
    if (mode == 2) {
        cfg.dedisp.plan.scrunch = 1;
        cfg.dedisp.plan.scrunch_tol = 1.99;
        cfg.search.norm.mode = TR_BOXCAR_NORM_LEVELS;
    }
    tr_error err;
    const size_t n = 6500;
    const size_t ndm = tr_dedisp_dm_list(&cfg.dedisp.plan, NULL, 0, &err);
    double *dms = malloc(ndm * sizeof *dms);
    double *means = malloc(ndm * sizeof *means);
    double *sigmas = malloc(ndm * sizeof *sigmas);
    size_t *chunks = malloc(n * sizeof *chunks);
    float *x = NULL;
    uint8_t *raw = NULL;
    frb_run one = {malloc(NCAND_MAX * sizeof *one.c), 0, NULL, 0};
    frb_run many = {malloc(NCAND_MAX * sizeof *many.c), 0, NULL, 0};
    if (!dms || !means || !sigmas || !chunks || !one.c || !many.c) goto done;
    tr_dedisp_dm_list(&cfg.dedisp.plan, dms, ndm, &err);
    if (mode == 1) {
        /* zero-DM sums of 64 channels of sigma 1: mean 0, sigma sqrt(63) */
        for (size_t d = 0; d < ndm; d++) {
            means[d] = 0.01 * (double)d - 0.2;
            sigmas[d] = sqrt(63.0) * (1.0 + 0.002 * (double)d);
        }
        cfg.search.norm.mode = TR_BOXCAR_NORM_FIXED;
        cfg.search.norm.fixed_means = means;
        cfg.search.norm.fixed_sigmas = sigmas;
    }
    x = make_input(&cfg, n, dms, (uint32_t)ndm, seed);
    raw = packed && x ? pack8(x, n * cfg.dedisp.plan.nchan) : NULL;
    if (packed) cfg.dedisp.raw_nbits = 8;
    /* calls: one spectrum each over a stretch (odd seeds), then random sizes */
    tu_rng r = {seed * 7 + 1};
    size_t ncalls = 0;
    for (size_t k = 0; k < n; ncalls++) {
        size_t len = k < 1200 && seed % 2 ? 1 : (size_t)tu_range(&r, 1, 3000);
        if (len > n - k) len = n - k;
        chunks[ncalls] = len;
        k += len;
    }
    one.after = malloc((ncalls + 1) * sizeof *one.after);
    many.after = malloc((ncalls + 1) * sizeof *many.after);
    if (!x || (packed && !raw) || !one.after || !many.after) goto done;
    const int d0[1] = {0};
    uint32_t nd = 0;
    set_devices(&cfg, d0, 1);
    if (!run(&cfg, x, raw, chunks, ncalls, &one, &nd)) goto done;
    /* not a vacuous comparison: zero-DM weakens the low-DM and the wide bursts
     * (seed 1 on the CPU backend keeps 4 of 6), noise adds none at S/N 8 */
    CHECK(one.n >= 3, "seed %llu: %ld candidates for 6 bursts", (unsigned long long)seed,
          one.n);
    const int lists[4][3] = {{0, 0, 0}, {0, 0, 0}, {0, 1, 0}, {1, 0, 1}};
    const uint32_t sizes[4] = {2, 3, 2, 3};
    for (int l = 0; l < 4; l++) {
        if (l >= 2 && ngpu < 2) break;
        set_devices(&cfg, lists[l], sizes[l]);
        char what[160];
        int w = snprintf(what, sizeof what, "seed %llu, block %u, %s%s, devices",
                         (unsigned long long)seed, block, packed ? "8-bit" : "float",
                         mode == 1   ? ", FIXED"
                         : mode == 2 ? ", scrunched"
                                     : "");
        for (uint32_t j = 0; j < sizes[l]; j++)
            w += snprintf(what + w, sizeof what - (size_t)w, "%s%d", j ? "," : " ",
                          lists[l][j]);
        if (!run(&cfg, x, raw, chunks, ncalls, &many, &nd)) continue;
        CHECK(nd == sizes[l], "%s: %u devices in use", what, nd);
        compare(&one, &many, what);
    }
done:
    free(dms);
    free(means);
    free(sigmas);
    free(x);
    free(raw);
    free(chunks);
    free(one.c);
    free(many.c);
    free(one.after);
    free(many.after);
}

/* The plan, its delays and the positions of a split search equal one
 * device's. */
static void test_plan(void)
{
    tr_frb_config c = base_config();
    tr_error err;
    tr_frb *one = tr_frb_create(&c, &err);
    const int three[3] = {0, 0, 0};
    set_devices(&c, three, 3);
    tr_frb *many = tr_frb_create(&c, &err);
    CHECK(one && many, "create: %s", err.message);
    if (one && many) {
        const uint32_t ndm = tr_frb_ndm(one);
        CHECK(tr_frb_ndm(many) == ndm &&
                  tr_frb_max_delay(many) == tr_frb_max_delay(one) &&
                  tr_frb_latency(many) == tr_frb_latency(one) &&
                  tr_frb_warmup(many) == tr_frb_warmup(one),
              "plan: %u trials, delay %u, latency %u (one device: %u, %u, %u)",
              tr_frb_ndm(many), tr_frb_max_delay(many), tr_frb_latency(many), ndm,
              tr_frb_max_delay(one), tr_frb_latency(one));
        CHECK(tr_frb_ndm(many) == ndm &&
                  !memcmp(tr_frb_dms(one), tr_frb_dms(many), ndm * sizeof(double)),
              "plan: the DMs differ");
    }
    tr_frb_destroy(one);
    tr_frb_destroy(many);
}

static int test_gpu(void)
{
    char why[256] = "";
    const int ngpu = tr_cuda_device_count(why, sizeof why);
    if (ngpu < 1) {
        printf("test_frb_devices --gpu: skipped (%s)\n", why);
        return 77;
    }
    test_plan();
    for (uint64_t seed = 1; seed <= 6; seed++)
        one_case(seed, ngpu, seed == 3 ? 13 : 16384, seed == 4,
                 seed == 5   ? 1
                 : seed == 6 ? 2
                             : 0);
    return tu_finish("test_frb_devices --gpu");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "--gpu")) return test_gpu();
    test_errors();
    return tu_finish("test_frb_devices");
}
