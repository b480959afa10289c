/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: power_cf implementation.
 */

#ifndef INCLUDED_TRANSIENT_POWER_CF_IMPL_H
#define INCLUDED_TRANSIENT_POWER_CF_IMPL_H

#include <gnuradio/transient/cuda_buffer.h>
#include <gnuradio/transient/power_cf.h>
#include <gnuradio/thread/thread.h>
#include <transient/common.h>

namespace gr
{
namespace transient
{
namespace detail
{
struct power_cuda;
}

class power_cf_impl : public power_cf, public device_port
{
  private:
    const unsigned int d_nchan;
    const int d_device;
    const size_t d_batch;
    tr_backend d_backend;
    bool d_device_buffers;
    detail::power_cuda *d_cuda;
    std::string d_refused; // device_buffers_error()

  public:
    power_cf_impl(unsigned int nchan, const std::string &backend, int device,
                  size_t batch, bool device_buffers);
    ~power_cf_impl() override;

    bool start() override;
    int work(int noutput_items, gr_vector_const_void_star &input_items,
             gr_vector_void_star &output_items) override;

    std::string backend() const override;
    bool device_buffers() const override { return d_device_buffers; }
    std::string device_buffers_error() const override;
    unsigned int nchan() const override { return d_nchan; }
    int cuda_device() const override { return d_device; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_POWER_CF_IMPL_H */
