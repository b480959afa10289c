#!/usr/bin/env bash
# One call on the GPU host, from the source root: build libtransient with CUDA
# (sm_90, GNU Radio off); ctest -L gpu; compute-sanitizer on the new device
# trigger search and the multi-device FRB test; gstlal-spiir's harness beside
# transient-bench's SPIIR filter and the device trigger search; transient-frb
# on 29.fil with one device and with the device listed twice.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/final2}; X=$R/x; mkdir -p "$X"
B=/tmp/bd; SP=$SRC/.gpu/final2/spiir
exec > >(tee "$R/log.txt") 2>&1
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total --format=csv,noheader)"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "nvcc: $(nvcc --version | grep release)"
echo "source: $(cat .gpu/final2/commit.txt)"
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
HD=$SRC/.gpu/final/heimdall; HB=/tmp/heimdall-build
unset HEIMDALL
(BUILD_ONLY=1 BUILD=$HB OUT=$X/heimdall JOBS=6 "$HD/run.sh" >"$X/heimdall_build.txt" 2>&1) &
hb=$!
t0=$SECONDS
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16) >"$X/build.log" 2>&1 || tail -40 "$X/build.log"
echo "build $((SECONDS-t0)) s"
wait $pb; echo "spiir peer build rc $?"
echo "== ctest -L gpu"
timeout 300 ctest --test-dir $B -L gpu --output-on-failure -j2 > "$R/ctest_gpu.log" 2>&1; echo "rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -40
echo "== compute-sanitizer"
for spec in "test_spiir_triggers_gpu" "test_frb_devices --gpu"; do
  set -- $spec; t=$1; shift
  T=$(find $B -name "$t" -type f | head -n1); [ -n "$T" ] || { echo "no $t"; continue; }
  for tool in memcheck racecheck; do
    timeout 45 compute-sanitizer --tool $tool --error-exitcode 1 "$T" "$@" > "$X/san_${t}_$tool.txt" 2>&1
    echo "$t $* $tool rc $? $(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$X/san_${t}_$tool.txt" | tail -1)"
  done
done | tee "$R/sanitizer.txt"
BB=$B/bench/transient-bench
echo "== SPIIR: gstlal-spiir harness, transient-bench filter (device-only), device triggers"
timeout 120 env BUILD=/tmp/spb OUT=$R/spiir_peer bash "$SP/run.sh" --reps 9 --cases 4096x512x8192,4096x8x65536 > "$X/spiir_peer_run.txt" 2>&1; echo "peer rc $?"
grep -h '"updates_per_s"' "$R"/spiir_peer/spiir.jsonl 2>/dev/null | cut -c1-220
timeout 120 $BB --detector spiir --json --repeat 5 --variants cuda-fast --device-only > "$R/bench_spiir.jsonl" 2>"$X/bench_spiir_err.txt"; echo "bench spiir rc $?"
timeout 120 $BB --detector spiir-triggers --device --json > "$R/bench_spiir_triggers.jsonl" 2>"$X/bench_trig_err.txt"; echo "bench triggers rc $?"
timeout 120 $BB --detector spiir-triggers --device --templates 1024 --json >> "$R/bench_spiir_triggers.jsonl" 2>>"$X/bench_trig_err.txt"; echo "bench triggers 1024 rc $?"
python3 - "$R/bench_spiir_triggers.jsonl" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: d=json.loads(l)
    except Exception: continue
    print({k:d[k] for k in d if k in ('type','mode','templates','samples_per_s','ceiling','ratio','ok','triggers','check')})
PY
echo "== heimdall run.sh (REPS=1)"
wait $hb; echo "heimdall build rc $?"
timeout 150 env REPS=1 BUILD=$HB OUT=$X/heimdall "$HD/run.sh" > "$X/heimdall_run.txt" 2>&1; echo "rc $?"
cp "$X"/heimdall/heimdall.jsonl "$R/heimdall.jsonl" 2>/dev/null
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
print(json.dumps({"tag":tag,"command":"transient-frb FILE --backend cuda --format json -o OUT --dm-min 0 --dm-max 2000 --dm-tol 1.25 "+args,"rc":int(rc),"wall":round(float(t1)-float(t0),4),"seconds":pr.get("seconds"),"stage_seconds":pr.get("stage_seconds"),"candidates":pr.get("candidates"),"peaks":pr.get("peaks"),"devices":pr.get("devices")}))
PY
}
echo "== transient-frb"
run_frb synth_1 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_2 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_dev00 $HB/synth.fil --max-width 4096 --window 8192 --devices 0,0
run_frb 29_1 $SRC/examples/data/29.fil --max-width 1024
run_frb 29_2 $SRC/examples/data/29.fil --max-width 1024
run_frb 29_dev00 $SRC/examples/data/29.fil --max-width 1024 --devices 0,0
W1=$(python3 -c "import json;print(' '.join(str(json.loads(l)['wall']) for l in open('$R/frb_runs.jsonl') if 'synth_' in l and 'dev' not in l))")
W2=$(python3 -c "import json;print(' '.join(str(json.loads(l)['wall']) for l in open('$R/frb_runs.jsonl') if '\"29_' in l and 'dev' not in l))")
python3 bench/frb/frb_eval.py --json "$X/frb_synth_2.json" --wall $W1 --truth "$HB/synth_truth.json" > "$R/frb_eval_synth.json" 2>"$X/eval_err.txt"
python3 bench/frb/frb_eval.py --json "$X/frb_29_2.json" --wall $W2 --known 475.28 2.0289 > "$R/frb_eval_29.json" 2>>"$X/eval_err.txt"
python3 bench/frb/frb_eval.py --json "$X/frb_synth_dev00.json" --wall 1 --truth "$HB/synth_truth.json" > "$R/frb_eval_synth_dev00.json" 2>>"$X/eval_err.txt"
for f in synth 29 synth_dev00; do python3 -c "
import json;d=json.load(open('$R/frb_eval_$f.json'));print('$f', {k:d.get(k) for k in ('seconds_wall','seconds_wall_all','injected','recovered','unmatched_candidates','unmatched_snr_max','candidates')})"; done
python3 - "$X" <<'PY'
import json,sys,os
def c(t):
    d=json.load(open(os.path.join(sys.argv[1],"frb_%s.json"%t))); return [(x["dm"],x["sample"],x["width"],x["snr"],x["members"]) for x in d["candidates"]]
for a,b in (("synth_2","synth_dev00"),("29_2","29_dev00")):
    try: print(a,b,"same candidates:",c(a)==c(b),len(c(a)))
    except Exception as e: print(a,b,"error",e)
PY
tail -3 "$X/frb_stderr.txt"
tar -C "$R" -czf "$R/x.tar.gz" x && rm -rf "$X"
