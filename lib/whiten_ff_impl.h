/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_TRANSIENT_WHITEN_FF_IMPL_H
#define INCLUDED_TRANSIENT_WHITEN_FF_IMPL_H

#include "block_util.h"
#include <gnuradio/transient/whiten_ff.h>
#include <transient/whiten.h>
#include <atomic>
#include <vector>

namespace gr
{
namespace transient
{

class whiten_ff_impl : public whiten_ff
{
  private:
    const double d_rate;
    const size_t d_nfft; // PSD grid
    const size_t d_half; // filter taps each side (0: the core's default)
    const tr_backend d_requested;
    const int d_device;
    const size_t d_batch;
    std::atomic<double> d_fmin;
    std::vector<double> d_psd; // empty while estimating

    size_t d_estimate_n;           // samples the estimate is made of
    std::vector<float> d_estimate; // collected so far

    tr_whiten *d_q;
    tr_backend d_backend;
    uint64_t d_latency;
    size_t d_half_used;

    // The last d_latency + d_half_used input samples (ring, zeros before the
    // stream): a new filter sees them before it takes over.
    std::vector<float> d_hist;
    size_t d_hist_pos;
    bool d_rebuild;      // set_fmin: design again at the next call
    uint64_t d_consumed; // samples of this run

    uint64_t d_gated_done;              // gated by filters already replaced
    uint64_t d_gated_base;              // gated by the current filter while primed
    std::atomic<uint64_t> d_gated_seen; // gated outputs, as last logged
    std::atomic<bool> d_estimating;     // the PSD is not there yet

    std::vector<float> d_scratch; // outputs of the priming

    tr_whiten *create(const double *psd, double fmin) const;
    void take_over(tr_whiten *q);
    void finish_estimate();
    void remember(const float *x, size_t n);
    int whiten(int noutput_items, gr_vector_const_void_star &input_items,
               gr_vector_void_star &output_items);

  public:
    whiten_ff_impl(double rate, const std::string &psd_source,
                   const std::string &psd_file, bool asd, double seglen,
                   double estimate_seconds, double fmin, double filter_seconds,
                   const std::string &backend, int device, size_t batch);
    ~whiten_ff_impl() override;

    whiten_ff_impl(const whiten_ff_impl &) = delete;
    whiten_ff_impl &operator=(const whiten_ff_impl &) = delete;

    bool start() override;

    int work(int noutput_items, gr_vector_const_void_star &input_items,
             gr_vector_void_star &output_items) override;

    void set_fmin(double fmin) override;

    double fmin() const override;
    uint64_t latency() const override;
    size_t half_len() const override;
    uint64_t gated() const override;
    bool estimating() const override;
    std::string backend() const override;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_WHITEN_FF_IMPL_H */
