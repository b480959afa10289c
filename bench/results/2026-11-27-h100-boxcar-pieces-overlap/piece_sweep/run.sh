#!/usr/bin/env bash
# Host-to-candidates: pieces of about 2^20 values per call, pageable input
# staged by host threads. A = the tree before, B = the work tree; alternated.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g1}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "A: $(cat .gpu/g1/base.txt)  B: work tree"
mkdir -p /tmp/base && tar -C /tmp/base -xzf .gpu/g1/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/base -B /tmp/ba $CF && cmake --build /tmp/ba -j7 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j9 --target transient-bench test_boxcar test_boxcar_gpu test_candidates_gpu test_frb test_frb_devices) > "$X/build_b.log" 2>&1 || tail -20 "$X/build_b.log"
wait $ba || tail -20 "$X/build_a.log"
echo "built at $((SECONDS-T0)) s"
A=/tmp/ba/bench/transient-bench; B=/tmp/bb/bench/transient-bench
echo "== ctest (B)"
timeout 240 ctest --test-dir /tmp/bb -R "gpu_boxcar|gpu_candidates_cuda|gpu_frb" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head -12
cases=("1 16777216 1048576" "1 16777216 8388608" "64 1048576 65536" "64 1048576 262144")
echo "== host-to-candidates at $((SECONDS-T0)) s"
for r in 1 2; do for v in A B; do for cs in "${cases[@]}"; do
  set -- $cs
  f="$R/hc_${v}_$1_$3_$r.jsonl"
  if [ $v = A ]; then timeout 60 $A --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-path --json > "$f.full" 2>>"$X/err.txt"; grep host-to-candidates "$f.full" > "$f"; rm -f "$f.full"
  else timeout 60 $B --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-candidates --json > "$f" 2>>"$X/err.txt"; fi
  echo "$v $cs $r rc $?"
done; done; done
echo "== piece sizes (B) at $((SECONDS-T0)) s"
for pv in 262144 524288 2097152 4194304; do for cs in "${cases[@]}"; do
  set -- $cs
  TR_BOXCAR_CUDA_CAND_VALUES=$pv timeout 60 $B --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-candidates --json > "$R/piece_${pv}_$1_$3.jsonl" 2>>"$X/err.txt"
done; done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("mode")=="host-to-candidates":
            print(f.split("/")[-1], d.get("norm"), d.get("buffers","page-locked"), d.get("nchan"), d.get("batch"), "%.3g"%d["samples_per_s"], "%.1f%%"%(100*d["ratio"]), d.get("events"))
PY
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g1_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g1_log.txt "$R/log.txt"
