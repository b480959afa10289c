#!/usr/bin/env bash
# SPIIR GPU tests after the window kernel's shared-memory limit change.
set -uo pipefail
R=${OUT:-/tmp/g6}; mkdir -p "$R"
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "tree: $(cat .gpu/g6/commit.txt)"
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j16 --target test_spiir test_spiir_multirate) > "$R/build.log" 2>&1 || tail -20 "$R/build.log"
echo "built at $((SECONDS-T0)) s"
timeout 200 ctest --test-dir /tmp/bb -R "gpu_spiir$|gpu_spiir_multirate" --output-on-failure -j2 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|FAIL|kernel$" "$R/ctest_gpu.log" | head
/tmp/bb/tests/core/spiir/test_spiir --gpu 2>&1 | tail -4
echo "done at $((SECONDS-T0)) s"
