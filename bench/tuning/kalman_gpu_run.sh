#!/usr/bin/env bash
# Kalman-bank detector on a GPU host (nvcc, CMake, ninja; no GNU Radio): build
# libtransient with CUDA for sm_90, run the Kalman GPU tests and the Kalman C
# tests, transient-bench --detector kalman --json (when it builds), the stand-
# alone bench/tuning/kalman_gpu_bench.c, and compute-sanitizer on a small case.
# Results go to $OUT (default /tmp/kalman-gpu): env.txt (GPU, versions, every
# command), build.log, ctest.log, bench_kalman.jsonl (transient-bench, default
# batch), bench_kalman_batch1m.jsonl (transient-bench, CUDA variants, batch
# 2^20), kalman_gpu_bench.jsonl, bench.log, tools.log (compute-sanitizer, and
# Nsight Compute on the normaliser and diagonal kernels when ncu is there).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
STEP_KILL_AFTER=5
BUILD=${TR_BUILD:-$SRC/build-gpu}
RES=${OUT:-/tmp/kalman-gpu}
gpu_init "$RES"
env_header date gpu:name,driver_version,memory.total,clocks.max.sm cpu_cores nvcc cmake

build_core "$RES/build.log" 90 200 30 transient test_kalman test_kalman_model test_kalman_gpu \
    test_kalman_batched_host transient-bench kalman_gpu_bench
if [ "$built" -eq 0 ]; then
    step "ctest -L gpu -R kalman" 150 "$RES/ctest.log" ctest --test-dir "$BUILD" -L gpu \
        -R kalman --output-on-failure --no-tests=error
    step "ctest gpu_kalman_cuda, one stream" 90 "$RES/ctest.log" env TR_KALMAN_CUDA_SERIAL=1 \
        ctest --test-dir "$BUILD" -R gpu_kalman_cuda --output-on-failure --no-tests=error
    step "ctest kalman (CPU)" 120 "$RES/ctest.log" ctest --test-dir "$BUILD" -R kalman \
        -LE gpu --output-on-failure -j 4
    grep -E "tests passed|tests failed|Failed|\*\*\*|worst" "$RES/ctest.log" | tail -n 40
    step "kalman_gpu_bench" 150 "$RES/bench.log" sh -c \
        "'$BUILD/bench/tuning/kalman_gpu_bench' > '$RES/kalman_gpu_bench.jsonl'"
    cat "$RES/kalman_gpu_bench.jsonl"
    step "transient-bench --detector kalman" 150 "$RES/bench.log" sh -c \
        "'$BUILD/bench/transient-bench' --detector kalman --json > '$RES/bench_kalman.jsonl'"
    cat "$RES/bench_kalman.jsonl"
    step "transient-bench --detector kalman, CUDA, batch 2^20" 90 "$RES/bench.log" sh -c \
        "'$BUILD/bench/transient-bench' --detector kalman --json --variants cuda-fast,cuda-paper \
         --batch 1048576 > '$RES/bench_kalman_batch1m.jsonl'"
    cat "$RES/bench_kalman_batch1m.jsonl"
    if command -v compute-sanitizer >/dev/null; then
        step "compute-sanitizer memcheck" 120 "$RES/tools.log" compute-sanitizer \
            --tool memcheck --error-exitcode 1 "$BUILD/bench/tuning/kalman_gpu_bench" --M 40,300,3000 \
            --samples 20000 --paper-samples 100 --repeat 1 --no-ceilings
        step "compute-sanitizer racecheck" 90 "$RES/tools.log" compute-sanitizer \
            --tool racecheck --error-exitcode 1 "$BUILD/bench/tuning/kalman_gpu_bench" --M 40,300 \
            --samples 3000 --paper-samples 50 --repeat 1 --no-ceilings
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$RES/tools.log"
    fi
    if command -v ncu >/dev/null; then
        step "ncu normaliser M=92" 90 "$RES/tools.log" ncu --clock-control none \
            -k regex:lx_warp_kernel -c 2 --section SpeedOfLight --section WarpStateStats \
            --section LaunchStats "$BUILD/bench/tuning/kalman_gpu_bench" --M 92 --samples 2000000 \
            --paper-samples 50 --repeat 1 --no-ceilings
        step "ncu diagonals, LLR M=10756" 120 "$RES/tools.log" ncu --clock-control none \
            -k regex:"diag_kernel|llr_kernel" -c 2 --section SpeedOfLight \
            --section WarpStateStats --section Occupancy --section LaunchStats \
            "$BUILD/bench/tuning/kalman_gpu_bench" --M 10756 --samples 400000 --paper-samples 20 \
            --repeat 1 --no-ceilings
    fi
    cat "$RES/bench.log"
fi
print_result
[ "${#failed[@]}" -eq 0 ]
