#!/usr/bin/env bash
# Host-to-candidates with the search of one piece beside the clustering of the
# one before (A = the tree before, B = the work tree), the GPU tests of B, and
# the boxcar block without outputs in flow graphs from the bundle of B.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/g4}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "A: $(cat .gpu/g4/base.txt)  B: $(cat .gpu/f3/commit.txt)"
mkdir -p /tmp/base && tar -C /tmp/base -xzf .gpu/g4/base.tar.gz
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
for v in A B; do for cs in "${cases[@]}"; do
  set -- $cs
  f="$R/hc_${v}_$1_$3.jsonl"
  case $v in
  A) timeout 60 $A --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-path --json > "$f.full" 2>>"$X/err.txt"; grep host-to-candidates "$f.full" > "$f"; rm -f "$f.full" ;;
  B) timeout 60 $B --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-candidates --json > "$f" 2>>"$X/err.txt" ;;
  B4) TR_BOXCAR_CUDA_CAND_VALUES=4194304 timeout 60 $B --detector boxcar --configs aa --nchan $1 --samples $2 --batch $3 --host-candidates --json > "$f" 2>>"$X/err.txt" ;;
  esac
  echo "$v $cs rc $?"
done; done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/hc_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("mode")=="host-to-candidates":
            print(f.split("/")[-1], d.get("norm"), d.get("buffers","page-locked"), d.get("nchan"), d.get("batch"), "%.3g"%d["samples_per_s"], "%.1f%%"%(100*d["ratio"]), d.get("events"))
PY
echo "== bundle at $((SECONDS-T0)) s"
D=$(mktemp -d); tar -C $D -xzf .gpu/f3/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
timeout 170 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "test_flowgraph_cuda rc $?"; tail -3 "$R/gpu_flowgraph.log"
for norm in white fixed; do
  for cb in "1 0 8192" "1 8388608 8192" "64 0 8192" "64 262144 8192" "1 0 1048576"; do
    set -- $cb; bo=""; [ "$2" != 0 ] && bo="--batch $2"
    timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $1 $bo --boxcar-norm $norm --boxcar-output none --boxcar-spacing $3 --seconds 2 --json >> "$R/flowgraph_boxcar_$norm.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $norm nchan $1 batch $2 spacing $3 rc $?"
  done
done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph" and d.get("outputs") is False:
            print(f.split("/")[-1], {k:d.get(k) for k in ("nchan","batch","norm","pulse_spacing","path","samples_per_s","ratio","block_over_core","detections") if k in d})
PY
echo "== memcheck at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
timeout 150 $CS --tool memcheck /tmp/bb/tests/core/boxcar/test_candidates_gpu > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck rc $?"; tail -3 "$R/memcheck_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/g4_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/g4_log.txt "$R/log.txt"
