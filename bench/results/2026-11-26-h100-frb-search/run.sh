#!/usr/bin/env bash
# One call on the GPU host (from the source root; Heimdall's peer folder at
# .gpu/final/heimdall, 29.fil at .gpu/data/frb/29.fil):
#   build libtransient with CUDA (sm_90) while Heimdall builds; ctest -L gpu;
#   the changed GPU tests under ASan; compute-sanitizer memcheck on the
#   device candidates; Heimdall's run.sh (REPS=1) on its synthetic file and
#   29.fil; transient-frb twice on each; the boxcar host paths.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/final}; X=$R/x; mkdir -p "$X"
B=/tmp/bd; BA=/tmp/ba; HD=$SRC/.gpu/final/heimdall; HB=/tmp/heimdall-build
exec > >(tee "$R/log.txt") 2>&1
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "nvcc: $(nvcc --version | grep release)"
echo "source: $(cat .gpu/final/commit.txt)"
unset HEIMDALL
(BUILD_ONLY=1 BUILD=$HB OUT=$X/heimdall JOBS=6 "$HD/run.sh" >"$X/heimdall_build.txt" 2>&1) &
hb=$!
t0=$SECONDS
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j10) >"$X/build.log" 2>&1 || tail -40 "$X/build.log"
echo "build $((SECONDS-t0)) s"
wait $hb; echo "heimdall build rc $?"
(cmake -S . -B $BA -G Ninja -DCMAKE_BUILD_TYPE=Debug -DENABLE_SANITIZERS=ON -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $BA -j6) >"$X/build_asan.log" 2>&1 &
ba=$!
echo "== ctest -L gpu"
timeout 300 ctest --test-dir $B -L gpu --output-on-failure > "$X/ctest.log" 2>&1
grep -E "Test +#|tests passed|FAIL|\*\*\*" "$X/ctest.log" | head -40
echo "== heimdall run.sh (REPS=1)"
timeout 150 env REPS=1 BUILD=$HB OUT=$X/heimdall "$HD/run.sh" > "$X/heimdall_run.txt" 2>&1; echo "rc $?"
grep -h '"seconds_wall"' "$X"/heimdall/heimdall.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print({k:d.get(k) for k in ('file','dm_trials','seconds_wall','recovered','injected','other_candidates','unmatched_candidates')})"
F=$B/apps/transient-frb
: > "$R/frb_runs.jsonl"
run_frb() { # tag file extra...
  local tag=$1 fil=$2; shift 2
  local t0=$(date +%s.%N)
  "$F" "$fil" --backend cuda --format json -o "$X/frb_$tag.json" --dm-min 0 --dm-max 2000 --dm-tol 1.25 "$@" 2>>"$X/frb_stderr.txt"
  local rc=$? t1=$(date +%s.%N)
  python3 - "$X/frb_$tag.json" "$tag" "$t0" "$t1" "$rc" "$*" <<'PY' | tee -a "$R/frb_runs.jsonl"
import json,sys
p,tag,t0,t1,rc,args=sys.argv[1:]
try: d=json.load(open(p)); pr=d["processed"]
except Exception as e: pr={"error":str(e)}
print(json.dumps({"tag":tag,"command":"transient-frb FILE --backend cuda --format json -o OUT --dm-min 0 --dm-max 2000 --dm-tol 1.25 "+args,"rc":int(rc),"wall":round(float(t1)-float(t0),4),"seconds":pr.get("seconds"),"stage_seconds":pr.get("stage_seconds"),"candidates":pr.get("candidates"),"peaks":pr.get("peaks")}))
PY
}
echo "== transient-frb"
run_frb synth_1 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_2 $HB/synth.fil --max-width 4096 --window 8192
run_frb 29_1 $SRC/examples/data/29.fil --max-width 1024
run_frb 29_2 $SRC/examples/data/29.fil --max-width 1024
W1=$(python3 -c "import json;print(' '.join(str(json.loads(l)['wall']) for l in open('$R/frb_runs.jsonl') if 'synth' in l))")
W2=$(python3 -c "import json;print(' '.join(str(json.loads(l)['wall']) for l in open('$R/frb_runs.jsonl') if '\"29' in l))")
python3 bench/frb/frb_eval.py --json "$X/frb_synth_2.json" --wall $W1 --truth "$HB/synth_truth.json" > "$R/frb_eval_synth.json" 2>"$X/eval_err.txt"
python3 bench/frb/frb_eval.py --json "$X/frb_29_2.json" --wall $W2 --known 475.28 2.0289 > "$R/frb_eval_29.json" 2>>"$X/eval_err.txt"
for f in synth 29; do python3 -c "
import json;d=json.load(open('$R/frb_eval_$f.json'));print('$f', {k:d.get(k) for k in ('seconds_wall','seconds_wall_all','injected','recovered','unmatched_candidates','unmatched_snr_max','candidates')})"; done
echo "== boxcar host paths"
BB=$B/bench/transient-bench
: >"$R/bench_boxcar.jsonl"
timeout 60 $BB --detector boxcar --configs aa --nchan 64 --samples 1048576 --batch 65536 --host-path --json >>"$R/bench_boxcar.jsonl" 2>>"$X/bench_err.txt"
timeout 60 $BB --detector boxcar --configs aa --nchan 1 --samples 16777216 --batch 1048576 --host-path --json >>"$R/bench_boxcar.jsonl" 2>>"$X/bench_err.txt"
wc -l "$R/bench_boxcar.jsonl"
wait $ba; echo "asan build rc $?"
echo "== ASan, label gpu"
ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0 timeout 240 ctest --test-dir $BA -L gpu --output-on-failure > "$X/asan_ctest.log" 2>&1
grep -E "Test +#|tests passed|ERROR: AddressSanitizer|runtime error" "$X/asan_ctest.log" | head -30
T=$(find $B -name test_candidates_gpu -type f | head -n1)
echo "== memcheck candidates"; timeout 100 compute-sanitizer --tool memcheck "$T" > "$X/memcheck.txt" 2>&1; echo "rc $?"; grep -E "ERROR SUMMARY" "$X/memcheck.txt"
tar -C "$R" -czf "$R/x.tar.gz" x && rm -rf "$X"
