/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: the SPIIR blocks' sink path on the GPU (spiir_device_io.h).
 */

#include "spiir_device_io.h"
#include <stdexcept>
#include <string>

#ifdef GR_TRANSIENT_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

namespace gr
{
namespace transient
{
namespace detail
{

#ifdef GR_TRANSIENT_HAVE_CUDART

namespace
{
// A failed CUDA runtime call as std::runtime_error naming the block and call.
void checked(const char *who, const char *call, cudaError_t e)
{
    if (e == cudaSuccess) return;
    throw std::runtime_error(std::string(who) + ": device trigger search: " + call +
                             " failed: " + cudaGetErrorString(e) + " (" +
                             cudaGetErrorName(e) + ")");
}
} // namespace

spiir_device_io::spiir_device_io(const char *who, int device, std::size_t max_samples,
                                 std::size_t sample_bytes, unsigned int ntemplates)
    : d_who(who), d_device(device), d_max(max_samples), d_sample_bytes(sample_bytes),
      d_x(nullptr), d_snr(nullptr)
{
    // One allocation: the samples, then (256-byte aligned) the SNR rows.
    const std::size_t x_bytes = (d_max * d_sample_bytes + 255) / 256 * 256;
    const std::size_t snr_bytes = d_max * ntemplates * 2 * sizeof(float);
    checked(d_who, "cudaSetDevice", cudaSetDevice(d_device));
    checked(d_who, "cudaMalloc", cudaMalloc(&d_x, x_bytes + snr_bytes));
    d_snr = reinterpret_cast<float *>(static_cast<char *>(d_x) + x_bytes);
}

spiir_device_io::~spiir_device_io()
{
    if (cudaSetDevice(d_device) == cudaSuccess) cudaFree(d_x);
}

tr_status spiir_device_io::filter(tr_spiir *q, const void *x, std::size_t n)
{
    if (n > d_max)
        throw std::logic_error(std::string(d_who) + ": " + std::to_string(n) +
                               " samples exceed the device buffers (" +
                               std::to_string(d_max) + ")");
    if (n == 0) return TR_OK;
    checked(d_who, "cudaSetDevice", cudaSetDevice(d_device));
    // From the page-locked GNU Radio buffer (buffer_pins) a DMA. Complete
    // before the core reads it: from pageable memory a copy may return before
    // its DMA ends, and not every device path of the core waits for the legacy
    // stream (the multirate engine does not).
    checked(d_who, "cudaMemcpyAsync(samples)",
            cudaMemcpyAsync(d_x, x, n * d_sample_bytes, cudaMemcpyHostToDevice,
                            cudaStreamLegacy));
    checked(d_who, "cudaStreamSynchronize", cudaStreamSynchronize(cudaStreamLegacy));
    return tr_spiir_process_device(q, static_cast<const float *>(d_x), n, d_snr);
}

#else

spiir_device_io::spiir_device_io(const char *who, int device, std::size_t max_samples,
                                 std::size_t sample_bytes, unsigned int)
    : d_who(who), d_device(device), d_max(max_samples), d_sample_bytes(sample_bytes),
      d_x(nullptr), d_snr(nullptr)
{
    throw std::runtime_error(std::string(who) +
                             ": the device trigger search needs gr-transient built "
                             "with CUDA");
}

spiir_device_io::~spiir_device_io() {}

tr_status spiir_device_io::filter(tr_spiir *, const void *, std::size_t)
{
    return TR_ERR_UNSUPPORTED;
}

#endif

} // namespace detail
} // namespace transient
} // namespace gr
