/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: the dedispersion settings of the block parameters.
 */

#include "dedisp_params.h"
#include "block_util.h"
#include <stdexcept>

namespace gr
{
namespace transient
{
namespace detail
{

tr_error no_error()
{
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    return err;
}

dedisp_params::dedisp_params(const char *who, unsigned int nchan, double fch1,
                             double foff, double tsamp, double dm_min, double dm_max,
                             double tolerance, double pulse_width,
                             const std::vector<double> &dm_list,
                             const std::vector<int> &mask, bool zero_dm,
                             const std::string &scale)
    : d_dms(dm_list)
{
    d_cfg = tr_dedisp_config_default();
    d_cfg.plan.nchan = nchan;
    d_cfg.plan.fch1 = fch1;
    d_cfg.plan.foff = foff;
    d_cfg.plan.tsamp = tsamp;
    d_cfg.plan.dm_min = dm_min;
    d_cfg.plan.dm_max = dm_max;
    d_cfg.plan.tolerance = tolerance;
    d_cfg.plan.pulse_width = pulse_width;
    if (!d_dms.empty()) {
        d_cfg.plan.dm_list = d_dms.data();
        d_cfg.plan.ndm_list = static_cast<uint32_t>(d_dms.size());
    }
    if (!mask.empty()) {
        d_mask.assign(nchan, 1);
        for (const int c : mask) {
            if (c < 0 || static_cast<unsigned int>(c) >= nchan)
                throw std::invalid_argument(std::string(who) + ": mask: channel " +
                                            std::to_string(c) + " is not in [0, " +
                                            std::to_string(nchan) + ")");
            d_mask[static_cast<size_t>(c)] = 0;
        }
        d_cfg.mask = d_mask.data();
    }
    d_cfg.zero_dm = zero_dm ? 1 : 0;
    const std::string s = lower(scale);
    if (s == "sum")
        d_cfg.scale = TR_DEDISP_SUM;
    else if (s == "mean")
        d_cfg.scale = TR_DEDISP_MEAN;
    else
        throw std::invalid_argument(std::string(who) +
                                    ": scale must be \"sum\" or \"mean\", not \"" +
                                    scale + "\"");
}

} // namespace detail
} // namespace transient
} // namespace gr
