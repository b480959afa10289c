#!/usr/bin/env python3
"""Compare transient-bench results of two builds measured in the same run.

    bench_compare.py [--json OUT] RUN_DIR

RUN_DIR holds files NAME.A.R.jsonl (build A = baseline, B = candidate, round
R = 1, 2, ...) written by scripts/gpu_compare.sh. For every benchmark case (a
result line's fields other than the measured ones) it prints the median rate
of each build, B/A, and the spread of each build over its rounds, which is the
run-to-run noise that B/A must be judged against. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import statistics
import sys

# Fields that name a benchmark case (the others are measured, or follow from
# the run's length, which time-limited benchmarks choose themselves).
CASE_FIELDS = ("detector", "config", "algorithm", "widths", "variant", "backend", "kernel",
               "mode", "layout", "nchan", "templates", "filters", "multirate", "M", "Q",
               "threads", "window", "threshold", "batch", "max_width")
RATE_KEYS = ("samples_per_s", "updates_per_s")


def case_key(row):
    return tuple((k, row[k]) for k in CASE_FIELDS if k in row)


def rate(row):
    for k in RATE_KEYS:
        if k in row:
            return k, float(row[k])
    return None, None


def load(run_dir):
    data = {}  # (name, key) -> {"A": [rates], "B": [rates]}, plus the rate name
    pat = re.compile(r"(.+)\.([AB])\.(\d+)\.jsonl$")
    for path in sorted(glob.glob(os.path.join(run_dir, "*.jsonl"))):
        m = pat.match(os.path.basename(path))
        if not m:
            continue
        name, build = m.group(1), m.group(2)
        with open(path) as f:
            for line in f:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                if row.get("type") != "result":
                    continue
                rk, rv = rate(row)
                if rk is None:
                    continue
                entry = data.setdefault((name, case_key(row)),
                                        {"A": [], "B": [], "rate": rk, "row": row})
                entry[build].append(rv)
    return data


def spread(v):
    """(max - min) / median over rounds; 0 with one round."""
    if len(v) < 2:
        return 0.0
    return (max(v) - min(v)) / statistics.median(v)


def describe(row):
    return " ".join(f"{k}={row[k]}" for k in CASE_FIELDS if k in row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir")
    ap.add_argument("--json", help="write the table as JSON lines here")
    a = ap.parse_args()
    data = load(a.run_dir)
    if not data:
        print(f"{a.run_dir}: no result lines", file=sys.stderr)
        return 1
    rows = []
    print(f"{'B/A':>6} {'A median':>11} {'B median':>11} {'A spread':>8} {'B spread':>8}  case")
    for (name, _), e in sorted(data.items(), key=lambda kv: (kv[0][0], describe(kv[1]["row"]))):
        if not e["A"] or not e["B"]:
            continue
        ma, mb = statistics.median(e["A"]), statistics.median(e["B"])
        r = mb / ma if ma > 0 else float("nan")
        out = {"bench": name, "case": describe(e["row"]), "rate": e["rate"],
               "a": e["A"], "b": e["B"], "a_median": ma, "b_median": mb, "b_over_a": r,
               "a_spread": spread(e["A"]), "b_spread": spread(e["B"])}
        rows.append(out)
        print(f"{r:6.3f} {ma:11.4g} {mb:11.4g} {100 * out['a_spread']:7.1f}% "
              f"{100 * out['b_spread']:7.1f}%  {name}: {out['case']}")
    if a.json:
        with open(a.json, "w") as f:
            for o in rows:
                f.write(json.dumps(o) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
