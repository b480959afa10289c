/* The DM plan: dedisp's DM list for 29.fil's header and for the synthetic
 * Heimdall file (count and values; expected values computed independently
 * with numpy from the formula in <transient/dedisp.h>, float32 rounding as
 * dedisp), dedisp's scrunch factors for the synthetic file, the delays,
 * and the validation messages. */
#include <math.h>

#include <transient/dedisp.h>

#include "common/test_util.h"

#include <stdlib.h>

typedef struct {
    size_t index;
    double value;
} entry;

/* A plan configuration for a header (the generated list's defaults). */
static tr_dedisp_plan_config header(uint32_t nchan, double fch1, double foff,
                                    double tsamp)
{
    tr_dedisp_plan_config c = tr_dedisp_plan_config_default();
    c.nchan = nchan;
    c.fch1 = fch1;
    c.foff = foff;
    c.tsamp = tsamp;
    return c;
}

static void check_list(const char *what, tr_dedisp_plan_config *c, size_t count,
                       const entry *e, size_t ne)
{
    tr_error err;
    size_t n = tr_dedisp_dm_list(c, NULL, 0, &err);
    CHECK(n == count, "%s: %zu trials, expected %zu (%s)", what, n, count, err.message);
    double *dms = malloc(n * sizeof *dms);
    CHECK(tr_dedisp_dm_list(c, dms, n, &err) == n, "%s: second call", what);
    CHECK(dms[0] == c->dm_min, "%s: first trial %g", what, dms[0]);
    for (size_t i = 0; i < ne; ++i)
        CHECK(e[i].index < n && dms[e[i].index] == e[i].value,
              "%s: dm[%zu] = %.17g, expected %.17g", what, e[i].index,
              e[i].index < n ? dms[e[i].index] : -1.0, e[i].value);
    for (size_t i = 1; i < n; ++i)
        CHECK(dms[i] > dms[i - 1] && (double)(float)dms[i] == dms[i], "%s: trial %zu",
              what, i);
    CHECK(dms[n - 1] >= c->dm_max && dms[n - 2] < c->dm_max, "%s: last trial %g", what,
          dms[n - 1]);
    free(dms);
}

static void test_lists(void)
{
    /* 29.fil: 336 channels, fch1 1465, foff -1, tsamp 0.00126646875. */
    tr_dedisp_plan_config c = header(336, 1465.0, -1.0, 0.00126646875);
    c.dm_min = 0;
    c.dm_max = 2000;
    const entry fil29[] = {{1, 2.9771876335144043}, {2, 5.954071998596191},
                           {10, 29.78668975830078}, {100, 335.52020263671875},
                           {283, 1996.853515625},   {284, 2014.6474609375}};
    check_list("29.fil 0-2000", &c, 285, fil29, 6);
    c.dm_max = 1000;
    const entry fil29b[] = {{206, 997.5809936523438}, {207, 1006.8314819335938}};
    check_list("29.fil 0-1000", &c, 208, fil29b, 2);
    /* Heimdall's synthetic file: 1024 channels, 64 us, fch1 1599.8046875,
     * foff -0.390625 (make_fil.py), DM 0-2000, tolerance 1.25. */
    c = header(1024, 1599.8046875, -0.390625, 64e-6);
    c.dm_max = 2000;
    const entry synth[] = {{1, 0.18713238835334778},   {2, 0.3742627203464508},
                           {10, 1.8714241981506348},   {100, 18.963449478149414},
                           {1420, 1999.4654541015625}, {1421, 2005.2957763671875}};
    check_list("synthetic 0-2000", &c, 1422, synth, 6);
    /* dm_min = dm_max: one trial. */
    c.dm_min = c.dm_max = 300;
    tr_error err;
    CHECK(tr_dedisp_dm_list(&c, NULL, 0, &err) == 1, "single trial");
}

static void test_delays(void)
{
    tr_dedisp_plan_config c = header(336, 1465.0, -1.0, 0.00126646875);
    /* round(4148.808 * DM * (f^-2 - 1465^-2) / tsamp), computed independently */
    CHECK(tr_dedisp_delay(&c, 475.0, 335) == 494, "DM 475 lowest channel: %u",
          tr_dedisp_delay(&c, 475.0, 335));
    CHECK(tr_dedisp_delay(&c, 2014.6474609375, 335) == 2094,
          "latency of the 0-2000 plan");
    CHECK(tr_dedisp_delay(&c, 475.0, 0) == 0, "top channel has no delay");
    c = header(48, 1200.0, 0.5, 1e-3); /* ascending: the reference is the last channel */
    CHECK(tr_dedisp_delay(&c, 100.0, 47) == 0 && tr_dedisp_delay(&c, 100.0, 0) == 11,
          "foff > 0: %u %u", tr_dedisp_delay(&c, 100.0, 47),
          tr_dedisp_delay(&c, 100.0, 0));
    /* The object's latency and channel delays follow the same formula. */
    tr_dedisp_config dc = tr_dedisp_config_default();
    dc.plan = c;
    dc.plan.dm_min = 0;
    dc.plan.dm_max = 100;
    dc.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_dedisp *q = tr_dedisp_create(&dc, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (q) {
        const uint32_t nd = tr_dedisp_ndm(q);
        const double last = tr_dedisp_dms(q)[nd - 1];
        CHECK(tr_dedisp_latency(q) == tr_dedisp_delay(&c, last, 0), "latency %u",
              tr_dedisp_latency(q));
        CHECK(tr_dedisp_channel_delay(q, nd - 1, 0) == tr_dedisp_latency(q),
              "delay table");
        tr_dedisp_destroy(q);
    }
}

/* dedisp's scrunch factors (dedisp_enable_adaptive_dt at Heimdall's 1.15)
 * for the synthetic file, computed independently with numpy in dedisp's
 * float32 arithmetic: the first trial of each factor; none for 29.fil. The
 * object's factors, trial latencies and full-rate work follow. */
static void test_scrunch_factors(void)
{
    tr_dedisp_plan_config c = header(1024, 1599.8046875, -0.390625, 64e-6);
    c.dm_max = 2000;
    c.scrunch = 1;
    tr_error err;
    const size_t n = tr_dedisp_scrunch_factors(&c, NULL, 0, &err);
    CHECK(n == 1422, "synthetic: %zu factors (%s)", n, err.message);
    uint32_t *f = malloc(n * sizeof *f);
    CHECK(f && tr_dedisp_scrunch_factors(&c, f, n, &err) == n, "second call");
    const size_t first[] = {0, 458, 698, 936, 1175, 1413, 1422};
    double work = 0;
    for (size_t k = 0; f && k + 1 < sizeof first / sizeof *first; ++k)
        for (size_t d = first[k]; d < first[k + 1]; ++d) {
            CHECK(f[d] == 1u << k, "synthetic trial %zu: factor %u, expected %u", d, f[d],
                  1u << k);
            work += 1.0 / f[d];
        }
    CHECK(work == 682.53125, "work %.9g full-rate trials", work);
    tr_dedisp_config dc = tr_dedisp_config_default();
    dc.plan = c;
    dc.backend = TR_BACKEND_CPU;
    tr_dedisp *q = tr_dedisp_create(&dc, &err);
    CHECK(q != NULL, "create: %s", err.message);
    if (q) {
        CHECK(tr_dedisp_full_rate_trials(q) == 682.53125 &&
                  tr_dedisp_factor(q, 1413) == 32,
              "object factors");
        /* L_d = (D_d + 1) s_d - 1, D_d the lowest channel's coarse delay */
        for (uint32_t d = 0; d < 1422; d += 101) {
            const uint32_t s = tr_dedisp_factor(q, d),
                           D = tr_dedisp_channel_delay(q, d, 1023);
            CHECK(tr_dedisp_trial_latency(q, d) == (D + 1) * s - 1, "trial %u latency",
                  d);
        }
        const uint32_t L0 = tr_dedisp_delay(&c, tr_dedisp_dms(q)[1421], 1023);
        CHECK(tr_dedisp_latency(q) > L0 && tr_dedisp_latency(q) < L0 + 48,
              "latency %u, unscrunched %u", tr_dedisp_latency(q), L0);
        tr_dedisp_destroy(q);
    }
    free(f);
    c = header(336, 1465.0, -1.0, 0.00126646875);
    c.dm_max = 2000;
    c.scrunch = 1;
    uint32_t g[285];
    CHECK(tr_dedisp_scrunch_factors(&c, g, 285, &err) == 285 && g[284] == 1,
          "29.fil: factor %u at the last trial", g[284]);
}

static void expect_error(tr_dedisp_plan_config c, const char *text)
{
    tr_dedisp_config dc = tr_dedisp_config_default();
    dc.plan = c;
    dc.backend = TR_BACKEND_CPU;
    tr_error err;
    tr_dedisp *q = tr_dedisp_create(&dc, &err);
    CHECK(q == NULL && err.code == TR_ERR_INVALID && strstr(err.message, text),
          "expected '%s', got '%s'", text, err.message);
    tr_dedisp_destroy(q);
}

static void test_errors(void)
{
    const tr_dedisp_plan_config c = header(64, 1500, -1, 1e-3);
    tr_dedisp_plan_config b = c;
    b.nchan = 0;
    expect_error(b, "nchan");
    b = c;
    b.tsamp = 0;
    expect_error(b, "tsamp");
    b = c;
    b.foff = 0;
    expect_error(b, "foff");
    b = c;
    b.foff = -30;
    expect_error(b, "> 0 MHz");
    b = c;
    b.tolerance = 1.0;
    expect_error(b, "tolerance");
    b = c;
    b.dm_min = 10;
    b.dm_max = 5;
    expect_error(b, "dm_min <= dm_max");
    b = c;
    b.pulse_width = NAN;
    expect_error(b, "pulse_width");
    const double neg[] = {0, -1};
    b = c;
    b.dm_list = neg;
    b.ndm_list = 2;
    expect_error(b, "dm_list[1]");
    b = c;
    b.dm_max = 1e9;
    b.tolerance = 100;
    expect_error(b, "largest delay");
    /* scrunch, scrunch_tol, scrunch_first, dm_max of each bad scrunching */
    static const struct {
        int on;
        double tol;
        uint32_t first;
        double dm_max;
        const char *text;
    } bad[] = {{2, 1.15, 1, 1000, "scrunch must be 0 or 1"},
               {1, 1.0, 1, 1000, "scrunch_tol"},
               {1, 1.15, 3, 1000, "scrunch_first"},
               /* every trial doubles the factor */
               {1, 3.0, 1, 3000, "the scrunch factor of trial"}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
        b = c;
        b.scrunch = bad[i].on;
        b.scrunch_tol = bad[i].tol;
        b.scrunch_first = bad[i].first;
        b.dm_max = bad[i].dm_max;
        expect_error(b, bad[i].text);
    }
    tr_dedisp_config dc = tr_dedisp_config_default();
    dc.plan = c;
    uint8_t mask[64] = {0};
    dc.mask = mask;
    tr_error err;
    CHECK(tr_dedisp_create(&dc, &err) == NULL && strstr(err.message, "mask"),
          "empty mask: %s", err.message);
    dc.mask = NULL;
    dc.raw_nbits = 3;
    CHECK(tr_dedisp_create(&dc, &err) == NULL && strstr(err.message, "raw_nbits"), "%s",
          err.message);
}

int main(void)
{
    test_lists();
    test_delays();
    test_scrunch_factors();
    test_errors();
    return tu_finish("test_dedisp_plan");
}
