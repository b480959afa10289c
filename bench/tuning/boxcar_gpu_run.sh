#!/usr/bin/env bash
# Build, test and benchmark the boxcar search on a GPU host in one go (about
# 5 minutes on an H100): configure libtransient with CUDA for sm_90 and GNU
# Radio off, build the boxcar targets, run the GPU tests (ctest -L gpu) and the
# boxcar C tests, transient-bench --detector boxcar, the kernel sweep
# bench/tuning/boxcar_kernels.c, and compute-sanitizer (memcheck, racecheck) on a
# small case. Results go to $OUT when set, otherwise to
# bench/results/boxcar-latest/:
#   env.txt            GPU (nvidia-smi), toolchain, every command line
#   build.log          configure and build output
#   ctest.log          the test runs
#   bench_boxcar.jsonl transient-bench --detector boxcar --json (defaults, and
#                      --batch 131072 --repeat 9)
#   kernels.jsonl      boxcar_kernels (tile sweep, FAST against PAPER)
#   sanitizer.log      compute-sanitizer
#   ncu.txt            Nsight Compute (TR_PROFILE=1): --set full on one FAST
#                      launch per case of TR_PROFILE_CASES ("ALG:tile:split:positions ...")
#   ncu_sass.txt       (TR_PROFILE_SASS=1) per-instruction counts of the first case
#   summary.txt        the table printed at the end
# TR_QUICK=1 skips the second kernel sweep (1024 x 262144).
set -uo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-$SRC/build-gpu}
RESULTS=${OUT:-$SRC/bench/results/boxcar-latest}
gpu_init "$RESULTS"
t_start=$(date +%s)

env_header date host gpu:index,name,driver_version,memory.total,clocks.max.sm nvcc cmake

build_core "$RESULTS/build.log" 120 200 60 transient test_boxcar test_boxcar_gpu \
    test_boxcar_norm test_boxcar_predict test_boxcar_cuda_host test_boxcar_pulses \
    test_boxcar_pulsar test_candidates transient-bench boxcar_kernels

KB=$BUILD/bench/tuning/boxcar_kernels
BENCH=$BUILD/bench/transient-bench
# Steps in order of importance; optional ones are skipped past a time budget.
left() { [ $(($(date +%s) - t_start)) -lt "${1:-330}" ]; }
SAN_ARGS=(--detector boxcar --nchan 3 --samples 12000 --max-width 700 --configs bd16,ig2,bd32,ig1
    --variants cuda-fast,cuda-paper --repeat 1 --ref-samples 2000 --batch 5000)
if [ "$built" -eq 0 ]; then
    step "ctest gpu_boxcar_cuda" 100 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -R gpu_boxcar_cuda --output-on-failure -V
    step "transient-bench boxcar" 60 "$RESULTS/bench_boxcar.jsonl" \
        "$BENCH" --detector boxcar --json --variants reference,cuda-fast,cuda-paper
    step "kernel sweep 256 x 131072" 60 "$RESULTS/kernels.jsonl" "$KB" 256 131072 7
    if [ "${TR_PROFILE:-0}" = 1 ] && command -v ncu >/dev/null; then
        for case in ${TR_PROFILE_CASES:-"IG(1):8192:1:8" "BD-32:8192:1:8"}; do
            IFS=: read -r alg tile split kq <<<"$case"
            echo "==== ncu $case" >>"$RESULTS/ncu.txt"
            step "ncu $case" 90 "$RESULTS/ncu.txt" ncu --clock-control none --set full \
                -k regex:fast_kernel --launch-skip 1 --launch-count 1 \
                "$KB" 256 131072 1 "$alg" "$tile" "$split" "${kq:-8}"
        done
        # per-instruction counts of the first case (optional: not a failure)
        if [ "${TR_PROFILE_SASS:-0}" = 1 ]; then
            IFS=: read -r alg tile split kq <<<"${TR_PROFILE_CASES%% *}"
            alg=${alg:-"IG(1)"} tile=${tile:-8192} split=${split:-1} kq=${kq:-8}
            timeout 120 ncu --clock-control none --section SourceCounters \
                --section InstructionStats --page source --print-source sass \
                -k regex:fast_kernel --launch-skip 1 --launch-count 1 \
                "$KB" 256 131072 1 "$alg" "$tile" "$split" "$kq" >"$RESULTS/ncu_sass.txt" 2>&1
            echo "   ncu source page: exit $?" | tee -a "$ENV_TXT"
        fi
    fi
    if command -v compute-sanitizer >/dev/null; then
        for tool in memcheck racecheck; do
            left 300 && step "compute-sanitizer $tool" 40 "$RESULTS/sanitizer.log" \
                compute-sanitizer --tool "$tool" --error-exitcode 1 "$BENCH" "${SAN_ARGS[@]}"
        done
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$RESULTS/sanitizer.log"
    fi
    left 320 && step "ctest boxcar (all but gpu_boxcar_cuda)" 80 "$RESULTS/ctest.log" \
        ctest --test-dir "$BUILD" -R "boxcar|candidates" -E gpu_boxcar_cuda \
        --output-on-failure -j "$JOBS"
    [ "${TR_QUICK:-0}" = 1 ] || { left 350 && step "kernel sweep 1024 x 262144" 40 \
        "$RESULTS/kernels.jsonl" "$KB" 1024 262144 3; }
    left 370 && step "transient-bench boxcar batch 131072" 30 "$RESULTS/bench_boxcar.jsonl" \
        "$BENCH" --detector boxcar --json --batch 131072 --repeat 9 \
        --variants cuda-fast,cuda-paper --configs bd32,ig1
    grep -E "tests passed|tests failed|Failed|\*\*\*|FAIL|check failed|worst|4\.1" \
        "$RESULTS/ctest.log" | head -n 150
fi

{
    echo "== summary"
    python3 - "$RESULTS/bench_boxcar.jsonl" "$RESULTS/kernels.jsonl" <<'EOF'
import json, sys
for path in sys.argv[1:]:
    print(path.rsplit('/', 1)[-1])
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print("  unreadable", e); continue
    for l in lines:
        if not l.startswith('{'):
            continue
        try:
            r = json.loads(l)
        except ValueError:
            continue
        t = r.get("type")
        if t == "env":
            print("  env", {k: r[k] for k in r if k in ("gpu", "copy_bw", "fp32_flops", "device_copy_bw", "fp32_fma_flops")})
        elif t == "kernel":
            print(f"  {r['algorithm']:<6} {r['variant']:<6} split {r.get('split', '-')} q {r.get('positions', '-')} tile {r['tile']:>5} "
                  f"{r['nchan']}x{r['samples']}: {r['samples_per_s']:.3e} samples/s "
                  f"({100*r['ratio']:.0f}% of ceiling, x{r['speedup_vs_paper']:.1f} vs paper, "
                  f"SKA rt {r['realtime_ska']:.0f}x)")
        elif t == "check":
            print("  check", r)
        elif t == "result":
            keys = ("config", "variant", "mode", "nchan", "samples_per_s", "ratio_bytes",
                    "ratio_ops", "speedup", "realtime_ska", "max_rel_diff", "width_diff", "ok")
            print("  " + " ".join(f"{k}={r[k]:.4g}" if isinstance(r.get(k), float) else f"{k}={r.get(k)}"
                                  for k in keys if k in r))
EOF
    echo "elapsed: $(($(date +%s) - t_start)) s"
    print_result
} 2>&1 | tee "$RESULTS/summary.txt"
[ "${#failed[@]}" -eq 0 ]
