/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/dedisperse_ff.h. The
  build copies this template to dedisperse_ff_pydoc.h.
 */

static const char *__doc_gr_transient_dedisperse_ff = R"doc(
Incoherent dedispersion of filterbank spectra (vector of nchan floats) over
DM trials (vector of ndm() floats), time-aligned with the input and the same
for any chunking. See include/gnuradio/transient/dedisperse_ff.h.)doc";

static const char *__doc_gr_transient_dedisperse_ff_make = R"doc(
Make a dedispersion block. Channel c is at fch1 + c * foff MHz; output item
p, trial d = sum over the unmasked channels c of input item p + delay_c(d),
delay_c(d) = round(4.148808e3 DM_d (f_c^-2 - f_ref^-2) / tsamp), f_ref the
highest channel centre. The output is held back by latency() items; the end
of a finite stream is written as if zeros followed.

Args:
    nchan: channels per spectrum
    fch1: MHz, centre of channel 0
    foff: MHz, channel spacing (either sign, != 0)
    tsamp: seconds per spectrum
    dm_min, dm_max, tolerance, pulse_width: dedisp's DM list (pulse width in us)
    dm_list: explicit DM trials instead (empty: generated)
    mask: channel indices left out of the sums
    zero_dm: subtract each spectrum's mean over the unmasked channels first
    scale: "sum" or "mean"
    backend: "auto", "cpu" or "cuda"; device: CUDA device index
    batch: CUDA spectra per batch

Raises ValueError on invalid parameters, RuntimeError when the backend cannot
be used.)doc";

static const char *__doc_gr_transient_dedisperse_ff_ndm = R"doc(
DM trials per output item.)doc";

static const char *__doc_gr_transient_dedisperse_ff_dms = R"doc(
The DM of every trial, pc cm^-3.)doc";

static const char *__doc_gr_transient_dedisperse_ff_latency = R"doc(
Largest delay in items: how far the output is held back.)doc";

static const char *__doc_gr_transient_dedisperse_ff_delay = R"doc(
Delay of channel c for trial d in items (0 when out of range).)doc";

static const char *__doc_gr_transient_dedisperse_ff_nchan = R"doc(
Channels per input item.)doc";

static const char *__doc_gr_transient_dedisperse_ff_nused = R"doc(
Channels summed (not masked).)doc";

static const char *__doc_gr_transient_dedisperse_ff_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";
