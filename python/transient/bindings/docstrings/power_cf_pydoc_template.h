/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, transient, __VA_ARGS__)
/*
  Docstrings of the Python bindings of gnuradio/transient/power_cf.h. The build
  copies this template to power_cf_pydoc.h.
 */

static const char *__doc_gr_transient_power_cf = R"doc(
The squared magnitude of complex samples, computed by the CPU or a CUDA GPU.

The constructor (make) documents the block and its arguments.)doc";

static const char *__doc_gr_transient_power_cf_make = R"doc(
Make a power block.

Power |z|^2 = re^2 + im^2 of complex samples (vector streams of nchan), on the
CPU or a CUDA GPU, rounded the same way on both (no fused multiply-add). With
device_buffers=True (CUDA only, off by default) the output is a CUDA device
buffer that boxcar_search_ff(device_buffers=True) reads in place; a host
reader gets it copied. See share/doc/gr-transient/device-buffers.md.

Args:
    nchan: items per vector (1: a plain stream)
    backend: "auto", "cpu" or "cuda"
    device: CUDA device index
    batch: CUDA samples per channel per kernel launch
    device_buffers: output in a CUDA device buffer (off by default)

Raises ValueError on invalid parameters (device_buffers with backend "cpu"
included) and RuntimeError when the backend or the device buffers cannot be
used (no usable GPU).)doc";

static const char *__doc_gr_transient_power_cf_backend = R"doc(
Backend in use: "cpu" or "cuda".)doc";

static const char *__doc_gr_transient_power_cf_device_buffers = R"doc(
Whether the output is a device buffer.)doc";

static const char *__doc_gr_transient_power_cf_device_buffers_error = R"doc(
Why the device-buffer output was refused in the last run ("" if it was not):
more than one reader (fan-out) or a reader with history; the block then logs
the reason and ends its stream at once.)doc";

static const char *__doc_gr_transient_power_cf_nchan = R"doc(
Channels per item.)doc";
