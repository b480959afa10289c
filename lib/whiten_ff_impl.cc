/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "whiten_ff_impl.h"
#include "block_util.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

constexpr const char *k_who = "whiten_ff";

[[noreturn]] void throw_status(tr_status st, const char *what)
{
    detail::throw_status(k_who, st, what);
}

// Seconds to a sample count; invalid_argument unless positive and finite.
size_t samples(const char *what, double seconds, double rate)
{
    const double n = std::round(seconds * rate);
    if (!std::isfinite(n) || n < 1.0 || n > static_cast<double>(TR_PSD_MAX_NFFT) * 64)
        throw std::invalid_argument(std::string("whiten_ff: ") + what + " of " +
                                    std::to_string(seconds) + " s at " +
                                    std::to_string(rate) + " Hz is out of range");
    return static_cast<size_t>(n);
}

} // namespace

whiten_ff::sptr whiten_ff::make(double rate, const std::string &psd_source,
                                const std::string &psd_file, bool asd, double seglen,
                                double estimate_seconds, double fmin,
                                double filter_seconds, const std::string &backend,
                                int device, size_t batch)
{
    return gnuradio::make_block_sptr<whiten_ff_impl>(
        rate, psd_source, psd_file, asd, seglen, estimate_seconds, fmin, filter_seconds,
        backend, device, batch);
}

whiten_ff_impl::whiten_ff_impl(double rate, const std::string &psd_source,
                               const std::string &psd_file, bool asd, double seglen,
                               double estimate_seconds, double fmin,
                               double filter_seconds, const std::string &backend,
                               int device, size_t batch)
    : gr::sync_block("whiten_ff", gr::io_signature::make(1, 1, sizeof(float)),
                     gr::io_signature::make(1, 1, sizeof(float))),
      d_rate(rate), d_nfft(samples("seglen", seglen, rate) & ~static_cast<size_t>(1)),
      d_half(filter_seconds > 0 ? samples("filter_seconds", filter_seconds, rate) : 0),
      d_requested(detail::parse_backend(k_who, backend)), d_device(device),
      d_batch(batch), d_fmin(fmin), d_estimate_n(0), d_q(nullptr),
      d_backend(TR_BACKEND_CPU), d_latency(0), d_half_used(0), d_hist_pos(0),
      d_rebuild(false), d_consumed(0), d_gated_done(0), d_gated_base(0), d_gated_seen(0),
      d_estimating(false)
{
    const std::string source = detail::lower(psd_source);
    std::vector<double> psd(tr_psd_len(d_nfft));
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    tr_status st = TR_OK;
    if (source == "file") {
        st = tr_psd_from_file(psd_file.c_str(), asd ? 1 : 0, rate, d_nfft, psd.data(),
                              &err);
        // A file that cannot be read is a bad parameter of the block.
        if (st == TR_ERR_IO) st = TR_ERR_INVALID;
    } else if (source == "design") {
        st = tr_psd_design(rate, d_nfft, psd.data(), &err);
    } else if (source == "estimate") {
        d_estimate_n = samples("estimate_seconds", estimate_seconds, rate);
        if (d_estimate_n < d_nfft)
            throw std::invalid_argument("whiten_ff: estimate_seconds must cover at least "
                                        "one segment of seglen");
        // Only the sizes matter until the estimate exists: a flat PSD checks
        // every other parameter now and gives the latency.
        std::fill(psd.begin(), psd.end(), 1.0);
    } else {
        throw std::invalid_argument(
            "whiten_ff: psd_source must be \"estimate\", \"file\" "
            "or \"design\", not \"" +
            psd_source + "\"");
    }
    if (st != TR_OK) throw_status(st, err.message);
    tr_whiten *q = create(psd.data(), fmin);
    d_backend = tr_whiten_backend(q);
    d_latency = tr_whiten_latency(q);
    d_half_used = tr_whiten_half_len(q);
    const size_t block = tr_whiten_fft_len(q) - 2 * d_half_used; // samples per FFT block
    d_hist.assign(d_latency + d_half_used, 0.0f);
    d_estimating = d_estimate_n > 0;
    if (d_estimate_n) {
        tr_whiten_destroy(q);
        d_estimate.reserve(d_estimate_n);
    } else {
        d_psd = psd;
        d_q = q;
    }
    if (d_backend == TR_BACKEND_CUDA) {
        // Whole batches of FFT blocks per call when the stream has them.
        detail::set_min_output_buffers(
            *this, static_cast<long>(std::min<size_t>(2 * d_batch * block, INT_MAX / 8)));
    }
    if (d_requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA)
        detail::log_cpu_fallback(d_logger, device);
    // Tags move with the samples they mark (work() adds the latency).
    set_tag_propagation_policy(TPP_DONT);
}

whiten_ff_impl::~whiten_ff_impl()
{
    if (d_q) tr_whiten_destroy(d_q);
}

tr_whiten *whiten_ff_impl::create(const double *psd, double fmin) const
{
    tr_whiten_config c = tr_whiten_config_default();
    c.rate = d_rate;
    c.psd = psd;
    c.nfft = d_nfft;
    c.fmin = fmin;
    c.half_len = d_half;
    c.backend = d_requested;
    c.device = d_device;
    c.batch = d_batch;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    tr_whiten *q = tr_whiten_create(&c, &err);
    if (!q) throw_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return q;
}

// q takes over from the current filter after seeing the remembered input, so
// that its next output is the whitened sample latency() before the next input.
void whiten_ff_impl::take_over(tr_whiten *q)
{
    const size_t h = d_hist.size();
    d_scratch.resize(h);
    tr_status st = tr_whiten_process(q, d_hist.data() + d_hist_pos, h - d_hist_pos,
                                     d_scratch.data());
    if (st == TR_OK)
        st = tr_whiten_process(q, d_hist.data(), d_hist_pos, d_scratch.data());
    if (st != TR_OK) {
        const std::string msg = tr_whiten_last_error(q);
        tr_whiten_destroy(q);
        throw_status(st, msg.c_str());
    }
    if (d_q) {
        d_gated_done += tr_whiten_gated(d_q) - d_gated_base;
        tr_whiten_destroy(d_q);
    }
    d_q = q;
    d_gated_base = tr_whiten_gated(q);
}

void whiten_ff_impl::finish_estimate()
{
    std::vector<double> psd(tr_psd_len(d_nfft));
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    const tr_status st = tr_psd_welch(d_estimate.data(), d_estimate.size(), d_rate,
                                      d_nfft, psd.data(), &err);
    if (st != TR_OK) throw_status(st, err.message);
    try {
        take_over(create(psd.data(), d_fmin));
    } catch (const std::exception &e) {
        throw std::runtime_error(
            "whiten_ff: the PSD estimated from the first " +
            std::to_string(d_estimate_n) +
            " samples cannot whiten (silent or non-finite data?): " + e.what());
    }
    d_psd.swap(psd);
    d_estimating = false;
    std::vector<float>().swap(d_estimate);
    d_logger->info("PSD estimated from the first {:d} samples", d_estimate_n);
}

void whiten_ff_impl::remember(const float *x, size_t n)
{
    const size_t h = d_hist.size();
    if (n >= h) {
        std::copy(x + n - h, x + n, d_hist.begin());
        d_hist_pos = 0;
        return;
    }
    for (size_t i = 0; i < n; ++i) {
        d_hist[d_hist_pos] = x[i];
        d_hist_pos = d_hist_pos + 1 == h ? 0 : d_hist_pos + 1;
    }
}

bool whiten_ff_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    // A restarted flow graph starts a new stream (an estimated PSD is kept).
    if (d_q) {
        const tr_status st = tr_whiten_reset(d_q);
        if (st != TR_OK) throw_status(st, tr_whiten_last_error(d_q));
    }
    std::fill(d_hist.begin(), d_hist.end(), 0.0f);
    d_hist_pos = 0;
    d_consumed = 0;
    d_gated_done = d_gated_base = d_gated_seen = 0;
    if (!d_psd.empty()) d_estimate.clear();
    return sync_block::start();
}

int whiten_ff_impl::work(int noutput_items, gr_vector_const_void_star &input_items,
                         gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);
    // A failure here (a PSD estimate that cannot whiten, a CUDA error) ends
    // the stream with the reason in the log rather than stalling the graph.
    try {
        return whiten(noutput_items, input_items, output_items);
    } catch (const std::exception &e) {
        d_logger->error("{:s}", e.what());
        return WORK_DONE;
    }
}

int whiten_ff_impl::whiten(int noutput_items, gr_vector_const_void_star &input_items,
                           gr_vector_void_star &output_items)
{
    const float *in = static_cast<const float *>(input_items[0]);
    float *out = static_cast<float *>(output_items[0]);
    size_t n = static_cast<size_t>(noutput_items), done = 0;
    if (d_psd.empty()) {
        done = std::min(n, d_estimate_n - d_estimate.size());
        d_estimate.insert(d_estimate.end(), in, in + done);
        std::fill(out, out + done, 0.0f);
        remember(in, done);
        if (d_estimate.size() == d_estimate_n) finish_estimate();
    } else if (d_rebuild) {
        take_over(create(d_psd.data(), d_fmin));
    }
    d_rebuild = false;
    if (done < n) {
        const tr_status st = tr_whiten_process(d_q, in + done, n - done, out + done);
        if (st != TR_OK) throw_status(st, tr_whiten_last_error(d_q));
        remember(in + done, n - done);
    }
    // A filter that took over has seen the zeros before the stream as samples;
    // outputs before the stream's start are 0 whatever filter made them.
    if (d_consumed < d_latency)
        std::fill(out, out + std::min<uint64_t>(n, d_latency - d_consumed), 0.0f);
    d_consumed += n;
    const uint64_t g = d_gated_done + tr_whiten_gated(d_q) - d_gated_base;
    if (g > d_gated_seen) {
        d_logger->warn("{:d} outputs gated to 0 around non-finite input ({:d} so far)",
                       g - d_gated_seen, g);
        d_gated_seen = g;
    }
    std::vector<tag_t> tags;
    get_tags_in_range(tags, 0, nitems_read(0), nitems_read(0) + n);
    for (const tag_t &t : tags)
        add_item_tag(0, t.offset + d_latency, t.key, t.value, t.srcid);
    return noutput_items;
}

void whiten_ff_impl::set_fmin(double fmin)
{
    gr::thread::scoped_lock guard(d_setlock);
    if (!(fmin >= 0.0) || !(fmin < d_rate / 2.0))
        throw std::invalid_argument("whiten_ff: fmin must be in [0, rate / 2), got " +
                                    std::to_string(fmin));
    // Check the PSD from the new fmin up now; the new filter takes over in work().
    if (!d_psd.empty()) tr_whiten_destroy(create(d_psd.data(), fmin));
    d_fmin = fmin;
    d_rebuild = !d_psd.empty();
}

double whiten_ff_impl::fmin() const
{
    return d_fmin;
}

uint64_t whiten_ff_impl::latency() const
{
    return d_latency;
}

size_t whiten_ff_impl::half_len() const
{
    return d_half_used;
}

uint64_t whiten_ff_impl::gated() const
{
    return d_gated_seen;
}

bool whiten_ff_impl::estimating() const
{
    return d_estimating;
}

std::string whiten_ff_impl::backend() const
{
    return tr_backend_name(d_backend);
}

} // namespace transient
} // namespace gr
