#!/usr/bin/env bash
# One call on a 2-GPU host, from the source root: build libtransient with CUDA
# (sm_90, GNU Radio off); transient-frb beside Heimdall on its synthetic file
# with one device and with devices 0,1; ctest -L gpu (the device-list test
# uses both GPUs); the boxcar FAST beside AstroAccelerate; the SPIIR filter
# and the device trigger search beside gstlal-spiir.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/x2}; X=$R/x; mkdir -p "$X"
B=$SRC/build-gpu; SP=$SRC/.gpu/final2/spiir
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total,pci.bus_id --format=csv,noheader
nvidia-smi topo -m > "$R/topo.txt" 2>&1
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "nvcc: $(nvcc --version | grep release)"
echo "source: $(cat .gpu/x2/commit.txt)"
HD=$SRC/.gpu/final/heimdall; HB=/tmp/heimdall-build
unset HEIMDALL
(BUILD_ONLY=1 BUILD=$HB OUT=$X/heimdall JOBS=8 "$HD/run.sh" >"$X/heimdall_build.txt" 2>&1) &
hb=$!
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
t0=$SECONDS
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j24) >"$X/build.log" 2>&1 || tail -40 "$X/build.log"
echo "build $((SECONDS-t0)) s"
echo "== heimdall run.sh (REPS=1)"
wait $hb; echo "heimdall build rc $? at $((SECONDS-T0)) s"
timeout 120 env REPS=1 BUILD=$HB OUT=$X/heimdall "$HD/run.sh" > "$X/heimdall_run.txt" 2>&1; echo "rc $?"
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
  timeout 60 "$F" "$fil" --backend cuda --format json -o "$X/frb_$tag.json" --dm-min 0 --dm-max 2000 --dm-tol 1.25 "$@" 2>>"$X/frb_stderr.txt"
  local rc=$? t1=$(date +%s.%N)
  python3 - "$X/frb_$tag.json" "$tag" "$t0" "$t1" "$rc" "$*" <<'PY' | tee -a "$R/frb_runs.jsonl"
import json,sys
p,tag,t0,t1,rc,args=sys.argv[1:]
try: d=json.load(open(p)); pr=d["processed"]
except Exception as e: pr={"error":str(e)}
print(json.dumps({"tag":tag,"command":"transient-frb FILE --backend cuda --format json -o OUT --dm-min 0 --dm-max 2000 --dm-tol 1.25 "+args,"rc":int(rc),"wall":round(float(t1)-float(t0),4),"seconds":pr.get("seconds"),"stage_seconds":pr.get("stage_seconds"),"candidates":pr.get("candidates"),"peaks":pr.get("peaks"),"devices":pr.get("devices")}))
PY
}
echo "== transient-frb at $((SECONDS-T0)) s"
run_frb synth_1 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_2 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_d01a $HB/synth.fil --max-width 4096 --window 8192 --devices 0,1
run_frb synth_d01b $HB/synth.fil --max-width 4096 --window 8192 --devices 0,1
run_frb synth_3 $HB/synth.fil --max-width 4096 --window 8192
run_frb synth_d01c $HB/synth.fil --max-width 4096 --window 8192 --devices 0,1
run_frb 29_1 $SRC/examples/data/29.fil --max-width 1024
run_frb 29_d01 $SRC/examples/data/29.fil --max-width 1024 --devices 0,1
for t in synth_2 synth_d01b 29_1 29_d01; do
  case $t in synth*) a="--truth $HB/synth_truth.json";; *) a="--known 475.28 2.0289";; esac
  python3 bench/frb/frb_eval.py --json "$X/frb_$t.json" --wall 1 $a > "$R/frb_eval_$t.json" 2>>"$X/eval_err.txt"
  python3 -c "
import json;d=json.load(open('$R/frb_eval_$t.json'));print('$t', {k:d.get(k) for k in ('injected','recovered','unmatched_candidates','unmatched_snr_max','candidates')})"
done
python3 - "$X" <<'PY'
import json,sys,os
def c(t):
    d=json.load(open(os.path.join(sys.argv[1],"frb_%s.json"%t))); return [(x["dm"],x["sample"],x["width"],x["snr"],x["members"]) for x in d["candidates"]]
for a,b in (("synth_2","synth_d01b"),("29_1","29_d01")):
    try: print(a,b,"same candidates:",c(a)==c(b),len(c(a)))
    except Exception as e: print(a,b,"error",e)
PY
tail -3 "$X/frb_stderr.txt"
echo "== ctest -L gpu at $((SECONDS-T0)) s"
timeout 200 ctest --test-dir $B -L gpu --output-on-failure -j4 > "$R/ctest_gpu.log" 2>&1; echo "rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -40
echo "== boxcar beside AstroAccelerate at $((SECONDS-T0)) s"
timeout 200 env TR_BUILD=$B TR_COMMIT=$(cat .gpu/x2/commit.txt) AA=$SRC/.gpu/aa OUT=$R/boxcar bash bench/tuning/boxcar_vs_aa.sh > "$X/boxcar.txt" 2>&1; echo "rc $?"
cat "$R/boxcar/table.md" 2>/dev/null | head -30
echo "== SPIIR at $((SECONDS-T0)) s"
wait $pb; echo "spiir peer build rc $?"
timeout 100 env BUILD=/tmp/spb OUT=$R/spiir_peer bash "$SP/run.sh" --reps 9 --cases 4096x512x8192,4096x8x65536 > "$X/spiir_peer_run.txt" 2>&1; echo "peer rc $?"
grep -h '"updates_per_s"' "$R"/spiir_peer/spiir.jsonl 2>/dev/null | cut -c1-220
BB=$B/bench/transient-bench
timeout 90 $BB --detector spiir --json --repeat 5 --variants cuda-fast --device-only > "$R/bench_spiir.jsonl" 2>"$X/bench_spiir_err.txt"; echo "bench spiir rc $?"
timeout 60 $BB --detector spiir-triggers --device --json > "$R/bench_spiir_triggers.jsonl" 2>"$X/bench_trig_err.txt"; echo "bench triggers rc $?"
timeout 60 $BB --detector spiir-triggers --device --templates 1024 --json >> "$R/bench_spiir_triggers.jsonl" 2>>"$X/bench_trig_err.txt"; echo "bench triggers 1024 rc $?"
head -c 3000 "$R/bench_spiir_triggers.jsonl"
echo "done at $((SECONDS-T0)) s"
tar -C "$R" -czf "$R/x.tar.gz" x && rm -rf "$X"
