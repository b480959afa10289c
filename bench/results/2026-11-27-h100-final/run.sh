#!/usr/bin/env bash
# One call on a GPU host: the final tree's GPU tests (core, GNU Radio off;
# the edge tests left out: unchanged since they passed today) and, from a
# bundle, the GPU flow graph test and the FRB search block beside tr_frb.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/c6}; X=$R/x; mkdir -p "$X"
B=$SRC/build-gpu
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/c6/commit.txt)"
D=$(mktemp -d); tar -C $D -xzf .gpu/c6/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
(timeout 120 $RUN transient-flowgraph-bench --detector frb --backend cuda,cpu --seconds 3 --json > "$R/flowgraph_frb.jsonl" 2> "$X/fg_frb.stderr"; echo "fg frb rc $?" > "$X/fg_rc.txt") 
cat "$X/fg_rc.txt"
python3 - "$R/flowgraph_frb.jsonl" <<'PY'
import json,sys
for l in open(sys.argv[1]):
    try: d=json.loads(l)
    except Exception: continue
    if d.get("type")=="flowgraph": print({k:d.get(k) for k in ("backend","path","samples_per_s","core_samples_per_s","block_over_core","pinned_buffers")})
PY
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16) > "$X/build.log" 2>&1 || tail -30 "$X/build.log"
echo "build at $((SECONDS-T0)) s"
timeout 200 ctest --test-dir $B -L gpu -E "gpu_edges" --output-on-failure -j4 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -20
timeout 150 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; tail -3 "$R/gpu_flowgraph.log"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/c6_log.txt
tar -C "$R" -czf /tmp/all6.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all6.tar.gz "$R/all.tar.gz" && cp /tmp/c6_log.txt "$R/log.txt"
