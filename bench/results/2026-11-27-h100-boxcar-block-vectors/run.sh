#!/usr/bin/env bash
# The tree's GPU tests (core library, GNU Radio off: ctest -L gpu) and, from
# the portable bundle of the same tree, the flow-graph GPU test and the boxcar
# block without outputs with its detects messages as PMT dicts (one per
# event) and as vectors (one dict of uniform vectors per message).
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g10}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "tree: $(cat .gpu/f4/commit.txt)"
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j14) > "$X/build.log" 2>&1 &
bb=$!
D=$(mktemp -d); tar -C $D -xzf .gpu/f4/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
for msg in dicts vectors; do
  for norm in fixed white; do
    for nc in 1 64; do
      timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $nc --boxcar-norm $norm --boxcar-output none --boxcar-spacing 8192 --boxcar-msg $msg --seconds 2 --json >> "$R/flowgraph_boxcar_$msg.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $msg $norm nchan $nc rc $?"
    done
  done
done
timeout 170 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; tail -2 "$R/gpu_flowgraph.log"
timeout 60 $RUN test_device_buffers > "$R/gpu_device_buffers.log" 2>&1; echo "test_device_buffers rc $?"; tail -2 "$R/gpu_device_buffers.log"
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            print(f.split("/")[-1], {k:d.get(k) for k in ("nchan","batch","norm","msg_format","pulse_spacing","samples_per_s","ratio","block_over_core","detections") if k in d})
PY
wait $bb; echo "core build rc $? at $((SECONDS-T0)) s"
timeout 300 ctest --test-dir /tmp/bb -L gpu --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest -L gpu rc $?"
grep -E "tests passed|Failed|\*\*\*|Total Test" "$R/ctest_gpu.log" | head -12
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g10_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g10_log.txt "$R/log.txt"
