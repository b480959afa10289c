/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: edge localizer block, implementation over libtransient.
 *
 * The block feeds every consumed sample to the core right away and releases a
 * sample downstream only once the core has processed it (tr_edges_position),
 * i.e. once every transition up to that sample is known and can be tagged.
 * Samples consumed but not yet released wait in an internal FIFO; with fixed
 * levels the core never holds samples and the FIFO stays empty.
 *
 * The output is optional. Without it the block is a sink: it feeds its input
 * to the core and reports the transitions on `detects` only (no copy, no
 * FIFO, no tags). The PMT dict of a transition is built only when something
 * takes it: a tag (output connected) or a message (`detects` subscribed).
 */

#include "edge_localizer_f_impl.h"
#include "block_util.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

// Initial room for transitions and FIFO samples beyond the hold of auto levels.
constexpr size_t k_initial_room = 32768;

// Without the output: transitions per work call the block aims at when they
// are dense. Every transition costs a few PMT objects that live until the
// message is handled; with a million samples per call and a transition every
// hundred samples that is tens of MB of small objects per call, allocated and
// freed outside the caches (measured here: 1.0e8 samples/s with unlimited
// calls, 1.4-1.7e8 with about 1024 transitions per call). Calls never get
// smaller than k_min_call samples. (With the output connected, smaller calls
// measured no faster: every call also starts the pass-through copy and wakes
// the downstream block, so the scheduler's call sizes stay.)
constexpr size_t k_edges_per_call = 1024;
constexpr size_t k_min_call = 8192;

// Without the output: at most this many samples per call (with CUDA at least
// two batches, so that the core overlaps one batch's transfer with the other's
// search, as with the output connected, where GNU Radio's buffer holds two
// batches). A sink is offered all of its available input (up to its
// upstream's whole buffer), and the transition buffer is sized for one
// transition per sample taken.
constexpr size_t k_max_call = size_t(1) << 20;

constexpr const char *k_who = "edge_localizer_f";

tr_backend parse_backend(const std::string &name)
{
    return detail::parse_backend(k_who, name);
}

[[noreturn]] void throw_status(tr_status st, const char *what)
{
    detail::throw_status(k_who, st, what);
}

} // namespace

edge_localizer_f::sptr
edge_localizer_f::make(bool auto_levels, float low, float mid, float high,
                       double tolerance_pct, double mid_pct, unsigned int hist_bins,
                       size_t level_samples, uint64_t level_interval,
                       const std::string &backend, int device, size_t batch,
                       const std::string &msg_format, bool metrics)
{
    return gnuradio::make_block_sptr<edge_localizer_f_impl>(
        auto_levels, low, mid, high, tolerance_pct, mid_pct, hist_bins, level_samples,
        level_interval, backend, device, batch, msg_format, metrics);
}

edge_localizer_f_impl::edge_localizer_f_impl(
    bool auto_levels, float low, float mid, float high, double tolerance_pct,
    double mid_pct, unsigned int hist_bins, size_t level_samples, uint64_t level_interval,
    const std::string &backend, int device, size_t batch, const std::string &msg_format,
    bool metrics)
    : gr::block("edge_localizer_f", gr::io_signature::make(1, 1, sizeof(float)),
                gr::io_signature::make(0, 1, sizeof(float))),
      d_q(nullptr), d_auto_levels(auto_levels), d_tolerance_pct(tolerance_pct),
      d_mid_pct(mid_pct), d_backend(TR_BACKEND_CPU), d_need_base(true),
      d_levels_known(!auto_levels), d_out_base(0), d_fed(0), d_known(0), d_released(0),
      d_hold_limit(auto_levels ? level_samples : 0),
      d_vectors(detail::parse_msg_format(k_who, msg_format)), d_metrics(metrics),
      d_metrics_finished(false), d_warned_late(false), d_want_tags(true),
      d_want_msgs(true), d_saved_multiple(0), d_max_call(k_max_call),
      d_call_cap(SIZE_MAX), d_call_edges(0), d_port(pmt::mp("detects")),
      d_key_edge(pmt::mp("edge")), d_key_edges(pmt::mp("edges")),
      d_key_time(pmt::mp("time")), d_key_polarity(pmt::mp("polarity")),
      d_key_sample(pmt::mp("sample")),
      d_pol_rise(pmt::cons(d_key_polarity, pmt::from_long(1))),
      d_pol_fall(pmt::cons(d_key_polarity, pmt::from_long(-1)))
{
    const tr_backend requested = parse_backend(backend);

    tr_edges_config cfg = tr_edges_config_default();
    cfg.levels_mode = auto_levels ? TR_LEVELS_AUTO : TR_LEVELS_FIXED;
    cfg.low = low;
    cfg.mid = mid;
    cfg.high = high;
    cfg.tolerance_pct = tolerance_pct;
    cfg.mid_pct = mid_pct;
    cfg.hist_bins = hist_bins;
    cfg.level_samples = level_samples;
    cfg.level_interval = level_interval;
    cfg.backend = requested;
    cfg.device = device;
    cfg.variant = TR_VARIANT_FAST;
    cfg.batch = batch;
    cfg.metrics = metrics ? 1 : 0;

    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    d_q = tr_edges_create(&cfg, &err);
    if (!d_q) throw_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    d_backend = tr_edges_backend(d_q);

    try {
        if (d_backend == TR_BACKEND_CUDA) {
            if (batch == 0 || batch > static_cast<size_t>(INT_MAX / 4))
                throw std::invalid_argument("edge_localizer_f: batch must be in [1, " +
                                            std::to_string(INT_MAX / 4) +
                                            "] with the CUDA backend");
            set_output_multiple(static_cast<int>(batch));
        } else {
            detail::set_min_output_buffers(
                *this, detail::cpu_output_buffer_items(batch, sizeof(float)));
        }

        // Pre-size the buffers: transitions of one call (at most one per sample)
        // and, with auto levels, the samples held until the levels are known.
        const size_t room =
            std::max(k_initial_room, d_backend == TR_BACKEND_CUDA ? batch : size_t(0));
        d_edges.resize(room);
        d_max_call = std::max(k_max_call, d_backend == TR_BACKEND_CUDA ? 2 * batch : 0);
        if (d_auto_levels) d_fifo.reserve_items(d_hold_limit + room);
    } catch (...) {
        tr_edges_destroy(d_q);
        d_q = nullptr;
        throw;
    }

    if (requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA) {
        detail::log_cpu_fallback(d_logger, device);
    }

    message_port_register_out(d_port);
}

edge_localizer_f_impl::~edge_localizer_f_impl()
{
    if (d_q) tr_edges_destroy(d_q);
}

void edge_localizer_f_impl::fail(tr_status st, const char *what) const
{
    throw_status(st, what);
}

/* ---- stream state ---------------------------------------------------- */

void edge_localizer_f_impl::reset_stream()
{
    d_need_base = true;
    d_out_base = 0;
    d_fed = 0;
    d_known = 0;
    d_released = 0;
    d_fifo.clear();
    d_levels_known = !d_auto_levels;
    d_tags.clear();
    d_batch.clear();
    d_vtime.clear();
    d_vpolarity.clear();
    d_vsample.clear();
    d_metric_recs.clear();
    d_metrics_finished = false;
    d_call_cap = SIZE_MAX;
    d_call_edges = 0;
}

bool edge_localizer_f_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    // A restarted flow graph starts a new stream: forget the old one.
    if (d_fed > 0 || d_fifo.count() > 0) {
        const tr_status st = tr_edges_reset(d_q);
        if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
    }
    reset_stream();
    // Without the output the block is a sink: GNU Radio calls a sink only
    // while at least an output multiple of input items is available, so an
    // output multiple (the CUDA batch) would leave the end of a stream
    // unprocessed. Restored in stop().
    if (!has_output() && output_multiple() > 1) {
        d_saved_multiple = output_multiple();
        set_output_multiple(1);
    }
    return block::start();
}

bool edge_localizer_f_impl::stop()
{
    {
        gr::thread::scoped_lock guard(d_setlock);
        // Transitions among samples the core still holds (auto levels, stream
        // stopped before the levels were estimated): report them on detects.
        // Their samples can no longer be released, so they get no tags.
        d_want_msgs = msgs_subscribed();
        flush_core();
        publish_batch();
        d_pins.unpin();
        if (d_saved_multiple > 0) {
            set_output_multiple(d_saved_multiple);
            d_saved_multiple = 0;
        }
    }
    return block::stop();
}

/* ---- core ------------------------------------------------------------ */

pmt::pmt_t edge_localizer_f_impl::edge_dict(uint64_t offset, double time,
                                            int32_t polarity) const
{
    // The dict that pmt::dict_add(time), (polarity), (sample) builds, without
    // its key searches: dict cells (dcons) of ((sample . offset) (polarity . p)
    // (time . t)). The polarity entry is shared: 5 PMT objects per transition.
    const pmt::pmt_t pol = polarity == 1 ? d_pol_rise
                           : polarity == -1
                               ? d_pol_fall
                               : pmt::cons(d_key_polarity, pmt::from_long(polarity));
    return pmt::dcons(
        pmt::cons(d_key_sample, pmt::from_uint64(offset)),
        pmt::dcons(pol, pmt::dcons(pmt::cons(d_key_time, pmt::from_double(time)),
                                   pmt::make_dict())));
}

// A PMT object per transition: tags, or messages of dicts.
bool edge_localizer_f_impl::pmt_per_edge() const
{
    return d_want_tags || (d_want_msgs && !d_vectors);
}

size_t edge_localizer_f_impl::call_limit(size_t n) const
{
    return std::min(n, d_call_cap);
}

void edge_localizer_f_impl::adapt_call_cap(size_t samples)
{
    const size_t edges = d_call_edges;
    d_call_edges = 0;
    if (!pmt_per_edge()) {
        d_call_cap = SIZE_MAX; // no PMT per transition: no limit
    } else if (edges > k_edges_per_call && samples > 0) {
        const double cap = (double)samples * (double)k_edges_per_call / (double)edges;
        d_call_cap = std::max(k_min_call, static_cast<size_t>(cap));
    } else if (d_call_cap != SIZE_MAX && samples >= d_call_cap &&
               edges < k_edges_per_call / 2) {
        // Sparser again: double the limit, none beyond 2^30 samples.
        d_call_cap = d_call_cap >= (size_t(1) << 29) ? SIZE_MAX : 2 * d_call_cap;
    }
}

void edge_localizer_f_impl::take_edges(const tr_edge *e, size_t n)
{
    d_call_edges += n;
    if (!d_want_tags && !d_want_msgs) return; // nobody takes them: core only
    for (size_t i = 0; i < n; i++) {
        const uint64_t offset = d_out_base + static_cast<uint64_t>(e[i].sample);
        const bool late = static_cast<uint64_t>(e[i].sample) < d_released;
        const bool tag = d_want_tags && !late;
        const double time = e[i].time + static_cast<double>(d_out_base);
        if (d_want_msgs && d_vectors) {
            d_vtime.push_back(time);
            d_vpolarity.push_back(static_cast<int8_t>(e[i].polarity));
            d_vsample.push_back(offset);
        }
        const bool dict_msg = d_want_msgs && !d_vectors;
        if (!tag && !dict_msg) continue;
        pmt::pmt_t dict = edge_dict(offset, time, e[i].polarity);
        if (dict_msg) d_batch.push(tag ? dict : std::move(dict));
        if (d_want_tags && late) {
            // Cannot happen with the core's contract (a transition is reported
            // when its sample is processed); keep the message, drop the tag.
            if (!d_warned_late) {
                d_logger->warn("transition at sample {} reported after the sample "
                               "was released; it is not tagged",
                               offset);
                d_warned_late = true;
            }
            continue;
        }
        if (tag) d_tags.push(offset, std::move(dict));
    }
}

void edge_localizer_f_impl::run_core(const float *x, size_t n)
{
    // Room for one transition per sample given now and per sample held.
    const size_t need = n + static_cast<size_t>(d_fed - d_known);
    if (d_edges.size() < need) d_edges.resize(need);

    size_t done = 0;
    while (done < n) {
        size_t consumed = 0, nout = 0;
        const tr_status st = tr_edges_process(d_q, x + done, n - done, d_edges.data(),
                                              d_edges.size(), &consumed, &nout);
        if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
        take_edges(d_edges.data(), nout);
        take_metrics();
        done += consumed;
        if (consumed == 0 && nout == 0)
            throw std::runtime_error("edge_localizer_f: the core made no progress");
    }
    d_fed += n;
    update_known();
}

void edge_localizer_f_impl::flush_core()
{
    for (;;) {
        size_t nout = 0;
        const tr_status st = tr_edges_flush(d_q, d_edges.data(), d_edges.size(), &nout);
        if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
        take_edges(d_edges.data(), nout);
        if (nout < d_edges.size()) break;
    }
    d_metrics_finished = true; // the flush finished the metrics of the last ones
    take_metrics();
    update_known();
}

void edge_localizer_f_impl::update_known()
{
    d_known = tr_edges_position(d_q);
    float lv[3];
    d_levels_known = tr_edges_get_levels(d_q, &lv[0], &lv[1], &lv[2]) == TR_OK;
}

void edge_localizer_f_impl::take_metrics()
{
    if (!d_metrics) return;
    tr_edge_metric rec[256];
    for (size_t got = 256; got == 256;) {
        const tr_status st = tr_edges_metrics_read(d_q, rec, 256, &got);
        if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
        if (d_want_msgs) d_metric_recs.insert(d_metric_recs.end(), rec, rec + got);
    }
}

pmt::pmt_t edge_localizer_f_impl::metrics_message() const
{
    // The doubles of tr_edge_metric from start to duty, in order.
    static const char *const names[] = {
        "start",     "end",        "duration",      "duration2",      "slew",
        "overshoot", "undershoot", "pre_overshoot", "pre_undershoot", "settling",
        "width",     "period",     "duty"};
    constexpr size_t nd = sizeof names / sizeof names[0];
    const size_t n = d_metric_recs.size();
    const double base = static_cast<double>(d_out_base);
    auto value = [&](const tr_edge_metric &r, size_t k) { return (&r.start)[k]; };
    if (d_vectors) {
        std::vector<uint64_t> sample(n);
        std::vector<int8_t> polarity(n);
        std::vector<uint32_t> flags(n);
        std::vector<double> col(n);
        for (size_t i = 0; i < n; i++) {
            sample[i] = d_out_base + static_cast<uint64_t>(d_metric_recs[i].sample);
            polarity[i] = static_cast<int8_t>(d_metric_recs[i].polarity);
            flags[i] = d_metric_recs[i].flags;
            col[i] = d_metric_recs[i].time + base;
        }
        pmt::pmt_t d = pmt::make_dict();
        d = pmt::dict_add(d, d_key_sample, pmt::init_u64vector(n, sample.data()));
        d = pmt::dict_add(d, d_key_polarity, pmt::init_s8vector(n, polarity.data()));
        d = pmt::dict_add(d, pmt::mp("flags"), pmt::init_u32vector(n, flags.data()));
        d = pmt::dict_add(d, d_key_time, pmt::init_f64vector(n, col.data()));
        for (size_t k = 0; k < nd; k++) {
            for (size_t i = 0; i < n; i++)
                col[i] = value(d_metric_recs[i], k);
            if (k == 0 || k == 1) // instants are absolute like the time
                for (size_t i = 0; i < n; i++)
                    col[i] += base;
            d = pmt::dict_add(d, pmt::mp(names[k]), pmt::init_f64vector(n, col.data()));
        }
        return pmt::dict_add(pmt::make_dict(), pmt::mp("metrics"), d);
    }
    pmt::pmt_t list = pmt::make_vector(n, pmt::PMT_NIL);
    for (size_t i = 0; i < n; i++) {
        const tr_edge_metric &r = d_metric_recs[i];
        pmt::pmt_t d = pmt::make_dict();
        d = pmt::dict_add(d, d_key_sample,
                          pmt::from_uint64(d_out_base + static_cast<uint64_t>(r.sample)));
        d = pmt::dict_add(d, d_key_time, pmt::from_double(r.time + base));
        d = pmt::dict_add(d, d_key_polarity, pmt::from_long(r.polarity));
        d = pmt::dict_add(d, pmt::mp("flags"), pmt::from_long(r.flags));
        for (size_t k = 0; k < nd; k++)
            d = pmt::dict_add(d, pmt::mp(names[k]),
                              pmt::from_double(value(r, k) + (k < 2 ? base : 0.0)));
        pmt::vector_set(list, i, d);
    }
    return pmt::dict_add(pmt::make_dict(), pmt::mp("metrics"), list);
}

void edge_localizer_f_impl::publish_batch()
{
    if (!d_metric_recs.empty()) {
        message_port_pub(d_port, metrics_message());
        d_metric_recs.clear();
    }
    if (!d_vsample.empty()) {
        // One dict of three uniform vectors (copied into the PMTs).
        const size_t n = d_vsample.size();
        pmt::pmt_t msg = pmt::make_dict();
        msg = pmt::dict_add(msg, d_key_sample, pmt::init_u64vector(n, d_vsample.data()));
        msg =
            pmt::dict_add(msg, d_key_polarity, pmt::init_s8vector(n, d_vpolarity.data()));
        msg = pmt::dict_add(msg, d_key_time, pmt::init_f64vector(n, d_vtime.data()));
        d_vtime.clear();
        d_vpolarity.clear();
        d_vsample.clear();
        message_port_pub(d_port, msg);
    }
    d_batch.publish(*this, d_port, d_key_edges);
}

bool edge_localizer_f_impl::has_output() const
{
    const block_detail_sptr det = detail();
    return !det || det->noutputs() > 0;
}

bool edge_localizer_f_impl::msgs_subscribed()
{
    return !pmt::is_null(message_subscribers(d_port));
}

/* ---- scheduling ------------------------------------------------------ */

void edge_localizer_f_impl::forecast(int noutput_items,
                                     gr_vector_int &ninput_items_required)
{
    // Samples already known can go out without new input. Once the upstream is
    // done, every remaining sample (fewer than an output multiple, or held by
    // the core) must go out without new input too; general_work() then flushes
    // the core and finally reports WORK_DONE.
    const bool done = detail::upstream_done(*this);
    const block_detail_sptr det = detail();
    if (det && det->noutputs() == 0) {
        // Sink (no output): while the core holds samples for the first level
        // estimate, one input sample stays unconsumed until the upstream is
        // done (see work_no_output()).
        const bool holding = !d_levels_known || d_known < d_fed;
        ninput_items_required[0] = noutput_items + (holding && !done ? 1 : 0);
        return;
    }
    ninput_items_required[0] = (done || d_known > d_released) ? 0 : noutput_items;
}

int edge_localizer_f_impl::work_no_output(int noutput_items, int ninput_items,
                                          const float *in)
{
    const size_t ninput = static_cast<size_t>(std::max(ninput_items, 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));
    if (d_need_base) {
        d_out_base = nitems_read(0); // "sample" counts input samples
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, d_logger);

    // GNU Radio calls a sink only while input is available: once the upstream
    // is done and the input empty, the block is done without another call. So
    // while the core holds samples for the first level estimate, the last
    // input sample stays until the input is finished, and the call that takes
    // it flushes the core.
    const bool holding = !d_levels_known || d_known < d_fed;
    size_t take =
        call_limit(std::min({ninput, std::max<size_t>(noutput, 1), d_max_call}));
    if (holding && !finished && take == ninput && take > 0) take--;

    if (take > 0) run_core(in, take);
    if (finished && take == ninput &&
        (d_known < d_fed || (d_metrics && !d_metrics_finished)))
        flush_core();
    publish_batch();
    d_released = d_known; // nothing waits for release without the output
    consume(0, static_cast<int>(take));
    adapt_call_cap(take);
    return 0;
}

int edge_localizer_f_impl::general_work(int noutput_items, gr_vector_int &ninput_items,
                                        gr_vector_const_void_star &input_items,
                                        gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);

    const float *in = static_cast<const float *>(input_items[0]);
    d_want_msgs = msgs_subscribed();
    if (output_items.empty()) {
        d_want_tags = false;
        return work_no_output(noutput_items, ninput_items[0], in);
    }
    d_want_tags = true;
    float *out = static_cast<float *>(output_items[0]);
    const size_t ninput = static_cast<size_t>(std::max(ninput_items[0], 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));

    if (d_need_base) {
        d_out_base = nitems_written(0);
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items[0]);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, d_logger);

    // Input to take: while the core holds samples for a level estimate, what can
    // go out plus up to d_hold_limit samples more (this bounds the FIFO);
    // otherwise only what fits behind the FIFO in the output, so that the FIFO
    // drains and the block runs with no delay again.
    const size_t in_fifo = d_fifo.count();
    size_t room;
    if (!d_levels_known || d_known < d_fed)
        room = noutput + (d_hold_limit > in_fifo ? d_hold_limit - in_fifo : 0);
    else
        room = noutput > in_fifo ? noutput - in_fifo : 0;
    const size_t take = std::min(ninput, room);

    // The samples that will go out behind the FIFO are copied to the output
    // on a worker thread while the core searches them (at most from_in <= spec
    // of them are released below; the rest is overwritten later).
    size_t spec = 0;
    if (take > 0 && noutput > in_fifo) {
        spec = std::min(take, noutput - in_fifo);
        d_copy.start(out + in_fifo, in, spec * sizeof(float));
    }
    try {
        if (take > 0) run_core(in, take);
        // End of stream: estimate from what arrived, release all (and finish
        // the metrics of the last transitions).
        if (finished && take == ninput &&
            (d_known < d_fed || (d_metrics && !d_metrics_finished)))
            flush_core();
    } catch (...) {
        d_copy.wait();
        throw;
    }
    d_copy.wait();
    publish_batch();

    // Release the samples whose transitions are known: FIFO first, then input.
    const size_t releasable = static_cast<size_t>(d_known - d_released);
    const size_t n_out = std::min(noutput, releasable);
    d_tags.attach(*this, d_out_base + d_released + n_out, d_key_edge);
    const size_t from_fifo = std::min(n_out, d_fifo.count());
    d_fifo.pop(out, from_fifo);
    const size_t from_in = n_out - from_fifo;
    if (from_in > spec)
        std::memcpy(out + from_fifo + spec, in + spec, (from_in - spec) * sizeof(float));
    d_fifo.push(in + from_in, take - from_in);
    d_released += n_out;

    consume(0, static_cast<int>(take));

    if (finished && take == ninput && n_out == 0 && d_fifo.count() == 0 &&
        d_known == d_fed)
        return WORK_DONE;
    return static_cast<int>(n_out);
}

/* ---- setters and getters --------------------------------------------- */

void edge_localizer_f_impl::set_levels(float low, float mid, float high)
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_edges_set_levels(d_q, low, mid, high);
    if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
}

void edge_localizer_f_impl::set_percentages(double tolerance_pct, double mid_pct)
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_edges_set_percentages(d_q, tolerance_pct, mid_pct);
    if (st != TR_OK) fail(st, tr_edges_last_error(d_q));
    d_tolerance_pct = tolerance_pct;
    d_mid_pct = mid_pct;
}

void edge_localizer_f_impl::set_tolerance_pct(double tolerance_pct)
{
    set_percentages(tolerance_pct, d_mid_pct);
}

void edge_localizer_f_impl::set_mid_pct(double mid_pct)
{
    set_percentages(d_tolerance_pct, mid_pct);
}

namespace
{
float level_or_nan(const tr_edges *q, gr::thread::mutex &lock, int which)
{
    gr::thread::scoped_lock guard(lock);
    float lv[3];
    if (tr_edges_get_levels(q, &lv[0], &lv[1], &lv[2]) != TR_OK)
        return std::numeric_limits<float>::quiet_NaN();
    return lv[which];
}
} // namespace

float edge_localizer_f_impl::low() const
{
    return level_or_nan(d_q, const_cast<gr::thread::mutex &>(d_setlock), 0);
}

float edge_localizer_f_impl::mid() const
{
    return level_or_nan(d_q, const_cast<gr::thread::mutex &>(d_setlock), 1);
}

float edge_localizer_f_impl::high() const
{
    return level_or_nan(d_q, const_cast<gr::thread::mutex &>(d_setlock), 2);
}

bool edge_localizer_f_impl::levels_known() const
{
    return !std::isnan(low());
}

std::string edge_localizer_f_impl::backend() const
{
    return d_backend == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

} // namespace transient
} // namespace gr
