/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: streaming whitening of a real stream by its noise PSD.
 */

#ifndef INCLUDED_TRANSIENT_WHITEN_FF_H
#define INCLUDED_TRANSIENT_WHITEN_FF_H

#include <gnuradio/sync_block.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <cstdint>
#include <string>

namespace gr
{
namespace transient
{

/*!
 * \brief Whitens a float stream by the inverse of its noise amplitude
 * spectral density, as gravitational-wave searches do before matched
 * filtering (docs/whitening.md).
 * \ingroup transient
 *
 * \details
 * A thin shell over the whitening of libtransient (transient/whiten.h): the
 * inverse-ASD filter of a one-sided PSD, made finite (2 half_len + 1 taps,
 * Hann taper), frequencies below \p fmin removed, scaled so that noise with
 * that PSD comes out with unit variance in every frequency bin; overlap-save
 * FFTs (FFTW3 on the CPU, cuFFT on CUDA).
 *
 * The PSD (\p psd_source), on the grid of nfft = \p seglen * \p rate samples
 * (rounded to even):
 *   - "file": a two-column ASCII file \p psd_file (frequency, then ASD when
 *     \p asd, as LIGO distributes its curves, else PSD);
 *   - "design": the Advanced LIGO design fit (needs fmin >= 10 Hz);
 *   - "estimate": Welch's median estimate (segments of \p seglen s) from the
 *     first \p estimate_seconds of the stream. Meanwhile the block outputs
 *     zeros; then it whitens with that PSD, the filter having seen the
 *     estimation data, so the output from sample estimate_seconds * rate on
 *     is the whitened stream at the same latency as the other sources.
 *
 * Output sample p is the whitened input sample p - latency() (zeros before
 * the stream's start); stream tags are moved by latency() with it.
 * Non-finite input samples gate the outputs within half_len of them to 0
 * (a warning per call that gated some); the stream continues cleanly after.
 *
 * Backend "auto" uses CUDA when a usable GPU is present and falls back to the
 * CPU otherwise (one log line says why); "cuda" fails without a usable GPU.
 */
class TRANSIENT_API whiten_ff : virtual public gr::sync_block
{
  public:
    typedef std::shared_ptr<whiten_ff> sptr;

    /*!
     * \brief Make a whitening block.
     *
     * \param rate             sample rate in Hz
     * \param psd_source       "estimate", "file" or "design"
     * \param psd_file         the PSD file for "file"
     * \param asd              the file's second column is the ASD (else the PSD)
     * \param seglen           PSD grid and Welch segment length in s
     * \param estimate_seconds "estimate": seconds of stream the PSD is made of
     * \param fmin             Hz: frequencies below are removed
     * \param filter_seconds   filter half length in s (0: the longest, seglen / 2)
     * \param backend          "auto", "cpu" or "cuda"
     * \param device           CUDA device index
     * \param batch            CUDA: FFT blocks per call of the plan
     *
     * \throws std::invalid_argument on invalid parameters or a bad PSD file
     */
    static sptr make(double rate = 4096.0, const std::string &psd_source = "estimate",
                     const std::string &psd_file = "", bool asd = true,
                     double seglen = 4.0, double estimate_seconds = 32.0,
                     double fmin = 15.0, double filter_seconds = 0.0,
                     const std::string &backend = "auto", int device = 0,
                     size_t batch = 8);

    /*!
     * \brief Set the low-frequency cutoff: the filter is designed again and
     * takes over at the next call, having seen the recent input (the latency
     * stays the same).
     * \throws std::invalid_argument unless 0 <= fmin < rate / 2 and the PSD is
     *         usable from fmin up
     */
    virtual void set_fmin(double fmin) = 0;

    //! Low-frequency cutoff in use, Hz
    virtual double fmin() const = 0;
    //! Samples between an input sample and its whitened output
    virtual uint64_t latency() const = 0;
    //! Filter taps each side of the centre
    virtual size_t half_len() const = 0;
    //! Outputs gated (written as 0) because of non-finite input
    virtual uint64_t gated() const = 0;
    //! True while the PSD is still being estimated
    virtual bool estimating() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_WHITEN_FF_H */
