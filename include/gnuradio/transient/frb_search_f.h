/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: FRB search block (filterbank spectra in, burst candidates out).
 */

#ifndef INCLUDED_TRANSIENT_FRB_SEARCH_F_H
#define INCLUDED_TRANSIENT_FRB_SEARCH_F_H

#include <gnuradio/block.h>
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
 * \brief Search for dispersed bursts (fast radio bursts, pulsar single
 * pulses) in filterbank spectra: dedispersion over a DM plan, boxcar search of
 * every DM trial, candidates with their DM, time, width and S/N.
 * \ingroup transient
 *
 * \details
 * A shell over tr_frb of libtransient (transient/frb.h): tr_dedisp (the DM
 * plan of dedisp, B. R. Barsdell et al., MNRAS 422, 379, 2012) -> tr_boxcar
 * (normalisation and BoxDIT/IGRID search, K. Adamek, W. Armour, ApJS 247:56,
 * 2020) -> friends-of-friends candidates across time, width and DM trials.
 *
 * Input: one vector stream of \p nchan floats per item, a spectrum (channel c
 * at fch1 + c * foff MHz, either sign of foff, \p tsamp seconds per item):
 * filterbank_source, or an FFT channeliser (stream_to_vector, fft with shift,
 * |X|^2, integrate).
 *
 * Candidates: each closed candidate becomes an entry of a message on port
 * "detects": for every work call that closed candidates, dict {"pulses":
 * vector of dicts, oldest first} (the format of boxcar_search_ff), each dict
 *   "dm"       double, DM of the best member's trial, pc cm^-3
 *   "time"     double, sample * tsamp: the pulse centre as it crosses the top
 *              of the band (the highest channel centre), s
 *   "sample"   uint64, absolute input item of that pulse centre (start +
 *              (width - 1) / 2)
 *   "start"    uint64, absolute input item where the best boxcar starts
 *   "width"    long, its width in items; "snr" double, its S/N
 *   "members"  long, (item, DM trial) outputs >= threshold joined
 *   "channel"  long, the DM trial index of the best member (boxcar_search_ff's
 *              key); "dm_lo", "dm_hi" double, the lowest and highest DM of
 *              the members
 * A candidate comes out once no later item can join it (tr_frb_latency()
 * items plus the clustering), at the end of a finite stream every open one
 * is closed. The first statistics window of every DM trial (window items,
 * none for norm_mode "fixed") only measures the noise and is not searched
 * (warmup()); a stream that ends before anything was searched is reported
 * with a warning in the log.
 *
 * Output (plane_output = true): the DM-time plane, one vector of ndm() floats
 * per item, time-aligned with the input (output item p = the dedispersed sums
 * at the arrival time of input item p at the top of the band, before the
 * normalisation; items whose sums would need spectra after the end of a
 * finite stream are NaN); exactly as many items as the input. Without it the
 * block is a sink. To stay able to close every candidate when the stream
 * ends, the block keeps the last input item unconsumed until its upstream is
 * done.
 *
 * Parameters
 *   nchan, fch1 (MHz, centre of channel 0), foff (MHz, != 0), tsamp (s)
 *   dm_min, dm_max, tolerance (> 1), pulse_width (us): dedisp's DM list;
 *   dm_list      explicit trials instead (empty: generated)
 *   mask         channel indices left out (RFI, an FFT's DC or edge bin)
 *   zero_dm      subtract each spectrum's mean over the unmasked channels
 *                (on by default, as Heimdall: slow broadband power is not a
 *                burst)
 *   algorithm    "boxdit", "igrid" or "ideal"; widths: BoxDIT list;
 *                depth: IGRID depth 1..3
 *   max_width    widest pulse searched, items
 *   threshold    candidate S/N threshold (GRC callback)
 *   norm_mode    "white", "levels" or "fixed"; window: items per statistics
 *                window; reject_sigma: outlier rejection (0: none)
 *   link_time    friends-of-friends: largest gap between boxcars, items
 *   link_dm      friends-of-friends: largest DM-trial distance (a strong
 *                burst lights up many neighbouring trials: one candidate)
 *   plane_output the DM-time plane output (see above)
 *   backend      "auto", "cpu" or "cuda"; device: CUDA device index
 *   block        spectra per internal block of the core (memory about
 *                block x ndm x 12 bytes)
 *   devices      CUDA device indices sharing the DM trials (empty: device
 *                alone; a device may repeat); several need the CUDA backend
 *                and no plane output (docs/frb.md, Several GPUs)
 *
 * Invalid parameters throw std::invalid_argument (ValueError in Python).
 */
class TRANSIENT_API frb_search_f : virtual public gr::block
{
  public:
    typedef std::shared_ptr<frb_search_f> sptr;

    /*!
     * \brief Make an FRB search block (see the class description).
     *
     * \throws std::invalid_argument on invalid parameters
     * \throws std::runtime_error when the backend cannot be used
     */
    static sptr make(unsigned int nchan, double fch1, double foff, double tsamp,
                     double dm_min = 0.0, double dm_max = 1000.0, double tolerance = 1.25,
                     double pulse_width = 40.0,
                     const std::vector<double> &dm_list = std::vector<double>(),
                     const std::vector<int> &mask = std::vector<int>(),
                     bool zero_dm = true, const std::string &algorithm = "boxdit",
                     const std::vector<int> &widths = std::vector<int>{32, 16, 16, 16, 8},
                     unsigned int depth = 1, unsigned int max_width = 1024,
                     float threshold = 8.0f, const std::string &norm_mode = "white",
                     unsigned int window = 1024, double reject_sigma = 3.0,
                     unsigned int link_time = 0, unsigned int link_dm = 200,
                     bool plane_output = false, const std::string &backend = "auto",
                     int device = 0, unsigned int block = 16384,
                     const std::vector<int> &devices = std::vector<int>());

    /*!
     * \brief Candidate S/N threshold (applies to the next items searched).
     * \throws std::invalid_argument unless finite
     */
    virtual void set_threshold(float threshold) = 0;
    //! Candidate S/N threshold in use
    virtual float threshold() const = 0;

    //! DM trials
    virtual unsigned int ndm() const = 0;
    //! The DM of every trial, pc cm^-3
    virtual std::vector<double> dms() const = 0;
    //! Largest dispersion delay, items
    virtual unsigned int max_delay() const = 0;
    //! Items from input to searched output: largest delay + search latency
    virtual unsigned int latency() const = 0;
    //! Items per DM trial not searched at the start (first statistics window)
    virtual unsigned int warmup() const = 0;
    //! Channels per input item
    virtual unsigned int nchan() const = 0;
    //! Candidates reported so far (since start)
    virtual uint64_t candidates() const = 0;
    //! Items per DM trial searched so far (since start)
    virtual uint64_t searched() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
    //! Whether the DM-time plane stays on the GPU between the stages
    virtual bool device_resident() const = 0;
    //! Whether the block has the DM-time plane output
    virtual bool plane_output() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_FRB_SEARCH_F_H */
