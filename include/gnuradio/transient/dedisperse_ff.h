/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: incoherent dedispersion block (filterbank spectra in, DM
 * trials out).
 */

#ifndef INCLUDED_TRANSIENT_DEDISPERSE_FF_H
#define INCLUDED_TRANSIENT_DEDISPERSE_FF_H

#include <gnuradio/block.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <string>
#include <vector>

namespace gr
{
namespace transient
{

/*!
 * \brief Incoherent dedispersion of filterbank spectra over a list of
 * dispersion measure (DM) trials.
 * \ingroup transient
 *
 * \details
 * A shell over tr_dedisp of libtransient (transient/dedisp.h; D. R. Lorimer,
 * M. Kramer, "Handbook of Pulsar Astronomy", section 5.2; the DM list of
 * dedisp, B. R. Barsdell et al., MNRAS 422, 379, 2012).
 *
 * Input: one vector stream of \p nchan floats per item, a spectrum (channel c
 * at frequency fch1 + c * foff MHz, either sign of foff; e.g. the output of
 * filterbank_source, or of an FFT channeliser with |X|^2 and integration).
 * Output: one vector stream of ndm() floats per item, the DM trials: output
 * item p, trial d is the sum (or mean, \p scale) over the unmasked channels c
 * of input item p + delay_c(d), delay_c(d) = round(K DM_d (f_c^-2 - f_ref^-2)
 * / tsamp), K = 4.148808e3 MHz^2 pc^-1 cm^3 s, f_ref the highest channel
 * centre: item p is the arrival time of a burst at the top of the band, so
 * the output is time-aligned with the input (output item p belongs to input
 * item p). It needs the input up to p + latency() (the largest delay): the
 * block holds its output back by that many items; at the end of a finite
 * stream the last latency() items are written as if zeros followed (an item
 * near the end sums only the channels whose sample lies inside the data), so
 * the output has exactly as many items as the input. Input stream tags
 * propagate unchanged (item k to item k). The output is the same for any
 * split of the stream into work calls.
 *
 * DM trials: dedisp's list from dm_min up to the first trial >= dm_max with
 * smearing tolerance \p tolerance and intrinsic pulse width \p pulse_width
 * (us), or the explicit \p dm_list when it is not empty (in Python,
 * gnuradio.transient.dedisp_dm_list computes the generated list without
 * making a block; GRC uses it for the output vector length).
 *
 * Parameters
 *   nchan, fch1 (MHz, centre of channel 0), foff (MHz, != 0), tsamp (s, > 0):
 *                the spectra
 *   dm_min, dm_max, tolerance (> 1), pulse_width (us): the generated DM list
 *   dm_list      explicit DM trials (pc cm^-3) instead; empty: generated
 *   mask         channel indices left out of the sums (e.g. RFI, the DC bin
 *                or the aliased edge of an FFT channeliser); at least one
 *                channel must remain
 *   zero_dm      subtract each spectrum's mean over the unmasked channels
 *                first (removes broadband interference, as Heimdall's
 *                zero-DM option)
 *   scale        "sum" or "mean" (the sum divided by the unmasked channels)
 *   backend      "auto", "cpu" or "cuda"; device: CUDA device index
 *   batch        CUDA: spectra per batch (the block then works in multiples
 *                of it)
 *
 * Invalid parameters throw std::invalid_argument (ValueError in Python) with
 * the core's message.
 */
class TRANSIENT_API dedisperse_ff : virtual public gr::block
{
  public:
    typedef std::shared_ptr<dedisperse_ff> sptr;

    /*!
     * \brief Make a dedispersion block (see the class description).
     *
     * \throws std::invalid_argument on invalid parameters
     * \throws std::runtime_error when the backend cannot be used
     */
    static sptr make(unsigned int nchan, double fch1, double foff, double tsamp,
                     double dm_min = 0.0, double dm_max = 1000.0, double tolerance = 1.25,
                     double pulse_width = 40.0,
                     const std::vector<double> &dm_list = std::vector<double>(),
                     const std::vector<int> &mask = std::vector<int>(),
                     bool zero_dm = false, const std::string &scale = "sum",
                     const std::string &backend = "auto", int device = 0,
                     size_t batch = 16384);

    //! DM trials per output item
    virtual unsigned int ndm() const = 0;
    //! The DM of every trial, pc cm^-3
    virtual std::vector<double> dms() const = 0;
    //! Largest delay in items: the block holds its output back by this much
    virtual unsigned int latency() const = 0;
    //! Delay of channel c for trial d, in items (0 when out of range)
    virtual unsigned int delay(unsigned int d, unsigned int c) const = 0;
    //! Channels per input item
    virtual unsigned int nchan() const = 0;
    //! Channels summed (not masked)
    virtual unsigned int nused() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_DEDISPERSE_FF_H */
