#!/usr/bin/env bash
# Build, GPU tests and host-path benchmark of the boxcar search on a GPU host
# (no GNU Radio). Run from the source root; results go to $OUT.
set -uo pipefail
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
B=build-gpu
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,pcie.link.gen.max,pcie.link.width.max \
        --format=csv,noheader
    grep -m1 'model name' /proc/cpuinfo
    nproc
    git rev-parse --short HEAD 2>/dev/null || true
} >"$OUT/env.txt" 2>&1
t0=$SECONDS
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF \
    -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
    timeout 200 cmake --build $B -j16 --target test_boxcar test_boxcar_gpu transient-bench \
        >>"$OUT/build.log" 2>&1
echo "build: exit $? after $((SECONDS - t0)) s" >>"$OUT/env.txt"
t0=$SECONDS
(cd $B && timeout 120 ctest -L gpu -R boxcar --output-on-failure -V) >"$OUT/ctest_gpu.log" 2>&1
echo "ctest -L gpu -R boxcar: exit $? after $((SECONDS - t0)) s" >>"$OUT/env.txt"
run() { # name, arguments
    local name=$1
    shift
    echo "$B/apps/transient-bench $*" >>"$OUT/commands.txt"
    timeout 90 $B/apps/transient-bench "$@" >"$OUT/$name.jsonl" 2>>"$OUT/bench.stderr"
    echo "$name: exit $?" >>"$OUT/env.txt"
}
C="--detector boxcar --configs aa --max-width 256 --host-path --json"
run host_1ch $C --nchan 1 --samples 16777216 --batch 1048576
run host_64ch $C --nchan 64 --samples 262144 --batch 65536
run host_1ch_b4m $C --nchan 1 --samples 16777216 --batch 4194304
