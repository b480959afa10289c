/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: dedisperse_ff implementation over tr_dedisp.
 */

#ifndef INCLUDED_TRANSIENT_DEDISPERSE_FF_IMPL_H
#define INCLUDED_TRANSIENT_DEDISPERSE_FF_IMPL_H

#include "block_util.h"
#include "held_stream.h"
#include <gnuradio/transient/dedisperse_ff.h>
#include <transient/dedisp.h>
#include <vector>

namespace gr
{
namespace transient
{

class dedisperse_ff_impl : public dedisperse_ff
{
  private:
    const unsigned int d_nchan;
    tr_dedisp *d_q;
    unsigned int d_ndm;
    unsigned int d_latency;
    bool d_flushed; // the stream has ended (core flushed)
    // Output items decided but not written yet: the flushed end of the stream.
    detail::held_fifo<float> d_fifo;
    std::vector<float> d_scratch; // outputs of the positions before 0
    detail::buffer_pins d_pins;

    void run(const float *in, size_t n, float *out);

  public:
    dedisperse_ff_impl(unsigned int nchan, double fch1, double foff, double tsamp,
                       double dm_min, double dm_max, double tolerance, double pulse_width,
                       const std::vector<double> &dm_list, const std::vector<int> &mask,
                       bool zero_dm, const std::string &scale, const std::string &backend,
                       int device, size_t batch);
    ~dedisperse_ff_impl() override;

    bool start() override;
    bool stop() override;
    void forecast(int noutput_items, gr_vector_int &ninput_items_required) override;
    int general_work(int noutput_items, gr_vector_int &ninput_items,
                     gr_vector_const_void_star &input_items,
                     gr_vector_void_star &output_items) override;

    unsigned int ndm() const override { return d_ndm; }
    std::vector<double> dms() const override;
    unsigned int latency() const override { return d_latency; }
    unsigned int delay(unsigned int d, unsigned int c) const override;
    unsigned int nchan() const override { return d_nchan; }
    unsigned int nused() const override;
    std::string backend() const override;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_DEDISPERSE_FF_IMPL_H */
