#!/usr/bin/env bash
# The final tree's core on the GPU host: build, every gpu test, the Kalman
# tests and memcheck, and Kalman/edges transient-bench against main (A).
set -uo pipefail
G=$(cd "$(dirname "$0")" && pwd); O=${OUT:-/tmp/out}; mkdir -p "$O"
S=/tmp/src; B=/tmp/bg; rm -rf $S $B; mkdir -p $S; tar -C $S -xzf $G/src.tar.gz
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $O/env.txt 2>&1
t0=$SECONDS
cmake -S $S -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 > $O/build.log 2>&1 && cmake --build $B -j16 >> $O/build.log 2>&1
echo "build rc=$? after $((SECONDS-t0)) s"
timeout 240 ctest --test-dir $B -L gpu --output-on-failure --no-tests=error > $O/ctest_gpu.log 2>&1; echo "ctest gpu rc=$?"
grep -E "Test +#|tests passed|tests failed" $O/ctest_gpu.log
timeout 120 ctest --test-dir $B -R kalman -LE gpu -j16 --output-on-failure > $O/ctest_kalman.log 2>&1; echo "ctest kalman rc=$?"; grep -E "tests passed|tests failed" $O/ctest_kalman.log
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 $B/bench/transient-bench --detector kalman --M 20,300 --seconds 0.05 --repeat 1 --variants reference,cuda-fast,cuda-paper > $O/sanitizer.log 2>&1; echo "memcheck kalman rc=$?"; grep "ERROR SUMMARY" $O/sanitizer.log
mkdir -p /tmp/A; tar -C /tmp/A -xzf $G/base-bundle.tar.gz
TR_COMPARE_ONLY="kalman" timeout 200 bash $G/gpu_compare.sh /tmp/A/base-bundle $B/bench/transient-bench $O/ab 2 1 > $O/ab.log 2>&1; echo "ab rc=$?"; cat $O/ab.log
cd $O && tar czf ab.tgz ab && rm -rf ab
echo "total $((SECONDS-t0)) s"
