/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: what the blocks need for device-resident buffers (not
 * installed; docs/device-buffers.md): the checks of a device_buffers request,
 * the io_signature with cuda_buffer ports, and the boxcar search's device
 * input path. Without CUDA every request is refused with a clear message.
 */

#ifndef INCLUDED_TRANSIENT_DEVICE_BUFFERS_H
#define INCLUDED_TRANSIENT_DEVICE_BUFFERS_H

#include <gnuradio/block.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/logger.h>
#include <transient/boxcar.h>
#include <transient/common.h>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace gr
{
namespace transient
{
namespace detail
{

//! True when this build has cuda_buffer (built with CUDA).
bool device_buffers_built();

//! Before the core object is made: device_buffers with backend "cpu" is
//! std::invalid_argument; a build without CUDA is std::runtime_error.
void check_device_request(const char *who, tr_backend requested);

//! After the backend is resolved: anything but CUDA (AUTO found no usable
//! GPU) is std::runtime_error with the reason.
void check_device_backend(const char *who, tr_backend resolved, int device);

//! io_signature of min..max streams of itemsize bytes in cuda_buffer memory.
gr::io_signature::sptr device_signature(int min_streams, int max_streams,
                                        std::size_t itemsize);

//! At start(): whether input 0 of b is a cuda_buffer that hands b device
//! memory (logs which path the run takes).
bool input_on_device(gr::block &b, const gr::logger_ptr &logger);

//! At start(): why output 0 of b, a cuda_buffer, cannot serve its readers
//! ("" when it can; cuda_buffer::refusal()).
std::string output_refusal(gr::block &b);

//! Boxcar settings the device path cannot run (std::invalid_argument): complex
//! input, statistics other than "fixed", baseline removal.
void check_boxcar_device(const char *who, bool complex_input,
                         const tr_boxcar_norm_config &norm);

/*!
 * The boxcar search on samples in device memory: tr_boxcar_process_device
 * into device scratch (allocated once), then the S/N and widths copied to
 * the host arrays the block clusters and releases.
 */
class boxcar_device_io
{
  public:
    boxcar_device_io(const char *who, int device, std::size_t max_values);
    ~boxcar_device_io();
    boxcar_device_io(const boxcar_device_io &) = delete;
    boxcar_device_io &operator=(const boxcar_device_io &) = delete;

    //! n samples per channel at d_x (device); results into snr/width (host,
    //! n * nchan each). A core failure is returned (tr_boxcar_last_error); a
    //! failed copy throws std::runtime_error.
    tr_status process(tr_boxcar *q, const float *d_x, std::size_t n, std::size_t nchan,
                      float *snr, int32_t *width);

  private:
    const char *d_who;
    int d_device;
    std::size_t d_max;
    float *d_snr;
    int32_t *d_width;
};

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_DEVICE_BUFFERS_H */
