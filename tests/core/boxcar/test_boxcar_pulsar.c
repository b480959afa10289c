/*
 * The boxcar search, normalisation and candidates on a real recording: the
 * de-dispersed time series of PSR J1807-0847 (examples/data/
 * GBT_J1807-0847.dat, PRESTO float32, 131072 samples of 163.84 us; see
 * examples/data/README.md). Its values sit near 4.45e5 with a drifting
 * baseline, so the search needs the baseline removal and robust statistics.
 *
 * Checks, for the running median (MEDIAN) and the block-median (BLOCK_MEDIAN)
 * baselines with WHITE statistics (optimized CPU variant, random chunks):
 * one event per rotation, the first statistics window included (no event is allowed
 * to be missing in more than 3 rotations and no rotation has two), all at
 * the same phase of the period (residuals below 5% of a period), the period
 * fitted to the event starts within 0.05% of the folding period 0.16372 s,
 * and no event off the pulse phase. Without baseline removal the same search
 * misses rotations (the check that the test can fail).
 *
 * Usage: test_boxcar_pulsar FILE.dat
 */
#include <transient/boxcar.h>
#include <transient/candidates.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/test_util.h"

#define TSAMP  0.00016384
#define PERIOD 0.16372 /* s, from folding (examples/data/README.md) */

typedef struct {
    size_t n;
    double period, rms, smin, smax;
    int doubles, missing;
} result_t;

static result_t search(const float *x, size_t n, tr_boxcar_baseline_mode bl, tu_rng *r)
{
    result_t res = {0, 0, 0, INFINITY, 0, 0, 0};
    tr_boxcar_config cfg = tr_boxcar_config_default(); /* BoxDIT 32,16,16,16,8 */
    cfg.max_width = 256;
    cfg.backend = TR_BACKEND_CPU;
    cfg.norm.mode = TR_BOXCAR_NORM_WHITE;
    cfg.norm.window = 4096;
    cfg.norm.baseline = bl;
    cfg.norm.baseline_window = 2048;
    tr_error err;
    tr_boxcar *q = tr_boxcar_create(&cfg, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (!q) return res;
    const uint32_t lat = tr_boxcar_latency(q);
    tr_candidates_config cc = tr_candidates_config_default();
    cc.threshold = 8.0f;
    cc.start_position = -(int64_t)lat;
    tr_candidates *cand = tr_candidates_create(&cc, &err);
    float *y = malloc((n + lat) * sizeof *y);
    int32_t *w = malloc((n + lat) * sizeof *w);
    size_t k = 0;
    while (k < n) {
        size_t m = (size_t)tu_range(r, 1, 20000);
        if (m > n - k) m = n - k;
        CHECK(tr_boxcar_process(q, x + k, m, y + k, w + k) == TR_OK, "process");
        k += m;
    }
    CHECK(tr_boxcar_flush(q, y + n, w + n) == TR_OK, "flush");
    /* the first window too: it is normalised by its own statistics */
    tr_candidates_process(cand, y, w, n + lat);
    tr_candidates_flush(cand);
    tr_candidate *ev = malloc(4096 * sizeof *ev);
    const size_t ne = tr_candidates_read(cand, ev, 4096);
    res.n = ne;
    if (ne >= 2 && ne < 1000) {
        /* least-squares period over the rotation numbers of the starts */
        const double P0 = PERIOD / TSAMP;
        double *rot = malloc(ne * sizeof *rot);
        for (size_t i = 0; i < ne; i++)
            rot[i] = floor((ev[i].start - ev[0].start) / P0 + 0.5);
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (size_t i = 0; i < ne; i++) {
            sx += rot[i];
            sy += (double)ev[i].start;
            sxx += rot[i] * rot[i];
            sxy += rot[i] * (double)ev[i].start;
        }
        const double P = (ne * sxy - sx * sy) / (ne * sxx - sx * sx);
        const double t0 = (sy - P * sx) / ne;
        double rr = 0;
        for (size_t i = 0; i < ne; i++) {
            const double d = ((double)ev[i].start - t0 - P * rot[i]) / P;
            rr += d * d;
            if (i && rot[i] == rot[i - 1]) res.doubles++;
            if (ev[i].snr < res.smin) res.smin = ev[i].snr;
            if (ev[i].snr > res.smax) res.smax = ev[i].snr;
        }
        res.period = P * TSAMP;
        res.rms = sqrt(rr / ne);
        res.missing = (int)(rot[ne - 1] + 1) - (int)ne + res.doubles;
        free(rot);
    }
    free(ev);
    free(y);
    free(w);
    tr_candidates_destroy(cand);
    tr_boxcar_destroy(q);
    return res;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.dat\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 1;
    }
    const size_t n = 131072;
    float *x = malloc(n * sizeof *x);
    const size_t got = fread(x, sizeof *x, n, f);
    fclose(f);
    CHECK(got == n, "read %zu samples", got);
    tu_rng r = {2021};
    const tr_boxcar_baseline_mode modes[2] = {TR_BOXCAR_BASELINE_MEDIAN,
                                              TR_BOXCAR_BASELINE_BLOCK_MEDIAN};
    static const char *names[2] = {"running median", "block median"};
    /* rotations in the record, the first statistics window included */
    const double rotations = n * TSAMP / PERIOD;
    for (int m = 0; m < 2; m++) {
        const result_t s = search(x, n, modes[m], &r);
        printf("%s: %zu events, period %.6f s, phase rms %.4f, S/N %.1f..%.1f, "
               "missing %d, doubles %d\n",
               names[m], s.n, s.period, s.rms, s.smin, s.smax, s.missing, s.doubles);
        CHECK(s.n + 3 >= (size_t)rotations && s.n <= (size_t)rotations + 1,
              "%s: %zu events for %.1f rotations", names[m], s.n, rotations);
        CHECK(s.doubles == 0 && s.missing <= 3, "%s: doubles %d missing %d", names[m],
              s.doubles, s.missing);
        CHECK(fabs(s.period / PERIOD - 1.0) < 5e-4 && s.rms < 0.05,
              "%s: period %.6f rms %.4f", names[m], s.period, s.rms);
        CHECK(s.smin >= 8.0 && s.smax < 200.0, "%s: S/N %.1f..%.1f", names[m], s.smin,
              s.smax);
    }
    /* without baseline removal the drifting baseline costs pulses: the
     * checks above would fail (the test can fail) */
    const result_t s = search(x, n, TR_BOXCAR_BASELINE_NONE, &r);
    printf("no baseline removal: %zu events, missing %d, phase rms %.4f\n", s.n,
           s.missing, s.rms);
    CHECK(s.missing > 3, "no baseline removal: only %d rotations missing", s.missing);
    free(x);
    return tu_finish("test_boxcar_pulsar");
}
