#!/usr/bin/env bash
# Multirate SPIIR on a GPU host: build the core with CUDA (sm_90, GNU Radio
# off; only the targets needed), run the SPIIR tests (gpu ones included), the
# multirate benchmark at three step sizes, and compute-sanitizer memcheck and
# racecheck on a small multirate run. Results go to $OUT (else
# bench/results/): env.txt, build.log, ctest.log, bench_spiir_mr.jsonl,
# bench.log, sanitizer.log, summary.txt. Exit 0 when every step passed.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-$SRC/build-gpu}
RESULTS=${OUT:-$SRC/bench/results}
gpu_init "$RESULTS"
env_header date host cpu gpu:index,name,driver_version,memory.total nvcc
build_core "$RESULTS/build.log" 90 200 40 transient test_spiir test_spiir_multirate \
    transient-bench
BENCH=$BUILD/bench/transient-bench
if [ "$built" -eq 0 ]; then
    step "ctest spiir" 150 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -R "spiir_multirate|gpu_spiir$" --output-on-failure
    grep -E "tests passed|tests failed|Failed|\*\*\*|latency|rel rms|ripple" \
        "$RESULTS/ctest.log" || true
    : >"$RESULTS/bench_spiir_mr.jsonl"
    for b in 4096 65536 131072; do
        step "bench multirate batch $b" 100 "$RESULTS/bench.log" \
            sh -c "'$BENCH' --detector spiir --multirate --json --repeat 5 --batch $b \
                --samples 131072 --cpu-samples 4096 --ref-samples 512 \
                >>'$RESULTS/bench_spiir_mr.jsonl'"
    done
    if command -v compute-sanitizer >/dev/null; then
        for tool in memcheck racecheck; do
            step "compute-sanitizer $tool" 90 "$RESULTS/sanitizer.log" \
                compute-sanitizer --tool "$tool" --error-exitcode 1 "$BENCH" \
                --detector spiir --multirate --templates 64 --samples 3000 \
                --ref-samples 3000 --repeat 1 --batch 1000 \
                --variants reference,cuda-fast,cuda-paper
        done
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$RESULTS/sanitizer.log" || true
    fi
fi
{
    echo "== summary"
    python3 - "$RESULTS/bench_spiir_mr.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "env":
        print(f"GPU {r.get('gpu')}  FP32 FMA {r.get('fp32_fma_flops', 0) / 1e12:.1f} TFLOP/s")
    elif r.get("type") == "result":
        print(f"{r['variant']:<11} {r['mode']:<13} {r['templates']} x {r['filters']} "
              f"{r['updates_per_s']:.3e} upd/s {100 * r['ratio']:.1f}% "
              f"rt {r['realtime_factor_4096hz']:.1f}x speedup {r.get('speedup', '-')} "
              f"rms {r.get('rel_rms', '-')}")
    else:
        print(l.strip())
PY
    print_result
} 2>&1 | tee "$RESULTS/summary.txt"
[ "${#failed[@]}" -eq 0 ]
