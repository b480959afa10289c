#!/usr/bin/env bash
# The boxcar block without outputs on an H100, A (bundle f15 with the
# libtransient of commit 4e54264) against B (bundle f15, commit 74d8256: the
# pipeline's own buffers without the wait for the caller's stream, the
# device tables read in place). Same call: AstroAccelerate's own kernels
# first; B's GPU tests; A and B alternated, two rounds; memcheck of the FAST
# kernel in test_boxcar_gpu.
set -uo pipefail
R=${OUT:-/tmp/g14}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "B: $(cat .gpu/f15/commit.txt)"
mkdir -p "$R/peer"
OUT=$R/peer timeout 240 bash .gpu/aa/run.sh > "$R/peer/stdout.txt" 2>&1; echo "peer rc $? at $((SECONDS-T0)) s"
for t in A B; do
  d=$(mktemp -d); tar -C $d -xzf .gpu/f15/gr-transient-bundle.tar.gz
  [ $t = A ] && tar -C $d -xzf .gpu/b15/overlay.tar.gz
  eval "RUN_$t=$d/gr-transient-bundle/run"
done
BIN=$(dirname $RUN_B)/bin
for t in "test_boxcar --gpu" "test_boxcar_gpu" "test_candidates_gpu" "test_frb --gpu examples/data/29.fil" "test_frb_devices --gpu" "test_flowgraph_cuda" "test_device_buffers"; do
  n=$(echo $t | cut -d' ' -f1)
  timeout 300 $RUN_B $t > "$R/gpu_test_$n.log" 2>&1; echo "$t rc $?"; tail -1 "$R/gpu_test_$n.log"
done
echo "tests done at $((SECONDS-T0)) s"
fg() { # tree norm nchan batch
  eval "RUN=\$RUN_$1"
  timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $3 --boxcar-norm $2 --boxcar-output none --boxcar-spacing 8192 --boxcar-msg vectors --seconds 2 --batch $4 --json >> "$R/flowgraph_$1.jsonl" 2>>"$X/fg_$1.stderr"
  echo "$1 $2 nchan $3 batch $4 rc $? at $((SECONDS-T0)) s"
}
for round in 1 2; do
  for t in A B; do
    for norm in fixed white; do
      fg $t $norm 1 1048576; fg $t $norm 1 4194304; fg $t $norm 64 65536
    done
  done
done
echo "flowgraphs done at $((SECONDS-T0)) s"
python3 - "$R" <<'PY' | tee "$R/summary.txt"
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
            print(t, d["path"], d["norm"], d["nchan"], d["batch"], "%.3e values/s" % s, "ratio %.3f" % d["ratio"], "%.2f s" % d["seconds"], "block/core %.2f" % d.get("block_over_core", 0), d.get("detections"),
                  " ".join("over AA %.3f" % (s/a["samples_per_s"]) for a in an) if d["path"]=="block" else "")
PY
LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64 timeout 100 compute-sanitizer --tool memcheck --kernel-name kns=fast_kernel $BIN/test_boxcar_gpu > "$R/memcheck_fast_boxcar_gpu.log" 2>&1; echo "memcheck fast_kernel in test_boxcar_gpu rc $?"; tail -2 "$R/memcheck_fast_boxcar_gpu.log"
echo "done at $((SECONDS-T0)) s"
cd "$R" && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz all.tar.gz
