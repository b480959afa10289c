/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: the SPIIR blocks' sink path on the GPU (not installed;
 * docs/spiir.md, GNU Radio blocks).
 */

#ifndef INCLUDED_TRANSIENT_SPIIR_DEVICE_IO_H
#define INCLUDED_TRANSIENT_SPIIR_DEVICE_IO_H

#include <transient/spiir.h>
#include <cstddef>

namespace gr
{
namespace transient
{
namespace detail
{

/*!
 * Device memory for a SPIIR block without its SNR output: a work call's
 * samples go up once, tr_spiir_process_device writes their SNR rows into
 * device memory owned here, and the block searches them there
 * (tr_spiir_triggers_process_device), so that only triggers cross PCIe
 * instead of 8 bytes per template and sample. The blocks make one only with
 * the CUDA backend; in a build without CUDA the constructor throws.
 */
class spiir_device_io
{
  public:
    //! Room for max_samples input samples of sample_bytes bytes each and
    //! their SNR rows (ntemplates complex floats each) on CUDA device
    //! `device`; std::runtime_error when an allocation fails.
    spiir_device_io(const char *who, int device, std::size_t max_samples,
                    std::size_t sample_bytes, unsigned int ntemplates);
    ~spiir_device_io();
    spiir_device_io(const spiir_device_io &) = delete;
    spiir_device_io &operator=(const spiir_device_io &) = delete;

    std::size_t max_samples() const { return d_max; }

    //! x[0, n) (host memory, n <= max_samples()) to the device, then the core
    //! over it into snr(). A core failure is returned (tr_spiir_last_error);
    //! a failed copy throws std::runtime_error.
    tr_status filter(tr_spiir *q, const void *x, std::size_t n);

    //! The SNR rows of the last filter() call (device memory, complete).
    const float *snr() const { return d_snr; }

  private:
    const char *d_who;
    int d_device;
    std::size_t d_max;          // samples
    std::size_t d_sample_bytes; // bytes per input sample
    void *d_x;                  // device: input samples (owns the allocation)
    float *d_snr;               // device: max_samples x ntemplates complex SNR
};

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_SPIIR_DEVICE_IO_H */
