#!/usr/bin/env bash
# Boxcar device clustering: runs of ready statistics windows in one part.
# A = the tree before (HEAD~1), B = HEAD, built side by side on one GPU and run
# alternately (three rounds): the host paths (tr_boxcar_search_candidates from page-locked
# memory among them; FIXED and WHITE) at 1 and 64 channels, two rounds; the
# boxcar, candidates and FRB GPU tests of B; memcheck of the device
# candidates test.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g5}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "B: $(cat .gpu/g5/commit.txt)  A: HEAD~1"
mkdir -p /tmp/base && tar -C /tmp/base -xzf .gpu/g5/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/base -B /tmp/ba $CF && cmake --build /tmp/ba -j7 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j9 --target transient-bench test_boxcar test_boxcar_gpu test_candidates_gpu test_frb test_frb_devices) > "$X/build_b.log" 2>&1 || tail -20 "$X/build_b.log"
wait $ba || tail -20 "$X/build_a.log"
echo "built at $((SECONDS-T0)) s"
A=/tmp/ba/bench/transient-bench; B=/tmp/bb/bench/transient-bench
echo "== ctest (B)"
timeout 200 ctest --test-dir /tmp/bb -R "gpu_boxcar|gpu_candidates_cuda|gpu_frb" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -12
echo "== host paths at $((SECONDS-T0)) s"
for r in 1 2 3; do for v in A B; do
  timeout 80 ${!v} --detector boxcar --configs aa --nchan 64 --samples 1048576 --batch 65536 --host-path --json > "$R/host_${v}_64_$r.jsonl" 2>>"$X/err.txt"; echo "$v 64 $r rc $?"
  timeout 80 ${!v} --detector boxcar --configs aa --nchan 1 --samples 16777216 --batch 1048576 --host-path --json > "$R/host_${v}_1_$r.jsonl" 2>>"$X/err.txt"; echo "$v 1 $r rc $?"
done; done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/host_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="result":
            print(f.split("/")[-1], {k:d.get(k) for k in ("path","mode","norm","nchan","samples_per_s","ratio") if k in d})
PY
echo "== memcheck gpu_boxcar_cuda at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
timeout 200 $CS --tool memcheck /tmp/bb/tests/core/boxcar/test_candidates_gpu > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck rc $?"; tail -3 "$R/memcheck_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g5_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g5_log.txt "$R/log.txt"
