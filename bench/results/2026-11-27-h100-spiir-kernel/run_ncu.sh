#!/usr/bin/env bash
# SPIIR single-rate FAST kernel profile (L1 and stall breakdown) and shape
# sweep, 4096 x 512.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/s3}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
B=/tmp/b
(cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 && cmake --build $B -j16 --target transient-bench) > "$X/build.log" 2>&1 || tail -30 "$X/build.log"
echo "built at $((SECONDS-T0)) s"
TB=$B/bench/transient-bench
for sh in "" "512:8:32" "512:16:32"; do
  TR_SPIIR_CUDA_SHAPE=$sh timeout 60 $TB --detector spiir --templates 4096 --filters 512 --json --repeat 5 --variants cuda-fast --device-only 2>/dev/null | grep '"result"' | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('shape [$sh]', '%.3e'%d['updates_per_s'])"
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_tex_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_lg_cmd_read.sum,l1tex__t_sector_hit_rate.pct,l1tex__data_pipe_lsu_wavefronts.sum,l1tex__lsu_writeback_active.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_read.sum,sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active
timeout 200 $NCU --print-details all --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --metrics $M -k regex:spiir_fast_kernel -s 2 -c 1 $TB --detector spiir --templates 4096 --filters 512 --samples 8192 --repeat 1 --variants cuda-fast --device-only > "$R/ncu.txt" 2>&1; echo "ncu rc $?"
if grep -q "unrecognised\|unrecognized\|Invalid\|ERR" "$R/ncu.txt"; then
  head -5 "$R/ncu.txt"
  timeout 200 $NCU --section SpeedOfLight --section MemoryWorkloadAnalysis_Tables --metrics $M -k regex:spiir_fast_kernel -s 2 -c 1 $TB --detector spiir --templates 4096 --filters 512 --samples 8192 --repeat 1 --variants cuda-fast --device-only > "$R/ncu.txt" 2>&1; echo "ncu2 rc $?"
fi
grep -vE "^\s*$|^==PROF" "$R/ncu.txt" | grep -E "stalled|l1tex|lts__|sm__|Throughput|L1|Shared|Global|Hit|Wavefront|Sector|Request|Bank|LSU|breakdown|Pipe" | head -90
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/s3_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/s3_log.txt "$R/log.txt"
