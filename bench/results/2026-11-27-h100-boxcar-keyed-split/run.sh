#!/usr/bin/env bash
# Boxcar FAST: stages of stride >= 16 with 8/16/32 widths keep packed keys.
# B = the working tree through bench/tuning/boxcar_vs_aa.sh (GPU tests,
# kernel sweep, transient-bench, AstroAccelerate's SPDT harness, Nsight
# Compute of BD-32, memcheck and racecheck); A = f6c5d88 (before), its
# transient-bench built alongside and run after, then B's once more.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g4}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
echo "B: $(cat .gpu/g4/commit.txt)  A: f6c5d88"
mkdir -p /tmp/a && tar -C /tmp/a -xzf .gpu/g4/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/a -B /tmp/ba $CF && cmake --build /tmp/ba -j6 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
TR_COMMIT=$(cat .gpu/g4/commit.txt) TR_PROFILE=1 TR_PROFILE_CASES="BD-32" TR_SANITIZE=1 \
  AA=$SRC/.gpu/aa OUT=$R/res bash bench/tuning/boxcar_vs_aa.sh > "$X/vs_aa.txt" 2>&1; echo "vs_aa rc $? at $((SECONDS-T0)) s"
cat "$R/res/table.md" 2>/dev/null
wait $ba; echo "build A rc $?"
A=/tmp/ba/bench/transient-bench; B=$SRC/build-gpu/bench/transient-bench
for v in A B; do
  timeout 90 ${!v} --detector boxcar --json --nchan 256 --samples 131072 --variants cuda-fast --configs aa,bd32,bd16,bd8,ig1 --repeat 7 > "$R/bench_${v}_256x131072.jsonl" 2>>"$X/err.txt"; echo "$v 256 rc $?"
  timeout 120 ${!v} --detector boxcar --json --nchan 1024 --samples 262144 --variants cuda-fast --configs aa,bd32,bd16,bd8,ig1 --repeat 5 > "$R/bench_${v}_1024x262144.jsonl" 2>>"$X/err.txt"; echo "$v 1024 rc $?"
done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/bench_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="result" and d.get("variant")=="cuda-fast":
            print(f.split("/")[-1], d.get("config") or d.get("algorithm"), "%.3e"%d.get("samples_per_s",0))
PY
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g4_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g4_log.txt "$R/log.txt"
