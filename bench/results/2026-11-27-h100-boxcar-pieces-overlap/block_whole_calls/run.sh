#!/usr/bin/env bash
# The boxcar block without outputs after it hands its whole input to the core
# (bundle): the GPU flow graph tests, then five flow graph cases.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g5}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "source: $(cat .gpu/f3/commit.txt)"
D=$(mktemp -d); tar -C $D -xzf .gpu/f3/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
timeout 100 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; tail -3 "$R/gpu_flowgraph.log"
for c in "fixed 64 0 8192" "white 64 0 8192" "fixed 64 262144 8192" "fixed 1 8388608 8192" "fixed 1 0 1048576"; do
  set -- $c; bo=""; [ "$3" != 0 ] && bo="--batch $3"
  timeout 40 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $2 $bo --boxcar-norm $1 --boxcar-output none --boxcar-spacing $4 --seconds 1 --json >> "$R/flowgraph_boxcar_$1.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $c rc $?"
done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph" and d.get("outputs") is False:
            print(d["norm"], d["nchan"], d["batch"], d["pulse_spacing"], d["path"], "%.3g"%d["samples_per_s"], "%.1f%%"%(100*d["ratio"]), "%.2f"%d["block_over_core"])
PY
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g5_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g5_log.txt "$R/log.txt"
