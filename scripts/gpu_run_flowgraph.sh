#!/usr/bin/env bash
# The end-to-end GNU Radio measurements on a GPU host without GNU Radio, from
# a bundle made by scripts/make_bundle.sh (see bench/results/
# 2026-11-26-h100-flowgraph/README.md):
#
#   # on the build host (GNU Radio and CUDA):
#   cmake -S . -B build -G Ninja -DENABLE_GNURADIO=ON -DENABLE_PYTHON=OFF \
#         -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90
#   cmake --build build --target transient-flowgraph-bench test_flowgraph_cuda
#   scripts/make_bundle.sh -o build/bundle build/bench/flowgraph/transient-flowgraph-bench \
#         build/tests/flowgraph/test_flowgraph_cuda [build/tests/core/boxcar/test_boxcar ...]
#   # on the GPU host:
#   scripts/gpu_run_flowgraph.sh gr-transient-bundle.tar.gz OUTDIR [BENCH ARGS...]
#
# BUNDLE is the tarball or its unpacked folder. Writes into OUTDIR:
#   nvidia-smi.txt      GPU name, driver, PCIe link
#   host.txt            kernel, C library, CPU
#   gpu_flowgraph.log   the gpu flow graph test (CUDA against CPU detections)
#   device_buffers.log  the device-resident buffer test (test_device_buffers,
#                       docs/device-buffers.md), when the bundle has it
#   gpu_c_tests.log     the C core's gpu tests (ctest label gpu: test_edges,
#                       test_spiir, test_spiir_multirate, test_kalman, test_boxcar
#                       with --gpu; test_boxcar_gpu, test_kalman_gpu), those the
#                       bundle has
#   flowgraph.jsonl     transient-flowgraph-bench --json --pin both [BENCH ARGS]
#   flowgraph_extra.jsonl  boxcar with --boxcar-norm fixed (no robust
#                       statistics on the CPU before the search), then edges with
#                       a transition every 24 to 200 samples (--edge-spacing 24,200),
#                       then edges and boxcar (fixed) on CUDA with 2^22-sample batches
#   flowgraph.stderr    their log
#   command.txt         the commands
# Exit status: 1 if the test or the benchmark failed.
set -uo pipefail

if [ $# -lt 2 ]; then
    sed -n '2,32p' "$0"
    exit 2
fi
bundle=$1
out=$2
shift 2
mkdir -p "$out"

if [ -f "$bundle" ]; then
    tmp=$(mktemp -d)
    tar -C "$tmp" -xzf "$bundle"
    bundle=$(echo "$tmp"/*)
fi
run=$bundle/run

nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.current,pcie.link.width.current,pcie.link.gen.max \
    --format=csv >"$out/nvidia-smi.txt" 2>&1
{
    uname -a
    ldd --version 2>&1 | head -1
    echo "cpus: $(nproc)"
    grep -m1 "model name" /proc/cpuinfo
    echo "bundle: $(head -2 "$bundle/MANIFEST" | tr '\n' ' ')"
} >"$out/host.txt"

status=0
bench_args=(--json --pin both "$@")
# The C gpu tests of tests/core/CMakeLists.txt (program and arguments).
c_tests=("test_edges --gpu" "test_spiir --gpu" "test_spiir_multirate --gpu"
    "test_kalman --gpu" "test_boxcar --gpu" "test_boxcar_gpu" "test_kalman_gpu")
{
    echo "$run test_flowgraph_cuda"
    [ -x "$bundle/bin/test_device_buffers" ] && echo "$run test_device_buffers"
    for t in "${c_tests[@]}"; do
        [ -x "$bundle/bin/${t%% *}" ] && echo "$run $t"
    done
    echo "$run transient-flowgraph-bench ${bench_args[*]}"
    echo "$run transient-flowgraph-bench ${bench_args[*]} --detector boxcar --boxcar-norm fixed"
    echo "$run transient-flowgraph-bench ${bench_args[*]} --detector edges --edge-spacing 24,200"
    echo "$run transient-flowgraph-bench ${bench_args[*]} --detector edges,boxcar --boxcar-norm fixed --boxcar-nchan 1 --backend cuda --batch 4194304"
} >"$out/command.txt"

timeout 300 "$run" test_flowgraph_cuda >"$out/gpu_flowgraph.log" 2>&1
rc=$?
echo "exit status $rc" >>"$out/gpu_flowgraph.log"
[ $rc -eq 0 ] || status=1

if [ -x "$bundle/bin/test_device_buffers" ]; then
    timeout 180 "$run" test_device_buffers >"$out/device_buffers.log" 2>&1
    rc=$?
    echo "exit status $rc" >>"$out/device_buffers.log"
    [ $rc -eq 0 ] || status=1
fi

for t in "${c_tests[@]}"; do
    [ -x "$bundle/bin/${t%% *}" ] || continue
    echo "== $t" >>"$out/gpu_c_tests.log"
    # shellcheck disable=SC2086 # program and its arguments
    timeout 300 "$run" $t >>"$out/gpu_c_tests.log" 2>&1
    rc=$?
    echo "== $t: exit status $rc" >>"$out/gpu_c_tests.log"
    [ $rc -eq 0 ] || status=1
done

"$run" transient-flowgraph-bench "${bench_args[@]}" >"$out/flowgraph.jsonl" \
    2>"$out/flowgraph.stderr"
rc=$?
echo "exit status $rc" >>"$out/flowgraph.stderr"
[ $rc -eq 0 ] || status=1

"$run" transient-flowgraph-bench "${bench_args[@]}" --detector boxcar --boxcar-norm fixed \
    >"$out/flowgraph_extra.jsonl" 2>>"$out/flowgraph.stderr"
rc=$?
echo "exit status $rc (boxcar, fixed normalisation)" >>"$out/flowgraph.stderr"
[ $rc -eq 0 ] || status=1
"$run" transient-flowgraph-bench "${bench_args[@]}" --detector edges --edge-spacing 24,200 \
    >>"$out/flowgraph_extra.jsonl" 2>>"$out/flowgraph.stderr"
rc=$?
echo "exit status $rc (edges, dense transitions)" >>"$out/flowgraph.stderr"
[ $rc -eq 0 ] || status=1
# Latency for throughput: 4 Mi-sample batches (16 MiB per GPU call).
"$run" transient-flowgraph-bench "${bench_args[@]}" --detector edges,boxcar --boxcar-norm fixed \
    --boxcar-nchan 1 --backend cuda --batch 4194304 \
    >>"$out/flowgraph_extra.jsonl" 2>>"$out/flowgraph.stderr"
rc=$?
echo "exit status $rc (edges and boxcar, CUDA, batch 2^22)" >>"$out/flowgraph.stderr"
[ $rc -eq 0 ] || status=1

cat "$out/nvidia-smi.txt" "$out/gpu_flowgraph.log"
[ -f "$out/device_buffers.log" ] && tail -20 "$out/device_buffers.log"
[ -f "$out/gpu_c_tests.log" ] && grep "^== .*exit status" "$out/gpu_c_tests.log"
cat "$out/flowgraph.jsonl" "$out/flowgraph_extra.jsonl"
tail -5 "$out/flowgraph.stderr"
exit $status
