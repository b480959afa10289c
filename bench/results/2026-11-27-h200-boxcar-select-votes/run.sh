#!/usr/bin/env bash
# The boxcar block without outputs (detects as vectors) before (A: B's bundle
# with A's libtransient, .gpu/b10/overlay.tar.gz) and after (B, bundle at
# .gpu/f12): the selection's write kernel by warp votes. Same call:
# AstroAccelerate's own kernels (the peer, .gpu/aa), then two rounds of A and
# B alternated, the selection's kernel times (ncu) in A and B, B's GPU tests
# from the bundle, memcheck and racecheck of the selection kernels.
set -uo pipefail
R=${OUT:-/tmp/g16}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "A: $(cat .gpu/b10/commit.txt)  B: $(cat .gpu/f12/commit.txt)"
mkdir -p "$R/peer"
OUT=$R/peer timeout 240 bash .gpu/aa/run.sh > "$R/peer/stdout.txt" 2>&1; echo "peer rc $? at $((SECONDS-T0)) s"
for t in A B; do
  d=$(mktemp -d); tar -C $d -xzf .gpu/f12/gr-transient-bundle.tar.gz
  [ $t = A ] && tar -C $d -xzf .gpu/b10/overlay.tar.gz
  eval "RUN_$t=$d/gr-transient-bundle/run"
done
for round in 1 2; do
  for t in A B; do
    eval "RUN=\$RUN_$t"
    for norm in fixed white; do
      for nc in 1 64; do
        timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $nc --boxcar-norm $norm --boxcar-output none --boxcar-spacing 8192 --boxcar-msg vectors --seconds 2 --json >> "$R/flowgraph_$t.jsonl" 2>>"$X/fg.stderr"; echo "round $round $t $norm nchan $nc rc $?"
      done
    done
  done
done
echo "flowgraphs done at $((SECONDS-T0)) s"
python3 - "$R" <<'PY'
import json,sys
r=sys.argv[1]
aa=[json.loads(l) for l in open(r+"/peer/aa_spd.jsonl") if l.strip()]
aa=[a for a in aa if "samples_per_s" in a]
for a in aa: print("AA", a.get("case"), "%.3e" % a["samples_per_s"])
an=[a for a in aa if "analysis" in str(a.get("case"))]
for t in "AB":
    for l in open(r+"/flowgraph_%s.jsonl" % t):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            s=d["samples_per_s"]*d["nchan"]
            print(t, d["path"], d["norm"], d["nchan"], "%.3e values/s" % s, "ratio %.3f" % d["ratio"], "block/core %.2f" % d.get("block_over_core", 0), d.get("detections"),
                  " ".join("over AA %s %.3f" % (a.get("case"), s/a["samples_per_s"]) for a in an) if d["path"]=="block" else "")
PY
for t in A B; do
  eval "RUN=\$RUN_$t"
  timeout 120 ncu --clock-control none --launch-skip 300 -c 150 --kernel-name regex:select --metrics gpu__time_duration.sum --csv --print-units base \
    $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan 1 --boxcar-norm fixed --boxcar-output none --boxcar-spacing 8192 --boxcar-msg vectors --seconds 1 > "$X/ncu_$t.csv" 2> "$X/ncu_$t.err"
  echo "ncu $t rc $?"
  python3 - "$X/ncu_$t.csv" <<'PY' | tee "$R/select_kernels_$t.txt"
import csv,sys,collections
rows=[r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
h=rows[0]; ki=h.index("Kernel Name"); vi=h.index("Metric Value")
agg=collections.defaultdict(list)
for r in rows[1:]: agg[r[ki][:40]].append(float(r[vi].replace(",",""))/1e3)
for k,v in agg.items(): print("%-40s %4d launches %7.2f us/launch" % (k, len(v), sum(v)/len(v)))
PY
done
for t in "test_boxcar --gpu" "test_boxcar_gpu" "test_candidates_gpu" "test_frb --gpu examples/data/29.fil" "test_frb_devices --gpu" "test_flowgraph_cuda" "test_device_buffers"; do
  n=$(echo $t | cut -d' ' -f1)
  timeout 300 $RUN_B $t > "$R/gpu_$n.log" 2>&1; echo "$t rc $?"; tail -1 "$R/gpu_$n.log"
done
echo "tests done at $((SECONDS-T0)) s"
BIN=$(dirname $RUN_B)/bin
LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64 timeout 110 compute-sanitizer --tool memcheck --leak-check full $BIN/test_candidates_gpu > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck candidates_gpu rc $?"; tail -2 "$R/memcheck_candidates_gpu.log"
LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64 timeout 110 compute-sanitizer --tool racecheck --kernel-regex kns=cand_cuda $BIN/test_candidates_gpu > "$R/racecheck_cand_candidates_gpu.log" 2>&1; echo "racecheck cand_cuda kernels in test_candidates_gpu rc $?"; tail -2 "$R/racecheck_cand_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
cd "$R" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz
