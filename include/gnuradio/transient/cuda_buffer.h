/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: a GNU Radio 3.10 custom buffer in CUDA device memory, so that
 * gr-transient CUDA blocks pass samples device to device (docs/device-buffers.md).
 */

#ifndef INCLUDED_TRANSIENT_CUDA_BUFFER_H
#define INCLUDED_TRANSIENT_CUDA_BUFFER_H

#include <gnuradio/buffer_single_mapped.h>
#include <gnuradio/buffer_type.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gr
{
namespace transient
{

/*!
 * \brief Single-mapped stream buffer in CUDA device memory with a pinned host
 * copy (built only with CUDA).
 * \ingroup transient
 *
 * \details
 * A port whose io_signature names cuda_buffer::type gets this buffer; GNU
 * Radio 3.10 sets the buffer's transfer type from the two ends of the edge:
 *   HOST_TO_DEVICE   a host block writes (into the pinned host copy); after
 *                    each work call the new items are copied to the device,
 *                    where the device block reads them;
 *   DEVICE_TO_HOST   a device block writes device memory; after each work
 *                    call the new items are copied to the host copy, where a
 *                    host block reads them;
 *   DEVICE_TO_DEVICE writer and reader both use device memory: no copy.
 * Device and pinned memory are allocated once with the buffer (plus one device
 * scratch area for overlapping moves); every copy runs on the buffer's own
 * CUDA stream and is complete when post_work() returns. Every CUDA call is
 * checked: a failure throws std::runtime_error naming the call and the error.
 *
 * GNU Radio 3.10.5 builds the replacement buffer of a custom-typed input
 * (block::replace_buffer) from the reader's OUTPUT signature, so a custom input
 * type cannot be used safely; and a reader whose input type is the default gets
 * DEVICE_TO_HOST. gr-transient blocks therefore keep default input types and
 * say through device_port that they read device memory: a DEVICE_TO_HOST
 * buffer whose only reader is such a block (on the same device) is used
 * device to device (mode(), reads_on_device()).
 *
 * What GNU Radio 3.10.5 cannot do safely with single-mapped buffers is noted
 * while the flow graph is connected (refusal()): a second reader of one buffer
 * (fan-out: one transfer type per buffer) and a reader with history > 1 or a
 * sample delay. The writing block then refuses to run (power_cf logs the
 * reason, ends its stream at once and reports it in device_buffers_error()).
 * A replacement of a host output by a cuda_buffer (a custom input type
 * elsewhere) after host readers attached to it, or twice, throws
 * std::runtime_error from the flow graph's start. The device index comes from
 * the block that owns the buffer when it implements device_port (gr-transient
 * blocks do), else the current device.
 */
class TRANSIENT_API cuda_buffer : public gr::buffer_single_mapped
{
  public:
    //! The buffer type to name in io_signature::make
    static gr::buffer_type type;

    static gr::buffer_sptr make_buffer(int nitems, std::size_t sizeof_item,
                                       uint64_t downstream_lcm_nitems,
                                       uint32_t downstream_max_out_mult,
                                       gr::block_sptr link = gr::block_sptr(),
                                       gr::block_sptr buf_owner = gr::block_sptr());

    ~cuda_buffer() override;

    //! Copies the nitems just written to the side the reader uses.
    void post_work(int nitems) override;
    bool do_allocate_buffer(std::size_t final_nitems, std::size_t sizeof_item) override;
    //! Host copy for HOST_TO_DEVICE, device memory otherwise
    void *write_pointer() override;
    //! Device memory for HOST_TO_DEVICE and DEVICE_TO_DEVICE, the host copy otherwise
    const void *_read_pointer(unsigned int read_index) override;
    bool input_blocked_callback(int items_required, int items_avail,
                                unsigned read_index) override;
    bool output_blocked_callback(int output_multiple, bool force) override;
    //! Called as each reader is attached: notes fan-out, history and delay
    //! (refusal()). It cannot throw: GNU Radio 3.10.5 would terminate while
    //! it drops the half-attached reader.
    void update_reader_block_history(unsigned history, int delay) override;
    //! Why this buffer's readers cannot be served safely, "" when they can
    const std::string &refusal() const { return d_refusal; }

    //! CUDA device index of the memory
    int device() const { return d_device; }
    //! Whether the reader gets device memory: DEVICE_TO_DEVICE, HOST_TO_DEVICE,
    //! or DEVICE_TO_HOST whose single reader is a device_port that reads
    //! device input on the same device (see below)
    bool reads_on_device() const;
    //! The transfer this buffer performs (GNU Radio's, refined as above)
    gr::transfer_type mode() const;
    //! Device memory of item 0 (for tests)
    const void *device_base() const { return d_dev; }

  private:
    cuda_buffer(int nitems, std::size_t sizeof_item, uint64_t downstream_lcm_nitems,
                uint32_t downstream_max_out_mult, gr::block_sptr link,
                gr::block_sptr buf_owner);
    void release();
    void *dev_memcpy(void *dst, const void *src, std::size_t n);
    void *dev_memmove(void *dst, const void *src, std::size_t n);

    int d_device;
    std::size_t d_bytes;
    char *d_host;          // pinned host copy
    char *d_dev;           // device memory
    char *d_scratch;       // device scratch of d_bytes for overlapping moves
    void *d_stream;        // cudaStream_t of the copies
    std::string d_what;    // "cuda_buffer of <writer>" for messages
    std::string d_refusal; // see refusal()
};

/*!
 * \brief What a block that uses cuda_buffer ports tells the buffer.
 * \ingroup transient
 */
class TRANSIENT_API device_port
{
  public:
    virtual ~device_port() = default;
    //! CUDA device index the block computes on
    virtual int cuda_device() const = 0;
    //! Whether the block reads its stream input in device memory when the
    //! upstream buffer is a cuda_buffer
    virtual bool device_input() const { return false; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_CUDA_BUFFER_H */
