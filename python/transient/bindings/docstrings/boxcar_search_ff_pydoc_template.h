/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/boxcar_search_ff.h
  (boxcar_search_ff and boxcar_search_cf share them). The build copies this
  template to boxcar_search_ff_pydoc.h.
 */

static const char *__doc_gr_transient_boxcar_search = R"doc(
Boxcar single-pulse search (BoxDIT, IGRID or ideal) with S/N normalisation and
candidate clustering, per channel of a vector stream of nchan items.
boxcar_search_ff takes float samples; boxcar_search_cf takes complex samples
and searches their power |z|^2.

The constructor (make) documents the block: arguments, tags, messages.)doc";

static const char *__doc_gr_transient_boxcar_search_boxcar_search = R"doc()doc";

static const char *__doc_gr_transient_boxcar_search_make = R"doc(
Make a boxcar search block.

Outputs (time-aligned with the input: output item k belongs to input item k):
  0: S/N Y[p], the best S/N of the evaluated boxcars that START at sample p;
  1: width W[p] of that boxcar (float).
The block holds its output back by latency() = L_end - 1 samples plus the
clustering horizon (hold() in all); at the end of a stream the last samples
are evaluated with the boxcars that fit and released, so the outputs have as
many items as the input.

Candidates (S/N above threshold, clustered by friends-of-friends across width,
time and channel): a stream tag on output 0 at the absolute offset of the
event's start, key "pulse", value dict {"start": start of the best member's
boxcar, "width": its width, "snr": its S/N, "channel": its channel, "sample":
start + (width - 1) // 2, the pulse centre, "members": peaks clustered}, and on
the message port "detects" one dict
{"pulses": vector of those dicts} per work call that closed events. No
candidates are made while a channel's statistics warm up (the first statistics
window of the "white" and "levels" modes).

Invalid parameters raise ValueError with the reason; an unusable backend
("cuda" without a GPU) raises RuntimeError.

Args:
    nchan: channels per item (1 = plain stream)
    algorithm: "boxdit", "igrid" or "ideal"
    widths: BoxDIT per-iteration maximum widths, even and >= 2, the last
        repeats ([32] = BD-32, [32, 16, 16, 16, 8] = AstroAccelerate's list)
    depth: IGRID depth 1..3
    layers: IGRID layers per step (power of two; 0 = 2^(depth+1))
    max_width: widest pulse searched, in samples
    threshold: candidate S/N threshold
    norm_mode: "white", "levels" or "fixed"
    reject_sigma: outlier rejection of the statistics in sigma (0 = none)
    window: samples per statistics window
    norm_history: statistics windows merged
    baseline_window: baseline removal window in samples (0 = none)
    baseline_mode: "median" (causal running median of the window) or "block"
        (median of the medians of its 16 blocks: cheaper, piecewise constant)
    fixed_mean: input mean of the "fixed" mode
    fixed_sigma: input sigma of the "fixed" mode (> 0)
    cluster_time: friends-of-friends: largest gap in samples between the
        boxcars of two peaks of one event (0: overlapping or touching)
    cluster_chan: friends-of-friends: largest channel distance (1: neighbouring
        channels merge, 0: channels independent)
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA samples per channel per batch (and output multiple)
    device_buffers: input in a CUDA device buffer (off by default; CUDA backend,
        float input, norm_mode "fixed" without baseline; share/doc/gr-transient/device-buffers.md)
    msg_format: "detects" messages: "dicts" (a dict per event, the default) or
        "vectors" (one uniform vector per field: start, width, snr, channel,
        sample, members; for dense events)

Raises ValueError on invalid parameters, RuntimeError if the backend cannot be
used.)doc";

static const char *__doc_gr_transient_boxcar_search_set_threshold = R"doc(
Candidate S/N threshold, from the next samples searched. ValueError unless
finite.)doc";

static const char *__doc_gr_transient_boxcar_search_threshold = R"doc(
Candidate S/N threshold in use.)doc";

static const char *__doc_gr_transient_boxcar_search_set_norm_mode = R"doc(
Normalisation mode "white", "levels" or "fixed"; restarts the search at the
next input sample (ValueError for another name).)doc";

static const char *__doc_gr_transient_boxcar_search_norm_mode = R"doc(
Normalisation mode in use.)doc";

static const char *__doc_gr_transient_boxcar_search_set_reject_sigma = R"doc(
Outlier rejection of the statistics at this many sigma (0 = none); restarts
the search at the next input sample. ValueError if negative or not finite.)doc";

static const char *__doc_gr_transient_boxcar_search_reject_sigma = R"doc(
Outlier rejection in use (sigma).)doc";

static const char *__doc_gr_transient_boxcar_search_set_window = R"doc(
Samples per statistics window; restarts the search at the next input sample.
ValueError when out of range.)doc";

static const char *__doc_gr_transient_boxcar_search_window = R"doc(
Samples per statistics window in use.)doc";

static const char *__doc_gr_transient_boxcar_search_set_baseline_window = R"doc(
Baseline window in samples (0 = no baseline removal, see set_baseline_mode); restarts
the search at the next input sample. ValueError when out of range.)doc";

static const char *__doc_gr_transient_boxcar_search_baseline_window = R"doc(
Baseline window in use (0 = none).)doc";

static const char *__doc_gr_transient_boxcar_search_set_baseline_mode = R"doc(
Baseline removal "median" (running median) or "block" (median of 16 block
medians); restarts the search when a baseline window is set. ValueError for
another name.)doc";

static const char *__doc_gr_transient_boxcar_search_baseline_mode = R"doc(
Baseline mode in use: "median" or "block".)doc";

static const char *__doc_gr_transient_boxcar_search_set_fixed_stats = R"doc(
Input mean and sigma of the "fixed" mode (sigma > 0); restarts the search when
that mode is in use.)doc";

static const char *__doc_gr_transient_boxcar_search_latency = R"doc(
Core latency L_end - 1 in samples.)doc";

static const char *__doc_gr_transient_boxcar_search_hold = R"doc(
Samples the block holds back at most: latency() plus the clustering horizon.)doc";

static const char *__doc_gr_transient_boxcar_search_lend = R"doc(
L_end: the widest evaluated boxcar.)doc";

static const char *__doc_gr_transient_boxcar_search_nchan = R"doc(
Channels per item.)doc";

static const char *__doc_gr_transient_boxcar_search_candidates = R"doc(
Candidates reported since start.)doc";

static const char *__doc_gr_transient_boxcar_search_nonfinite = R"doc(
Non-finite input samples replaced since start.)doc";

static const char *__doc_gr_transient_boxcar_search_warning = R"doc(
Warnings of the last search that ended (end of stream, or a restart by a
statistics setter), one line saying what was done; "" when there were none:
the stream ended inside the first statistics window (its statistics were
measured on the samples there were), it was shorter than L_end, or a
channel's first window had no usable statistics. Also logged as a warning.)doc";

static const char *__doc_gr_transient_boxcar_search_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";

static const char *__doc_gr_transient_boxcar_search_msg_format = R"doc(
The "detects" message format: "dicts" or "vectors" (make's msg_format).)doc";

static const char *__doc_gr_transient_boxcar_search_device_buffers = R"doc(
Whether the input is a device buffer (make's device_buffers; off by default).
See share/doc/gr-transient/device-buffers.md.)doc";
