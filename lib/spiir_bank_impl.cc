/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: SPIIR filter bank blocks over libtransient.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs".
 *
 * The block feeds every consumed sample to the core right away, writing the
 * SNR vectors into an internal FIFO, and scans them for triggers. A trigger is
 * decided `window` samples after its peak, so an item is released downstream
 * only once the core has processed `window` samples after it (or the stream
 * has ended): every trigger can then be tagged on its peak's item.
 *
 * The output is optional. Without it the block is a sink: the SNR of a call
 * goes to scratch memory, is searched and forgotten; the triggers go out on
 * `detects` only. The chi-square of a trigger reads the SNR rows around its
 * peak from a history of its own (the released items are gone, and a sink
 * keeps none): half <= window puts every lag after the peak in it by the time
 * the trigger is decided, so the history is window + half rows plus the
 * piece being searched.
 *
 * A sink on the CUDA backend without chi-square never brings the SNR to the
 * host: the samples of a call go up once (from the page-locked GNU Radio
 * buffer), tr_spiir_process_device writes the SNR into device memory of the
 * block (spiir_device_io) and tr_spiir_triggers_process_device searches it
 * there; only the decided triggers come back, to the same tag and message
 * code. Decided in start(), where the ports are known;
 * GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS=0 keeps the host search (comparisons).
 */

#include "spiir_bank_impl.h"
#include "block_util.h"
#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

// Initial room of the FIFO beyond the window, in items.
constexpr size_t k_initial_room = 8192;

// CUDA: a work call's new samples go to the core in pieces of about this many
// (a multiple of 256), the next piece on the core while the trigger search
// scans the last one.
constexpr size_t k_piece = 4096;
constexpr size_t k_min_piece = 1024;

// Without the output: the SNR rows of one call (scratch memory) take at most
// about this many bytes (with CUDA at least two batches, so that the core
// overlaps one batch's transfers with the other's).
constexpr size_t k_sink_bytes = size_t(32) << 20;

using detail::parse_backend;
using detail::throw_status;

struct bank_deleter {
    void operator()(tr_spiir_bank *b) const { tr_spiir_bank_destroy(b); }
};
using bank_ptr = std::unique_ptr<tr_spiir_bank, bank_deleter>;

/* The bank of the make() arguments: from the file, or from the arrays. */
bank_ptr make_bank(const char *who, const std::string &bank_file,
                   const std::vector<std::complex<double>> &a1,
                   const std::vector<std::complex<double>> &b0,
                   const std::vector<int> &delay, const std::vector<int> &level,
                   const std::vector<int> &counts, double samp_rate)
{
    const std::string w(who);
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    if (!std::isfinite(samp_rate) || samp_rate < 0.0)
        throw std::invalid_argument(w + ": samp_rate must be finite and >= 0, got " +
                                    std::to_string(samp_rate));
    if (!bank_file.empty()) {
        if (!a1.empty() || !b0.empty() || !delay.empty() || !level.empty() ||
            !counts.empty())
            throw std::invalid_argument(w + ": give either a bank file or the arrays "
                                            "a1, b0, delay, level and counts, not both");
        bank_ptr b(tr_spiir_bank_load(bank_file.c_str(), &err));
        if (!b) throw_status(who, err.code == TR_OK ? TR_ERR_IO : err.code, err.message);
        const double dt = tr_spiir_bank_dt(b.get());
        if (samp_rate != 0.0 && std::fabs(samp_rate * dt - 1.0) > 1e-9)
            throw std::invalid_argument(
                w + ": samp_rate " + std::to_string(samp_rate) + " Hz differs from the " +
                "bank file's " + std::to_string(1.0 / dt) + " Hz (0 takes the file's)");
        return b;
    }
    if (counts.empty())
        throw std::invalid_argument(w + ": no bank: give a bank file or the arrays "
                                        "(counts is empty)");
    if (!(samp_rate > 0.0))
        throw std::invalid_argument(w +
                                    ": samp_rate must be > 0 with a bank from arrays");
    const size_t n = a1.size();
    if (b0.size() != n || delay.size() != n || (!level.empty() && level.size() != n))
        throw std::invalid_argument(
            w + ": a1, b0, delay and level must have the same length (" +
            std::to_string(n) + ", " + std::to_string(b0.size()) + ", " +
            std::to_string(delay.size()) + ", " + std::to_string(level.size()) +
            "; level may be empty)");
    std::vector<uint32_t> cnt(counts.size());
    uint64_t total = 0;
    for (size_t t = 0; t < counts.size(); t++) {
        if (counts[t] < 0)
            throw std::invalid_argument(w + ": counts[" + std::to_string(t) +
                                        "] is negative");
        cnt[t] = static_cast<uint32_t>(counts[t]);
        total += cnt[t];
    }
    if (total != n)
        throw std::invalid_argument(w + ": counts add up to " + std::to_string(total) +
                                    " filters, the arrays hold " + std::to_string(n));
    std::vector<tr_spiir_filter> f(n);
    for (size_t i = 0; i < n; i++) {
        f[i].a1_re = a1[i].real();
        f[i].a1_im = a1[i].imag();
        f[i].b0_re = b0[i].real();
        f[i].b0_im = b0[i].imag();
        f[i].delay = delay[i];
        f[i].level = level.empty() ? 0 : level[i];
    }
    bank_ptr b(tr_spiir_bank_create(
        f.data(), cnt.data(), static_cast<uint32_t>(cnt.size()), 1.0 / samp_rate, &err));
    if (!b) throw_status(who, err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return b;
}

/*
 * The chi-square half-width of the flat autocorrelations autocorr (nt
 * templates of 2 half + 1 lags each; empty: 0, no chi-square), checked.
 */
uint32_t autocorr_half(const char *who, unsigned int nt,
                       const std::vector<std::complex<double>> &autocorr, int window)
{
    const std::string w(who);
    if (autocorr.empty()) return 0;
    const size_t lags = autocorr.size() / nt;
    if (lags * nt != autocorr.size() || lags % 2 == 0 || lags < 3)
        throw std::invalid_argument(
            w + ": autocorr must hold 2 half + 1 (>= 3) lags per template, " +
            std::to_string(nt) + " templates: got " + std::to_string(autocorr.size()) +
            " values");
    const size_t half = lags / 2;
    if (half > TR_SPIIR_CHISQ_MAX_HALF)
        throw std::invalid_argument(w + ": autocorr half-width " + std::to_string(half) +
                                    " exceeds " +
                                    std::to_string(TR_SPIIR_CHISQ_MAX_HALF) + " lags");
    if (half > static_cast<size_t>(window))
        throw std::invalid_argument(
            w + ": autocorr half-width " + std::to_string(half) +
            " exceeds the trigger window " + std::to_string(window) +
            " (a trigger is decided window samples after its peak; its chi-square "
            "needs half samples after it)");
    for (size_t i = 0; i < autocorr.size(); i++) {
        if (!std::isfinite(autocorr[i].real()) || !std::isfinite(autocorr[i].imag()))
            throw std::invalid_argument(w + ": autocorr[" + std::to_string(i) +
                                        "] is not finite");
        if (i % lags == half && std::abs(autocorr[i] - 1.0) > 1e-6)
            throw std::invalid_argument(
                w + ": the autocorrelation of template " + std::to_string(i / lags) +
                " is not 1 at lag 0 (normalise it by its peak value)");
    }
    return static_cast<uint32_t>(half);
}

} // namespace

/* ---- job_thread ------------------------------------------------------- */

namespace detail
{

job_thread::job_thread() : d_thread([this] { loop(); }) {}

job_thread::~job_thread()
{
    {
        std::lock_guard<std::mutex> lk(d_mutex);
        d_quit = true;
    }
    d_cv.notify_all();
    d_thread.join();
}

void job_thread::start(std::function<void()> f)
{
    {
        std::lock_guard<std::mutex> lk(d_mutex);
        d_job = std::move(f);
        d_busy = true;
    }
    d_cv.notify_all();
}

void job_thread::wait()
{
    std::unique_lock<std::mutex> lk(d_mutex);
    d_cv.wait(lk, [this] { return !d_busy; });
}

void job_thread::loop()
{
    std::unique_lock<std::mutex> lk(d_mutex);
    for (;;) {
        d_cv.wait(lk, [this] { return d_quit || (d_busy && d_job); });
        if (d_busy && d_job) {
            std::function<void()> job = std::move(d_job);
            d_job = nullptr;
            lk.unlock();
            job(); // must not throw
            lk.lock();
            d_busy = false;
            d_cv.notify_all();
            continue;
        }
        if (d_quit) return;
    }
}

} // namespace detail

spiir_bank_fc::sptr spiir_bank_fc::make(
    const std::string &bank_file, const std::vector<std::complex<double>> &a1,
    const std::vector<std::complex<double>> &b0, const std::vector<int> &delay,
    const std::vector<int> &level, const std::vector<int> &counts, double samp_rate,
    float threshold, int window, bool multirate, const std::string &backend, int device,
    size_t batch, const std::string &msg_format,
    const std::vector<std::complex<double>> &autocorr)
{
    bank_ptr bank =
        make_bank("spiir_bank_fc", bank_file, a1, b0, delay, level, counts, samp_rate);
    return gnuradio::make_block_sptr<spiir_bank_fc_impl>(
        "spiir_bank_fc", bank.release(), threshold, window, multirate, backend, device,
        batch, msg_format, autocorr);
}

spiir_bank_cc::sptr spiir_bank_cc::make(
    const std::string &bank_file, const std::vector<std::complex<double>> &a1,
    const std::vector<std::complex<double>> &b0, const std::vector<int> &delay,
    const std::vector<int> &level, const std::vector<int> &counts, double samp_rate,
    float threshold, int window, bool multirate, const std::string &backend, int device,
    size_t batch, const std::string &msg_format,
    const std::vector<std::complex<double>> &autocorr)
{
    bank_ptr bank =
        make_bank("spiir_bank_cc", bank_file, a1, b0, delay, level, counts, samp_rate);
    return gnuradio::make_block_sptr<spiir_bank_cc_impl>(
        "spiir_bank_cc", bank.release(), threshold, window, multirate, backend, device,
        batch, msg_format, autocorr);
}

template <class Base, bool Complex>
spiir_bank_impl<Base, Complex>::spiir_bank_impl(
    const char *name, tr_spiir_bank *bank, float threshold, int window, bool multirate,
    const std::string &backend, int device, size_t batch, const std::string &msg_format,
    const std::vector<std::complex<double>> &autocorr)
    : gr::block(name, gr::io_signature::make(1, 1, sizeof(input_t)),
                gr::io_signature::make(
                    0, 1, sizeof(gr_complex) * tr_spiir_bank_templates(bank))),
      d_name(name), d_q(nullptr), d_trig(nullptr), d_nt(tr_spiir_bank_templates(bank)),
      d_nfilters(tr_spiir_bank_total_filters(bank)), d_rate(1.0 / tr_spiir_bank_dt(bank)),
      d_window(window), d_multirate(multirate), d_latency(0), d_backend(TR_BACKEND_CPU),
      d_device(device), d_trig_cfg(tr_spiir_triggers_config_default()),
      d_device_trig_allowed(true), d_need_base(true), d_flushed(false), d_out_base(0),
      d_fed(0), d_released(0), d_fifo(d_nt), d_held_in_out(false), d_hold_allowed(true),
      d_expect_out(nullptr), d_vectors(false), d_half(0), d_hist(d_nt), d_hist_first(0),
      d_want_tags(true), d_want_msgs(true), d_saved_multiple(0), d_max_call(0),
      d_port(pmt::mp("detects")), d_key_trigger(pmt::mp("trigger")),
      d_key_triggers(pmt::mp("triggers")), d_key_template(pmt::mp("template")),
      d_key_snr(pmt::mp("snr")), d_key_phase(pmt::mp("phase")),
      d_key_time(pmt::mp("time")), d_key_sample(pmt::mp("sample")),
      d_key_chisq(pmt::mp("chisq"))
{
    bank_ptr owned(bank);
    {
        const char *env = std::getenv("GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER");
        d_hold_allowed = !(env && std::strcmp(env, "0") == 0);
        env = std::getenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS");
        d_device_trig_allowed = !(env && std::strcmp(env, "0") == 0);
    }
    try {
        const tr_backend requested = parse_backend(name, backend);
        if (window < 1)
            throw std::invalid_argument(std::string(name) +
                                        ": window must be >= 1 sample, got " +
                                        std::to_string(window));
        d_vectors = detail::parse_msg_format(name, msg_format);
        d_half = autocorr_half(name, d_nt, autocorr, window);
        d_autocorr.reserve(2 * autocorr.size());
        for (const std::complex<double> &a : autocorr) {
            d_autocorr.push_back(a.real());
            d_autocorr.push_back(a.imag());
        }

        tr_spiir_config cfg = tr_spiir_config_default();
        cfg.complex_input = Complex ? 1 : 0;
        cfg.backend = requested;
        cfg.device = device;
        cfg.variant = TR_VARIANT_FAST;
        cfg.batch = batch;
        cfg.multirate = multirate ? 1 : 0;
        tr_error err;
        err.code = TR_OK;
        err.message[0] = '\0';
        d_q = tr_spiir_create(&cfg, bank, &err);
        if (!d_q)
            throw_status(name, err.code == TR_OK ? TR_ERR_INVALID : err.code,
                         err.message);
        d_backend = tr_spiir_backend(d_q);
        d_latency = tr_spiir_latency(d_q);

        d_trig_cfg.ntemplates = d_nt;
        d_trig_cfg.threshold = threshold;
        d_trig_cfg.window = static_cast<uint32_t>(window);
        d_trig = tr_spiir_triggers_create(&d_trig_cfg, &err);
        if (!d_trig)
            throw_status(name, err.code == TR_OK ? TR_ERR_INVALID : err.code,
                         err.message);

        if (d_backend == TR_BACKEND_CUDA) {
            if (batch == 0 || batch > static_cast<size_t>(INT_MAX / 4))
                throw std::invalid_argument(
                    std::string(name) + ": batch must be in [1, " +
                    std::to_string(INT_MAX / 4) + "] with the CUDA backend");
            this->set_output_multiple(static_cast<int>(batch));
        } else {
            detail::set_min_output_buffers(
                *this, detail::cpu_output_buffer_items(batch, sizeof(gr_complex) * d_nt));
        }
        const size_t room =
            std::max(k_initial_room, d_backend == TR_BACKEND_CUDA ? batch : size_t(0));
        d_fifo.reserve_items(static_cast<size_t>(window) + room);
        if (d_half > 0) d_hist.reserve_items(static_cast<size_t>(window) + d_half + room);
        d_max_call = std::max(k_sink_bytes / (sizeof(gr_complex) * d_nt),
                              d_backend == TR_BACKEND_CUDA ? 2 * batch : size_t(1));
        // Room for the triggers of 8192 samples (plus two per template): the
        // trigger search then scans a whole core call at once (on its threads).
        d_found.resize(std::max<size_t>(
            static_cast<size_t>(d_nt) * (8192 / (static_cast<size_t>(window) + 1) + 2),
            1024));
        // The core on a worker thread, overlapped with the trigger search: with
        // CUDA (the core's thread mostly waits for the GPU), unless
        // GR_TRANSIENT_SPIIR_OVERLAP is "0"; "1" also on the CPU (tests: the
        // CPU core has threads of its own).
        {
            const char *env = std::getenv("GR_TRANSIENT_SPIIR_OVERLAP");
            const bool overlap =
                env ? std::strcmp(env, "0") != 0 : d_backend == TR_BACKEND_CUDA;
            if (overlap) d_worker.reset(new detail::job_thread());
        }
        d_template_entry.reserve(d_nt);
        for (unsigned int t = 0; t < d_nt; t++)
            d_template_entry.push_back(pmt::cons(d_key_template, pmt::from_long(t)));

        if (requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA) {
            detail::log_cpu_fallback(this->d_logger, device);
        }
    } catch (...) {
        if (d_trig) tr_spiir_triggers_destroy(d_trig);
        if (d_q) tr_spiir_destroy(d_q);
        d_trig = nullptr;
        d_q = nullptr;
        throw;
    }
    this->message_port_register_out(d_port);
}

template <class Base, bool Complex> spiir_bank_impl<Base, Complex>::~spiir_bank_impl()
{
    if (d_trig) tr_spiir_triggers_destroy(d_trig);
    if (d_q) tr_spiir_destroy(d_q);
}

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::fail(tr_status st, const char *what) const
{
    throw_status(d_name, st, what);
}

/* ---- stream state ---------------------------------------------------- */

template <class Base, bool Complex> void spiir_bank_impl<Base, Complex>::reset_stream()
{
    d_need_base = true;
    d_flushed = false;
    d_out_base = 0;
    d_fed = 0;
    d_released = 0;
    d_fifo.clear();
    d_held_in_out = false;
    d_tags.clear();
    d_batch.clear();
    d_cols.clear();
    d_hist.clear();
    d_hist_first = 0;
}

template <class Base, bool Complex> bool spiir_bank_impl<Base, Complex>::start()
{
    gr::thread::scoped_lock guard(this->d_setlock);
    // A restarted flow graph starts a new stream: forget the old one.
    if (d_fed > 0) {
        tr_status st = tr_spiir_reset(d_q);
        if (st != TR_OK) fail(st, tr_spiir_last_error(d_q));
        st = tr_spiir_triggers_reset(d_trig);
        if (st != TR_OK) fail(st, tr_spiir_triggers_last_error(d_trig));
    }
    reset_stream();
    // A sink on CUDA without chi-square (which reads SNR rows on the host)
    // keeps the SNR on the GPU and searches it there: only the triggers cross
    // PCIe, not 8 bytes per template and sample.
    const bool dev = !has_output() && d_half == 0 && d_backend == TR_BACKEND_CUDA &&
                     d_device_trig_allowed;
    if (dev != d_trig_on_device) {
        place_triggers(dev);
        d_trig_on_device = dev;
        this->d_logger->debug("triggers searched on the {:s}", dev ? "GPU" : "CPU");
    }
    if (!dev)
        d_devio.reset();
    else if (!d_devio)
        d_devio.reset(new detail::spiir_device_io(d_name, d_device, d_max_call,
                                                  sizeof(input_t), d_nt));
    // Without the output the block is a sink: GNU Radio calls a sink only
    // while at least an output multiple of input items is available, so an
    // output multiple (the CUDA batch) would leave the end of a stream
    // unprocessed. Restored in stop().
    if (!has_output() && this->output_multiple() > 1) {
        d_saved_multiple = this->output_multiple();
        this->set_output_multiple(1);
    }
    return gr::block::start();
}

template <class Base, bool Complex> bool spiir_bank_impl<Base, Complex>::stop()
{
    {
        gr::thread::scoped_lock guard(this->d_setlock);
        // Clusters still open when the flow graph stops early: report them on
        // detects (their items can no longer be released, so no tags).
        d_want_msgs = !pmt::is_null(this->message_subscribers(d_port));
        if (!d_flushed) flush_triggers();
        publish_batch();
        d_pins.unpin();
        if (d_saved_multiple > 0) {
            this->set_output_multiple(d_saved_multiple);
            d_saved_multiple = 0;
        }
    }
    return gr::block::stop();
}

/*
 * A new trigger object (the current threshold, no open clusters) whose scan
 * runs where the SNR will be: on the block's CUDA device (device SNR), or as
 * at construction (backend AUTO: host SNR on the CPU).
 */
template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::place_triggers(bool on_device)
{
    tr_spiir_triggers_config cfg = d_trig_cfg;
    cfg.threshold = tr_spiir_triggers_threshold(d_trig);
    if (on_device) {
        cfg.backend = TR_BACKEND_CUDA;
        cfg.device = d_device;
    }
    tr_error err{}; // TR_OK, no message
    tr_spiir_triggers *t = tr_spiir_triggers_create(&cfg, &err);
    if (!t)
        throw_status(d_name, err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    tr_spiir_triggers_destroy(d_trig);
    d_trig = t;
    // The GPU's list of decided clusters (max(65536, 4 ntemplates) entries)
    // fits in one call's output.
    if (on_device)
        d_found.resize(std::max(d_found.size(), std::max<size_t>(65536, 4 * d_nt)));
}

/* ---- core ------------------------------------------------------------ */

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::take_triggers(const tr_spiir_trigger *t, size_t n)
{
    if (!d_want_tags && !d_want_msgs) return; // nobody takes them
    for (size_t i = 0; i < n; i++) {
        const uint64_t offset = d_out_base + t[i].sample;
        const int64_t sample = static_cast<int64_t>(offset) - d_latency;
        const double time = (static_cast<double>(d_out_base) + t[i].peak -
                             static_cast<double>(d_latency)) /
                            d_rate;
        // The dict that pmt::dict_add(template), (snr), (phase), (time),
        // (sample) builds, without its key searches: dict cells (dcons) of
        // ((sample . s) (time . t) (phase . p) (snr . z) (template . i)); the
        // template entry is shared.
        const pmt::pmt_t tmpl =
            t[i].template_index < d_template_entry.size()
                ? d_template_entry[t[i].template_index]
                : pmt::cons(d_key_template, pmt::from_long(t[i].template_index));
        const double phase =
            std::atan2(static_cast<double>(t[i].im), static_cast<double>(t[i].re));
        const double chi = d_half > 0 ? chisq(t[i]) : 0.0;
        if (d_want_msgs && d_vectors) {
            d_cols.sample.push_back(sample);
            d_cols.time.push_back(time);
            d_cols.templ.push_back(t[i].template_index);
            d_cols.snr.push_back(t[i].snr);
            d_cols.phase.push_back(static_cast<float>(phase));
            if (d_half > 0) d_cols.chisq.push_back(static_cast<float>(chi));
        }
        // Always true: a peak is decided before its item is released (the
        // check keeps a broken invariant from tagging items already gone).
        const bool tag = d_want_tags && t[i].sample >= d_released;
        const bool dict_msg = d_want_msgs && !d_vectors;
        if (!tag && !dict_msg) continue;
        pmt::pmt_t dict = pmt::dcons(
            pmt::cons(d_key_sample, pmt::from_long(sample)),
            pmt::dcons(
                pmt::cons(d_key_time, pmt::from_double(time)),
                pmt::dcons(pmt::cons(d_key_phase, pmt::from_double(phase)),
                           pmt::dcons(pmt::cons(d_key_snr, pmt::from_double(t[i].snr)),
                                      pmt::dcons(tmpl, pmt::make_dict())))));
        if (d_half > 0)
            dict = pmt::dcons(pmt::cons(d_key_chisq, pmt::from_double(chi)), dict);
        if (dict_msg) d_batch.push(dict);
        if (tag) d_tags.push(offset, std::move(dict));
    }
}

/*
 * The chi-square of trigger t from the SNR history. The history holds the
 * window + half rows before the piece whose search decided t and that piece:
 * t's peak lies window rows before the row that decided it (at most window
 * rows before the end at a flush), so its lags -half..half are there, or at
 * the start and end of the stream, those that exist.
 */
template <class Base, bool Complex>
double spiir_bank_impl<Base, Complex>::chisq(const tr_spiir_trigger &t) const
{
    if (t.sample < d_hist_first || t.sample - d_hist_first >= d_hist.count())
        throw std::logic_error(std::string(d_name) + ": the SNR rows of the trigger at " +
                               std::to_string(t.sample) + " are gone");
    const size_t lags = 2 * static_cast<size_t>(d_half) + 1;
    tr_error err;
    double c = 0.0;
    const tr_status st = tr_spiir_autochisq(
        reinterpret_cast<const float *>(d_hist.front()), d_hist.count(), d_nt,
        t.template_index, t.sample - d_hist_first,
        d_autocorr.data() + 2 * lags * t.template_index, d_half, &c, &err);
    if (st != TR_OK) fail(st, err.message);
    return c;
}

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::core_call(const input_t *x, size_t n,
                                               gr_complex *dst)
{
    const tr_status st = tr_spiir_process(d_q, reinterpret_cast<const float *>(x), n,
                                          reinterpret_cast<float *>(dst));
    if (st != TR_OK) fail(st, tr_spiir_last_error(d_q));
}

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::search(const float *z, size_t n, bool on_device)
{
    size_t done = 0;
    while (done < n) {
        size_t consumed = 0, nout = 0;
        const float *zs = z + done * d_nt * 2;
        const tr_status s =
            on_device
                ? tr_spiir_triggers_process_device(d_trig, zs, n - done, d_found.data(),
                                                   d_found.size(), &consumed, &nout)
                : tr_spiir_triggers_process(d_trig, zs, n - done, d_found.data(),
                                            d_found.size(), &consumed, &nout);
        if (s != TR_OK) fail(s, tr_spiir_triggers_last_error(d_trig));
        take_triggers(d_found.data(), nout);
        done += consumed;
        if (consumed == 0 && nout == 0)
            throw std::runtime_error(std::string(d_name) +
                                     ": the trigger search made no progress");
    }
}

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::scan_triggers(const gr_complex *dst, size_t n)
{
    if (d_half > 0) d_hist.push(dst, n);
    search(reinterpret_cast<const float *>(dst), n, false);
    const size_t keep = static_cast<size_t>(d_window) + d_half;
    if (d_half > 0 && d_hist.count() > keep) {
        const size_t old = d_hist.count() - keep;
        d_hist.drop(old);
        d_hist_first += old;
    }
}

/*
 * The core over x[0, n) into dst, then the trigger search over it. With the
 * CUDA backend the samples go in pieces: while the block's thread searches
 * piece k, the worker thread runs the core (the GPU) on piece k + 1. The
 * results are those of one core call and one search over all n samples (the
 * core's output and the triggers do not depend on how the stream is cut).
 */
template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::run_core(const input_t *x, size_t n, gr_complex *dst)
{
    if (!d_worker || n < 2 * k_min_piece) {
        core_call(x, n, dst);
        d_fed += n;
        scan_triggers(dst, n);
        return;
    }
    const size_t pieces = std::max<size_t>(2, (n + k_piece - 1) / k_piece);
    const size_t len = ((n + pieces - 1) / pieces + 255) / 256 * 256;
    size_t off = 0, cur = std::min(len, n);
    core_call(x, cur, dst);
    while (off + cur < n) {
        const size_t next_off = off + cur;
        const size_t next = std::min(len, n - next_off);
        tr_status st = TR_OK;
        const float *xs = reinterpret_cast<const float *>(x + next_off);
        float *zs = reinterpret_cast<float *>(dst + next_off * d_nt);
        tr_spiir *q = d_q;
        d_worker->start(
            [q, xs, next, zs, &st] { st = tr_spiir_process(q, xs, next, zs); });
        try {
            scan_triggers(dst + off * d_nt, cur);
        } catch (...) {
            d_worker->wait();
            throw;
        }
        d_worker->wait();
        if (st != TR_OK) fail(st, tr_spiir_last_error(d_q));
        off = next_off;
        cur = next;
    }
    d_fed += n;
    scan_triggers(dst + off * d_nt, cur);
}

/*
 * The sink on the GPU: x[0, n) up once, the core into the device SNR rows, the
 * trigger search over them there (the triggers of one host search over the
 * same SNR, bit for bit).
 */
template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::run_device(const input_t *x, size_t n)
{
    const tr_status st = d_devio->filter(d_q, x, n);
    if (st != TR_OK) fail(st, tr_spiir_last_error(d_q));
    d_fed += n;
    search(d_devio->snr(), n, true);
}

template <class Base, bool Complex> void spiir_bank_impl<Base, Complex>::flush_triggers()
{
    size_t nout = 0;
    const tr_status st =
        tr_spiir_triggers_flush(d_trig, d_found.data(), d_found.size(), &nout);
    if (st != TR_OK) fail(st, tr_spiir_triggers_last_error(d_trig));
    take_triggers(d_found.data(), nout);
    d_flushed = true;
}

template <class Base, bool Complex> void spiir_bank_impl<Base, Complex>::publish_batch()
{
    if (!d_cols.sample.empty()) {
        // One dict of uniform vectors (copied into the PMTs).
        const size_t n = d_cols.sample.size();
        pmt::pmt_t msg = pmt::make_dict();
        msg = pmt::dict_add(msg, d_key_sample,
                            pmt::init_s64vector(n, d_cols.sample.data()));
        msg = pmt::dict_add(msg, d_key_time, pmt::init_f64vector(n, d_cols.time.data()));
        msg = pmt::dict_add(msg, d_key_template,
                            pmt::init_u32vector(n, d_cols.templ.data()));
        msg = pmt::dict_add(msg, d_key_snr, pmt::init_f32vector(n, d_cols.snr.data()));
        msg =
            pmt::dict_add(msg, d_key_phase, pmt::init_f32vector(n, d_cols.phase.data()));
        if (d_half > 0)
            msg = pmt::dict_add(msg, d_key_chisq,
                                pmt::init_f32vector(n, d_cols.chisq.data()));
        d_cols.clear();
        this->message_port_pub(d_port, msg);
    }
    d_batch.publish(*this, d_port, d_key_triggers);
}

/* ---- scheduling ------------------------------------------------------ */

/*
 * Whether the pending items may stay in the output buffer between work calls:
 * with GNU Radio's double-mapped circular buffers, the items after the ones a
 * call returns are where the next call's output pointer starts (the same
 * memory, also across the wrap), and the buffer's free space is written only
 * by this block; the readers never see items not yet produced. Other buffer
 * types (custom ones) and GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER=0 keep them in the
 * block's FIFO (window items copied per call).
 */
template <class Base, bool Complex>
bool spiir_bank_impl<Base, Complex>::hold_in_output() const
{
    if (!d_hold_allowed) return false;
    const block_detail_sptr det = this->detail();
    if (!det) return false;
    return dynamic_cast<const gr::buffer_double_mapped *>(det->output(0).get()) !=
           nullptr;
}

template <class Base, bool Complex>
bool spiir_bank_impl<Base, Complex>::has_output() const
{
    const block_detail_sptr det = this->detail();
    return !det || det->noutputs() > 0;
}

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::forecast(int noutput_items,
                                              gr_vector_int &ninput_items_required)
{
    // Items whose triggers are decided can go out without new input; once the
    // upstream is done, the last `window` items must go out without it too.
    const bool done = detail::upstream_done(*this);
    if (!has_output()) {
        // Sink: one input sample stays unconsumed until the upstream is done,
        // so that a last call takes it and decides the open clusters (see
        // work_no_output()).
        ninput_items_required[0] = noutput_items + (done || d_flushed ? 0 : 1);
        return;
    }
    const uint64_t w = static_cast<uint64_t>(d_window);
    const bool releasable = d_fed > w && d_fed - w > d_released;
    ninput_items_required[0] = (done || releasable) ? 0 : noutput_items;
}

template <class Base, bool Complex>
int spiir_bank_impl<Base, Complex>::general_work(int noutput_items,
                                                 gr_vector_int &ninput_items,
                                                 gr_vector_const_void_star &input_items,
                                                 gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(this->d_setlock);

    const input_t *in = static_cast<const input_t *>(input_items[0]);
    d_want_msgs = !pmt::is_null(this->message_subscribers(d_port));
    d_want_tags = !output_items.empty();
    if (!d_want_tags) return work_no_output(noutput_items, ninput_items[0], in);
    gr_complex *out = static_cast<gr_complex *>(output_items[0]);
    const size_t ninput = static_cast<size_t>(std::max(ninput_items[0], 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));

    if (d_need_base) {
        d_out_base = this->nitems_written(0);
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items[0]);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, this->d_logger);

    // Items computed but not released: in the FIFO, or (d_held_in_out) already
    // at out[0, pending) (see hold_in_output()).
    const size_t pending = static_cast<size_t>(d_fed - d_released);
    const bool keep = hold_in_output();
    if (d_held_in_out) {
        // They are where the last call left them: the same buffer position.
        const size_t wrap = this->detail()->output(0)->bufsize() * d_nt;
        if (out != d_expect_out && out != d_expect_out - wrap)
            throw std::runtime_error(std::string(d_name) +
                                     ": the output buffer moved under held-back items");
    }
    // Input to take: what can go out now plus the window held back.
    const size_t hold = noutput + static_cast<size_t>(d_window);
    size_t take = std::min(ninput, hold > pending ? hold - pending : 0);
    // Direct: the core writes the new SNR straight into the output buffer after
    // the pending items (copied there from the FIFO, unless they are there
    // already), when both fit in it (and, from the FIFO, when the copy is worth
    // it).
    const size_t room = noutput > pending ? noutput - pending : 0;
    bool direct;
    if (d_held_in_out && keep)
        direct = take == 0 || room > 0;
    else
        direct = room > 0 && take > 0 && std::min(take, room) >= pending;
    if (d_held_in_out && !direct) {
        // Back to the FIFO (out[0, pending) lies in the buffer's free space).
        d_fifo.clear();
        d_fifo.push(out, pending);
        d_held_in_out = false;
    }
    if (direct) {
        take = std::min(take, room);
        if (!d_held_in_out) d_fifo.pop(out, pending);
        d_fifo.clear();
        d_held_in_out = true; // out[0, pending) holds the pending items
        if (take > 0) run_core(in, take, out + pending * d_nt);
    } else if (take > 0) {
        run_core(in, take, d_fifo.reserve(take));
        d_fifo.commit(take);
    }
    if (finished && take == ninput && !d_flushed) flush_triggers();
    publish_batch();

    // Release the items whose triggers are decided.
    const uint64_t w = static_cast<uint64_t>(d_window);
    const uint64_t decided = d_flushed ? d_fed : (d_fed > w ? d_fed - w : 0);
    const size_t n_out =
        static_cast<size_t>(std::min<uint64_t>(noutput, decided - d_released));
    // Triggers are decided in the order of the sample that decides them, not
    // of their peaks (the tags are sorted).
    d_tags.attach(*this, d_out_base + d_released + n_out, d_key_trigger);
    if (direct) {
        // out[0, pending + take) holds every item not yet released, in order;
        // the rest stays where the next call's out[0, held) will be, or goes to
        // the FIFO.
        const size_t held = pending + take - n_out;
        d_held_in_out = keep && held > 0;
        d_expect_out = out + n_out * d_nt;
        if (held > 0 && !keep) {
            d_fifo.push(out + n_out * d_nt, held);
        }
    } else if (n_out > 0) {
        d_fifo.pop(out, n_out);
    }
    d_released += n_out;

    this->consume(0, static_cast<int>(take));

    if (finished && take == ninput && n_out == 0 && d_fed == d_released)
        return gr::block::WORK_DONE;
    return static_cast<int>(n_out);
}

/*
 * Without the output: the SNR of the samples taken goes to the FIFO's storage
 * as scratch, and only the triggers come out. GNU Radio calls a sink only
 * while input is available: once the upstream is done and the input empty,
 * the block is done without another call. So the last input sample stays
 * until the input is finished, and the call that takes it decides the open
 * clusters.
 */
template <class Base, bool Complex>
int spiir_bank_impl<Base, Complex>::work_no_output(int noutput_items, int ninput_items,
                                                   const input_t *in)
{
    const size_t ninput = static_cast<size_t>(std::max(ninput_items, 0));
    const size_t noutput = static_cast<size_t>(std::max(noutput_items, 0));
    if (d_need_base) {
        d_out_base = this->nitems_read(0); // "sample" counts input samples
        d_need_base = false;
    }
    const bool finished = detail::input_finished(*this, ninput_items);
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, this->d_logger);

    size_t take = std::min({ninput, std::max<size_t>(noutput, 1), d_max_call});
    if (!finished && !d_flushed && take == ninput && take > 0) take--;
    if (take > 0 && d_devio) {
        run_device(in, take);
    } else if (take > 0) {
        d_fifo.clear();
        run_core(in, take, d_fifo.reserve(take));
        d_fifo.clear();
    }
    d_released = d_fed; // nothing waits for release without the output
    if (finished && take == ninput && !d_flushed) flush_triggers();
    publish_batch();
    this->consume(0, static_cast<int>(take));
    return 0;
}

/* ---- setters and getters --------------------------------------------- */

template <class Base, bool Complex>
void spiir_bank_impl<Base, Complex>::set_threshold(float threshold)
{
    gr::thread::scoped_lock guard(this->d_setlock);
    const tr_status st = tr_spiir_triggers_set_threshold(d_trig, threshold);
    if (st != TR_OK) fail(st, tr_spiir_triggers_last_error(d_trig));
}

template <class Base, bool Complex>
float spiir_bank_impl<Base, Complex>::threshold() const
{
    gr::thread::scoped_lock guard(const_cast<gr::thread::mutex &>(this->d_setlock));
    return tr_spiir_triggers_threshold(d_trig);
}

template <class Base, bool Complex>
std::string spiir_bank_impl<Base, Complex>::backend() const
{
    return d_backend == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

template class spiir_bank_impl<spiir_bank_fc, false>;
template class spiir_bank_impl<spiir_bank_cc, true>;

} // namespace transient
} // namespace gr
