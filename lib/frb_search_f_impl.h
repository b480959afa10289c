/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: frb_search_f implementation over tr_frb.
 */

#ifndef INCLUDED_TRANSIENT_FRB_SEARCH_F_IMPL_H
#define INCLUDED_TRANSIENT_FRB_SEARCH_F_IMPL_H

#include "block_util.h"
#include "held_stream.h"
#include <gnuradio/transient/frb_search_f.h>
#include <pmt/pmt.h>
#include <transient/frb.h>
#include <vector>

namespace gr
{
namespace transient
{

class frb_search_f_impl : public frb_search_f
{
  private:
    const unsigned int d_nchan;
    const bool d_plane;
    tr_frb *d_q;
    double d_fch1, d_foff, d_tsamp; // geometry, checked against "filterbank" tags
    unsigned int d_ndm;
    unsigned int d_max_delay;
    float d_threshold;
    bool d_need_base;
    uint64_t d_base;       // absolute input item of spectrum 0 of the core
    uint64_t d_plane_next; // next plane position expected from the core
    bool d_flushed;        // the stream has ended (core flushed)
    bool d_refused;        // the stream's geometry is not the block's
    uint64_t d_ncands;
    detail::held_fifo<float> d_fifo; // plane items not written yet
    detail::message_batch d_batch;   // dicts of the current detects message
    std::vector<tr_frb_candidate> d_read;
    detail::buffer_pins d_pins;

    const pmt::pmt_t d_port;
    const pmt::pmt_t d_key_pulses;
    const pmt::pmt_t d_key_filterbank;

    void take_plane();
    void read_candidates();
    void end_stream();
    bool geometry_matches(uint64_t from, uint64_t to);

  public:
    frb_search_f_impl(unsigned int nchan, double fch1, double foff, double tsamp,
                      double dm_min, double dm_max, double tolerance, double pulse_width,
                      const std::vector<double> &dm_list, const std::vector<int> &mask,
                      bool zero_dm, const std::string &algorithm,
                      const std::vector<int> &widths, unsigned int depth,
                      unsigned int max_width, float threshold,
                      const std::string &norm_mode, unsigned int window,
                      double reject_sigma, unsigned int link_time, unsigned int link_dm,
                      bool plane_output, const std::string &backend, int device,
                      unsigned int block, const std::vector<int> &devices);
    ~frb_search_f_impl() override;

    bool start() override;
    bool stop() override;
    void forecast(int noutput_items, gr_vector_int &ninput_items_required) override;
    int general_work(int noutput_items, gr_vector_int &ninput_items,
                     gr_vector_const_void_star &input_items,
                     gr_vector_void_star &output_items) override;

    void set_threshold(float threshold) override;
    float threshold() const override;
    unsigned int ndm() const override { return d_ndm; }
    std::vector<double> dms() const override;
    unsigned int max_delay() const override { return d_max_delay; }
    unsigned int latency() const override;
    unsigned int warmup() const override;
    unsigned int nchan() const override { return d_nchan; }
    uint64_t candidates() const override;
    uint64_t searched() const override;
    std::string backend() const override;
    bool device_resident() const override;
    bool plane_output() const override { return d_plane; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_FRB_SEARCH_F_IMPL_H */
