#!/usr/bin/env bash
# One call on the GPU host: build the core with CUDA (sm_90) while Heimdall builds,
# the gpu tests, transient-frb beside Heimdall on its synthetic file and 29.fil,
# the boxcar host-to-candidates path, compute-sanitizer on the device candidates.
#   HEIMDALL_DIR=<peers>/heimdall OUT=dir bash run.sh   (from the source root)
set -uo pipefail
SRC=$(pwd)
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-/tmp/build-int}
RES=${OUT:-/tmp/int-gpu}
HD=${HEIMDALL_DIR:?}
unset HEIMDALL
HD_BUILD=/tmp/heimdall-build
PY=python3
gpu_init "$RES"
env_header date gpu:name,driver_version,memory.total,clocks.max.sm cpu_cores nvcc cmake source
mkdir -p "$RES/heimdall"
(BUILD_ONLY=1 BUILD=$HD_BUILD OUT=$RES/heimdall JOBS=6 "$HD/run.sh" >"$RES/heimdall/build_stdout.txt" 2>&1) &
hd=$!
build_core "$RES/build.log" 90 330 30
wait "$hd"
if [ "$built" -eq 0 ]; then
    step "ctest -L gpu" 200 "$RES/ctest.log" ctest --test-dir "$BUILD" -L gpu --output-on-failure --no-tests=error
    grep -E "tests passed|tests failed|Failed|\*\*\*|Passed|Skipped" "$RES/ctest.log" | tail -n 20
fi
step "heimdall run.sh (REPS=1)" 200 "$RES/heimdall/run_stdout.txt" env REPS=1 \
    BUILD="$HD_BUILD" OUT="$RES/heimdall" "$HD/run.sh"
grep -h '"seconds_wall"' "$RES/heimdall/heimdall.jsonl" | cut -c1-400
FRB=$BUILD/apps/transient-frb
if [ -x "$FRB" ]; then
    : >"$RES/frb.jsonl"
    for f in synth 29; do
        if [ $f = synth ]; then fil=$HD_BUILD/synth.fil; truth=(--truth "$HD_BUILD/synth_truth.json"); mw=4096; extra=(--window 8192)
        else fil=$SRC/examples/data/29.fil; truth=(--known 475.28 2.0289); mw=1024; extra=(); fi
        walls=()
        for r in 1 2; do
            t0=$(date +%s.%N)
            step "transient-frb $f cuda rep $r" 120 "$RES/bench.log" "$FRB" "$fil" --backend cuda \
                --format json -o "$RES/cands_$f.json" --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width $mw "${extra[@]}"
            t1=$(date +%s.%N)
            walls+=("$($PY -c "print(round($t1 - $t0, 4))")")
        done
        $PY "$SRC/bench/frb/frb_eval.py" --json "$RES/cands_$f.json" --wall "${walls[@]}" "${truth[@]}" \
            --extra "{\"command\": \"transient-frb FILE --backend cuda --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width $mw ${extra[*]}\", \"gpu\": \"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)\"}" |
            tee -a "$RES/frb.jsonl"
    done
fi
B=$BUILD/bench/transient-bench
: >"$RES/bench_boxcar.jsonl"
step "boxcar host path 64 ch" 60 "$RES/bench.log" sh -c "$B --detector boxcar --configs aa --nchan 64 --samples 1048576 --batch 65536 --host-path --json >>$RES/bench_boxcar.jsonl"
step "boxcar host path 1 ch" 60 "$RES/bench.log" sh -c "$B --detector boxcar --configs aa --nchan 1 --samples 16777216 --batch 1048576 --host-path --json >>$RES/bench_boxcar.jsonl"
step "boxcar device chain" 60 "$RES/bench.log" sh -c "$B --detector boxcar --variants cuda-fast --configs aa --nchan 64 --samples 1048576 --device-chain --json >>$RES/bench_boxcar.jsonl"
T=$(find "$BUILD" -name test_candidates_gpu -type f | head -n1)
[ -n "$T" ] && step "memcheck candidates" 60 "$RES/sanitizer.log" compute-sanitizer --tool memcheck "$T"
[ -n "$T" ] && step "racecheck candidates" 60 "$RES/sanitizer.log" compute-sanitizer --tool racecheck "$T"
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$RES/sanitizer.log"
tar -C "$RES" -czf "$RES/heimdall.tar.gz" heimdall && rm -rf "$RES/heimdall"
print_result
