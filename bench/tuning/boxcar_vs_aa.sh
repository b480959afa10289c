#!/usr/bin/env bash
# The FAST boxcar kernel beside AstroAccelerate's SPDT on one GPU host, in one
# go (about 6 minutes on an H100): build libtransient with CUDA (sm_90), run
# the boxcar GPU tests, the kernel sweep (bench/tuning/boxcar_kernels.c) and
# transient-bench --detector boxcar at 256 x 131072 and 1024 x 262144, the
# AstroAccelerate harness (AA=folder holding the peer's run.sh and
# bench_aa_spd.cu) at the same sizes, optionally Nsight Compute on one FAST
# launch per case (TR_PROFILE=1, cases TR_PROFILE_CASES) and compute-sanitizer
# (TR_SANITIZE=1), per-instruction counts of the first case (TR_PROFILE_SASS=1);
# then the side-by-side table (bench/tuning/boxcar_vs_aa.py).
#   AA=/path/to/astroaccelerate OUT=dir bench/tuning/boxcar_vs_aa.sh
# Results in $OUT (default bench/results/boxcar-vs-aa-latest/): env.txt,
# table.md, table.json, ncu_sass_summary.txt (bench/tuning/sass_summary.py,
# TR_PROFILE_SASS=1), and raw.tar.gz (build/ctest logs, kernels_*.jsonl,
# bench_*.jsonl, aa_*/ folders, ncu.txt, ncu_sass.txt, sanitizer.log).
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-$SRC/build-gpu}
RESULTS=${OUT:-$SRC/bench/results/boxcar-vs-aa-latest}
RAW=$RESULTS/raw
AA=${AA:?AA must name the AstroAccelerate harness folder}
gpu_init "$RESULTS"
mkdir -p "$RAW"
env_header date host gpu:index,name,driver_version,memory.total,clocks.max.sm nvcc cmake source
# a copy without .git names its commit in TR_COMMIT
[ -z "${TR_COMMIT:-}" ] || echo "commit: $TR_COMMIT" | tee -a "$ENV_TXT"

build_core "$RAW/build.log" 120 240 60 transient test_boxcar test_boxcar_gpu \
    transient-bench boxcar_kernels
# the peer builds (CPU only) while the GPU tests run
(BUILD_ONLY=1 BUILD=$RAW/aa_build OUT=$RAW/aa_build_log bash "$AA/run.sh" >/dev/null 2>&1) &
aa_pid=$!

KB=$BUILD/bench/tuning/boxcar_kernels
BENCH=$BUILD/bench/transient-bench
if [ "$built" -eq 0 ]; then
    step "ctest gpu boxcar" 150 "$RAW/ctest.log" \
        ctest --test-dir "$BUILD" -L gpu -R boxcar --output-on-failure
fi
wait "$aa_pid"
echo "peer build: exit $?" | tee -a "$ENV_TXT"
AAB=$RAW/aa_build/bench_aa_spd
SIZES=${TR_SIZES:-"256:131072:7 1024:262144:5"}
for sz in $SIZES; do
    IFS=: read -r nc ns reps <<<"$sz"
    tag=${nc}x$ns
    if [ "$built" -eq 0 ]; then
        step "kernels $tag" 120 "$RAW/kernels_$tag.jsonl" "$KB" "$nc" "$ns" "$reps"
        step "transient-bench $tag" 90 "$RAW/bench_$tag.jsonl" "$BENCH" --detector boxcar \
            --json --nchan "$nc" --samples "$ns" --variants cuda-fast,cuda-paper \
            --configs aa,bd32,bd16,bd8,ig1 --repeat "$reps"
    fi
    if [ -x "$AAB" ]; then
        mkdir -p "$RAW/aa_$tag"
        pushd "$RAW/aa_$tag" >/dev/null && step "AstroAccelerate $tag" 150 "$RAW/aa_$tag/aa_spd.log" \
            "$AAB" --dms "$nc" --samples "$ns" --analysis 0 --reps 20; popd >/dev/null
        grep '^{"peer"' "$RAW/aa_$tag/aa_spd.log" >"$RAW/aa_$tag.jsonl"
    fi
done
if [ "$built" -eq 0 ] && [ "${TR_PROFILE:-0}" = 1 ] && command -v ncu >/dev/null; then
    for case in ${TR_PROFILE_CASES:-"BD-32" "BD-AA"}; do
        echo "==== ncu $case" >>"$RAW/ncu.txt"
        step "ncu $case" 120 "$RAW/ncu.txt" ncu --clock-control none --set full \
            -k regex:fast_kernel --launch-skip 1 --launch-count 1 \
            "$KB" 256 131072 1 "$case" 8192 1 8
    done
    # executions per SASS instruction of the first case (TR_PROFILE_SASS=1)
    if [ "${TR_PROFILE_SASS:-0}" = 1 ]; then
        set -- ${TR_PROFILE_CASES:-"BD-32"}
        step "ncu SASS $1" 120 "$RAW/ncu_sass.txt" ncu --clock-control none \
            --section SourceCounters --section InstructionStats --page source \
            --print-source sass -k regex:fast_kernel --launch-skip 1 --launch-count 1 \
            "$KB" 256 131072 1 "$1" 8192 1 8
        # the listing is several MB: opcode totals and hot blocks are what a results folder keeps
        python3 "$SRC/bench/tuning/sass_summary.py" "$RAW/ncu_sass.txt" \
            >"$RESULTS/ncu_sass_summary.txt"
    fi
fi
if [ "$built" -eq 0 ] && [ "${TR_SANITIZE:-0}" = 1 ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
        step "compute-sanitizer $tool" 90 "$RAW/sanitizer.log" \
            compute-sanitizer --tool "$tool" --error-exitcode 1 "$BENCH" --detector boxcar \
            --nchan 3 --samples 12000 --max-width 700 --configs aa,bd32,bd16,bd8,ig1 \
            --variants cuda-fast --repeat 1 --ref-samples 2000 --batch 5000
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$RAW/sanitizer.log"
fi
grep -E "tests passed|tests failed|Failed|\*\*\*" "$RAW/ctest.log" | head -n 40
python3 "$SRC/bench/tuning/boxcar_vs_aa.py" "$RAW" "$RESULTS" 2>&1 | tee -a "$ENV_TXT"
print_result | tee -a "$ENV_TXT"
tar -C "$RESULTS" -czf "$RESULTS/raw.tar.gz" raw && rm -rf "$RAW"
[ "${#failed[@]}" -eq 0 ]
