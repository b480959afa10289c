/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: the dedispersion settings of the block parameters (not
 * installed), shared by dedisperse_ff and frb_search_f: spectra geometry, DM
 * list, channel mask, zero-DM and scale as a tr_dedisp_config.
 */

#ifndef INCLUDED_TRANSIENT_DEDISP_PARAMS_H
#define INCLUDED_TRANSIENT_DEDISP_PARAMS_H

#include <transient/dedisp.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr
{
namespace transient
{
namespace detail
{

//! An empty tr_error (code TR_OK, no message).
tr_error no_error();

//! A tr_dedisp_config that owns the arrays it points to (the explicit DM
//! list and the channel mask); not copyable, so the pointers stay valid.
class dedisp_params
{
  public:
    //! Validates the block parameters (std::invalid_argument "<who>: ...");
    //! the core validates the rest at create.
    dedisp_params(const char *who, unsigned int nchan, double fch1, double foff,
                  double tsamp, double dm_min, double dm_max, double tolerance,
                  double pulse_width, const std::vector<double> &dm_list,
                  const std::vector<int> &mask, bool zero_dm, const std::string &scale);
    dedisp_params(const dedisp_params &) = delete;
    dedisp_params &operator=(const dedisp_params &) = delete;

    const tr_dedisp_config &config() const { return d_cfg; }
    tr_dedisp_config &config() { return d_cfg; }

  private:
    std::vector<double> d_dms;
    std::vector<uint8_t> d_mask;
    tr_dedisp_config d_cfg;
};

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_DEDISP_PARAMS_H */
