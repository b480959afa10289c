#!/usr/bin/env bash
# FRB search on a GPU host (nvcc, CMake, ninja, Python 3 + numpy; no GNU Radio),
# beside Heimdall in the same run:
#   HEIMDALL_DIR=/path/to/peers/heimdall OUT=/tmp/frb-gpu bash bench/frb/frb_gpu_run.sh
# builds libtransient with CUDA for sm_90 (transient-frb, the FRB and
# dedispersion tests) while Heimdall builds, runs those tests (gpu_frb and
# gpu_dedisp included), Heimdall's run.sh (its synthetic file and 29.fil, REPS
# timed runs each), then transient-frb on the same two files with the same DM
# range and tolerance (DM 0-2000, tolerance 1.25; widths up to 4096 on the
# synthetic file, 1024 on 29.fil, as Heimdall there), REPS timed runs on the
# CUDA backend and one on the CPU backend (the synthetic file only with
# CPU_SYNTH=1: minutes), scored by bench/frb/frb_eval.py
# with Heimdall's matching rule. FRB_DEVICES=0,1 adds the synthetic file on the
# device-resident chain (--window 8192) on device 0 alone, then with the DM
# trials split over that list (tags synth_w8192, synth_devices).
# Results in $OUT: env.txt (commands, exit codes), ctest.log, frb.jsonl (one line
# per file and backend), cands_synth.json, bench.log, heimdall.tar.gz (run.sh's
# results: heimdall.jsonl), build.log.
set -uo pipefail
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../scripts/gpu_common.sh
. "$SRC/scripts/gpu_common.sh"
BUILD=${TR_BUILD:-/tmp/build-frb}
RES=${OUT:-/tmp/frb-gpu}
HD=${HEIMDALL_DIR:?set HEIMDALL_DIR to the Heimdall peer folder}
unset HEIMDALL # run.sh reads it as the path of its heimdall binary
HD_BUILD=${HD_BUILD:-/tmp/heimdall-build}
REPS=${REPS:-3}
PY=${PYTHON:-python3}
gpu_init "$RES"
env_header date gpu:name,driver_version,memory.total,clocks.max.sm cpu_cores nvcc cmake source

mkdir -p "$RES/heimdall"
(BUILD_ONLY=1 BUILD=$HD_BUILD OUT=$RES/heimdall JOBS=8 "$HD/run.sh" >"$RES/heimdall/build_stdout.txt" 2>&1) &
hd_build=$!
build_core "$RES/build.log" 90 300 30 transient transient-frb test_frb test_frb_devices test_dedisp \
    test_filterbank test_dedisp_plan transient-bench
wait "$hd_build"
echo "heimdall build: exit $?" | tee -a "$ENV_TXT"
FRB=$BUILD/apps/transient-frb
if [ "$built" -eq 0 ]; then
    step "ctest frb, dedisp, filterbank (gpu included)" 240 "$RES/ctest.log" ctest \
        --test-dir "$BUILD" -R "frb|dedisp|filterbank" --output-on-failure --no-tests=error
    grep -E "tests passed|tests failed|Failed|\*\*\*|29.fil" "$RES/ctest.log" | tail -n 20
fi
step "heimdall run.sh (REPS=$REPS)" 400 "$RES/heimdall/run_stdout.txt" env REPS="$REPS" \
    BUILD="$HD_BUILD" OUT="$RES/heimdall" "$HD/run.sh"
grep -h '"dm_trials"' "$RES/heimdall/heimdall.jsonl" | cut -c1-700

# One file, one backend: REPS timed runs (1 on the CPU), the last one's candidates scored.
run_frb() { # tag file backend reps truth-args... -- frb options...
    local tag=$1 fil=$2 backend=$3 reps=$4
    shift 4
    local truth=()
    while [ "$1" != "--" ]; do truth+=("$1"); shift; done
    shift
    local walls=() out=$RES/cands_$tag.json
    [ "$backend" = cuda ] || out=$BUILD/cands_${tag}_$backend.json
    for r in $(seq 1 "$reps"); do
        local t0 t1
        t0=$(date +%s.%N)
        step "transient-frb $tag $backend rep $r" 300 "$RES/bench.log" "$FRB" "$fil" \
            --backend "$backend" --format json -o "$out" "$@" || return 1
        t1=$(date +%s.%N)
        walls+=("$("$PY" -c "print(round($t1 - $t0, 4))")")
    done
    "$PY" "$SRC/bench/frb/frb_eval.py" --json "$out" --wall "${walls[@]}" "${truth[@]}" \
        --extra "{\"command\": \"transient-frb FILE --backend $backend $*\", \"gpu\": \"$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1)\"}" |
        tee -a "$RES/frb.jsonl"
}
if [ "$built" -eq 0 ]; then
    : >"$RES/frb.jsonl"
    SYNTH=$HD_BUILD/synth.fil
    run_frb synth "$SYNTH" cuda "$REPS" --truth "$HD_BUILD/synth_truth.json" -- \
        --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096
    run_frb 29 "$SRC/examples/data/29.fil" cuda "$REPS" --known 475.28 2.0289 -- \
        --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 1024
    run_frb 29 "$SRC/examples/data/29.fil" cpu 1 --known 475.28 2.0289 -- \
        --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 1024
    if [ -n "${FRB_DEVICES:-}" ]; then
        run_frb synth_w8192 "$SYNTH" cuda "$REPS" --truth "$HD_BUILD/synth_truth.json" -- \
            --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096 --window 8192
        run_frb synth_devices "$SYNTH" cuda "$REPS" --truth "$HD_BUILD/synth_truth.json" -- \
            --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096 --window 8192 \
            --devices "$FRB_DEVICES"
    fi
    [ "${CPU_SYNTH:-0}" = 1 ] && run_frb synth "$SYNTH" cpu 1 --truth "$HD_BUILD/synth_truth.json" -- \
        --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096
fi
tar -C "$RES" -czf "$RES/heimdall.tar.gz" heimdall && rm -rf "$RES/heimdall"
print_result
[ "${#failed[@]}" -eq 0 ]
