/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: filterbank_source implementation over tr_filterbank.
 */

#ifndef INCLUDED_TRANSIENT_FILTERBANK_SOURCE_IMPL_H
#define INCLUDED_TRANSIENT_FILTERBANK_SOURCE_IMPL_H

#include <gnuradio/transient/filterbank_source.h>
#include <pmt/pmt.h>
#include <transient/filterbank.h>

namespace gr
{
namespace transient
{

class filterbank_source_impl : public filterbank_source
{
  private:
    tr_filterbank *d_f;
    filterbank_info d_info;
    const uint64_t d_first;
    uint64_t d_count;
    uint64_t d_played; // spectra played in this run
    pmt::pmt_t d_header;

    void add_header_tags();

  public:
    filterbank_source_impl(const std::string &filename, unsigned int nchan,
                           uint64_t first, uint64_t count);
    ~filterbank_source_impl() override;

    bool start() override;
    int work(int noutput_items, gr_vector_const_void_star &input_items,
             gr_vector_void_star &output_items) override;

    filterbank_info info() const override { return d_info; }
    uint64_t count() const override { return d_count; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_FILTERBANK_SOURCE_IMPL_H */
