#!/usr/bin/env python3
"""Plots of docs/spiir.md, written to docs/img/:

  spiir_impulse_response.png  a designed bank's summed impulse response against
                              the matched filter of its chirp template
  spiir_snr.png               |SNR| around a chirp injected into white noise:
                              the SPIIR bank (single rate and, when the core
                              supports it, multirate) and the exact FFT matched
                              filter
  spiir_throughput.png        filter updates per second of the variants beside
                              their ceiling, from the transient-bench JSON lines
                              of bench/results/2026-11-22-h100-spiir*/

Needs numpy and matplotlib; the SNR plot also needs the Python bindings
(gnuradio.transient, e.g. PYTHONPATH=<build>/test_modules).
    /usr/bin/python3 docs/plots/plot_spiir.py
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMG = os.path.join(ROOT, "docs", "img")

try:
    from gnuradio import transient
    from gnuradio.transient import spiir_design as sd
    HAVE_CORE = hasattr(transient, "spiir_filter")
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "python", "transient"))
    import spiir_design as sd  # noqa: E402
    transient = None
    HAVE_CORE = False

FS = 1024.0


def impulse_response_plot(chirp, result):
    n = len(chirp.h)
    g = sd.impulse_response(result.filters, FS, n + int(0.5 * FS))
    w = np.zeros(len(g), dtype=complex)
    w[:n] = np.conj(chirp.h[::-1])
    tau = np.arange(len(g)) / FS  # time before the chirp's end (s)
    fig, axes = plt.subplots(3, 1, figsize=(9, 8))
    ax = axes[0]
    ax.plot(tau, w.real, lw=0.6, color="0.6", label="matched filter Re w")
    ax.plot(tau, g.real, lw=0.4, color="#1f77b4", label="SPIIR sum Re g")
    ax.plot(tau, np.abs(g - w), lw=0.8, color="#d62728", label="|g - w|")
    ax.set_xlim(0, tau[-1])
    ax.set_title("Newtonian chirp %.0f-%.0f Hz in %.0f s (%.0f cycles) at %g Hz: %d filters, "
                 "match %.4f" % (chirp.f_low, chirp.f_high, chirp.duration, chirp.cycles, FS,
                                 len(result.filters), result.match), fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    for ax, (lo, hi), name in ((axes[1], (0.0, 0.15), "the chirp's end (high frequency)"),
                               (axes[2], (chirp.duration - 0.6, chirp.duration + 0.1),
                                "the chirp's start (low frequency)")):
        sl = (tau >= lo) & (tau <= hi)
        ax.plot(tau[sl], w.real[sl], lw=1.6, color="0.6", label="Re w")
        ax.plot(tau[sl], g.real[sl], lw=0.8, color="#1f77b4", label="Re g")
        ax.plot(tau[sl], np.abs(g - w)[sl], lw=0.8, color="#d62728", label="|g - w|")
        d = result.filters["delay"] / FS
        for x in d[(d >= lo) & (d <= hi)]:
            ax.axvline(x, color="k", lw=0.3, alpha=0.4)
        ax.set_xlim(lo, hi)
        ax.set_title("around %s; thin lines: filter delays" % name, fontsize=9)
    axes[-1].set_xlabel("lag m / rate (s): time before the chirp's end")
    fig.tight_layout()
    out = os.path.join(IMG, "spiir_impulse_response.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def snr_plot(chirp, design):
    if not HAVE_CORE:
        print("spiir_snr.png skipped: gnuradio.transient bindings not importable")
        return
    rng = np.random.default_rng(4)
    n = len(chirp.h) + int(6 * FS)
    end = len(chirp.h) + int(3 * FS)
    amp = 12.0
    x = rng.standard_normal(n).astype(np.float32)
    sd.inject(x, chirp.h, end, amp)
    a1, b0, delay, level, counts = design.bank.arrays()
    z = transient.spiir_filter(x, a1, b0, delay, level, counts, 1 / FS)[:, 0]
    exact = sd.matched_filter(x, chirp.h)
    curves = [("SPIIR, single rate", np.abs(z), 0, "#1f77b4")]
    try:
        zm = transient.spiir_filter(x, a1, b0, delay, level, counts, 1 / FS,
                                    multirate=True)[:, 0]
        lat = transient.spiir_latency(a1, b0, delay, level, counts, 1 / FS)
        curves.append(("SPIIR, multirate (latency %d removed)" % lat, np.abs(zm), lat,
                       "#2ca02c"))
    except (RuntimeError, ValueError) as e:
        print("multirate curve skipped: %s" % e)
    t = (np.arange(n) - end) / FS
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), gridspec_kw=dict(width_ratios=[2, 1]))
    for ax, half in ((axes[0], 2.5), (axes[1], 0.03)):
        sl = np.abs(t) <= half
        ax.plot(t[sl], np.abs(exact)[sl], color="0.6", lw=2.2, label="exact matched filter")
        for name, mag, lat, color in curves:
            tt = (np.arange(n) - lat - end) / FS
            s2 = np.abs(tt) <= half
            ax.plot(tt[s2], mag[s2], color=color, lw=0.9, label=name,
                    marker="." if half < 0.1 else None, ms=3)
        ax.axvline(0, color="k", lw=0.5, ls="--")
        ax.set_xlabel("time from the injected chirp's end (s)")
    axes[0].set_ylabel("|SNR|")
    axes[0].set_title("chirp (%.0f cycles) injected at amplitude %g into unit white noise; "
                      "expected SNR %.2f" % (chirp.cycles, amp, amp * design.results[0].match),
                      fontsize=9)
    axes[1].set_title("zoom: +-30 ms", fontsize=9)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    out = os.path.join(IMG, "spiir_snr.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def throughput_plot():
    paths = sorted(glob.glob(os.path.join(ROOT, "bench/results/2026-11-22-h100-spiir*",
                                          "bench_spiir*.jsonl")))
    if not paths:
        print("spiir_throughput.png skipped: no bench_spiir*.jsonl")
        return
    rows, env = {}, {}
    for p in paths:  # later directories override earlier ones
        for line in open(p):
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("type") == "env":
                env = r
            if r.get("type") != "result":
                continue
            bank = "%d x %d%s" % (r["templates"], r["filters"],
                                  " multirate" if r.get("multirate") else "")
            rows[(bank, r["variant"], r["mode"])] = r
    banks = sorted({k[0] for k in rows}, key=lambda b: (len(b), b))
    fig, axes = plt.subplots(1, len(banks), figsize=(5 * len(banks), 4.5), squeeze=False)
    for ax, bank in zip(axes[0], banks):
        res = [r for k, r in rows.items() if k[0] == bank]
        res.sort(key=lambda r: (r["mode"] != "host", r["mode"], r["variant"]))
        xs = range(len(res))
        colors = ["#888" if ("paper" in r["variant"] or r["variant"] == "reference") else
                  "#1f77b4" for r in res]
        ax.bar(xs, [r["updates_per_s"] for r in res], color=colors)
        for x, r in zip(xs, res):
            ax.hlines(r["ceiling_updates_per_s"], x - 0.4, x + 0.4, colors="k",
                      linestyles="--")
            pct = 100 * r["ratio"]
            label = ("%.0f%%" if pct >= 1 else "%.1f%%") % pct
            if r.get("speedup"):
                label += "\n%.1fx" % r["speedup"]
            ax.text(x, r["updates_per_s"] * 1.2, label, ha="center", fontsize=7)
        ax.set_yscale("log")
        ax.set_ylim(1e7, 2e13)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(["%s\n%s" % (r["variant"], r["mode"]) for r in res], fontsize=7,
                           rotation=30)
        ax.set_title("%s filters" % bank, fontsize=9)
    axes[0][0].set_ylabel("filter updates per second")
    fig.suptitle("SPIIR bank, %s / %s (one core)\nbars: measured (grey: baselines); dashed: "
                 "ceiling (6 FMA per update at the measured FMA rate); labels: share of the "
                 "ceiling, speedup over the baseline" % (env.get("gpu", "GPU"),
                                                         env.get("cpu_model", "CPU")),
                 fontsize=8)
    fig.tight_layout()
    out = os.path.join(IMG, "spiir_throughput.png")
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def main():
    os.makedirs(IMG, exist_ok=True)
    chirp = sd.newtonian_chirp(FS, 20.0, 200.0, duration=8.0)
    design = sd.design_bank([chirp.h], FS)
    impulse_response_plot(chirp, design.results[0])
    snr_plot(chirp, design)
    throughput_plot()


if __name__ == "__main__":
    main()
