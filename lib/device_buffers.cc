/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: device-resident buffer support of the blocks
 * (docs/device-buffers.md).
 */

#include "device_buffers.h"
#include "block_util.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#ifdef TR_GR_CUDA_BUFFER
#include <gnuradio/transient/cuda_buffer.h>
#include <cuda_runtime_api.h>
#endif

#include <stdexcept>
#include <string>

namespace gr
{
namespace transient
{
namespace detail
{

bool device_buffers_built()
{
#ifdef TR_GR_CUDA_BUFFER
    return true;
#else
    return false;
#endif
}

void check_device_request(const char *who, tr_backend requested)
{
    if (requested == TR_BACKEND_CPU)
        throw std::invalid_argument(
            std::string(who) +
            ": device_buffers needs the CUDA backend (backend is \"cpu\"); set "
            "backend to \"cuda\" or \"auto\", or device_buffers to False");
    if (!device_buffers_built())
        throw std::runtime_error(std::string(who) +
                                 ": device_buffers needs gr-transient built with "
                                 "CUDA; this build has no CUDA support");
}

void check_device_backend(const char *who, tr_backend resolved, int device)
{
    if (resolved == TR_BACKEND_CUDA) return;
    throw std::runtime_error(std::string(who) +
                             ": device_buffers needs a usable CUDA GPU, backend "
                             "\"auto\" found none (" +
                             cpu_fallback_reason(device) + ")");
}

gr::io_signature::sptr device_signature(int min_streams, int max_streams,
                                        std::size_t itemsize)
{
#ifdef TR_GR_CUDA_BUFFER
    return gr::io_signature::make(min_streams, max_streams, static_cast<int>(itemsize),
                                  cuda_buffer::type);
#else
    (void)min_streams;
    (void)max_streams;
    (void)itemsize;
    throw std::runtime_error("device_buffers: gr-transient was built without CUDA");
#endif
}

bool input_on_device(gr::block &b, const gr::logger_ptr &logger)
{
#ifdef TR_GR_CUDA_BUFFER
    const gr::block_detail_sptr det = b.detail();
    if (det && det->ninputs() > 0 && det->input(0)) {
        const cuda_buffer *cb =
            dynamic_cast<const cuda_buffer *>(det->input(0)->buffer().get());
        if (cb && cb->reads_on_device()) {
            logger->info("device buffers: input read in place from device memory "
                         "(device {})",
                         cb->device());
            return true;
        }
    }
#endif
    (void)b;
    logger->info("device buffers: the upstream output is in host memory, the input "
                 "is copied to the device as with host buffers");
    return false;
}

std::string output_refusal(gr::block &b)
{
#ifdef TR_GR_CUDA_BUFFER
    const gr::block_detail_sptr det = b.detail();
    if (det && det->noutputs() > 0) {
        const cuda_buffer *cb = dynamic_cast<const cuda_buffer *>(det->output(0).get());
        if (cb) return cb->refusal();
    }
#endif
    (void)b;
    return std::string();
}

void check_boxcar_device(const char *who, bool complex_input,
                         const tr_boxcar_norm_config &norm)
{
    if (complex_input)
        throw std::invalid_argument(
            std::string(who) +
            ": device_buffers needs float input (boxcar_search_ff); for complex "
            "samples put transient.power_cf (device_buffers=True) in front of "
            "boxcar_search_ff");
    if (norm.mode != TR_BOXCAR_NORM_FIXED || norm.baseline != TR_BOXCAR_BASELINE_NONE)
        throw std::invalid_argument(
            std::string(who) +
            ": device_buffers needs norm_mode \"fixed\" and baseline_window 0 (the "
            "\"white\" and \"levels\" statistics and the baseline are measured on the "
            "host, which device samples never reach)");
}

#ifdef TR_GR_CUDA_BUFFER

namespace
{
[[noreturn]] void copy_fail(const char *who, const char *call, cudaError_t e)
{
    throw std::runtime_error(std::string(who) + ": device buffers: " + call +
                             " failed: " + cudaGetErrorString(e) + " (" +
                             cudaGetErrorName(e) + ")");
}
} // namespace

#define TR_DEV_CUDA(call)                                                                \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess) copy_fail(d_who, #call, tr_e_);                        \
    } while (0)

boxcar_device_io::boxcar_device_io(const char *who, int device, std::size_t max_values)
    : d_who(who), d_device(device), d_max(max_values), d_snr(nullptr), d_width(nullptr)
{
    TR_DEV_CUDA(cudaSetDevice(d_device));
    TR_DEV_CUDA(cudaMalloc(reinterpret_cast<void **>(&d_snr), d_max * sizeof(float)));
    const cudaError_t e =
        cudaMalloc(reinterpret_cast<void **>(&d_width), d_max * sizeof(int32_t));
    if (e != cudaSuccess) {
        cudaFree(d_snr);
        copy_fail(d_who, "cudaMalloc(width)", e);
    }
}

boxcar_device_io::~boxcar_device_io()
{
    if (cudaSetDevice(d_device) != cudaSuccess) return;
    cudaFree(d_snr);
    cudaFree(d_width);
}

tr_status boxcar_device_io::process(tr_boxcar *q, const float *d_x, std::size_t n,
                                    std::size_t nchan, float *snr, int32_t *width)
{
    const std::size_t values = n * nchan;
    if (values > d_max)
        throw std::runtime_error(std::string(d_who) +
                                 ": device buffers: call larger than the scratch");
    TR_DEV_CUDA(cudaSetDevice(d_device));
    const tr_status st = tr_boxcar_process_device(q, d_x, n, d_snr, d_width);
    if (st != TR_OK) return st;
    // tr_boxcar_process_device returns when its results are in d_snr/d_width.
    TR_DEV_CUDA(cudaMemcpy(snr, d_snr, values * sizeof(float), cudaMemcpyDeviceToHost));
    TR_DEV_CUDA(
        cudaMemcpy(width, d_width, values * sizeof(int32_t), cudaMemcpyDeviceToHost));
    return TR_OK;
}

#else

boxcar_device_io::boxcar_device_io(const char *who, int device, std::size_t max_values)
    : d_who(who), d_device(device), d_max(max_values), d_snr(nullptr), d_width(nullptr)
{
    throw std::runtime_error(std::string(who) +
                             ": device_buffers needs gr-transient built with CUDA");
}

boxcar_device_io::~boxcar_device_io() {}

tr_status boxcar_device_io::process(tr_boxcar *, const float *, std::size_t, std::size_t,
                                    float *, int32_t *)
{
    return TR_ERR_UNSUPPORTED;
}

#endif

} // namespace detail
} // namespace transient
} // namespace gr
