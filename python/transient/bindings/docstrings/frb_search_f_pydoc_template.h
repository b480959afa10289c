/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/frb_search_f.h. The
  build copies this template to frb_search_f_pydoc.h.
 */

static const char *__doc_gr_transient_frb_search_f = R"doc(
FRB search of filterbank spectra (vector of nchan floats): dedispersion, boxcar
search of every DM trial, candidates with DM, time, width and S/N on
"detects". See include/gnuradio/transient/frb_search_f.h.)doc";

static const char *__doc_gr_transient_frb_search_f_make = R"doc(
Make an FRB search block: dedispersion over a DM plan, boxcar search of every
DM trial, candidates clustered across time, width and DM. Each candidate is an
entry of a message on port "detects": {"pulses": vector of dicts {dm, time
(s), sample, start (absolute input items), width, snr, members, channel (DM
trial), dm_lo, dm_hi}}. With plane_output, output 0 is the DM-time plane
(vector of ndm() floats, time-aligned with the input).

Args:
    nchan, fch1 (MHz), foff (MHz), tsamp (s): the spectra
    dm_min, dm_max, tolerance, pulse_width (us): dedisp's DM list
    dm_list: explicit DM trials instead (empty: generated)
    mask: channel indices left out; zero_dm: subtract each spectrum's mean
    algorithm: "boxdit", "igrid" or "ideal"; widths: BoxDIT list; depth: IGRID
    max_width: widest pulse searched (items)
    threshold: candidate S/N threshold
    norm_mode: "white", "levels" or "fixed"; window: items per statistics
        window (the first one is not searched); reject_sigma: outlier rejection
    link_time, link_dm: friends-of-friends gap (items) and DM-trial distance
    plane_output: output the DM-time plane
    backend: "auto", "cpu" or "cuda"; device: CUDA device index
    block: spectra per internal block of the core

Raises ValueError on invalid parameters, RuntimeError when the backend cannot
be used.)doc";

static const char *__doc_gr_transient_frb_search_f_set_threshold = R"doc(
Candidate S/N threshold from the next items searched on (ValueError unless
finite).)doc";

static const char *__doc_gr_transient_frb_search_f_threshold = R"doc(
Candidate S/N threshold in use.)doc";

static const char *__doc_gr_transient_frb_search_f_ndm = R"doc(
DM trials.)doc";

static const char *__doc_gr_transient_frb_search_f_dms = R"doc(
The DM of every trial, pc cm^-3.)doc";

static const char *__doc_gr_transient_frb_search_f_max_delay = R"doc(
Largest dispersion delay, items.)doc";

static const char *__doc_gr_transient_frb_search_f_latency = R"doc(
Items from input to searched output: largest delay + search latency.)doc";

static const char *__doc_gr_transient_frb_search_f_warmup = R"doc(
Items per DM trial not searched at the start (the first statistics window).)doc";

static const char *__doc_gr_transient_frb_search_f_nchan = R"doc(
Channels per input item.)doc";

static const char *__doc_gr_transient_frb_search_f_candidates = R"doc(
Candidates reported since start.)doc";

static const char *__doc_gr_transient_frb_search_f_searched = R"doc(
Items per DM trial searched since start.)doc";

static const char *__doc_gr_transient_frb_search_f_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";

static const char *__doc_gr_transient_frb_search_f_device_resident = R"doc(
Whether the DM-time plane stays on the GPU between dedispersion and search.)doc";

static const char *__doc_gr_transient_frb_search_f_plane_output = R"doc(
Whether the block has the DM-time plane output.)doc";
