#!/usr/bin/env python3
"""Write docs/performance.md and docs/plots/perf_*.png from bench/results/.

Every committed benchmark result (the JSON lines of `transient-bench --json`
and of the per-detector harnesses under bench/results/*/) is shown beside its
ceiling, the paper-design baseline measured in the same run, and the paper's
published number. Which file of a folder is the final one and which are
earlier runs or probes is decided by the folders' README.md files and written
down below in SOURCES; a result file that SOURCES does not name is still shown
(under "Files not yet classified") and reported on stderr.

Usage (numpy and matplotlib are needed for the plots only):

    /usr/bin/python3 scripts/perf_report.py             # docs/performance.md + docs/plots/perf_*.png
    /usr/bin/python3 scripts/perf_report.py --no-plots  # markdown only
    options: --results DIR  --doc FILE  --plots DIR

The output depends only on the input files: no timestamps, no absolute paths,
fixed plot styling.
"""
import argparse
import glob
import json
import math
import os
import re
import sys
from collections import namedtuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# --------------------------------------------------------------------------
# Which file is which (from each folder's README.md)
# --------------------------------------------------------------------------
FINAL, REPEAT, EARLIER, PROBE = "final", "repeat", "earlier", "probe"
SPIIR_WINDOW = "2026-11-27-h100-spiir-window"  # the current single-rate SPIIR run
DEDISP_FOLDER = "2026-11-26-h100-dedisp"

Source = namedtuple("Source", "folder file role reason labels cpu")

# FAST boxcar beside AstroAccelerate's SPDT (bench/tuning/boxcar_vs_aa.sh): folder,
# subfolder, role, what the run is; the first is the final one.
AA_KEYS_FOLDER = "2026-11-26-h200-boxcar-keys"
AA_FINAL_FOLDER = "2026-11-27-h100-boxcar-sparse-direct"
AA_RUNS = [
    (AA_FINAL_FOLDER, "", FINAL, "H100, commit b29bbc3 (sparse stages in a pass of their own, "
                                 "direct span loads, end tiles): "),
    (AA_FINAL_FOLDER, "step3/", EARLIER, "H100, commit 64dedcb (its third step): "),
    (AA_FINAL_FOLDER, "step2/", EARLIER, "H100, commit 103c57b (its second step): "),
    (AA_FINAL_FOLDER, "step1/", EARLIER, "H100, commit 809cbfc (its first step): "),
    ("2026-11-27-h100-boxcar-keyed-split", "", PROBE, "H100, commit 6bfce0a (packed keys in "
                                                      "the lane-shared stages, withdrawn): "),
    (AA_KEYS_FOLDER, "", EARLIER, "H200, commit 7f1d940 (packed keys, one LOP3 a boxcar; "
                                  "another GPU: compare ratios to SPDT, not rates): "),
    (AA_KEYS_FOLDER, "run1/", EARLIER, "H200, commit 446233f (packed keys, first form: two "
                                       "LOP3 a boxcar): "),
    (AA_KEYS_FOLDER, "run3/", EARLIER, "H200, commit fd4857d (tiles up to 16384, withdrawn): "),
    ("2026-11-26-h100-boxcar-vs-aa", "", EARLIER, "H100, commit cc86487 (before the packed "
                                                  "keys): "),
]
AA_SIZES = (("256x131072", "256 x 131072"), ("1024x262144", "1024 x 262144"))


def S(folder, file, role, reason, labels=None, cpu=None):
    """labels: names of the runs in the file, in order (for files whose runs
    carry no `note` line); cpu: CPU model from the README when the env line
    has none."""
    return Source(folder, file, role, reason, labels, cpu)


PIECE_FG_LABELS = ["1 channel, batch 1048576", "1 channel, batch 8388608",
                   "64 channels, batch 65536", "64 channels, batch 262144",
                   "1 channel, batch 1048576, a pulse every 1048576 samples"]

BLOCK_MSG_LABELS = ["FIXED, 1 channel, batch 1048576", "FIXED, 64 channels, batch 65536",
                    "WHITE, 1 channel, batch 1048576", "WHITE, 64 channels, batch 65536"]

AA_FIRST_IN_CALL = ("AstroAccelerate's SPDT and analysis step (its own kernels, device "
                    "data), first in the call of flowgraph_A/B.jsonl (the README compares "
                    "them)")


BLOCK_BATCH_LABELS = ["FIXED, 1 channel, batch 1048576", "FIXED, 1 channel, batch 4194304",
                      "FIXED, 64 channels, batch 65536", "WHITE, 1 channel, batch 1048576",
                      "WHITE, 1 channel, batch 4194304", "WHITE, 64 channels, batch 65536"]


def block_ab(folder, gpu, b, a, labels=BLOCK_MSG_LABELS, b_after=()):
    """The two trees of a block comparison (flowgraph_B.jsonl, flowgraph_A.jsonl):
    boxcar_search_ff without outputs, dense events, two rounds alternated in one
    call; b, a: (role, what the tree is); labels: the cases of one round;
    b_after: cases B ran once more after the rounds."""
    return [S(folder, "flowgraph_%s.jsonl" % t, role,
              "boxcar_search_ff CUDA without outputs, a pulse every 8192 samples, detects "
              "as vectors, %s; two rounds alternated with the other tree in one call (%s)"
              % (what, gpu),
              labels=labels + [l + ", second round" for l in labels] +
              (list(b_after) if t == "B" else []))
            for t, (role, what) in (("B", b), ("A", a))]


SOURCES = [
    # edge localizer
    S("2026-11-22-h100-edges", "bench_edges.jsonl", FINAL,
      "the edge localizer's own run (commit c8ab1ad, pipelined host path), 2^28 samples; "
      "docs/edges.md quotes it"),
    S("2026-11-22-h100-edges", "bench_edges_drops.jsonl", FINAL,
      "the same at 2^24 samples with NaN/Inf bursts (`--drops 0.05`)",
      labels=["2^24 samples, NaN/Inf bursts"]),
    S("2026-11-22-h100-spiir", "bench_edges.jsonl", REPEAT,
      "edges again in the SPIIR run (commit 95d2fe5; no edges code change since c8ab1ad)"),
    S("2026-11-22-h100-spiir", "bench_edges_drops.jsonl", REPEAT,
      "the NaN/Inf case again in the SPIIR run",
      labels=["2^24 samples, NaN/Inf bursts"]),
    S("2026-11-22-h100-spiir-triggers", "triggers.jsonl", FINAL,
      "the SPIIR trigger search alone (REFERENCE, FAST on 1-8 threads) and a model of the "
      "spiir_bank block's CUDA data path without GNU Radio (commit 7952bb3)"),
    S("2026-11-22-cpu-edges-block", "final_dense.jsonl", FINAL,
      "edge_localizer_f in a CPU flow graph on the 2-core development machine, a transition "
      "every 24-200 samples, the final block (commit eba8bd5), three runs",
      labels=["run 1", "run 2", "run 3"]),
    S("2026-11-22-cpu-edges-block", "final_sparse.jsonl", FINAL,
      "the same, a transition every 2e4-2e5 samples"),
    S("2026-11-22-cpu-edges-block", "before_dense.jsonl", EARLIER,
      "the block before the change (commit 7e32b8a) in the same benchmark binary"),
    S("2026-11-22-cpu-edges-block", "before_sparse.jsonl", EARLIER,
      "the block before the change (commit 7e32b8a), sparse transitions"),
    S("2026-11-22-cpu-edges-block", "after_dense.jsonl", EARLIER,
      "an intermediate block (before at most 2^20 samples per call without the output)"),
    S("2026-11-22-cpu-edges-block", "after_sparse.jsonl", EARLIER,
      "an intermediate block, sparse transitions"),
    # spiir_bank_fc, CUDA, in a flow graph (README: the committed code is overlap_2batch)
    S("2026-11-22-h100-spiir-block", "overlap_2batch.jsonl", FINAL,
      "spiir_bank_fc CUDA in the flow graph benchmark after the change (commit 62610b6: the "
      "core on a worker thread overlapped with the trigger search, dicts from dict cells), "
      "GNU Radio's 2-batch output buffer: the committed code; the README's table"),
    S("2026-11-22-h100-spiir-block", "nooverlap_2batch.jsonl", PROBE,
      "the same build with the overlap switched off"),
    S("2026-11-22-h100-spiir-block", "overlap_4batch.jsonl", PROBE,
      "the same build with a 4-batch output buffer (slower; not committed)"),
    S("2026-11-22-h100-spiir-block", "nooverlap_4batch.jsonl", PROBE,
      "4-batch output buffer, overlap off"),
    S("2026-11-22-h100-spiir-block", "overlap_4batch_unpinned.jsonl", PROBE,
      "4-batch output buffer, overlap on, GNU Radio buffers not page-locked (`--pin off`)"),
    S("2026-11-22-h100-spiir-block", "before_main.jsonl", EARLIER,
      "before: the CUDA spiir lines of the full flow graph run of main (commit aa06413), "
      "copied unchanged"),
    # frb_search_f in a flow graph beside tr_frb (transient-flowgraph-bench --detector frb)
    S("2026-11-26-h100-frb-flowgraph", "frb_flowgraph.jsonl", EARLIER,
      "frb_search_f (a sink) in the C++ flow graph benchmark beside tr_frb on the same "
      "spectra: 1024 channels, 64 us, DM 0-1000, CUDA (GNU Radio buffers page-locked and "
      "not) and CPU backends; the README's table"),
    # the merged tree on the H100: the boxcar search from host samples to candidates
    S("2026-11-26-h100-frb-search", "bench_boxcar.jsonl", FINAL,
      "the boxcar search through the core from host samples: host-to-host (per-window "
      "and one-launch paths) and host-to-candidates (peaks selected on the GPU, "
      "clustered on the host), 64 and 1 channels, FIXED and WHITE"),
    S("2026-11-26-h100-integration", "bench_boxcar.jsonl", EARLIER,
      "the same before the clustering moved to the host (one GPU thread walked the "
      "peaks); also the device chain (search + candidates on the device)"),
    # GNU Radio end to end: the first full run (the final one is FLOWGRAPH_FOLDER)
    S("2026-11-22-h100-flowgraph", "flowgraph.jsonl", EARLIER,
      "first full flow graph run of every detector (commit df7427d, before the boxcar host "
      "path, the SPIIR trigger threads and overlap, and the edge block's optional output)"),
    S("2026-11-22-h100-flowgraph", "flowgraph_extra.jsonl", EARLIER,
      "the same run: boxcar with FIXED statistics, edges with dense transitions",
      labels=["boxcar FIXED", "edges, dense transitions"]),
    S("2026-11-22-h100-flowgraph", "first/flowgraph.jsonl", EARLIER,
      "first run of the flow graph benchmark (1 s per case); it found the Kalman block's lost "
      "tail, fixed before the run above"),
    # boxcar search
    # FAST beside AstroAccelerate's SPDT: the final table is the H100 run of commit b29bbc3
    # (its step1/ .. step3/ the earlier steps of the same design); the H200 folder holds the
    # packed keys before it (commit 7f1d940, its run1/ and run3/ earlier steps), the H100
    # boxcar-vs-aa folder the first comparison (commit cc86487)
    *[S(folder, sub + "%s_%s.jsonl" % (kind, tag), role, why + what + ", " + label,
        labels=[label])
      for folder, sub, role, why in AA_RUNS
      for kind, what in (("kernels", "FAST through the CUDA context, data on the device"),
                         ("bench", "FAST through transient-bench (the search object)"),
                         ("aa", "AstroAccelerate's SPDT (../shared/peers/astroaccelerate)"))
      for tag, label in AA_SIZES],
    *[S("2026-11-27-h100-boxcar-keyed-split", "bench_%s_%s.jsonl" % (v, tag), PROBE,
        "transient-bench, FAST, %s, in the same call after the SPDT comparison, %s"
        % (what, label), labels=[label])
      for v, what in (("A", "commit f6c5d88 (before the keyed lane-shared stages)"),
                      ("B", "commit 6bfce0a (keyed lane-shared stages), again"))
      for tag, label in AA_SIZES],
    *[S(AA_FINAL_FOLDER, sub + "kernels_%s_%s.jsonl" % (v, tag), REPEAT,
        "kernel sweep of %s in the same call as the SPDT comparison, %s" % (what, label),
        labels=[label])
      for sub, v, what, sizes in (
          ("step1/", "A", "commit 1d65ff6 (before the sparse pass)", AA_SIZES),
          ("step1/", "B", "commit 809cbfc (the step's tree), again", AA_SIZES),
          ("step3/", "A", "commit 103c57b (before the step)", AA_SIZES),
          ("step3/", "C", "commit 64dedcb (the step's tree), again", AA_SIZES),
          ("", "A", "commit 64dedcb (before the last step)", AA_SIZES),
          ("", "C", "commit b29bbc3 (the final tree), again", AA_SIZES),
          ("", "A2", "commit 64dedcb, second sweep", AA_SIZES[:1]),
          ("", "C2", "commit b29bbc3, second sweep", AA_SIZES[:1]))
      for tag, label in sizes],
    *[S(AA_FINAL_FOLDER, "step1/bench_%s_%s.jsonl" % (v, tag), REPEAT,
        "transient-bench, FAST, %s, in the same call as the SPDT comparison, %s"
        % (what, label), labels=[label])
      for v, what in (("A", "commit 1d65ff6 (before the sparse pass)"),
                      ("B", "commit 809cbfc, again"))
      for tag, label in AA_SIZES],
    S("2026-11-22-h100-boxcar-fast", "final/kernels.jsonl", FINAL,
      "the committed FAST kernel (commit e2f99d1) against PAPER through the CUDA context, "
      "data on the device; the README's result table",
      labels=["256 x 131072", "1024 x 262144"]),
    S("2026-11-22-h100-boxcar-fast", "final/bench_boxcar.jsonl", FINAL,
      "transient-bench on the committed code (the search object, reset before each timed call)",
      labels=["default batch", "--batch 131072 --repeat 9"]),
    S("2026-11-22-h100-boxcar-fast", "v2/kernels.jsonl", EARLIER,
      "intermediate FAST kernel (commit ade9388)", labels=["256 x 131072"]),
    S("2026-11-22-h100-boxcar-fast", "v2/bench_boxcar.jsonl", EARLIER,
      "intermediate FAST kernel (commit ade9388)",
      labels=["default batch", "--batch 131072 --repeat 9"]),
    S("2026-11-22-h100-boxcar-fast", "probe/kernels.jsonl", PROBE,
      "first FAST kernel with its skewed shared-memory layout off and on (commit ca6a8a9)",
      labels=["256 x 131072"]),
    S("2026-11-22-h100-boxcar-fast", "probe/bench_boxcar.jsonl", PROBE,
      "first FAST kernel (commit ca6a8a9)",
      labels=["default batch", "--batch 131072 --repeat 9"]),
    S("2026-11-22-h100-boxcar", "kernels.jsonl", EARLIER,
      "first FAST kernel (commit 1f1b9a5), tiles 2048/4096/8192",
      labels=["256 x 131072", "1024 x 262144"]),
    S("2026-11-22-h100-boxcar", "bench_boxcar.jsonl", EARLIER,
      "first FAST kernel (commit 1f1b9a5) through transient-bench",
      labels=["default batch", "--batch 131072 --repeat 9"]),
    S("2026-11-22-h100-boxcar-host", "host_1ch.jsonl", FINAL,
      "the CUDA host path (tr_boxcar_process, host buffers) after the host-path work "
      "(commit 35f4178), 1 channel, calls of 2^20 samples, FIXED and WHITE, beside the "
      "former per-window path in the same run; the README's table",
      labels=["1 x batch 2^20"]),
    S("2026-11-22-h100-boxcar-host", "host_1ch_b4m.jsonl", FINAL,
      "the same, calls of 2^22 samples", labels=["1 x batch 2^22"]),
    S("2026-11-22-h100-boxcar-host", "host_64ch.jsonl", FINAL,
      "the same, 64 channels, calls of 2^16 samples per channel",
      labels=["64 x batch 2^16"]),
    S("2026-11-22-h100-boxcar-host", "first/host_1ch.jsonl", EARLIER,
      "first run (commit 141f75e): no normalisation threads, pageable buffers through the "
      "driver", labels=["1 x batch 2^20"]),
    S("2026-11-22-h100-boxcar-host", "first/host_1ch_b4m.jsonl", EARLIER,
      "first run (commit 141f75e), calls of 2^22 samples", labels=["1 x batch 2^22"]),
    S("2026-11-22-h100-boxcar-host", "first/host_64ch.jsonl", EARLIER,
      "first run (commit 141f75e), 64 channels", labels=["64 x batch 2^16"]),
    S("2026-11-22-h100-boxcar-block", "flowgraph_fixed.jsonl", FINAL,
      "boxcar_search_ff in the flow graph benchmark after its host path was made cheap per "
      "value (scan for peaks, search output straight into the output buffers), CUDA, FIXED "
      "statistics, 1 and 64 channels; the README's table (before: "
      "2026-11-22-h100-flowgraph); the same block code as 2026-11-26-h100-flowgraph"),
    S("2026-11-22-h100-boxcar-block", "flowgraph_white.jsonl", FINAL,
      "the same, WHITE statistics"),
    S("2026-11-22-h100-boxcar-block", "cpu_fixed.jsonl", FINAL,
      "the same block, CPU backend, FIXED, on the 2-core development machine (shared, noisy)",
      cpu="AMD EPYC (README)"),
    S("2026-11-22-h100-boxcar-block", "cpu_white.jsonl", FINAL,
      "the same block, CPU backend, WHITE, development machine", cpu="AMD EPYC (README)"),
    S("2026-11-22-host-boxcar-cpu", "bench_boxcar_cpu.jsonl", FINAL,
      "CPU variants, one core, 256 channels x 131072 samples, timed by thread CPU time "
      "(`--clock cpu`) on a shared host", labels=["256 x 131072"], cpu="AMD EPYC (README)"),
    S("2026-11-22-host-boxcar-cpu", "bench_boxcar_cpu_1ch.jsonl", FINAL,
      "CPU variants, one core, 1 channel x 4194304 samples, thread CPU time",
      labels=["1 x 4194304"], cpu="AMD EPYC (README)"),
    # SPIIR
    S("2026-11-22-h100-spiir-fast", "bench_spiir.jsonl", FINAL,
      "final SPIIR run (commit fea469e), default configuration, data on the device",
      labels=["single rate", "multirate step 4096", "multirate step 131072"]),
    S("2026-11-22-h100-spiir-fast", "segment0_bench_spiir.jsonl", FINAL,
      "same run with time segments off (`TR_SPIIR_CUDA_SEGMENT=0`), an option",
      labels=["single rate, segments off", "multirate step 131072, segments off"]),
    S("2026-11-22-h100-spiir-fast", "run1_bench_spiir.jsonl", EARLIER,
      "first run of the speed work (commit e66c130) with the kernel-shape comparisons"),
    S("2026-11-22-h100-spiir", "bench_spiir.jsonl", EARLIER,
      "first SPIIR run (commit 95d2fe5); the latest single-rate run with the CPU variants "
      "and host-to-host (later runs are `--device-only`)"),
    S("2026-11-22-h100-spiir-multirate", "bench_spiir_mr.jsonl", EARLIER,
      "multirate at commit 3a7de70, steps 4096 / 65536 / 131072; the latest multirate run "
      "with the CPU variants and host-to-host",
      labels=["step 4096", "step 65536", "step 131072"]),
    S("2026-11-22-h100-spiir-multirate", "bench_spiir_mr_run1_90eb964.jsonl", EARLIER,
      "multirate before the shape change (commit 90eb964)",
      labels=["step 4096", "step 65536"]),
    S("2026-11-22-h100-spiir-multirate", "bench_spiir_single.jsonl", REPEAT,
      "single rate after the multirate shape change, to check it left single rate unchanged"),
    S("2026-11-27-h100-spiir-kernel", "single_B_1.jsonl", EARLIER,
      "single rate, FAST and PAPER, after the reduce-scatter change (commit 40623a2, H100), "
      "built and run beside the tree before it and gstlal-spiir's harness in one call"),
    S("2026-11-27-h100-spiir-kernel", "single_B_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "single_A_1.jsonl", EARLIER,
      "single rate before the change (commit 6ed9c31), same call"),
    S("2026-11-27-h100-spiir-kernel", "single_A_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "mr_B_4096_1.jsonl", FINAL,
      "multirate at the default step of 4096 samples with the steps overlapped across "
      "streams (commit 40623a2, H100)"),
    S("2026-11-27-h100-spiir-kernel", "mr_B_4096_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "mr_B_131072_1.jsonl", FINAL, "multirate at step 131072 (commit 40623a2, H100)"),
    S("2026-11-27-h100-spiir-kernel", "mr_B_131072_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "mr_A_4096_1.jsonl", EARLIER, "multirate at step 4096 before (commit 6ed9c31), "
      "same call"),
    S("2026-11-27-h100-spiir-kernel", "mr_A_4096_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "mr_A_131072_1.jsonl", EARLIER, "multirate at step 131072 before (commit "
      "6ed9c31), same call"),
    S("2026-11-27-h100-spiir-kernel", "mr_A_131072_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "sharedb0_off.jsonl", PROBE,
      "another call: single rate at commit 0de940f (the reduce-scatter change alone)"),
    S("2026-11-27-h100-spiir-kernel", "sharedb0_on.jsonl", PROBE,
      "the same call: b0 in shared memory at 4 warps per scheduler, tried and withdrawn "
      "(slower: the kernel is bound by L1 wavefronts)"),
    S("2026-11-27-h100-spiir-kernel", "texture/single_tex0_1.jsonl", PROBE,
      "another call: single rate, load/store path (a build of commit 0145fe0)"),
    S("2026-11-27-h100-spiir-kernel", "texture/single_tex0_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "texture/single_tex1_1.jsonl", PROBE,
      "the same call: half of the samples through the texture path, tried and withdrawn"),
    S("2026-11-27-h100-spiir-kernel", "texture/single_tex1_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h100-spiir-kernel", "spiir_peer.jsonl", REPEAT, "gstlal-spiir's harness in the call of the "
      "single_* and mr_* files"),
    S("2026-11-27-h200-spiir-chunks", "single_A_1.jsonl", PROBE,
      "another call, on an H200: single rate at commit af59b39, beside the time-chunk trial"),
    S("2026-11-27-h200-spiir-chunks", "single_A_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "single_B_1.jsonl", PROBE,
      "the same call: whole batches in time chunks (commit 0409136), tried and withdrawn "
      "(no faster: the kernel is bound by L1 wavefronts, not by its last wave)"),
    S("2026-11-27-h200-spiir-chunks", "single_B_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "single_B0_1.jsonl", PROBE,
      "the same call and binary with the chunks off"),
    S("2026-11-27-h200-spiir-chunks", "single_B0_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "single_C_1.jsonl", PROBE,
      "the same call: chunks with a plain line pointer"),
    S("2026-11-27-h200-spiir-chunks", "single_C_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "mr_A_4096_1.jsonl", PROBE,
      "the same call: multirate at step 4096, commit af59b39 (H200)"),
    S("2026-11-27-h200-spiir-chunks", "mr_A_4096_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "mr_B_4096_1.jsonl", PROBE,
      "the same call: multirate with time chunks (7 % slower)"),
    S("2026-11-27-h200-spiir-chunks", "mr_B_4096_2.jsonl", PROBE, "the same, second run"),
    S("2026-11-27-h200-spiir-chunks", "spiir_peer.jsonl", PROBE,
      "gstlal-spiir's harness in the same call"),
    S(SPIIR_WINDOW, "single_W_1.jsonl", FINAL,
      "single rate, FAST and PAPER, with one-warp templates reading a shared-memory window "
      "(commit 2081111, H100), beside the global kernel and gstlal-spiir's harness in one "
      "call", labels=["single rate"]),
    S(SPIIR_WINDOW, "single_W_2.jsonl", REPEAT, "the same, run 2"),
    S(SPIIR_WINDOW, "single_W_3.jsonl", REPEAT, "the same, run 3"),
    S(SPIIR_WINDOW, "single_W256_1.jsonl", PROBE,
      "the same call and binary, window refilled every 256 samples, run 1"),
    S(SPIIR_WINDOW, "single_W256_2.jsonl", PROBE,
      "the same call and binary, window refilled every 256 samples, run 2"),
    S(SPIIR_WINDOW, "single_W256_3.jsonl", PROBE,
      "the same call and binary, window refilled every 256 samples, run 3"),
    S(SPIIR_WINDOW, "single_G_1.jsonl", EARLIER,
      "the same call and binary with the global kernel (`TR_SPIIR_CUDA_WINDOW=0`), run 1"),
    S(SPIIR_WINDOW, "single_G_2.jsonl", EARLIER,
      "the same call and binary with the global kernel (`TR_SPIIR_CUDA_WINDOW=0`), run 2"),
    S(SPIIR_WINDOW, "single_G_3.jsonl", EARLIER,
      "the same call and binary with the global kernel (`TR_SPIIR_CUDA_WINDOW=0`), run 3"),
    S(SPIIR_WINDOW, "single_V_1.jsonl", PROBE,
      "the same call: the window kernel's first form (plain copies every 256 samples), "
      "run 1"),
    S(SPIIR_WINDOW, "single_V_2.jsonl", PROBE,
      "the same call: the window kernel's first form (plain copies every 256 samples), "
      "run 2"),
    S(SPIIR_WINDOW, "single_V_3.jsonl", PROBE,
      "the same call: the window kernel's first form (plain copies every 256 samples), "
      "run 3"),
    S(SPIIR_WINDOW, "mr_W_4096_1.jsonl", REPEAT,
      "multirate at step 4096 in the same call, with the window kernel available (no level uses it), run 1"),
    S(SPIIR_WINDOW, "mr_W_4096_2.jsonl", REPEAT,
      "multirate at step 4096 in the same call, with the window kernel available (no level uses it), run 2"),
    S(SPIIR_WINDOW, "mr_G_4096_1.jsonl", REPEAT,
      "multirate at step 4096 in the same call, with the global kernel, run 1"),
    S(SPIIR_WINDOW, "mr_G_4096_2.jsonl", REPEAT,
      "multirate at step 4096 in the same call, with the global kernel, run 2"),
    S(SPIIR_WINDOW, "spiir_peer.jsonl", REPEAT,
      "gstlal-spiir's harness in the call of the single_* and mr_* files"),
    S("2026-11-27-h200-spiir-window", "single_W_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_W_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_W_3.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_W256_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_W256_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_W256_3.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_G_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_G_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_G_3.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_V_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_V_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "single_V_3.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "mr_W_4096_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "mr_W_4096_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "mr_G_4096_1.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "mr_G_4096_2.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200-spiir-window", "spiir_peer.jsonl", PROBE, "another call, on an H200 (its README)"),
    S("2026-11-27-h200x2-frb-devices", "bench_spiir.jsonl", REPEAT,
      "single rate again on an H200 (commit 19f2757), data on the device"),
    S("2026-11-27-h200x2-frb-devices", "bench_spiir_triggers.jsonl", FINAL,
      "the trigger search on the device (commit 19f2757, H200): the scan alone, the filter "
      "alone, filter + device scan, filter + SNR down + CPU scan; 256 and 1024 templates",
      labels=["256 templates, CPU scan", "256 templates, device paths",
              "1024 templates, CPU scan", "1024 templates, device paths"]),
    S("2026-11-27-h200-blocks-spiir-mr", "bench_spiir_mr.jsonl", FINAL,
      "multirate with the levels' kernels on whole batches (commit c4b711b, H200), steps "
      "131072, 4096, 131072", labels=["step 131072", "step 4096", "step 131072, again"]),
    S("2026-11-27-h200-blocks-spiir-mr", "bench_spiir.jsonl", REPEAT,
      "single rate in the same call as gstlal-spiir's harness (H200, commit c4b711b)"),
    S("2026-11-27-h200-blocks-spiir-mr", "flowgraph_boxcar.jsonl", FINAL,
      "boxcar_search_ff CUDA in the flow graph benchmark, with and without its outputs, "
      "WHITE and FIXED, 1 and 64 channels (commit c4b711b, H200; WHITE stopped at its "
      "core line without outputs, fixed in the next commit)",
      labels=["WHITE", "FIXED"]),
    S("2026-11-27-h200-blocks-spiir-mr", "flowgraph_spiir.jsonl", REPEAT,
      "spiir_bank_fc CUDA in the flow graph benchmark (commit c4b711b, H200)"),
    S("2026-11-27-h200x2-frb-scrunch", "flowgraph_spiir.jsonl", FINAL,
      "spiir_bank_fc CUDA in the flow graph benchmark with the SNR output and as a sink "
      "(triggers searched on the GPU, and on the host for comparison), detects as dicts "
      "(commit 2a6ae97, H200)"),
    S("2026-11-27-h200x2-frb-scrunch", "flowgraph_spiir_vectors.jsonl", FINAL,
      "the same sink with detects as vectors (`--spiir-output none --spiir-msg vectors`)"),
    S("2026-11-27-h200x2-frb-scrunch", "flowgraph_boxcar_white.jsonl", FINAL,
      "boxcar_search_ff CUDA without outputs, WHITE statistics, 1 and 64 channels (commit "
      "2a6ae97, H200)"),
    S("2026-11-27-h200x2-frb-scrunch", "bench_dedisp.jsonl", REPEAT,
      "the CUDA dedispersion on an H200 without and with time scrunching (commit 2a6ae97): "
      "random spectra, then the synthetic file",
      labels=["full rate", "scrunched", "file, full rate", "file, scrunched"]),
    S("2026-11-27-h100-frb-dedisp-shapes", "bench_dedisp_shapes.jsonl", PROBE,
      "the CUDA dedispersion's sum-kernel shapes 0-5 of commit 0b41fbe on an H100 "
      "(`TR_DEDISP_CUDA_SHAPE`); shape 5 became the default",
      labels=["shape 0", "shape 1", "shape 2", "shape 3", "shape 4", "shape 5"]),
    S("2026-11-27-h100-final", "flowgraph_frb.jsonl", FINAL,
      "frb_search_f (a sink) in the C++ flow graph benchmark beside tr_frb, CUDA (GNU "
      "Radio buffers page-locked) and CPU, the final tree (commit 714c0d4, H100)"),
    *[S("2026-11-27-cpu-boxcar-msg-vectors", "spacing%d_%s_%d.jsonl" % (sp, f, r),
        FINAL if r == 1 else REPEAT,
        "boxcar_search_ff CPU backend without outputs, detects as %s, a pulse every %d "
        "samples (development machine)%s" % (f, sp, "" if r == 1 else ", second round"),
        cpu="AMD EPYC")
      for sp in (512, 8192) for f in ("dicts", "vectors") for r in (1, 2)],
    S("2026-11-27-h100-boxcar-block-pipelined", "flowgraph_B_peer_call.jsonl", REPEAT,
      "the block of commit 7337401 again, in one call after AstroAccelerate's own kernels "
      "(peer/aa_spd.jsonl; the README compares them)", labels=BLOCK_MSG_LABELS),
    S("2026-11-27-h100-boxcar-block-pipelined", "peer/aa_spd.jsonl", REPEAT,
      "AstroAccelerate's SPDT and analysis step (its own kernels, device data) in the call "
      "of flowgraph_B_peer_call.jsonl"),
    *block_ab("2026-11-27-h100-boxcar-block-pipelined", "H100",
              (EARLIER, "commit 7337401: the pipelined search (a call's last piece "
                        "clustered beside the next call's search), one channel's peaks "
                        "clustered in runs, one channel searched in place, the selection "
                        "in one round trip"),
              (EARLIER, "commit fab407f, the tree before those changes")),
    S("2026-11-27-h200-boxcar-block-deferred", "peer/aa_spd.jsonl", REPEAT, AA_FIRST_IN_CALL),
    *block_ab("2026-11-27-h200-boxcar-block-deferred", "H200",
              (EARLIER, "commit 71389f9: the device statistics with the window's values in "
                        "registers and no host waits, a pipelined call's last piece searched "
                        "with the next call"),
              (REPEAT, "commit 7337401 (the final tree of "
                       "2026-11-27-h100-boxcar-block-pipelined) again")),
    S("2026-11-27-h200-boxcar-select-votes", "peer/aa_spd.jsonl", REPEAT, AA_FIRST_IN_CALL),
    *block_ab("2026-11-27-h200-boxcar-select-votes", "H200",
              (EARLIER, "commit 0d4eb0b: the selection's write kernel by warp votes"),
              (REPEAT, "commit 71389f9 (the final tree of "
                       "2026-11-27-h200-boxcar-block-deferred) again")),
    S("2026-11-28-h200-boxcar-block-aligned", "peer/aa_spd.jsonl", REPEAT, AA_FIRST_IN_CALL),
    *block_ab("2026-11-28-h200-boxcar-block-aligned", "H200",
              (EARLIER, "commit bfd0715: the block's core calls aligned to its batch, the "
                        "device statistics in fewer launches; the flow graph as long as "
                        "its core line (commit 9ea478d)"),
              (REPEAT, "commit 0d4eb0b (the final tree of "
                       "2026-11-27-h200-boxcar-select-votes) with the bench of commit "
                       "9ea478d"),
              labels=BLOCK_BATCH_LABELS,
              b_after=["FIXED, 64 channels, batch 262144", "WHITE, 64 channels, batch 262144"]),
    S("2026-11-28-h200-boxcar-block-runs", "peer/aa_spd.jsonl", REPEAT, AA_FIRST_IN_CALL),
    *block_ab("2026-11-28-h200-boxcar-block-runs", "H200",
              (EARLIER, "commit 4e54264: one channel's peaks merged into runs on the device"),
              (REPEAT, "commit bfd0715 (the final tree of "
                       "2026-11-28-h200-boxcar-block-aligned) again"),
              labels=BLOCK_BATCH_LABELS),
    S("2026-11-28-h100-boxcar-block-final", "peer/aa_spd.jsonl", REPEAT, AA_FIRST_IN_CALL),
    *block_ab("2026-11-28-h100-boxcar-block-final", "H100",
              (FINAL, "commit 74d8256: the pipeline's own buffers without the wait for the "
                      "caller's stream, the device tables read in place"),
              (REPEAT, "commit 4e54264 (the final tree of "
                       "2026-11-28-h200-boxcar-block-runs) on an H100"),
              labels=BLOCK_BATCH_LABELS),
    *[S("2026-11-27-h100-boxcar-block-vectors", "flowgraph_boxcar_%s.jsonl" % m, EARLIER,
        "boxcar_search_ff CUDA without outputs, a pulse every 8192 samples, detects messages "
        "%s (commit fab407f: the FAST kernel after the sparse pass, H100)" % what,
        labels=BLOCK_MSG_LABELS)
      for m, what in (("dicts", "as one PMT dict per event"),
                      ("vectors", "as one dict of uniform vectors per message"))],
    S("2026-11-27-h100-boxcar-pieces-overlap", "flowgraph_boxcar_fixed.jsonl", EARLIER,
      "boxcar_search_ff CUDA without outputs, FIXED, after the host-to-candidates pieces "
      "searched beside the clustering of the one before (commit 2e7d380, H100)",
      labels=PIECE_FG_LABELS),
    S("2026-11-27-h100-boxcar-pieces-overlap", "flowgraph_boxcar_white.jsonl", EARLIER,
      "the same with WHITE statistics (commit 2e7d380, H100)", labels=PIECE_FG_LABELS),
    *[S("2026-11-27-h100-boxcar-pieces-overlap", "hc_%s_%d_%d.jsonl" % (v, ch, b), role, what % (ch, b))
      for v, role, what in (
          ("B", FINAL, "host to candidates (`transient-bench --host-candidates`), %d "
                       "channel(s), batch %d, pieces searched beside the clustering of "
                       "the one before (commit 2e7d380, H100), beside the tree before it "
                       "in one call"),
          ("A", EARLIER, "the same before the change (commit b52dbe7, `--host-path`), "
                         "%d channel(s), batch %d, same call"))
      for ch, b in ((1, 1048576), (1, 8388608), (64, 65536), (64, 262144))],
    *[S("2026-11-27-h100-boxcar-pieces-overlap", "piece_sweep/piece_%d_%d_%d.jsonl" % (pv, ch, b), PROBE,
        "host to candidates with pieces of %d values one after another (an intermediate "
        "tree: pieces of 2^20 values by default, no clustering beside the search), %d "
        "channel(s), batch %d (H100)" % (pv, ch, b))
      for pv in (262144, 524288, 2097152, 4194304)
      for ch, b in ((1, 1048576), (1, 8388608), (64, 65536), (64, 262144))],
    S("2026-11-27-h100-boxcar-pieces-overlap", "block_whole_calls/flowgraph_boxcar_fixed.jsonl", PROBE,
      "the block handing its whole input to the core in one call (tried, withdrawn), FIXED "
      "(H100)", labels=["64 channels, batch 65536", "64 channels, batch 262144",
                        "1 channel, batch 8388608",
                        "1 channel, batch 1048576, a pulse every 1048576 samples"]),
    S("2026-11-27-h100-boxcar-pieces-overlap", "block_whole_calls/flowgraph_boxcar_white.jsonl", PROBE,
      "the same, WHITE (H100)", labels=["64 channels, batch 65536"]),
    S("2026-11-27-h100-boxcar-block-ready-runs", "flowgraph_boxcar_white.jsonl", EARLIER,
      "boxcar_search_ff CUDA without outputs, WHITE, after the device clustering by runs "
      "of ready windows (commit b6856bb, H100)",
      labels=["1 channel, batch 1048576", "1 channel, batch 8388608",
              "64 channels, batch 65536", "64 channels, batch 262144"]),
    S("2026-11-27-h100-boxcar-block-ready-runs", "flowgraph_boxcar_fixed.jsonl", EARLIER,
      "the same with FIXED statistics (commit b6856bb, H100)",
      labels=["1 channel, batch 1048576", "1 channel, batch 8388608",
              "64 channels, batch 65536", "64 channels, batch 262144"]),
    S("2026-11-27-h100-blocks-final", "flowgraph_boxcar_fixed.jsonl", EARLIER,
      "boxcar_search_ff CUDA without outputs (candidates on the device), FIXED, in the "
      "flow graph benchmark beside its core (commit e6fdcf7, H100)",
      labels=["1 channel, batch 1048576", "1 channel, batch 8388608",
              "64 channels, batch 65536", "64 channels, batch 262144"]),
    S("2026-11-27-h100-blocks-final", "flowgraph_boxcar_white.jsonl", EARLIER,
      "the same with WHITE statistics, measured on the device with window 0 held "
      "(commit e6fdcf7, H100)",
      labels=["1 channel, batch 1048576", "1 channel, batch 8388608",
              "64 channels, batch 65536", "64 channels, batch 262144"]),
    S("2026-11-27-h100-blocks-final", "flowgraph_spiir_vectors.jsonl", FINAL,
      "spiir_bank_fc CUDA as a sink, detects as vectors, triggers on the device and on the "
      "host (commit e6fdcf7, H100), two runs", labels=["run 1", "run 2"]),
    S("2026-11-27-h100-blocks-final", "flowgraph_spiir_dicts.jsonl", FINAL,
      "the same with detects as dicts (commit e6fdcf7, H100)"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_B_64_1.jsonl", EARLIER,
      "the boxcar host paths (`transient-bench --host-path`), 64 channels, after the "
      "two-slot stage (commit e6fdcf7), beside the tree before it in one call"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_B_64_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_B_1_1.jsonl", EARLIER, "the same, 1 channel"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_B_1_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_A_64_1.jsonl", EARLIER,
      "64 channels before the two-slot stage (commit 248a92d), same call"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_A_64_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_A_1_1.jsonl", EARLIER,
      "1 channel before the two-slot stage (commit 248a92d), same call"),
    S("2026-11-27-h100-blocks-final", "host_paths/host_A_1_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h100-boxcar-ready-runs", "host_B_64_1.jsonl", EARLIER,
      "the boxcar host paths, 64 channels, with runs of ready statistics windows given to "
      "the device clustering as one part (commit 0aa7a03, H100), beside the tree before "
      "it in one call"),
    *[S("2026-11-27-h100-boxcar-ready-runs", "host_%s_%s_%d.jsonl" % (v, ch, r), role,
        what)
      for v, ch, r, role, what in (
          ("B", 64, 2, REPEAT, "the same, second run"),
          ("B", 64, 3, REPEAT, "the same, third run"),
          ("B", 1, 1, EARLIER, "the same, 1 channel"),
          ("B", 1, 2, REPEAT, "the same, second run"),
          ("B", 1, 3, REPEAT, "the same, third run"),
          ("A", 64, 1, EARLIER, "64 channels before the change (commit b2acb3e, H100), same "
                                "call"),
          ("A", 64, 2, REPEAT, "the same, second run"),
          ("A", 64, 3, REPEAT, "the same, third run"),
          ("A", 1, 1, EARLIER, "1 channel before the change (commit b2acb3e, H100), same call"),
          ("A", 1, 2, REPEAT, "the same, second run"),
          ("A", 1, 3, REPEAT, "the same, third run"))],
    S("2026-11-27-h100-boxcar-norm-launches", "host_B_64_1.jsonl", EARLIER,
      "the boxcar host paths, 64 channels, with a call's whole windows set and cleaned in "
      "one launch each (commit b201dda, H100), beside the tree before it in one call"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_B_64_2.jsonl", REPEAT,
      "the same, second run"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_B_1_1.jsonl", EARLIER,
      "the same, 1 channel"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_B_1_2.jsonl", REPEAT,
      "the same, second run"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_A_64_1.jsonl", EARLIER,
      "64 channels before the change (commit 0352d11, H100), same call"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_A_64_2.jsonl", REPEAT,
      "the same, second run"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_A_1_1.jsonl", EARLIER,
      "1 channel before the change (commit 0352d11, H100), same call"),
    S("2026-11-27-h100-boxcar-norm-launches", "host_A_1_2.jsonl", REPEAT,
      "the same, second run"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_B_64_1.jsonl", EARLIER,
      "the boxcar host paths, 64 channels, with a call's whole statistics windows "
      "summarised in one launch (commit 4597299, H200), beside the tree before it in "
      "one call"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_B_64_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_B_1_1.jsonl", EARLIER, "the same, 1 channel"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_B_1_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_A_64_1.jsonl", EARLIER,
      "64 channels before the change (commit bf21a18, H200), same call"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_A_64_2.jsonl", REPEAT, "the same, second run"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_A_1_1.jsonl", EARLIER,
      "1 channel before the change (commit bf21a18, H200), same call"),
    S("2026-11-27-h200-boxcar-norm-batch", "host_A_1_2.jsonl", REPEAT, "the same, second run"),
    # Kalman
    S("2026-11-22-h100-kalman-fast", "kalman_gpu_bench.jsonl", FINAL,
      "second (final) run of the faster CUDA FAST, bench/tuning/kalman_gpu_bench.c, 2^20-sample "
      "batches; the README's result table"),
    S("2026-11-22-h100-kalman-fast", "bench_kalman.jsonl", FINAL,
      "transient-bench on the final code, default batch 65536", labels=["batch 65536"]),
    S("2026-11-22-h100-kalman-fast", "bench_kalman_batch1m.jsonl", FINAL,
      "transient-bench on the final code, `--batch 1048576`", labels=["batch 1048576"]),
    S("2026-11-22-h100-kalman-fast", "kalman_gpu_bench_run1.jsonl", EARLIER,
      "first run of the faster CUDA FAST"),
    S("2026-11-22-h100-kalman-fast", "bench_kalman_run1.jsonl", EARLIER,
      "first run of the faster CUDA FAST", labels=["batch 65536"]),
    S("2026-11-22-h100-kalman-fast", "bench_kalman_batch1m_run1.jsonl", EARLIER,
      "first run of the faster CUDA FAST", labels=["batch 1048576"]),
    S("2026-11-22-h100-kalman", "kalman_gpu_bench.jsonl", EARLIER,
      "first Kalman GPU results (second run there)"),
    S("2026-11-22-h100-kalman", "kalman_gpu_bench_run1.jsonl", EARLIER,
      "first Kalman GPU results (first run there)"),
    S("2026-11-22-h100-kalman", "bench_kalman.jsonl", EARLIER,
      "first Kalman GPU results, transient-bench (two streams at every M)",
      labels=["batch 65536"]),
    S("2026-11-22-h100-kalman", "bench_kalman_run1.jsonl", EARLIER,
      "first Kalman GPU results, transient-bench, first run", labels=["batch 65536"]),
    # dedispersion (bench/results/2026-11-26-h100-dedisp/README.md)
    S(DEDISP_FOLDER, "bench_dedisp.jsonl", FINAL,
      "transient-bench --detector dedisp: random 8-bit spectra, Heimdall's synthetic header"),
    S(DEDISP_FOLDER, "bench_dedisp_files.jsonl", FINAL,
      "transient-bench --detector dedisp --file: Heimdall's synthetic file and 29.fil, "
      "without and with zero-DM", labels=["synth.fil", "29.fil", "synth.fil, zero-DM",
                                          "29.fil, zero-DM"]),
    S(DEDISP_FOLDER, "heimdall.jsonl", FINAL,
      "Heimdall (peers/heimdall/run.sh, REPS=3) in the same run: per-file wall and stage timers"),
    S(DEDISP_FOLDER, "first/bench_dedisp.jsonl", EARLIER,
      "first kernel (8 trials x 512 outputs per block, whole staging window), Heimdall not run"),
    S(DEDISP_FOLDER, "first/bench_dedisp_files.jsonl", EARLIER,
      "first kernel on the files", labels=["synth.fil", "29.fil", "synth.fil, zero-DM",
                                           "29.fil, zero-DM"]),
]

# Folders with no benchmark JSON (test logs only).
NO_BENCH = {
    "2026-11-22-h100-gpu-tests-merged": "GPU tests of the merged tree (ctest log only)",
    "2026-11-26-soak": "memory of each detector block over 2e9 samples (bench/soak.sh), "
                       "not a speed benchmark",
    "2026-11-26-h200-gpu-tests": "GPU tests of the merged tree on an H200 (ctest log, "
                                 "compute-sanitizer summary); the call ended at its time "
                                 "limit before its benchmarks",
}

# Folders that compare two builds of the same benchmarks run in alternation
# (scripts/gpu_compare.sh): shown as their B/A table (compare.jsonl of
# scripts/bench_compare.py), not file by file.
COMPARISONS = {
    "2026-11-26-h100-layout": "main before the restructuring of the tree (A, 915373b) "
                              "against the restructured tree (B, bb2d967), three rounds",
}

# The GNU Radio end-to-end results: every *.jsonl of this folder is final
# (earlier runs are in SOURCES). Files named in FLOWGRAPH_FURTHER are further
# runs (file -> (tag, what)): shown and judged like the others, their target
# rows marked with the tag (and the run's number where a file holds several).
FLOWGRAPH_FOLDER = "2026-11-26-h100-flowgraph"
FLOWGRAPH_FURTHER = {
    "spiir_cpu_repeats.jsonl": ("repeat", "SPIIR on the CPU, three more processes"),
    "spiir_cuda_repeat.jsonl": ("repeat", "SPIIR on CUDA, one more process"),
    "edges_msg_dense.jsonl": ("commit 8fcbf09", "edges without the output, a transition every "
                              "24-200 samples, detects as dicts and as vectors (commit 8fcbf09)"),
    "edges_msg_sparse.jsonl": ("commit 8fcbf09", "edges on CUDA without the output, a "
                               "transition every 2e4-2e5 samples, detects as vectors "
                               "(commit 8fcbf09)"),
}

ROLE_ORDER = {FINAL: 0, REPEAT: 1, EARLIER: 2, PROBE: 3}

# --------------------------------------------------------------------------
# The papers' published numbers (/work/shared/papers, cited per detector)
# --------------------------------------------------------------------------
# Edge localizer (Barford et al.), Table III: 7,000,000 samples.
EDGES_PUB_GPU = 7.0e6 / 15.99e-3   # GTX 480
EDGES_PUB_CPU = 7.0e6 / 108.55e-3  # serial CPU code
# Boxcar (Adamek & Armour), section 5: SKA-like data (6000 DM trials at 64 us)
# processed this many times faster than real time on a Titan V (P100).
SKA_SAMPLES_PER_S = 6000 / 64e-6
BOXCAR_PUB_REALTIME = {"BD-32": (106, 33), "IG(1)": (500, 266)}
# SPIIR (Guo et al.), Table 2: New Kernel over one CPU core, 4096 templates,
# GTX 980; Table 3: multirate 104x to 121x.
SPIIR_PUB_SPEEDUP = {512: 123.97, 8: 70.62}
SPIIR_PUB_MULTIRATE = (104, 121)
# Kalman bank (the paper's Fig. 4): best published rate per M (samples/s).
KALMAN_PUB = {92: 15625.0, 10756: 3597.0}


# --------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------
Run = namedtuple("Run", "label note env rows")


def read_jsonl(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                out.append(json.loads(line))
            except ValueError as e:
                # C printf writes non-finite doubles as inf/nan, which JSON lacks.
                fixed = re.sub(r'(?<=[:\[,])(-?)inf\b', r'\1Infinity', line)
                fixed = re.sub(r'(?<=[:\[,])-?nan\b', 'NaN', fixed)
                try:
                    out.append(json.loads(fixed))
                except ValueError:
                    sys.exit("%s:%d: not JSON: %s" % (path, n, e))
    return out


def split_runs(lines, labels=None):
    """One run = an env line (after its optional note line) and what follows."""
    runs = []
    cur = None
    for d in lines:
        t = d.get("type")
        if t == "note":
            cur = {"note": d, "env": None, "rows": []}
            runs.append(cur)
        elif t == "env":
            if d.get("host_path") and cur is not None and cur["env"] and not cur["rows"]:
                cur["env"] = dict(cur["env"], **d)  # boxcar --host-path: its second env line
                continue
            if cur is None or cur["env"] is not None or cur["rows"]:
                cur = {"note": None, "env": None, "rows": []}
                runs.append(cur)
            cur["env"] = d
        else:
            if cur is None:
                cur = {"note": None, "env": None, "rows": []}
                runs.append(cur)
            cur["rows"].append(d)
    out = []
    for i, r in enumerate(runs):
        if labels and i < len(labels):
            label = labels[i]
        elif r["note"]:
            label = r["note"].get("tag", "")
            shape = r["note"].get("shape", "default")
            if shape and shape != "default":
                label += " (shape %s)" % shape
        else:
            label = "run %d" % (i + 1) if len(runs) > 1 else ""
        out.append(Run(label, r["note"], r["env"] or {}, r["rows"]))
    return out


class Data:
    def __init__(self, results):
        self.results = results
        self.files = {}          # (folder, file) -> list of Run
        self.sources = []        # Source entries found
        self.unclassified = []   # (folder, file)
        self.flowgraph = []      # list of (file, Run)
        self.flowgraph_files = []
        self.comparisons = {}    # folder -> compare.jsonl rows
        self.folders = sorted(d for d in os.listdir(results)
                              if os.path.isdir(os.path.join(results, d)))
        known = {(s.folder, s.file) for s in SOURCES}
        missing = []
        for s in SOURCES:
            p = os.path.join(results, s.folder, s.file)
            if not os.path.isfile(p):
                missing.append(p)
                continue
            self.files[(s.folder, s.file)] = split_runs(read_jsonl(p), s.labels)
            self.sources.append(s)
        if missing:
            sys.exit("perf_report: files named in SOURCES are missing:\n  " + "\n  ".join(missing))
        for folder in self.folders:
            files = sorted(os.path.relpath(p, os.path.join(results, folder))
                           for p in glob.glob(os.path.join(results, folder, "**", "*.jsonl"),
                                              recursive=True))
            if folder in COMPARISONS:
                self.comparisons[folder] = read_jsonl(os.path.join(results, folder,
                                                                   "compare.jsonl"))
                continue
            if folder == FLOWGRAPH_FOLDER:
                for f in files:
                    runs = split_runs(read_jsonl(os.path.join(results, folder, f)))
                    self.files[(folder, f)] = runs
                    self.flowgraph_files.append(f)
                    self.flowgraph.extend((f, r) for r in runs)
                continue
            for f in files:
                if (folder, f) not in known:
                    self.unclassified.append((folder, f))
                    self.files[(folder, f)] = split_runs(read_jsonl(os.path.join(results, folder, f)))
            if not files and folder not in NO_BENCH:
                print("perf_report: note: %s has no .jsonl results" % folder, file=sys.stderr)
        for folder, f in self.unclassified:
            print("perf_report: warning: %s/%s is not classified in SOURCES "
                  "(shown under 'Files not yet classified')" % (folder, f), file=sys.stderr)

    def runs(self, folder, file):
        return self.files[(folder, file)]

    def run(self, folder, file, label):
        for r in self.runs(folder, file):
            if r.label == label:
                return r
        sys.exit("perf_report: no run %r in %s/%s" % (label, folder, file))


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------
def num(x):
    """3 significant digits, exponent without '+' or leading zeros."""
    if x is None:
        return "—"
    if x == 0:
        return "0"
    s = "%.2e" % x
    mant, exp = s.split("e")
    return "%se%d" % (mant, int(exp))


def pct(r):
    if r is None:
        return "—"
    v = 100.0 * r
    if v >= 0.1:
        return "%.1f %%" % v
    return "%.2g %%" % v


def times(s):
    if s is None:
        return "—"
    if s >= 100:
        return "%.0fx" % s
    if s >= 10:
        return "%.1fx" % s
    return "%.2fx" % s


def rt(s):
    """A real-time factor."""
    if s is None:
        return "—"
    if s >= 1:
        return times(s)
    return "%.2gx" % s


def code(s):
    return "`%s`" % s if s else "—"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def src_link(folder, file=None):
    path = "../bench/results/%s/" % folder
    if file:
        return "[`%s/%s`](%s%s)" % (folder, file, path, file)
    return "[`%s`](%s)" % (folder, path)


def env_caption(env, cpu=None):
    bits = []
    gpu = env.get("gpu")
    bits.append("GPU: %s" % (gpu if gpu else "none"))
    cpu_model = env.get("cpu_model") or cpu
    bits.append("CPU: %s" % (cpu_model if cpu_model else "not recorded"))
    meas = []
    for key, name in (("device_read_bw", "device read %s B/s"),
                      ("device_copy_bw", "device copy %s B/s"),
                      ("device_copy_bytes_per_s", "device copy %s B/s"),
                      ("copy_bw", "device copy %s B/s"),
                      ("h2d_pinned_bw", "H2D pinned %s B/s"),
                      ("d2h_pinned_bw", "D2H pinned %s B/s"),
                      ("fp32_fma_flops", "GPU FP32 %s flop/s"),
                      ("device_fp32_per_s", "GPU FP32 %s flop/s"),
                      ("fp32_flops", "GPU FP32 %s flop/s"),
                      ("host_read_bw_1core", "1-core read %s B/s"),
                      ("host_read_bytes_per_s", "1-core read %s B/s"),
                      ("host_fma_1core_flops", "1-core FP32 %s flop/s"),
                      ("host_fp32_per_s", "1-core FP32 %s flop/s")):
        v = env.get(key)
        if v:
            meas.append(name % num(v))
    s = "; ".join(bits)
    if meas:
        s += "; measured in the run: " + ", ".join(meas)
    if env.get("host_clock") == "thread-cpu":
        s += "; host timings are thread CPU time"
    return s + "."


# --------------------------------------------------------------------------
# One normalised view of a result line
# --------------------------------------------------------------------------
def where(d):
    if d.get("type") == "kernel" or (d.get("detector") == "kalman" and "backend" not in d):
        return "cuda, device"  # bench/tuning/boxcar_kernels.c, kalman_gpu_bench.c
    b, m = d.get("backend"), d.get("mode")
    if b and m:
        return "%s, %s" % (b, m)
    return b or m or ""


def fg_params(d, short=False):
    """The detector parameters of a flow graph line and whether the block had
    its pass-through output, as a list of phrases (short: for plot labels)."""
    det = d.get("detector")
    bits = []
    if det == "edges" and d.get("edge_spacing"):
        sp = d["edge_spacing"]
        bits.append(("every %s-%s" if short else "a transition every %s-%s samples")
                    % (sp[0], sp[1]))
    elif det == "boxcar" and "nchan" in d:
        bits += (["%s ch %s" % (d.get("nchan"), str(d.get("norm")).upper())] if short else
                 ["%s ch" % d.get("nchan"), "%s statistics" % d.get("norm")])
    elif det == "spiir" and "templates" in d:
        bits.append("%s x %s" % (d.get("templates"), d.get("filters")))
    elif det == "kalman" and "M" in d:
        bits.append("M = %s" % d.get("M"))
    if d.get("passthrough") is False:
        bits.append("no output" if short else "no pass-through output (detects only)")
    if det == "spiir" and d.get("output") is False:
        on = d.get("triggers_on", "host")
        bits.append(("no output, triggers on %s" if short else
                     "no SNR output (detects only), triggers searched on the %s") % on)
    if d.get("msg_format") == "vectors":
        bits.append("vectors" if short else "detects as vectors")
    return bits


def fg_case(d):
    """What a flow graph line measured: the detector's parameters and the buffer mode
    ("" when the line names none)."""
    bits = fg_params(d)
    if d.get("path") == "block" and d.get("backend") == "cuda" and "pinned_buffers" in d:
        bits.append("page-locked buffers" if d["pinned_buffers"] else "staged")
    return ", ".join(str(b) for b in bits)


def fg_short(d):
    """A short label of a flow graph block line (plots)."""
    bits = fg_params(d, short=True)
    batch = d.get("batch")
    if batch and batch & (batch - 1) == 0:
        bits.append("batch 2^%d" % (batch.bit_length() - 1))
    elif batch:
        bits.append("batch %s" % batch)
    return "%s %s, %s" % (d.get("detector"), d.get("backend"), ", ".join(bits))


def fg_name(d):
    """detector (case) for the targets table."""
    c = fg_case(d)
    return "%s (%s)" % (d["detector"], c) if c else d["detector"]


def case_of(d):
    if d.get("type") == "kernel":
        bits = ["%s" % d.get("algorithm")]
        for k in ("tile", "split", "positions", "skew"):
            if k in d and d.get("variant") != "paper":
                bits.append("%s %s" % (k, d[k]))
        return ", ".join(bits)
    if d.get("type") == "flowgraph":
        return "%s, %s, %s, batch %s" % (d.get("detector"), d.get("backend"), d.get("path"),
                                        d.get("batch"))
    det = d.get("detector")
    if det == "spiir":
        s = "%s x %s" % (d.get("templates"), d.get("filters"))
        if d.get("multirate"):
            s += " multirate"
        return s
    if det == "kalman":
        return "M = %s" % d.get("M")
    if det == "dedisp":
        return "%s ch x %s trials, %s spectra%s%s" % (
            d.get("nchan"), d.get("ndm"), d.get("samples"),
            ", " + os.path.basename(d["file"]) if d.get("file") else "",
            ", zero-DM" if d.get("zero_dm") else "")
    if det == "boxcar" and d.get("path"):  # transient-bench --host-path
        return "%s, %s x batch %s, %s, %s, %s buffers, widths %s, norm threads %s" % (
            d.get("config"), d.get("nchan"), d.get("batch"), d.get("norm"), d.get("path"),
            d.get("buffers"), "on" if d.get("widths") else "off", d.get("norm_threads"))
    if det == "boxcar":
        return "%s, %s x %s" % (d.get("config"), d.get("nchan"), d.get("samples"))
    return ""


def norm(d, ctx=None):
    """dict(rate, unit, ceiling, ceil, ratio, baseline, speedup) or None."""
    t = d.get("type")
    if t not in ("result", "kernel", "flowgraph"):
        return None
    if "dm_samples_per_s" in d:  # dedispersion: ceilings of bytes and of additions
        rate = d["dm_samples_per_s"]
        c = [("bytes", d.get("ceiling_memory_dm_samples_per_s")),
             ("adds", d.get("ceiling_adds_dm_samples_per_s"))]
        c = [x for x in c if x[1]]
        ceiling, ceil = min(c, key=lambda x: x[1]) if c else (None, None)
        return dict(rate=rate, unit="trial-samples/s", ceiling=ceiling, ceil=ceil,
                    ratio=rate / ceil if ceil else None, baseline=None, speedup=None)
    if "updates_per_s" in d:
        rate, unit = d["updates_per_s"], "updates/s"
    else:
        rate, unit = d.get("samples_per_s"), "samples/s"
    if rate is None:
        return None
    ceiling, ceil, ratio = d.get("ceiling"), None, d.get("ratio")
    if t == "kernel":
        c = [("bytes", d.get("ceiling_bw_sps")), ("ops", d.get("ceiling_fp32_sps"))]
        c = [x for x in c if x[1]]
        if c:
            ceiling, ceil = min(c, key=lambda x: x[1])
            ratio = rate / ceil
        baseline = "paper" if d.get("variant") != "paper" else None
        speedup = d.get("speedup_vs_paper") if baseline else None
        return dict(rate=rate, unit=unit, ceiling=ceiling, ceil=ceil, ratio=ratio,
                    baseline=baseline, speedup=speedup)
    if d.get("detector") == "boxcar" and t == "result" and "ceiling_samples_per_s" not in d:
        c = [("bytes", d.get("ceiling_bytes")), ("ops", d.get("ceiling_ops"))]
        c = [x for x in c if x[1]]
        if c:
            ceiling, ceil = min(c, key=lambda x: x[1])
            ratio = rate / ceil
    elif "ceiling_updates_per_s" in d:
        ceil = d["ceiling_updates_per_s"]
    elif "ceiling_samples_per_s" in d:
        ceil = d["ceiling_samples_per_s"]
    elif "ceiling_ops_samples_per_s" in d or (ctx and d.get("M") in ctx):
        # bench/tuning/kalman_gpu_bench.c: operations and memory ceilings; rows
        # without them take the ones of the same M in the same run (the
        # memory one is FAST's register buffer, so not for the paper design).
        src = d if "ceiling_ops_samples_per_s" in d else ctx[d.get("M")]
        c = [("ops", src.get("ceiling_ops_samples_per_s"))]
        if d.get("variant") != "cuda-paper":
            c.append(("bytes", src.get("ceiling_mem_samples_per_s")))
        c = [x for x in c if x[1]]
        if c:
            ceiling, ceil = min(c, key=lambda x: x[1])
            ratio = rate / ceil
    if ratio is None and ceil:
        ratio = rate / ceil
    baseline = d.get("baseline") or None
    speedup = d.get("speedup") if baseline else None
    if (baseline is None and d.get("variant") == "cuda-fast" and d.get("speedup") is not None
            and d.get("detector") != "boxcar"):
        baseline, speedup = "cuda-paper", d["speedup"]  # kalman_gpu_bench.c
    return dict(rate=rate, unit=unit, ceiling=ceiling, ceil=ceil, ratio=ratio,
                baseline=baseline, speedup=speedup)


def kalman_ctx(run):
    return {d.get("M"): d for d in run.rows
            if d.get("type") == "result" and "ceiling_ops_samples_per_s" in d}


def generic_table(run):
    ctx = kalman_ctx(run)
    rows = []
    for d in run.rows:
        n = norm(d, ctx)
        if n is None:
            continue
        rows.append([case_of(d) or "—", d.get("variant", "—"), where(d) or "—",
                     "%s %s" % (num(n["rate"]), n["unit"]), code(n["ceiling"]), num(n["ceil"]),
                     pct(n["ratio"]), n["baseline"] or "—", times(n["speedup"]), okay(d)])
    if not rows:
        return ""
    return table(["case", "variant", "where", "measured", "ceiling", "ceiling value",
                  "of ceiling", "baseline (same run)", "speedup", "check"], rows)


def okay(d):
    if "ok" not in d:
        return "—"
    return "ok" if d["ok"] else "**failed**"


def results(run, **match):
    out = []
    for d in run.rows:
        if d.get("type") not in ("result", "kernel", "flowgraph"):
            continue
        if all(d.get(k) == v for k, v in match.items()):
            out.append(d)
    return out


def one(run, **match):
    r = results(run, **match)
    if len(r) != 1:
        sys.exit("perf_report: expected one result for %r in run %r, found %d"
                 % (match, run.label, len(r)))
    return r[0]


# --------------------------------------------------------------------------
# Sections
# --------------------------------------------------------------------------
class Report:
    def __init__(self, data):
        self.data = data
        self.md = []
        self.targets = []   # (issue, target, measured, source, verdict)
        self.plots = {}     # name -> callable(ax or fig)
        self.speedups = []  # (label, speedup) of the final FAST cases over the paper design
        self.ceilings = []  # (label, ratio) of the final FAST cases

    def w(self, *lines):
        self.md.extend(lines)

    def target(self, issue, what, measured, source, ok):
        self.targets.append((issue, what, measured, source,
                             "—" if ok is None else ("met" if ok else "**missed**")))

    # -- dedispersion -----------------------------------------------------
    def dedisp(self):
        F = DEDISP_FOLDER
        if F not in self.data.folders:
            return
        run = self.data.runs(F, "bench_dedisp.jsonl")[0]
        self.w("## Dedispersion", "",
               "Paper: B. R. Barsdell et al., MNRAS 422, 379 (2012), the direct algorithm "
               "(docs/dedisp.md). Heimdall's synthetic header: 1024 channels, 64 us, DM 0-2000 "
               "at tolerance 1.25 = 1422 trials of dedisp's list, every trial at full time "
               "resolution. Rates in trial-samples per second (spectra x trials / s). Ceilings: "
               "`bytes` = one read of each spectrum and one write of its outputs over the "
               "device copy bandwidth, `adds` = one addition per channel, trial and sample "
               "over the FP32 rate (an add issues like an FMA).", "")
        self.w("%s. %s" % (src_link(F, "bench_dedisp.jsonl"), env_caption(run.env)), "")
        rows = []
        for d in results(run):
            n = norm(d)
            rows.append([d["variant"], d["mode"], num(d["samples"]), "%.4g" % d["seconds"],
                         "**%s**" % num(n["rate"]),
                         num(d["ceiling_memory_dm_samples_per_s"] or None),
                         num(d["ceiling_adds_dm_samples_per_s"]),
                         "%s (%s)" % (pct(n["ratio"]), n["ceiling"])])
        chk = [d for d in run.rows if d.get("type") == "check"]
        self.w(table(["variant", "mode", "spectra", "s", "trial-samples/s", "bytes ceiling",
                      "adds ceiling", "of ceiling"], rows), "")
        if chk:
            self.w("Check in the same run: cuda-fast against cpu-fast on %s outputs, %s "
                   "differing bits." % (num(chk[0]["outputs"]), chk[0]["differing"]), "")
        hd = {}
        for r in self.data.runs(F, "heimdall.jsonl"):
            for d in r.rows:
                if d.get("peer") == "heimdall" and "seconds_wall" in d:
                    hd[d["file"]] = d
        rows = []
        for r in self.data.runs(F, "bench_dedisp_files.jsonl"):
            for d in results(r, mode="file"):
                name = os.path.basename(d["file"])
                h = hd.get(name, {})
                ded = h.get("heimdall_timers_s", {}).get("dedispersion")
                hist = h.get("plan", {}).get("scrunch_hist", {})
                # dedisp's work in full-rate trials: a trial scrunched by f costs 1/f
                full = sum(cnt / float(f) for f, cnt in hist.items())
                rate = full * h["nsamps"] / ded if ded and full else None
                rows.append([r.label, num(d["samples"]), str(d["ndm"]), "%.4g" % d["seconds"],
                             num(d["dm_samples_per_s"]), pct(norm(d)["ratio"]),
                             "%.4g" % ded if ded is not None else "—",
                             "%.4g" % full if full else "—", num(rate),
                             times(d["dm_samples_per_s"] / rate) if rate else "—",
                             "%.4g" % h["seconds_wall"] if "seconds_wall" in h else "—"])
        self.w("Whole files (%s): read with the core's reader into pinned memory in chunks "
               "of 65536 spectra, copied up at 8 bits, unpacked, dedispersed, the outputs "
               "left on the GPU, flush included, timed from the first read to the last "
               "output. Beside it Heimdall's own `dedispersion` timer (dedisp with its time "
               "scrunching: the 1422 trials of the synthetic file cost it 682.5 full-rate "
               "trials; 29.fil's 285 trials are all full rate), its rate in full-rate "
               "trial-samples per second, and Heimdall's whole wall time (best of 3), measured "
               "in the same run (%s):" % (src_link(F, "bench_dedisp_files.jsonl"),
                                                   src_link(F, "heimdall.jsonl")), "")
        self.w(table(["file", "spectra", "trials", "s (ours)", "trial-samples/s",
                      "of ceiling", "dedisp s (Heimdall)", "dedisp full-rate trials",
                      "dedisp trial-samples/s", "ours / dedisp", "Heimdall wall s"], rows), "")

    # -- edges ------------------------------------------------------------
    def edges(self):
        F = "2026-11-22-h100-edges"
        self.w("## Edge localizer", "",
               "Paper: Barford et al., parallel transition localization; published: "
               "%s samples/s on a GTX 480 and %s samples/s for the serial CPU code "
               "(Table III, 7,000,000 samples). PAPER is the paper's multi-pass GPU design "
               "(CUB scans) measured in the same run; ceilings are bytes (4 per sample) over "
               "the measured bandwidth of where the data lives." % (num(EDGES_PUB_GPU),
                                                                   num(EDGES_PUB_CPU)), "")
        for file in ("bench_edges.jsonl", "bench_edges_drops.jsonl"):
            for run in self.data.runs(F, file):
                self.w("%s%s. %s" % (src_link(F, file),
                                     (" (%s)" % run.label) if run.label else "",
                                     env_caption(run.env)), "")
                rows = []
                for d in results(run):
                    n = norm(d)
                    pub = EDGES_PUB_GPU if d.get("backend") == "cuda" else EDGES_PUB_CPU
                    rows.append([d["variant"], where(d), num(n["rate"]), code(n["ceiling"]),
                                 num(n["ceil"]), pct(n["ratio"]), n["baseline"] or "—",
                                 times(n["speedup"]), num(pub), times(n["rate"] / pub)])
                self.w(table(["variant", "where", "samples/s", "ceiling", "ceiling samples/s",
                              "of ceiling", "baseline (same run)", "speedup", "paper (published)",
                              "x published"], rows), "")
        run = self.data.runs(F, "bench_edges.jsonl")[0]
        fast = one(run, variant="cuda-fast", mode="device")
        self.speedups.append(("edges, cuda-fast vs cuda-paper (device)", fast["speedup"]))
        self.ceilings.append(("edges, cuda-fast (device)", norm(fast)["ratio"]))
        h2h = one(run, variant="cuda-fast", mode="host-to-host")
        self.ceilings.append(("edges, cuda-fast (host to host)", norm(h2h)["ratio"]))
        cpu = one(run, variant="cpu-fast")
        self.ceilings.append(("edges, cpu-fast (1 core)", norm(cpu)["ratio"]))
        self.w("![edges](plots/perf_edges.png)", "")

        def plot(plt):
            fig, ax = plt.subplots(figsize=(8, 4))
            rs = results(run)
            labels = ["%s\n%s" % (d["variant"], d["mode"]) for d in rs]
            grouped_bars(ax, labels, [("measured", [d["samples_per_s"] for d in rs]),
                                      ("ceiling", [d["ceiling_samples_per_s"] for d in rs])])
            hline(ax, EDGES_PUB_GPU, "paper, GTX 480")
            hline(ax, EDGES_PUB_CPU, "paper, serial CPU", style=":")
            finish(ax, "Edge localizer (2^28 samples), samples/s", "samples/s")
            return fig
        self.plots["perf_edges"] = plot

    # -- boxcar -----------------------------------------------------------
    def boxcar(self):
        F = "2026-11-22-h100-boxcar-fast"
        self.w("## Boxcar single-pulse search", "",
               "Paper: Adamek & Armour, single pulse detection algorithms (BoxDIT, IGRID). "
               "Published: SKA-like data (6000 DM trials at 64 us, %s samples/s) processed "
               "106x (BD-32) and 500x (IG(1)) faster than real time on a Titan V, 33x and 266x "
               "on a P100. PAPER is the paper's GPU design measured in the same run. Ceilings: "
               "`bytes` = 12 bytes per sample (input read once, S/N and width written) over "
               "the measured device copy bandwidth, `ops` = 4 operations per evaluated boxcar "
               "over the measured FP32 rate; the binding (lower) one is shown with the "
               "ratio." % num(SKA_SAMPLES_PER_S), "")
        kf = "final/kernels.jsonl"
        self.w("### CUDA kernels, data on the device", "")
        for run in self.data.runs(F, kf):
            self.w("%s (%s). %s FAST = the default configuration (tile 8192, 8 positions "
                   "per thread, lane-shared widths on)." % (src_link(F, kf), run.label,
                                                          env_caption(run.env)), "")
            rows = []
            for p in results(run, variant="paper"):
                alg = p["algorithm"]
                f = one(run, variant="fast", algorithm=alg, tile=8192, split=1, positions=8)
                nf, npp = norm(f), norm(p)
                pub = BOXCAR_PUB_REALTIME.get(alg)
                rows.append([alg, "%.1f" % p["boxcars_per_sample"], num(p["samples_per_s"]),
                             pct(npp["ratio"]), "**%s**" % num(f["samples_per_s"]),
                             num(f["ceiling_bw_sps"]), num(f["ceiling_fp32_sps"]),
                             "%s (%s)" % (pct(nf["ratio"]), nf["ceiling"]),
                             times(f["speedup_vs_paper"]), rt(f["realtime_ska"]),
                             ("%dx (%dx)" % pub) if pub else "—"])
                if run.label == "256 x 131072":
                    self.speedups.append(("boxcar %s, FAST vs PAPER" % alg, f["speedup_vs_paper"]))
                    self.ceilings.append(("boxcar %s, FAST" % alg, nf["ratio"]))
            self.w(table(["algorithm", "boxcars/sample", "PAPER samples/s", "PAPER of ceiling",
                          "FAST samples/s", "bytes ceiling", "ops ceiling", "FAST of ceiling",
                          "FAST / PAPER", "SKA real time", "paper: Titan V (P100) real time"],
                         rows), "")
        run = self.data.run(F, kf, "256 x 131072")
        self.w("Other FAST settings in the same run (%s):" % src_link(F, kf), "")
        rows = []
        for f in results(run, variant="fast"):
            if (f["tile"], f["split"], f["positions"]) == (8192, 1, 8):
                continue
            n = norm(f)
            rows.append([f["algorithm"], f["tile"], f["split"], f["positions"],
                         num(f["samples_per_s"]), pct(n["ratio"]), times(f["speedup_vs_paper"])])
        self.w(table(["algorithm", "tile", "lane-shared widths", "positions/thread",
                      "samples/s", "of ceiling", "x PAPER"], rows), "")
        bf = "final/bench_boxcar.jsonl"
        self.w("### Through transient-bench", "",
               "%s: the search object through the public API, reset before each timed call. %s"
               % (src_link(F, bf), env_caption(self.data.runs(F, bf)[0].env)), "")
        rows = []
        for run in self.data.runs(F, bf):
            for d in results(run):
                n = norm(d)
                rows.append([run.label, d["config"], d["variant"], where(d),
                             "%s x %s" % (d["nchan"], d["samples"]), num(d["samples_per_s"]),
                             num(d.get("ceiling_bytes")), num(d.get("ceiling_ops")),
                             pct(n["ratio"]), n["baseline"] or "—", times(n["speedup"]),
                             rt(d["realtime_ska"])])
        self.w(table(["run", "config", "variant", "where", "data", "samples/s", "bytes ceiling",
                      "ops ceiling", "of ceiling", "baseline (same run)", "speedup",
                      "SKA real time"], rows), "")
        V = AA_FINAL_FOLDER
        self.w("### Against AstroAccelerate's SPDT (same run)", "",
               "%s: FAST with the sparse stages' own pass, direct span loads and packed keys "
               "(commit b29bbc3, default configuration) and AstroAccelerate's BoxDIT kernels "
               "(SPDT, per-width statistics "
               "precomputed) on the same data sizes in one run. SPDT writes per-iteration "
               "planes (S/N and width of the best boxcar of each iteration); FAST writes the "
               "best over all iterations. Ceilings: 12 bytes per sample (FAST), about 32 "
               "(SPDT), over the measured device copy bandwidth. %s" % (src_link(V), env_caption(
                   self.data.runs(V, "kernels_256x131072.jsonl")[0].env)), "")
        rows = []
        for tag, label in AA_SIZES:
            for alg, f, a, b in self.aa_cases(V, "", tag, label):
                bw = self.data.run(V, "kernels_%s.jsonl" % tag, label).env["copy_bw"]
                rows.append([label, alg, "%.1f" % f["boxcars_per_sample"], num(a),
                             "**%s**" % num(f["samples_per_s"]),
                             times(f["samples_per_s"] / a) if a else "—",
                             num(b["samples_per_s"]), times(b["samples_per_s"] / a) if a else "—",
                             pct(f["samples_per_s"] / (bw / 12.0)),
                             pct(a / (bw / 32.0)) if a else "—"])
        self.w(table(["data", "algorithm", "boxcars/sample", "AA SPDT", "FAST kernel",
                      "FAST / AA", "FAST transient-bench", "/ AA", "FAST of ceiling",
                      "AA of ceiling"], rows), "")
        self.w("Every run of this comparison, the final one first: FAST kernel over SPDT in "
               "the same run (the default configuration of each commit: its largest tile). The "
               "H200 runs are on another GPU: compare these ratios, not their rates.", "")
        rows = []
        for folder, sub, _, why in AA_RUNS:
            for tag, label in AA_SIZES:
                cases = self.aa_cases(folder, sub, tag, label)
                rows.append([src_link(folder, sub.rstrip("/") or None), why.rstrip(": "), label] +
                            [times(f["samples_per_s"] / a) for _, f, a, _ in cases if a])
        self.w(table(["folder", "run", "data", "BD-AA", "BD-32", "BD-16", "BD-8"], rows), "")
        C = "2026-11-22-host-boxcar-cpu"
        self.w("### CPU, one core", "")
        rows = []
        for file in ("bench_boxcar_cpu.jsonl", "bench_boxcar_cpu_1ch.jsonl"):
            run = self.data.runs(C, file)[0]
            for d in results(run):
                n = norm(d)
                rows.append([run.label, d["config"], d["variant"], num(d["samples_per_s"]),
                             num(d.get("ceiling_bytes")), num(d.get("ceiling_ops")),
                             pct(n["ratio"]), times(n["speedup"])])
        run = self.data.runs(C, "bench_boxcar_cpu.jsonl")[0]
        self.w("%s. %s" % (src_link(C), env_caption(run.env, "AMD EPYC (from the README)")), "")
        self.w(table(["data", "config", "variant", "samples/s", "bytes ceiling", "ops ceiling",
                      "of ceiling", "x reference (same run)"], rows), "")
        self.w("![boxcar](plots/perf_boxcar.png)", "")
        run = self.data.run(F, kf, "256 x 131072")

        def plot(plt):
            fig, ax = plt.subplots(figsize=(8, 4))
            papers = results(run, variant="paper")
            algs = [p["algorithm"] for p in papers]
            fast = [one(run, variant="fast", algorithm=a, tile=8192, split=1, positions=8)
                    for a in algs]
            pub = [BOXCAR_PUB_REALTIME[a][0] * SKA_SAMPLES_PER_S if a in BOXCAR_PUB_REALTIME
                   else None for a in algs]
            grouped_bars(ax, algs, [("PAPER (H100)", [p["samples_per_s"] for p in papers]),
                                    ("FAST", [f["samples_per_s"] for f in fast]),
                                    ("ceiling", [norm(f)["ceil"] for f in fast]),
                                    ("paper, Titan V", pub)])
            finish(ax, "Boxcar search, 256 x 131072, L_end 8192, samples/s", "samples/s")
            return fig
        self.plots["perf_boxcar"] = plot

        # targets (issue 3)
        bd32 = one(run, variant="fast", algorithm="BD-32", tile=8192, split=1, positions=8)
        ig1 = one(run, variant="fast", algorithm="IG(1)", tile=8192, split=1, positions=8)
        src = src_link(F, kf)
        self.target("3", "BD-32 (CUDA) >= 5e10 samples/s", num(bd32["samples_per_s"]), src,
                    bd32["samples_per_s"] >= 5e10)
        self.target("3", "IG(1) (CUDA) >= 2e11 samples/s", num(ig1["samples_per_s"]), src,
                    ig1["samples_per_s"] >= 2e11)
        cpu = self.data.runs(C, "bench_boxcar_cpu.jsonl")[0]
        bd16 = one(cpu, variant="cpu-fast", config="BD-16")
        self.target("3", "CPU BD-16 >= 5e7 samples/s per core", num(bd16["samples_per_s"]),
                    src_link(C, "bench_boxcar_cpu.jsonl"), bd16["samples_per_s"] >= 5e7)
        self.target("3", "CPU BD-16 >= 4x the reference (same run)", times(bd16["speedup"]),
                    src_link(C, "bench_boxcar_cpu.jsonl"), bd16["speedup"] >= 4)

    def aa_cases(self, folder, sub, tag, label):
        """(algorithm, FAST kernel line, SPDT samples/s or None, transient-bench line) of
        one boxcar_vs_aa.sh run; FAST = the default configuration, its largest tile."""
        run = self.data.run(folder, sub + "kernels_%s.jsonl" % tag, label)
        aa = {d["case"]: d for d in self.data.run(folder, sub + "aa_%s.jsonl" % tag, label).rows
              if "case" in d}
        bench = {d["config"]: d for d in results(
            self.data.run(folder, sub + "bench_%s.jsonl" % tag, label), variant="cuda-fast")}
        tile = max(d["tile"] for d in results(run, variant="fast", split=1, positions=8))
        out = []
        for alg, peer in (("BD-AA", "aa_default"), ("BD-32", "bd32"), ("BD-16", "bd16"),
                          ("BD-8", "bd8"), ("IG(1)", None)):
            f = one(run, variant="fast", algorithm=alg, tile=tile, split=1, positions=8)
            a = aa.get("%s/spdt" % peer) if peer else None
            out.append((alg, f, a["samples_per_s"] if a else None, bench[alg]))
        return out

    # -- SPIIR ------------------------------------------------------------
    def spiir(self):
        F = "2026-11-22-h100-spiir-fast"
        fb, fs = "bench_spiir.jsonl", "segment0_bench_spiir.jsonl"
        self.w("## SPIIR filter bank, single rate", "",
               "Paper: Guo et al., GPU SPIIR filtering on Maxwell. Published (GTX 980, 4096 "
               "templates): the paper's kernels %.0fx (512 filters) and %.0fx (8 filters) "
               "faster than one CPU core (Table 2); no absolute rates. One update = one filter "
               "for one sample; ceiling = measured FP32 FMA rate / 6 FMA per update. "
               "cuda-paper is the paper's design (warp kernel up to 32 filters, block kernel "
               "with atomic sums above) measured in the same run."
               % (SPIIR_PUB_SPEEDUP[512], SPIIR_PUB_SPEEDUP[8]), "")
        W, wb = SPIIR_WINDOW, "single_W_1.jsonl"
        run = self.data.run(W, wb, "single rate")
        self.w("%s (final run). %s" % (src_link(W, wb), env_caption(run.env)), "")
        self.w(self.spiir_table([(run.label, run)]), "")
        peer = {r["case"]: r for r in read_jsonl(os.path.join(self.data.results, W,
                                                               "spiir_peer.jsonl"))
                if "case" in r}
        lines = []
        for filt, case in ((512, "4096x512x8192/kernel"), (8, "4096x8x65536/kernel")):
            f = one(run, variant="cuda-fast", filters=filt)
            g = peer[case]["updates_per_s"]
            lines.append("4096 x %d: %s updates/s, cuda-fast %s" % (filt, num(g),
                                                                   times(f["updates_per_s"] / g)))
        self.w("gstlal-spiir's own kernel in the same call (%s): %s." %
               (src_link(W, "spiir_peer.jsonl"), "; ".join(lines)), "")
        seg = [r for r in self.data.runs(F, fs) if not results(r, multirate=1)]
        self.w("With time segments off (`TR_SPIIR_CUDA_SEGMENT=0`, %s):" % src_link(F, fs), "")
        self.w(self.spiir_table([(r.label, r) for r in seg]), "")
        E = "2026-11-22-h100-spiir"
        erun = self.data.runs(E, fb)[0]
        self.w("CPU variants and host-to-host: the latest run that measured them, %s "
               "(first SPIIR kernels; its device rows are superseded above). %s"
               % (src_link(E, fb), env_caption(erun.env)), "")
        self.w(self.spiir_table([("", erun)], cpu_col=True), "")
        self.spiir_triggers()
        for filt in (512, 8):
            f = one(run, variant="cuda-fast", filters=filt)
            self.speedups.append(("spiir 4096 x %d, cuda-fast vs cuda-paper" % filt, f["speedup"]))
            self.ceilings.append(("spiir 4096 x %d, cuda-fast" % filt, f["ratio"]))
        src = src_link(W, wb)
        for filt, tgt in ((512, 2.5e12), (8, 1.5e12)):
            f = one(run, variant="cuda-fast", filters=filt)
            self.target("4", "4096 x %d >= %s updates/s" % (filt, num(tgt)),
                        num(f["updates_per_s"]), src, f["updates_per_s"] >= tgt)
            self.target("4", "4096 x %d >= 3x the paper kernels (same run)" % filt,
                        times(f["speedup"]), src, f["speedup"] >= 3)
        c = one(erun, variant="cpu-fast", filters=512)
        self.target("4", "CPU >= 1.5e9 updates/s on one core (4096 x 512)",
                    num(c["updates_per_s"]), src_link(E, fb), c["updates_per_s"] >= 1.5e9)
        ok = all(one(erun, variant="cpu-fast", filters=k)["speedup"] >= 4 for k in (512, 8))
        self.target("4", "CPU >= 4x the complex-double reference (same run)",
                    " / ".join(times(one(erun, variant="cpu-fast", filters=k)["speedup"])
                               for k in (512, 8)) + " (x 512 / x 8)", src_link(E, fb), ok)

        # multirate
        self.w("## SPIIR filter bank, multirate", "",
               "4096 templates of 10/21/36/65/115/203/88 filters at 4096 Hz down to 64 Hz "
               "(52.5 updates per template per full-rate sample), 131072 samples (32 s at "
               "4096 Hz); the step is the batch per call. Published: the paper's multirate "
               "scheme %d-%dx faster than one CPU core (Table 3, GTX 980)."
               % SPIIR_PUB_MULTIRATE, "")
        mr = [(r.label, r) for r in self.data.runs(F, fb) if results(r, multirate=1)]
        self.w("%s (final run). %s" % (src_link(F, fb), env_caption(mr[-1][1].env)), "")
        self.w(self.spiir_table(mr, rt_target=True), "")
        seg = [(r.label, r) for r in self.data.runs(F, fs) if results(r, multirate=1)]
        self.w("With time segments off (`TR_SPIIR_CUDA_SEGMENT=0`, %s):" % src_link(F, fs), "")
        self.w(self.spiir_table(seg, rt_target=True), "")
        M = "2026-11-22-h100-spiir-multirate"
        mf = "bench_spiir_mr.jsonl"
        mruns = self.data.runs(M, mf)
        self.w("CPU variants and host-to-host: the latest multirate run that measured them, "
               "%s (earlier kernels). %s" % (src_link(M, mf), env_caption(mruns[-1].env)), "")
        self.w(self.spiir_table([(r.label, r) for r in mruns], cpu_col=True, rt_target=True), "")
        last = dict(mr)["multirate step 131072"]
        f = one(last, variant="cuda-fast")
        self.speedups.append(("spiir multirate step 131072, cuda-fast vs cuda-paper", f["speedup"]))
        self.ceilings.append(("spiir multirate step 131072, cuda-fast", f["ratio"]))
        mwf = "mr_W_4096_1.jsonl"
        mw = one(self.data.runs(SPIIR_WINDOW, mwf)[0], variant="cuda-fast", mode="device")
        self.w("Multirate with the current kernels (%s, the default step of 4096 samples, "
               "data on the device): %s updates/s, %.0fx real time."
               % (src_link(SPIIR_WINDOW, mwf), num(mw["updates_per_s"]),
                  mw["realtime_factor_4096hz"]), "")
        self.target("4", "multirate >= 1000x real time",
                    "%.0fx (step 4096)" % mw["realtime_factor_4096hz"],
                    src_link(SPIIR_WINDOW, mwf), mw["realtime_factor_4096hz"] >= 1000)
        self.w("![spiir](plots/perf_spiir.png)", "")

        def plot(plt):
            fig, ax = plt.subplots(figsize=(8, 4))
            cases = [("4096 x 512", run, dict(filters=512)), ("4096 x 8", run, dict(filters=8)),
                     ("multirate\nstep 4096", dict(mr)["multirate step 4096"], {}),
                     ("multirate\nstep 131072", last, {})]
            paper = [one(r, variant="cuda-paper", **m)["updates_per_s"] for _, r, m in cases]
            fast = [one(r, variant="cuda-fast", **m)["updates_per_s"] for _, r, m in cases]
            ceil = [one(r, variant="cuda-fast", **m)["ceiling_updates_per_s"] for _, r, m in cases]
            grouped_bars(ax, [c[0] for c in cases], [("cuda-paper", paper), ("cuda-fast", fast),
                                                     ("ceiling", ceil)])
            finish(ax, "SPIIR, 4096 templates, filter updates/s", "updates/s")
            return fig
        self.plots["perf_spiir"] = plot

    def spiir_triggers(self):
        T, tf = "2026-11-22-h100-spiir-triggers", "triggers.jsonl"
        run = self.data.runs(T, tf)[0]
        self.w("Trigger search (`tr_spiir_triggers_process`: every template's SNR against the "
               "threshold, the maximum within the window), 256 templates, %s; CPU: %s. "
               "Ceiling: one core's read bandwidth measured in the run (%s B/s) over the 2048 "
               "bytes of SNR per sample; REFERENCE is the baseline."
               % (src_link(T, tf), run.env.get("cpu", "not recorded"),
                  num(run.env.get("read_bw_one_core"))), "")
        rows = []
        for d in results(run):
            if "variant" not in d:
                continue
            rows.append([d["variant"], d.get("kernel", "—"), d.get("threads"),
                         num(d["samples_per_s"]), code(d["ceiling"]),
                         num(d["ceiling_samples_per_s"]), pct(d["ratio"]),
                         times(d["speedup_vs_reference"])])
        self.w(table(["variant", "kernel", "threads", "samples/s", "ceiling",
                      "ceiling samples/s", "of ceiling", "x reference"], rows), "")
        rows = []
        for d in results(run):
            if "path" in d:
                rows.append([d["path"], d["backend"], d["batch"], num(d["samples_per_s"]),
                             num(d.get("core_samples_per_s")),
                             pct(d["block_over_core"]) if "block_over_core" in d else "—"])
        self.w("The block's CUDA data path without GNU Radio (the core into the output "
               "buffer, then the trigger search; pageable or page-locked output):", "")
        self.w(table(["path", "backend", "batch", "samples/s", "core samples/s",
                      "block path / core"], rows), "")

    def spiir_table(self, runs, cpu_col=False, rt_target=False):
        rows = []
        for label, run in runs:
            cpu = {}
            for d in results(run, variant="cpu-fast"):
                cpu[(d["filters"], d.get("multirate", 0))] = d["updates_per_s"]
            for d in results(run):
                n = norm(d)
                row = [label or "—", "%s x %s" % (d["templates"], d["filters"]), d["variant"],
                       where(d), num(n["rate"]), code(n["ceiling"]), num(n["ceil"]),
                       pct(n["ratio"]), n["baseline"] or "—", times(n["speedup"]),
                       rt(d["realtime_factor_4096hz"])]
                if cpu_col:
                    c = cpu.get((d["filters"], d.get("multirate", 0)))
                    row.append(times(n["rate"] / c) if c and d["backend"] == "cuda" else "—")
                if d.get("multirate", 0):
                    pub = "%d-%dx CPU" % SPIIR_PUB_MULTIRATE
                else:
                    p = SPIIR_PUB_SPEEDUP.get(d["filters"])
                    pub = ("%.0fx CPU" % p) if p else "—"
                row.append(pub if d["backend"] == "cuda" else "—")
                rows.append(row)
        head = ["run", "bank", "variant", "where", "updates/s", "ceiling", "ceiling updates/s",
                "of ceiling", "baseline (same run)", "speedup", "real time at 4096 Hz"]
        if cpu_col:
            head.append("x cpu-fast (same run)")
        head.append("paper (published, GTX 980)")
        return table(head, rows)

    # -- Kalman -----------------------------------------------------------
    def kalman(self):
        F = "2026-11-22-h100-kalman-fast"
        gf = "kalman_gpu_bench.jsonl"
        self.w("## Kalman-bank detector", "",
               "Paper: the optimal Gaussian-signal detector on CUDA; published best rates "
               "15625 samples/s (M = 92) and 3597 samples/s (M = 10756) (Fig. 4; Quadro "
               "K1100M and a Core i7). PAPER is the paper's design (one kernel launch per "
               "sample, host filters #1 and #M) measured in the same run. Q = 4, data on the "
               "device.", "")
        run = self.data.runs(F, gf)[0]
        ctx = kalman_ctx(run)
        self.w("%s (bench/tuning/kalman_gpu_bench.c, 2^20-sample batches, median of 5). %s "
               "Ceilings: `ops` = 46 operations per sample and hypothesis over the FP32 rate, "
               "`bytes` = 8 bytes of the register buffer per sample and hypothesis over the "
               "device copy bandwidth." % (src_link(F, gf), env_caption(run.env)), "")
        rows = []
        for f in results(run, variant="cuda-fast"):
            m = f["M"]
            one_s = one(run, variant="cuda-fast-one-stream", M=m)
            p = one(run, variant="cuda-paper", M=m)
            n = norm(f, ctx)
            pub = KALMAN_PUB.get(m)
            rows.append(["M = %d" % m, "**%s**" % num(f["samples_per_s"]),
                         num(f["ceiling_ops_samples_per_s"]), num(f["ceiling_mem_samples_per_s"]),
                         "%s (%s)" % (pct(n["ratio"]), n["ceiling"]),
                         num(one_s["samples_per_s"]), num(p["samples_per_s"]),
                         times(f["speedup"]), num(pub), times(f["samples_per_s"] / pub) if pub
                         else "—"])
            self.speedups.append(("kalman M = %d, cuda-fast vs cuda-paper" % m, f["speedup"]))
            self.ceilings.append(("kalman M = %d, cuda-fast" % m, n["ratio"]))
        self.w(table(["M", "cuda-fast samples/s", "ops ceiling", "bytes ceiling",
                      "of ceiling", "one stream", "cuda-paper", "FAST / PAPER",
                      "paper (published)", "x published"], rows), "")
        rows = []
        for s in (d for d in run.rows if d.get("type") == "stages"):
            rows.append(["M = %d" % s["M"], num(s["samples"]), "%.1f" % s["ms_prep_noise_filter"],
                         "%.1f" % s["ms_diagonals"], "%.1f" % s["ms_normaliser"],
                         "%.1f" % s["ms_llr"]])
        self.w("Stages of cuda-fast (one stream, ms):", "")
        self.w(table(["M", "samples", "prep + noise-only filter", "diagonals", "normaliser",
                      "LLR"], rows), "")
        self.w("Through transient-bench (1 s per variant; `ops` ceiling = 60 operations per "
               "sample and hypothesis; `baseline` is cuda-paper for every variant, as "
               "transient-bench prints it):", "")
        rows = []
        for file in ("bench_kalman.jsonl", "bench_kalman_batch1m.jsonl"):
            r = self.data.runs(F, file)[0]
            for d in results(r):
                n = norm(d)
                pub = d.get("paper_published_best_samples_per_s")
                rows.append([r.label, "M = %d" % d["M"], d["variant"], where(d),
                             num(n["rate"]), code(n["ceiling"]), num(n["ceil"]), pct(n["ratio"]),
                             n["baseline"] or "—", times(n["speedup"]), num(pub),
                             times(d.get("speedup_vs_published"))])
        r0 = self.data.runs(F, "bench_kalman.jsonl")[0]
        self.w("%s, %s. %s" % (src_link(F, "bench_kalman.jsonl"),
                               src_link(F, "bench_kalman_batch1m.jsonl"), env_caption(r0.env)), "")
        self.w(table(["run", "M", "variant", "where", "samples/s", "ceiling", "ceiling samples/s",
                      "of ceiling", "baseline (same run)", "speedup", "paper (published)",
                      "x published"], rows), "")
        self.w("![kalman](plots/perf_kalman.png)", "")

        def plot(plt):
            fig, ax = plt.subplots(figsize=(8, 4))
            fs = results(run, variant="cuda-fast")
            ms = [f["M"] for f in fs]
            grouped_bars(ax, ["M = %d" % m for m in ms], [
                ("paper (published)", [KALMAN_PUB.get(m) for m in ms]),
                ("cuda-paper (H100)", [one(run, variant="cuda-paper", M=m)["samples_per_s"]
                                       for m in ms]),
                ("cuda-fast", [f["samples_per_s"] for f in fs]),
                ("ceiling", [norm(f, ctx)["ceil"] for f in fs])])
            finish(ax, "Kalman bank, Q = 4, samples/s", "samples/s")
            return fig
        self.plots["perf_kalman"] = plot

        src = src_link(F, gf)
        for m, tgt in ((10756, 1e7), (1024, 5e7), (92, 1e8)):
            f = one(run, variant="cuda-fast", M=m)
            self.target("5", "M = %d >= %s samples/s" % (m, num(tgt)), num(f["samples_per_s"]),
                        src, f["samples_per_s"] >= tgt)
            self.target("5", "M = %d >= 1000x the paper design (same run)" % m,
                        times(f["speedup"]), src, f["speedup"] >= 1000)
        c = one(r0, variant="cpu-fast", M=92)
        self.target("5", "CPU M = 92 >= 1e6 samples/s (one core)", num(c["samples_per_s"]),
                    src_link(F, "bench_kalman.jsonl"), c["samples_per_s"] >= 1e6)

    def spiir_block(self):
        P = "2026-11-22-h100-spiir-block"
        self.w("`spiir_bank_fc` on the CUDA backend (256 templates x 64 filters, batch 8192, "
               "window 1024, a trigger every ~21 samples), H100 host: before (%s) and after "
               "(%s) the block ran the core on a worker thread overlapped with the trigger "
               "search and built its trigger dicts from dict cells; the other rows are probes "
               "of the same build (output buffer of 4 batches, overlap off, buffers not "
               "page-locked). Each row's core ran in the same process; the host's speed varies "
               "between processes. What is left is host work per trigger on the block's "
               "thread (dicts, tags, messages) and GNU Radio's time between calls (%s)."
               % (src_link(P, "before_main.jsonl"), src_link(P, "overlap_2batch.jsonl"),
                  src_link(P)), "")
        rows = []
        final = None
        for f, what in (("before_main.jsonl", "before"),
                        ("overlap_2batch.jsonl", "after: overlap, 2-batch buffer"),
                        ("nooverlap_2batch.jsonl", "probe: no overlap, 2-batch buffer"),
                        ("overlap_4batch.jsonl", "probe: overlap, 4-batch buffer"),
                        ("nooverlap_4batch.jsonl", "probe: no overlap, 4-batch buffer"),
                        ("overlap_4batch_unpinned.jsonl", "probe: overlap, 4-batch buffer")):
            for run in self.data.runs(P, f):
                for d in results(run, type="flowgraph"):
                    if d.get("path") != "block":
                        continue
                    rows.append([what, fg_case(d), num(d["samples_per_s"]),
                                 num(d.get("core_samples_per_s")),
                                 pct(d.get("block_over_core"))])
                    if f == "overlap_2batch.jsonl":
                        final = d
        self.w(table(["block", "case", "samples/s", "core samples/s", "block / core"], rows), "")
        if final is not None:
            boc = final.get("block_over_core")
            self.target("6", "spiir block (CUDA, 256 x 64, batch 8192, the final code, run of "
                        "2026-11-22) >= 70 % of core", pct(boc), src_link(P, "overlap_2batch.jsonl"),
                        None if boc is None else boc >= 0.7)

    # -- GNU Radio end to end --------------------------------------------
    def flowgraph(self):
        self.w("## GNU Radio end to end", "",
               "A C++ flowgraph (source -> detector block -> sink) per detector and backend; "
               "`path` = `block` through the GNU Radio block, `core` the core library alone at "
               "the same batch size. Ceiling: bytes per input sample over the measured "
               "host-to-device bandwidth from pinned memory (PCIe). Targets (issue 6): CUDA "
               "blocks reach >= 50 % of the H2D bandwidth for float32 input (edges, boxcar), "
               "and every block >= 70 % of its core speed for the same backend and batch.", "")
        runs = [(f, r) for f, r in self.data.flowgraph if results(r, type="flowgraph")]
        if not runs:
            self.w("**Not measured yet**: no results in `bench/results/%s/`." % FLOWGRAPH_FOLDER, "")
            self.target("6", "CUDA edges/boxcar blocks >= 50 % of H2D bandwidth (float32)",
                        "not measured yet", "—", None)
            self.target("6", "every block >= 70 % of its core speed", "not measured yet", "—", None)
            return
        self.w("Files: " + ", ".join(src_link(FLOWGRAPH_FOLDER, f)
                                     for f in self.data.flowgraph_files) + ". The first full run "
               "(earlier code) is %s, listed under the files below." % src_link(
                   "2026-11-22-h100-flowgraph"), "")
        blocks = []
        for f, run in runs:
            rep = FLOWGRAPH_FURTHER.get(f)
            head = "%s%s: " % (rep[1], " (%s)" % run.label if run.label else "") if rep else ""
            self.w(head + env_caption(run.env), "")
            rows = []
            for d in results(run, type="flowgraph"):
                if d.get("ceiling_samples_per_s") is None and run.env.get("h2d_pinned_bw") \
                        and d.get("bytes_per_sample"):
                    d = dict(d, ceiling=d.get("ceiling") or "h2d_pinned_bw",
                             ceiling_samples_per_s=run.env["h2d_pinned_bw"] / d["bytes_per_sample"])
                n = norm(d)
                core = d.get("core_samples_per_s")
                boc = d.get("block_over_core")
                if boc is None and core and d.get("path") == "block":
                    boc = d["samples_per_s"] / core
                rows.append([d.get("detector"), fg_case(d) or "—", d.get("backend"), d.get("path"),
                             d.get("batch"),
                             num(d.get("samples_per_s")), d.get("bytes_per_sample", "—"),
                             code(n["ceiling"]), num(n["ceil"]), pct(n["ratio"]), num(core),
                             pct(boc) if boc is not None else "—"])
                # targets: the blocks as they run by default (page-locked buffers on CUDA)
                if d.get("path") == "block" and (d.get("backend") != "cuda"
                                                 or d.get("pinned_buffers", True)):
                    tag = ""
                    if rep:
                        tag = ", %s%s" % (rep[0], " " + run.label.replace("run ", "")
                                          if run.label else "")
                    blocks.append((d, n["ratio"], boc, tag))
            self.w(table(["detector", "case", "backend", "path", "batch", "samples/s",
                          "bytes/sample",
                          "ceiling", "ceiling samples/s", "of ceiling", "core samples/s",
                          "block / core"], rows), "")
        src = src_link(FLOWGRAPH_FOLDER)
        for d, ratio, boc, tag in blocks:
            if d.get("backend") == "cuda" and d.get("detector") in ("edges", "boxcar"):
                self.target("6", "%s CUDA block >= 50 %% of H2D bandwidth (batch %s%s)"
                            % (fg_name(d), d.get("batch"), tag), pct(ratio), src,
                            ratio is not None and ratio >= 0.5)
        for d, ratio, boc, tag in blocks:
            self.target("6", "%s %s block >= 70 %% of core (batch %s%s)"
                        % (fg_name(d), d.get("backend"), d.get("batch"), tag),
                        pct(boc) if boc is not None else "not measured", src,
                        None if boc is None else boc >= 0.7)
        self.w("![flowgraph](plots/perf_flowgraph.png)", "")
        C = "2026-11-22-cpu-edges-block"
        self.w("`edge_localizer_f` on the CPU backend, 2-core development machine (AMD EPYC, "
               "shared: runs vary up to 1.7x), before (%s) and after (%s) the block built its "
               "transition dicts only when needed and made its output optional; ceiling: one "
               "thread's memcpy."
               % (src_link(C, "before_dense.jsonl"), src_link(C, "final_dense.jsonl")), "")
        rows = []
        for f, when in (("before_dense.jsonl", "before"), ("before_sparse.jsonl", "before"),
                        ("final_dense.jsonl", "after"), ("final_sparse.jsonl", "after")):
            for run in self.data.runs(C, f):
                for d in results(run, type="flowgraph"):
                    if d.get("path") != "block":
                        continue
                    rows.append([when, run.label or "—", fg_case(d) or "—", num(d["samples_per_s"]),
                                 num(d.get("core_samples_per_s")),
                                 pct(d.get("block_over_core"))])
        self.w(table(["block", "run", "case", "samples/s", "core samples/s", "block / core"],
                     rows), "")
        self.spiir_block()
        B = "2026-11-22-h100-boxcar-block"
        self.w("`boxcar_search_ff` with the CUDA backend after its host path was made cheap per "
               "value (%s: the final block code, measured right after the change; the block "
               "before it is in %s): the clustering scans for values >= threshold and the "
               "search writes into the output buffers."
               % (src_link(B), src_link("2026-11-22-h100-flowgraph")), "")
        rows = []
        for f in ("flowgraph_fixed.jsonl", "flowgraph_white.jsonl"):
            for run in self.data.runs(B, f):
                for d in results(run, type="flowgraph"):
                    if d.get("path") != "block":
                        continue
                    rows.append([fg_case(d), d.get("batch"), num(d["samples_per_s"]),
                                 num(d.get("core_samples_per_s")),
                                 pct(d.get("block_over_core"))])
                    boc = d.get("block_over_core")
                    self.target("6", "boxcar (%s) cuda block >= 70 %% of core (batch %s), "
                                "the final code, run of 2026-11-22" % (fg_case(d), d.get("batch")),
                                pct(boc) if boc is not None else "not measured", src_link(B),
                                None if boc is None else boc >= 0.7)
        self.w(table(["case", "batch", "block samples/s", "core samples/s", "block / core"],
                     rows), "")

        def plot(plt):
            # One row per block (horizontal bars: the case names stay readable).
            fig, ax = plt.subplots(figsize=(8, 1.2 + 0.28 * len(blocks)))
            grouped_bars(ax, [fg_short(d) + tag for d, _, _, tag in blocks], [
                ("block", [d["samples_per_s"] for d, _, _, _ in blocks]),
                ("core", [d.get("core_samples_per_s") for d, _, _, _ in blocks]),
                ("ceiling (H2D or memcpy)", [norm(d)["ceil"] for d, _, _, _ in blocks])],
                horizontal=True)
            ax.set_xlabel("samples/s (64 channels: vectors/s)", fontsize=8)
            ax.tick_params(axis="x", labelsize=7)
            ax.set_title("GNU Radio flow graphs: block, core and ceiling", fontsize=9)
            ax.grid(True, axis="x", which="major", linewidth=0.4, alpha=0.5)
            ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
            fig.tight_layout()
            return fig
        self.plots["perf_flowgraph"] = plot

    # -- summary plots ----------------------------------------------------
    def summary_plots(self):
        speed = list(self.speedups)
        ceil = list(self.ceilings)

        def p_speed(plt):
            fig, ax = plt.subplots(figsize=(8, 0.32 * len(speed) + 1.2))
            y = list(range(len(speed)))[::-1]
            ax.barh(y, [s for _, s in speed], color=COLORS[1])
            ax.set_yticks(y)
            ax.set_yticklabels([lab for lab, _ in speed], fontsize=7)
            ax.set_xscale("log")
            ax.axvline(1.0, color="black", linewidth=0.8)
            for yy, (_, s) in zip(y, speed):
                ax.text(s, yy, " " + times(s), va="center", fontsize=7)
            ax.set_xlabel("speedup over the paper's design, same run")
            ax.set_title("Fastest variant over the paper-design baseline (final runs)", fontsize=9)
            ax.grid(True, axis="x", which="major", linewidth=0.4, alpha=0.5)
            fig.tight_layout()
            return fig

        def p_ceil(plt):
            fig, ax = plt.subplots(figsize=(8, 0.32 * len(ceil) + 1.2))
            y = list(range(len(ceil)))[::-1]
            ax.barh(y, [100 * r for _, r in ceil], color=COLORS[0])
            ax.set_yticks(y)
            ax.set_yticklabels([lab for lab, _ in ceil], fontsize=7)
            ax.set_xlim(0, 100)
            for yy, (_, r) in zip(y, ceil):
                ax.text(100 * r, yy, " " + pct(r), va="center", fontsize=7)
            ax.set_xlabel("% of the ceiling (binding ceiling of each row)")
            ax.set_title("Measured throughput as a share of its ceiling (final runs)", fontsize=9)
            ax.grid(True, axis="x", linewidth=0.4, alpha=0.5)
            fig.tight_layout()
            return fig
        self.plots["perf_speedup"] = p_speed
        self.plots["perf_ceiling"] = p_ceil

    # -- appendix ---------------------------------------------------------
    def appendix(self):
        self.w("## Every committed result, by file", "",
               "All result lines of every file under bench/results/, final runs first. "
               "`case` names the configuration; `ceiling` is the binding ceiling of the line.", "")
        srcs = sorted(self.data.sources, key=lambda s: (ROLE_ORDER[s.role], s.folder, s.file))
        for f in self.data.flowgraph_files:
            if f in FLOWGRAPH_FURTHER:
                self.file_block(FLOWGRAPH_FOLDER, f, REPEAT, FLOWGRAPH_FURTHER[f][1], None)
            else:
                self.file_block(FLOWGRAPH_FOLDER, f, FINAL, "GNU Radio end to end", None)
        for s in srcs:
            self.file_block(s.folder, s.file, s.role, s.reason, s.cpu)
        if self.data.unclassified:
            self.w("### Files not yet classified", "",
                   "These files are not named in `SOURCES` in scripts/perf_report.py; add them "
                   "there with their role (from the folder's README.md).", "")
            for folder, f in self.data.unclassified:
                self.file_block(folder, f, "unclassified", "", None)

    def file_block(self, folder, f, role, reason, cpu):
        self.w("<details><summary>%s/%s (%s)</summary>" % (folder, f, role), "")
        self.w("%s: %s" % (src_link(folder, f), reason or "not classified"), "")
        for run in self.data.runs(folder, f):
            t = generic_table(run)
            if not t:
                continue
            head = ("Run %s" % run.label) if run.label else ""
            if run.note and run.note.get("args"):
                head += " (`%s`)" % run.note["args"]
            self.w(("%s. " % head if head else "") + env_caption(run.env, cpu), "", t, "")
        self.w("</details>", "")


# --------------------------------------------------------------------------
# Plot helpers (fixed styling)
# --------------------------------------------------------------------------
COLORS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860"]


def series_color(name, i):
    low = name.lower()
    if "published" in low or "titan" in low:
        return "#8C8C8C"
    if "paper" in low:
        return COLORS[0]
    if "fast" in low or "block" in low or "measured" in low:
        return COLORS[1]
    if "core" in low:
        return COLORS[2]
    return COLORS[(i + 3) % len(COLORS)]


def grouped_bars(ax, labels, series, horizontal=False):
    """Log-scale grouped bars; a series named '...ceiling...' is drawn hollow,
    None values are left out. horizontal: one row per label, first on top."""
    k = len(series)
    width = 0.8 / k
    n = len(labels)
    slots = [n - 1 - j for j in range(n)] if horizontal else list(range(n))
    for i, (name, vals) in enumerate(series):
        off = (i - (k - 1) / 2.0) * width
        xs = [x - off if horizontal else x + off for x in slots]
        pts = [(x, v) for x, v in zip(xs, vals) if v]
        if not pts:
            continue
        hollow = "ceiling" in name
        color = series_color(name, i)
        style = dict(label=name, color="none" if hollow else color,
                     edgecolor="black" if hollow else color,
                     hatch="//" if hollow else None, linewidth=0.8)
        if horizontal:
            ax.barh([p[0] for p in pts], [p[1] for p in pts], height=width * 0.95, **style)
        else:
            ax.bar([p[0] for p in pts], [p[1] for p in pts], width=width * 0.95, **style)
    vals = [v for _, vs in series for v in vs if v]
    lim = (10 ** math.floor(math.log10(min(vals) * 0.9)),
           10 ** math.ceil(math.log10(max(vals) * 1.1))) if vals else None
    if horizontal:
        ax.set_yticks(slots)
        ax.set_yticklabels(labels, fontsize=6)
        ax.set_xscale("log")
        if lim:
            ax.set_xlim(*lim)
    else:
        ax.set_xticks(slots)
        ax.set_xticklabels(labels, fontsize=7)
        ax.set_yscale("log")
        if lim:
            ax.set_ylim(*lim)


def hline(ax, y, label, style="--"):
    ax.axhline(y, color="gray", linestyle=style, linewidth=1.0, label=label)


def finish(ax, title, ylabel):
    ax.set_title(title, fontsize=9)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.tick_params(axis="y", labelsize=7)
    ax.grid(True, axis="y", which="major", linewidth=0.4, alpha=0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.figure.tight_layout()


def write_plots(plots, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcdefaults()
    plt.rcParams.update({"font.family": "DejaVu Sans", "figure.dpi": 100, "savefig.dpi": 100,
                         "hatch.linewidth": 0.5, "svg.hashsalt": "perf"})
    os.makedirs(outdir, exist_ok=True)
    written = []
    for name in sorted(plots):
        fig = plots[name](plt)
        path = os.path.join(outdir, name + ".png")
        fig.savefig(path, metadata={"Software": None})
        plt.close(fig)
        written.append(path)
    return written


# --------------------------------------------------------------------------
def build(data):
    rep = Report(data)
    body = Report(data)  # sections are written first, the summary goes on top
    body.targets, body.speedups, body.ceilings, body.plots = (rep.targets, rep.speedups,
                                                              rep.ceilings, rep.plots)
    body.edges()
    body.boxcar()
    body.spiir()
    body.kalman()
    body.dedisp()
    body.flowgraph()
    body.appendix()
    rep.summary_plots()

    w = rep.w
    w("# Performance",
      "",
      "<!-- Generated by scripts/perf_report.py from bench/results/; do not edit by hand. -->",
      "",
      "Every benchmark result committed under `bench/results/`, each beside its ceiling, the "
      "paper-design baseline measured in the same run, and the paper's published number. "
      "Regenerate this page and its plots after adding results:",
      "",
      "```sh",
      "/usr/bin/python3 scripts/perf_report.py   # docs/performance.md, docs/plots/perf_*.png",
      "```",
      "",
      "The ctest `perf_report` fails when this page differs from what the script makes of "
      "`bench/results/`.",
      "",
      "## How measured",
      "",
      "- `transient-bench --detector <edges|boxcar|spiir|kalman> --json` (bench/) prints an `env` "
      "line, then one `result` line per variant and configuration, and `check` lines or `ok` "
      "fields (each variant compared with the reference). The per-detector harnesses "
      "(`bench/tuning/boxcar_kernels.c`, `bench/tuning/kalman_gpu_bench.c`) print the same "
      "kind of lines for the CUDA contexts alone.",
      "- The `env` line carries the GPU and CPU model and the ceilings measured in the same "
      "run (bench/bench_device.h): device read bandwidth (a read-only reduction), device "
      "copy bandwidth (read + write), host-to-device and device-to-host bandwidth from pinned "
      "memory, the GPU's FP32 FMA rate (FMA counted as 2 flop), one CPU core's read bandwidth "
      "and FP32 FMA rate. Rates are medians of repeated runs after a warm-up.",
      "- Each result line names its ceiling (`ceiling`, e.g. `device_read_bw/4` = device read "
      "bandwidth over 4 bytes per sample, `fp32_fma_flops/2/6` = FMA rate over 6 FMA per "
      "filter update), the ceiling in samples (or updates) per second and the ratio. Where a "
      "line gives two ceilings (bytes and operations), the lower one binds and is shown.",
      "- `baseline` and `speedup`: the paper's own GPU design (variant `cuda-paper`) or the "
      "reference, measured in the same run. The paper's published numbers were measured on "
      "older hardware and are shown for scale.",
      "- `device` = data already in GPU memory; `host-to-host` = input from ordinary (pageable) "
      "host memory and results back to it, copies included; `host` = CPU variants on one "
      "thread.",
      "- Which file of a folder is the final result and which are earlier runs or probes "
      "follows each folder's README.md and is written down in `SOURCES` in "
      "scripts/perf_report.py. Folders: %s." % ", ".join(src_link(f) for f in data.folders),
      "")
    for folder, why in sorted(NO_BENCH.items()):
        if folder in data.folders:
            w("(%s: %s, no benchmark lines.)" % (src_link(folder), why), "")
    for folder, rows in sorted(data.comparisons.items()):
        w("## Two builds compared: %s" % src_link(folder), "",
          "%s: median rate of each build, B/A, and each build's spread over its rounds "
          "((max - min) / median), the run-to-run noise B/A is judged against." %
          COMPARISONS[folder], "")
        w(table(["benchmark", "case", "A", "B", "B/A", "spread A", "spread B"],
                [[r["bench"], r["case"], "%.3g" % r["a_median"], "%.3g" % r["b_median"],
                  "%.3f" % r["b_over_a"], "%.1f %%" % (100 * r["a_spread"]),
                  "%.1f %%" % (100 * r["b_spread"])] for r in rows]), "")
    w("## Targets", "",
      "From issues 3 (boxcar), 4 (SPIIR), 5 (Kalman) and 6 (GNU Radio end to end); measured = "
      "the final run's figure. For issue 6 every flow graph run of the final code is listed "
      "(rates on the GPU host vary from process to process; what limits each miss: README.md "
      "of %s)." % src_link(FLOWGRAPH_FOLDER), "")
    w(table(["issue", "target", "measured", "source", "verdict"], rep.targets), "")
    w("## Summary", "",
      "![speedup over the paper design](plots/perf_speedup.png)", "",
      "![share of the ceiling](plots/perf_ceiling.png)", "")
    rep.md.extend(body.md)
    text = "\n".join(rep.md).rstrip("\n") + "\n"
    return text, rep.plots


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "performance.md"))
    ap.add_argument("--plots", default=os.path.join(ROOT, "docs", "plots"))
    ap.add_argument("--no-plots", action="store_true", help="write the markdown only")
    a = ap.parse_args(argv)
    data = Data(a.results)
    text, plots = build(data)
    os.makedirs(os.path.dirname(os.path.abspath(a.doc)), exist_ok=True)
    with open(a.doc, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s" % a.doc)
    if not a.no_plots:
        for p in write_plots(plots, a.plots):
            print("wrote %s" % p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
