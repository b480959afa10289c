/* Boxcar search configurations of the C tests: BoxDIT, IGRID and ideal plans
 * and fixed normalisation, built on tr_boxcar_config_default(). */
#ifndef TRANSIENT_TEST_BOXCAR_CONFIGS_H
#define TRANSIENT_TEST_BOXCAR_CONFIGS_H

#include <transient/boxcar.h>

static inline tr_boxcar_config boxdit_list(const uint32_t *b, uint32_t nb,
                                           uint32_t max_width)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_BOXDIT;
    for (uint32_t k = 0; k < nb; k++)
        c.widths[k] = b[k];
    c.nwidths = nb;
    c.max_width = max_width;
    return c;
}

static inline tr_boxcar_config boxdit(uint32_t b, uint32_t max_width)
{
    return boxdit_list(&b, 1, max_width);
}

static inline tr_boxcar_config igrid(uint32_t d, uint32_t layers, uint32_t max_width)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_IGRID;
    c.depth = d;
    c.layers = layers;
    c.max_width = max_width;
    return c;
}

static inline tr_boxcar_config ideal(uint32_t max_width)
{
    tr_boxcar_config c = tr_boxcar_config_default();
    c.algorithm = TR_BOXCAR_IDEAL;
    c.max_width = max_width;
    return c;
}

static inline void fixed_norm(tr_boxcar_config *c, double mean, double sigma)
{
    c->norm.mode = TR_BOXCAR_NORM_FIXED;
    c->norm.fixed_mean = mean;
    c->norm.fixed_sigma = sigma;
}

#endif /* TRANSIENT_TEST_BOXCAR_CONFIGS_H */
