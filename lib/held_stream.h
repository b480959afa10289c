/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: what the blocks that hold samples until an event is final
 * share (not installed): the FIFO of held items, the tags waiting for their
 * item, the batch of a `detects` message, and the end-of-stream queries their
 * forecast() and general_work() make.
 */

#ifndef INCLUDED_TRANSIENT_HELD_STREAM_H
#define INCLUDED_TRANSIENT_HELD_STREAM_H

#include <gnuradio/block.h>
#include <pmt/pmt.h>
#include <cstdint>
#include <vector>

namespace gr
{
namespace transient
{
namespace detail
{

//! Items consumed but not released yet, `width` values of T per item, oldest
//! first. Room is made by moving the held items to the front, and only when
//! that does not suffice by growing (at least doubling) the storage.
template <class T> class held_fifo
{
  public:
    explicit held_fifo(size_t width = 1) : d_width(width) {}

    void set_width(size_t width) { d_width = width; }
    //! Storage for `items` items (the held ones stay).
    void reserve_items(size_t items);
    size_t count() const { return d_tail - d_head; }
    void clear() { d_head = d_tail = 0; }
    //! The oldest held item.
    const T *front() const { return d_buf.data() + d_head * d_width; }
    //! Where n items after the held ones go (valid until the next call).
    T *reserve(size_t n);
    //! The n items written at reserve() are held now.
    void commit(size_t n) { d_tail += n; }
    void push(const T *x, size_t n);
    //! Moves the n oldest items to out.
    void pop(T *out, size_t n);
    //! Forgets the n oldest items (n <= count()).
    void drop(size_t n);

  private:
    std::vector<T> d_buf;
    size_t d_width;
    size_t d_head = 0;
    size_t d_tail = 0;
};

//! Tags decided before their item went out: attached, in order of their
//! offsets, when the output reaches them.
class pending_tags
{
  public:
    pending_tags() { d_tags.reserve(1024); }
    void clear();
    void push(uint64_t offset, pmt::pmt_t value);
    //! Adds every pending tag with an offset before end_offset to output 0 of
    //! b (key, the block's alias as srcid) and forgets it.
    void attach(gr::block &b, uint64_t end_offset, const pmt::pmt_t &key);

  private:
    struct tag {
        uint64_t offset; // absolute output offset of the tagged item
        pmt::pmt_t value;
    };
    std::vector<tag> d_tags;
    size_t d_head = 0; // first not yet attached entry
};

//! The dicts of one `detects` message: {key: #(dict ...)}.
class message_batch
{
  public:
    message_batch() { d_dicts.reserve(1024); }
    void push(pmt::pmt_t dict) { d_dicts.push_back(std::move(dict)); }
    void clear() { d_dicts.clear(); }
    //! Publishes the dicts gathered on port of b, if any, and empties the batch.
    void publish(gr::block &b, const pmt::pmt_t &port, const pmt::pmt_t &key);

  private:
    std::vector<pmt::pmt_t> d_dicts;
};

//! Whether the upstream of input 0 is done (false outside a running graph).
bool upstream_done(const gr::block &b);

//! Whether the upstream of input 0 is done and the ninput items offered are
//! all it left unread. Counts every unread item, not items_available(): a
//! single-mapped buffer (device buffers) offers only the items up to its
//! end, the rest wrap to its start.
bool input_finished(const gr::block &b, int ninput);

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_HELD_STREAM_H */
