#!/usr/bin/env bash
# GPU tests of the tree on an H100 (core, GNU Radio off): every gpu test but
# the edge ones; compute-sanitizer memcheck of the boxcar and candidates tests.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/f3}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "source: $(cat .gpu/f3/commit.txt)"
B=/tmp/b
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16) > "$X/build.log" 2>&1 || tail -30 "$X/build.log"
echo "built at $((SECONDS-T0)) s"
timeout 300 ctest --test-dir $B -L gpu -E "gpu_edges" --output-on-failure -j4 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*|FAIL" "$R/ctest_gpu.log" | head -40
echo "== memcheck at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)

if [ -n "$CS" ]; then
  timeout 150 $CS --tool memcheck $B/tests/core/boxcar/test_candidates_gpu > "$R/memcheck_candidates.log" 2>&1; echo "memcheck candidates rc $?"; tail -3 "$R/memcheck_candidates.log"
fi
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/f3_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/f3_log.txt "$R/log.txt"
