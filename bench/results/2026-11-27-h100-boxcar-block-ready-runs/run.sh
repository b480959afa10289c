#!/usr/bin/env bash
# Boxcar block in flow graphs on an H100 from the bundle: the GPU flow graph
# tests; boxcar_search_ff without outputs (candidates on the device), WHITE
# and FIXED, 1 and 64 channels, default and long batches, beside its core.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/f3}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/f3/commit.txt)"
D=$(mktemp -d); tar -C $D -xzf .gpu/f3/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
echo "== test_flowgraph_cuda"
timeout 170 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "rc $?"; tail -4 "$R/gpu_flowgraph.log"
echo "== boxcar flow graphs at $((SECONDS-T0)) s"
for norm in white fixed; do
  for cb in "1 0" "1 8388608" "64 0" "64 262144"; do
    set -- $cb; bo=""; [ "$2" != 0 ] && bo="--batch $2"
    timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $1 $bo --boxcar-norm $norm --boxcar-output none --seconds 2 --json >> "$R/flowgraph_boxcar_$norm.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $norm nchan $1 batch $2 rc $?"
  done
done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            print(f.split("/")[-1], {k:d.get(k) for k in ("nchan","batch","norm","outputs","path","samples_per_s","ratio","core_samples_per_s","block_over_core") if k in d})
PY
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/f3_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/f3_log.txt "$R/log.txt"
