#!/usr/bin/env bash
# Boxcar FAST: sparse stages in a pass of their own, direct span loads,
# unrolled scan groups. B = the working tree through
# bench/tuning/boxcar_vs_aa.sh (GPU tests, kernel sweep, transient-bench,
# AstroAccelerate's SPDT harness, Nsight Compute of BD-32 and the AA list with
# the per-instruction counts of BD-32, memcheck and racecheck); A = 1d65ff6
# (before), its kernel sweep and transient-bench built alongside and run
# after, then B's once more; instruction counts of A's FAST launches.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g6}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
echo "B: $(cat .gpu/g6/commit.txt)  A: 1d65ff6"
mkdir -p /tmp/a && tar -C /tmp/a -xzf .gpu/g6/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/a -B /tmp/ba $CF && cmake --build /tmp/ba -j6 --target transient-bench boxcar_kernels) > "$X/build_a.log" 2>&1 &
ba=$!
TR_COMMIT=$(cat .gpu/g6/commit.txt) TR_PROFILE=1 TR_PROFILE_CASES="BD-32 BD-AA" TR_PROFILE_SASS=1 TR_SANITIZE=1 \
  AA=$SRC/.gpu/aa OUT=$R/res bash bench/tuning/boxcar_vs_aa.sh > "$X/vs_aa.txt" 2>&1; echo "vs_aa rc $? at $((SECONDS-T0)) s"
cat "$R/res/table.md" 2>/dev/null
wait $ba; echo "build A rc $? at $((SECONDS-T0)) s"
(cmake --build "$SRC/build-gpu" -j16 --target test_candidates_gpu > "$X/build_cand.log" 2>&1 && \
  timeout 120 "$SRC/build-gpu/tests/core/boxcar/test_candidates_gpu" > "$R/test_candidates_gpu.log" 2>&1; echo "test_candidates_gpu rc $?")
for v in A B; do
  if [ $v = A ]; then BD=/tmp/ba; else BD=$SRC/build-gpu; fi
  timeout 120 $BD/bench/tuning/boxcar_kernels 256 131072 7 > "$R/kernels_${v}_256x131072.jsonl" 2>>"$X/err.txt"; echo "$v kernels 256 rc $?"
  timeout 120 $BD/bench/tuning/boxcar_kernels 1024 262144 5 > "$R/kernels_${v}_1024x262144.jsonl" 2>>"$X/err.txt"; echo "$v kernels 1024 rc $?"
  timeout 90 $BD/bench/transient-bench --detector boxcar --json --nchan 256 --samples 131072 --variants cuda-fast --configs aa,bd32,bd16,bd8,ig1 --repeat 7 > "$R/bench_${v}_256x131072.jsonl" 2>>"$X/err.txt"; echo "$v bench 256 rc $?"
  timeout 120 $BD/bench/transient-bench --detector boxcar --json --nchan 1024 --samples 262144 --variants cuda-fast --configs aa,bd32,bd16,bd8,ig1 --repeat 5 > "$R/bench_${v}_1024x262144.jsonl" 2>>"$X/err.txt"; echo "$v bench 1024 rc $?"
  for c in BD-32 BD-AA; do
    timeout 90 ncu --clock-control none --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers \
      -k regex:fast_kernel --launch-skip 1 --launch-count 1 $BD/bench/tuning/boxcar_kernels 256 131072 1 $c 8192 1 8 > "$R/ncu_inst_${v}_${c}.txt" 2>&1; echo "$v ncu $c rc $?"
  done
done
echo "SUMMARY"
python3 - "$R" <<'PY'
import json,sys,glob,re
for f in sorted(glob.glob(sys.argv[1]+"/kernels_*.jsonl"))+sorted(glob.glob(sys.argv[1]+"/bench_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="kernel" and d.get("variant")=="fast" and (d.get("tile"),d.get("split"),d.get("positions"))==(8192,1,8):
            print(f.split("/")[-1], d["algorithm"], "%.3e"%d["samples_per_s"])
        elif d.get("type")=="check" and not d.get("ok", True):
            print(f.split("/")[-1], "CHECK FAILED", l.strip()[:200])
        elif d.get("type")=="result" and d.get("variant")=="cuda-fast":
            print(f.split("/")[-1], d.get("config") or d.get("algorithm"), "%.3e"%d.get("samples_per_s",0))
for f in sorted(glob.glob(sys.argv[1]+"/ncu_inst_*.txt")):
    for l in open(f):
        if re.search(r"inst_executed|issue_active|time_duration|registers", l): print(f.split("/")[-1], l.strip())
PY
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g6_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g6_log.txt "$R/log.txt"
