/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: boxcar search block, implementation over libtransient.
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020).
 *
 * Every consumed sample goes to the search (tr_boxcar_process) at once. The
 * search answers Y/W for position p only latency samples later; the values
 * wait in an internal FIFO and go out, time-aligned with the input, once the
 * clustering has closed every event that can start at or before them (so the
 * "pulse" tag can sit on the event's start sample). The FIFO holds at most
 * hold() = latency + clustering horizon positions beyond what the output
 * buffer can take.
 */

#include "boxcar_search_ff_impl.h"
#include "block_util.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/io_signature.h>
#include <volk/volk.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

// Samples per channel per core call on the CPU: 8192, fewer with many channels
// (k_chunk_values floats per scratch array at most, 64 samples at least).
constexpr size_t k_chunk = 8192;
constexpr size_t k_chunk_values = size_t(1) << 22;

template <class T> const char *block_name();
template <> const char *block_name<float>()
{
    return "boxcar_search_ff";
}
template <> const char *block_name<gr_complex>()
{
    return "boxcar_search_cf";
}

template <class T> [[noreturn]] void throw_status(tr_status st, const char *what)
{
    detail::throw_status(block_name<T>(), st, what);
}

template <class T> [[noreturn]] void invalid(const std::string &what)
{
    throw std::invalid_argument(std::string(block_name<T>()) + ": " + what);
}

template <class T> tr_backend parse_backend(const std::string &name)
{
    return detail::parse_backend(block_name<T>(), name);
}

template <class T> tr_boxcar_algorithm parse_algorithm(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "boxdit") return TR_BOXCAR_BOXDIT;
    if (s == "igrid") return TR_BOXCAR_IGRID;
    if (s == "ideal") return TR_BOXCAR_IDEAL;
    invalid<T>("algorithm must be \"boxdit\", \"igrid\" or \"ideal\", not \"" + name +
               "\"");
}

template <class T> tr_boxcar_norm_mode parse_norm_mode(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "white") return TR_BOXCAR_NORM_WHITE;
    if (s == "levels") return TR_BOXCAR_NORM_LEVELS;
    if (s == "fixed") return TR_BOXCAR_NORM_FIXED;
    invalid<T>("norm_mode must be \"white\", \"levels\" or \"fixed\", not \"" + name +
               "\"");
}

// true: "block" (median of block medians), false: "median" (running median)
template <class T> bool parse_baseline_mode(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "median") return false;
    if (s == "block") return true;
    invalid<T>("baseline_mode must be \"median\" or \"block\", not \"" + name + "\"");
}

tr_boxcar_baseline_mode baseline_of(unsigned int window, bool block)
{
    if (!window) return TR_BOXCAR_BASELINE_NONE;
    return block ? TR_BOXCAR_BASELINE_BLOCK_MEDIAN : TR_BOXCAR_BASELINE_MEDIAN;
}

const char *norm_mode_name(tr_boxcar_norm_mode m)
{
    switch (m) {
    case TR_BOXCAR_NORM_LEVELS:
        return "levels";
    case TR_BOXCAR_NORM_FIXED:
        return "fixed";
    default:
        return "white";
    }
}

tr_error no_error()
{
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    return err;
}

} // namespace

template <class T>
typename boxcar_search<T>::sptr boxcar_search<T>::make(
    unsigned int nchan, const std::string &algorithm, const std::vector<int> &widths,
    unsigned int depth, unsigned int layers, unsigned int max_width, float threshold,
    const std::string &norm_mode, double reject_sigma, unsigned int window,
    unsigned int norm_history, unsigned int baseline_window,
    const std::string &baseline_mode, double fixed_mean, double fixed_sigma,
    unsigned int cluster_time, unsigned int cluster_chan, const std::string &backend,
    int device, size_t batch, bool device_buffers, const std::string &msg_format)
{
    return gnuradio::make_block_sptr<boxcar_search_impl<T>>(
        nchan, algorithm, widths, depth, layers, max_width, threshold, norm_mode,
        reject_sigma, window, norm_history, baseline_window, baseline_mode, fixed_mean,
        fixed_sigma, cluster_time, cluster_chan, backend, device, batch, device_buffers,
        msg_format);
}

template <class T>
boxcar_search_impl<T>::boxcar_search_impl(
    unsigned int nchan, const std::string &algorithm, const std::vector<int> &widths,
    unsigned int depth, unsigned int layers, unsigned int max_width, float threshold,
    const std::string &norm_mode, double reject_sigma, unsigned int window,
    unsigned int norm_history, unsigned int baseline_window,
    const std::string &baseline_mode, double fixed_mean, double fixed_sigma,
    unsigned int cluster_time, unsigned int cluster_chan, const std::string &backend,
    int device, size_t batch, bool device_buffers, const std::string &msg_format)
    : gr::block(block_name<T>(),
                gr::io_signature::make(1, 1, sizeof(T) * std::max(nchan, 1u)),
                gr::io_signature::make(0, 2, sizeof(float) * std::max(nchan, 1u))),
      d_nchan(nchan), d_q(nullptr), d_cands(nullptr), d_backend(TR_BACKEND_CPU),
      d_threshold(threshold), d_latency(0), d_lend(0), d_hold(0),
      d_chunk(
          std::max<size_t>(64, std::min(k_chunk, k_chunk_values / std::max(nchan, 1u)))),
      d_need_base(true), d_out_base(0), d_core_base(0), d_fed(0), d_ready(0),
      d_released(0), d_flushed(false), d_restart_pending(false), d_ncands(0),
      d_nonfinite_before(0), d_fifo_snr(std::max(nchan, 1u)),
      d_fifo_width(std::max(nchan, 1u)), d_span(0),
      d_block_baseline(parse_baseline_mode<T>(baseline_mode)),
      d_vectors(detail::parse_msg_format(block_name<T>(), msg_format)),
      d_port(pmt::mp("detects")), d_key_pulse(pmt::mp("pulse")),
      d_key_pulses(pmt::mp("pulses")), d_key_start(pmt::mp("start")),
      d_key_width(pmt::mp("width")), d_key_snr(pmt::mp("snr")),
      d_key_channel(pmt::mp("channel")), d_key_sample(pmt::mp("sample")),
      d_key_members(pmt::mp("members")), d_device_buffers(device_buffers)
{
    if (nchan < 1 || nchan > TR_BOXCAR_MAX_NCHAN)
        invalid<T>("nchan must be in [1, " + std::to_string(TR_BOXCAR_MAX_NCHAN) +
                   "], got " + std::to_string(nchan));
    if (!std::isfinite(threshold)) invalid<T>("threshold must be finite");

    d_cfg = tr_boxcar_config_default();
    d_cfg.algorithm = parse_algorithm<T>(algorithm);
    d_cfg.max_width = max_width;
    if (d_cfg.algorithm == TR_BOXCAR_BOXDIT) {
        if (widths.empty()) invalid<T>("widths: BoxDIT needs at least one width");
        if (widths.size() > TR_BOXCAR_MAX_LIST)
            invalid<T>("widths: at most " + std::to_string(TR_BOXCAR_MAX_LIST) +
                       " entries, got " + std::to_string(widths.size()));
        for (size_t i = 0; i < widths.size(); i++) {
            if (widths[i] < 2 || widths[i] % 2 != 0)
                invalid<T>("widths: every entry must be even and >= 2, entry " +
                           std::to_string(i) + " is " + std::to_string(widths[i]));
            d_cfg.widths[i] = static_cast<uint32_t>(widths[i]);
        }
        d_cfg.nwidths = static_cast<uint32_t>(widths.size());
    }
    d_cfg.depth = depth;
    d_cfg.layers = layers;
    d_cfg.nchan = nchan;
    d_cfg.norm.mode = parse_norm_mode<T>(norm_mode);
    d_cfg.norm.reject_sigma = reject_sigma;
    d_cfg.norm.window = window;
    d_cfg.norm.history = norm_history;
    d_cfg.norm.baseline = baseline_of(baseline_window, d_block_baseline);
    if (baseline_window) d_cfg.norm.baseline_window = baseline_window;
    d_cfg.norm.fixed_mean = fixed_mean;
    d_cfg.norm.fixed_sigma = fixed_sigma;
    d_cfg.backend = parse_backend<T>(backend);
    d_cfg.device = device;
    d_cfg.variant = TR_VARIANT_FAST;
    d_cfg.batch = batch;
    const tr_backend requested = d_cfg.backend;
    if (device_buffers) { // device buffers: what cannot work is refused first,
        // the settings before the backend (the same error with or without a GPU)
        detail::check_boxcar_device(block_name<T>(), std::is_same<T, gr_complex>::value,
                                    d_cfg.norm);
        detail::check_device_request(block_name<T>(), requested);
    }

    validate_norm(d_cfg.norm);
    create_search(); // validates everything the core checks
    try {
        d_backend = tr_boxcar_backend(d_q);
        d_cfg.backend = d_backend; // a restart must not change the backend

        // Positions >= 0 only reach the clustering (start_position 0). An
        // event spans at most 4 L_end samples: bounds the hold.
        d_ccfg = tr_candidates_config_default();
        d_ccfg.nchan = nchan;
        d_ccfg.threshold = threshold;
        d_ccfg.link_time = cluster_time;
        d_ccfg.link_chan = cluster_chan;
        d_ccfg.start_position = 0;
        d_span = std::max<uint64_t>(64, 4 * static_cast<uint64_t>(d_lend));
        d_ccfg.max_span = d_span;
        create_clustering();
        set_hold();
        if (d_backend == TR_BACKEND_CUDA) {
            if (batch == 0 || batch > static_cast<size_t>(INT_MAX / 4))
                invalid<T>("batch must be in [1, " + std::to_string(INT_MAX / 4) +
                           "] with the CUDA backend");
            this->set_output_multiple(static_cast<int>(batch));
            d_chunk = batch;
        } else {
            detail::set_min_output_buffers(
                *this, detail::cpu_output_buffer_items(batch, sizeof(float) * nchan));
        }
        if (device_buffers) { // device buffers: input in device memory
            detail::check_device_backend(block_name<T>(), d_backend, device);
            d_devio = std::make_unique<detail::boxcar_device_io>(block_name<T>(), device,
                                                                 d_chunk * nchan);
        }
        d_snr.resize(d_chunk * nchan);
        d_width.resize(d_chunk * nchan);
        if (std::is_same<T, gr_complex>::value) d_power.resize(d_chunk * nchan);
        d_events.resize(1024);
    } catch (...) {
        if (d_cands) tr_candidates_destroy(d_cands);
        tr_boxcar_destroy(d_q);
        d_cands = nullptr;
        d_q = nullptr;
        throw;
    }

    if (requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA) {
        detail::log_cpu_fallback(this->d_logger, device);
    }
    this->d_debug_logger->debug(
        "{} channel(s), {}, L_end {}, latency {}, hold {} samples", nchan,
        tr_boxcar_algorithm_name(d_cfg.algorithm), d_lend, d_latency, d_hold);

    this->message_port_register_out(d_port);
}

template <class T> boxcar_search_impl<T>::~boxcar_search_impl()
{
    if (d_cands) tr_candidates_destroy(d_cands);
    if (d_q) tr_boxcar_destroy(d_q);
}

template <class T> void boxcar_search_impl<T>::create_search()
{
    tr_error err = no_error();
    tr_boxcar *q = tr_boxcar_create(&d_cfg, &err);
    if (!q) throw_status<T>(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    if (d_q) tr_boxcar_destroy(d_q);
    d_q = q;
    // The latency depends on the statistics settings (the first window is
    // held in "white" and "levels" modes), so a restart may change it.
    d_latency = tr_boxcar_latency(q);
    d_lend = tr_boxcar_lend(q);
    if (d_cands) set_hold();
}

template <class T> void boxcar_search_impl<T>::set_hold()
{
    const uint64_t horizon = tr_candidates_horizon(d_cands);
    if (horizon > UINT_MAX / 2 - d_latency)
        throw std::runtime_error(std::string(block_name<T>()) +
                                 ": clustering horizon out of range");
    d_hold = d_latency + static_cast<unsigned int>(horizon);
}

template <class T> void boxcar_search_impl<T>::create_clustering()
{
    tr_error err = no_error();
    tr_candidates *c = tr_candidates_create(&d_ccfg, &err);
    if (!c) throw_status<T>(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    if (d_cands) tr_candidates_destroy(d_cands);
    d_cands = c;
}

/* ---- stream state ---------------------------------------------------- */

template <class T> void boxcar_search_impl<T>::reset_stream()
{
    d_need_base = true;
    d_out_base = 0;
    d_core_base = 0;
    d_fed = 0;
    d_ready = 0;
    d_released = 0;
    d_flushed = false;
    d_restart_pending = false;
    d_ncands = 0;
    d_nonfinite_before = 0;
    d_warning.clear();
    d_fifo_snr.clear();
    d_fifo_width.clear();
    d_tags.clear();
    d_batch.clear();
    clear_event_vectors();
}

template <class T> bool boxcar_search_impl<T>::start()
{
    gr::thread::scoped_lock guard(this->d_setlock);
    d_input_on_device = d_devio && detail::input_on_device(*this, this->d_logger);
    // A restarted flow graph starts a new stream: forget the old one (with
    // the statistics settings changed since, if any).
    if (d_restart_pending) {
        create_search();
    } else if (d_fed > 0 || d_flushed || d_core_base > 0) {
        const tr_status st = tr_boxcar_reset(d_q);
        if (st != TR_OK) throw_status<T>(st, tr_boxcar_last_error(d_q));
    }
    if (d_fed > 0 || d_flushed || d_core_base > 0) {
        const tr_status st = tr_candidates_reset(d_cands);
        if (st != TR_OK) throw_status<T>(st, tr_candidates_last_error(d_cands));
    }
    reset_stream();
    // Without outputs on the CUDA backend (host input) the S/N and widths stay
    // on the device and are clustered there: only events come back. Measured
    // statistics on the device need no baseline (window 0 is held there as on
    // the host); with a baseline the statistics stay on the host.
    const bool dev_norm = d_cfg.norm.baseline == TR_BOXCAR_BASELINE_NONE;
    const bool dev =
        !has_output() && d_backend == TR_BACKEND_CUDA && !d_input_on_device && dev_norm;
    if (dev != d_device_cands) {
        d_ccfg.backend = dev ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
        d_ccfg.device = d_cfg.device;
        d_ccfg.threshold = d_threshold;
        create_clustering();
        d_device_cands = dev;
    }
    // Without outputs the block is a sink: GNU Radio calls a sink only while
    // an output multiple of input items is available, so the CUDA batch would
    // leave the end of a stream unprocessed. Restored in stop().
    if (!has_output() && this->output_multiple() > 1) {
        d_saved_multiple = this->output_multiple();
        this->set_output_multiple(1);
    }
    return gr::block::start();
}

template <class T> bool boxcar_search_impl<T>::check_topology(int, int noutputs)
{
    if (noutputs == 1) {
        this->d_logger->error("connect both outputs (S/N and width) or neither (then "
                              "the candidates come on \"detects\" only)");
        return false;
    }
    return true;
}

template <class T> bool boxcar_search_impl<T>::has_output() const
{
    const block_detail_sptr det = this->detail();
    return !det || det->noutputs() > 0;
}

template <class T> bool boxcar_search_impl<T>::stop()
{
    {
        gr::thread::scoped_lock guard(this->d_setlock);
        // Stream stopped before its end: the events still open among the
        // samples searched are closed and published on "detects" (their
        // samples can no longer be released, so they get no tags).
        if (!d_flushed && d_cands) {
            // the device's last pieces first (the pipelined search's)
            if (tr_boxcar_search_candidates_drain(d_q) == TR_OK &&
                tr_candidates_flush(d_cands) == TR_OK)
                read_events();
        }
        publish_batch();
        d_pins.unpin();
        d_scratch_pins.unpin();
        d_scratch_pinned = false;
        if (d_saved_multiple > 0) {
            this->set_output_multiple(d_saved_multiple);
            d_saved_multiple = 0;
        }
    }
    return gr::block::stop();
}

/* ---- FIFO ------------------------------------------------------------ */

template <class T>
void boxcar_search_impl<T>::fifo_pop(float *snr, float *width, size_t n)
{
    d_fifo_snr.pop(snr, n);
    d_fifo_width.pop(width, n);
}

/* ---- search and clustering ------------------------------------------- */

// The n outputs in d_snr/d_width of a core call that started at core
// position pos_in: output k is core position pos_in + k - latency. Negative
// core positions (before the data, or before a restart: the search ended
// then produced them) are dropped; the rest go to the FIFO and the clustering.
template <class T> void boxcar_search_impl<T>::take_outputs(size_t n, uint64_t pos_in)
{
    const size_t nc = d_nchan;
    const size_t skip =
        pos_in >= d_latency
            ? 0
            : std::min<size_t>(n, static_cast<size_t>(d_latency - pos_in));
    const size_t m = n - skip;
    if (m == 0) return;
    const uint64_t first = d_core_base + pos_in + skip - d_latency;
    if (first != d_ready)
        throw std::runtime_error(std::string(block_name<T>()) +
                                 ": search output out of sequence");
    cluster(d_snr.data() + skip * nc, d_width.data() + skip * nc, m);
    d_ready = first + m;
    if (!has_output()) return; // candidates only: nothing to hold
    d_fifo_snr.push(d_snr.data() + skip * nc, m);
    volk_32i_s32f_convert_32f(d_fifo_width.reserve(m), d_width.data() + skip * nc, 1.0f,
                              static_cast<unsigned int>(m * nc));
    d_fifo_width.commit(m);
}

// Gives the n positions d_ready .. d_ready + n - 1 (snr, width) to the
// clustering (the warm-up masked by the core), then takes the events closed.
template <class T>
void boxcar_search_impl<T>::cluster(const float *snr, const int32_t *width, size_t n)
{
    const tr_status st =
        tr_boxcar_candidates_process(d_cands, d_q, d_ready - d_core_base, snr, width, n);
    if (st != TR_OK) throw_status<T>(st, tr_candidates_last_error(d_cands));
    read_events();
}

// Searches n samples of x. With out_snr set, the outputs of positions
// d_ready onwards go straight to out_snr/out_width (room positions there;
// widths are converted in place), else through d_snr/d_width to the FIFO.
template <class T>
void boxcar_search_impl<T>::run_core(const T *x, size_t n, float *out_snr,
                                     float *out_width)
{
    const size_t nc = d_nchan;
    size_t done = 0;
    while (done < n) {
        const size_t m = std::min(d_chunk, n - done);
        const float *xf;
        if constexpr (std::is_same<T, gr_complex>::value) {
            volk_32fc_magnitude_squared_32f(d_power.data(), x + done * nc,
                                            static_cast<unsigned int>(m * nc));
            xf = d_power.data();
        } else {
            xf = x + done * nc;
        }
        const uint64_t pos_in = tr_boxcar_position(d_q);
        if (d_device_cands) {
            // No outputs: searched and clustered on the device, events back;
            // the call's last piece is searched with the next call, beside
            // the copy of its samples (the flush and stop() drain it)
            const tr_status st =
                tr_boxcar_search_candidates_pipelined(d_cands, d_q, xf, m);
            if (st != TR_OK) throw_status<T>(st, tr_boxcar_last_error(d_q));
            d_fed += m;
            if (pos_in + m > d_latency) d_ready = d_core_base + pos_in + m - d_latency;
            read_events();
            done += m;
            continue;
        }
        // Direct: every output of this call is a position >= 0 of the search.
        const bool direct = out_snr && pos_in >= d_latency;
        float *ys = d_snr.data();
        int32_t *ws = d_width.data();
        if (direct) {
            ys = out_snr + (d_ready - d_out_ready) * nc;
            ws = reinterpret_cast<int32_t *>(out_width + (d_ready - d_out_ready) * nc);
        } else if (d_backend == TR_BACKEND_CUDA && !d_scratch_pinned) {
            d_scratch_pinned = true;
            d_scratch_pins.pin_range(d_snr.data(), d_snr.size() * sizeof(float));
            d_scratch_pins.pin_range(d_width.data(), d_width.size() * sizeof(int32_t));
        }
        const tr_status st = d_input_on_device ? d_devio->process(d_q, xf, m, nc, ys, ws)
                                               : tr_boxcar_process(d_q, xf, m, ys, ws);
        if (st != TR_OK) throw_status<T>(st, tr_boxcar_last_error(d_q));
        d_fed += m;
        if (direct) {
            const uint64_t first = d_core_base + pos_in - d_latency;
            if (first != d_ready)
                throw std::runtime_error(std::string(block_name<T>()) +
                                         ": search output out of sequence");
            cluster(ys, ws, m);
            // int32 -> float in place (the same 4 bytes per value)
            volk_32i_s32f_convert_32f(reinterpret_cast<float *>(ws), ws, 1.0f,
                                      static_cast<unsigned int>(m * nc));
            d_ready = first + m;
        } else {
            take_outputs(m, pos_in);
            if (out_snr) { // the FIFO's new positions follow the direct ones
                const size_t k = static_cast<size_t>(d_ready - d_out_ready);
                const size_t f = fifo_count();
                fifo_pop(out_snr + (k - f) * nc, out_width + (k - f) * nc, f);
            }
        }
        done += m;
    }
}

// Ends the running search: its last latency positions and, at the end of the
// stream, every event still open.
template <class T> void boxcar_search_impl<T>::flush_all()
{
    const uint64_t pos = tr_boxcar_position(d_q);
    const size_t nl = d_latency;
    if (d_snr.size() < nl * d_nchan) {
        d_scratch_pins.unpin(); // the vectors move
        d_scratch_pinned = false;
        d_snr.resize(nl * d_nchan);
        d_width.resize(nl * d_nchan);
    }
    const tr_status st = tr_boxcar_flush(d_q, d_snr.data(), d_width.data());
    if (st != TR_OK) throw_status<T>(st, tr_boxcar_last_error(d_q));
    d_warning = tr_boxcar_warning(d_q);
    if (!d_warning.empty()) this->d_logger->warn("{}", d_warning);
    // The flushed outputs are core positions pos - latency .. pos - 1.
    take_outputs(nl, pos);
}

// End of the stream: the search's last positions and every open event.
template <class T> void boxcar_search_impl<T>::finish_stream()
{
    flush_all();
    const tr_status st = tr_candidates_flush(d_cands);
    if (st != TR_OK) throw_status<T>(st, tr_candidates_last_error(d_cands));
    read_events();
    d_flushed = true;
}

template <class T> void boxcar_search_impl<T>::restart_search()
{
    d_restart_pending = false;
    flush_all();
    d_nonfinite_before += tr_boxcar_nonfinite(d_q);
    d_core_base = d_fed;
    create_search();
}

template <class T> void boxcar_search_impl<T>::read_events()
{
    for (;;) {
        const size_t n = tr_candidates_read(d_cands, d_events.data(), d_events.size());
        if (n == 0) break;
        for (size_t i = 0; i < n; i++) {
            const tr_candidate &e = d_events[i];
            const uint64_t start = static_cast<uint64_t>(std::max<int64_t>(e.start, 0));
            const uint64_t offset = d_out_base + start;
            const uint64_t sample =
                d_out_base + static_cast<uint64_t>(std::max<int64_t>(e.peak, 0));
            d_ncands++;
            if (d_vectors) {
                d_vstart.push_back(offset);
                d_vwidth.push_back(static_cast<int32_t>(e.width));
                d_vsnr.push_back(e.snr);
                d_vchannel.push_back(static_cast<int32_t>(e.channel));
                d_vsample.push_back(sample);
                d_vmembers.push_back(e.members);
                if (!has_output()) continue; // no stream to tag: no dict at all
            }
            pmt::pmt_t dict = pmt::make_dict();
            dict = pmt::dict_add(dict, d_key_start, pmt::from_uint64(offset));
            dict = pmt::dict_add(dict, d_key_width, pmt::from_long(e.width));
            dict = pmt::dict_add(dict, d_key_snr, pmt::from_double(e.snr));
            dict = pmt::dict_add(dict, d_key_channel, pmt::from_long(e.channel));
            dict = pmt::dict_add(dict, d_key_sample, pmt::from_uint64(sample));
            dict = pmt::dict_add(dict, d_key_members,
                                 pmt::from_long(static_cast<long>(e.members)));
            if (!d_vectors) d_batch.push(dict);
            if (!has_output()) continue; // no stream to tag
            if (start < d_released) {
                // Cannot happen: output is released only up to safe_position().
                this->d_logger->warn("pulse at sample {} closed after its sample was "
                                     "released; it is not tagged",
                                     offset);
                continue;
            }
            d_tags.push(offset, dict);
        }
    }
}

template <class T> uint64_t boxcar_search_impl<T>::safe_position() const
{
    if (d_flushed) return d_ready;
    // Every event whose first sample (hence whose start) lies before this
    // position is closed.
    const int64_t closed = tr_candidates_closed(d_cands);
    return std::min<uint64_t>(d_ready,
                              static_cast<uint64_t>(std::max<int64_t>(closed, 0)));
}

template <class T> void boxcar_search_impl<T>::publish_batch()
{
    if (!d_vstart.empty()) {
        // One dict of six uniform vectors (copied into the PMTs).
        const size_t n = d_vstart.size();
        pmt::pmt_t msg = pmt::make_dict();
        msg = pmt::dict_add(msg, d_key_start, pmt::init_u64vector(n, d_vstart.data()));
        msg = pmt::dict_add(msg, d_key_width, pmt::init_s32vector(n, d_vwidth.data()));
        msg = pmt::dict_add(msg, d_key_snr, pmt::init_f32vector(n, d_vsnr.data()));
        msg =
            pmt::dict_add(msg, d_key_channel, pmt::init_s32vector(n, d_vchannel.data()));
        msg = pmt::dict_add(msg, d_key_sample, pmt::init_u64vector(n, d_vsample.data()));
        msg =
            pmt::dict_add(msg, d_key_members, pmt::init_u64vector(n, d_vmembers.data()));
        clear_event_vectors();
        this->message_port_pub(d_port, msg);
    }
    d_batch.publish(*this, d_port, d_key_pulses);
}

template <class T> bool boxcar_search_impl<T>::input_single_mapped() const
{
    const block_detail_sptr det = this->detail();
    return det && det->ninputs() > 0 &&
           det->input(0)->buffer()->get_mapping_type() ==
               gr::buffer_mapping_type::single_mapped;
}

template <class T> void boxcar_search_impl<T>::clear_event_vectors()
{
    d_vstart.clear();
    d_vwidth.clear();
    d_vsnr.clear();
    d_vchannel.clear();
    d_vsample.clear();
    d_vmembers.clear();
}

/* ---- scheduling ------------------------------------------------------ */

template <class T>
void boxcar_search_impl<T>::forecast(int noutput_items,
                                     gr_vector_int &ninput_items_required)
{
    // Released-able positions go out without new input; once the upstream is
    // done, general_work() flushes and drains without new input too.
    const bool done = detail::upstream_done(*this);
    if (!has_output()) {
        // Sink: one sample stays until the upstream is done (work_no_output)
        ninput_items_required[0] = noutput_items + (done ? 0 : 1);
        return;
    }
    // Device buffers and other single-mapped inputs: any input will do. Such
    // a buffer may hold fewer contiguous items than a batch at its end, and
    // asking for more makes GNU Radio 3.10 move the unread items within the
    // buffer (its input-blocked callback), which changed the data read in
    // tests/flowgraph/test_device_buffers (case single_mapped, one run in
    // several).
    const bool single = d_devio || input_single_mapped();
    ninput_items_required[0] =
        (done || safe_position() > d_released) ? 0 : (single ? 1 : noutput_items);
}

template <class T>
int boxcar_search_impl<T>::general_work(int noutput_items, gr_vector_int &ninput_items,
                                        gr_vector_const_void_star &input_items,
                                        gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(this->d_setlock);

    const T *in = static_cast<const T *>(input_items[0]);
    if (output_items.empty()) return work_no_output(ninput_items[0], in);
    float *out_snr = static_cast<float *>(output_items[0]);
    float *out_width = static_cast<float *>(output_items[1]);
    const size_t ninput = static_cast<size_t>(std::max(ninput_items[0], 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));

    if (d_need_base) {
        d_out_base = this->nitems_written(0);
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items[0]);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, this->d_logger);

    size_t take = 0;
    bool direct = false;
    if (!d_flushed) {
        if (d_restart_pending) restart_search();
        // Take what can go out plus up to hold() samples more: bounds the FIFO.
        const size_t limit = noutput + d_hold;
        const size_t in_core = static_cast<size_t>(d_fed - d_ready);
        const size_t in_fifo = fifo_count() + in_core;
        take = std::min(ninput, limit > in_fifo ? limit - in_fifo : 0);
        // Direct: the FIFO goes to the output buffer and the search writes its
        // new outputs after it, when all of them fit (taking a little less
        // input if needed); what is not released then goes back to the FIFO.
        // A single-mapped input is read as before (all that is offered: with
        // GNU Radio 3.10.5, leaving a rest at the end of a single-mapped
        // buffer changed the results in tests/flowgraph/test_device_buffers).
        const size_t room = noutput > in_fifo ? noutput - in_fifo : 0;
        const size_t least =
            input_single_mapped() ? take : std::min<size_t>(take, d_hold);
        direct = take > 0 && room > 0 && !(finished && take == ninput) &&
                 std::min(take, room) >= least;
        if (direct) {
            take = std::min(take, room);
            const size_t f = fifo_count();
            fifo_pop(out_snr, out_width, f);
            d_out_ready = d_released;
            run_core(in, take, out_snr, out_width);
        } else if (take > 0) {
            run_core(in, take, nullptr, nullptr);
        }
        if (finished && take == ninput) {
            finish_stream();
        }
    }
    publish_batch();

    const uint64_t safe = safe_position();
    const size_t n_out = std::min<uint64_t>(noutput, safe - d_released);
    // Events close out of start order across channels (the tags are sorted).
    d_tags.attach(*this, d_out_base + d_released + n_out, d_key_pulse);
    if (direct) {
        // out[0, d_ready - d_released) holds every position not released.
        const size_t held = static_cast<size_t>(d_ready - d_released) - n_out;
        if (held > 0) {
            const size_t nc = d_nchan;
            d_fifo_snr.push(out_snr + n_out * nc, held);
            d_fifo_width.push(out_width + n_out * nc, held);
        }
    } else {
        fifo_pop(out_snr, out_width, n_out);
    }
    d_released += n_out;
    this->consume(0, static_cast<int>(take));

    if (d_flushed && n_out == 0 && fifo_count() == 0) return gr::block::WORK_DONE;
    return static_cast<int>(n_out);
}

// No outputs connected: every input sample is searched and clustered, the
// events go out on "detects" (no tags). GNU Radio calls a sink only while
// input is available, so the last sample stays until the upstream is done and
// the call that takes it flushes the search and the clustering.
template <class T>
int boxcar_search_impl<T>::work_no_output(int ninput_items, const T *in)
{
    const size_t ninput = static_cast<size_t>(std::max(ninput_items, 0));
    if (d_need_base) {
        d_out_base = this->nitems_read(0); // positions count input samples
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, this->d_logger);
    size_t take = 0;
    if (!d_flushed) {
        if (d_restart_pending) restart_search();
        take = finished || ninput == 0 ? ninput : ninput - 1;
        if (!finished && d_backend == TR_BACKEND_CUDA) {
            // Calls to the core end at multiples of the batch where the input
            // reaches one: a call that ends mid-batch would leave every later
            // call unaligned, each with partial statistics windows (more
            // launches per call).
            const uint64_t pos = d_fed - d_core_base;
            const uint64_t end = (pos + take) / d_chunk * d_chunk;
            if (end > pos) take = static_cast<size_t>(end - pos);
        }
        if (take > 0) run_core(in, take, nullptr, nullptr);
        if (finished) {
            finish_stream();
        }
    }
    publish_batch();
    this->consume(0, static_cast<int>(take));
    return d_flushed ? gr::block::WORK_DONE : 0;
}

/* ---- setters and getters --------------------------------------------- */

template <class T> void boxcar_search_impl<T>::set_threshold(float threshold)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    if (!std::isfinite(threshold)) invalid<T>("threshold must be finite");
    const tr_status st = tr_candidates_set_threshold(d_cands, threshold);
    if (st != TR_OK) throw_status<T>(st, tr_candidates_last_error(d_cands));
    d_threshold = threshold;
}

template <class T> float boxcar_search_impl<T>::threshold() const
{
    return d_threshold;
}

template <class T>
void boxcar_search_impl<T>::validate_norm(const tr_boxcar_norm_config &norm) const
{
    // The settings of every mode must hold, not only those of the mode in
    // use: a later set_norm_mode() must not meet a window the core refuses.
    const uint32_t max_width = std::max<uint32_t>(d_cfg.max_width, d_lend);
    for (int m = 0; m < 2; m++) {
        tr_boxcar_norm_config c = norm;
        if (m == 1) c.mode = TR_BOXCAR_NORM_WHITE;
        tr_error err = no_error();
        const tr_status st = tr_boxcar_norm_validate(&c, d_nchan, max_width, &err);
        if (st != TR_OK) throw_status<T>(st, err.message);
    }
}

// Caller holds d_setlock.
template <class T> void boxcar_search_impl<T>::set_norm(const tr_boxcar_norm_config &norm)
{
    if (d_devio) detail::check_boxcar_device(block_name<T>(), false, norm);
    validate_norm(norm);
    d_cfg.norm = norm;
    // Nothing searched yet: the new settings simply apply from the start.
    if (d_fed == d_core_base && !d_flushed) {
        create_search();
        return;
    }
    d_restart_pending = true;
}

template <class T> void boxcar_search_impl<T>::set_norm_mode(const std::string &mode)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    tr_boxcar_norm_config n = d_cfg.norm;
    n.mode = parse_norm_mode<T>(mode);
    if (n.mode == d_cfg.norm.mode) return;
    set_norm(n);
}

template <class T> std::string boxcar_search_impl<T>::norm_mode() const
{
    return norm_mode_name(d_cfg.norm.mode);
}

template <class T> void boxcar_search_impl<T>::set_reject_sigma(double reject_sigma)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    if (!(std::isfinite(reject_sigma) && reject_sigma >= 0))
        invalid<T>("reject_sigma must be finite and >= 0 (0 = no rejection)");
    if (reject_sigma == d_cfg.norm.reject_sigma) return;
    tr_boxcar_norm_config n = d_cfg.norm;
    n.reject_sigma = reject_sigma;
    set_norm(n);
}

template <class T> double boxcar_search_impl<T>::reject_sigma() const
{
    return d_cfg.norm.reject_sigma;
}

template <class T> void boxcar_search_impl<T>::set_window(unsigned int window)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    if (window == d_cfg.norm.window) return;
    tr_boxcar_norm_config n = d_cfg.norm;
    n.window = window;
    set_norm(n);
}

template <class T> unsigned int boxcar_search_impl<T>::window() const
{
    return d_cfg.norm.window;
}

template <class T>
void boxcar_search_impl<T>::set_baseline_window(unsigned int baseline_window)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    if (baseline_window == this->baseline_window()) return;
    tr_boxcar_norm_config n = d_cfg.norm;
    n.baseline = baseline_of(baseline_window, d_block_baseline);
    if (baseline_window) n.baseline_window = baseline_window;
    set_norm(n);
}

template <class T> unsigned int boxcar_search_impl<T>::baseline_window() const
{
    return d_cfg.norm.baseline == TR_BOXCAR_BASELINE_NONE ? 0
                                                          : d_cfg.norm.baseline_window;
}

template <class T> void boxcar_search_impl<T>::set_baseline_mode(const std::string &mode)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    const bool block = parse_baseline_mode<T>(mode);
    if (block == d_block_baseline) return;
    tr_boxcar_norm_config n = d_cfg.norm;
    if (n.baseline == TR_BOXCAR_BASELINE_NONE) {
        d_block_baseline = block; // used once a baseline window is set
        return;
    }
    n.baseline = baseline_of(n.baseline_window, block);
    set_norm(n);
    d_block_baseline = block;
}

template <class T> std::string boxcar_search_impl<T>::baseline_mode() const
{
    return d_block_baseline ? "block" : "median";
}

template <class T> void boxcar_search_impl<T>::set_fixed_stats(double mean, double sigma)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    if (!(std::isfinite(mean) && std::isfinite(sigma) && sigma > 0))
        invalid<T>("fixed mean and sigma must be finite with sigma > 0");
    if (mean == d_cfg.norm.fixed_mean && sigma == d_cfg.norm.fixed_sigma) return;
    tr_boxcar_norm_config n = d_cfg.norm;
    n.fixed_mean = mean;
    n.fixed_sigma = sigma;
    if (n.mode != TR_BOXCAR_NORM_FIXED) {
        validate_norm(n);
        d_cfg.norm = n; // used once the mode becomes "fixed"
        return;
    }
    set_norm(n);
}

template <class T> uint64_t boxcar_search_impl<T>::candidates() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(this->d_setlock));
    return d_ncands;
}

template <class T> uint64_t boxcar_search_impl<T>::nonfinite() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(this->d_setlock));
    return d_nonfinite_before + tr_boxcar_nonfinite(d_q);
}

template <class T> std::string boxcar_search_impl<T>::warning() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(this->d_setlock));
    return d_warning;
}

template <class T> std::string boxcar_search_impl<T>::backend() const
{
    return d_backend == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

template class boxcar_search<float>;
template class boxcar_search<gr_complex>;
template class boxcar_search_impl<float>;
template class boxcar_search_impl<gr_complex>;

} // namespace transient
} // namespace gr
