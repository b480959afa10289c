/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: boxcar search block, implementation over libtransient.
 */

#ifndef INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_IMPL_H
#define INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_IMPL_H

#include "block_util.h"
#include "device_buffers.h"
#include "held_stream.h"
#include <gnuradio/transient/boxcar_search_ff.h>
#include <gnuradio/transient/cuda_buffer.h>
#include <memory>
#include <pmt/pmt.h>
#include <transient/boxcar.h>
#include <transient/candidates.h>
#include <vector>

namespace gr
{
namespace transient
{

template <class T> class boxcar_search_impl : public boxcar_search<T>, public device_port
{
  private:
    const unsigned int d_nchan;
    tr_boxcar_config d_cfg;      // search settings (norm part changes at restart)
    tr_candidates_config d_ccfg; // clustering settings
    tr_boxcar *d_q;              // the running search
    tr_candidates *d_cands;      // the running clustering
    tr_backend d_backend;
    float d_threshold;
    unsigned int d_latency; // core latency (tr_boxcar_latency)
    unsigned int d_lend;    // L_end of the plan
    unsigned int d_hold;
    size_t d_chunk; // samples per core call

    // Stream bookkeeping, in absolute sample positions since start(): the
    // core created last started at d_core_base; d_fed samples were given to
    // the search, Y/W are known for [0, d_ready), released for [0, d_released).
    bool d_need_base;
    uint64_t d_out_base; // output offset of position 0
    uint64_t d_core_base;
    uint64_t d_fed;
    uint64_t d_ready;
    uint64_t d_released;
    bool d_flushed;         // the stream has ended (core flushed)
    bool d_restart_pending; // a statistics setter asked for a new search
    uint64_t d_ncands;
    uint64_t d_nonfinite_before; // non-finite count of the searches ended
    std::string d_warning;       // warnings of the last search that ended

    // Y and W of the positions [d_released, d_ready), in lockstep.
    detail::held_fifo<float> d_fifo_snr;
    detail::held_fifo<float> d_fifo_width;

    // Scratch of one core call.
    std::vector<float> d_power; // complex input: |z|^2
    std::vector<float> d_snr;
    std::vector<int32_t> d_width;
    uint64_t d_out_ready = 0; // direct: position of out[0] in this call
    uint64_t d_span;          // clustering max_span
    bool d_block_baseline;    // baseline mode "block" (else "median")
    std::vector<tr_candidate> d_events;

    // CUDA: page-locked GNU Radio buffers and d_snr/d_width (the core's
    // device-to-host copies then run as DMA without staging).
    detail::buffer_pins d_pins;
    detail::buffer_pins d_scratch_pins;
    bool d_scratch_pinned = false;

    detail::pending_tags d_tags;   // events waiting for their start sample
    detail::message_batch d_batch; // dicts of the current detects message
    // msg_format "vectors": the fields of the current detects message's events
    const bool d_vectors;
    std::vector<uint64_t> d_vstart, d_vsample, d_vmembers;
    std::vector<int32_t> d_vwidth, d_vchannel;
    std::vector<float> d_vsnr;

    const pmt::pmt_t d_port;
    const pmt::pmt_t d_key_pulse;
    const pmt::pmt_t d_key_pulses;
    const pmt::pmt_t d_key_start;
    const pmt::pmt_t d_key_width;
    const pmt::pmt_t d_key_snr;
    const pmt::pmt_t d_key_channel;
    const pmt::pmt_t d_key_sample;
    const pmt::pmt_t d_key_members;

    // Device buffers (device_buffers.h): the device input path, or none.
    bool d_device_cands =
        false;                // clustering on the device (no outputs, CUDA, host input)
    int d_saved_multiple = 0; // output multiple while running without outputs

    const bool d_device_buffers;
    std::unique_ptr<detail::boxcar_device_io> d_devio;
    bool d_input_on_device = false; // this run reads device memory

    size_t fifo_count() const { return d_fifo_snr.count(); }
    void fifo_pop(float *snr, float *width, size_t n);

    void create_search(); // d_q from d_cfg; throws
    void create_clustering();
    void reset_stream();
    void restart_search();
    void run_core(const T *x, size_t n, float *out_snr, float *out_width);
    void take_outputs(size_t n, uint64_t pos_in);
    void cluster(const float *snr, const int32_t *width, size_t n);
    void read_events();
    void flush_all();
    void finish_stream();
    void publish_batch();
    void clear_event_vectors();       // msg_format "vectors": the columns emptied
    bool has_output() const;          // some output connected (else candidates only)
    bool input_single_mapped() const; // the input buffer is single-mapped
    int work_no_output(int ninput_items, const T *in);
    uint64_t safe_position() const;
    void validate_norm(const tr_boxcar_norm_config &norm) const;
    void set_norm(const tr_boxcar_norm_config &norm);
    void set_hold();

  public:
    boxcar_search_impl(unsigned int nchan, const std::string &algorithm,
                       const std::vector<int> &widths, unsigned int depth,
                       unsigned int layers, unsigned int max_width, float threshold,
                       const std::string &norm_mode, double reject_sigma,
                       unsigned int window, unsigned int norm_history,
                       unsigned int baseline_window, const std::string &baseline_mode,
                       double fixed_mean, double fixed_sigma, unsigned int cluster_time,
                       unsigned int cluster_chan, const std::string &backend, int device,
                       size_t batch, bool device_buffers, const std::string &msg_format);
    ~boxcar_search_impl() override;

    boxcar_search_impl(const boxcar_search_impl &) = delete;
    boxcar_search_impl &operator=(const boxcar_search_impl &) = delete;

    bool check_topology(int ninputs, int noutputs) override;
    bool start() override;
    bool stop() override;

    void forecast(int noutput_items, gr_vector_int &ninput_items_required) override;

    int general_work(int noutput_items, gr_vector_int &ninput_items,
                     gr_vector_const_void_star &input_items,
                     gr_vector_void_star &output_items) override;

    void set_threshold(float threshold) override;
    float threshold() const override;
    void set_norm_mode(const std::string &mode) override;
    std::string norm_mode() const override;
    void set_reject_sigma(double reject_sigma) override;
    double reject_sigma() const override;
    void set_window(unsigned int window) override;
    unsigned int window() const override;
    void set_baseline_window(unsigned int baseline_window) override;
    unsigned int baseline_window() const override;
    void set_baseline_mode(const std::string &mode) override;
    std::string baseline_mode() const override;
    void set_fixed_stats(double mean, double sigma) override;

    unsigned int latency() const override { return d_latency; }
    unsigned int hold() const override { return d_hold; }
    unsigned int lend() const override { return d_lend; }
    unsigned int nchan() const override { return d_nchan; }
    uint64_t candidates() const override;
    uint64_t nonfinite() const override;
    std::string warning() const override;
    std::string backend() const override;
    bool device_buffers() const override { return d_device_buffers; }
    std::string msg_format() const override { return d_vectors ? "vectors" : "dicts"; }
    int cuda_device() const override { return d_cfg.device; }
    bool device_input() const override { return d_device_buffers; }
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_IMPL_H */
