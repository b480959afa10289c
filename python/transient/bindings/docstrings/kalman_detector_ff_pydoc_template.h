/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/kalman_detector_ff.h.
  The build copies this template to kalman_detector_ff_pydoc.h.
 */

static const char *__doc_gr_transient_kalman_detector_ff = R"doc(
Kalman-bank detector (M offset hypotheses) of Gaussian bursts in coloured
Gaussian noise, optimal and online.

The constructor (make) documents the block: arguments, tags, messages.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_kalman_detector_ff = R"doc()doc";

static const char *__doc_gr_transient_kalman_detector_ff_make = R"doc(
Make a Kalman-bank detector block.

Output 0 is the log-likelihood ratio (LLR) per sample, optional output 1 the
decision (1.0 while LLR > threshold). Detections are tagged with key "burst"
(True on the first sample, False on the first sample after it, absolute
offsets) and, once finished, reported on the message port "detects" as
{"start", "end", "peak", "peak_llr", "onset"}.

Args:
    M: hypotheses (>= 3); the burst lasts M-1 samples
    Ns: hypotheses 1..Ns count as "present" (1 <= Ns < M)
    threshold: decision threshold on the LLR
    alpha: per-sample onset prior, 0 < alpha < 1
    noise_ar: noise AR coefficients (stable)
    noise_var: noise innovation variance (> 0)
    meas_var: white measurement noise variance (>= 0)
    target_ar: burst AR coefficients (stable)
    target_var: burst innovation variance at envelope 1 (> 0)
    envelope: "rect", "exp", "gauss" or "raised_cosine"
    env_param: "exp": decay constant, "gauss": width, in samples
    model_file: model file to load instead of designing ("" designs)
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA samples per device batch and output multiple

Raises ValueError on invalid parameters, RuntimeError when the model file cannot
be read or the backend cannot be used.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_save_model = R"doc(
Design a model from the parameters the constructor designs from (path, M,
noise_ar, noise_var, meas_var, target_ar, target_var, envelope, env_param)
and write it as a model file (tr_kalman_model_save), the file model_file
loads. gnuradio.transient.kalman_fit writes fitted models with it.

Raises ValueError on invalid parameters, RuntimeError when the file cannot be
written.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_set_threshold =
    R"doc(Set the decision threshold (from the next sample).)doc";

static const char *__doc_gr_transient_kalman_detector_ff_set_ns =
    R"doc(Set N_s, the hypotheses counted as present (1 <= Ns < M).)doc";

static const char *__doc_gr_transient_kalman_detector_ff_set_alpha =
    R"doc(Set the onset prior alpha (0 < alpha < 1).)doc";

static const char *__doc_gr_transient_kalman_detector_ff_threshold =
    R"doc(Decision threshold in use.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_ns = R"doc(N_s in use.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_alpha = R"doc(alpha in use.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_M =
    R"doc(Number of hypotheses M of the model.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_Q =
    R"doc(AR order Q of the model (state size 2Q).)doc";

static const char *__doc_gr_transient_kalman_detector_ff_nonfinite =
    R"doc(Non-finite input samples treated as missing so far.)doc";

static const char *__doc_gr_transient_kalman_detector_ff_backend =
    R"doc(Backend in use: "cpu" or "cuda".)doc";
