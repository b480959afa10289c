/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/spiir_bank_cc.h.
  The build copies this template to spiir_bank_cc_pydoc.h.
 */

static const char *__doc_gr_transient_spiir_bank_cc = R"doc(
Summed parallel IIR (SPIIR) matched-filter bank on a complex stream.

The constructor (make) documents the block: arguments, tags, messages.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_spiir_bank_cc = R"doc()doc";

static const char *__doc_gr_transient_spiir_bank_cc_make = R"doc(
Make a SPIIR bank block.

One output item per input sample: a vector of ntemplates() complex SNRs
z[k, t] = 2 dt sum_l y[k, l], y[k, l] = a1[l] y[k-1, l] + b0[l] x[k - d[l]].
The output is optional: without it the block is a sink that reports its
triggers on "detects" only.

Triggers (per template, the peak of every cluster of |z| > threshold; a cluster
ends window samples after its peak), each a dict {"template", "snr", "phase",
"time" (s, interpolated, latency removed), "sample" (absolute input sample of
the peak, offset - latency), "chisq" (only with autocorr)}, are tagged on the
peak's item (key "trigger"; with the output connected, which is then held back
by window samples so that every peak can be tagged) and published on the
message port "detects": msg_format "dicts" as {"triggers": vector of those
dicts}, "vectors" as one dict of uniform vectors per message ("sample" s64,
"time" f64, "template" u32, "snr", "phase" and "chisq" f32).

Chi-square: autocorr holds ntemplates x (2 half + 1) complex lags, template
after template, lag -half first and 1 at lag 0
(gnuradio.transient.spiir_search.autocorrelation of each template,
concatenated); each trigger then reports
chisq = sum_j |A[j] z[p] - z[p + j]|^2 / (2 n - sum_j |A[j]|^2) over the n
lags around its peak p. half <= window is required.

The bank comes from a bank file (share/doc/gr-transient/spiir.md; gnuradio.transient.spiir_bank
writes one) or from flat arrays a1, b0, delay, level, counts with samp_rate
(SpiirBank.arrays() gives them).

Args:
    bank_file: bank file; "" to give the bank as arrays
    a1: poles of every filter, template after template (|a1| < 1)
    b0: gains
    delay: delays in full-rate samples (>= 0)
    level: multirate levels (0 = full rate); empty = all 0
    counts: filters per template (each >= 1)
    samp_rate: sample rate in Hz (> 0 with arrays; 0 = the file's rate)
    threshold: trigger threshold on |SNR| (>= 0)
    window: samples after a peak that end its cluster (>= 1)
    multirate: run each filter at samp_rate / 2^level
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA: samples per device batch and output multiple
    msg_format: "dicts" or "vectors"
    autocorr: chi-square autocorrelations (flat, complex); empty: no chi-square

Raises:
    ValueError: invalid bank or parameters
    RuntimeError: unreadable bank file, or the backend cannot be used)doc";

static const char *__doc_gr_transient_spiir_bank_cc_set_threshold = R"doc(
Set the trigger threshold on |SNR| (from the next sample). Raises ValueError
unless finite and >= 0.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_threshold = R"doc(
Trigger threshold in use.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_window = R"doc(
Samples after a peak that end its cluster (and by which the output is held back).)doc";

static const char *__doc_gr_transient_spiir_bank_cc_ntemplates = R"doc(
Templates in the bank: the length of the output vectors.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_nfilters = R"doc(
Filters in the bank, all templates.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_samp_rate = R"doc(
Sample rate in Hz.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_latency = R"doc(
Samples by which the SNR lags the single-rate SNR (0 single-rate).)doc";

static const char *__doc_gr_transient_spiir_bank_cc_multirate = R"doc(
True when each filter runs at samp_rate / 2^level.)doc";

static const char *__doc_gr_transient_spiir_bank_cc_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";

static const char *__doc_gr_transient_spiir_bank_cc_msg_format = R"doc(
Message format of "detects": "dicts" or "vectors".)doc";

static const char *__doc_gr_transient_spiir_bank_cc_chisq_half = R"doc(
Chi-square half-width in lags (0: no chi-square).)doc";
