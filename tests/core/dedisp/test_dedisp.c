/*
 * Dedispersion against an oracle written here from the definition in
 * <transient/dedisp.h> (delays from the formula, zero padding past the end,
 * float32 sums in channel order): every variant, random plans with both
 * foff signs, masks, zero-DM, both scales, random chunkings down to 1,
 * packed input of every nbits straight and through the filterbank reader,
 * NaN input, reset, flush; time scrunching (plan.scrunch) with the factors
 * of dedisp's rule computed here in its float32 arithmetic, the block means
 * by their recursive definition. With --gpu the CUDA backend (host, packed
 * and device entry points, both device layouts); exit 77 without a GPU.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>

#include <transient/dedisp.h>
#include <transient/filterbank.h>

#include "bench_device.h"
#include "common/test_util.h"
#include "dedisp/fil_writer.h"

#include <stdlib.h>
#include <unistd.h>

typedef struct {
    tr_dedisp_config cfg;
    uint8_t mask[96];
    double dms[24];
    uint32_t nbits; /* sample values are integers in range for nbits < 32 */
} test_case;

static int use_gpu;

/* dedisp's smearing (get_smearing) as <transient/dedisp.h> writes it. */
static float dedisp_smear(const tr_dedisp_plan_config *p, uint32_t s, float dm, float ddm)
{
    const float dt = (float)s * (float)p->tsamp;
    const float w = (float)((float)p->pulse_width * 1e-6);
    const float bw = (float)p->nchan * fabsf((float)p->foff);
    const float fc = (float)p->fch1 - bw / 2;
    const float inv = (float)(1.0 / (fc * fc * fc));
    const float a = (float)(8.3 * bw * dm * inv);
    const float b = (float)(8.3 / 4 * bw * (double)p->nchan * ddm * inv);
    return sqrtf(dt * dt + w * w + a * a + b * b);
}

/* dedisp's scrunch factor of every trial (1 when the plan does not scrunch). */
static void oracle_factors(const tr_dedisp_plan_config *p, uint32_t *f)
{
    f[0] = p->scrunch ? p->scrunch_first : 1;
    for (uint32_t d = 1; d < p->ndm_list; ++d) {
        const float dm = (float)p->dm_list[d], ddm = dm - (float)p->dm_list[d - 1];
        const int twice = p->scrunch && dedisp_smear(p, 2 * f[d - 1], dm, ddm) /
                                                dedisp_smear(p, f[d - 1], dm, ddm) <
                                            (float)p->scrunch_tol;
        f[d] = twice ? 2 * f[d - 1] : f[d - 1];
    }
}

/* Block mean X_s[q] of channel ch (zero outside the n spectra xs). */
static float block_mean(const float *xs, size_t n, uint32_t nchan, uint32_t ch, int64_t q,
                        uint32_t s)
{
    if (s == 1) return q >= 0 && (size_t)q < n ? xs[(size_t)q * nchan + ch] : 0.0f;
    return (block_mean(xs, n, nchan, ch, 2 * q, s / 2) +
            block_mean(xs, n, nchan, ch, 2 * q + 1, s / 2)) *
           0.5f;
}

/* Oracle: the whole stream's expected outputs, positions -L .. N-1 (N + L),
 * L the object's latency, checked against the definition. */
static float *oracle(const tr_dedisp_config *c, const float *x, size_t n, uint32_t L,
                     uint32_t *ndm_out)
{
    const tr_dedisp_plan_config *p = &c->plan;
    const uint32_t nchan = p->nchan, ndm = p->ndm_list;
    uint32_t f[64];
    oracle_factors(p, f);
    const double fref = p->foff > 0 ? p->fch1 + (nchan - 1) * p->foff : p->fch1;
    uint32_t nused = 0;
    for (uint32_t ch = 0; ch < nchan; ++ch)
        nused += !c->mask || c->mask[ch];
    float *xs = malloc((n ? n : 1) * nchan * sizeof(float));
    for (size_t k = 0; k < n; ++k) {
        float mean = 0.0f;
        if (c->zero_dm) {
            float s = 0.0f;
            for (uint32_t ch = 0; ch < nchan; ++ch)
                if (!c->mask || c->mask[ch]) s += x[k * nchan + ch];
            mean = s / (float)nused;
        }
        for (uint32_t ch = 0; ch < nchan; ++ch)
            xs[k * nchan + ch] = x[k * nchan + ch] - mean;
    }
    float *y = calloc((n + L) * ndm + 1, sizeof(float));
    double want_L = 0;
    for (uint32_t d = 0; d < ndm; ++d) {
        const double flow = p->foff > 0 ? p->fch1 : p->fch1 + (nchan - 1) * p->foff;
        const double low =
            floor(TR_DEDISP_KDM * p->dm_list[d] *
                      (1.0 / (flow * flow) - 1.0 / (fref * fref)) / p->tsamp / f[d] +
                  0.5);
        if ((low + 1) * f[d] - 1 > want_L) want_L = (low + 1) * f[d] - 1;
    }
    CHECK(want_L == L, "latency %u, expected %.0f", L, want_L);
    for (size_t p0 = 0; p0 < n; ++p0)
        for (uint32_t d = 0; d < ndm; ++d) {
            float s = 0.0f;
            const int64_t q = (int64_t)p0 / f[d];
            for (uint32_t ch = 0; ch < nchan; ++ch) {
                if (c->mask && !c->mask[ch]) continue;
                const double fc = p->fch1 + ch * p->foff;
                const double delay =
                    floor(TR_DEDISP_KDM * p->dm_list[d] *
                              (1.0 / (fc * fc) - 1.0 / (fref * fref)) / p->tsamp / f[d] +
                          0.5);
                s += block_mean(xs, n, nchan, ch, q + (int64_t)delay, f[d]);
            }
            y[(L + p0) * ndm + d] = c->scale == TR_DEDISP_MEAN ? s / (float)nused : s;
        }
    free(xs);
    *ndm_out = ndm;
    return y;
}

static int same(float a, float b)
{
    return (isnan(a) && isnan(b)) || !memcmp(&a, &b, sizeof a);
}

/* Compare a whole stream's outputs with the oracle; returns mismatches. */
static size_t compare(const float *got, const float *want, size_t count, const char *what)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < count; ++i)
        if (!same(got[i], want[i]) && bad++ == 0) first = i;
    CHECK(bad == 0, "%s: %zu of %zu outputs differ, first at %zu: %.9g vs %.9g", what,
          bad, count, first, bad ? got[first] : 0, bad ? want[first] : 0);
    return bad;
}

static void random_case(tu_rng *r, test_case *t)
{
    tr_dedisp_config *c = &t->cfg;
    *c = tr_dedisp_config_default();
    const uint32_t nbits_list[] = {1, 2, 4, 8, 16, 32};
    t->nbits = nbits_list[tu_range(r, 0, 5)];
    c->raw_nbits = t->nbits;
    c->plan.nchan = 8 * (uint32_t)tu_range(r, 1, 12);
    c->plan.tsamp = 1e-3 * (0.5 + tu_uniform(r));
    c->plan.foff = (tu_range(r, 0, 1) ? 1 : -1) * (0.5 + 2 * tu_uniform(r));
    c->plan.fch1 =
        c->plan.foff < 0 ? 400 + 200 * tu_uniform(r) : 200 + 100 * tu_uniform(r);
    c->plan.ndm_list = (uint32_t)tu_range(r, 1, 24);
    for (uint32_t d = 0; d < c->plan.ndm_list; ++d)
        t->dms[d] = d == 0 && tu_range(r, 0, 1) ? 0.0 : 60 * tu_uniform(r);
    c->plan.dm_list = t->dms;
    c->mask = NULL;
    if (tu_range(r, 0, 1)) {
        for (uint32_t ch = 0; ch < c->plan.nchan; ++ch)
            t->mask[ch] = tu_uniform(r) < 0.8;
        t->mask[tu_range(r, 0, c->plan.nchan - 1)] = 1;
        c->mask = t->mask;
    }
    c->zero_dm = (int)tu_range(r, 0, 1);
    c->scale = tu_range(r, 0, 1) ? TR_DEDISP_MEAN : TR_DEDISP_SUM;
    c->nthreads = (uint32_t)tu_range(r, 0, 3);
    if (tu_range(r, 0, 1)) {
        /* scrunched: increasing trials, as a generated list */
        c->plan.scrunch = 1;
        c->plan.scrunch_tol = 1.05 + 0.5 * tu_uniform(r);
        c->plan.scrunch_first = 1u << tu_range(r, 0, 2);
        for (uint32_t d = 1; d < c->plan.ndm_list; ++d)
            t->dms[d] = t->dms[d - 1] + 8 * tu_uniform(r);
    }
}

static float *random_input(tu_rng *r, size_t n, uint32_t nchan, uint32_t nbits)
{
    float *x = malloc((n ? n : 1) * nchan * sizeof(float));
    for (size_t i = 0; i < n * nchan; ++i)
        x[i] = nbits == 32 ? (float)(10 * tu_gauss(r))
                           : (float)tu_range(r, 0, (1L << (nbits < 16 ? nbits : 12)) - 1);
    return x;
}

/* Next chunk length: all 1, or random up to max. */
static size_t chunk(tu_rng *r, int ones, size_t left)
{
    size_t m = ones ? 1 : (size_t)tu_range(r, 0, 300);
    return m < left ? m : left;
}

/* Packed copy of x for raw input. */
static unsigned char *pack(const float *x, size_t n, uint32_t nchan, uint32_t nbits)
{
    unsigned char *raw = malloc(n * nchan * 4 + 1);
    fw_pack(x, n * nchan, nbits, raw);
    return raw;
}

/* Run a whole stream in random chunks (host float or packed entry point). */
static float *run_stream(tr_dedisp *q, const float *x, const unsigned char *raw, size_t n,
                         uint32_t nchan, uint32_t nbits, tu_rng *r, int ones)
{
    const uint32_t ndm = tr_dedisp_ndm(q), L = tr_dedisp_latency(q);
    float *y = malloc((n + L) * ndm * sizeof(float) + 4);
    const size_t rb = (size_t)nchan * nbits / 8;
    for (size_t done = 0; done < n;) {
        size_t m = chunk(r, ones, n - done);
        tr_status s = raw ? tr_dedisp_process_raw(q, raw + done * rb, m, y + done * ndm)
                          : tr_dedisp_process(q, x + done * nchan, m, y + done * ndm);
        CHECK(s == TR_OK, "process: %s", tr_dedisp_last_error(q));
        done += m;
    }
    CHECK(tr_dedisp_position(q) == n, "position");
    CHECK(tr_dedisp_flush(q, y + n * ndm) == TR_OK, "flush: %s", tr_dedisp_last_error(q));
    return y;
}

static void test_variants(void)
{
    tu_rng r = {2026};
    int scrunched = 0; /* cases whose factors grow along the list */
    for (int it = 0; it < 60; ++it) {
        test_case t;
        random_case(&r, &t);
        tr_dedisp_config *c = &t.cfg;
        const uint32_t nchan = c->plan.nchan;
        const size_t n = (size_t)tu_range(&r, 0, 900);
        float *x = random_input(&r, n, nchan, t.nbits);
        unsigned char *raw =
            t.nbits == 32 || tu_range(&r, 0, 2) ? pack(x, n, nchan, t.nbits) : NULL;
        const int nv = use_gpu ? 1 : 2;
        for (int v = 0; v < nv; ++v) {
            c->variant = use_gpu ? TR_VARIANT_FAST
                         : v     ? TR_VARIANT_FAST
                                 : TR_VARIANT_REFERENCE;
            c->backend = use_gpu ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
            c->batch = use_gpu ? (size_t)tu_range(&r, 1, 700) : 16384;
            tr_error err;
            tr_dedisp *q = tr_dedisp_create(c, &err);
            CHECK(q != NULL, "create: %s", err.message);
            if (!q) continue;
            const uint32_t L = tr_dedisp_latency(q);
            uint32_t ndm, f[64];
            oracle_factors(&c->plan, f);
            for (uint32_t d = 0; d < c->plan.ndm_list; ++d)
                CHECK(tr_dedisp_factor(q, d) == f[d],
                      "case %d trial %u: factor %u, not %u", it, d,
                      tr_dedisp_factor(q, d), f[d]);
            if (v == 0) scrunched += f[c->plan.ndm_list - 1] > f[0];
            float *want = oracle(c, x, n, L, &ndm);
            char what[160];
            snprintf(
                what, sizeof what,
                "case %d %s nchan %u foff %+.2f ndm %u L %u mask %d zero_dm %d mean %d "
                "nbits %u raw %d factors %u..%u",
                it, tr_variant_name(c->variant), nchan, c->plan.foff, ndm, L,
                c->mask != NULL, c->zero_dm, c->scale, t.nbits, raw != NULL, f[0],
                f[ndm - 1]);
            float *y = run_stream(q, x, raw, n, nchan, t.nbits, &r, it % 10 == 0);
            compare(y, want, (n + L) * ndm, what);
            free(y);
            /* After reset the same stream again, other chunks. */
            CHECK(tr_dedisp_process(q, x, 0, NULL) == TR_ERR_STATE,
                  "process after flush");
            CHECK(tr_dedisp_reset(q) == TR_OK, "reset");
            y = run_stream(q, x, NULL, n, nchan, t.nbits, &r, 0);
            compare(y, want, (n + L) * ndm, "after reset");
            free(y);
            free(want);
            tr_dedisp_destroy(q);
        }
        free(x);
        free(raw);
    }
    CHECK(scrunched >= 5, "only %d cases with growing scrunch factors", scrunched);
}

/* Real-valued input with NaN and Inf: outputs that contain them (and, with
 * zero-DM, every output summing their spectrum) follow the oracle's IEEE sums. */
static void test_nonfinite(void)
{
    tu_rng r = {11};
    for (int zero_dm = 0; zero_dm <= 1; ++zero_dm) {
        test_case t;
        random_case(&r, &t);
        t.cfg.zero_dm = zero_dm;
        t.cfg.backend = use_gpu ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
        const uint32_t nchan = t.cfg.plan.nchan;
        const size_t n = 200;
        float *x = random_input(&r, n, nchan, 32);
        x[50 * nchan + 3 % nchan] = NAN;
        x[120 * nchan] = INFINITY;
        for (int v = 0; v < (use_gpu ? 1 : 2); ++v) {
            t.cfg.variant = v ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
            tr_error err;
            tr_dedisp *q = tr_dedisp_create(&t.cfg, &err);
            CHECK(q != NULL, "%s", err.message);
            if (!q) continue;
            uint32_t ndm;
            const uint32_t L = tr_dedisp_latency(q);
            float *want = oracle(&t.cfg, x, n, L, &ndm);
            float *y = run_stream(q, x, NULL, n, nchan, 32, &r, 0);
            compare(y, want, (n + L) * ndm, "non-finite input");
            free(y);
            free(want);
            tr_dedisp_destroy(q);
        }
        free(x);
    }
}

/* Packed files of every nbits through the reader into process_raw. */
static void test_reader_chain(void)
{
    tu_rng r = {5};
    static const uint32_t bits[] = {1, 2, 4, 8, 16, 32};
    char path[256];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/tr_dedisp_%ld.fil", dir ? dir : "/tmp",
             (long)getpid());
    for (unsigned b = 0; b < 6; ++b) {
        test_case t;
        random_case(&r, &t);
        t.nbits = t.cfg.raw_nbits = bits[b];
        t.cfg.backend = use_gpu ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
        const uint32_t nchan = t.cfg.plan.nchan;
        const size_t n = 300;
        float *x = random_input(&r, n, nchan, t.nbits);
        unsigned char *raw = pack(x, n, nchan, t.nbits);
        FILE *fp = fopen(path, "wb");
        fw_header(fp, nchan, t.nbits, t.cfg.plan.tsamp, t.cfg.plan.fch1, t.cfg.plan.foff);
        fw_bytes(fp, raw, n * nchan * t.nbits / 8);
        fclose(fp);
        tr_error err;
        tr_filterbank *f = tr_filterbank_open(path, &err);
        tr_dedisp *q = tr_dedisp_create(&t.cfg, &err);
        CHECK(f && q, "open/create: %s", err.message);
        if (f && q) {
            const uint32_t ndm = tr_dedisp_ndm(q), L = tr_dedisp_latency(q);
            float *y = malloc((n + L) * ndm * sizeof(float));
            unsigned char *buf = malloc(64 * nchan * 4);
            size_t done = 0, got = 0;
            while (tr_filterbank_read_raw(f, buf, (size_t)tu_range(&r, 1, 64), &got) ==
                       TR_OK &&
                   got) {
                CHECK(tr_dedisp_process_raw(q, buf, got, y + done * ndm) == TR_OK, "%s",
                      tr_dedisp_last_error(q));
                done += got;
            }
            CHECK(done == n && tr_dedisp_flush(q, y + n * ndm) == TR_OK, "read %zu",
                  done);
            uint32_t nd;
            float *want = oracle(&t.cfg, x, n, L, &nd);
            char what[64];
            snprintf(what, sizeof what, "reader chain nbits %u", t.nbits);
            compare(y, want, (n + L) * ndm, what);
            free(want);
            free(y);
            free(buf);
        }
        tr_filterbank_close(f);
        tr_dedisp_destroy(q);
        free(x);
        free(raw);
    }
    unlink(path);
}

/* Device entry points: float and packed input, both layouts, flush. */
static void test_device(void)
{
    tu_rng r = {99};
    for (int it = 0; it < 16; ++it) {
        test_case t;
        random_case(&r, &t);
        t.cfg.backend = TR_BACKEND_CUDA;
        t.cfg.device_layout = it % 2 ? TR_DEDISP_DM_MAJOR : TR_DEDISP_SAMPLE_MAJOR;
        t.cfg.batch = (size_t)tu_range(&r, 1, 500);
        const int packed = it % 4 >= 2;
        const uint32_t nchan = t.cfg.plan.nchan;
        const size_t n = (size_t)tu_range(&r, 1, 800);
        float *x = random_input(&r, n, nchan, t.nbits);
        unsigned char *raw = pack(x, n, nchan, t.nbits);
        tr_error err;
        tr_dedisp *q = tr_dedisp_create(&t.cfg, &err);
        CHECK(q != NULL, "%s", err.message);
        if (!q) continue;
        const uint32_t ndm = tr_dedisp_ndm(q), L = tr_dedisp_latency(q);
        const size_t maxm = 300 > L ? 300 : L;
        void *d_x = NULL, *d_y = NULL;
        tr_bench_dev_alloc(0, maxm * nchan * sizeof(float) + 4, &d_x);
        tr_bench_dev_alloc(0, maxm * ndm * sizeof(float) + 4, &d_y);
        float *y = malloc((n + L) * ndm * sizeof(float) + 4);
        float *part = malloc(maxm * ndm * sizeof(float) + 4);
        size_t done = 0;
        for (int last = 0; !last;) {
            size_t m = chunk(&r, 0, n - done);
            tr_status s;
            if (done == n) {
                last = 1;
                m = L;
                s = tr_dedisp_flush_device(q, (float *)d_y);
            } else if (packed) {
                s = tr_dedisp_process_raw_device(q, raw + done * nchan * t.nbits / 8, m,
                                                 (float *)d_y);
            } else {
                tr_bench_dev_upload(d_x, x + done * nchan, m * nchan * sizeof(float));
                s = tr_dedisp_process_device(q, (const float *)d_x, m, (float *)d_y);
            }
            CHECK(s == TR_OK, "device call: %s", tr_dedisp_last_error(q));
            tr_bench_dev_download(part, d_y, m * ndm * sizeof(float));
            for (size_t k = 0; k < m; ++k)
                for (uint32_t d = 0; d < ndm; ++d)
                    y[(done + k) * ndm + d] = t.cfg.device_layout == TR_DEDISP_DM_MAJOR
                                                  ? part[d * m + k]
                                                  : part[k * ndm + d];
            done += m;
        }
        uint32_t nd;
        float *want = oracle(&t.cfg, x, n, L, &nd);
        char what[96];
        snprintf(what, sizeof what, "device case %d layout %d packed %d nbits %u", it,
                 (int)t.cfg.device_layout, packed, t.nbits);
        compare(y, want, (n + L) * ndm, what);
        free(want);
        free(y);
        free(part);
        tr_bench_dev_free(d_x);
        tr_bench_dev_free(d_y);
        tr_dedisp_destroy(q);
        free(x);
        free(raw);
    }
}

/* The CPU backend refuses device buffers. */
static void test_cpu_device_refused(void)
{
    test_case t;
    tu_rng r = {3};
    random_case(&r, &t);
    t.cfg.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_dedisp *q = tr_dedisp_create(&t.cfg, &err);
    float y[4096];
    CHECK(q && tr_dedisp_process_device(q, y, 1, y) == TR_ERR_UNSUPPORTED,
          "device on CPU");
    tr_dedisp_destroy(q);
}

int main(int argc, char **argv)
{
    use_gpu = argc > 1 && !strcmp(argv[1], "--gpu");
    if (use_gpu) {
        char why[256];
        if (tr_cuda_device_count(why, sizeof why) == 0) {
            printf("test_dedisp --gpu: skipped (%s)\n", why);
            return 77;
        }
    }
    test_variants();
    test_nonfinite();
    test_reader_chain();
    if (use_gpu)
        test_device();
    else
        test_cpu_device_refused();
    return tu_finish(use_gpu ? "test_dedisp --gpu" : "test_dedisp");
}
