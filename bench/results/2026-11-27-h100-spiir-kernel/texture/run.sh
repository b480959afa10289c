#!/usr/bin/env bash
# SPIIR single rate: the second half of each 8-sample block through the
# texture path (TR_SPIIR_CUDA_TEX=1) against the load/store path only; GPU
# test with the texture path; Nsight Compute pipes of both.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/s4}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
B=/tmp/b
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16 --target transient-bench test_spiir) > "$X/build.log" 2>&1 || tail -30 "$X/build.log"
echo "built at $((SECONDS-T0)) s"
TB=$B/bench/transient-bench
for r in 1 2; do for t in 0 1; do
  TR_SPIIR_CUDA_TEX=$t timeout 60 $TB --detector spiir --templates 4096 --filters 512 --json --repeat 5 --variants cuda-fast --device-only > "$R/single_tex${t}_$r.jsonl" 2>/dev/null
  grep '"result"' "$R/single_tex${t}_$r.jsonl" | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('tex=$t run $r', '%.3e'%d['updates_per_s'])"
done; done
echo "== test_spiir --gpu with the texture path at $((SECONDS-T0)) s"
TR_SPIIR_CUDA_TEX=1 timeout 120 $B/tests/core/spiir/test_spiir --gpu > "$R/test_spiir_tex.log" 2>&1; echo "rc $?"; tail -2 "$R/test_spiir_tex.log"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_tex_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread
for t in 0 1; do
  TR_SPIIR_CUDA_TEX=$t timeout 120 $NCU --metrics $M -k regex:spiir_fast_kernel -s 2 -c 1 $TB --detector spiir --templates 4096 --filters 512 --samples 8192 --repeat 1 --variants cuda-fast --device-only > "$R/ncu_tex$t.txt" 2>&1; echo "ncu tex=$t rc $?"
  grep -E "l1tex|sm__|smsp__|gpu__|launch__" "$R/ncu_tex$t.txt"
done
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/s4_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/s4_log.txt "$R/log.txt"
