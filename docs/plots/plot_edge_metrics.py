#!/usr/bin/env python3
"""IEEE Std 181 metrics of the real I2C recording (examples/data/i2c_sda_analog_8MHz.sr):
rise and fall time histograms and the time-interval error against time.

Writes docs/img/edge_metrics_i2c.png with gr-transient's own helpers
(gnuradio.transient.edge_metrics, edge_tie). Needs GNU Radio's Python and
matplotlib (Debian: python3-matplotlib); from a build tree:
  PYTHONPATH=build/test_modules /usr/bin/python3 docs/plots/plot_edge_metrics.py
"""
import os

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from gnuradio import transient  # noqa: E402
from gnuradio.transient import sigrok  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# IEEE 181 boundaries of the whole record (examples/data/README.md).
LOW, MID, HIGH = 0.257, 1.530, 2.803
TIE_WINDOW = 16  # transitions of one polarity per least-squares clock


def main():
    rec = sigrok.read_sr(os.path.join(ROOT, "examples/data/i2c_sda_analog_8MHz.sr"))
    x, rate = rec.analog["SDA analog"], rec.samplerate
    m = transient.edge_metrics(x, LOW, MID, HIGH)
    us = 1e6 / rate
    rise = m["duration"][(m["polarity"] > 0) & np.isfinite(m["duration"])] * us
    fall = m["duration"][(m["polarity"] < 0) & np.isfinite(m["duration"])] * us
    # The ideal clock: the unit interval (80-100 samples: I2C at 80-100 kHz)
    # that minimises the RMS TIE of both polarities, one least-squares clock
    # per TIE_WINDOW transitions of a polarity.
    t = {p: m["time"][m["polarity"] == p] for p in (1, -1)}
    grid = np.arange(80.0, 100.0, 0.05)
    cost = [sum(transient.edge_tie(t[p], u, TIE_WINDOW)[1] ** 2 for p in t) for u in grid]
    ui = float(grid[int(np.argmin(cost))])
    tie = {p: transient.edge_tie(t[p], ui, TIE_WINDOW) for p in t}
    fig, ax = plt.subplots(1, 3, figsize=(13, 3.8))
    bins = np.arange(0.9, 1.9, 0.01)  # the power-up edge (4.2 us) lies beyond
    ax[0].hist(rise, bins=bins, color="#1f77b4")
    ax[0].set_title("rise time 10-90 %%: median %.2f us (%d)" % (np.median(rise), len(rise)))
    ax[1].hist(fall, bins=bins, color="#d62728")
    ax[1].set_title("fall time 90-10 %%: median %.2f us (%d)" % (np.median(fall), len(fall)))
    for a in ax[:2]:
        a.set_xlabel("us (interpolated; a sample is 0.125 us)")
        a.set_ylabel("transitions")
    for p, color, name in ((1, "#1f77b4", "rising"), (-1, "#d62728", "falling")):
        tie_p, rms, pp = tie[p]
        ax[2].plot(t[p] / rate, tie_p * us, ".", ms=2, color=color,
                   label="%s: RMS %.2f us, p-p %.1f us" % (name, rms * us, pp * us))
    ax[2].legend(fontsize=8, markerscale=4)
    ax[2].set_title("TIE, clock %.2f us fitted per %d edges" % (ui * us, TIE_WINDOW),
                    fontsize=10)
    ax[2].set_xlabel("time (s)")
    ax[2].set_ylabel("TIE (us)")
    fig.suptitle("IEEE 181 metrics of the I2C SDA recording (%d transitions)" % len(m))
    fig.tight_layout()
    out = os.path.join(ROOT, "docs/img/edge_metrics_i2c.png")
    fig.savefig(out, dpi=100)
    print("wrote %s: rise median %.3f us, fall median %.3f us, ui %.2f samples, "
          "TIE RMS rising %.3f us, falling %.3f us" % (out, np.median(rise), np.median(fall),
                                                     ui, tie[1][1] * us, tie[-1][1] * us))

if __name__ == "__main__":
    main()
