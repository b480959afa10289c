/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Minimal GNU Radio blocks for C++ flow graphs without gr-blocks: a float
 * vector source that can replay a pattern from its own output ring, a sink
 * that only counts, and a sink that keeps the data and tags of its inputs.
 * Used by transient-flowgraph-bench and the flow graph tests.
 */

#ifndef TRANSIENT_APPS_FLOWGRAPH_BLOCKS_H
#define TRANSIENT_APPS_FLOWGRAPH_BLOCKS_H

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/tags.h>
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace trfg
{

/*
 * Source of `total` items of `vlen` floats. Item k is pattern item
 * (k mod P), where P is the period:
 *   - replay mode: P is the size of the source's own output ring (GNU Radio's
 *     circular buffer, at least `ring_items`). The source writes the pattern
 *     into the ring during the first P items only; afterwards it produces items
 *     without writing them, since the ring slot of item k still holds pattern
 *     item k mod P. The source then costs nothing per item, so that a flow
 *     graph measures its downstream blocks. The pattern must hold at least P
 *     items (otherwise the source falls back to writing every item).
 *   - write mode: every item is written, P = pattern size.
 */
class ring_source : public gr::sync_block
{
  public:
    typedef std::shared_ptr<ring_source> sptr;

    static sptr make(std::shared_ptr<const std::vector<float>> pattern, unsigned vlen,
                     uint64_t total, size_t ring_items, bool replay)
    {
        return gnuradio::make_block_sptr<ring_source>(std::move(pattern), vlen, total,
                                                      ring_items, replay);
    }

    ring_source(std::shared_ptr<const std::vector<float>> pattern, unsigned vlen,
                uint64_t total, size_t ring_items, bool replay)
        : gr::sync_block("ring_source", gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(1, 1, sizeof(float) * vlen)),
          d_pattern(std::move(pattern)), d_vlen(vlen), d_total(total), d_replay(replay)
    {
        if (replay && ring_items > 0)
            set_min_output_buffer(static_cast<long>(ring_items));
    }

    //! Items per period of the produced stream (known once the flow graph ran).
    uint64_t period() const { return d_period; }
    //! True when every item was written (no replay from the ring).
    bool wrote_all() const { return d_wrote_all; }
    //! Size of the output ring in items (known once the flow graph ran).
    uint64_t ring_items() const { return d_ring; }

    int work(int noutput_items, gr_vector_const_void_star &,
             gr_vector_void_star &output_items) override
    {
        const uint64_t pat_items = d_pattern->size() / d_vlen;
        if (d_period == 0) {
            d_ring = detail()->output(0)->bufsize();
            if (d_replay && d_ring <= pat_items &&
                detail()->output(0)->get_mapping_type() ==
                    gr::buffer_mapping_type::double_mapped) {
                d_period = d_ring;
                d_wrote_all = false;
            } else {
                d_period = pat_items;
                d_wrote_all = true;
            }
        }
        if (d_done >= d_total) return WORK_DONE;
        const uint64_t n =
            std::min<uint64_t>(static_cast<uint64_t>(noutput_items), d_total - d_done);
        float *out = static_cast<float *>(output_items[0]);
        // Items still to write: all in write mode, the first period in replay.
        uint64_t write = n;
        if (!d_wrote_all) write = d_done >= d_period ? 0 : std::min(n, d_period - d_done);
        uint64_t i = 0;
        while (i < write) {
            const uint64_t p = (d_done + i) % d_period;
            const uint64_t m = std::min(write - i, d_period - p);
            std::memcpy(out + i * d_vlen, d_pattern->data() + p * d_vlen,
                        m * d_vlen * sizeof(float));
            i += m;
        }
        d_done += n;
        return static_cast<int>(n);
    }

  private:
    std::shared_ptr<const std::vector<float>> d_pattern;
    const unsigned d_vlen;
    const uint64_t d_total;
    const bool d_replay;
    uint64_t d_done = 0;
    uint64_t d_period = 0;
    uint64_t d_ring = 0;
    bool d_wrote_all = true;
};

//! Sink that takes every item of its inputs (item sizes in bytes) and counts.
class count_sink : public gr::sync_block
{
  public:
    typedef std::shared_ptr<count_sink> sptr;
    static sptr make(const std::vector<int> &sizes)
    {
        return gnuradio::make_block_sptr<count_sink>(sizes);
    }
    explicit count_sink(const std::vector<int> &sizes)
        : gr::sync_block("count_sink",
                         gr::io_signature::makev(static_cast<int>(sizes.size()),
                                                 static_cast<int>(sizes.size()), sizes),
                         gr::io_signature::make(0, 0, 0))
    {
    }
    uint64_t count() const { return d_count.load(std::memory_order_relaxed); }
    int work(int noutput_items, gr_vector_const_void_star &,
             gr_vector_void_star &) override
    {
        d_count.fetch_add(static_cast<uint64_t>(noutput_items),
                          std::memory_order_relaxed);
        return noutput_items;
    }

  private:
    std::atomic<uint64_t> d_count{0};
};

//! Sink that keeps the bytes of every input and the tags of input 0.
class capture_sink : public gr::sync_block
{
  public:
    typedef std::shared_ptr<capture_sink> sptr;
    static sptr make(const std::vector<int> &sizes)
    {
        return gnuradio::make_block_sptr<capture_sink>(sizes);
    }
    explicit capture_sink(const std::vector<int> &sizes)
        : gr::sync_block("capture_sink",
                         gr::io_signature::makev(static_cast<int>(sizes.size()),
                                                 static_cast<int>(sizes.size()), sizes),
                         gr::io_signature::make(0, 0, 0)),
          d_sizes(sizes), d_data(sizes.size())
    {
    }
    const std::vector<char> &data(size_t i) const { return d_data[i]; }
    const std::vector<gr::tag_t> &tags() const { return d_tags; }
    int work(int noutput_items, gr_vector_const_void_star &input_items,
             gr_vector_void_star &) override
    {
        for (size_t i = 0; i < input_items.size(); i++) {
            const char *p = static_cast<const char *>(input_items[i]);
            d_data[i].insert(d_data[i].end(), p,
                             p + static_cast<size_t>(noutput_items) * d_sizes[i]);
        }
        std::vector<gr::tag_t> t;
        get_tags_in_range(t, 0, nitems_read(0),
                          nitems_read(0) + static_cast<uint64_t>(noutput_items));
        d_tags.insert(d_tags.end(), t.begin(), t.end());
        return noutput_items;
    }

  private:
    std::vector<int> d_sizes;
    std::vector<std::vector<char>> d_data;
    std::vector<gr::tag_t> d_tags;
};

} // namespace trfg

#endif /* TRANSIENT_APPS_FLOWGRAPH_BLOCKS_H */
