/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: SPIIR filter bank block, complex input.
 */

#ifndef INCLUDED_TRANSIENT_SPIIR_BANK_CC_H
#define INCLUDED_TRANSIENT_SPIIR_BANK_CC_H

#include <gnuradio/block.h>
#include <gnuradio/transient/api.h>
#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr
{
namespace transient
{

/*!
 * \brief Summed parallel IIR (SPIIR) matched-filter bank on a complex stream.
 * \ingroup transient
 *
 * \details
 * A thin shell over the SPIIR bank of libtransient (transient/spiir.h) and its
 * trigger clustering (transient/spiir_triggers.h). For every input sample the
 * block writes one output item: a vector of ntemplates complex SNRs,
 * z[k, t] = 2 dt sum_l y[k, l] with y[k, l] = a1[l] y[k-1, l] + b0[l] x[k - d[l]].
 * Output item k is the SNR after input sample k (multirate: of the signal at
 * input sample k - latency()).
 *
 * The bank comes from a bank file (\p bank_file, the format of docs/spiir.md,
 * as written by tr_spiir_bank_save or gnuradio.transient.spiir_bank) or, when
 * \p bank_file is empty, from flat arrays: \p a1, \p b0, \p delay, \p level
 * (empty = all 0), with counts[t] filters in template t, and \p samp_rate.
 * With a file, \p samp_rate 0 takes the file's rate; another value must agree
 * with it.
 *
 * The SNR output is optional. Without it the block is a sink: it feeds its
 * input to the core and publishes the triggers on "detects" (no tags, no
 * held-back items). Where the work runs: on the CPU backend everything on the
 * host. On CUDA with the output connected, or with \p autocorr (the
 * chi-square reads SNR rows on the host), the SNR comes back to the host
 * (8 bytes per template and sample) and the triggers are searched there,
 * overlapped with the GPU's next piece. On CUDA as a sink without \p autocorr
 * the samples go to the GPU once, the SNR stays in device memory and the
 * triggers are searched there (tr_spiir_triggers_process_device): only the
 * triggers cross PCIe, and they are the host search's triggers bit for bit.
 * This is decided at start(), from the ports connected then;
 * GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS=0 keeps the host search (comparisons).
 *
 * Triggers: per template, the peak of every cluster of |z| > threshold, a
 * cluster ending \p window samples after its peak. With the output connected,
 * each is tagged on the output item of its peak,
 *   key:    "trigger"
 *   offset: the absolute output offset of the peak
 *   value:  dict {"template": long, template index,
 *                 "snr": double, |z| at the peak,
 *                 "phase": double, arg z at the peak (rad),
 *                 "time": double, the interpolated peak time of the signal in
 *                         seconds from the stream's first sample (latency removed),
 *                 "sample": long, the absolute input sample of the peak in the
 *                           signal (offset - latency),
 *                 "chisq": double, the autocorrelation chi-square (only with
 *                          \p autocorr)}
 * To tag a peak the block must know it is one: it holds back its output by
 * \p window samples (the last window items go out when more input arrives or
 * the stream ends).
 *
 * The triggers are published on the message port "detects", once per work
 * call that decided triggers: with \p msg_format "dicts" as
 * {"triggers": vector of those dicts}; with "vectors" as one dict of uniform
 * vectors, element i for trigger i, and no PMT object per trigger:
 * {"sample": s64vector, "time": f64vector, "template": u32vector,
 *  "snr": f32vector, "phase": f32vector, "chisq": f32vector (only with
 *  \p autocorr)}.
 *
 * Chi-square (transient/spiir_chisq.h): \p autocorr holds, template after
 * template, each template's autocorrelation A[j], j = -half..half (2 half + 1
 * complex lags, A[0] = 1; gnuradio.transient.spiir_search.autocorrelation
 * computes it). Each trigger then reports
 * chisq = sum_j |A[j] z[p] - z[p + j]|^2 / (2 n - sum_j |A[j]|^2) over the n
 * lags around its peak p (at the start and end of a stream, those that exist).
 * A trigger is decided \p window samples after its peak, so half <= window
 * is required: every lag after the peak is then known when the trigger is.
 *
 * \p multirate runs each filter at samp_rate / 2^level (section 2.2 of the
 * paper); the output then lags the single-rate output by latency() samples.
 * Backend "auto" uses CUDA when a usable GPU is present and falls back to the
 * CPU otherwise (one log line says why); "cuda" fails if no GPU is usable. With
 * the CUDA backend the block works in multiples of \p batch samples.
 */
class TRANSIENT_API spiir_bank_cc : virtual public gr::block
{
  public:
    typedef std::shared_ptr<spiir_bank_cc> sptr;

    /*!
     * \brief Make a SPIIR bank block for a complex stream.
     *
     * \param bank_file  bank file; empty: the bank is given by the arrays
     * \param a1         poles of every filter, template after template (|a1| < 1)
     * \param b0         gains
     * \param delay      delays in samples at the full rate (>= 0)
     * \param level      multirate levels (0 = full rate); empty: all 0
     * \param counts     filters per template (each >= 1)
     * \param samp_rate  sample rate in Hz (> 0 with arrays; 0 = the file's)
     * \param threshold  trigger threshold on |SNR| (>= 0)
     * \param window     samples after a peak that end its cluster (>= 1)
     * \param multirate  run each filter at samp_rate / 2^level
     * \param backend    "auto", "cpu" or "cuda"
     * \param device     CUDA device index
     * \param batch      CUDA: samples per device batch and output multiple
     * \param msg_format "dicts" (one dict per trigger) or "vectors" (one dict
     *                   of uniform vectors per message)
     * \param autocorr   chi-square: ntemplates x (2 half + 1) complex lags,
     *                   template after template (A[0] = 1, half <= window);
     *                   empty: no chi-square
     *
     * \throws std::invalid_argument for an invalid bank or parameter (the core's
     *         message), std::runtime_error for an unreadable bank file or an
     *         unusable backend
     */
    static sptr make(const std::string &bank_file = "",
                     const std::vector<std::complex<double>> &a1 = {},
                     const std::vector<std::complex<double>> &b0 = {},
                     const std::vector<int> &delay = {},
                     const std::vector<int> &level = {},
                     const std::vector<int> &counts = {}, double samp_rate = 0.0,
                     float threshold = 8.0f, int window = 1024, bool multirate = false,
                     const std::string &backend = "auto", int device = 0,
                     size_t batch = 4096, const std::string &msg_format = "dicts",
                     const std::vector<std::complex<double>> &autocorr = {});

    /*!
     * \brief Set the trigger threshold on |SNR| (from the next sample).
     * \throws std::invalid_argument unless finite and >= 0
     */
    virtual void set_threshold(float threshold) = 0;
    //! Trigger threshold in use
    virtual float threshold() const = 0;
    //! Samples after a peak that end its cluster
    virtual int window() const = 0;
    //! Templates in the bank (the output vector length)
    virtual unsigned int ntemplates() const = 0;
    //! Filters in the bank, all templates
    virtual uint64_t nfilters() const = 0;
    //! Sample rate in Hz
    virtual double samp_rate() const = 0;
    //! Samples by which the output lags the single-rate output (0 single-rate)
    virtual int64_t latency() const = 0;
    //! True when the filters run at their levels' rates
    virtual bool multirate() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
    //! Message format of "detects": "dicts" or "vectors"
    virtual std::string msg_format() const = 0;
    //! Chi-square half-width in lags (0: no chi-square)
    virtual unsigned int chisq_half() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_SPIIR_BANK_CC_H */
