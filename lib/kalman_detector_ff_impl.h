/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: Kalman-bank detector block, implementation over libtransient.
 */

#ifndef INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_IMPL_H
#define INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_IMPL_H

#include "block_util.h"
#include <gnuradio/transient/kalman_detector_ff.h>
#include <pmt/pmt.h>
#include <transient/kalman.h>
#include <vector>

namespace gr
{
namespace transient
{

class kalman_detector_ff_impl : public kalman_detector_ff
{
  private:
    tr_kalman *d_q;
    tr_backend d_backend;

    // Core position 0 is absolute offset d_base (taken on the first call after
    // start()).
    bool d_need_base;
    uint64_t d_base;

    std::vector<uint8_t> d_decision;       // core decisions of one call
    std::vector<tr_kalman_event> d_events; // events drained after each call
    bool d_warned_dropped;

    detail::buffer_pins d_pins; // CUDA: page-locked GNU Radio buffers

    const pmt::pmt_t d_port;
    const pmt::pmt_t d_key_burst;
    const pmt::pmt_t d_key_start;
    const pmt::pmt_t d_key_end;
    const pmt::pmt_t d_key_peak;
    const pmt::pmt_t d_key_peak_llr;
    const pmt::pmt_t d_key_onset;

    void take_events(int noutputs);

  public:
    kalman_detector_ff_impl(unsigned int M, unsigned int Ns, double threshold,
                            double alpha, const std::vector<double> &noise_ar,
                            double noise_var, double meas_var,
                            const std::vector<double> &target_ar, double target_var,
                            const std::string &envelope, double env_param,
                            const std::string &model_file, const std::string &backend,
                            int device, size_t batch);
    ~kalman_detector_ff_impl() override;

    kalman_detector_ff_impl(const kalman_detector_ff_impl &) = delete;
    kalman_detector_ff_impl &operator=(const kalman_detector_ff_impl &) = delete;

    bool start() override;
    bool stop() override;

    int work(int noutput_items, gr_vector_const_void_star &input_items,
             gr_vector_void_star &output_items) override;

    void set_threshold(double threshold) override;
    void set_ns(unsigned int Ns) override;
    void set_alpha(double alpha) override;

    double threshold() const override;
    unsigned int ns() const override;
    double alpha() const override;
    unsigned int M() const override;
    unsigned int Q() const override;
    uint64_t nonfinite() const override;
    std::string backend() const override;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_IMPL_H */
