#!/usr/bin/env bash
# One call on a GPU host without GNU Radio: the bundle's GPU flow graph tests,
# the boxcar block (CUDA, with and without its outputs, WHITE and FIXED, 1 and
# 64 channels) and the SPIIR block in flow graphs beside their cores, the
# multirate SPIIR benchmark, gstlal-spiir's harness.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/c2}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/c2/commit.txt)"
SP=$SRC/.gpu/final2/spiir
(BUILD=/tmp/spb OUT=$X/spiir_peer BUILD_ONLY=1 bash "$SP/run.sh" >"$X/spiir_peer_build.txt" 2>&1) &
pb=$!
D=$(mktemp -d); tar -C $D -xzf .gpu/c2/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
echo "== test_flowgraph_cuda"
timeout 150 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "rc $?"; tail -5 "$R/gpu_flowgraph.log"
timeout 60 $RUN test_device_buffers > "$R/device_buffers.log" 2>&1; echo "device_buffers rc $?"; tail -2 "$R/device_buffers.log"
echo "== boxcar flow graphs at $((SECONDS-T0)) s"
for norm in white fixed; do
  timeout 150 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan 1,64 --boxcar-norm $norm --boxcar-output both --seconds 2 --json >> "$R/flowgraph_boxcar.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $norm rc $?"
done
echo "== spiir flow graph at $((SECONDS-T0)) s"
timeout 90 $RUN transient-flowgraph-bench --detector spiir --backend cuda --seconds 2 --json > "$R/flowgraph_spiir.jsonl" 2>>"$X/fg.stderr"; echo "spiir rc $?"
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type") in ("result","case") or "samples_per_s" in d:
            print({k:d.get(k) for k in ("detector","nchan","norm","outputs","path","backend","batch","samples_per_s","ceiling_samples_per_s","ratio","core_samples_per_s","block_over_core") if k in d})
PY
echo "== SPIIR multirate at $((SECONDS-T0)) s"
for b in 131072 4096 131072; do
  timeout 90 $RUN transient-bench --detector spiir --multirate --json --repeat 5 --batch $b --samples 131072 --cpu-samples 4096 --ref-samples 512 >> "$R/bench_spiir_mr.jsonl" 2>>"$X/mr.stderr"; echo "mr batch $b rc $?"
done
grep -h '"result"' "$R/bench_spiir_mr.jsonl" | python3 -c "
import json,sys
for l in sys.stdin:
    d=json.loads(l); print({k:d.get(k) for k in ('variant','batch','updates_per_s','realtime_factor','real_time_factor','ratio')})"
echo "== gstlal-spiir at $((SECONDS-T0)) s"
wait $pb; echo "peer build rc $?"
timeout 100 env BUILD=/tmp/spb OUT=$X/spiir_peer bash "$SP/run.sh" --reps 9 --cases 4096x512x8192,4096x8x65536 > "$X/spiir_peer_run.txt" 2>&1; echo "peer rc $?"
cp $X/spiir_peer/spiir.jsonl "$R/spiir_peer.jsonl" 2>/dev/null
python3 -c "
import json
for l in open('$R/spiir_peer.jsonl'):
    d=json.loads(l); print({k:d.get(k) for k in ('case','kernel','updates_per_s','seconds')})" 2>&1 | head
timeout 60 $RUN transient-bench --detector spiir --json --repeat 5 --variants cuda-fast --device-only > "$R/bench_spiir.jsonl" 2>>"$X/mr.stderr"; echo "bench spiir rc $?"
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/c2_log.txt
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/c2_log.txt "$R/log.txt"
