#!/usr/bin/env bash
# Build, test and benchmark the core library on a GPU host in one go.
#
# For a machine with nvcc, CMake, ninja and Python 3 but no GNU Radio, VOLK or
# network: configures libtransient with CUDA for sm_90 only (Hopper) and
# GNU Radio off, builds, runs the GPU tests (ctest -L gpu) and then every other
# test, runs transient-bench for the edge localizer, and prints a short table.
# Results go to $OUT when set, otherwise to bench/results/:
#   env.txt              GPU (nvidia-smi), toolchain versions, every command line
#   build.log            configure and build output
#   ctest.log            both test runs
#   bench_edges.jsonl    transient-bench --json, 2^28 samples
#   bench_edges_drops.jsonl  a shorter run with NaN/Inf drops (correctness)
#   bench_spiir.jsonl    transient-bench --detector spiir: 4096 x 512 and 4096 x 8
#   bench.log            the benchmarks' stderr
#   summary.txt          the table printed at the end
# Each step has a time limit so that the whole script ends within about 8
# minutes. Exit status: 0 when every step passed.
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-$SRC/build-gpu}
RESULTS=${OUT:-$SRC/bench/results}
CUDA_ARCH=${TR_CUDA_ARCHITECTURES:-90}
gpu_init "$RESULTS"
t_start=$(date +%s)

# ---- environment ----------------------------------------------------------
env_header date host cpu gpu:index,name,driver_version,memory.total nvcc cmake ninja \
    python3 source

# ---- build ------------------------------------------------------------------
rm -rf "$BUILD"
build_core "$RESULTS/build.log" 120 240 40

# ---- tests ------------------------------------------------------------------
if [ "$built" -eq 0 ]; then
    step "ctest -L gpu" 120 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -L gpu --output-on-failure --no-tests=error
    step "ctest (all other tests)" 120 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -LE gpu --output-on-failure -j "$JOBS"
    grep -E "tests passed|tests failed|Failed|\*\*\*" "$RESULTS/ctest.log" || true
fi

# ---- benchmark --------------------------------------------------------------
BENCH=$BUILD/bench/transient-bench
if [ "$built" -eq 0 ] && [ -x "$BENCH" ]; then
    : >"$RESULTS/bench.log"
    # stdout is the JSON; stderr (diagnostics) goes to bench.log.
    printf 'bench: %s\n' "$BENCH --detector edges --json --samples 268435456 --repeat 5" \
        >>"$ENV_TXT"
    say "transient-bench --detector edges (2^28 samples)"
    timeout --kill-after=10 150 "$BENCH" --detector edges --json --samples 268435456 \
        --repeat 5 >"$RESULTS/bench_edges.jsonl" 2>>"$RESULTS/bench.log"
    rc=$?
    echo "   bench: exit $rc" | tee -a "$ENV_TXT"
    [ "$rc" -eq 0 ] || failed+=("bench (exit $rc)")

    printf 'bench: %s\n' "$BENCH --detector edges --json --samples 16777216 --drops 0.05 \
--repeat 1 --seed 7" >>"$ENV_TXT"
    say "transient-bench with NaN/Inf drops (2^24 samples)"
    timeout --kill-after=10 60 "$BENCH" --detector edges --json --samples 16777216 \
        --drops 0.05 --repeat 1 --seed 7 >"$RESULTS/bench_edges_drops.jsonl" \
        2>>"$RESULTS/bench.log"
    rc=$?
    echo "   bench with drops: exit $rc" | tee -a "$ENV_TXT"
    [ "$rc" -eq 0 ] || failed+=("bench with drops (exit $rc)")

    printf 'bench: %s\n' "$BENCH --detector spiir --json --repeat 5" >>"$ENV_TXT"
    say "transient-bench --detector spiir (4096 x 512, 4096 x 8)"
    timeout --kill-after=10 180 "$BENCH" --detector spiir --json --repeat 5 \
        >"$RESULTS/bench_spiir.jsonl" 2>>"$RESULTS/bench.log"
    rc=$?
    echo "   bench spiir: exit $rc" | tee -a "$ENV_TXT"
    [ "$rc" -eq 0 ] || failed+=("bench spiir (exit $rc)")
    cat "$RESULTS/bench.log"
fi

# ---- sanitizers ----------------------------------------------------------
if [ "$built" -eq 0 ] && command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck synccheck; do
        step "compute-sanitizer $tool" 120 "$RESULTS/sanitizer.log" \
            compute-sanitizer --tool "$tool" --error-exitcode 1 "$BENCH" --detector edges \
            --samples 3000000 --ref-samples 100000 --repeat 1 --drops 0.05 \
            --variants reference,cuda-fast,cuda-paper
    done
    # 40 filters per template: FAST runs its cross-warp path (P > 32), PAPER
    # its block-based kernel with atomics.
    for tool in memcheck racecheck; do
        step "compute-sanitizer $tool (spiir)" 90 "$RESULTS/sanitizer.log" \
            compute-sanitizer --tool "$tool" --error-exitcode 1 "$BENCH" --detector spiir \
            --templates 200 --filters 40 --samples 3000 --ref-samples 3000 --repeat 1 \
            --variants reference,cuda-fast,cuda-paper
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$RESULTS/sanitizer.log" || true
fi

# ---- summary ------------------------------------------------------------------
summary() {
    python3 - "$@" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    try:
        rows = [json.loads(l) for l in open(path) if l.strip()]
    except (OSError, ValueError) as e:
        print(f"{path}: unreadable ({e})")
        continue
    print(path.rsplit('/', 1)[-1])
    for r in rows:
        if r.get("type") == "env" and r.get("detector") != "spiir":
            print(f"  GPU {r.get('gpu')}  CUDA driver {r.get('cuda_driver_version')}  "
                  f"read {r.get('device_read_bw', 0) / 1e9:.0f} GB/s  "
                  f"H2D {r.get('h2d_pinned_bw', 0) / 1e9:.1f} GB/s  "
                  f"CPU 1-core read {r.get('host_read_bw_1core', 0) / 1e9:.1f} GB/s")
    if any(r.get("detector") == "spiir" for r in rows):
        for r in rows:
            if r.get("type") == "env":
                print(f"  GPU {r.get('gpu')}  FP32 FMA {r.get('fp32_fma_flops', 0) / 1e12:.1f}"
                      f" TFLOP/s  CPU 1-core FMA {r.get('host_fma_1core_flops', 0) / 1e9:.0f}"
                      f" GFLOP/s ({r.get('host_fma_kind')})")
            elif r.get("type") == "result":
                sp = f"{r['speedup']:.2f}x" if "speedup" in r else "-"
                rr = f"{r['rel_rms']:.1e}" if "rel_rms" in r else "-"
                print(f"  {r['variant']:<11} {r['mode']:<13} "
                      f"{r['templates']:>5} x {r['filters']:<4} "
                      f"{r['updates_per_s']:>10.3e} upd/s {100 * r['ratio']:>5.1f}% "
                      f"{sp:>7} rt {r['realtime_factor_4096hz']:>9.1f}x rms {rr}")
            elif r.get("type") == "check":
                print(f"  check {r['templates']} x {r['filters']}: "
                      f"{'ok' if r['ok'] else 'FAILED'} {r.get('detail', '')}")
        continue
    print(f"  {'variant':<11} {'mode':<13} {'samples':>10} {'Msamp/s':>10} "
          f"{'of ceiling':>10} {'speedup':>8} {'transitions':>11}")
    for r in rows:
        if r.get("type") == "result":
            sp = f"{r['speedup']:.2f}x" if "speedup" in r else "-"
            print(f"  {r['variant']:<11} {r['mode']:<13} {r['samples']:>10} "
                  f"{r['samples_per_s'] / 1e6:>10.1f} {100 * r['ratio']:>9.1f}% {sp:>8} "
                  f"{r['transitions']:>11}")
        elif r.get("type") == "check":
            print(f"  check: {'same transitions everywhere' if r['ok'] else 'MISMATCH'}"
                  f" {r.get('detail', '')}")
EOF
}
{
    say "summary"
    if command -v python3 >/dev/null; then
        summary "$RESULTS"/bench_edges*.jsonl "$RESULTS"/bench_spiir.jsonl
    else
        cat "$RESULTS"/bench_edges*.jsonl "$RESULTS"/bench_spiir.jsonl
    fi
    echo "elapsed: $(($(date +%s) - t_start)) s"
    print_result
} 2>&1 | tee "$RESULTS/summary.txt"
[ "${#failed[@]}" -eq 0 ]
