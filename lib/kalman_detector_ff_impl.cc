/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: Kalman-bank detector block, implementation over libtransient.
 *
 * Every sample goes through the core in the call that brings it (no delay on
 * the CPU backend); the core's decision events become "burst" tags at their
 * absolute offsets and, once a detection ends, one "detects" message.
 */

#include "kalman_detector_ff_impl.h"
#include "block_util.h"
#include <gnuradio/io_signature.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace gr
{
namespace transient
{

namespace
{

// Events drained per core call; more stay queued in the core for the next drain.
constexpr size_t k_event_room = 1024;

constexpr const char *k_who = "kalman_detector_ff";

tr_backend parse_backend(const std::string &name)
{
    return detail::parse_backend(k_who, name);
}

[[noreturn]] void throw_status(tr_status st, const char *what)
{
    detail::throw_status(k_who, st, what);
}

tr_kalman_envelope parse_envelope(const std::string &name)
{
    const std::string s = detail::lower(name);
    if (s == "rect") return TR_KALMAN_ENV_RECT;
    if (s == "exp") return TR_KALMAN_ENV_EXP;
    if (s == "gauss") return TR_KALMAN_ENV_GAUSS;
    if (s == "raised_cosine") return TR_KALMAN_ENV_RAISED_COSINE;
    throw std::invalid_argument("kalman_detector_ff: envelope must be \"rect\", \"exp\", "
                                "\"gauss\" or \"raised_cosine\", not \"" +
                                name + "\"");
}

// The model: loaded from a file or designed from the parameters.
tr_kalman_model *make_model(unsigned int M, const std::vector<double> &noise_ar,
                            double noise_var, double meas_var,
                            const std::vector<double> &target_ar, double target_var,
                            const std::string &envelope, double env_param,
                            const std::string &model_file)
{
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    tr_kalman_model *m = nullptr;
    if (!model_file.empty()) {
        m = tr_kalman_model_load(model_file.c_str(), &err);
    } else {
        if (noise_ar.empty() || target_ar.empty())
            throw std::invalid_argument(
                "kalman_detector_ff: noise_ar and target_ar need at least one "
                "coefficient (use [0] for white)");
        tr_kalman_design d = tr_kalman_design_default();
        d.M = M;
        d.noise_order = static_cast<uint32_t>(noise_ar.size());
        d.noise_ar = noise_ar.data();
        d.noise_var = noise_var;
        d.meas_var = meas_var;
        d.target_order = static_cast<uint32_t>(target_ar.size());
        d.target_ar = target_ar.data();
        d.target_var = target_var;
        d.envelope = parse_envelope(envelope);
        d.env_param = env_param;
        m = tr_kalman_model_design(&d, &err);
    }
    if (!m) throw_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return m;
}

} // namespace

kalman_detector_ff::sptr
kalman_detector_ff::make(unsigned int M, unsigned int Ns, double threshold, double alpha,
                         const std::vector<double> &noise_ar, double noise_var,
                         double meas_var, const std::vector<double> &target_ar,
                         double target_var, const std::string &envelope, double env_param,
                         const std::string &model_file, const std::string &backend,
                         int device, size_t batch)
{
    return gnuradio::make_block_sptr<kalman_detector_ff_impl>(
        M, Ns, threshold, alpha, noise_ar, noise_var, meas_var, target_ar, target_var,
        envelope, env_param, model_file, backend, device, batch);
}

void kalman_detector_ff::save_model(const std::string &path, unsigned int M,
                                    const std::vector<double> &noise_ar, double noise_var,
                                    double meas_var, const std::vector<double> &target_ar,
                                    double target_var, const std::string &envelope,
                                    double env_param)
{
    std::unique_ptr<tr_kalman_model, void (*)(tr_kalman_model *)> model(
        make_model(M, noise_ar, noise_var, meas_var, target_ar, target_var, envelope,
                   env_param, ""),
        tr_kalman_model_destroy);
    tr_error err;
    if (tr_kalman_model_save(model.get(), path.c_str(), &err) != TR_OK)
        throw_status(err.code, err.message);
}

kalman_detector_ff_impl::kalman_detector_ff_impl(
    unsigned int M, unsigned int Ns, double threshold, double alpha,
    const std::vector<double> &noise_ar, double noise_var, double meas_var,
    const std::vector<double> &target_ar, double target_var, const std::string &envelope,
    double env_param, const std::string &model_file, const std::string &backend,
    int device, size_t batch)
    : gr::sync_block("kalman_detector_ff", gr::io_signature::make(1, 1, sizeof(float)),
                     gr::io_signature::make(1, 2, sizeof(float))),
      d_q(nullptr), d_backend(TR_BACKEND_CPU), d_need_base(true), d_base(0),
      d_events(k_event_room), d_warned_dropped(false), d_port(pmt::mp("detects")),
      d_key_burst(pmt::mp("burst")), d_key_start(pmt::mp("start")),
      d_key_end(pmt::mp("end")), d_key_peak(pmt::mp("peak")),
      d_key_peak_llr(pmt::mp("peak_llr")), d_key_onset(pmt::mp("onset"))
{
    const tr_backend requested = parse_backend(backend);
    tr_kalman_model *model = make_model(M, noise_ar, noise_var, meas_var, target_ar,
                                        target_var, envelope, env_param, model_file);

    tr_kalman_config cfg = tr_kalman_config_default();
    cfg.Ns = Ns;
    cfg.alpha = alpha;
    cfg.threshold = threshold;
    cfg.backend = requested;
    cfg.device = device;
    cfg.variant = TR_VARIANT_FAST;
    cfg.batch = batch;

    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    d_q = tr_kalman_create(&cfg, model, &err);
    tr_kalman_model_destroy(model); // the detector keeps its own copy
    if (!d_q) throw_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    d_backend = tr_kalman_backend(d_q);

    if (d_backend == TR_BACKEND_CUDA) {
        if (batch == 0 || batch > static_cast<size_t>(INT_MAX / 4)) {
            tr_kalman_destroy(d_q);
            d_q = nullptr;
            throw std::invalid_argument("kalman_detector_ff: batch must be in [1, " +
                                        std::to_string(INT_MAX / 4) +
                                        "] with the CUDA backend");
        }
        // Not set_output_multiple(batch): a sync block in multiples of the
        // batch would never process the last (n mod batch) samples of a finite
        // stream. Output buffers of 2 batches let the scheduler hand the block
        // whole batches whenever they are there (the core splits any call
        // into device batches itself).
        detail::set_min_output_buffers(
            *this, static_cast<long>(
                       std::min<size_t>(2 * batch, static_cast<size_t>(INT_MAX / 8))));
    } else {
        detail::set_min_output_buffers(
            *this, detail::cpu_output_buffer_items(batch, sizeof(float)));
    }

    if (requested == TR_BACKEND_AUTO && d_backend != TR_BACKEND_CUDA) {
        detail::log_cpu_fallback(d_logger, device);
    }

    message_port_register_out(d_port);
}

kalman_detector_ff_impl::~kalman_detector_ff_impl()
{
    if (d_q) tr_kalman_destroy(d_q);
}

bool kalman_detector_ff_impl::start()
{
    gr::thread::scoped_lock guard(d_setlock);
    // A restarted flow graph starts a new stream: forget the old one.
    if (tr_kalman_position(d_q) > 0) {
        const tr_status st = tr_kalman_reset(d_q);
        if (st != TR_OK) throw_status(st, tr_kalman_last_error(d_q));
    }
    d_need_base = true;
    d_base = 0;
    return sync_block::start();
}

bool kalman_detector_ff_impl::stop()
{
    {
        gr::thread::scoped_lock guard(d_setlock);
        d_pins.unpin();
    }
    return sync_block::stop();
}

void kalman_detector_ff_impl::take_events(int noutputs)
{
    const pmt::pmt_t srcid = alias_pmt();
    for (;;) {
        const size_t n = tr_kalman_events(d_q, d_events.data(), d_events.size());
        for (size_t i = 0; i < n; i++) {
            const tr_kalman_event &e = d_events[i];
            if (e.type == TR_KALMAN_EVENT_START) {
                for (int o = 0; o < noutputs; o++)
                    add_item_tag(o, d_base + e.start, d_key_burst, pmt::PMT_T, srcid);
            } else if (e.type == TR_KALMAN_EVENT_END) {
                for (int o = 0; o < noutputs; o++)
                    add_item_tag(o, d_base + e.end, d_key_burst, pmt::PMT_F, srcid);
                pmt::pmt_t d = pmt::make_dict();
                d = pmt::dict_add(d, d_key_start, pmt::from_uint64(d_base + e.start));
                d = pmt::dict_add(d, d_key_end, pmt::from_uint64(d_base + e.end));
                d = pmt::dict_add(d, d_key_peak, pmt::from_uint64(d_base + e.peak));
                d = pmt::dict_add(d, d_key_peak_llr, pmt::from_double(e.peak_llr));
                d = pmt::dict_add(d, d_key_onset, pmt::from_uint64(d_base + e.onset));
                message_port_pub(d_port, d);
            }
        }
        if (n < d_events.size()) break;
    }
    if (!d_warned_dropped && tr_kalman_events_dropped(d_q) > 0) {
        d_logger->warn("{} detection events were dropped by the core's event queue",
                       tr_kalman_events_dropped(d_q));
        d_warned_dropped = true;
    }
}

int kalman_detector_ff_impl::work(int noutput_items,
                                  gr_vector_const_void_star &input_items,
                                  gr_vector_void_star &output_items)
{
    gr::thread::scoped_lock guard(d_setlock);
    if (d_need_base) {
        d_base = nitems_written(0);
        d_need_base = false;
    }
    if (d_backend == TR_BACKEND_CUDA) d_pins.pin(*this, d_logger);
    const size_t n = static_cast<size_t>(std::max(noutput_items, 0));
    const float *in = static_cast<const float *>(input_items[0]);
    float *llr = static_cast<float *>(output_items[0]);
    const int noutputs = static_cast<int>(output_items.size());

    uint8_t *decision = nullptr;
    if (noutputs > 1) {
        if (d_decision.size() < n) d_decision.resize(n);
        decision = d_decision.data();
    }
    const tr_status st = tr_kalman_process(d_q, in, n, llr, decision);
    if (st != TR_OK) throw_status(st, tr_kalman_last_error(d_q));
    if (noutputs > 1) {
        float *dec = static_cast<float *>(output_items[1]);
        for (size_t i = 0; i < n; i++)
            dec[i] = decision[i] ? 1.0f : 0.0f;
    }
    take_events(noutputs);
    return noutput_items;
}

void kalman_detector_ff_impl::set_threshold(double threshold)
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_kalman_set_threshold(d_q, threshold);
    if (st != TR_OK) throw_status(st, tr_kalman_last_error(d_q));
}

void kalman_detector_ff_impl::set_ns(unsigned int Ns)
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_kalman_set_ns(d_q, Ns);
    if (st != TR_OK) throw_status(st, tr_kalman_last_error(d_q));
}

void kalman_detector_ff_impl::set_alpha(double alpha)
{
    gr::thread::scoped_lock guard(d_setlock);
    const tr_status st = tr_kalman_set_alpha(d_q, alpha);
    if (st != TR_OK) throw_status(st, tr_kalman_last_error(d_q));
}

double kalman_detector_ff_impl::threshold() const
{
    return tr_kalman_threshold(d_q);
}
unsigned int kalman_detector_ff_impl::ns() const
{
    return tr_kalman_ns(d_q);
}
double kalman_detector_ff_impl::alpha() const
{
    return tr_kalman_alpha(d_q);
}
unsigned int kalman_detector_ff_impl::M() const
{
    return tr_kalman_M(d_q);
}
unsigned int kalman_detector_ff_impl::Q() const
{
    return tr_kalman_Q(d_q);
}
uint64_t kalman_detector_ff_impl::nonfinite() const
{
    return tr_kalman_nonfinite(d_q);
}

std::string kalman_detector_ff_impl::backend() const
{
    return d_backend == TR_BACKEND_CUDA ? "cuda" : "cpu";
}

} // namespace transient
} // namespace gr
