#!/usr/bin/env bash
# Second step: A = 809cbfc (sparse stages, direct loads), B = ad3363e (+ width
# codes as immediates, sparse starts in groups of 4 widths), C = the working
# tree (+ tiles wholly before the stream's start skip the search) through
# bench/tuning/boxcar_vs_aa.sh (GPU tests, kernel sweep, transient-bench,
# AstroAccelerate's SPDT harness, Nsight Compute of BD-32 and the AA list with
# the per-instruction counts of the AA list, memcheck and racecheck); then the
# kernel sweeps of A, B and C in turn and instruction counts of B and C.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g7}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
echo "C: $(cat .gpu/g7/commit.txt)  B: ad3363e  A: 809cbfc"
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
for v in a b; do
  mkdir -p /tmp/$v && tar -C /tmp/$v -xzf .gpu/g7/$v.tar.gz
  (cmake -S /tmp/$v -B /tmp/b$v $CF && cmake --build /tmp/b$v -j5 --target boxcar_kernels) > "$X/build_$v.log" 2>&1 &
done
TR_COMMIT=$(cat .gpu/g7/commit.txt) TR_PROFILE=1 TR_PROFILE_CASES="BD-AA BD-32" TR_PROFILE_SASS=1 TR_SANITIZE=1 \
  AA=$SRC/.gpu/aa OUT=$R/res bash bench/tuning/boxcar_vs_aa.sh > "$X/vs_aa.txt" 2>&1; echo "vs_aa rc $? at $((SECONDS-T0)) s"
cat "$R/res/table.md" 2>/dev/null
wait; echo "builds done at $((SECONDS-T0)) s"; tail -1 "$X/build_a.log" "$X/build_b.log"
(cmake --build "$SRC/build-gpu" -j16 --target test_candidates_gpu > "$X/build_cand.log" 2>&1 && \
  timeout 120 "$SRC/build-gpu/tests/core/boxcar/test_candidates_gpu" > "$R/test_candidates_gpu.log" 2>&1; echo "test_candidates_gpu rc $?"; tail -1 "$R/test_candidates_gpu.log")
for v in A B C; do
  case $v in A) BD=/tmp/ba;; B) BD=/tmp/bb;; C) BD=$SRC/build-gpu;; esac
  timeout 120 $BD/bench/tuning/boxcar_kernels 256 131072 7 > "$R/kernels_${v}_256x131072.jsonl" 2>>"$X/err.txt"; echo "$v kernels 256 rc $?"
  timeout 120 $BD/bench/tuning/boxcar_kernels 1024 262144 5 > "$R/kernels_${v}_1024x262144.jsonl" 2>>"$X/err.txt"; echo "$v kernels 1024 rc $?"
  if [ $v != A ]; then
    for c in BD-32 BD-AA; do
      timeout 90 ncu --clock-control none --metrics smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers \
        -k regex:fast_kernel --launch-skip 1 --launch-count 1 $BD/bench/tuning/boxcar_kernels 256 131072 1 $c 8192 1 8 > "$R/ncu_inst_${v}_${c}.txt" 2>&1; echo "$v ncu $c rc $?"
    done
  fi
done
echo "SUMMARY"
python3 - "$R" <<'PY'
import json,sys,glob,re
for f in sorted(glob.glob(sys.argv[1]+"/kernels_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="kernel" and d.get("variant")=="fast" and (d.get("tile"),d.get("split"),d.get("positions"))==(8192,1,8):
            print(f.split("/")[-1], d["algorithm"], "%.3e"%d["samples_per_s"])
        elif d.get("type")=="check" and not d.get("ok", True):
            print(f.split("/")[-1], "CHECK FAILED", l.strip()[:200])
for f in sorted(glob.glob(sys.argv[1]+"/ncu_inst_*.txt")):
    for l in open(f):
        if re.search(r"inst_executed|issue_active|time_duration|registers_per", l): print(f.split("/")[-1], l.strip())
PY
grep -E "exit" "$R/res/env.txt"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g7_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g7_log.txt "$R/log.txt"
