#!/usr/bin/env bash
# SPIIR on an H100: the tree before this change set (6ed9c31, "A") and after
# it (HEAD, "B": the FAST reduce-scatter unrolled per level; multirate steps
# overlapped across streams), built side by side and run alternately in one
# call; the spiir GPU tests of B (and compute-sanitizer memcheck of the
# multirate test); gstlal-spiir's harness in the same call.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/f1}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "B: $(cat .gpu/f1/commit.txt)  A: 6ed9c31"
SP=$SRC/.gpu/final2/spiir
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
mkdir -p /tmp/base && tar -C /tmp/base -xzf .gpu/f1/base.tar.gz
CF="-G Ninja -DCMAKE_BUILD_TYPE=Release -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90"
(cmake -S /tmp/base -B /tmp/ba $CF && cmake --build /tmp/ba -j7 --target transient-bench) > "$X/build_a.log" 2>&1 &
ba=$!
(cmake -S . -B /tmp/bb $CF && cmake --build /tmp/bb -j8 --target transient-bench test_spiir test_spiir_multirate test_spiir_triggers_gpu) > "$X/build_b.log" 2>&1 || tail -30 "$X/build_b.log"
wait $ba || tail -30 "$X/build_a.log"
echo "built at $((SECONDS-T0)) s"
A=/tmp/ba/bench/transient-bench; B=/tmp/bb/bench/transient-bench
echo "== ctest spiir gpu (B)"
timeout 200 ctest --test-dir /tmp/bb -R "gpu_spiir" --output-on-failure -j3 > "$R/ctest_gpu.log" 2>&1; echo "ctest rc $?"
grep -E "Test +#|tests passed|\*\*\*" "$R/ctest_gpu.log" | head
echo "== single rate at $((SECONDS-T0)) s"
for r in 1 2; do for v in A B; do
  timeout 60 ${!v} --detector spiir --json --repeat 5 --variants cuda-fast,cuda-paper --device-only > "$R/single_${v}_$r.jsonl" 2>>"$X/b.stderr"; echo "$v $r rc $?"
done; done
echo "== multirate at $((SECONDS-T0)) s"
for r in 1 2; do for v in A B; do for b in 4096 131072; do
  timeout 60 ${!v} --detector spiir --multirate --json --repeat 5 --batch $b --samples 131072 --variants cuda-fast,cuda-paper > "$R/mr_${v}_${b}_$r.jsonl" 2>>"$X/mr.stderr"; echo "mr $v $b $r rc $?"
done; done; done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="result": print(f.split("/")[-1], d.get("variant"), d.get("templates"), d.get("filters"), "%.3e"%d.get("updates_per_s",0), d.get("realtime_factor_4096hz"))
PY
echo "== gstlal-spiir at $((SECONDS-T0)) s"
wait $pb; echo "peer build rc $?"
timeout 100 env BUILD=/tmp/spb OUT=$X/spiir_peer bash "$SP/run.sh" --reps 9 --cases 4096x512x8192,4096x8x65536 > "$X/spiir_peer_run.txt" 2>&1; echo "peer rc $?"
cp $X/spiir_peer/spiir.jsonl "$R/spiir_peer.jsonl" 2>/dev/null
grep -h '"kernel"' "$R/spiir_peer.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print(d['case'], '%.3e'%d['updates_per_s'])"
echo "== memcheck multirate at $((SECONDS-T0)) s"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
cmd=$(ctest --test-dir /tmp/bb -R "^gpu_spiir_multirate$" -N -V 2>/dev/null | sed -n 's/.*Test command: //p' | head -1)
[ -n "$CS" ] && timeout 200 $CS --tool memcheck --leak-check full $cmd > "$R/memcheck_multirate.log" 2>&1; echo "memcheck rc $?"; tail -3 "$R/memcheck_multirate.log"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/f1_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/f1_log.txt "$R/log.txt"
