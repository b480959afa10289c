#!/usr/bin/env bash
# SPIIR single rate with the samples in a shared-memory window. W = default
# (window kernel for 449-512 filter templates, refilled every 512 samples by
# asynchronous copies), W256 = the same binary refilling every 256 samples
# (TR_SPIIR_CUDA_WINDOW_CHUNK=256), G = the same binary with
# TR_SPIIR_CUDA_WINDOW=0 (the global FAST kernel, as before), V = the window
# kernel's first form (1e0ee0d: plain copies every 256 samples), alternated. GPU tests first, gstlal-spiir's harness in the same call,
# memcheck and racecheck of the window kernel, Nsight Compute of W and G.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g3}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "tree: $(cat .gpu/g3/commit.txt)"
SP=$SRC/.gpu/final2/spiir
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
mkdir -p /tmp/v2 && tar -C /tmp/v2 -xzf .gpu/g3/v2.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/v2 -B /tmp/bv $CF && cmake --build /tmp/bv -j5 --target transient-bench) > "$X/build_v.log" 2>&1 &
bv=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j12 --target transient-bench test_spiir test_spiir_multirate test_spiir_triggers_gpu) > "$X/build_b.log" 2>&1 || tail -30 "$X/build_b.log"
wait $bv || tail -30 "$X/build_v.log"
echo "built at $((SECONDS-T0)) s"
B=/tmp/bb/bench/transient-bench; V=/tmp/bv/bench/transient-bench
echo "== ctest at $((SECONDS-T0)) s"
timeout 240 ctest --test-dir /tmp/bb -R "gpu_spiir" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*|kernel$|FAIL" "$R/ctest_gpu.log" | head -30
/tmp/bb/tests/core/spiir/test_spiir --gpu 2>&1 | grep -E "templates of 449|FAIL" | head
echo "== single rate at $((SECONDS-T0)) s"
one() { # name binary env...
  local n=$1 b=$2; shift 2
  env "$@" timeout 60 $b --detector spiir --json --repeat 5 --variants cuda-fast,cuda-paper --device-only > "$R/single_${n}.jsonl" 2>>"$X/b.stderr"; echo "$n rc $?"
}
for r in 1 2 3; do
  one W_$r $B X=1; one W256_$r $B TR_SPIIR_CUDA_WINDOW_CHUNK=256; one G_$r $B TR_SPIIR_CUDA_WINDOW=0; one V_$r $V X=1
done
echo "== multirate at $((SECONDS-T0)) s"
for r in 1 2; do for v in W G; do
  e=X=1; [ $v = G ] && e=TR_SPIIR_CUDA_WINDOW=0
  env $e timeout 60 $B --detector spiir --multirate --json --repeat 5 --batch 4096 --samples 131072 --variants cuda-fast > "$R/mr_${v}_4096_$r.jsonl" 2>>"$X/mr.stderr"; echo "mr $v $r rc $?"
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
echo "== sanitizers at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
for tool in memcheck racecheck; do
  timeout 100 $CS --tool $tool $B --detector spiir --templates 640 --filters 500 --samples 600 --batch 300 --repeat 1 --variants cuda-fast --device-only > "$R/${tool}_window.log" 2>&1; echo "$tool rc $?"; tail -2 "$R/${tool}_window.log"
done
timeout 150 $CS --tool memcheck /tmp/bb/tests/core/spiir/test_spiir --gpu > "$R/memcheck_test_spiir.log" 2>&1; echo "memcheck test_spiir rc $?"; tail -2 "$R/memcheck_test_spiir.log"
echo "== ncu (W, G) at $((SECONDS-T0)) s"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null)
M=l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,smsp__inst_executed_op_shared_ld.sum,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__warps_active.avg.per_cycle_active,gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio
for w in 1 0; do
  env TR_SPIIR_CUDA_WINDOW=$w timeout 80 $NCU --metrics $M -k regex:"spiir_(fast|window)_kernel" -s 2 -c 1 $B --detector spiir --templates 4096 --filters 512 --samples 8192 --repeat 1 --variants cuda-fast --device-only > "$R/ncu_window$w.txt" 2>&1; echo "ncu window=$w rc $?"
  grep -E "spiir_|l1tex|sm__|smsp__|gpu__|launch__" "$R/ncu_window$w.txt" | cut -c1-160
done
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g3_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g3_log.txt "$R/log.txt"
