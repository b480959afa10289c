/*
 * What the tests of the SPIIR trigger variants share: SNR streams with bumps,
 * long decays, plateaus, non-finite, huge and tiny values (variant_snr), and
 * a driver that runs a subject (a variant behind four calls) against the
 * REFERENCE object call by call on random trials: random template counts,
 * windows, thresholds (changed between calls), chunkings (1 sample, random,
 * whole), output capacities (ntemplates up) and dense streams; every call's
 * consumed, nout and triggers bit for bit, then the flush and the position.
 */
#ifndef TRANSIENT_TESTS_SPIIR_TRIGGERS_TEST_DRIVER_H
#define TRANSIENT_TESTS_SPIIR_TRIGGERS_TEST_DRIVER_H

#include <transient/spiir_triggers.h>

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

/* SNR streams for the variant tests: noise of rms `rms`, bumps, long decays
 * like a filter bank's impulse response, plateaus, non-finite values, huge and
 * tiny values. */
static inline void variant_snr(float *snr, size_t n, uint32_t nt, double rms, tu_rng *r)
{
    for (size_t i = 0; i < n * nt * 2; i++)
        snr[i] = (float)(rms * tu_gauss(r));
    const int events = (int)tu_range(r, 0, 6);
    for (int e = 0; e < events && n > 0; e++) {
        const size_t k0 = (size_t)tu_range(r, 0, (long)n - 1);
        const double tau = 1.0 + 300.0 * tu_uniform(r), h = 3.0 + 40.0 * tu_uniform(r);
        for (uint32_t t = 0; t < nt; t++) {
            if (tu_uniform(r) < 0.2) continue;
            const size_t d = (size_t)tu_range(r, 0, 50);
            const double f = 0.3 * tu_uniform(r), ph = 6.28 * tu_uniform(r);
            for (size_t k = k0 + d; k < n && k < k0 + d + (size_t)(8 * tau); k++) {
                const double a = h * exp(-(double)(k - k0 - d) / tau);
                snr[(k * nt + t) * 2] += (float)(a * cos(f * (double)k + ph));
                snr[(k * nt + t) * 2 + 1] += (float)(a * sin(f * (double)k + ph));
            }
        }
    }
    const int specials = (int)tu_range(r, 0, 20);
    const float vals[] = {NAN, INFINITY, -INFINITY, 3e38f, -2e30f, 1e-40f, 0.0f, 30.0f};
    for (int i = 0; i < specials && n > 0; i++) {
        const size_t k = (size_t)tu_range(r, 0, (long)n - 1);
        const uint32_t t = (uint32_t)tu_range(r, 0, nt - 1);
        const int reim = (int)tu_range(r, 0, 1);
        const float v = vals[tu_range(r, 0, 7)];
        /* a plateau of up to 3 equal samples */
        const int len = (int)tu_range(r, 1, 3);
        for (int j = 0; j < len && k + (size_t)j < n; j++)
            snr[((k + (size_t)j) * nt + t) * 2 + reim] = v;
    }
}

static inline int same_trigger(const tr_spiir_trigger *a, const tr_spiir_trigger *b)
{
    return a->sample == b->sample && a->template_index == b->template_index &&
           a->peak == b->peak && a->snr == b->snr && a->re == b->re && a->im == b->im &&
           a->reserved == b->reserved;
}

/* A trial as the subject sees it. */
typedef struct {
    const float *snr; /* the whole stream, n rows of nt templates */
    size_t n;
    uint32_t nt, window;
    float threshold; /* at the start */
    size_t capacity; /* device list entries (0: automatic) */
    uint64_t seed;   /* for the subject's own choices */
} tt_trial;

/* A variant under test: begin a trial, scan rows [k0, k0 + n) with the
 * threshold thr, flush, end the trial. */
typedef struct {
    const char *name;
    int (*begin)(void *u, const tt_trial *tr);
    tr_status (*process)(void *u, size_t k0, size_t n, float thr, tr_spiir_trigger *out,
                         size_t cap, size_t *consumed, size_t *nout);
    tr_status (*flush)(void *u, tr_spiir_trigger *out, size_t cap, size_t *nout);
    void (*end)(void *u);
    void *u;
} tt_subject;

/* Calls compared so far (for the closing line). */
static long tt_calls;

static inline void tt_trial_run(const tt_subject *sub, const tt_trial *tr, int chunking,
                                tu_rng *r)
{
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = tr->nt;
    cfg.threshold = tr->threshold;
    cfg.window = tr->window;
    cfg.variant = TR_VARIANT_REFERENCE;
    cfg.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_spiir_triggers *ref = tr_spiir_triggers_create(&cfg, &err);
    CHECK(ref != NULL, "create the reference: %s", err.message);
    if (!ref) return;
    if (!sub->begin(sub->u, tr)) {
        CHECK(0, "%s: begin", sub->name);
        sub->end(sub->u);
        tr_spiir_triggers_destroy(ref);
        return;
    }
    const uint32_t nt = tr->nt;
    const size_t bufcap = 64 * (size_t)nt + 64;
    tr_spiir_trigger *b0 = (tr_spiir_trigger *)malloc(sizeof *b0 * bufcap);
    tr_spiir_trigger *b1 = (tr_spiir_trigger *)malloc(sizeof *b1 * bufcap);
    size_t done = 0;
    int bad = 0;
    while (done < tr->n && !bad) {
        size_t want = chunking == 0   ? 1
                      : chunking == 1 ? (size_t)tu_range(r, 0, 1500)
                                      : tr->n;
        if (want > tr->n - done) want = tr->n - done;
        const int cc = (int)tu_range(r, 0, 3);
        const size_t cap = cc == 0   ? nt
                           : cc == 1 ? (size_t)tu_range(r, nt, 3 * nt)
                                     : (size_t)tu_range(r, 3 * nt, (long)bufcap);
        if (tu_uniform(r) < 0.05)
            tr_spiir_triggers_set_threshold(ref, (float)(2.0 + 8.0 * tu_uniform(r)));
        const float thr = tr_spiir_triggers_threshold(ref);
        size_t c0 = 0, n0 = 0, c1 = 0, n1 = 0;
        tr_status s0 = tr_spiir_triggers_process(ref, tr->snr + done * nt * 2, want, b0,
                                                 cap, &c0, &n0);
        tr_status s1 = sub->process(sub->u, done, want, thr, b1, cap, &c1, &n1);
        tt_calls++;
        if (s0 != TR_OK || s1 != TR_OK || c0 != c1 || n0 != n1) {
            fprintf(stderr,
                    "%s: call at %zu: status %d/%d, consumed %zu/%zu, nout %zu/%zu "
                    "(reference/subject; cap %zu, want %zu)\n",
                    sub->name, done, (int)s0, (int)s1, c0, c1, n0, n1, cap, want);
            bad++;
            break;
        }
        for (size_t i = 0; i < n0 && !bad; i++)
            if (!same_trigger(&b0[i], &b1[i])) {
                fprintf(stderr,
                        "%s: trigger %zu of the call at %zu: (%llu t%u %.17g %g) != "
                        "reference (%llu t%u %.17g %g)\n",
                        sub->name, i, done, (unsigned long long)b1[i].sample,
                        b1[i].template_index, b1[i].peak, (double)b1[i].snr,
                        (unsigned long long)b0[i].sample, b0[i].template_index,
                        b0[i].peak, (double)b0[i].snr);
                bad++;
            }
        done += c0;
        if (want > 0 && c0 == 0) {
            fprintf(stderr, "%s: no progress\n", sub->name);
            bad++;
        }
    }
    if (!bad) {
        size_t f0 = 0, f1 = 0;
        tr_spiir_triggers_flush(ref, b0, bufcap, &f0);
        const tr_status s = sub->flush(sub->u, b1, bufcap, &f1);
        if (s != TR_OK || f0 != f1) bad++;
        for (size_t i = 0; i < f0 && i < f1; i++)
            if (!same_trigger(&b0[i], &b1[i])) bad++;
        tt_calls++;
    }
    CHECK(
        bad == 0, "%s: nt %u, n %zu, window %u, threshold %g, capacity %zu, chunking %d",
        sub->name, nt, tr->n, tr->window, (double)tr->threshold, tr->capacity, chunking);
    sub->end(sub->u);
    tr_spiir_triggers_destroy(ref);
    free(b0);
    free(b1);
}

/* Random trials: template counts up to max_nt, rows up to max_n; device lists
 * of ntemplates (cut on nearly every trigger) up to automatic. */
static inline void tt_run(const tt_subject *sub, uint64_t seed, int trials,
                          uint32_t max_nt, size_t max_n)
{
    tu_rng r = {seed};
    for (int trial = 0; trial < trials; trial++) {
        tt_trial tr;
        tr.nt = (uint32_t)(tu_uniform(&r) < 0.3 ? tu_range(&r, 1, 8)
                                                : tu_range(&r, 9, (long)max_nt));
        tr.n = (size_t)tu_range(&r, 0, (long)max_n);
        const int wc = (int)tu_range(&r, 0, 3);
        tr.window = wc == 0   ? 1
                    : wc == 1 ? (uint32_t)tu_range(&r, 2, 20)
                    : wc == 2 ? (uint32_t)tu_range(&r, 20, 400)
                              : (uint32_t)tu_range(&r, 400, 3000);
        const int tc = (int)tu_range(&r, 0, 9);
        tr.threshold = tc == 0   ? 0.0f
                       : tc == 1 ? 1e-20f
                       : tc == 2 ? 1e25f
                                 : (float)(2.0 + 8.0 * tu_uniform(&r));
        const int dense = tc > 2 && tu_uniform(&r) < 0.25;
        const double rms = tc == 1 ? 1e-19 : dense ? 3.0 : 1.0;
        const int kc = (int)tu_range(&r, 0, 3);
        tr.capacity = kc == 0   ? tr.nt
                      : kc == 1 ? (size_t)tu_range(&r, tr.nt, 4 * (long)tr.nt)
                                : 0;
        tr.seed = seed * 1000 + (uint64_t)trial;
        float *snr = (float *)malloc(sizeof(float) * (tr.n * tr.nt * 2 + 2));
        variant_snr(snr, tr.n, tr.nt, rms, &r);
        tr.snr = snr;
        tt_trial_run(sub, &tr, trial % 5 == 0 ? 0 : trial % 5 == 1 ? 2 : 1, &r);
        free(snr);
    }
}

#endif /* TRANSIENT_TESTS_SPIIR_TRIGGERS_TEST_DRIVER_H */
