#!/usr/bin/env bash
# One call on a 2-GPU host: build the core with CUDA (sm_90, GNU Radio off);
# transient-frb beside Heimdall on its synthetic file with one device and
# devices 0,1, without and with time scrunching; ctest -L gpu (edges left
# out: unchanged since the morning's run); the dedispersion benchmark with
# and without scrunching; compute-sanitizer on the dedispersion test; the
# bundle's GPU flow graph test and the SPIIR and boxcar sinks in flow graphs.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/c3}; X=$R/x; mkdir -p "$X"
B=$SRC/build-gpu
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/c3/commit.txt)"
HD=$SRC/.gpu/final/heimdall; HB=/tmp/heimdall-build
unset HEIMDALL
(BUILD_ONLY=1 BUILD=$HB OUT=$X/heimdall JOBS=8 "$HD/run.sh" >"$X/heimdall_build.txt" 2>&1) &
hb=$!
t0=$SECONDS
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j24) >"$X/build.log" 2>&1 || tail -40 "$X/build.log"
echo "build $((SECONDS-t0)) s"
wait $hb; echo "heimdall build rc $? at $((SECONDS-T0)) s"
timeout 100 env REPS=1 BUILD=$HB OUT=$X/heimdall "$HD/run.sh" > "$X/heimdall_run.txt" 2>&1; echo "heimdall rc $?"
cp "$X"/heimdall/heimdall.jsonl "$R/heimdall.jsonl" 2>/dev/null
grep -h '"seconds_wall"' "$R/heimdall.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print({k:d.get(k) for k in ('file','dm_trials','seconds_wall','recovered','injected','unmatched_candidates')})"
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
S=$HB/synth.fil; W="--max-width 4096 --window 8192"
for r in a b c; do
  run_frb synth_1$r $S $W
  run_frb synth_2$r $S $W --devices 0,1
  run_frb synth_s1$r $S $W --scrunch
  run_frb synth_s2$r $S $W --scrunch --devices 0,1
done
run_frb 29_1 $SRC/examples/data/29.fil --max-width 1024
run_frb 29_s1 $SRC/examples/data/29.fil --max-width 1024 --scrunch
for t in synth_1b synth_2b synth_s1b synth_s2b 29_1 29_s1; do
  case $t in synth*) a="--truth $HB/synth_truth.json";; *) a="--known 475.28 2.0289";; esac
  python3 bench/frb/frb_eval.py --json "$X/frb_$t.json" --wall 1 $a > "$R/frb_eval_$t.json" 2>>"$X/eval_err.txt"
  python3 -c "
import json;d=json.load(open('$R/frb_eval_$t.json'));print('$t', {k:d.get(k) for k in ('injected','recovered','unmatched_candidates','unmatched_snr_max','candidates')})"
done
python3 - "$X" <<'PY'
import json,sys,os
def c(t):
    d=json.load(open(os.path.join(sys.argv[1],"frb_%s.json"%t))); return [(x["dm"],x["sample"],x["width"],x["snr"],x["members"]) for x in d["candidates"]]
for a,b in (("synth_1b","synth_2b"),("synth_s1b","synth_s2b")):
    try: print(a,b,"same candidates:",c(a)==c(b),len(c(a)))
    except Exception as e: print(a,b,"error",e)
PY
tail -4 "$X/frb_stderr.txt"
echo "== ctest -L gpu (no edges) at $((SECONDS-T0)) s"
timeout 170 ctest --test-dir $B -L gpu -E "gpu_edges" --output-on-failure -j4 > "$R/ctest_gpu.log" 2>&1; echo "rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -30
echo "== dedisp bench at $((SECONDS-T0)) s"
BB=$B/bench/transient-bench
timeout 60 $BB --detector dedisp --variants cuda-fast --json > "$R/bench_dedisp.jsonl" 2>>"$X/bench_err.txt"; echo "rc $?"
timeout 60 $BB --detector dedisp --variants cuda-fast --json --scrunch >> "$R/bench_dedisp.jsonl" 2>>"$X/bench_err.txt"; echo "scrunch rc $?"
timeout 60 $BB --detector dedisp --variants cuda-fast --json --file $S >> "$R/bench_dedisp.jsonl" 2>>"$X/bench_err.txt"; echo "file rc $?"
timeout 60 $BB --detector dedisp --variants cuda-fast --json --file $S --scrunch >> "$R/bench_dedisp.jsonl" 2>>"$X/bench_err.txt"; echo "file scrunch rc $?"
python3 -c "
import json
for l in open('$R/bench_dedisp.jsonl'):
    d=json.loads(l)
    if d.get('type')=='result': print({k:d.get(k) for k in ('mode','scrunch','ndm','samples_per_s','trial_samples_per_s','seconds','ratio','ceiling','check','ok')})"
echo "== bundle at $((SECONDS-T0)) s"
D=$(mktemp -d); tar -C $D -xzf .gpu/c3/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
timeout 150 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; grep -i "spiir\|fail\|all detectors" "$R/gpu_flowgraph.log" | head -20
timeout 90 $RUN transient-flowgraph-bench --detector spiir --backend cuda --spiir-output both --seconds 2 --json > "$R/flowgraph_spiir.jsonl" 2>>"$X/fg.stderr"; echo "fg spiir rc $?"
timeout 60 $RUN transient-flowgraph-bench --detector spiir --backend cuda --spiir-output none --spiir-msg vectors --seconds 2 --json > "$R/flowgraph_spiir_vectors.jsonl" 2>>"$X/fg.stderr"; echo "fg spiir vectors rc $?"
timeout 90 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan 1,64 --boxcar-norm white --boxcar-output none --seconds 2 --json > "$R/flowgraph_boxcar_white.jsonl" 2>>"$X/fg.stderr"; echo "fg boxcar white rc $?"
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            print(f.split('/')[-1], {k:d.get(k) for k in ("nchan","outputs","output","triggers_on","msg_format","path","samples_per_s","ratio","core_samples_per_s","block_over_core")})
PY
echo "== compute-sanitizer at $((SECONDS-T0)) s"
cmd=$(ctest --test-dir $B -R "^gpu_dedisp$" -N -V 2>/dev/null | sed -n 's/.*Test command: //p' | head -1)
echo "gpu_dedisp command: $cmd"
[ -n "$cmd" ] && timeout 120 compute-sanitizer --tool memcheck --error-exitcode 1 $cmd > "$X/san_dedisp.txt" 2>&1; echo "memcheck rc $? $(grep -h 'ERROR SUMMARY' $X/san_dedisp.txt | tail -1)" | tee "$R/sanitizer.txt"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/c3_log.txt
tar -C "$R" -czf /tmp/all3.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all3.tar.gz "$R/all.tar.gz" && cp /tmp/c3_log.txt "$R/log.txt"
