#!/usr/bin/env bash
# SPIIR CUDA speed work on a GPU host, in one go: build the core with CUDA
# (sm_90, GNU Radio off; only the SPIIR targets), run the SPIIR tests (gpu ones
# included), transient-bench for the single-rate banks (4096 x 512, 4096 x 8)
# and the multirate bank (steps of 4096 and 131072 samples), optional shape
# comparisons (TR_SPIIR_CUDA_SHAPE, see cuda/spiir/spiir_cuda.cu), Nsight Compute
# counters of the FAST kernels when ncu is there, and compute-sanitizer
# memcheck on small runs. Results in $OUT (else bench/results/): env.txt,
# ctest.log, bench_spiir.jsonl, bench.log, ncu.txt, sanitizer.log,
# summary.txt. SWEEP=0 skips the shape comparisons, NCU=0 the profiler.
# The GPU tests and some benchmarks run again with TR_SPIIR_CUDA_SEGMENT=0
# (whole batches per thread for small banks too).
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
STEP_KILL_AFTER=5
BUILD=${TR_BUILD:-/tmp/build-spiir}
RESULTS=${OUT:-$SRC/bench/results}
SWEEP=${SWEEP:-1}
NCU=${NCU:-1}
gpu_init "$RESULTS"
JSON=$RESULTS/bench_spiir.jsonl
: >"$JSON"
env_header date host cpu gpu:index,name,driver_version,memory.total nvcc
build_core "$RESULTS/ctest.log" 60 150 40 transient test_spiir test_spiir_multirate \
    test_spiir_triggers transient-bench
BENCH=$BUILD/bench/transient-bench
bench() { # tag limit args...
    local tag=$1 limit=$2
    shift 2
    printf '{"type":"note","tag":"%s","shape":"%s","args":"%s"}\n' "$tag" \
        "${TR_SPIIR_CUDA_SHAPE:-default}${TR_SPIIR_CUDA_SEGMENT:+ segment=$TR_SPIIR_CUDA_SEGMENT}" "$*" >>"$JSON"
    step "bench $tag" "$limit" "$RESULTS/bench.log" \
        sh -c "'$BENCH' --detector spiir --json $* >>'$JSON'"
}
if [ "$built" -eq 0 ]; then
    step "ctest spiir" 120 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -R spiir -j 4 --output-on-failure
    # The GPU tests again with whole batches per thread (no segmented time):
    # the test banks are small, so the default runs take the segmented path.
    TR_SPIIR_CUDA_SEGMENT=0 step "ctest gpu spiir, TR_SPIIR_CUDA_SEGMENT=0" 120 \
        "$RESULTS/ctest.log" ctest --test-dir "$BUILD" -R "gpu_spiir" -j 2 \
        --output-on-failure
    grep -E "tests passed|tests failed|Failed|\*\*\*" "$RESULTS/ctest.log" || true
    bench single 60 --repeat 5 --variants reference,cuda-fast,cuda-paper --device-only
    TR_SPIIR_CUDA_SEGMENT=0 bench "single, no segments" 30 --templates 4096 \
        --filters 8 --repeat 5 --variants reference,cuda-fast --device-only
    bench mr4096 60 --multirate --repeat 5 --batch 4096 --samples 131072 \
        --ref-samples 512 --variants reference,cuda-fast,cuda-paper --device-only
    bench mr131072 60 --multirate --repeat 5 --batch 131072 --samples 131072 \
        --ref-samples 512 --variants reference,cuda-fast,cuda-paper --device-only
    TR_SPIIR_CUDA_SEGMENT=0 bench "mr131072, no segments" 40 --multirate --repeat 5 \
        --batch 131072 --samples 131072 --ref-samples 512 \
        --variants reference,cuda-fast --device-only
    if [ "$SWEEP" = 1 ]; then
        for s in '*:16:32' '*:4:128' '*:8:32'; do
            TR_SPIIR_CUDA_SHAPE=$s bench "shape 512" 30 --templates 4096 --filters 512 \
                --repeat 3 --variants cuda-fast --device-only
        done
        for s in '*:2:4' '*:8:1' '*:1:8'; do
            TR_SPIIR_CUDA_SHAPE=$s bench "shape 8" 30 --templates 4096 --filters 8 \
                --repeat 3 --variants cuda-fast --device-only
        done
        for s in '10:2:8,21:3:8,36:5:8' '10:1:16,21:2:16,36:3:16,65:5:16' \
            '203:16:16,115:8:16,88:8:16,65:8:8'; do
            TR_SPIIR_CUDA_SHAPE=$s bench "shape mr" 40 --multirate --batch 131072 \
                --samples 131072 --repeat 3 --variants cuda-fast --device-only
        done
    fi
    if [ "$NCU" = 1 ] && command -v ncu >/dev/null; then
        NCU_SEC="--section SpeedOfLight --section Occupancy --section LaunchStats \
            --section WarpStateStats --section SchedulerStats"
        for fs in '512:*:16:32' '8:*:8:1'; do
            nf=${fs%%:*}
            TR_SPIIR_CUDA_SHAPE=${fs#*:} step "ncu $fs" 60 "$RESULTS/ncu.txt" \
                ncu $NCU_SEC -k regex:"spiir_fast|seg_" -c 3 "$BENCH" --detector spiir \
                --templates 4096 --filters "$nf" --samples 8192 --repeat 1 \
                --variants cuda-fast --device-only
        done
        step "ncu multirate" 90 "$RESULTS/ncu.txt" \
            ncu --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active \
            -c 40 "$BENCH" --detector spiir --multirate --samples 131072 \
            --batch 131072 --repeat 1 --variants cuda-fast --device-only
    fi
    if command -v compute-sanitizer >/dev/null; then
        step "memcheck multirate" 60 "$RESULTS/sanitizer.log" \
            compute-sanitizer --tool memcheck --error-exitcode 1 "$BENCH" \
            --detector spiir --multirate --templates 64 --samples 3000 \
            --ref-samples 3000 --repeat 1 --batch 1000 \
            --variants reference,cuda-fast,cuda-paper
        step "memcheck single" 60 "$RESULTS/sanitizer.log" \
            compute-sanitizer --tool memcheck --error-exitcode 1 "$BENCH" \
            --detector spiir --templates 40 --filters 512 --samples 700 \
            --ref-samples 700 --repeat 1 --batch 300 \
            --variants reference,cuda-fast,cuda-paper
        grep -E "ERROR SUMMARY" "$RESULTS/sanitizer.log" || true
    fi
fi
{
    echo "== summary"
    python3 - "$JSON" <<'PY'
import json, sys
tag = ""
for l in open(sys.argv[1]):
    try:
        r = json.loads(l)
    except ValueError:
        continue
    if r.get("type") == "note":
        tag = f"{r['tag']} [{r['shape']}]"
    elif r.get("type") == "env":
        print(f"GPU {r.get('gpu')}  FP32 FMA {r.get('fp32_fma_flops', 0) / 1e12:.1f} TFLOP/s")
    elif r.get("type") == "result":
        print(f"{tag:<40} {r['variant']:<10} {r['templates']}x{r['filters']} "
              f"{r['updates_per_s']:.3e} {100 * r['ratio']:.1f}% "
              f"rt {r['realtime_factor_4096hz']:.0f}x sp {r.get('speedup', '-')} "
              f"rms {r.get('rel_rms', '-')}")
    elif r.get("type") == "check":
        print(f"{tag:<40} check ok={r['ok']} {r['detail']}")
PY
    print_result
} 2>&1 | tee "$RESULTS/summary.txt"
[ "${#failed[@]}" -eq 0 ]
