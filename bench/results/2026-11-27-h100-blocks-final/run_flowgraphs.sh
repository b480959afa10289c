#!/usr/bin/env bash
# Flow graphs on an H100 from the bundle: the GPU flow graph tests; the
# boxcar block without outputs (candidates on the device), WHITE and FIXED,
# 1 and 64 channels, beside its core; the SPIIR block as a sink, detects as
# vectors (twice) and as dicts; a timeline of the 1-channel FIXED case.
set -uo pipefail
SRC=$(pwd); R=${OUT:-/tmp/f2}; mkdir -p "$R/x"; X=$R/x
exec > >(tee "$R/log.txt") 2>&1
T0=$SECONDS
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,memory.total,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores"
echo "source: $(cat .gpu/f2/commit.txt)"
D=$(mktemp -d); tar -C $D -xzf .gpu/f2/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
echo "== test_flowgraph_cuda"
timeout 170 $RUN test_flowgraph_cuda > "$R/gpu_flowgraph.log" 2>&1; echo "rc $?"; tail -4 "$R/gpu_flowgraph.log"
timeout 60 $RUN test_device_buffers > "$R/device_buffers.log" 2>&1; echo "device_buffers rc $?"; tail -2 "$R/device_buffers.log"
echo "== boxcar flow graphs at $((SECONDS-T0)) s"
for norm in fixed white; do
  for cb in "1 0" "1 8388608" "64 0" "64 262144"; do
    set -- $cb; bo=""; [ "$2" != 0 ] && bo="--batch $2"
    timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $1 $bo --boxcar-norm $norm --boxcar-output none --seconds 2 --json >> "$R/flowgraph_boxcar_$norm.jsonl" 2>>"$X/fg.stderr"; echo "boxcar $norm nchan $1 batch $2 rc $?"
  done
done
echo "== spiir flow graphs at $((SECONDS-T0)) s"
for m in vectors dicts vectors; do
  timeout 90 $RUN transient-flowgraph-bench --detector spiir --backend cuda --spiir-output none --spiir-msg $m --seconds 2 --json >> "$R/flowgraph_spiir_$m.jsonl" 2>>"$X/fg.stderr"; echo "spiir $m rc $?"
done
python3 - "$R" <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+"/flowgraph_*.jsonl")):
    for l in open(f):
        try: d=json.loads(l)
        except Exception: continue
        if d.get("type")=="flowgraph":
            print(f.split("/")[-1], {k:d.get(k) for k in ("nchan","batch","norm","outputs","path","samples_per_s","ratio","core_samples_per_s","block_over_core") if k in d})
PY
NSYS=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
echo "nsys: ${NSYS:-none}"
if [ -n "$NSYS" ]; then
  timeout 120 $NSYS profile -t cuda,osrt -o $X/box1 --force-overwrite true $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan 1 --boxcar-norm fixed --boxcar-output none --seconds 1 --json > $X/nsys_run.txt 2>&1; echo "nsys rc $?"
  timeout 120 $NSYS stats -r cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_size_sum,cuda_gpu_mem_time_sum $X/box1.nsys-rep > "$R/nsys_boxcar_1ch_fixed.txt" 2>&1; echo "stats rc $?"
  head -60 "$R/nsys_boxcar_1ch_fixed.txt"
fi
echo "done at $((SECONDS-T0)) s"
cp "$R/log.txt" /tmp/f2_log.txt
rm -rf $X/box1.nsys-rep $X/box1.sqlite
tar -C "$R" -czf /tmp/all.tar.gz . && find "$R" -mindepth 1 -delete && mv /tmp/all.tar.gz "$R/all.tar.gz" && cp /tmp/f2_log.txt "$R/log.txt"
