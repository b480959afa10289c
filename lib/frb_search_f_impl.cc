/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: FRB search block over tr_frb (dedispersion, boxcar search,
 * candidates). Papers: B. R. Barsdell et al., MNRAS 422, 379 (2012) for the
 * DM plan; K. Adamek, W. Armour, ApJS 247:56 (2020) for the search.
 *
 * Every consumed spectrum goes to the core at once; candidates come out of it
 * when final and go to "detects" at the end of the work call. With the plane
 * output, the core's DM-time plane of each call waits in a FIFO for room in
 * the output buffer. The last input item stays unconsumed until the upstream
 * is done: a block without outputs is otherwise never called again at the
 * end of its stream, and could not close the candidates still open.
 */

#include "frb_search_f_impl.h"
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

const char *const k_who = "frb_search_f";

[[noreturn]] void invalid(const std::string &what)
{
    throw std::invalid_argument(std::string(k_who) + ": " + what);
}

tr_boxcar_algorithm search_algorithm(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "boxdit") return TR_BOXCAR_BOXDIT;
    if (s == "igrid") return TR_BOXCAR_IGRID;
    if (s == "ideal") return TR_BOXCAR_IDEAL;
    invalid("algorithm must be \"boxdit\", \"igrid\" or \"ideal\", not \"" + name + "\"");
}

tr_boxcar_norm_mode statistics_mode(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "white") return TR_BOXCAR_NORM_WHITE;
    if (s == "levels") return TR_BOXCAR_NORM_LEVELS;
    if (s == "fixed") return TR_BOXCAR_NORM_FIXED;
    invalid("norm_mode must be \"white\", \"levels\" or \"fixed\", not \"" + name + "\"");
}

// Relative agreement of a header value with the block's (header doubles are
// written and read exactly; a little slack for values computed elsewhere).
bool same(double a, double b)
{
    return std::fabs(a - b) <= 1e-9 * std::fabs(b);
}

} // namespace

frb_search_f::sptr
frb_search_f::make(unsigned int nchan, double fch1, double foff, double tsamp,
                   double dm_min, double dm_max, double tolerance, double pulse_width,
                   const std::vector<double> &dm_list, const std::vector<int> &mask,
                   bool zero_dm, const std::string &algorithm,
                   const std::vector<int> &widths, unsigned int depth,
                   unsigned int max_width, float threshold, const std::string &norm_mode,
                   unsigned int window, double reject_sigma, unsigned int link_time,
                   unsigned int link_dm, bool plane_output, const std::string &backend,
                   int device, unsigned int block, const std::vector<int> &devices)
{
    return gnuradio::make_block_sptr<frb_search_f_impl>(
        nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance, pulse_width, dm_list, mask,
        zero_dm, algorithm, widths, depth, max_width, threshold, norm_mode, window,
        reject_sigma, link_time, link_dm, plane_output, backend, device, block, devices);
}

frb_search_f_impl::frb_search_f_impl(
    unsigned int nchan, double fch1, double foff, double tsamp, double dm_min,
    double dm_max, double tolerance, double pulse_width,
    const std::vector<double> &dm_list, const std::vector<int> &mask, bool zero_dm,
    const std::string &algorithm, const std::vector<int> &widths, unsigned int depth,
    unsigned int max_width, float threshold, const std::string &norm_mode,
    unsigned int window, double reject_sigma, unsigned int link_time,
    unsigned int link_dm, bool plane_output, const std::string &backend, int device,
    unsigned int block, const std::vector<int> &devices)
    : gr::block(k_who, gr::io_signature::make(1, 1, sizeof(float) * std::max(nchan, 1u)),
                gr::io_signature::make(0, 0, 0)),
      d_nchan(nchan), d_plane(plane_output), d_q(nullptr), d_fch1(fch1), d_foff(foff),
      d_tsamp(tsamp), d_ndm(0), d_max_delay(0), d_threshold(threshold), d_need_base(true),
      d_base(0), d_plane_next(0), d_flushed(false), d_refused(false), d_ncands(0),
      d_read(256), d_port(pmt::mp("detects")), d_key_pulses(pmt::mp("pulses")),
      d_key_filterbank(pmt::mp("filterbank"))
{
    if (!std::isfinite(threshold)) invalid("threshold must be finite");
    detail::dedisp_params p(k_who, nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance,
                            pulse_width, dm_list, mask, zero_dm, "sum");
    tr_frb_config cfg = tr_frb_config_default();
    cfg.dedisp = p.config();
    cfg.search.algorithm = search_algorithm(algorithm);
    if (cfg.search.algorithm == TR_BOXCAR_BOXDIT) {
        if (widths.empty() || widths.size() > TR_BOXCAR_MAX_LIST)
            invalid("widths: BoxDIT needs 1 to " + std::to_string(TR_BOXCAR_MAX_LIST) +
                    " entries, got " + std::to_string(widths.size()));
        for (size_t i = 0; i < widths.size(); i++) {
            if (widths[i] < 2 || widths[i] % 2 != 0)
                invalid("widths: every entry must be even and >= 2, entry " +
                        std::to_string(i) + " is " + std::to_string(widths[i]));
            cfg.search.widths[i] = static_cast<uint32_t>(widths[i]);
        }
        cfg.search.nwidths = static_cast<uint32_t>(widths.size());
    }
    cfg.search.depth = depth;
    cfg.search.max_width = max_width;
    cfg.search.norm.mode = statistics_mode(norm_mode);
    cfg.search.norm.window = window;
    cfg.search.norm.reject_sigma = reject_sigma;
    cfg.threshold = threshold;
    cfg.link_time = link_time;
    cfg.link_dm = link_dm;
    cfg.backend = detail::parse_backend(k_who, backend);
    cfg.device = device;
    if (devices.size() > TR_FRB_MAX_DEVICES)
        invalid("devices: at most " + std::to_string(TR_FRB_MAX_DEVICES) + ", got " +
                std::to_string(devices.size()));
    cfg.ndevices = static_cast<uint32_t>(devices.size());
    std::copy(devices.begin(), devices.end(), cfg.devices);
    cfg.block = block;
    cfg.keep_plane = plane_output ? 1 : 0;
    tr_error err = detail::no_error();
    d_q = tr_frb_create(&cfg, &err);
    if (!d_q)
        detail::throw_status(k_who, err.code == TR_OK ? TR_ERR_INVALID : err.code,
                             err.message);
    d_ndm = tr_frb_ndm(d_q);
    d_max_delay = tr_frb_max_delay(d_q);
    d_fifo.set_width(d_ndm);
    if (plane_output) {
        set_output_signature(gr::io_signature::make(1, 1, sizeof(float) * d_ndm));
        detail::set_min_output_buffers(
            *this, detail::cpu_output_buffer_items(block, sizeof(float) * d_ndm));
    }
    if (cfg.backend == TR_BACKEND_AUTO && tr_frb_backend(d_q) != TR_BACKEND_CUDA)
        d_logger->info("backend auto: falling back to the CPU ({})",
                       detail::cpu_fallback_reason(device));
    d_debug_logger->debug("{} channels, {} DM trials ({} to {}), largest delay {}, "
                          "latency {}, warm-up {} spectra",
                          nchan, d_ndm, tr_frb_dms(d_q)[0], tr_frb_dms(d_q)[d_ndm - 1],
                          d_max_delay, tr_frb_latency(d_q), tr_frb_warmup(d_q));
    message_port_register_out(d_port);
}

frb_search_f_impl::~frb_search_f_impl()
{
    tr_frb_destroy(d_q);
}

bool frb_search_f_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    // A restarted flow graph starts a new stream.
    if (tr_frb_position(d_q) > 0 || tr_frb_flushed(d_q)) {
        const tr_status st = tr_frb_reset(d_q);
        if (st != TR_OK) detail::throw_status(k_who, st, tr_frb_last_error(d_q));
    }
    d_need_base = true;
    d_base = 0;
    d_plane_next = 0;
    d_flushed = false;
    d_refused = false;
    d_ncands = 0;
    d_fifo.clear();
    d_batch.clear();
    return gr::block::start();
}

bool frb_search_f_impl::stop()
{
    {
        gr::thread::scoped_lock guard(d_setlock);
        // Stopped before the end of its stream: the candidates still open
        // among the spectra searched are closed and published as it stops.
        if (!d_flushed && !d_refused && tr_frb_position(d_q) > 0) end_stream();
        d_batch.publish(*this, d_port, d_key_pulses);
        d_pins.unpin();
    }
    return gr::block::stop();
}

void frb_search_f_impl::take_plane()
{
    if (!d_plane) return;
    const float *plane = nullptr;
    size_t n = 0;
    int64_t first = 0;
    const tr_status st = tr_frb_plane(d_q, &plane, &n, &first);
    if (st != TR_OK) detail::throw_status(k_who, st, tr_frb_last_error(d_q));
    if (n == 0) return;
    if (first != static_cast<int64_t>(d_plane_next))
        throw std::runtime_error(std::string(k_who) + ": DM-time plane out of sequence");
    d_fifo.push(plane, n);
    d_plane_next += n;
}

void frb_search_f_impl::read_candidates()
{
    for (;;) {
        const size_t n = tr_frb_read(d_q, d_read.data(), d_read.size());
        if (n == 0) break;
        const double *dms = tr_frb_dms(d_q);
        for (size_t i = 0; i < n; i++) {
            const tr_frb_candidate &c = d_read[i];
            const uint64_t sample =
                d_base + static_cast<uint64_t>(std::max<int64_t>(c.sample, 0));
            const uint64_t start =
                d_base + static_cast<uint64_t>(std::max<int64_t>(c.start, 0));
            pmt::pmt_t d = pmt::make_dict();
            d = pmt::dict_add(d, pmt::mp("dm"), pmt::from_double(c.dm));
            d = pmt::dict_add(d, pmt::mp("time"),
                              pmt::from_double(static_cast<double>(sample) * d_tsamp));
            d = pmt::dict_add(d, pmt::mp("sample"), pmt::from_uint64(sample));
            d = pmt::dict_add(d, pmt::mp("start"), pmt::from_uint64(start));
            d = pmt::dict_add(d, pmt::mp("width"), pmt::from_long(c.width));
            d = pmt::dict_add(d, pmt::mp("snr"), pmt::from_double(c.snr));
            d = pmt::dict_add(d, pmt::mp("members"),
                              pmt::from_long(static_cast<long>(c.members)));
            d = pmt::dict_add(d, pmt::mp("channel"), pmt::from_long(c.dm_index));
            d = pmt::dict_add(d, pmt::mp("dm_lo"), pmt::from_double(dms[c.dm_index_lo]));
            d = pmt::dict_add(d, pmt::mp("dm_hi"), pmt::from_double(dms[c.dm_index_hi]));
            d_batch.push(d);
            d_ncands++;
        }
    }
}

void frb_search_f_impl::end_stream()
{
    const tr_status st = tr_frb_flush(d_q);
    if (st != TR_OK) detail::throw_status(k_who, st, tr_frb_last_error(d_q));
    take_plane();
    read_candidates();
    d_flushed = true;
    if (tr_frb_searched(d_q) <= tr_frb_warmup(d_q))
        d_logger->warn("the stream ended after {} spectra, before anything was "
                       "searched (the first {} items of every DM trial only measure "
                       "the noise, and the dedispersed sums lag by up to {} items): "
                       "no candidates could be found",
                       tr_frb_position(d_q), tr_frb_warmup(d_q), d_max_delay);
}

// Whether the "filterbank" tags (filterbank_source) in [from, to) describe the
// spectra the block was made for; logs the difference when not.
bool frb_search_f_impl::geometry_matches(uint64_t from, uint64_t to)
{
    std::vector<gr::tag_t> tags;
    get_tags_in_range(tags, 0, from, to, d_key_filterbank);
    for (const gr::tag_t &t : tags) {
        if (!pmt::is_dict(t.value)) continue;
        const long nchans =
            pmt::to_long(pmt::dict_ref(t.value, pmt::mp("nchans"), pmt::from_long(0)));
        const double fch1 = pmt::to_double(
            pmt::dict_ref(t.value, pmt::mp("fch1"), pmt::from_double(d_fch1)));
        const double foff = pmt::to_double(
            pmt::dict_ref(t.value, pmt::mp("foff"), pmt::from_double(d_foff)));
        const double tsamp = pmt::to_double(
            pmt::dict_ref(t.value, pmt::mp("tsamp"), pmt::from_double(d_tsamp)));
        if (nchans != static_cast<long>(d_nchan) || !same(fch1, d_fch1) ||
            !same(foff, d_foff) || !same(tsamp, d_tsamp)) {
            d_logger->error(
                "the stream's filterbank header (item {}: {} channels, fch1 {} MHz, foff "
                "{} MHz, tsamp {} s) is not what the block was made for ({} channels, "
                "fch1 {} MHz, foff {} MHz, tsamp {} s): its DMs would be wrong, the "
                "search stops",
                t.offset, nchans, fch1, foff, tsamp, d_nchan, d_fch1, d_foff, d_tsamp);
            return false;
        }
    }
    return true;
}

void frb_search_f_impl::forecast(int noutput_items, gr_vector_int &ninput_items_required)
{
    // Plane items waiting go out without input; once the upstream is done,
    // general_work() ends the stream without new input.
    const bool idle = detail::upstream_done(*this) || d_fifo.count() > 0;
    ninput_items_required[0] = idle ? 0 : (d_plane ? noutput_items : 1);
}

int frb_search_f_impl::general_work(int noutput_items, gr_vector_int &ninput_items,
                                    gr_vector_const_void_star &input_items,
                                    gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);
    const float *in = static_cast<const float *>(input_items[0]);
    const size_t ninput = static_cast<size_t>(std::max(ninput_items[0], 0));
    const size_t noutput = d_plane ? static_cast<size_t>(std::max(noutput_items, 0)) : 0;
    float *out = d_plane ? static_cast<float *>(output_items[0]) : nullptr;
    if (d_need_base) {
        d_base = nitems_read(0);
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items[0]);
    if (tr_frb_backend(d_q) == TR_BACKEND_CUDA) d_pins.pin(*this, d_logger);

    size_t produced = std::min(d_fifo.count(), noutput);
    if (produced) d_fifo.pop(out, produced);
    size_t take = 0;
    if (d_refused) {
        take = ninput; // the search stopped: the rest of the stream is dropped
    } else if (!d_flushed) {
        // The last item waits for the end of the stream (see the file comment);
        // with the plane output, the FIFO holds at most the output buffer and
        // the dispersion lag.
        take = finished ? ninput : (ninput > 0 ? ninput - 1 : 0);
        if (d_plane) {
            const size_t limit = noutput - produced + d_max_delay;
            if (take > limit) take = limit;
        }
        const uint64_t at = nitems_read(0);
        if (!geometry_matches(at, at + std::max<size_t>(take, 1))) {
            d_refused = true;
            take = ninput;
        } else {
            const tr_status st = tr_frb_process(d_q, in, take);
            if (st != TR_OK) detail::throw_status(k_who, st, tr_frb_last_error(d_q));
            take_plane();
            read_candidates();
            if (finished && take == ninput) end_stream();
        }
    }
    consume(0, static_cast<int>(take));
    d_batch.publish(*this, d_port, d_key_pulses);
    if (d_plane && produced < noutput) {
        const size_t more = std::min(d_fifo.count(), noutput - produced);
        d_fifo.pop(out + produced * d_ndm, more);
        produced += more;
    }
    const bool over = d_flushed || (d_refused && finished);
    if (over && produced == 0 && d_fifo.count() == 0) return WORK_DONE;
    return static_cast<int>(produced);
}

void frb_search_f_impl::set_threshold(float threshold)
{
    gr::thread::scoped_lock guard(d_setlock);
    if (!std::isfinite(threshold)) invalid("threshold must be finite");
    const tr_status st = tr_frb_set_threshold(d_q, threshold);
    if (st != TR_OK) detail::throw_status(k_who, st, tr_frb_last_error(d_q));
    d_threshold = threshold;
}

float frb_search_f_impl::threshold() const
{
    return d_threshold;
}

std::vector<double> frb_search_f_impl::dms() const
{
    const double *d = tr_frb_dms(d_q);
    return std::vector<double>(d, d + d_ndm);
}

unsigned int frb_search_f_impl::latency() const
{
    return tr_frb_latency(d_q);
}
unsigned int frb_search_f_impl::warmup() const
{
    return tr_frb_warmup(d_q);
}

uint64_t frb_search_f_impl::candidates() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(d_setlock));
    return d_ncands;
}

uint64_t frb_search_f_impl::searched() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(d_setlock));
    return tr_frb_searched(d_q);
}

std::string frb_search_f_impl::backend() const
{
    return tr_frb_backend(d_q) == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

bool frb_search_f_impl::device_resident() const
{
    return tr_frb_device_resident(d_q) != 0;
}

} // namespace transient
} // namespace gr
