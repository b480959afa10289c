/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: SPIIR filter bank blocks (real and complex input), one
 * implementation over libtransient.
 */

#ifndef INCLUDED_TRANSIENT_SPIIR_BANK_IMPL_H
#define INCLUDED_TRANSIENT_SPIIR_BANK_IMPL_H

#include "block_util.h"
#include "held_stream.h"
#include "spiir_device_io.h"
#include <gnuradio/gr_complex.h>
#include <gnuradio/transient/spiir_bank_cc.h>
#include <gnuradio/transient/spiir_bank_fc.h>
#include <pmt/pmt.h>
#include <transient/spiir.h>
#include <transient/spiir_chisq.h>
#include <transient/spiir_triggers.h>
#include <complex>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace gr
{
namespace transient
{

namespace detail
{
//! One thread that runs one job at a time for its owner (the SPIIR blocks'
//! CUDA core call, overlapped with the trigger search of the previous piece).
class job_thread
{
  public:
    job_thread();
    ~job_thread();
    job_thread(const job_thread &) = delete;
    job_thread &operator=(const job_thread &) = delete;
    //! Starts f() on the thread (the previous job must have been waited for).
    void start(std::function<void()> f);
    //! Returns when the job started last has returned.
    void wait();

  private:
    void loop();
    std::mutex d_mutex;
    std::condition_variable d_cv;
    std::function<void()> d_job;
    bool d_busy = false;
    bool d_quit = false;
    std::thread d_thread;
};
} // namespace detail

/*
 * Base: spiir_bank_fc (Complex = false, float input) or spiir_bank_cc
 * (Complex = true, gr_complex input).
 */
template <class Base, bool Complex> class spiir_bank_impl : public Base
{
  private:
    using input_t = typename std::conditional<Complex, gr_complex, float>::type;

    const char *d_name;
    tr_spiir *d_q;
    tr_spiir_triggers *d_trig;
    const unsigned int d_nt;
    const uint64_t d_nfilters;
    const double d_rate;
    const int d_window;
    const bool d_multirate;
    int64_t d_latency;
    tr_backend d_backend;
    const int d_device;                  // CUDA device index
    tr_spiir_triggers_config d_trig_cfg; // of d_trig at construction (backend AUTO)
    // Sink on CUDA without chi-square: the SNR stays on the GPU and is searched
    // there; only triggers come back (decided in start(); see the .cc file).
    bool d_device_trig_allowed; // GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS is not "0"
    std::unique_ptr<detail::spiir_device_io> d_devio; // set while searching on the GPU
    bool d_trig_on_device = false; // d_trig was made for device SNR (CUDA backend)
    detail::buffer_pins d_pins;    // CUDA: page-locked GNU Radio buffers
    // Runs the core on the next piece of a call while the block's thread
    // searches the previous piece for triggers (CUDA; see the constructor).
    std::unique_ptr<detail::job_thread> d_worker;

    // Stream bookkeeping. Core sample i is output offset d_out_base + i.
    bool d_need_base;
    bool d_flushed; // the end of the stream decided every open cluster
    uint64_t d_out_base;
    uint64_t d_fed;      // samples given to the core since start()
    uint64_t d_released; // items written to the output since start()

    // SNR vectors computed but not released: items d_released, d_released + 1,
    // ... (d_nt values each).
    detail::held_fifo<gr_complex> d_fifo;
    bool d_held_in_out;             // the unreleased items are at out[0, ...) instead
    bool d_hold_allowed;            // GR_TRANSIENT_SPIIR_HOLD_IN_BUFFER is not "0"
    const gr_complex *d_expect_out; // where the next call's output starts

    std::vector<tr_spiir_trigger> d_found; // trigger output buffer
    detail::pending_tags d_tags;           // triggers waiting for their item
    detail::message_batch d_batch;         // dicts of the current detects message

    // msg_format "vectors": the current message's triggers, column-wise.
    struct trigger_columns {
        std::vector<int64_t> sample;
        std::vector<double> time;
        std::vector<uint32_t> templ;
        std::vector<float> snr;
        std::vector<float> phase;
        std::vector<float> chisq; // with autocorrelations only
        void clear()
        {
            sample.clear();
            time.clear();
            templ.clear();
            snr.clear();
            phase.clear();
            chisq.clear();
        }
    };
    bool d_vectors;
    trigger_columns d_cols;

    // Chi-square: half-width in lags (0: none), the autocorrelations
    // (ntemplates x (2 half + 1) complex, re/im interleaved, lag -half first)
    // and the last SNR rows: core rows d_hist_first, d_hist_first + 1, ...
    // (window + half rows before the piece being searched, and that piece).
    uint32_t d_half;
    std::vector<double> d_autocorr;
    detail::held_fifo<gr_complex> d_hist;
    uint64_t d_hist_first;

    // What the triggers of this call are needed for: tags (the output is
    // connected), detects messages (the port has subscribers).
    bool d_want_tags;
    bool d_want_msgs;
    int d_saved_multiple; // output multiple while a run without output uses 1
    size_t d_max_call;    // no output: samples per call at most

    const pmt::pmt_t d_port;
    const pmt::pmt_t d_key_trigger;
    const pmt::pmt_t d_key_triggers;
    const pmt::pmt_t d_key_template;
    const pmt::pmt_t d_key_snr;
    const pmt::pmt_t d_key_phase;
    const pmt::pmt_t d_key_time;
    const pmt::pmt_t d_key_sample;
    const pmt::pmt_t d_key_chisq;
    std::vector<pmt::pmt_t> d_template_entry; // (template . index) per template

    void reset_stream();
    void run_core(const input_t *x, size_t n, gr_complex *dst);
    void core_call(const input_t *x, size_t n, gr_complex *dst);
    void scan_triggers(const gr_complex *z, size_t n);
    void search(const float *z, size_t n, bool on_device);
    void run_device(const input_t *x, size_t n);
    void place_triggers(bool on_device);
    void take_triggers(const tr_spiir_trigger *t, size_t n);
    void flush_triggers();
    double chisq(const tr_spiir_trigger &t) const;
    void publish_batch();
    bool hold_in_output() const;
    bool has_output() const;
    int work_no_output(int noutput_items, int ninput_items, const input_t *in);
    [[noreturn]] void fail(tr_status st, const char *what) const;

  public:
    // Takes ownership of bank (destroyed before the constructor returns).
    spiir_bank_impl(const char *name, tr_spiir_bank *bank, float threshold, int window,
                    bool multirate, const std::string &backend, int device, size_t batch,
                    const std::string &msg_format,
                    const std::vector<std::complex<double>> &autocorr);
    ~spiir_bank_impl() override;

    spiir_bank_impl(const spiir_bank_impl &) = delete;
    spiir_bank_impl &operator=(const spiir_bank_impl &) = delete;

    bool start() override;
    bool stop() override;

    void forecast(int noutput_items, gr_vector_int &ninput_items_required) override;

    int general_work(int noutput_items, gr_vector_int &ninput_items,
                     gr_vector_const_void_star &input_items,
                     gr_vector_void_star &output_items) override;

    void set_threshold(float threshold) override;
    float threshold() const override;
    int window() const override { return d_window; }
    unsigned int ntemplates() const override { return d_nt; }
    uint64_t nfilters() const override { return d_nfilters; }
    double samp_rate() const override { return d_rate; }
    int64_t latency() const override { return d_latency; }
    bool multirate() const override { return d_multirate; }
    std::string backend() const override;
    std::string msg_format() const override { return d_vectors ? "vectors" : "dicts"; }
    unsigned int chisq_half() const override { return d_half; }
};

using spiir_bank_fc_impl = spiir_bank_impl<spiir_bank_fc, false>;
using spiir_bank_cc_impl = spiir_bank_impl<spiir_bank_cc, true>;

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_SPIIR_BANK_IMPL_H */
