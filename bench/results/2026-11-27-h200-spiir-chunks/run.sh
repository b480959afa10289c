#!/usr/bin/env bash
# SPIIR single rate on an H100: whole batches in time chunks. Three trees built
# side by side and run alternately in one call: A = af59b39 (before), B = HEAD
# (chunks; B0 = the same binary with TR_SPIIR_CUDA_CHUNK=0), C = HEAD without
# the opaque line pointer (line_at's asm removed). GPU tests of B (spiir with
# and without forced chunks, boxcar candidates and device path), memcheck of
# forced chunks, gstlal-spiir's harness in the same call, Nsight Compute of B.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g1}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "B: $(cat .gpu/g1/commit.txt)  A: af59b39"
SP=$SRC/.gpu/final2/spiir
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
mkdir -p /tmp/base /tmp/cc && tar -C /tmp/base -xzf .gpu/g1/base.tar.gz
git archive HEAD | tar -C /tmp/cc -x && sed -i '/asm("mov.b64 %0, %0;" : "+l"(p));/d' /tmp/cc/cuda/spiir/spiir_kernels.cuh
grep -c 'asm("mov.b64' /tmp/cc/cuda/spiir/spiir_kernels.cuh
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/base -B /tmp/ba $CF && cmake --build /tmp/ba -j5 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
(cmake -S /tmp/cc -B /tmp/bc $CF && cmake --build /tmp/bc -j5 --target transient-bench) > "$X/build_c.log" 2>&1 &
bc=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j6 --target transient-bench test_spiir test_spiir_multirate test_spiir_triggers_gpu test_candidates_gpu test_boxcar_gpu) > "$X/build_b.log" 2>&1 || tail -30 "$X/build_b.log"
wait $ba || tail -30 "$X/build_a.log"
wait $bc || tail -30 "$X/build_c.log"
echo "built at $((SECONDS-T0)) s"
A=/tmp/ba/bench/transient-bench; B=/tmp/bb/bench/transient-bench; C=/tmp/bc/bench/transient-bench
echo "== single rate at $((SECONDS-T0)) s"
one() { # name binary env...
  local n=$1 b=$2; shift 2
  env "$@" timeout 60 $b --detector spiir --json --repeat 5 --variants cuda-fast,cuda-paper --device-only > "$R/single_${n}.jsonl" 2>>"$X/b.stderr"; echo "$n rc $?"
}
for r in 1 2; do
  one A_$r $A X=1; one B_$r $B X=1; one B0_$r $B TR_SPIIR_CUDA_CHUNK=0; one C_$r $C X=1
done
echo "== multirate at $((SECONDS-T0)) s"
for r in 1 2; do for v in A B; do
  timeout 60 ${!v} --detector spiir --multirate --json --repeat 5 --batch 4096 --samples 131072 --variants cuda-fast > "$R/mr_${v}_4096_$r.jsonl" 2>>"$X/mr.stderr"; echo "mr $v $r rc $?"
done; done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="result": print(f.split("/")[-1], d.get("variant"), d.get("templates"), d.get("filters"), "%.3e"%d.get("updates_per_s",0), d.get("realtime_factor_4096hz"), d.get("ok"))
PY
echo "== gstlal-spiir at $((SECONDS-T0)) s"
wait $pb; echo "peer build rc $?"
timeout 100 env BUILD=/tmp/spb OUT=$X/spiir_peer bash "$SP/run.sh" --reps 9 --cases 4096x512x8192,4096x8x65536 > "$X/spiir_peer_run.txt" 2>&1; echo "peer rc $?"
cp $X/spiir_peer/spiir.jsonl "$R/spiir_peer.jsonl" 2>/dev/null
grep -h '"kernel"' "$R/spiir_peer.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(d['case'], '%.3e'%d['updates_per_s'])"
echo "== ctest (B) at $((SECONDS-T0)) s"
timeout 240 ctest --test-dir /tmp/bb -R "gpu_spiir|gpu_candidates_cuda|gpu_boxcar_cuda" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -20
echo "== memcheck, forced chunks, at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
TR_SPIIR_CUDA_CHUNK=1 TR_SPIIR_CUDA_SEGMENT=0 timeout 150 $CS --tool memcheck /tmp/bb/tests/core/spiir/test_spiir --gpu > "$R/memcheck_chunks.log" 2>&1; echo "memcheck rc $?"; tail -3 "$R/memcheck_chunks.log"
echo "== ncu (B, B0) at $((SECONDS-T0)) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second
for ch in 1 0; do
  env TR_SPIIR_CUDA_CHUNK=$ch timeout 80 $NCU --metrics $M -k regex:spiir_fast_kernel -s 2 -c 1 $B --detector spiir --templates 4096 --filters 512 --samples 8192 --repeat 1 --variants cuda-fast --device-only > "$R/ncu_chunk$ch.txt" 2>&1; echo "ncu chunk=$ch rc $?"
  grep -E "l1tex|sm__|smsp__|gpu__|launch__" "$R/ncu_chunk$ch.txt"
done
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g1_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g1_log.txt "$R/log.txt"
