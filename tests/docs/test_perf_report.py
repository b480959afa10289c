#!/usr/bin/env python3
"""ctest perf_report: scripts/perf_report.py and docs/performance.md.

  (a) the script runs on the committed bench/results/ and writes the page and
      its plots (PNG files);
  (b) the committed docs/performance.md equals the regenerated page (markdown
      only: PNG bytes depend on the matplotlib version), and every plot it
      links is committed under docs/plots/;
  (c) with a made-up GNU Radio end-to-end folder (in a temporary copy of
      bench/results only) the "GNU Radio end to end" section shows its table,
      ceiling ratio, block/core ratio and target verdicts; without the folder
      it says "not measured yet"; an unlisted result file is shown as
      unclassified; a results tree missing a listed file is an error.

Usage: test_perf_report.py <source dir>. Exit 77 (skipped) when matplotlib is
missing, after the markdown checks, which need no matplotlib.
"""
import difflib
import json
import os
import re
import subprocess
import sys
import tempfile

FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run_script(src, results, outdir, plots=True):
    doc = os.path.join(outdir, "performance.md")
    cmd = [sys.executable, "-B", os.path.join(src, "scripts", "perf_report.py"),
           "--results", results, "--doc", doc, "--plots", os.path.join(outdir, "plots")]
    if not plots:
        cmd.append("--no-plots")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    text = None
    if p.returncode == 0 and os.path.exists(doc):
        with open(doc, encoding="utf-8") as f:
            text = f.read()
    return p, text


def plot_links(md):
    return sorted(set(re.findall(r"\(plots/(perf_[A-Za-z0-9_]+\.png)\)", md)))


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n"


FLOWGRAPH = "2026-11-26-h100-flowgraph"


def fixture_lines():
    """Made-up numbers for the test only: edges meets both targets, boxcar
    misses the H2D one, kalman on the CPU misses block/core."""
    env = {"type": "env", "gpu": "Fixture GPU", "cpu_model": "Fixture CPU",
           "h2d_pinned_bw": 5.0e10, "d2h_pinned_bw": 5.0e10}

    def fg(det, backend, path, sps, core, ceil=1.25e10):
        d = {"type": "flowgraph", "detector": det, "backend": backend, "path": path,
             "batch": 1048576, "samples": 1 << 28, "seconds": (1 << 28) / sps,
             "samples_per_s": sps, "bytes_per_sample": 4, "ceiling": "h2d_pinned_bw",
             "ceiling_samples_per_s": ceil, "ratio": sps / ceil,
             "core_samples_per_s": core}
        if path == "block":
            d["block_over_core"] = sps / core
        return d
    return [env,
            fg("edges", "cuda", "block", 8.75e9, 9.5e9),
            fg("edges", "cuda", "core", 9.5e9, 9.5e9),
            fg("boxcar", "cuda", "block", 3.0e9, 3.2e9),
            fg("kalman", "cpu", "block", 1.0e6, 2.0e6)]


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "..", ".."))
    results = os.path.join(src, "bench", "results")
    try:
        import matplotlib  # noqa: F401
        have_mpl = True
    except ImportError:
        have_mpl = False
        print("matplotlib missing: markdown checks only, then skip")

    with tempfile.TemporaryDirectory() as tmp:
        # (a) and (b)
        out = os.path.join(tmp, "real")
        p, text = run_script(src, results, out, plots=have_mpl)
        check(p.returncode == 0, "perf_report.py on bench/results exits 0 (stderr: %s)"
              % p.stderr.strip())
        if text is None:
            return finish(have_mpl)
        with open(os.path.join(src, "docs", "performance.md"), encoding="utf-8") as f:
            committed = f.read()
        if text != committed:
            diff = list(difflib.unified_diff(committed.splitlines(), text.splitlines(),
                                             "docs/performance.md (committed)",
                                             "regenerated", lineterm=""))
            print("\n".join(diff[:60]))
        check(text == committed, "docs/performance.md is what scripts/perf_report.py makes of "
              "bench/results/ (regenerate: /usr/bin/python3 scripts/perf_report.py)")
        check(not re.search(r"20\d\d-\d\d-\d\d[ T]\d\d:\d\d", text),
              "no timestamps in the page")
        check(tmp not in text and src not in text, "no absolute paths in the page")
        links = plot_links(text)
        check(len(links) >= 5, "the page links its plots (%d found)" % len(links))
        for name in links:
            check(os.path.isfile(os.path.join(src, "docs", "plots", name)),
                  "docs/plots/%s is committed" % name)
            if have_mpl:
                path = os.path.join(out, "plots", name)
                check(os.path.isfile(path) and is_png(path), "%s written as PNG" % name)
        if not os.path.isdir(os.path.join(results, FLOWGRAPH)):
            check("**Not measured yet**" in text and "| 6 |" in text,
                  "end-to-end section and targets say 'not measured yet' without %s" % FLOWGRAPH)
        for word in ("## Targets", "## Edge localizer", "## Boxcar single-pulse search",
                     "## SPIIR filter bank, single rate", "## SPIIR filter bank, multirate",
                     "## Kalman-bank detector", "## GNU Radio end to end", "## How measured"):
            check(word in text, "section %r present" % word)

        # (c) fixture: a copy of bench/results (links) plus a made-up folder
        fx = os.path.join(tmp, "results")
        os.makedirs(fx)
        for d in sorted(os.listdir(results)):
            if d != FLOWGRAPH and os.path.isdir(os.path.join(results, d)):
                os.symlink(os.path.join(results, d), os.path.join(fx, d))
        os.makedirs(os.path.join(fx, FLOWGRAPH))
        with open(os.path.join(fx, FLOWGRAPH, "flowgraph.jsonl"), "w") as f:
            for d in fixture_lines():
                f.write(json.dumps(d) + "\n")
        os.makedirs(os.path.join(fx, "2099-01-01-fixture-extra"))
        with open(os.path.join(fx, "2099-01-01-fixture-extra", "bench_extra.jsonl"), "w") as f:
            f.write(json.dumps({"type": "env", "gpu": "Fixture GPU"}) + "\n")
            f.write(json.dumps({"type": "result", "detector": "edges", "variant": "cuda-fast",
                                "backend": "cuda", "mode": "device", "samples_per_s": 1.0e9,
                                "ceiling": "device_read_bw/4",
                                "ceiling_samples_per_s": 4.0e9, "ratio": 0.25}) + "\n")
        out2 = os.path.join(tmp, "fixture")
        p, t2 = run_script(src, fx, out2, plots=have_mpl)
        check(p.returncode == 0, "perf_report.py on the fixture exits 0 (stderr: %s)"
              % p.stderr.strip())
        if t2 is not None:
            sec = t2.split("## GNU Radio end to end", 1)[-1].split("\n## ", 1)[0]
            check("Not measured yet" not in sec, "fixture: end-to-end results shown")
            check("Fixture GPU" in sec and "Fixture CPU" in sec and "H2D pinned 5.00e10 B/s" in sec,
                  "fixture: GPU, CPU and H2D bandwidth from the env line")
            check("| edges | — | cuda | block | 1048576 | 8.75e9 | 4 | `h2d_pinned_bw` | 1.25e10 | "
                  "70.0 % | 9.50e9 | 92.1 % |" in sec, "fixture: edges block row")
            check("| edges | — | cuda | core | 1048576 | 9.50e9 |" in sec, "fixture: edges core row")
            check("| kalman | — | cpu | block | 1048576 | 1.00e6 |" in sec and "50.0 % |" in sec,
                  "fixture: kalman block row with block/core 50 %")
            tg = t2.split("## Targets", 1)[-1].split("\n## ", 1)[0]
            check(re.search(r"\| 6 \| edges CUDA block >= 50 % of H2D bandwidth "
                            r"\(batch 1048576\) \| 70\.0 % \|[^\n]*\| met \|", tg),
                  "fixture: edges H2D target met")
            check(re.search(r"\| 6 \| boxcar CUDA block >= 50 % of H2D bandwidth "
                            r"\(batch 1048576\) \| 24\.0 % \|[^\n]*\| \*\*missed\*\* \|", tg),
                  "fixture: boxcar H2D target missed")
            check(re.search(r"\| 6 \| kalman cpu block >= 70 % of core \(batch 1048576\) \| "
                            r"50\.0 % \|[^\n]*\| \*\*missed\*\* \|", tg),
                  "fixture: kalman block/core target missed")
            check(re.search(r"\| 6 \| edges cuda block >= 70 % of core \(batch 1048576\) \| "
                            r"92\.1 % \|[^\n]*\| met \|", tg),
                  "fixture: edges block/core target met")
            check("not measured yet" not in tg, "fixture: no 'not measured yet' target left")
            check("### Files not yet classified" in t2 and
                  "2099-01-01-fixture-extra/bench_extra.jsonl" in t2,
                  "fixture: unlisted file shown as unclassified")
            check("not classified in SOURCES" in p.stderr, "fixture: unlisted file warned about")
            check("perf_flowgraph.png" in plot_links(t2), "fixture: flowgraph plot linked")
            if have_mpl:
                path = os.path.join(out2, "plots", "perf_flowgraph.png")
                check(os.path.isfile(path) and is_png(path), "fixture: perf_flowgraph.png written")
            check(t2.split("## Edge localizer")[0].count("| 6 |") >= 5,
                  "fixture: one target row per CUDA edges/boxcar block and per block")

        # a tree that lacks a file named in SOURCES is an error, not a silent gap
        bad = os.path.join(tmp, "bad")
        os.makedirs(bad)
        for d in sorted(os.listdir(results)):
            if d != "2026-11-22-h100-edges" and os.path.isdir(os.path.join(results, d)):
                os.symlink(os.path.join(results, d), os.path.join(bad, d))
        p, _ = run_script(src, bad, os.path.join(tmp, "bad-out"), plots=False)
        check(p.returncode != 0 and "missing" in p.stderr,
              "a results tree without a listed file fails with a message")
    return finish(have_mpl)


def finish(have_mpl):
    if FAILS:
        print("%d check(s) failed" % len(FAILS))
        return 1
    if not have_mpl:
        print("markdown checks passed; plots not checked (no matplotlib): skipped")
        return 77
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
