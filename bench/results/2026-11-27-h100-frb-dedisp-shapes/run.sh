#!/usr/bin/env bash
# One call on an H100: build the core (sm_90, GNU Radio off); the CUDA
# dedispersion's sum-kernel shapes (TR_DEDISP_CUDA_SHAPE 0-5): each through
# test_dedisp --gpu and transient-bench --detector dedisp; Heimdall's run.sh;
# transient-frb on its synthetic file, default shape three times, then once
# per shape.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/c5}; X=$R/x; mkdir -p "$X"
B=$SRC/build-gpu
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/c5/commit.txt)"
HD=$SRC/.gpu/final/heimdall; HB=/tmp/heimdall-build
unset HEIMDALL
(BUILD_ONLY=1 BUILD=$HB OUT=$X/heimdall JOBS=6 "$HD/run.sh" >"$X/heimdall_build.txt" 2>&1) &
hb=$!
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j12 --target transient-frb transient-bench test_dedisp) > "$X/build.log" 2>&1 || tail -30 "$X/build.log"
echo "build $((SECONDS-T0)) s"
: > "$R/bench_dedisp_shapes.jsonl"
for k in 0 1 2 3 4 5; do
  TR_DEDISP_CUDA_SHAPE=$k timeout 60 $B/tests/core/dedisp/test_dedisp --gpu > "$X/test_shape$k.txt" 2>&1; echo "shape $k test rc $? $(tail -1 $X/test_shape$k.txt)"
  echo "{\"type\":\"note\",\"shape\":$k}" >> "$R/bench_dedisp_shapes.jsonl"
  TR_DEDISP_CUDA_SHAPE=$k timeout 60 $B/bench/transient-bench --detector dedisp --variants cuda-fast --json --repeat 5 >> "$R/bench_dedisp_shapes.jsonl" 2>>"$X/bench_err.txt"
  python3 -c "
import json
for l in open('$R/bench_dedisp_shapes.jsonl').readlines()[-6:]:
    d=json.loads(l)
    if d.get('type')=='result' and d.get('mode')=='device': print('shape $k device', d['seconds'], d['dm_samples_per_s'], d['ratio'])"
done
wait $hb; echo "heimdall build rc $? at $((SECONDS-T0)) s"
timeout 100 env REPS=1 BUILD=$HB OUT=$X/heimdall "$HD/run.sh" > "$X/heimdall_run.txt" 2>&1; echo "heimdall rc $?"
cp "$X"/heimdall/heimdall.jsonl "$R/heimdall.jsonl" 2>/dev/null
grep -h '"seconds_wall"' "$R/heimdall.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print({k:d.get(k) for k in ('file','dm_trials','seconds_wall','recovered','injected','unmatched_candidates')})"
F=$B/apps/transient-frb; S=$HB/synth.fil
: > "$R/frb_runs.jsonl"
run_frb() { # tag shape
  local t0=$(date +%s.%N)
  TR_DEDISP_CUDA_SHAPE=$2 timeout 60 "$F" "$S" --backend cuda --format json -o "$X/frb_$1.json" --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096 --window 8192 2>>"$X/frb_stderr.txt"
  local rc=$? t1=$(date +%s.%N)
  python3 - "$X/frb_$1.json" "$1" "$t0" "$t1" "$rc" "$2" <<'PY' | tee -a "$R/frb_runs.jsonl"
import json,sys
p,tag,t0,t1,rc,shape=sys.argv[1:]
try: d=json.load(open(p)); pr=d["processed"]
except Exception as e: pr={"error":str(e)}
print(json.dumps({"tag":tag,"shape":int(shape),"command":"TR_DEDISP_CUDA_SHAPE=%s transient-frb FILE --backend cuda --format json -o OUT --dm-min 0 --dm-max 2000 --dm-tol 1.25 --max-width 4096 --window 8192"%shape,"rc":int(rc),"wall":round(float(t1)-float(t0),4),"seconds":pr.get("seconds"),"stage_seconds":pr.get("stage_seconds"),"candidates":pr.get("candidates")}))
PY
}
echo "== transient-frb at $((SECONDS-T0)) s"
for r in a b c; do run_frb d$r 0; done
for k in 1 2 3 4 5; do run_frb s$k $k; done
for t in db s1 s2 s3 s4 s5; do
  python3 bench/frb/frb_eval.py --json "$X/frb_$t.json" --wall 1 --truth $HB/synth_truth.json > "$X/eval_$t.json" 2>/dev/null
  python3 -c "
import json;d=json.load(open('$X/eval_$t.json'));print('$t', {k:d.get(k) for k in ('recovered','unmatched_candidates','candidates')})"
done
cp "$X/eval_db.json" "$R/frb_eval_db.json"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/c5_log.txt
tar -C "$R" -czf /tmp/all5.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all5.tar.gz "$R/all.tar.gz" && cp /tmp/c5_log.txt "$R/log.txt"
