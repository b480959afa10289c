#!/usr/bin/env bash
# The boxcar host paths (transient-bench --host-path: tr_boxcar_search_candidates
# from page-locked memory among them) before (A: 248a92d) and after (B: e6fdcf7,
# the next piece copied in while one is searched) on one H100, alternately.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/f4}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
mkdir -p /tmp/base && tar -C /tmp/base -xzf .gpu/f4/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/base -B /tmp/ba $CF && cmake --build /tmp/ba -j8 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j8 --target transient-bench) > "$X/build_b.log" 2>&1 || tail -20 "$X/build_b.log"
wait $ba || tail -20 "$X/build_a.log"
echo "built at $((SECONDS-T0)) s"
A=/tmp/ba/bench/transient-bench; B=/tmp/bb/bench/transient-bench
for r in 1 2; do for v in A B; do
  timeout 60 ${!v} --detector boxcar --configs aa --nchan 64 --samples 1048576 --batch 65536 --host-path --json > "$R/host_${v}_64_$r.jsonl" 2>>"$X/err.txt"; echo "$v 64 $r rc $?"
  timeout 60 ${!v} --detector boxcar --configs aa --nchan 1 --samples 16777216 --batch 1048576 --host-path --json > "$R/host_${v}_1_$r.jsonl" 2>>"$X/err.txt"; echo "$v 1 $r rc $?"
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
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/f4_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/f4_log.txt "$R/log.txt"
