/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: held items, pending tags and detects batches of the block
 * shells.
 */

#include "held_stream.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/gr_complex.h>
#include <gnuradio/tags.h>
#include <algorithm>
#include <cstring>

namespace gr
{
namespace transient
{
namespace detail
{

/* ---- held_fifo ------------------------------------------------------- */

template <class T> void held_fifo<T>::reserve_items(size_t items)
{
    if (items * d_width > d_buf.size()) d_buf.resize(items * d_width);
}

template <class T> T *held_fifo<T>::reserve(size_t n)
{
    const size_t cap = d_buf.size() / d_width;
    if (d_tail + n > cap) {
        const size_t held = count();
        if (held > 0 && d_head > 0)
            std::memmove(d_buf.data(), d_buf.data() + d_head * d_width,
                         held * d_width * sizeof(T));
        d_head = 0;
        d_tail = held;
        if (held + n > cap) d_buf.resize(std::max(2 * cap, held + n) * d_width);
    }
    return d_buf.data() + d_tail * d_width;
}

template <class T> void held_fifo<T>::push(const T *x, size_t n)
{
    if (n == 0) return;
    std::memcpy(reserve(n), x, n * d_width * sizeof(T));
    d_tail += n;
}

template <class T> void held_fifo<T>::pop(T *out, size_t n)
{
    if (n == 0) return;
    std::memcpy(out, front(), n * d_width * sizeof(T));
    drop(n);
}

template <class T> void held_fifo<T>::drop(size_t n)
{
    d_head += n;
    if (d_head == d_tail) d_head = d_tail = 0;
}

template class held_fifo<float>;
template class held_fifo<gr_complex>;

/* ---- pending_tags ---------------------------------------------------- */

void pending_tags::clear()
{
    d_tags.clear();
    d_head = 0;
}

void pending_tags::push(uint64_t offset, pmt::pmt_t value)
{
    d_tags.push_back(tag{offset, std::move(value)});
}

void pending_tags::attach(gr::block &b, uint64_t end_offset, const pmt::pmt_t &key)
{
    // Events may be decided out of the order of the items they tag (across
    // channels, or decided by a later sample than their peak).
    const auto first = d_tags.begin() + static_cast<std::ptrdiff_t>(d_head);
    const auto by_offset = [](const tag &x, const tag &y) { return x.offset < y.offset; };
    if (!std::is_sorted(first, d_tags.end(), by_offset))
        std::stable_sort(first, d_tags.end(), by_offset);
    gr::tag_t t;
    t.key = key;
    t.srcid = b.alias_pmt();
    while (d_head < d_tags.size() && d_tags[d_head].offset < end_offset) {
        t.offset = d_tags[d_head].offset;
        t.value = std::move(d_tags[d_head].value);
        b.detail()->add_item_tag(0, t);
        d_tags[d_head].value = pmt::PMT_NIL;
        d_head++;
    }
    if (d_head == d_tags.size()) clear(); // keeps the capacity
}

/* ---- message_batch --------------------------------------------------- */

void message_batch::publish(gr::block &b, const pmt::pmt_t &port, const pmt::pmt_t &key)
{
    if (d_dicts.empty()) return;
    pmt::pmt_t v = pmt::make_vector(d_dicts.size(), pmt::PMT_NIL);
    for (size_t i = 0; i < d_dicts.size(); i++)
        pmt::vector_set(v, i, d_dicts[i]);
    d_dicts.clear();
    b.message_port_pub(port, pmt::dict_add(pmt::make_dict(), key, v));
}

/* ---- end of stream --------------------------------------------------- */

bool upstream_done(const gr::block &b)
{
    const block_detail_sptr det = b.detail();
    if (!det) return false;
    const buffer_reader_sptr reader = det->input(0);
    gr::thread::scoped_lock guard(*reader->mutex());
    return reader->done();
}

bool input_finished(const gr::block &b, int ninput)
{
    const block_detail_sptr det = b.detail();
    if (!det) return false;
    const buffer_reader_sptr reader = det->input(0);
    gr::thread::scoped_lock guard(*reader->mutex());
    const uint64_t unread = reader->buffer()->nitems_written() - reader->nitems_read();
    return reader->done() && unread <= static_cast<uint64_t>(std::max(ninput, 0));
}

} // namespace detail
} // namespace transient
} // namespace gr
