/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/filterbank_source.h.
  The build copies this template to filterbank_source_pydoc.h.
 */

static const char *__doc_gr_transient_filterbank_info = R"doc(
The header of a SIGPROC filterbank file: path, source_name, nchans, nbits, fch1
(MHz, channel 0), foff (MHz), tsamp (s), tstart (MJD), refdm, telescope_id,
machine_id, nsamples (spectra in the file).)doc";

static const char *__doc_gr_transient_filterbank_info_center_freq = R"doc(
Centre frequency of the band in MHz.)doc";

static const char *__doc_gr_transient_filterbank_source = R"doc(
Plays a SIGPROC filterbank file (.fil; nbits 1, 2, 4, 8, 16, 32; either sign
of foff) as a vector stream of nchans floats per spectrum, channels in file
order. The first item carries the tags "rx_rate" (1/tsamp), "rx_freq" (band
centre, Hz), "rx_time" (when tstart is set) and "filterbank" (the header as a
dict). See include/gnuradio/transient/filterbank_source.h.)doc";

static const char *__doc_gr_transient_filterbank_source_make = R"doc(
Make a filterbank source.

Args:
    filename: the .fil file
    nchan: channels expected (0: the file's); another count is refused
    first: first spectrum to play
    count: spectra to play, 0: to the end of the file

Raises ValueError when the file is not a valid filterbank or first/count lie
beyond it (the message names the file and the problem).)doc";

static const char *__doc_gr_transient_filterbank_source_header = R"doc(
The header of a filterbank file (a filterbank_info) without making a block.
Raises ValueError when the file is not a valid filterbank.)doc";

static const char *__doc_gr_transient_filterbank_source_info = R"doc(
The header of the file played (a filterbank_info).)doc";

static const char *__doc_gr_transient_filterbank_source_count = R"doc(
Spectra played per run.)doc";
