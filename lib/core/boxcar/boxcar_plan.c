/*
 * Boxcar plans: which boxcars BoxDIT, IGRID and the ideal search evaluate
 * (definitions in <transient/boxcar.h>).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * Algorithm 1 and equations 13-15 (BoxDIT), equation 18 and Table 1 (IGRID).
 */
#include "boxcar/boxcar_plan.h"

#include "common/core_util.h"

#include <stdlib.h>
#include <string.h>

tr_boxcar_config tr_boxcar_config_default(void)
{
    tr_boxcar_config c;
    memset(&c, 0, sizeof c);
    c.algorithm = TR_BOXCAR_BOXDIT;
    c.max_width = 1024;
    /* AstroAccelerate's list: 32, 16, 16, 16, then 8 repeating. */
    c.widths[0] = 32;
    c.widths[1] = 16;
    c.widths[2] = 16;
    c.widths[3] = 16;
    c.widths[4] = 8;
    c.nwidths = 5;
    c.depth = 1;
    c.layers = 0;
    c.nchan = 1;
    c.norm = tr_boxcar_norm_config_default();
    c.stage_outputs = 0;
    c.device_layout = TR_BOXCAR_TIME_MAJOR;
    c.backend = TR_BACKEND_AUTO;
    c.device = 0;
    c.variant = TR_VARIANT_FAST;
    c.batch = 65536;
    return c;
}

const char *tr_boxcar_algorithm_name(tr_boxcar_algorithm a)
{
    switch (a) {
    case TR_BOXCAR_BOXDIT:
        return "boxdit";
    case TR_BOXCAR_IGRID:
        return "igrid";
    case TR_BOXCAR_IDEAL:
        return "ideal";
    }
    return "unknown";
}

static int is_pow2(uint32_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* Append a stage, cut after the first width >= max_width; 1 when it was cut. */
static int add_stage(tr_boxcar_plan *p, uint32_t level, uint32_t stride, uint64_t first,
                     uint32_t step, uint32_t count, uint32_t base, uint32_t block,
                     uint32_t max_width)
{
    tr_boxcar_stage *s = &p->stages[p->nstages++];
    s->level = level;
    s->stride = stride;
    s->width_first = (uint32_t)first;
    s->width_step = step;
    s->base = base;
    s->block = block;
    s->nwidths = count;
    /* first + m * step >= max_width for the smallest such m */
    if (first + (uint64_t)(count - 1) * step >= max_width) {
        uint64_t m = first >= max_width ? 0 : (max_width - first + step - 1) / step;
        s->nwidths = (uint32_t)m + 1;
        p->lend = (uint32_t)(first + m * step);
        return 1;
    }
    p->lend = (uint32_t)(first + (uint64_t)(count - 1) * step);
    return 0;
}

tr_status tr_boxcar_plan_build(const tr_boxcar_config *c, tr_boxcar_plan *p,
                               tr_error *err)
{
    memset(p, 0, sizeof *p);
    if (c->max_width < 1 || c->max_width > TR_BOXCAR_MAX_WIDTH)
        return tr_fail(err, TR_ERR_INVALID, "boxcar: max_width must be in 1..%u, got %u",
                       TR_BOXCAR_MAX_WIDTH, c->max_width);
    p->algorithm = c->algorithm;
    const uint32_t W = c->max_width;
    switch (c->algorithm) {
    case TR_BOXCAR_IDEAL:
        add_stage(p, 0, 1, 1, 1, W, 0, 1, W);
        break;
    case TR_BOXCAR_BOXDIT: {
        if (c->nwidths < 1 || c->nwidths > TR_BOXCAR_MAX_LIST)
            return tr_fail(
                err, TR_ERR_INVALID,
                "boxcar: nwidths (entries of the BoxDIT width list) must be in "
                "1..%d, got %u",
                TR_BOXCAR_MAX_LIST, c->nwidths);
        for (uint32_t k = 0; k < c->nwidths; k++) {
            const uint32_t b = c->widths[k];
            if (b < 2 || b > TR_BOXCAR_MAX_BLIST || b % 2 != 0)
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar: BoxDIT width list entry %u must be even and in "
                               "2..%u, got %u",
                               k, TR_BOXCAR_MAX_BLIST, b);
        }
        uint64_t lmax = 0; /* LMAX^{i-1} */
        for (uint32_t i = 0;; i++) {
            if (i >= TR_BOXCAR_MAX_STAGES)
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar: BoxDIT needs more than %d iterations",
                               TR_BOXCAR_MAX_STAGES);
            const uint32_t B = c->widths[i < c->nwidths ? i : c->nwidths - 1];
            const uint64_t d = (uint64_t)1 << i;
            if (add_stage(p, i, (uint32_t)d, lmax + d, (uint32_t)d, B, (uint32_t)lmax,
                          (uint32_t)d, W))
                break;
            lmax += d * B;
        }
        break;
    }
    case TR_BOXCAR_IGRID: {
        if (c->depth < 1 || c->depth > 3)
            return tr_fail(err, TR_ERR_INVALID,
                           "boxcar: IGRID depth must be 1, 2 or 3, got %u", c->depth);
        uint32_t P = c->layers ? c->layers : (2u << c->depth);
        if (!is_pow2(P) || P > TR_BOXCAR_MAX_LAYERS)
            return tr_fail(
                err, TR_ERR_INVALID,
                "boxcar: IGRID layers must be a power of two <= %d (or 0 for the "
                "default), got %u",
                TR_BOXCAR_MAX_LAYERS, c->layers);
        p->depth = c->depth;
        p->layers = P;
        for (uint32_t i = 0;; i++) {
            if (i >= TR_BOXCAR_MAX_STAGES)
                return tr_fail(err, TR_ERR_INVALID,
                               "boxcar: IGRID needs more than %d steps",
                               TR_BOXCAR_MAX_STAGES);
            const uint64_t w = (uint64_t)1 << i;
            const uint32_t stride = w / P > 1 ? (uint32_t)(w / P) : 1;
            const uint32_t dd = i < c->depth ? i : c->depth;
            const uint32_t step = i > c->depth ? 1u << (i - c->depth) : 1;
            if (add_stage(p, i, stride, w, step, 1u << dd, (uint32_t)w, step, W)) break;
        }
        break;
    }
    default:
        return tr_fail(
            err, TR_ERR_INVALID,
            "boxcar: algorithm must be BOXDIT (0), IGRID (1) or IDEAL (2), got %d",
            (int)c->algorithm);
    }
    tr_clear(err);
    return TR_OK;
}

tr_boxcar_plan *tr_boxcar_plan_create(const tr_boxcar_config *cfg, tr_error *err)
{
    if (!cfg) {
        tr_fail(err, TR_ERR_INVALID, "boxcar: NULL configuration");
        return NULL;
    }
    tr_boxcar_plan *p = malloc(sizeof *p);
    if (!p) {
        tr_fail(err, TR_ERR_NOMEM, "boxcar: cannot allocate a plan");
        return NULL;
    }
    if (tr_boxcar_plan_build(cfg, p, err) != TR_OK) {
        free(p);
        return NULL;
    }
    return p;
}

void tr_boxcar_plan_destroy(tr_boxcar_plan *p)
{
    free(p);
}

tr_boxcar_algorithm tr_boxcar_plan_algorithm(const tr_boxcar_plan *p)
{
    return p ? p->algorithm : TR_BOXCAR_BOXDIT;
}
uint32_t tr_boxcar_plan_stages(const tr_boxcar_plan *p)
{
    return p ? p->nstages : 0;
}
const tr_boxcar_stage *tr_boxcar_plan_stage(const tr_boxcar_plan *p, uint32_t i)
{
    return p && i < p->nstages ? &p->stages[i] : NULL;
}
uint32_t tr_boxcar_plan_width(const tr_boxcar_plan *p, uint32_t i, uint32_t m)
{
    const tr_boxcar_stage *s = tr_boxcar_plan_stage(p, i);
    return s && m < s->nwidths ? s->width_first + m * s->width_step : 0;
}
uint32_t tr_boxcar_plan_lend(const tr_boxcar_plan *p)
{
    return p ? p->lend : 0;
}
uint32_t tr_boxcar_plan_latency(const tr_boxcar_plan *p)
{
    return p ? p->lend - 1 : 0;
}
uint32_t tr_boxcar_plan_depth(const tr_boxcar_plan *p)
{
    return p ? p->depth : 0;
}
uint32_t tr_boxcar_plan_layers(const tr_boxcar_plan *p)
{
    return p ? p->layers : 0;
}
double tr_boxcar_plan_boxcars_per_sample(const tr_boxcar_plan *p)
{
    double r = 0;
    for (uint32_t i = 0; p && i < p->nstages; i++)
        r += (double)p->stages[i].nwidths / p->stages[i].stride;
    return r;
}
uint32_t tr_boxcar_plan_total_widths(const tr_boxcar_plan *p)
{
    uint32_t t = 0;
    for (uint32_t i = 0; p && i < p->nstages; i++)
        t += p->stages[i].nwidths;
    return t;
}
uint32_t tr_boxcar_plan_list(const tr_boxcar_plan *p, uint32_t *widths,
                             uint32_t *separations, uint32_t cap)
{
    uint32_t k = 0;
    for (uint32_t i = 0; p && i < p->nstages; i++) {
        const tr_boxcar_stage *s = &p->stages[i];
        for (uint32_t m = 0; m < s->nwidths; m++, k++) {
            if (k >= cap) continue;
            if (widths) widths[k] = s->width_first + m * s->width_step;
            if (separations) separations[k] = s->stride;
        }
    }
    return k;
}
