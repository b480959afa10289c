#!/usr/bin/env bash
# The boxcar block without outputs (detects as vectors) before (A: B's bundle
# with A's transient libraries and benchmark, .gpu/a4/overlay.tar.gz) and
# after (B, bundle at .gpu/f6): the pipelined search, one channel's peaks
# clustered in runs, one channel searched in place, the selection in one
# round trip. Two rounds alternated; then B's flow-graph GPU tests, the core
# library of the source tree built here (GNU Radio off) with `ctest -L gpu`,
# and compute-sanitizer memcheck of test_candidates_gpu.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g11}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "A: $(cat .gpu/a4/commit.txt)  B: $(cat .gpu/f6/commit.txt)"
for t in A B; do
  d=$(mktemp -d); tar -C $d -xzf .gpu/f6/gr-transient-bundle.tar.gz
  [ $t = A ] && tar -C $d -xzf .gpu/a4/overlay.tar.gz
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
timeout 170 $RUN_B test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; tail -2 "$R/gpu_flowgraph.log"
timeout 60 $RUN_B test_device_buffers > "$R/gpu_device_buffers.log" 2>&1; echo "test_device_buffers rc $?"; tail -2 "$R/gpu_device_buffers.log"
python3 - "$R" <<'PY'
import json,sys
for t in "AB":
    for l in open(sys.argv[1]+"/flowgraph_%s.jsonl" % t):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            print(t, d["path"], d["norm"], d["nchan"], "%.3e" % d["samples_per_s"], "ratio %.3f" % d["ratio"], "block/core %.2f" % d.get("block_over_core", 0), d.get("detections"))
PY
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j16) > "$X/build.log" 2>&1; echo "core build rc $? at $((SECONDS-T0)) s"
timeout 300 ctest --test-dir /tmp/bb -L gpu --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest -L gpu rc $?"
grep -E "tests passed|Failed|\*\*\*|Total Test" "$R/ctest_gpu.log" | head -12
T=$(find /tmp/bb -name test_candidates_gpu -type f | head -1)
timeout 240 compute-sanitizer --tool memcheck --leak-check full $T > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck rc $?"; tail -3 "$R/memcheck_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g11_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g11_log.txt "$R/log.txt"
