/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: boxcar single-pulse search block (float and complex input).
 */

#ifndef INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_H
#define INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_H

#include <gnuradio/block.h>
#include <gnuradio/gr_complex.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr
{
namespace transient
{

/*!
 * \brief Boxcar single-pulse search (BoxDIT, IGRID or ideal) with S/N
 * normalisation and candidate clustering, per channel of a vector stream.
 * \ingroup transient
 *
 * \details
 * A shell over the boxcar search of libtransient (transient/boxcar.h, with the
 * normalisation of transient/boxcar_norm.h and the candidates of
 * transient/candidates.h); paper: K. Adamek, W. Armour, "Single Pulse
 * Detection Algorithms for Real-time Fast Radio Burst Searches using GPUs"
 * (ApJS 247:56, 2020).
 *
 * Two forms: boxcar_search_ff takes float samples; boxcar_search_cf takes
 * complex samples (a live SDR capture) and searches their power |z|^2
 * (volk_32fc_magnitude_squared_32f) as if it had been given as float.
 *
 * Input: one vector stream of \p nchan items per sample (nchan = 1: a plain
 * stream); every channel (e.g. a dispersion-measure trial) is searched on its
 * own, the clustering may join neighbouring channels (cluster_chan).
 *
 * Outputs, time-aligned with the input (output item k belongs to input item
 * k, whatever the latency):
 *   0: S/N, vector of nchan floats: Y[p], the highest S/N of the evaluated
 *      boxcars that START at sample p (boxcar (p, L) sums x[p .. p+L-1]);
 *   1: width, vector of nchan floats: W[p], the width L of that boxcar.
 * Y[p] needs the samples up to p + L_end - 1, so the block holds its output
 * back by the core's fixed latency (latency(): L_end - 1 samples, L_end the
 * first evaluated width >= max_width, plus the statistics window in "white"
 * and "levels" modes, which hold their first window, see below) plus the
 * candidate clustering
 * horizon, hold() = latency() + max(64, 4 L_end) + 1 samples, and releases it
 * once every candidate that starts at or before it is known. At the end of a finite
 * stream the last samples are evaluated with the boxcars that fit inside the data and
 * released: the outputs have exactly as many items as the input. Input stream tags
 * propagate unchanged (item k to item k).
 * Both outputs are optional: connect both or neither (one alone is refused
 * when the flow graph starts). With neither the block is the end of the
 * stream: it searches every input sample and reports the candidates on
 * "detects" only (no tags); with the CUDA backend the S/N and widths then stay
 * on the GPU (WHITE and LEVELS statistics measured there too) and are
 * clustered there, so that only the candidates come back.
 *
 * Candidates: S/N values at or above \p threshold ("peaks") are clustered by
 * friends-of-friends across time, width and channel into events
 * (transient/candidates.h). An event spans at most max(64, 4 L_end) samples
 * (a longer one is closed and continued as a new event), which bounds the
 * hold. Each event becomes
 *   - a stream tag on output 0 at the absolute offset of its START sample,
 *     key "pulse", value dict {"start": uint64 absolute start sample of the
 *     best member's boxcar (the highest S/N of the event), "width": long its
 *     width, "snr": double its S/N, "channel": long its channel, "sample":
 *     uint64 absolute start + (width - 1) / 2, the pulse centre,
 *     "members": long number of peaks clustered};
 *   - an entry of a message on port "detects": for every work call that
 *     closed events, with \p msg_format "dicts" (the default) dict
 *     {"pulses": vector of the per-event dicts above, oldest first}, and with
 *     "vectors" the same events as uniform vectors of equal length, oldest
 *     first, without a PMT object per event: dict {"start": u64vector,
 *     "width": s32vector, "snr": f32vector, "channel": s32vector, "sample":
 *     u64vector, "members": u64vector} ("vectors" is for dense events, where
 *     the dicts cost the block several microseconds each; the tags stay one
 *     dict per event). When the flow graph is stopped before the end of its
 *     stream, the events still open are closed and published there as the
 *     block stops (without tags: their samples are not released); a receiver
 *     gets them only if it still handles messages then.
 * The first statistics window of "white" and "levels" modes is normalised by
 * its own statistics (boxcar_norm.h, first_own), so it gives candidates like
 * any other; a stream shorter than the window is searched at its end with the
 * statistics of the samples it has. What was done differently from the
 * settings (the stream ended inside the first window; it was shorter than
 * L_end; a channel's first window had no usable statistics, so no candidates
 * came from it) is logged as a warning at the end of the stream and kept in
 * warning().
 *
 * Parameters
 *   algorithm    "boxdit", "igrid" or "ideal"
 *   widths       BoxDIT per-iteration maximum widths (even, >= 2; the last
 *                repeats): {32} = BD-32, {16} = BD-16, {32,16,16,16,8} =
 *                AstroAccelerate's list
 *   depth        IGRID depth d in 1..3; layers: IGRID layers per step (power
 *                of two, 0 = 2^(d+1))
 *   max_width    widest pulse searched (S_end), in samples
 *   threshold    candidate S/N threshold
 *   norm_mode    "white" (robust mean/sigma, eq. 5 scaling), "levels"
 *                (measured at widths 2^k, interpolated) or "fixed"
 *   reject_sigma outlier rejection of the statistics (0 = none)
 *   window       samples per statistics window; norm_history: windows merged
 *   baseline_window  baseline removal over that many samples (0 = none)
 *   baseline_mode "median": causal running median of the window; "block":
 *                median of the medians of its 16 blocks (cheaper, piecewise
 *                constant, lags by about half the window; window >= 16)
 *   fixed_mean, fixed_sigma  input mean and sigma of the "fixed" mode
 *   cluster_time friends-of-friends: largest gap in samples between the
 *                boxcars of two peaks of one event (0: they must overlap or
 *                touch)
 *   cluster_chan friends-of-friends: largest channel distance of two peaks
 *                of one event (1: neighbouring channels such as DM trials
 *                merge; 0: channels are independent)
 *   backend      "auto", "cpu" or "cuda"; device: CUDA device index;
 *   batch        CUDA: samples per channel per batch (the block then works in
 *                multiples of it); about 4194304 values per batch (4194304 /
 *                nchan) reach the GPU's throughput, a smaller one lowers
 *                latency at that cost
 *   device_buffers  off by default; CUDA backend, boxcar_search_ff, norm_mode
 *                "fixed" without baseline only: the input is a device buffer
 *                (cuda_buffer), read in place from a gr-transient CUDA block
 *                such as power_cf(device_buffers=True) or copied from a host
 *                block; see docs/device-buffers.md for what is refused
 *   msg_format   "detects" messages: "dicts" (a dict per event, the default)
 *                or "vectors" (a vector per field)
 *
 * Run-time settings (GRC callbacks): set_threshold() applies from the next
 * position given to the clustering (those not searched yet). The statistics
 * settings (set_norm_mode, set_reject_sigma, set_window, set_baseline_window,
 * set_baseline_mode,
 * set_fixed_stats) restart the search at the next input sample: the running
 * search is ended as at the end of a stream (its last latency() samples are
 * evaluated with the boxcars that fit before the change) and a new one starts
 * with the new settings (WHITE and LEVELS modes hold and measure their first
 * statistics window again); set between two runs of a flow graph, they
 * apply from the start of the next run. Invalid values throw
 * std::invalid_argument (ValueError in Python) and change nothing.
 */
template <class T> class TRANSIENT_API boxcar_search : virtual public gr::block
{
  public:
    typedef std::shared_ptr<boxcar_search<T>> sptr;

    /*!
     * \brief Make a boxcar search block (see the class description).
     *
     * \throws std::invalid_argument on invalid parameters (the core's message)
     * \throws std::runtime_error when the backend cannot be used (e.g. "cuda"
     *         without a usable GPU)
     */
    static sptr make(unsigned int nchan = 1, const std::string &algorithm = "boxdit",
                     const std::vector<int> &widths = std::vector<int>{32, 16, 16, 16, 8},
                     unsigned int depth = 1, unsigned int layers = 0,
                     unsigned int max_width = 256, float threshold = 7.0f,
                     const std::string &norm_mode = "white", double reject_sigma = 3.0,
                     unsigned int window = 16384, unsigned int norm_history = 4,
                     unsigned int baseline_window = 0,
                     const std::string &baseline_mode = "median", double fixed_mean = 0.0,
                     double fixed_sigma = 1.0, unsigned int cluster_time = 0,
                     unsigned int cluster_chan = 1, const std::string &backend = "auto",
                     int device = 0, size_t batch = 65536, bool device_buffers = false,
                     const std::string &msg_format = "dicts");

    /*!
     * \brief Candidate S/N threshold (applies to the next samples searched).
     * \throws std::invalid_argument unless finite
     */
    virtual void set_threshold(float threshold) = 0;
    //! Candidate S/N threshold in use
    virtual float threshold() const = 0;

    /*!
     * \brief Normalisation mode "white", "levels" or "fixed" (restarts the search).
     * \throws std::invalid_argument for another name
     */
    virtual void set_norm_mode(const std::string &mode) = 0;
    //! Normalisation mode in use
    virtual std::string norm_mode() const = 0;

    /*!
     * \brief Outlier rejection of the statistics at this many sigma, 0 = none
     * (restarts the search).
     * \throws std::invalid_argument if negative or not finite
     */
    virtual void set_reject_sigma(double reject_sigma) = 0;
    //! Outlier rejection in use (sigma)
    virtual double reject_sigma() const = 0;

    /*!
     * \brief Samples per statistics window (restarts the search).
     * \throws std::invalid_argument when the core refuses it
     */
    virtual void set_window(unsigned int window) = 0;
    //! Samples per statistics window in use
    virtual unsigned int window() const = 0;

    /*!
     * \brief Baseline window in samples (see set_baseline_mode), 0 = no baseline
     * removal (restarts the search).
     * \throws std::invalid_argument when the core refuses it
     */
    virtual void set_baseline_window(unsigned int baseline_window) = 0;
    //! Baseline window in use (0 = none)
    virtual unsigned int baseline_window() const = 0;

    /*!
     * \brief Baseline removal "median" (running) or "block" (median of 16 block
     * medians); restarts the search when a baseline window is set.
     * \throws std::invalid_argument for another name or a window the mode refuses
     */
    virtual void set_baseline_mode(const std::string &mode) = 0;
    //! Baseline mode in use ("median" or "block", also while the window is 0)
    virtual std::string baseline_mode() const = 0;

    /*!
     * \brief Input mean and sigma of the "fixed" mode (restarts the search
     * when that mode is in use).
     * \throws std::invalid_argument unless finite with sigma > 0
     */
    virtual void set_fixed_stats(double mean, double sigma) = 0;

    //! Core latency in samples (L_end - 1, plus the window in "white" and
    //! "levels" modes): the search part of the hold
    virtual unsigned int latency() const = 0;
    //! Samples the block holds back at most: latency() + clustering horizon
    virtual unsigned int hold() const = 0;
    //! L_end: the widest evaluated boxcar
    virtual unsigned int lend() const = 0;
    //! Channels per item
    virtual unsigned int nchan() const = 0;
    //! Candidates reported so far (since start)
    virtual uint64_t candidates() const = 0;
    //! Non-finite input samples replaced so far (since start)
    virtual uint64_t nonfinite() const = 0;
    //! Warnings of the last search that ended (end of stream or restart), one
    //! line, "" when none
    virtual std::string warning() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
    //! Whether the input is a device buffer (make's device_buffers)
    virtual bool device_buffers() const = 0;
    //! "detects" message format: "dicts" or "vectors" (make's msg_format).
    virtual std::string msg_format() const = 0;
};

typedef boxcar_search<float> boxcar_search_ff;
typedef boxcar_search<gr_complex> boxcar_search_cf;

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_BOXCAR_SEARCH_FF_H */
