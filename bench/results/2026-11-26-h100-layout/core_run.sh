#!/usr/bin/env bash
# Build the core of the new tree (GNU Radio off), run every test (gpu label
# first), then compute-sanitizer on the restructured CUDA contexts.
set -uo pipefail
G=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/out}; mkdir -p "$O"
S=/tmp/src; B=/tmp/bg; rm -rf $S $B; mkdir -p $S; tar -C $S -xzf $G/src.tar.gz
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; nvcc --version | tail -2; cmake --version | head -1; nproc; } > $O/env.txt 2>&1
t0=$SECONDS
cmake -S $S -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1
echo "build rc=$? after $((SECONDS-t0)) s"; tail -3 $O/build.log
timeout 240 ctest --test-dir $B -L gpu --output-on-failure --no-tests=error > $O/ctest_gpu.log 2>&1; echo "ctest gpu rc=$?"
grep -E "tests passed|tests failed|Failed|Skipped|\*\*\*" $O/ctest_gpu.log
timeout 200 ctest --test-dir $B -LE gpu -j16 --output-on-failure > $O/ctest_other.log 2>&1; echo "ctest other rc=$?"
grep -E "tests passed|tests failed|\*\*\*Failed|Timeout" $O/ctest_other.log
TB=$B/bench/transient-bench
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $TB --detector edges --samples 3000000 --ref-samples 100000 --repeat 1 --drops 0.05 --variants reference,cuda-fast,cuda-paper >> $O/sanitizer.log 2>&1; echo "$tool edges rc=$?"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $TB --detector kalman --M 20,300 --seconds 0.05 --repeat 1 --variants reference,cuda-fast,cuda-paper >> $O/sanitizer.log 2>&1; echo "$tool kalman rc=$?"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $TB --detector spiir --templates 200 --filters 40 --samples 3000 --ref-samples 3000 --repeat 1 --variants reference,cuda-fast,cuda-paper >> $O/sanitizer.log 2>&1; echo "$tool spiir rc=$?"
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 1 $TB --detector boxcar --nchan 3 --samples 12000 --max-width 700 --configs bd16,ig2 --variants cuda-fast,cuda-paper --repeat 1 --ref-samples 2000 --batch 5000 >> $O/sanitizer.log 2>&1; echo "$tool boxcar rc=$?"
done
grep -E "ERROR SUMMARY|RACECHECK SUMMARY" $O/sanitizer.log
echo "total $((SECONDS-t0)) s"
