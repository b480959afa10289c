#!/usr/bin/env bash
# GPU host: build the core (sm_90, GNU Radio off); the dedispersion and FRB
# GPU tests; compute-sanitizer memcheck on both; how long a CUDA context takes.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/c4}; mkdir -p "$R"
B=$SRC/build-gpu
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "source: $(cat .gpu/c4/commit.txt)"
nvcc -O2 -arch=sm_90 -o /tmp/cuinit .gpu/c4/cuinit.cu && for i in 1 2 3; do /tmp/cuinit; done | tee "$R/cuinit.jsonl"
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16 --target test_dedisp test_frb test_frb_devices transient-frb) > "$R/build.log" 2>&1 || tail -30 "$R/build.log"
echo "build $((SECONDS-T0)) s"
timeout 200 ctest --test-dir $B -R "gpu_dedisp|gpu_frb" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|failed|\*\*\*" "$R/ctest_gpu.log" | head
for t in dedisp/test_dedisp frb/test_frb; do
  timeout 150 compute-sanitizer --tool memcheck --error-exitcode 1 $B/tests/core/$t --gpu > "$R/memcheck_$(basename $t).txt" 2>&1
  echo "$t memcheck rc $? $(grep -h 'ERROR SUMMARY' $R/memcheck_$(basename $t).txt | tail -1) $(grep -h 'passed' $R/memcheck_$(basename $t).txt | tail -1)"
done | tee "$R/sanitizer.txt"
for i in 1 2; do /usr/bin/time -f "transient-frb --help: %e s" $B/apps/transient-frb --help > /dev/null; done
for i in 1 2; do /usr/bin/time -f "transient-frb 29.fil cuda: %e s" $B/apps/transient-frb examples/data/29.fil --backend cuda --format json -o /tmp/f29.json; python3 -c "import json;print(json.load(open('/tmp/f29.json'))['processed']['stage_seconds'])"; done
echo "done at $((SECONDS-T0)) s"
