/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: incoherent dedispersion block over tr_dedisp.
 * Paper: D. R. Lorimer, M. Kramer, "Handbook of Pulsar Astronomy" (2005),
 * section 5.2; B. R. Barsdell et al., MNRAS 422, 379 (2012) for the DM list.
 *
 * The core answers position p only once spectrum p + latency has arrived, so
 * the first latency outputs of a stream belong to positions before 0 and are
 * dropped (they go to a scratch buffer); the rest are written straight into
 * the output buffer. At the end of the stream the core's flush gives the last
 * latency positions, which wait in a FIFO for room in the output buffer.
 */

#include "dedisperse_ff_impl.h"
#include "dedisp_params.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{
const char *const k_who = "dedisperse_ff";
// Spectra per core call for the dropped positions at the start of a stream.
constexpr size_t k_scratch_values = size_t(1) << 20;
} // namespace

dedisperse_ff::sptr
dedisperse_ff::make(unsigned int nchan, double fch1, double foff, double tsamp,
                    double dm_min, double dm_max, double tolerance, double pulse_width,
                    const std::vector<double> &dm_list, const std::vector<int> &mask,
                    bool zero_dm, const std::string &scale, const std::string &backend,
                    int device, size_t batch)
{
    return gnuradio::make_block_sptr<dedisperse_ff_impl>(
        nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance, pulse_width, dm_list, mask,
        zero_dm, scale, backend, device, batch);
}

dedisperse_ff_impl::dedisperse_ff_impl(
    unsigned int nchan, double fch1, double foff, double tsamp, double dm_min,
    double dm_max, double tolerance, double pulse_width,
    const std::vector<double> &dm_list, const std::vector<int> &mask, bool zero_dm,
    const std::string &scale, const std::string &backend, int device, size_t batch)
    : gr::block(k_who, gr::io_signature::make(1, 1, sizeof(float) * std::max(nchan, 1u)),
                gr::io_signature::make(1, 1, sizeof(float))),
      d_nchan(nchan), d_q(nullptr), d_ndm(0), d_latency(0), d_flushed(false)
{
    detail::dedisp_params p(k_who, nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance,
                            pulse_width, dm_list, mask, zero_dm, scale);
    tr_dedisp_config &cfg = p.config();
    cfg.backend = detail::parse_backend(k_who, backend);
    cfg.device = device;
    cfg.batch = batch;
    const tr_backend requested = cfg.backend;
    tr_error err = detail::no_error();
    d_q = tr_dedisp_create(&cfg, &err);
    if (!d_q)
        detail::throw_status(k_who, err.code == TR_OK ? TR_ERR_INVALID : err.code,
                             err.message);
    d_ndm = tr_dedisp_ndm(d_q);
    d_latency = tr_dedisp_latency(d_q);
    d_fifo.set_width(d_ndm);
    set_output_signature(gr::io_signature::make(1, 1, sizeof(float) * d_ndm));
    if (tr_dedisp_backend(d_q) == TR_BACKEND_CUDA) {
        if (batch == 0 || batch > static_cast<size_t>(INT_MAX / 4)) {
            tr_dedisp_destroy(d_q);
            throw std::invalid_argument(std::string(k_who) + ": batch must be in [1, " +
                                        std::to_string(INT_MAX / 4) +
                                        "] with the CUDA backend");
        }
        set_output_multiple(static_cast<int>(batch));
    } else {
        detail::set_min_output_buffers(
            *this, detail::cpu_output_buffer_items(batch, sizeof(float) * d_ndm));
    }
    if (requested == TR_BACKEND_AUTO && tr_dedisp_backend(d_q) != TR_BACKEND_CUDA)
        d_logger->info("backend auto: falling back to the CPU ({})",
                       detail::cpu_fallback_reason(device));
    d_scratch.resize(std::max<size_t>(1, k_scratch_values / std::max(d_ndm, 1u)) * d_ndm);
    d_debug_logger->debug("{} channels, {} DM trials ({} to {}), latency {} spectra",
                          nchan, d_ndm, tr_dedisp_dms(d_q)[0],
                          tr_dedisp_dms(d_q)[d_ndm - 1], d_latency);
}

dedisperse_ff_impl::~dedisperse_ff_impl()
{
    tr_dedisp_destroy(d_q);
}

std::vector<double> dedisperse_ff_impl::dms() const
{
    const double *d = tr_dedisp_dms(d_q);
    return std::vector<double>(d, d + d_ndm);
}

unsigned int dedisperse_ff_impl::delay(unsigned int d, unsigned int c) const
{
    return tr_dedisp_channel_delay(d_q, d, c);
}

unsigned int dedisperse_ff_impl::nused() const
{
    return tr_dedisp_nused(d_q);
}

std::string dedisperse_ff_impl::backend() const
{
    return tr_dedisp_backend(d_q) == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

bool dedisperse_ff_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    // A restarted flow graph starts a new stream.
    if (tr_dedisp_position(d_q) > 0 || tr_dedisp_flushed(d_q)) {
        const tr_status st = tr_dedisp_reset(d_q);
        if (st != TR_OK) detail::throw_status(k_who, st, tr_dedisp_last_error(d_q));
    }
    d_flushed = false;
    d_fifo.clear();
    return gr::block::start();
}

bool dedisperse_ff_impl::stop()
{
    {
        gr::thread::scoped_lock guard(d_setlock);
        d_pins.unpin();
    }
    return gr::block::stop();
}

// n spectra to the core; out gets the outputs of the positions >= 0.
void dedisperse_ff_impl::run(const float *in, size_t n, float *out)
{
    const uint64_t pos = tr_dedisp_position(d_q);
    size_t dropped = pos < d_latency ? std::min<size_t>(n, d_latency - pos) : 0;
    const size_t rows = d_scratch.size() / d_ndm;
    size_t done = 0;
    while (done < dropped) {
        const size_t m = std::min(rows, dropped - done);
        const tr_status st =
            tr_dedisp_process(d_q, in + done * d_nchan, m, d_scratch.data());
        if (st != TR_OK) detail::throw_status(k_who, st, tr_dedisp_last_error(d_q));
        done += m;
    }
    if (n > done) {
        const tr_status st = tr_dedisp_process(d_q, in + done * d_nchan, n - done, out);
        if (st != TR_OK) detail::throw_status(k_who, st, tr_dedisp_last_error(d_q));
    }
}

void dedisperse_ff_impl::forecast(int noutput_items, gr_vector_int &ninput_items_required)
{
    // The FIFO (the flushed end) goes out without input; once the upstream is
    // done, general_work() flushes without new input too.
    const bool done = detail::upstream_done(*this);
    ninput_items_required[0] = (done || d_fifo.count() > 0) ? 0 : noutput_items;
}

int dedisperse_ff_impl::general_work(int noutput_items, gr_vector_int &ninput_items,
                                     gr_vector_const_void_star &input_items,
                                     gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);
    const float *in = static_cast<const float *>(input_items[0]);
    float *out = static_cast<float *>(output_items[0]);
    const size_t ninput = static_cast<size_t>(std::max(ninput_items[0], 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));
    const bool finished = detail::input_finished(*this, ninput_items[0]);
    if (tr_dedisp_backend(d_q) == TR_BACKEND_CUDA) d_pins.pin(*this, d_logger);

    size_t produced = std::min(d_fifo.count(), noutput);
    d_fifo.pop(out, produced);
    size_t take = 0;
    if (!d_flushed && d_fifo.count() == 0) {
        const uint64_t pos = tr_dedisp_position(d_q);
        const size_t dropped = pos < d_latency ? static_cast<size_t>(d_latency - pos) : 0;
        take = std::min(ninput, noutput - produced + dropped);
        run(in, take, out + produced * d_ndm);
        produced += take - std::min(take, dropped);
        if (finished && take == ninput) {
            // The last latency positions; those before 0 (a stream shorter
            // than the latency) are dropped.
            const uint64_t end = tr_dedisp_position(d_q);
            float *tail = d_fifo.reserve(d_latency);
            const tr_status st = tr_dedisp_flush(d_q, tail);
            if (st != TR_OK) detail::throw_status(k_who, st, tr_dedisp_last_error(d_q));
            const size_t keep = static_cast<size_t>(std::min<uint64_t>(d_latency, end));
            if (keep < d_latency)
                std::memmove(tail, tail + (d_latency - keep) * d_ndm,
                             keep * d_ndm * sizeof(float));
            d_fifo.commit(keep);
            d_flushed = true;
            const size_t more = std::min(d_fifo.count(), noutput - produced);
            d_fifo.pop(out + produced * d_ndm, more);
            produced += more;
        }
    }
    consume(0, static_cast<int>(take));
    if (d_flushed && produced == 0 && d_fifo.count() == 0) return WORK_DONE;
    return static_cast<int>(produced);
}

} // namespace transient
} // namespace gr
