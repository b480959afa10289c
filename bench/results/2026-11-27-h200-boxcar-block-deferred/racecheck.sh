#!/usr/bin/env bash
# compute-sanitizer racecheck of the device statistics' kernels (norm_cuda::*)
# in B's GPU tests (bundle at .gpu/f10).
set -uo pipefail
R=${OUT:-/tmp/g15}; mkdir -p "$R"
exec > >(tee "$R/log_racecheck.txt") 2>&1
T0=$SECONDS
d=$(mktemp -d); tar -C $d -xzf .gpu/f10/gr-transient-bundle.tar.gz; RUN_B=$d/gr-transient-bundle/run
BIN=$(dirname $RUN_B)/bin; export LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64
for t in test_boxcar_gpu test_candidates_gpu; do
  timeout 250 compute-sanitizer --tool racecheck --kernel-regex kns=norm_cuda $BIN/$t > "$R/racecheck_norm_$t.log" 2>&1; echo "racecheck norm_cuda kernels in $t rc $?"; tail -2 "$R/racecheck_norm_$t.log"
done
echo "done at $((SECONDS-T0)) s"
