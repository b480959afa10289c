/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: edge localizer block, implementation over libtransient.
 */

#ifndef INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_IMPL_H
#define INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_IMPL_H

#include "block_util.h"
#include "held_stream.h"
#include <gnuradio/transient/edge_localizer_f.h>
#include <pmt/pmt.h>
#include <transient/edges.h>
#include <vector>

namespace gr
{
namespace transient
{

class edge_localizer_f_impl : public edge_localizer_f
{
  private:
    tr_edges *d_q;
    const bool d_auto_levels;
    double d_tolerance_pct;
    double d_mid_pct;
    tr_backend d_backend;

    // Stream bookkeeping. Core index i is output offset d_out_base + i (taken on
    // the first call after start()).
    bool d_need_base;
    bool d_levels_known; // the core has reference levels (always with fixed ones)
    uint64_t d_out_base;
    uint64_t d_fed;      // samples given to the core since start()
    uint64_t d_known;    // samples whose transitions are known (core position)
    uint64_t d_released; // samples written to the output since start()
    size_t d_hold_limit; // extra samples the FIFO may hold while the core holds

    // Samples consumed but not released yet: the samples d_released,
    // d_released + 1, ...
    detail::held_fifo<float> d_fifo;

    std::vector<tr_edge> d_edges;  // core output buffer (pre-sized)
    detail::pending_tags d_tags;   // transitions waiting for their sample
    detail::message_batch d_batch; // dicts of the current detects message
    // msg_format "vectors": the current message's transitions, column-wise.
    const bool d_vectors;
    std::vector<double> d_vtime;
    std::vector<int8_t> d_vpolarity;
    std::vector<uint64_t> d_vsample;
    // metrics: finished records not yet published (times relative to the core)
    const bool d_metrics;
    std::vector<tr_edge_metric> d_metric_recs;
    bool d_metrics_finished; // the end of the stream finished the last records
    bool d_warned_late;

    // What the transitions of this call are needed for (set per work call):
    // tags (the output is connected), detects messages (the port has
    // subscribers). Without either the block only runs the core.
    bool d_want_tags;
    bool d_want_msgs;
    int d_saved_multiple; // output multiple while a run without output uses 1
    size_t d_max_call;    // no output: samples per call at most
    size_t d_call_cap;    // no output: samples per call while transitions are dense
    size_t d_call_edges;  // transitions found in the current call

    detail::buffer_pins d_pins; // CUDA: page-locked GNU Radio buffers
    detail::async_copy d_copy;  // pass-through copy while the core runs

    const pmt::pmt_t d_port;
    const pmt::pmt_t d_key_edge;
    const pmt::pmt_t d_key_edges;
    const pmt::pmt_t d_key_time;
    const pmt::pmt_t d_key_polarity;
    const pmt::pmt_t d_key_sample;
    // The (polarity . +1) and (polarity . -1) entries, shared by every dict.
    const pmt::pmt_t d_pol_rise;
    const pmt::pmt_t d_pol_fall;

    void reset_stream();
    void run_core(const float *x, size_t n);
    void flush_core();
    void update_known();
    void take_edges(const tr_edge *e, size_t n);
    void take_metrics();
    pmt::pmt_t metrics_message() const;
    void publish_batch();
    pmt::pmt_t edge_dict(uint64_t offset, double time, int32_t polarity) const;
    bool has_output() const;
    bool pmt_per_edge() const;
    size_t call_limit(size_t n) const;
    void adapt_call_cap(size_t samples);
    bool msgs_subscribed();
    int work_no_output(int noutput_items, int ninput_items, const float *in);
    [[noreturn]] void fail(tr_status st, const char *what) const;

  public:
    edge_localizer_f_impl(bool auto_levels, float low, float mid, float high,
                          double tolerance_pct, double mid_pct, unsigned int hist_bins,
                          size_t level_samples, uint64_t level_interval,
                          const std::string &backend, int device, size_t batch,
                          const std::string &msg_format, bool metrics);
    ~edge_localizer_f_impl() override;

    edge_localizer_f_impl(const edge_localizer_f_impl &) = delete;
    edge_localizer_f_impl &operator=(const edge_localizer_f_impl &) = delete;

    bool start() override;
    bool stop() override;

    void forecast(int noutput_items, gr_vector_int &ninput_items_required) override;

    int general_work(int noutput_items, gr_vector_int &ninput_items,
                     gr_vector_const_void_star &input_items,
                     gr_vector_void_star &output_items) override;

    void set_levels(float low, float mid, float high) override;
    void set_tolerance_pct(double tolerance_pct) override;
    void set_mid_pct(double mid_pct) override;
    void set_percentages(double tolerance_pct, double mid_pct) override;

    float low() const override;
    float mid() const override;
    float high() const override;
    bool levels_known() const override;
    double tolerance_pct() const override { return d_tolerance_pct; }
    double mid_pct() const override { return d_mid_pct; }
    bool auto_levels() const override { return d_auto_levels; }
    std::string backend() const override;
    std::string msg_format() const override { return d_vectors ? "vectors" : "dicts"; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_IMPL_H */
