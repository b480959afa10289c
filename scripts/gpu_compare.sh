#!/usr/bin/env bash
# Two builds of transient-bench side by side on one GPU host: did a change make
# any detector slower? Runs every case of CASES below with build A (the
# baseline) and build B (the candidate) in alternation, ROUNDS times, so that
# both see the same GPU, clocks and host load, then prints B/A per case beside
# each build's spread over its rounds (the run-to-run noise):
#
#   scripts/gpu_compare.sh A B OUTDIR [ROUNDS [FIRST]]
#
# A and B are transient-bench programs, or bundles from scripts/make_bundle.sh
# (tarball or folder) holding transient-bench. Rounds are numbered from FIRST
# (default 1), so that runs split over several sessions can be pooled in one
# folder. Writes into OUTDIR:
#   NAME.A.R.jsonl, NAME.B.R.jsonl  transient-bench --json of case NAME, round R
#   bench.stderr                    the benchmarks' diagnostics
#   command.txt                     every command line
#   compare.txt, compare.jsonl      the table (scripts/bench_compare.py)
#   nvidia-smi.txt                  the GPU
# TR_COMPARE_ONLY="edges kalman" limits the run to the cases named.
# Exit status: 1 when a benchmark failed (its own checks included).
set -uo pipefail

if [ $# -lt 3 ]; then
    sed -n '2,21p' "$0"
    exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$3
rounds=${4:-2}
first=${5:-1}
mkdir -p "$out"

# A program, a bundle folder or a bundle tarball -> a command prefix.
resolve() {
    local p=$1 dir
    if [ -f "$p" ] && [ -x "$p" ]; then
        echo "$p"
    elif [ -f "$p" ]; then
        dir=$(mktemp -d)
        tar -C "$dir" -xzf "$p"
        echo "$(echo "$dir"/*)/run transient-bench"
    else
        echo "$p/run transient-bench"
    fi
}
A=$(resolve "$1")
B=$(resolve "$2")

# name | arguments (CPU fast and CUDA variants; the reference is not timed here).
CASES=(
    "edges|--detector edges --samples 268435456 --repeat 5 --variants cpu-fast,cuda-fast,cuda-paper"
    "spiir|--detector spiir --repeat 5 --variants cpu-fast,cuda-fast,cuda-paper"
    "spiir_multirate|--detector spiir --multirate --repeat 3 --variants cpu-fast,cuda-fast"
    "boxcar|--detector boxcar --configs bd32,aa,ig1 --variants cpu-fast,cuda-fast,cuda-paper"
    "kalman|--detector kalman --seconds 0.5 --variants cpu-fast,cuda-fast,cuda-paper"
    "spiir_triggers|--detector spiir-triggers --seconds 0.5"
)

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv \
    >"$out/nvidia-smi.txt" 2>&1
: >"$out/command.txt"
status=0
for r in $(seq "$first" $((first + rounds - 1))); do
    for c in "${CASES[@]}"; do
        name=${c%%|*}
        args=${c#*|}
        if [ -n "${TR_COMPARE_ONLY:-}" ] && [[ " $TR_COMPARE_ONLY " != *" $name "* ]]; then
            continue
        fi
        for build in A B; do
            prog=$A
            [ "$build" = B ] && prog=$B
            echo "$prog $args --json > $name.$build.$r.jsonl" >>"$out/command.txt"
            echo "== $name $build round $r" >>"$out/bench.stderr"
            # shellcheck disable=SC2086 # program prefix and arguments
            timeout 300 $prog $args --json >"$out/$name.$build.$r.jsonl" 2>>"$out/bench.stderr"
            rc=$?
            echo "== exit $rc" >>"$out/bench.stderr"
            [ $rc -eq 0 ] || { status=1; echo "$name $build round $r: exit $rc"; }
        done
    done
done
python3 "$here/bench_compare.py" --json "$out/compare.jsonl" "$out" | tee "$out/compare.txt"
exit $status
