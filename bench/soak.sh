#!/usr/bin/env bash
# Soak of every detector block (docs/reliability.md): SAMPLES samples (default
# 2e9) through each, resident memory sampled every second (bench/soak.py).
# Writes OUTDIR/<detector>.json (summary and trace) and OUTDIR/summary.jsonl;
# exit status 1 when a detector's memory was not flat or it read too few samples.
#   bench/soak.sh OUTDIR [SAMPLES] [BACKEND]
# Run from a configured build (BUILD, default ./build: its test_modules hold the
# Python package) with GNU Radio's Python (PYTHON, default /usr/bin/python3).
set -euo pipefail
out=${1:?usage: bench/soak.sh OUTDIR [SAMPLES] [BACKEND]}
samples=${2:-2e9}
backend=${3:-cpu}
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$src/build}
python=${PYTHON:-/usr/bin/python3}
mkdir -p "$out"
: >"$out/summary.jsonl"
status=0
for det in edges boxcar spiir kalman; do
    PYTHONPATH="$build/test_modules${PYTHONPATH:+:$PYTHONPATH}" \
        "$python" -B "$src/bench/soak.py" "$det" --samples "$samples" \
        --backend "$backend" --json "$out/$det.json" | tee -a "$out/summary.jsonl" || status=1
done
exit $status
