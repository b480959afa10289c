#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
gr-transient: transient detectors for GNU Radio, on CPUs and NVIDIA GPUs.

Blocks:
    edge_localizer_f   IEEE Std 181 transition (edge) localizer; tags every
                       transition and reports it on the message port "detects".
    spiir_bank_fc, spiir_bank_cc
                       summed parallel IIR (SPIIR) matched-filter bank on a real
                       or complex stream: a vector of complex SNRs per sample,
                       triggers as "trigger" tags and on "detects".
    kalman_detector_ff optimal online detector of Gaussian bursts in coloured
                       Gaussian noise (Kalman bank); LLR, decision, "burst"
                       tags and "detects" messages.
    boxcar_search_ff   boxcar single-pulse search (BoxDIT, IGRID, ideal) per
    boxcar_search_cf   channel of a float (or complex: power) vector stream;
                       S/N and width outputs, "pulse" tags and "detects".
    filterbank_source  a SIGPROC filterbank file as a stream of spectra, its
                       header as tags (rx_rate, rx_freq, filterbank)
    dedisperse_ff      incoherent dedispersion: spectra in, DM trials out
    frb_search_f       FRB search of spectra (dedispersion, boxcar search,
                       candidates with DM, time, width, S/N on "detects")
    detections_to_pdu  the samples around each detection of the blocks above
                       (edges, boxcar, kalman) as gr-pdu PDUs on "pdus".

Helpers on numpy arrays (libtransient, no flowgraph needed):
    find_edges(x, low, mid, high, backend='cpu', variant='fast')
    estimate_state_levels(x, bins=100, tolerance_pct=10, mid_pct=50)
    edges_to_pulses(edges)
    spiir_filter(x, a1, b0, delay, level, counts, dt, multirate=False, ...)
    spiir_latency(a1, b0, delay, level, counts, dt)
    spiir_triggers(snr, threshold, window)
    spiir_autochisq(snr, sample, template, autocorr)
    boxcar_search(x, algorithm='boxdit', max_width=256, ...)
    boxcar_candidates(snr, width=None, threshold=6, link_time=0, link_chan=1, ...)
    boxcar_plan(algorithm, max_width, widths, depth, layers)
    boxcar_predict(algorithm, max_width, widths, depth, layers, smax=0, exact=False)
    boxcar_predict_list(widths, separations, smax, exact=False)
    psd_welch(x, rate, seglen), psd_from_file(path, rate, nfft, asd=True),
    psd_design(rate, nfft), psd_frequencies(rate, nfft)
    whiten(x, rate, psd, fmin=15, ...), Whitener(rate, psd, ...) (streaming)
    kalman_model_load(path)   a Kalman model file's A, K_k, Sigma_k
                              (kalman_detector_ff.save_model writes one)
    version(), cuda_compiled(), cuda_device_count()
    __version__        the module's version (also version(), libtransient's)
    edge_arrays(msg)   the transitions of an edge_localizer_f "detects" message
                       (either msg_format) as numpy arrays
    metric_arrays(msg), is_metrics(msg)
                       its IEEE 181 metrics messages (metrics=True)
    edge_metrics(x, low, mid, high, ...), edge_tie(times, ui=0, window=0)
                       IEEE 181 transition/pulse metrics and time-interval error
    spiir_trigger_arrays(msg)
                       the triggers of a spiir_bank_fc/cc "detects" message
                       (either msg_format) as numpy arrays
    pulse_arrays(msg)  the events of a boxcar_search_ff/cf "detects" message
                       (either msg_format) as numpy arrays

Pure-Python modules of the package are imported on their own:
    gnuradio.transient.sigrok        sigrok session files
    gnuradio.transient.spiir_design  SPIIR bank design from chirp templates (numpy)
    gnuradio.transient.spiir_bank    SPIIR banks and bank files (numpy)
    gnuradio.transient.spiir_templates  templates from arrays, files (.npy,
                                    text, HDF5) and lalsimulation; whitening
    gnuradio.transient.spiir_search  PSD, whitening, bank design, SNR,
                                    triggers and chi-square of strain
    gnuradio.transient.gw_strain     GWOSC HDF5 strain files
    gnuradio.transient.kalman_signals  Gaussian bursts in coloured noise (numpy)
    gnuradio.transient.kalman_ar     AR fits: Yule-Walker, Burg, AIC/BIC (numpy)
    gnuradio.transient.kalman_fit    the Kalman detector's models fitted from a
                                    recording, model files (numpy)
    gnuradio.transient.kalman_roc    the Kalman and energy detectors' ROC
    gnuradio.transient.timeseries   SIGPROC .tim/.fil and PRESTO .dat/.inf
                                    time series, folding and period checks
    gnuradio.transient.sigmf        SigMF metadata and data: reading, writing
                                    annotations
    gnuradio.transient.recordings   every recording format of transient-detect
                                    as a sample stream (format dispatch)
    gnuradio.transient.dispersed_pulse  a simulated SDR seeing dispersed
                                    pulses (Dispersed Pulse Source block)
    gnuradio.transient.frb_candidates  the candidate printer of the FRB
                                    examples
"""

# pybind11 generated symbols (blocks and core helpers)
try:
    # this fails only if the package was installed without its bindings
    from .transient_python import *
except ModuleNotFoundError:
    pass

from ._version import __version__
from .detections_pdu import detections_to_pdu
from .edge_messages import edge_arrays, is_metrics, metric_arrays
from .spiir_messages import spiir_trigger_arrays
from .boxcar_messages import pulse_arrays
