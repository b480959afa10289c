#!/usr/bin/env python3
"""Signal loss of the boxcar search, predicted and measured, like Figures 10
and 11 of Adamek & Armour (2020).

Reads the CSV written by the predictor test and writes
docs/img/boxcar_loss_boxdit.png and docs/img/boxcar_loss_igrid.png:

    build/tests/core/boxcar/test_boxcar_predict --dump /tmp/boxcar_loss.csv 8192
    /usr/bin/python3 docs/plots/plot_boxcar_loss.py /tmp/boxcar_loss.csv

The "measured" columns are the noise-free slide of a rectangular pulse over
every offset (section 4.1), computed from the exact coverage of every
evaluated boxcar (checked against direct summation by the test). Needs
matplotlib (Debian: python3-matplotlib).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAMILIES = {
    "boxdit": ("BoxDIT", ["BD-32", "BD-16", "BD-8"]),
    "igrid": ("IGRID", ["IG(3)", "IG(2)", "IG(1)"]),
}


def load(path):
    data = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            d = data.setdefault(row["config"], {})
            for k, v in row.items():
                if k != "config":
                    d.setdefault(k, []).append(float(v))
    return data


def plot_family(data, key, outdir):
    title, configs = FAMILIES[key]
    configs = [c for c in configs if c in data]
    fig, axes = plt.subplots(len(configs), 2, figsize=(12, 3.2 * len(configs)), squeeze=False)
    for row, name in enumerate(configs):
        d = data[name]
        S = d["S"]
        ax = axes[row][0]
        pct = lambda v: [100.0 * x for x in v]  # noqa: E731
        ax.plot(S, pct(d["meas_psi_w"]), color="tab:blue", lw=0.8, label="measured $\\Psi_w$")
        ax.plot(S, pct(d["psi_w"]), color="black", lw=0.6, ls="--", label="predicted $\\Psi_w$ (eq. 31)")
        ax.plot(S, pct(d["meas_psi_1"]), color="tab:red", lw=1.4, label="measured $\\Psi_1$")
        ax.plot(S, pct(d["psi_1"]), color="grey", lw=0.6, ls=":", label="predicted $\\Psi_1$ (eq. 24)")
        ax.plot(S, pct(d["mean_meas_psi_w"]), color="tab:orange", lw=1.4,
                label="cumulative mean $\\langle\\Psi_w\\rangle$ (eq. 19)")
        ax.plot(S, pct(d["mean_meas_psi_1"]), color="tab:purple", lw=1.4,
                label="cumulative mean $\\langle\\Psi_1\\rangle$")
        ax.set_xscale("log")
        ax.set_xlim(1, max(S))
        ax.set_ylim(bottom=0)
        ax.set_ylabel("signal loss [%]")
        ax.set_title(f"{name}: signal loss (L_end = {int(d['lend'][0])})")
        ax.grid(alpha=0.3)
        if row == 0:
            ax.legend(fontsize=7, loc="upper left")
        ax = axes[row][1]
        ax.plot(S, pct(d["width_err_worst"]), color="tab:green", lw=0.8, label="width error, worst position")
        ax.plot(S, pct(d["time_err_worst"]), color="tab:brown", lw=0.8, label="time error, worst position")
        ax.plot(S, pct(d["width_err_best"]), color="tab:olive", lw=0.8, alpha=0.7, label="width error, best position")
        ax.set_xscale("log")
        ax.set_xlim(1, max(S))
        ax.set_ylabel("error [% of pulse width]")
        ax.set_title(f"{name}: detected width and time (boxcar centre - pulse centre)")
        ax.grid(alpha=0.3)
        if row == 0:
            ax.legend(fontsize=7, loc="upper right")
    for ax in axes[-1]:
        ax.set_xlabel("pulse width S [samples]")
    fig.suptitle(f"{title}: rectangular pulses, noise-free model (mu = 0, sigma = 1)")
    fig.tight_layout()
    out = os.path.join(outdir, f"boxcar_loss_{key}.png")
    fig.savefig(out, dpi=80)
    print("wrote", out)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    data = load(sys.argv[1])
    outdir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "docs", "img")
    os.makedirs(outdir, exist_ok=True)
    for key in FAMILIES:
        plot_family(data, key, outdir)


if __name__ == "__main__":
    main()
