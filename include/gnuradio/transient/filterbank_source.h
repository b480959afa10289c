/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: SIGPROC filterbank file source.
 */

#ifndef INCLUDED_TRANSIENT_FILTERBANK_SOURCE_H
#define INCLUDED_TRANSIENT_FILTERBANK_SOURCE_H

#include <gnuradio/sync_block.h>
#include <gnuradio/transient/api.h>
#include <cstdint>
#include <string>

namespace gr
{
namespace transient
{

/*!
 * \brief The header of a SIGPROC filterbank file (what the blocks need of it).
 * \ingroup transient
 */
struct TRANSIENT_API filterbank_info {
    std::string path;        //!< the file
    std::string source_name; //!< "" when absent
    unsigned int nchans = 0; //!< channels per spectrum
    unsigned int nbits = 0;  //!< bits per sample in the file
    double fch1 = 0;         //!< MHz, centre of channel 0
    double foff = 0;         //!< MHz, channel c at fch1 + c * foff (either sign)
    double tsamp = 0;        //!< s per spectrum
    double tstart = 0;       //!< MJD of the first spectrum, 0 when absent
    double refdm = 0;        //!< pc cm^-3, 0 when absent
    int telescope_id = -1;   //!< -1 when absent
    int machine_id = -1;     //!< -1 when absent
    uint64_t nsamples = 0;   //!< spectra in the file
    //! Centre frequency of the band in MHz, fch1 + (nchans - 1) foff / 2
    double center_freq() const { return fch1 + 0.5 * (nchans - 1.0) * foff; }
};

/*!
 * \brief Plays a SIGPROC filterbank file (.fil) as a vector stream of spectra.
 * \ingroup transient
 *
 * \details
 * A shell over the filterbank reader of libtransient (transient/filterbank.h:
 * the header is validated against the file size before anything is
 * allocated; nbits 1, 2, 4, 8, 16 or 32; either sign of foff). Output: one
 * vector of nchans floats per spectrum, channels in file order (channel c at
 * fch1 + c * foff MHz), read in chunks (a file larger than memory streams).
 * The stream ends after the last spectrum.
 *
 * The first item of every run carries the header as stream tags:
 *   "rx_rate"    double, spectra per second (1 / tsamp)
 *   "rx_freq"    double, centre frequency of the band in Hz
 *   "rx_time"    tuple (uint64 whole seconds, double fraction) of the UNIX
 *                time of the first spectrum read (only when tstart is set)
 *   "filterbank" dict {"path", "source_name", "nchans", "nbits", "fch1",
 *                "foff", "tsamp", "tstart", "refdm", "telescope_id",
 *                "machine_id", "nsamples", "first"}: frb_search_f checks
 *                its geometry against it.
 *
 * Parameters
 *   filename  the .fil file
 *   nchan     channels expected (the output vector length), 0: the file's;
 *             another count than the file's is refused
 *   first     first spectrum to play
 *   count     spectra to play from there, 0: to the end of the file
 *
 * A file that cannot be read, a malformed header, or first/count beyond the
 * file throw std::invalid_argument (ValueError in Python) with a message
 * naming the file and the problem.
 */
class TRANSIENT_API filterbank_source : virtual public gr::sync_block
{
  public:
    typedef std::shared_ptr<filterbank_source> sptr;

    /*!
     * \brief Make a filterbank source (see the class description).
     * \throws std::invalid_argument when the file or the parameters are invalid
     */
    static sptr make(const std::string &filename, unsigned int nchan = 0,
                     uint64_t first = 0, uint64_t count = 0);

    /*!
     * \brief The header of a filterbank file, without making a block (for
     * the parameters of the blocks downstream).
     * \throws std::invalid_argument when the file is not a valid filterbank
     */
    static filterbank_info header(const std::string &filename);

    //! The header of the file played
    virtual filterbank_info info() const = 0;
    //! Spectra played per run (count, or to the end of the file)
    virtual uint64_t count() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_FILTERBANK_SOURCE_H */
