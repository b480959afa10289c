/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: power |z|^2 of complex samples, CPU or CUDA, with an
 * optional device-buffer output (docs/device-buffers.md).
 */

#include "power_cf_impl.h"
#include "block_util.h"
#include "device_buffers.h"
#ifdef TR_GR_CUDA_BUFFER
#include "power/power_cuda.h"
#endif
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

namespace gr
{
namespace transient
{

namespace
{
const char *const k_who = "power_cf";
}

power_cf::sptr power_cf::make(unsigned int nchan, const std::string &backend, int device,
                              size_t batch, bool device_buffers)
{
    return gnuradio::make_block_sptr<power_cf_impl>(nchan, backend, device, batch,
                                                    device_buffers);
}

power_cf_impl::power_cf_impl(unsigned int nchan, const std::string &backend, int device,
                             size_t batch, bool device_buffers)
    : gr::sync_block(
          k_who, gr::io_signature::make(1, 1, sizeof(gr_complex) * std::max(nchan, 1u)),
          gr::io_signature::make(1, 1, sizeof(float) * std::max(nchan, 1u))),
      d_nchan(nchan), d_device(device), d_batch(batch), d_backend(TR_BACKEND_CPU),
      d_device_buffers(device_buffers), d_cuda(nullptr)
{
    if (nchan < 1) throw std::invalid_argument("power_cf: nchan must be >= 1");
    const tr_backend requested = detail::parse_backend(k_who, backend);
    if (device_buffers) detail::check_device_request(k_who, requested);
    if (requested != TR_BACKEND_CPU) {
        if (batch == 0 || batch > static_cast<size_t>(INT_MAX) / nchan)
            throw std::invalid_argument("power_cf: batch must be in [1, " +
                                        std::to_string(INT_MAX / nchan) + "]");
        char why[TR_ERROR_MESSAGE_LEN];
        why[0] = '\0';
        const int ndev = tr_cuda_device_count(why, sizeof(why));
        const bool usable = device >= 0 && device < ndev;
        if (requested == TR_BACKEND_CUDA && !usable)
            throw std::runtime_error("power_cf: backend cuda: " +
                                     detail::cpu_fallback_reason(device));
        if (usable) d_backend = TR_BACKEND_CUDA;
    }
    if (d_device_buffers) detail::check_device_backend(k_who, d_backend, device);
    if (requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA)
        detail::log_cpu_fallback(d_logger, device);
    if (d_backend == TR_BACKEND_CUDA) {
#ifdef TR_GR_CUDA_BUFFER
        std::string err;
        d_cuda = detail::power_cuda_create(device, batch * nchan, &err);
        if (!d_cuda) throw std::runtime_error(err);
#else
        throw std::runtime_error("power_cf: the CUDA backend of power_cf needs "
                                 "gnuradio-transient built with CUDA");
#endif
    }
    if (d_device_buffers)
        set_output_signature(
            detail::device_signature(1, 1, sizeof(float) * std::max(nchan, 1u)));
}

power_cf_impl::~power_cf_impl()
{
#ifdef TR_GR_CUDA_BUFFER
    detail::power_cuda_destroy(d_cuda);
#endif
}

std::string power_cf_impl::backend() const
{
    return d_backend == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

bool power_cf_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    d_refused = d_device_buffers ? detail::output_refusal(*this) : std::string();
    if (!d_refused.empty())
        d_logger->error("device buffers refused, the stream ends here: {}", d_refused);
    return gr::sync_block::start();
}

std::string power_cf_impl::device_buffers_error() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(d_setlock));
    return d_refused;
}

int power_cf_impl::work(int noutput_items, gr_vector_const_void_star &input_items,
                        gr_vector_void_star &output_items)
{
    if (!d_refused.empty()) return WORK_DONE;
    const gr_complex *in = static_cast<const gr_complex *>(input_items[0]);
    float *out = static_cast<float *>(output_items[0]);
    const size_t n = static_cast<size_t>(std::max(noutput_items, 0)) * d_nchan;
    if (n == 0) return 0;
#ifdef TR_GR_CUDA_BUFFER
    if (d_cuda) {
        std::string err;
        if (!detail::power_cuda_run(d_cuda, reinterpret_cast<const float *>(in), n, out,
                                    d_device_buffers, &err))
            throw std::runtime_error(err);
        return noutput_items;
    }
#endif
    // re*re + im*im, two roundings (no fused multiply-add): the bits of the
    // CUDA kernel (VOLK's kernels may fuse and differ in the last place).
    const float *z = reinterpret_cast<const float *>(in);
    for (size_t i = 0; i < n; i++) {
        const float re2 = z[2 * i] * z[2 * i];
        const float im2 = z[2 * i + 1] * z[2 * i + 1];
        out[i] = re2 + im2;
    }
    return noutput_items;
}

} // namespace transient
} // namespace gr
