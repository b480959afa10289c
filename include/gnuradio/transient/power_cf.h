/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: power |z|^2 of complex samples, on the CPU or a CUDA GPU.
 */

#ifndef INCLUDED_TRANSIENT_POWER_CF_H
#define INCLUDED_TRANSIENT_POWER_CF_H

#include <gnuradio/sync_block.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <string>

namespace gr
{
namespace transient
{

/*!
 * \brief Power |z|^2 = re^2 + im^2 of complex samples (vector streams of nchan).
 * \ingroup transient
 *
 * \details
 * The front end of a search on complex samples (an SDR capture): power_cf ->
 * boxcar_search_ff gives the same S/N as boxcar_search_cf (which squares on
 * the host), and with device_buffers the power stays on the GPU: power_cf
 * writes it into a cuda_buffer that boxcar_search_ff(device_buffers=True)
 * reads without a copy (docs/device-buffers.md). re^2 + im^2 is rounded the
 * same way on both backends (no fused multiply-add).
 *
 * Parameters
 *   nchan          items per vector (1: a plain stream)
 *   backend        "auto", "cpu" or "cuda"; device: CUDA device index
 *   batch          CUDA: samples per channel per kernel launch
 *   device_buffers CUDA only (off by default): the output is a device buffer
 *                  (cuda_buffer); a host reader gets it copied, a gr-transient
 *                  device block reads it in place. With backend "cpu" this is
 *                  std::invalid_argument, without a usable GPU
 *                  std::runtime_error.
 */
class TRANSIENT_API power_cf : virtual public gr::sync_block
{
  public:
    typedef std::shared_ptr<power_cf> sptr;

    /*!
     * \throws std::invalid_argument on invalid parameters
     * \throws std::runtime_error when the backend or the device buffers cannot
     *         be used
     */
    static sptr make(unsigned int nchan = 1, const std::string &backend = "auto",
                     int device = 0, size_t batch = 65536, bool device_buffers = false);

    //! Backend actually in use: "cpu" or "cuda"
    virtual std::string backend() const = 0;
    //! Whether the output is a device buffer
    virtual bool device_buffers() const = 0;
    /*!
     * \brief Why the device-buffer output was refused in the last run, "" if
     * it was not. A device buffer with more than one reader (fan-out) or a
     * reader with history or a sample delay is refused when the flow graph
     * starts: the block logs the reason as an error and ends its stream at
     * once (GNU Radio 3.10.5 cannot be stopped from there with an exception).
     */
    virtual std::string device_buffers_error() const = 0;
    //! Channels per item
    virtual unsigned int nchan() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_POWER_CF_H */
