#!/usr/bin/env bash
# GPU tests of the bundle .gpu/f17 and memcheck of test_candidates_gpu.
set -uo pipefail
R=${OUT:-/tmp/t16}; mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "tree: $(cat .gpu/f17/commit.txt)"
d=$(mktemp -d); tar -C $d -xzf .gpu/f17/gr-transient-bundle.tar.gz; RUN=$d/gr-transient-bundle/run; BIN=$d/gr-transient-bundle/bin
for t in "test_boxcar --gpu" "test_boxcar_gpu" "test_candidates_gpu" "test_frb --gpu examples/data/29.fil" "test_frb_devices --gpu" "test_flowgraph_cuda" "test_device_buffers"; do
  n=$(echo $t | cut -d' ' -f1)
  timeout 300 $RUN $t > "$R/gpu_test_$n.log" 2>&1; echo "$t rc $?"; tail -1 "$R/gpu_test_$n.log"
done
echo "tests done at $((SECONDS-T0)) s"
LD_LIBRARY_PATH=$d/gr-transient-bundle/lib:/usr/local/cuda/lib64 timeout 120 compute-sanitizer --tool memcheck --leak-check full $BIN/test_candidates_gpu > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck test_candidates_gpu rc $?"; tail -2 "$R/memcheck_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
