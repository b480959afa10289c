/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: SIGPROC filterbank file source over tr_filterbank (format:
 * D. R. Lorimer, SIGPROC). Spectra are read straight into the output buffer.
 */

#include "filterbank_source_impl.h"
#include "block_util.h"
#include "dedisp_params.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

const char *const k_who = "filterbank_source";

// MJD of the UNIX epoch (1970-01-01).
constexpr double k_mjd_unix = 40587.0;

tr_filterbank *open_file(const std::string &filename)
{
    tr_error err = detail::no_error();
    tr_filterbank *f = tr_filterbank_open(filename.c_str(), &err);
    // A file that cannot be used is a bad parameter (ValueError in Python),
    // whatever the reason.
    if (!f) detail::throw_status(k_who, TR_ERR_INVALID, err.message);
    return f;
}

filterbank_info info_of(const std::string &path, const tr_filterbank_header &h)
{
    filterbank_info i;
    i.path = path;
    i.source_name = h.source_name;
    i.nchans = h.nchans;
    i.nbits = h.nbits;
    i.fch1 = h.fch1;
    i.foff = h.foff;
    i.tsamp = h.tsamp;
    i.tstart = h.tstart;
    i.refdm = h.refdm;
    i.telescope_id = h.telescope_id;
    i.machine_id = h.machine_id;
    i.nsamples = h.nsamples;
    return i;
}

} // namespace

filterbank_source::sptr filterbank_source::make(const std::string &filename,
                                                unsigned int nchan, uint64_t first,
                                                uint64_t count)
{
    return gnuradio::make_block_sptr<filterbank_source_impl>(filename, nchan, first,
                                                             count);
}

filterbank_info filterbank_source::header(const std::string &filename)
{
    tr_filterbank *f = open_file(filename);
    const filterbank_info i = info_of(filename, *tr_filterbank_get_header(f));
    tr_filterbank_close(f);
    return i;
}

filterbank_source_impl::filterbank_source_impl(const std::string &filename,
                                               unsigned int nchan, uint64_t first,
                                               uint64_t count)
    : gr::sync_block(k_who, gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, sizeof(float))),
      d_f(open_file(filename)), d_first(first), d_count(count), d_played(0)
{
    d_info = info_of(filename, *tr_filterbank_get_header(d_f));
    try {
        const std::string where = std::string(k_who) + ": " + filename + ": ";
        if (nchan != 0 && nchan != d_info.nchans)
            throw std::invalid_argument(
                where + "the file has " + std::to_string(d_info.nchans) +
                " channels, the block was made for " + std::to_string(nchan));
        if (first > d_info.nsamples)
            throw std::invalid_argument(
                where + "first spectrum " + std::to_string(first) + " is beyond the " +
                std::to_string(d_info.nsamples) + " spectra of the file");
        const uint64_t left = d_info.nsamples - first;
        if (count > left)
            throw std::invalid_argument(where + std::to_string(count) +
                                        " spectra asked from spectrum " +
                                        std::to_string(first) + ", the file holds " +
                                        std::to_string(left) + " from there");
        if (count == 0) d_count = left;
        if (d_count == 0)
            d_logger->warn("{}: no spectra to play (the file holds {} spectra, first {})",
                           filename, d_info.nsamples, first);
    } catch (...) {
        tr_filterbank_close(d_f);
        throw;
    }
    set_output_signature(gr::io_signature::make(1, 1, sizeof(float) * d_info.nchans));

    pmt::pmt_t h = pmt::make_dict();
    h = pmt::dict_add(h, pmt::mp("path"), pmt::string_to_symbol(filename));
    h = pmt::dict_add(h, pmt::mp("source_name"),
                      pmt::string_to_symbol(d_info.source_name));
    h = pmt::dict_add(h, pmt::mp("nchans"), pmt::from_long(d_info.nchans));
    h = pmt::dict_add(h, pmt::mp("nbits"), pmt::from_long(d_info.nbits));
    h = pmt::dict_add(h, pmt::mp("fch1"), pmt::from_double(d_info.fch1));
    h = pmt::dict_add(h, pmt::mp("foff"), pmt::from_double(d_info.foff));
    h = pmt::dict_add(h, pmt::mp("tsamp"), pmt::from_double(d_info.tsamp));
    h = pmt::dict_add(h, pmt::mp("tstart"), pmt::from_double(d_info.tstart));
    h = pmt::dict_add(h, pmt::mp("refdm"), pmt::from_double(d_info.refdm));
    h = pmt::dict_add(h, pmt::mp("telescope_id"), pmt::from_long(d_info.telescope_id));
    h = pmt::dict_add(h, pmt::mp("machine_id"), pmt::from_long(d_info.machine_id));
    h = pmt::dict_add(h, pmt::mp("nsamples"), pmt::from_uint64(d_info.nsamples));
    h = pmt::dict_add(h, pmt::mp("first"), pmt::from_uint64(d_first));
    d_header = h;
}

filterbank_source_impl::~filterbank_source_impl()
{
    tr_filterbank_close(d_f);
}

bool filterbank_source_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_filterbank_seek(d_f, d_first);
    if (st != TR_OK) detail::throw_status(k_who, st, tr_filterbank_last_error(d_f));
    d_played = 0;
    return gr::sync_block::start();
}

void filterbank_source_impl::add_header_tags()
{
    const uint64_t at = nitems_written(0);
    add_item_tag(0, at, pmt::mp("rx_rate"), pmt::from_double(1.0 / d_info.tsamp));
    add_item_tag(0, at, pmt::mp("rx_freq"), pmt::from_double(d_info.center_freq() * 1e6));
    if (d_info.tstart > 0) {
        const double unix_s = (d_info.tstart - k_mjd_unix) * 86400.0 +
                              static_cast<double>(d_first) * d_info.tsamp;
        const double whole = std::floor(unix_s);
        add_item_tag(
            0, at, pmt::mp("rx_time"),
            pmt::make_tuple(pmt::from_uint64(static_cast<uint64_t>(std::max(whole, 0.0))),
                            pmt::from_double(unix_s - whole)));
    }
    add_item_tag(0, at, pmt::mp("filterbank"), d_header);
}

int filterbank_source_impl::work(int noutput_items, gr_vector_const_void_star &,
                                 gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);
    const uint64_t left = d_count - d_played;
    if (left == 0) return WORK_DONE;
    const size_t want = static_cast<size_t>(
        std::min<uint64_t>(left, static_cast<uint64_t>(noutput_items)));
    if (d_played == 0) add_header_tags();
    size_t got = 0;
    const tr_status st =
        tr_filterbank_read(d_f, static_cast<float *>(output_items[0]), want, &got);
    if (st != TR_OK) detail::throw_status(k_who, st, tr_filterbank_last_error(d_f));
    if (got == 0) {
        d_logger->error("{}: the file ended after {} of {} spectra (it shrank while "
                        "playing)",
                        d_info.path, d_played, d_count);
        return WORK_DONE;
    }
    d_played += got;
    return static_cast<int>(got);
}

} // namespace transient
} // namespace gr
