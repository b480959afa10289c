#!/usr/bin/env python3
"""ROC of the Kalman-bank detector beside an energy detector.

Reads the table `test_kalman --roc FILE` writes (lines: detector pfa pd; the
quality test of tests/core/kalman/test_kalman.c: AR(2) bursts of 91 samples in AR(2)
noise of the same spectral shape, N_s = 30) and writes docs/img/kalman_roc.png.
Needs matplotlib:  /usr/bin/python3 docs/plots/plot_kalman_roc.py [docs/data/kalman_roc.txt]
"""
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def finish_roc(fig, ax, title, out, title_size=8):
    """Finish a ROC figure and write it to out (also
    docs/plots/plot_kalman_fit_roc.py): the 1e-4 false-alarm line, labels,
    grid, legend, title."""
    ax.axvline(1e-4, color="grey", linestyle="--", linewidth=1, label="false-alarm rate 1e-4")
    ax.set_xlabel("false alarms per sample (noise only)")
    ax.set_ylabel("probability of detecting a burst")
    ax.set_ylim(0, 1.02)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(title, fontsize=title_size)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print("wrote", out)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "docs/data/kalman_roc.txt")
    curves = {}
    title = ""
    for line in open(path):
        if line.startswith("#"):
            title = line[1:].strip()
            continue
        name, pfa, pd = line.split()
        curves.setdefault(name, []).append((float(pfa), float(pd)))
    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    labels = {"kalman": "Kalman bank (LLR, eq. 15)", "energy": "energy detector (mean of x^2 over N_s)"}
    for name, pts in curves.items():
        pts.sort()
        ax.semilogx([p for p, _ in pts], [d for _, d in pts], marker=".", label=labels.get(name, name))
    finish_roc(fig, ax, "ROC, " + title.replace("detector pfa_per_sample pd ", ""),
               os.path.join(ROOT, "docs/img/kalman_roc.png"))


if __name__ == "__main__":
    main()
