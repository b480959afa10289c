#!/usr/bin/env bash
# compute-sanitizer racecheck of the selection kernels (cand_cuda::*) in B's
# test_candidates_gpu (bundle at .gpu/f12).
set -uo pipefail
R=${OUT:-/tmp/g17}; mkdir -p "$R"
exec > >(tee "$R/log_racecheck_cand.txt") 2>&1
T0=$SECONDS
d=$(mktemp -d); tar -C $d -xzf .gpu/f12/gr-transient-bundle.tar.gz; RUN_B=$d/gr-transient-bundle/run
BIN=$(dirname $RUN_B)/bin; export LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64
timeout 420 compute-sanitizer --tool racecheck --kernel-name regex:select $BIN/test_candidates_gpu > "$R/racecheck_select_candidates_gpu.log" 2>&1; echo "racecheck select kernels in test_candidates_gpu rc $?"; tail -2 "$R/racecheck_select_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
