/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: cuda_buffer, a GNU Radio 3.10 single-mapped buffer in CUDA
 * device memory (docs/device-buffers.md). Built only with CUDA.
 */

#include <gnuradio/block.h>
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/transient/cuda_buffer.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace gr
{
namespace transient
{

namespace
{

const gr::buftype<cuda_buffer, cuda_buffer> s_cuda_buffer_type{};

[[noreturn]] void cuda_fail(const std::string &who, const char *call, cudaError_t e)
{
    throw std::runtime_error(who + ": " + call + " failed: " + cudaGetErrorString(e) +
                             " (" + cudaGetErrorName(e) + ")");
}

} // namespace

#define TR_BUF_CUDA(call)                                                                \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess) cuda_fail(d_what, #call, tr_e_);                       \
    } while (0)

gr::buffer_type cuda_buffer::type(s_cuda_buffer_type);

gr::buffer_sptr cuda_buffer::make_buffer(int nitems, std::size_t sizeof_item,
                                         uint64_t downstream_lcm_nitems,
                                         uint32_t downstream_max_out_mult,
                                         gr::block_sptr link, gr::block_sptr buf_owner)
{
    // A host output replaced by a device reader's buffer (GNU Radio calls
    // this with link = the writer, buf_owner = the reader). GNU Radio 3.10.5
    // leaves readers already attached to the replaced buffer, and the buffer
    // of an earlier replacement, without a writer: the flow graph would stall.
    if (link && buf_owner && link != buf_owner && link->detail()) {
        const gr::block_detail_sptr det = link->detail();
        int candidates = 0, bad = 0;
        std::string why;
        for (int p = 0; p < det->noutputs(); p++) {
            const gr::buffer_sptr b = det->output(p);
            if (!b || b->get_sizeof_item() != sizeof_item ||
                static_cast<int>(b->bufsize()) != nitems)
                continue;
            candidates++;
            if (dynamic_cast<cuda_buffer *>(b.get())) {
                bad++;
                why = "it already feeds another block through a device buffer";
            } else if (b->nreaders() > 0) {
                bad++;
                why = "it already feeds a host block";
            }
        }
        if (candidates > 0 && bad == candidates)
            throw std::runtime_error(
                "device buffers: output of " + link->identifier() + " cannot feed " +
                buf_owner->identifier() + " through a device buffer: " + why +
                " (fan-out of a stream into a device-buffer input is not supported by "
                "GNU Radio 3.10 custom buffers; give the device block its own copy, "
                "e.g. through blocks.copy)");
    }
    return gr::buffer_sptr(new cuda_buffer(nitems, sizeof_item, downstream_lcm_nitems,
                                           downstream_max_out_mult, link, buf_owner));
}

cuda_buffer::cuda_buffer(int nitems, std::size_t sizeof_item,
                         uint64_t downstream_lcm_nitems, uint32_t downstream_max_out_mult,
                         gr::block_sptr link, gr::block_sptr buf_owner)
    : gr::buffer_single_mapped(nitems, sizeof_item, downstream_lcm_nitems,
                               downstream_max_out_mult, link, buf_owner),
      d_device(0), d_bytes(0), d_host(nullptr), d_dev(nullptr), d_scratch(nullptr),
      d_stream(nullptr),
      d_what("cuda_buffer of " + (link ? link->identifier() : std::string("?")))
{
    const device_port *port = dynamic_cast<const device_port *>(buf_owner.get());
    if (port) {
        d_device = port->cuda_device();
    } else {
        TR_BUF_CUDA(cudaGetDevice(&d_device));
    }
    gr::configure_default_loggers(d_logger, d_debug_logger, "cuda_buffer");
    if (!allocate_buffer(nitems)) throw std::bad_alloc();
}

cuda_buffer::~cuda_buffer()
{
    release();
}

void cuda_buffer::release()
{
    // Destructor path: errors cannot be reported, the memory is returned
    // as far as the driver allows.
    if (cudaSetDevice(d_device) != cudaSuccess) return;
    if (d_stream) cudaStreamDestroy(static_cast<cudaStream_t>(d_stream));
    if (d_scratch) cudaFree(d_scratch);
    if (d_dev) cudaFree(d_dev);
    if (d_host) cudaFreeHost(d_host);
    d_stream = nullptr;
    d_scratch = d_dev = d_host = nullptr;
}

bool cuda_buffer::do_allocate_buffer(std::size_t final_nitems, std::size_t sizeof_item)
{
    d_bytes = final_nitems * sizeof_item;
    try {
        TR_BUF_CUDA(cudaSetDevice(d_device));
        cudaStream_t s = nullptr;
        TR_BUF_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        d_stream = s;
        TR_BUF_CUDA(cudaMallocHost(reinterpret_cast<void **>(&d_host), d_bytes));
        TR_BUF_CUDA(cudaMalloc(reinterpret_cast<void **>(&d_dev), d_bytes));
        TR_BUF_CUDA(cudaMalloc(reinterpret_cast<void **>(&d_scratch), d_bytes));
        TR_BUF_CUDA(cudaMemsetAsync(d_dev, 0, d_bytes, s));
        TR_BUF_CUDA(cudaStreamSynchronize(s));
    } catch (...) {
        release();
        throw;
    }
    std::memset(d_host, 0, d_bytes);
    d_base = d_host;
    return true;
}

void cuda_buffer::update_reader_block_history(unsigned history, int delay)
{
    // GNU Radio calls this before it adds the reader: d_readers holds the
    // readers attached so far.
    if (d_refusal.empty() && !d_readers.empty())
        d_refusal = "the device-buffer output of " + link()->identifier() +
                    " has more than one reader; GNU Radio 3.10 gives a buffer one "
                    "transfer type, so fan-out of a device buffer is refused (connect "
                    "one reader, e.g. blocks.copy, and fan out after it)";
    if (d_refusal.empty() && (history > 1 || delay != 0))
        d_refusal = "a reader of the device-buffer output of " + link()->identifier() +
                    " has history " + std::to_string(history) + " and sample delay " +
                    std::to_string(delay) +
                    "; GNU Radio 3.10 single-mapped buffers are refused with history "
                    "(put blocks.copy between them)";
    gr::buffer_single_mapped::update_reader_block_history(history, delay);
}

gr::transfer_type cuda_buffer::mode() const
{
    if (d_transfer_type != gr::transfer_type::DEVICE_TO_HOST || d_readers.size() != 1)
        return d_transfer_type;
    const gr::block_sptr reader = d_readers[0]->link();
    const device_port *port = dynamic_cast<const device_port *>(reader.get());
    if (port && port->device_input() && port->cuda_device() == d_device)
        return gr::transfer_type::DEVICE_TO_DEVICE;
    return d_transfer_type;
}

bool cuda_buffer::reads_on_device() const
{
    const gr::transfer_type m = mode();
    return m == gr::transfer_type::DEVICE_TO_DEVICE ||
           m == gr::transfer_type::HOST_TO_DEVICE;
}

void cuda_buffer::post_work(int nitems)
{
    if (nitems <= 0) return;
    const std::size_t off = static_cast<std::size_t>(d_write_index) * d_sizeof_item;
    const std::size_t n = static_cast<std::size_t>(nitems) * d_sizeof_item;
    if (off + n > d_bytes)
        throw std::runtime_error(d_what + ": post_work past the end of the buffer");
    cudaStream_t s = static_cast<cudaStream_t>(d_stream);
    switch (mode()) {
    case gr::transfer_type::HOST_TO_DEVICE:
        TR_BUF_CUDA(cudaSetDevice(d_device));
        TR_BUF_CUDA(
            cudaMemcpyAsync(d_dev + off, d_host + off, n, cudaMemcpyHostToDevice, s));
        TR_BUF_CUDA(cudaStreamSynchronize(s));
        break;
    case gr::transfer_type::DEVICE_TO_HOST:
        TR_BUF_CUDA(cudaSetDevice(d_device));
        TR_BUF_CUDA(
            cudaMemcpyAsync(d_host + off, d_dev + off, n, cudaMemcpyDeviceToHost, s));
        TR_BUF_CUDA(cudaStreamSynchronize(s));
        break;
    case gr::transfer_type::DEVICE_TO_DEVICE:
        break; // the reader reads the memory the writer wrote
    default:
        throw std::runtime_error(d_what + ": transfer type not set by the flow graph");
    }
}

void *cuda_buffer::write_pointer()
{
    const std::size_t off = static_cast<std::size_t>(d_write_index) * d_sizeof_item;
    if (mode() == gr::transfer_type::HOST_TO_DEVICE) return d_host + off;
    return d_dev + off;
}

const void *cuda_buffer::_read_pointer(unsigned int read_index)
{
    const std::size_t off = static_cast<std::size_t>(read_index) * d_sizeof_item;
    if (mode() == gr::transfer_type::DEVICE_TO_HOST) return d_host + off;
    return d_dev + off;
}

void *cuda_buffer::dev_memcpy(void *dst, const void *src, std::size_t n)
{
    if (n == 0) return dst;
    cudaStream_t s = static_cast<cudaStream_t>(d_stream);
    TR_BUF_CUDA(cudaSetDevice(d_device));
    TR_BUF_CUDA(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, s));
    TR_BUF_CUDA(cudaStreamSynchronize(s));
    return dst;
}

void *cuda_buffer::dev_memmove(void *dst, const void *src, std::size_t n)
{
    // cudaMemcpy of overlapping ranges is undefined: go through the scratch.
    if (n == 0 || dst == src) return dst;
    if (n > d_bytes) throw std::runtime_error(d_what + ": move larger than the buffer");
    cudaStream_t s = static_cast<cudaStream_t>(d_stream);
    TR_BUF_CUDA(cudaSetDevice(d_device));
    TR_BUF_CUDA(cudaMemcpyAsync(d_scratch, src, n, cudaMemcpyDeviceToDevice, s));
    TR_BUF_CUDA(cudaMemcpyAsync(dst, d_scratch, n, cudaMemcpyDeviceToDevice, s));
    TR_BUF_CUDA(cudaStreamSynchronize(s));
    return dst;
}

bool cuda_buffer::input_blocked_callback(int items_required, int items_avail,
                                         unsigned read_index)
{
    if (mode() == gr::transfer_type::DEVICE_TO_HOST)
        return input_blocked_callback_logic(items_required, items_avail, read_index,
                                            d_host, std::memcpy, std::memmove);
    return input_blocked_callback_logic(
        items_required, items_avail, read_index, d_dev,
        [this](void *d, const void *s, std::size_t n) { return dev_memcpy(d, s, n); },
        [this](void *d, const void *s, std::size_t n) { return dev_memmove(d, s, n); });
}

bool cuda_buffer::output_blocked_callback(int output_multiple, bool force)
{
    if (mode() == gr::transfer_type::DEVICE_TO_HOST)
        return output_blocked_callback_logic(output_multiple, force, d_host,
                                             std::memmove);
    return output_blocked_callback_logic(
        output_multiple, force, d_dev,
        [this](void *d, const void *s, std::size_t n) { return dev_memmove(d, s, n); });
}

} // namespace transient
} // namespace gr
