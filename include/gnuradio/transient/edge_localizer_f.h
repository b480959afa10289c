/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: edge (transition) localizer block.
 */

#ifndef INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_H
#define INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_H

#include <gnuradio/block.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gr
{
namespace transient
{

/*!
 * \brief Locates the transitions of a two-level (pulsed) signal per IEEE Std 181.
 * \ingroup transient
 *
 * \details
 * A thin shell over the edge localizer of libtransient (transient/edges.h). The
 * samples pass through unchanged; every transition is marked with a stream tag
 * and reported on the message port \p detects.
 *
 * The output is optional. Left unconnected, the block consumes its input, does
 * not copy it, and reports the transitions on \p detects only (tags need an
 * output stream); "sample" then counts input samples. The PMT of a
 * transition is built only when a tag (output connected) or a message
 * (\p detects connected) takes it; with neither the block only runs the core.
 *
 * Definition (from the core library): with the reference levels low < mid < high,
 * a sample is in the LOW state if x <= low, in the HIGH state if x >= high, and
 * intermediate otherwise. A transition happens at the first sample that reaches
 * the other state after the signal was last in one state; its time is the first
 * crossing of mid (in the direction of the transition) after the last sample in
 * the old state, linearly interpolated:
 * (i-1) + (mid - x[i-1]) / (x[i] - x[i-1]). Runts give no transition. If
 * non-finite samples hid the crossing, the time is NaN.
 *
 * Levels are either fixed (\p low, \p mid, \p high) or, with \p auto_levels,
 * estimated by the histogram mode method from the first \p level_samples samples
 * (and every \p level_interval samples after that, if not 0) using \p hist_bins
 * bins, \p tolerance_pct and \p mid_pct.
 *
 * Stream tags (output 0): one per transition, on the first sample in the new state,
 *   key:    "edge"
 *   offset: that sample's absolute index
 *   value:  dict {"time": double, the interpolated absolute crossing time (NaN if
 *                  hidden by non-finite samples),
 *                 "polarity": long, +1 rising (low to high), -1 falling,
 *                 "sample": uint64, the absolute index of the tagged sample}
 *
 * Message port "detects": for every call of general_work() (and the end-of-stream
 * flush) that found transitions, one message; with \p msg_format "dicts" (the
 * default)
 *   dict {"edges": list of the per-transition dicts above, oldest first}
 * and with "vectors" the same transitions as three uniform vectors of equal
 * length, oldest first, without a PMT object per transition:
 *   dict {"time": f64vector, "polarity": s8vector, "sample": u64vector}
 * ("vectors" is for dense transitions, where the PMTs of "dicts" cost a block
 * far more than the core spends per transition; tags stay one per transition).
 *
 * With \p metrics, the IEEE Std 181 metrics of each transition
 * (<transient/edge_metrics.h>: rise/fall time at 10-90 % and 20-80 %, slew
 * rate, overshoot and undershoot, settling time to 2 %, pulse width, period,
 * duty cycle; state levels from the boundaries and tolerance_pct, or the
 * estimate) come in messages of their own once the two following transitions
 * are known (the last ones at the end of the stream), times in samples:
 *   "dicts":   dict {"metrics": list of dicts {"sample", "time", "polarity",
 *              "flags", "start", "end", "duration", "duration2", "slew",
 *              "overshoot", "undershoot", "pre_overshoot", "pre_undershoot",
 *              "settling", "width", "period", "duty"}}
 *   "vectors": dict {"metrics": dict of uniform vectors with those keys
 *              (sample u64, polarity s8, flags u32, the rest f64)}
 *
 * Without the output, while the core holds samples for the first level
 * estimate, the block leaves its last input sample unconsumed until the
 * upstream is done, so that the end of a finite stream is flushed in a work
 * call; with the CUDA backend it then takes any number of samples per call.
 *
 * Latency: with fixed levels the block is pass-through with no delay. With auto
 * levels the core holds the first \p level_samples samples until the levels are
 * known; the block holds back its output as long (the samples wait in an internal
 * FIFO) so that every sample still gets its tags. At the end of a finite stream
 * the held samples are estimated from what arrived, processed and released.
 *
 * Backend "auto" uses the CUDA backend when a usable GPU is present and falls back
 * to the CPU otherwise (one log line says why); "cuda" fails if no GPU is usable.
 * With the CUDA backend the block works in multiples of \p batch samples.
 */
class TRANSIENT_API edge_localizer_f : virtual public gr::block
{
  public:
    typedef std::shared_ptr<edge_localizer_f> sptr;

    /*!
     * \brief Make an edge localizer block.
     *
     * \param auto_levels     false: fixed levels low/mid/high; true: estimate them
     * \param low             fixed: upper boundary of the low state
     * \param mid             fixed: mid reference level (low < mid < high)
     * \param high            fixed: lower boundary of the high state
     * \param tolerance_pct   auto: state boundaries in % of the amplitude, (0, 50)
     * \param mid_pct         auto: mid reference in % of the amplitude,
     *                        (tolerance_pct, 100 - tolerance_pct)
     * \param hist_bins       auto: histogram bins (>= 2)
     * \param level_samples   auto: samples per level estimate
     * \param level_interval  auto: re-estimate every this many samples, 0 = never
     * \param backend         "auto", "cpu" or "cuda"
     * \param device          CUDA device index
     * \param batch           CUDA: samples per device batch and output multiple
     * \param msg_format      "detects" messages: "dicts" (a dict per transition)
     *                        or "vectors" (uniform vectors per message)
     * \param metrics         also report the IEEE 181 metrics of the transitions
     *
     * \throws std::invalid_argument on invalid parameters (the core's message)
     * \throws std::runtime_error when the backend cannot be used (e.g. "cuda"
     *         without a usable GPU)
     */
    static sptr make(bool auto_levels = false, float low = 0.1f, float mid = 0.5f,
                     float high = 0.9f, double tolerance_pct = 10.0,
                     double mid_pct = 50.0, unsigned int hist_bins = 100,
                     size_t level_samples = 65536, uint64_t level_interval = 0,
                     const std::string &backend = "auto", int device = 0,
                     size_t batch = 65536, const std::string &msg_format = "dicts",
                     bool metrics = false);

    /*!
     * \brief Set the reference levels (applies from the next sample).
     * \throws std::invalid_argument unless low < mid < high (all finite)
     */
    virtual void set_levels(float low, float mid, float high) = 0;

    /*!
     * \brief Set the auto-levels state boundary percentage (next estimate).
     * \throws std::invalid_argument if out of range for the current mid_pct
     */
    virtual void set_tolerance_pct(double tolerance_pct) = 0;

    /*!
     * \brief Set the auto-levels mid reference percentage (next estimate).
     * \throws std::invalid_argument if out of range for the current tolerance_pct
     */
    virtual void set_mid_pct(double mid_pct) = 0;

    /*!
     * \brief Set both auto-levels percentages at once (next estimate).
     * \throws std::invalid_argument if out of range
     */
    virtual void set_percentages(double tolerance_pct, double mid_pct) = 0;

    //! Lower reference level in use (NaN while auto levels are not estimated yet)
    virtual float low() const = 0;
    //! Mid reference level in use (NaN while auto levels are not estimated yet)
    virtual float mid() const = 0;
    //! Upper reference level in use (NaN while auto levels are not estimated yet)
    virtual float high() const = 0;
    //! True once reference levels are available (always true with fixed levels)
    virtual bool levels_known() const = 0;
    //! Auto-levels state boundary percentage
    virtual double tolerance_pct() const = 0;
    //! Auto-levels mid reference percentage
    virtual double mid_pct() const = 0;
    //! True when the levels are estimated from the signal
    virtual bool auto_levels() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
    //! Format of the "detects" messages: "dicts" or "vectors"
    virtual std::string msg_format() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_EDGE_LOCALIZER_F_H */
