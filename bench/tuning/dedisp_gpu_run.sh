#!/usr/bin/env bash
# Dedispersion on a GPU host (nvcc, CMake, ninja, Python 3 + numpy; no GNU
# Radio), beside Heimdall in the same run: build libtransient with CUDA for
# sm_90 while Heimdall builds (HEIMDALL_DIR = its peer folder, run.sh
# there), run the filterbank/dedispersion tests (gpu_dedisp included),
# Heimdall's run.sh (REPS=3: its synthetic file and 29.fil), then
# transient-bench --detector dedisp on random spectra and on Heimdall's
# synthetic file and 29.fil (with and without zero-DM).
# Results in $OUT (default /tmp/dedisp-gpu): env.txt, build.log, ctest.log,
# bench_dedisp.jsonl, bench_dedisp_files.jsonl, bench.log, heimdall.jsonl
# (one line per file with Heimdall's per-stage timers), heimdall.tar.gz
# (run.sh's whole results folder).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
STEP_KILL_AFTER=5
BUILD=${TR_BUILD:-/tmp/build-dedisp}
RES=${OUT:-/tmp/dedisp-gpu}
HD=${HEIMDALL_DIR:?set HEIMDALL_DIR to the Heimdall peer folder}
HD_BUILD=/tmp/heimdall-build
gpu_init "$RES"
env_header date gpu:name,driver_version,memory.total,clocks.max.sm cpu_cores nvcc cmake
[ -f "$SRC/SOURCE_COMMIT" ] && echo "commit: $(cat "$SRC/SOURCE_COMMIT")" | tee -a "$ENV_TXT"

# Heimdall compiles on the CPUs while libtransient does (no GPU work yet).
mkdir -p "$RES/heimdall"
(BUILD_ONLY=1 BUILD=$HD_BUILD OUT=$RES/heimdall JOBS=8 "$HD/run.sh" >"$RES/heimdall/build_stdout.txt" 2>&1) &
hd_build=$!
build_core "$RES/build.log" 90 300 30 transient test_dedisp test_filterbank test_dedisp_plan \
    test_dedisp_cuda_host \
    transient-bench
wait "$hd_build"
echo "heimdall build: exit $?" | tee -a "$ENV_TXT"
BENCH=$BUILD/bench/transient-bench
if [ "$built" -eq 0 ]; then
    step "ctest dedisp, filterbank (gpu_dedisp included)" 180 "$RES/ctest.log" ctest \
        --test-dir "$BUILD" -R "dedisp|filterbank" --output-on-failure --no-tests=error
    grep -E "tests passed|tests failed|Failed|passed,|\*\*\*" "$RES/ctest.log" | tail -n 20
fi
step "heimdall run.sh (REPS=3)" 240 "$RES/heimdall/run_stdout.txt" env REPS=3 \
    BUILD="$HD_BUILD" OUT="$RES/heimdall" "$HD/run.sh"
cp "$RES/heimdall/heimdall.jsonl" "$RES/heimdall.jsonl"
cut -c1-900 "$RES/heimdall.jsonl"
if [ "$built" -eq 0 ]; then
    step "transient-bench --detector dedisp" 150 "$RES/bench.log" sh -c \
        "'$BENCH' --detector dedisp --json > '$RES/bench_dedisp.jsonl'"
    cat "$RES/bench_dedisp.jsonl"
    : >"$RES/bench_dedisp_files.jsonl"
    for zd in "" "--zero-dm"; do
        step "transient-bench dedisp --file synth.fil $zd" 120 "$RES/bench.log" sh -c \
            "'$BENCH' --detector dedisp --json --variants cuda-fast --samples 16384 --check 0 \
             --file '$HD_BUILD/synth.fil' --dm-max 2000 $zd >> '$RES/bench_dedisp_files.jsonl'"
        step "transient-bench dedisp --file 29.fil $zd" 60 "$RES/bench.log" sh -c \
            "'$BENCH' --detector dedisp --json --variants cuda-fast --samples 16384 --check 0 \
             --file '$SRC/examples/data/29.fil' --dm-max 2000 $zd >> '$RES/bench_dedisp_files.jsonl'"
    done
    cat "$RES/bench_dedisp_files.jsonl"
fi
tar -C "$RES" -czf "$RES/heimdall.tar.gz" heimdall && rm -rf "$RES/heimdall"
print_result
[ "${#failed[@]}" -eq 0 ]
