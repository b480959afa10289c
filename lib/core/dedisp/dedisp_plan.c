/*
 * DM trials and dispersion delays (<transient/dedisp.h>).
 *
 * DM list: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012), section 2.3 (L. Levin's tolerance recursion), with
 * the float32 rounding of the library dedisp so that the list is its list.
 * Delay: D. R. Lorimer, M. Kramer, "Handbook of Pulsar Astronomy", eq. 5.1.
 */
#include "common/core_util.h"
#include "dedisp/dedisp_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int finite_d(double v)
{
    return (v - v) == 0.0;
}

tr_dedisp_plan_config tr_dedisp_plan_config_default(void)
{
    tr_dedisp_plan_config c = {0};
    c.nchan = 0;
    c.dm_min = 0.0;
    c.dm_max = 1000.0;
    c.tolerance = 1.25;
    c.pulse_width = 40.0;
    c.scrunch = 0;
    c.scrunch_tol = 1.15;
    c.scrunch_first = 1;
    return c;
}

double tr_dedisp_fref(const tr_dedisp_plan_config *cfg)
{
    return cfg->foff > 0 ? cfg->fch1 + (double)(cfg->nchan - 1) * cfg->foff : cfg->fch1;
}

tr_status tr_dedisp_plan_validate(const tr_dedisp_plan_config *cfg, tr_error *err)
{
    if (!cfg) return tr_fail(err, TR_ERR_INVALID, "dedisp: NULL plan configuration");
    if (cfg->nchan < 1 || cfg->nchan > TR_DEDISP_MAX_NCHAN)
        return tr_fail(err, TR_ERR_INVALID, "dedisp: nchan must be in 1..%u, got %u",
                       TR_DEDISP_MAX_NCHAN, cfg->nchan);
    if (!finite_d(cfg->tsamp) || cfg->tsamp <= 0 || (float)cfg->tsamp <= 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: tsamp must be > 0 and finite, got %g", cfg->tsamp);
    if (!finite_d(cfg->foff) || cfg->foff == 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: foff must be non-zero and finite, got %g", cfg->foff);
    double flow =
        cfg->foff > 0 ? cfg->fch1 : cfg->fch1 + (double)(cfg->nchan - 1) * cfg->foff;
    if (!finite_d(cfg->fch1) || !(flow > 0))
        return tr_fail(
            err, TR_ERR_INVALID,
            "dedisp: every channel frequency must be > 0 MHz (fch1 = %g, foff = "
            "%g, nchan = %u: lowest %g)",
            cfg->fch1, cfg->foff, cfg->nchan, flow);
    if (cfg->scrunch != 0 && cfg->scrunch != 1)
        return tr_fail(err, TR_ERR_INVALID, "dedisp: scrunch must be 0 or 1, got %d",
                       cfg->scrunch);
    if (cfg->scrunch && (!finite_d(cfg->scrunch_tol) || (float)cfg->scrunch_tol <= 1.0f))
        return tr_fail(err, TR_ERR_INVALID, "dedisp: scrunch_tol must be > 1, got %g",
                       cfg->scrunch_tol);
    if (cfg->scrunch &&
        (cfg->scrunch_first == 0 || (cfg->scrunch_first & (cfg->scrunch_first - 1)) ||
         cfg->scrunch_first > TR_DEDISP_MAX_DELAY))
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: scrunch_first must be a power of two up to %u, got %u",
                       TR_DEDISP_MAX_DELAY, cfg->scrunch_first);
    if (cfg->scrunch && !finite_d(cfg->pulse_width))
        return tr_fail(err, TR_ERR_INVALID, "dedisp: pulse_width must be finite, got %g",
                       cfg->pulse_width);
    if (cfg->dm_list) {
        if (cfg->ndm_list < 1 || cfg->ndm_list > TR_DEDISP_MAX_NDM)
            return tr_fail(err, TR_ERR_INVALID,
                           "dedisp: ndm_list must be in 1..%u, got %u", TR_DEDISP_MAX_NDM,
                           cfg->ndm_list);
        for (uint32_t i = 0; i < cfg->ndm_list; ++i)
            if (!finite_d(cfg->dm_list[i]) || cfg->dm_list[i] < 0)
                return tr_fail(err, TR_ERR_INVALID,
                               "dedisp: dm_list[%u] = %g: must be >= 0 and finite", i,
                               cfg->dm_list[i]);
        return TR_OK;
    }
    if (!finite_d(cfg->dm_min) || cfg->dm_min < 0 || !finite_d(cfg->dm_max) ||
        cfg->dm_max < cfg->dm_min)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: need 0 <= dm_min <= dm_max (finite), got %g .. %g",
                       cfg->dm_min, cfg->dm_max);
    if (!finite_d(cfg->tolerance) || (float)cfg->tolerance <= 1.0f)
        return tr_fail(err, TR_ERR_INVALID, "dedisp: tolerance must be > 1, got %g",
                       cfg->tolerance);
    if (!finite_d(cfg->pulse_width) || cfg->pulse_width < 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "dedisp: pulse_width must be >= 0 us and finite, got %g",
                       cfg->pulse_width);
    return TR_OK;
}

size_t tr_dedisp_dm_list(const tr_dedisp_plan_config *cfg, double *dms, size_t cap,
                         tr_error *err)
{
    if (tr_dedisp_plan_validate(cfg, err) != TR_OK) return 0;
    /* dedisp keeps tsamp, frequencies and the arguments as float32 and widens
     * them to double for the recursion. */
    const double dt = (double)(float)cfg->tsamp * 1e6; /* us */
    const double ti = (double)(float)cfg->pulse_width;
    const double f0 = (double)(float)cfg->fch1, df = (double)(float)cfg->foff;
    const double tol = (double)(float)cfg->tolerance;
    const float end = (float)cfg->dm_max;
    const size_t nchan = cfg->nchan;
    /* Band centre in GHz (dedisp's integer nchan / 2). */
    const double f = (f0 + ((double)(nchan / 2) - 0.5) * df) * 1e-3;
    const double tol2 = tol * tol;
    const double a = 8.3 * df / (f * f * f); /* intra-channel smearing per DM, us */
    const double a2 = a * a;
    const double b2 = a2 * ((double)(nchan * nchan) / 16.0); /* DM-step smearing */
    const double c = (dt * dt + ti * ti) * (tol2 - 1.0);
    float dm = (float)cfg->dm_min;
    size_t count = 0;
    for (;;) {
        if (count == TR_DEDISP_MAX_NDM) {
            tr_fail(
                err, TR_ERR_INVALID,
                "dedisp: the DM list %g .. %g at tolerance %g has more than %u trials",
                cfg->dm_min, cfg->dm_max, cfg->tolerance, TR_DEDISP_MAX_NDM);
            return 0;
        }
        if (dms && count < cap) dms[count] = dm;
        ++count;
        if (!(dm < end)) break;
        const double prev = dm, prev2 = prev * prev;
        const double k = c + tol2 * a2 * prev2;
        const float next =
            (float)((b2 * prev + sqrt(-a2 * b2 * prev2 + (a2 + b2) * k)) / (a2 + b2));
        if (!(next > dm)) {
            tr_fail(
                err, TR_ERR_INVALID,
                "dedisp: the DM list stops growing at %g (tolerance %g too close to 1?)",
                (double)dm, cfg->tolerance);
            return 0;
        }
        dm = next;
    }
    tr_clear(err);
    return count;
}

/* dedisp's get_smearing in its float32 arithmetic: the sampling time dt and
 * the pulse width w in s, the smearing within a channel at dm and across the
 * step ddm from the previous trial (its MHz and s units kept). */
static float smearing(float dt, float w, float f0, float df, uint32_t nchan, float dm,
                      float ddm)
{
    const float bw = (float)nchan * fabsf(df);
    const float fc = f0 - bw / 2;
    const float inv_fc3 = (float)(1. / (fc * fc * fc));
    const float t_dm = (float)(8.3 * bw * dm * inv_fc3);
    const float t_ddm = (float)(8.3 / 4 * bw * (double)nchan * ddm * inv_fc3);
    return sqrtf(dt * dt + w * w + t_dm * t_dm + t_ddm * t_ddm);
}

/* dedisp's generate_scrunch_list from factor `first` on. */
tr_status tr_dedisp_scrunch_list(const tr_dedisp_plan_config *cfg, const double *dms,
                                 size_t ndm, uint32_t *out, tr_error *err)
{
    const float dt = (float)cfg->tsamp, w = (float)((float)cfg->pulse_width * 1e-6);
    const float f0 = (float)cfg->fch1, df = (float)cfg->foff;
    const float tol = (float)cfg->scrunch_tol;
    out[0] = cfg->scrunch ? cfg->scrunch_first : 1u;
    for (size_t d = 1; d < ndm; ++d) {
        out[d] = out[d - 1];
        if (!cfg->scrunch) continue;
        const float dm = (float)dms[d], ddm = dm - (float)dms[d - 1];
        const float s1 = smearing((float)out[d - 1] * dt, w, f0, df, cfg->nchan, dm, ddm);
        const float s2 =
            smearing((float)(out[d - 1] * 2) * dt, w, f0, df, cfg->nchan, dm, ddm);
        if (!(s2 / s1 < tol)) continue;
        if (out[d - 1] >= TR_DEDISP_MAX_DELAY)
            return tr_fail(err, TR_ERR_INVALID,
                           "dedisp: the scrunch factor of trial %zu (DM %g) exceeds %u "
                           "(scrunch_tol %g too large?)",
                           d, dms[d], TR_DEDISP_MAX_DELAY, cfg->scrunch_tol);
        out[d] = out[d - 1] * 2;
    }
    return TR_OK;
}

size_t tr_dedisp_scrunch_factors(const tr_dedisp_plan_config *cfg, uint32_t *factors,
                                 size_t cap, tr_error *err)
{
    if (tr_dedisp_plan_validate(cfg, err) != TR_OK) return 0;
    const size_t ndm =
        cfg->dm_list ? cfg->ndm_list : tr_dedisp_dm_list(cfg, NULL, 0, err);
    if (ndm == 0) return 0;
    double *dms = (double *)malloc(ndm * sizeof *dms);
    uint32_t *f = (uint32_t *)malloc(ndm * sizeof *f);
    size_t count = 0;
    if (!dms || !f) {
        tr_fail(err, TR_ERR_NOMEM, "dedisp: out of memory for %zu scrunch factors", ndm);
    } else {
        if (cfg->dm_list)
            memcpy(dms, cfg->dm_list, ndm * sizeof *dms);
        else
            tr_dedisp_dm_list(cfg, dms, ndm, err);
        if (tr_dedisp_scrunch_list(cfg, dms, ndm, f, err) == TR_OK) {
            if (factors) memcpy(factors, f, (ndm < cap ? ndm : cap) * sizeof *f);
            count = ndm;
            tr_clear(err);
        }
    }
    free(dms);
    free(f);
    return count;
}

/* K_DM * (f_c^-2 - f_ref^-2) / tsamp: delay per unit DM in samples. */
static double delay_per_dm(const tr_dedisp_plan_config *cfg, uint32_t c)
{
    const double fc = cfg->fch1 + (double)c * cfg->foff, fref = tr_dedisp_fref(cfg);
    return TR_DEDISP_KDM * (1.0 / (fc * fc) - 1.0 / (fref * fref)) / cfg->tsamp;
}

uint32_t tr_dedisp_delay(const tr_dedisp_plan_config *cfg, double dm, uint32_t c)
{
    return tr_dedisp_coarse_delay(cfg, dm, 1, c);
}

uint32_t tr_dedisp_coarse_delay(const tr_dedisp_plan_config *cfg, double dm, uint32_t s,
                                uint32_t c)
{
    double v = floor(dm * delay_per_dm(cfg, c) / s + 0.5);
    return v <= 0                             ? 0u
           : v >= (double)TR_DEDISP_MAX_DELAY ? TR_DEDISP_MAX_DELAY
                                              : (uint32_t)v;
}

tr_status tr_dedisp_build_delays(const tr_dedisp_plan_config *cfg, const double *dms,
                                 const uint32_t *factors, uint32_t ndm,
                                 const uint32_t *chans, uint32_t nused, uint32_t **out,
                                 uint32_t *trial_lat, uint32_t *latency, tr_error *err)
{
    /* A trial's latency counts its largest delay over every channel, masked
     * ones included, so that it does not change with the mask: the lowest
     * channel's. Block q of factor s needs spectra up to (q + D + 1) s - 1. */
    const uint32_t clow = cfg->foff > 0 ? 0 : cfg->nchan - 1;
    double top = 0;
    uint32_t dtop = 0;
    for (uint32_t d = 0; d < ndm; ++d) {
        const double s = factors[d];
        const double v =
            (floor(dms[d] * delay_per_dm(cfg, clow) / s + 0.5) + 1.0) * s - 1.0;
        if (v > top) {
            top = v;
            dtop = d;
        }
        trial_lat[d] =
            v >= (double)TR_DEDISP_MAX_DELAY ? TR_DEDISP_MAX_DELAY : (uint32_t)v;
    }
    if (top >= (double)TR_DEDISP_MAX_DELAY)
        return tr_fail(
            err, TR_ERR_INVALID,
            "dedisp: largest delay %.0f samples exceeds %u (DM %g at scrunch factor "
            "%u too large for tsamp %g)",
            top, TR_DEDISP_MAX_DELAY, dms[dtop], factors[dtop], cfg->tsamp);
    uint32_t *t = (uint32_t *)malloc((size_t)ndm * nused * sizeof *t);
    if (!t)
        return tr_fail(err, TR_ERR_NOMEM, "dedisp: out of memory for %u x %u delays", ndm,
                       nused);
    for (uint32_t d = 0; d < ndm; ++d)
        for (uint32_t j = 0; j < nused; ++j)
            t[(size_t)d * nused + j] =
                tr_dedisp_coarse_delay(cfg, dms[d], factors[d], chans[j]);
    *out = t;
    *latency = (uint32_t)top;
    return TR_OK;
}
