/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/whiten_ff.h.
  The build copies this template to whiten_ff_pydoc.h.
 */

static const char *__doc_gr_transient_whiten_ff = R"doc(
Whitens a float stream by the inverse of its noise ASD
(share/doc/gr-transient/whitening.md).

The constructor (make) documents the block.)doc";

static const char *__doc_gr_transient_whiten_ff_whiten_ff = R"doc()doc";

static const char *__doc_gr_transient_whiten_ff_make = R"doc(
Make a whitening block.

The inverse-ASD filter of a one-sided PSD, truncated to 2 half_len + 1 taps
with a Hann taper, frequencies below fmin removed, scaled so that noise with
that PSD comes out with unit variance per frequency bin. Output sample p is
the whitened input sample p - latency(); tags move with their samples.
Non-finite input gates the outputs within half_len of it to 0.

Args:
    rate: sample rate in Hz
    psd_source: "estimate" (Welch median PSD of the first estimate_seconds;
        the block outputs zeros meanwhile), "file" (psd_file) or "design"
        (the Advanced LIGO design fit; fmin >= 10 Hz)
    psd_file: two-column ASCII file: frequency in Hz, then ASD (asd=True) or PSD
    asd: the file's second column is the ASD
    seglen: PSD grid and Welch segment length in s
    estimate_seconds: seconds of stream the estimated PSD is made of
    fmin: Hz, frequencies below are removed (settable at run time)
    filter_seconds: filter half length in s (0: the longest, seglen / 2)
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA FFT blocks per call of the plan

Raises:
    ValueError: invalid parameters or a bad PSD file (the core's message))doc";

static const char *__doc_gr_transient_whiten_ff_set_fmin = R"doc(
Set the low-frequency cutoff in Hz; the filter is designed again and takes
over at the next call, having seen the recent input (the latency stays).)doc";

static const char *__doc_gr_transient_whiten_ff_fmin = R"doc(Low-frequency cutoff in Hz.)doc";

static const char *__doc_gr_transient_whiten_ff_latency =
    R"doc(Samples between an input sample and its whitened output.)doc";

static const char *__doc_gr_transient_whiten_ff_half_len =
    R"doc(Filter taps each side of the centre.)doc";

static const char *__doc_gr_transient_whiten_ff_gated =
    R"doc(Outputs gated (written as 0) because of non-finite input.)doc";

static const char *__doc_gr_transient_whiten_ff_estimating =
    R"doc(True while the PSD is still being estimated.)doc";

static const char *__doc_gr_transient_whiten_ff_backend =
    R"doc(Backend in use: "cpu" or "cuda".)doc";
