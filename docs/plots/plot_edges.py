#!/usr/bin/env python3
"""Throughput of the edge localizer's variants beside their ceilings.

Reads transient-bench JSON lines (default: the newest
bench/results/*/bench_edges.jsonl) and writes docs/img/edges_throughput.png.
Needs matplotlib (Debian: python3-matplotlib):  python3 docs/plots/plot_edges.py [file.jsonl]
"""
import glob
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    paths = sys.argv[1:] or sorted(glob.glob(os.path.join(ROOT, "bench/results/*/bench_edges.jsonl")))
    if not paths:
        sys.exit("no bench_edges.jsonl found")
    rows = [json.loads(line) for line in open(paths[-1]) if line.strip()]
    env = next(r for r in rows if r.get("type") == "env")
    res = [r for r in rows if r.get("type") == "result"]
    labels = [f"{r['variant']}\n{r['mode']}" for r in res]
    rate = [r["samples_per_s"] for r in res]
    ceil = [r["ceiling_samples_per_s"] for r in res]

    fig, ax = plt.subplots(figsize=(9, 4.5))
    xs = range(len(res))
    ax.bar(xs, rate, color=["#888" if "paper" in r["variant"] or r["variant"] == "reference"
                            else "#1f77b4" for r in res])
    for x, c, r in zip(xs, ceil, res):
        ax.hlines(c, x - 0.4, x + 0.4, colors="k", linestyles="--")
        ax.text(x, r["samples_per_s"] * 1.15, f"{100 * r['ratio']:.0f}%", ha="center", fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("samples per second")
    ax.set_title(f"edge localizer, 2^28 samples, {env.get('gpu', 'GPU')} / {env.get('cpu_model', 'CPU')}\n"
                 "bars: measured (grey: baselines); dashed: ceiling (read bandwidth or PCIe / 4 B); "
                 "label: share of ceiling", fontsize=9)
    fig.tight_layout()
    out = os.path.join(ROOT, "docs/img/edges_throughput.png")
    fig.savefig(out, dpi=110)
    print(out)


if __name__ == "__main__":
    main()
