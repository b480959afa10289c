/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/edge_localizer_f.h.
  The build copies this template to edge_localizer_f_pydoc.h.
 */

static const char *__doc_gr_transient_edge_localizer_f = R"doc(
Edge localizer (IEEE Std 181): a tag and a "detects" entry per transition.

The constructor (make) documents the block: arguments, tags, messages.)doc";

static const char *__doc_gr_transient_edge_localizer_f_edge_localizer_f = R"doc()doc";

static const char *__doc_gr_transient_edge_localizer_f_make = R"doc(
Make an edge localizer block.

The samples pass through unchanged. Every transition gets a stream tag on the
first sample in the new state (key "edge", value dict {"time": float, the
interpolated absolute mid-crossing time (NaN if hidden by non-finite samples),
"polarity": +1 rising / -1 falling, "sample": absolute index of the tagged
sample}). For every work call that found transitions, the message port
"detects" publishes {"edges": vector of those dicts, oldest first}; with
msg_format="vectors" it publishes the same transitions as uniform vectors of
equal length instead, {"time": f64vector, "polarity": s8vector, "sample":
u64vector} (transient.edge_arrays(msg) gives numpy arrays for either format),
with no PMT per transition: for dense transitions.

The output is optional: left unconnected, the block consumes its input without
copying it and reports the transitions on "detects" only (tags need an output
stream); "sample" then counts input samples. The dicts are built only for what
is connected (tags, detects).

Fixed levels pass samples through with no delay. With auto levels the first
level_samples samples are held until the levels are estimated, so that they get
their tags too.

Args:
    auto_levels: False: fixed levels low/mid/high; True: estimate them
    low: fixed: upper boundary of the low state
    mid: fixed: mid reference level (low < mid < high)
    high: fixed: lower boundary of the high state
    tolerance_pct: auto: state boundaries in % of the amplitude, (0, 50)
    mid_pct: auto: mid reference in % of the amplitude
    hist_bins: auto: histogram bins (>= 2)
    level_samples: auto: samples per level estimate
    level_interval: auto: re-estimate every this many samples, 0 = never
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA: samples per device batch and output multiple
    msg_format: "detects" messages: "dicts" (a dict per transition) or
        "vectors" (uniform vectors per message)

Raises:
    ValueError: invalid parameters
    RuntimeError: the backend cannot be used (e.g. "cuda" without a GPU))doc";

static const char *__doc_gr_transient_edge_localizer_f_set_levels = R"doc(
Set the reference levels (from the next sample). Raises ValueError unless
low < mid < high.)doc";

static const char *__doc_gr_transient_edge_localizer_f_set_tolerance_pct = R"doc(
Set the auto-levels state boundary percentage (used by the next estimate).)doc";

static const char *__doc_gr_transient_edge_localizer_f_set_mid_pct = R"doc(
Set the auto-levels mid reference percentage (used by the next estimate).)doc";

static const char *__doc_gr_transient_edge_localizer_f_set_percentages = R"doc(
Set both auto-levels percentages at once (used by the next estimate).)doc";

static const char *__doc_gr_transient_edge_localizer_f_low = R"doc(
Lower reference level in use (NaN while auto levels are not estimated yet).)doc";

static const char *__doc_gr_transient_edge_localizer_f_mid = R"doc(
Mid reference level in use (NaN while auto levels are not estimated yet).)doc";

static const char *__doc_gr_transient_edge_localizer_f_high = R"doc(
Upper reference level in use (NaN while auto levels are not estimated yet).)doc";

static const char *__doc_gr_transient_edge_localizer_f_levels_known = R"doc(
True once reference levels are available (always with fixed levels).)doc";

static const char *__doc_gr_transient_edge_localizer_f_tolerance_pct = R"doc(
Auto-levels state boundary percentage.)doc";

static const char *__doc_gr_transient_edge_localizer_f_mid_pct = R"doc(
Auto-levels mid reference percentage.)doc";

static const char *__doc_gr_transient_edge_localizer_f_auto_levels = R"doc(
True when the levels are estimated from the signal.)doc";

static const char *__doc_gr_transient_edge_localizer_f_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";

static const char *__doc_gr_transient_edge_localizer_f_msg_format = R"doc(
Format of the "detects" messages: "dicts" or "vectors".)doc";
