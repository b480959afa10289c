#!/usr/bin/env bash
# The peer in the same call as the block: AstroAccelerate's SPDT (its own
# kernels, ../shared/peers/astroaccelerate copied to .gpu/aa, data on the
# device, 256 x 131072, L_end about 8192) and then the boxcar block of B
# (bundle at .gpu/f6) without outputs, 1 and 64 channels, FIXED and WHITE.
set -uo pipefail
R=${OUT:-/tmp/g12}; mkdir -p "$R/peer"
exec > >(tee "$R/log_peer.txt") 2>&1
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
echo "B: $(cat .gpu/f6/commit.txt)"
OUT=$R/peer timeout 240 bash .gpu/aa/run.sh > "$R/peer/stdout.txt" 2>&1; echo "peer rc $?"
D=$(mktemp -d); tar -C $D -xzf .gpu/f6/gr-transient-bundle.tar.gz; RUN=$D/gr-transient-bundle/run
for norm in fixed white; do
  for nc in 1 64; do
    timeout 100 $RUN transient-flowgraph-bench --detector boxcar --backend cuda --boxcar-nchan $nc --boxcar-norm $norm --boxcar-output none --boxcar-spacing 8192 --boxcar-msg vectors --seconds 2 --json >> "$R/flowgraph_B_peer_call.jsonl" 2>/dev/null; echo "$norm nchan $nc rc $?"
  done
done
python3 - "$R" <<'PY'
import json,sys
r=sys.argv[1]
aa=[json.loads(l) for l in open(r+"/peer/aa_spd.jsonl") if l.strip()]
for a in aa: print("AA", a.get("case"), "%.3e" % a["samples_per_s"])
for l in open(r+"/flowgraph_B_peer_call.jsonl"):
    d=json.loads(l)
    if d.get("type")=="flowgraph" and d["path"]=="block":
        s=d["samples_per_s"]*d["nchan"]
        print("block", d["norm"], d["nchan"], "%.3e values/s" % s, "ratio %.3f" % d["ratio"],
              " ".join("over AA %s %.3f" % (a.get("case"), s/a["samples_per_s"]) for a in aa))
PY
cp "$R/log_peer.txt" /tmp/lp.txt
tar -C "$R" -czf /tmp/peer.tar.gz peer && rm -rf "$R/peer" && mv /tmp/peer.tar.gz "$R/peer.tar.gz"
