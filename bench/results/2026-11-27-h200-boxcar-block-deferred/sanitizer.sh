#!/usr/bin/env bash
# compute-sanitizer memcheck and racecheck of B's device statistics and
# candidates (bundle at .gpu/f8).
set -uo pipefail
R=${OUT:-/tmp/g13s}; mkdir -p "$R"
exec > >(tee "$R/log_sanitizer.txt") 2>&1
T0=$SECONDS
d=$(mktemp -d); tar -C $d -xzf .gpu/f8/gr-transient-bundle.tar.gz; RUN_B=$d/gr-transient-bundle/run
BIN=$(dirname $RUN_B)/bin; export LD_LIBRARY_PATH=$(dirname $RUN_B)/lib:/usr/local/cuda/lib64
timeout 200 compute-sanitizer --tool memcheck --leak-check full $BIN/test_boxcar_gpu > "$R/memcheck_boxcar_gpu.log" 2>&1; echo "memcheck boxcar_gpu rc $?"; tail -2 "$R/memcheck_boxcar_gpu.log"
timeout 240 compute-sanitizer --tool racecheck $BIN/test_boxcar_gpu > "$R/racecheck_boxcar_gpu.log" 2>&1; echo "racecheck boxcar_gpu rc $?"; tail -2 "$R/racecheck_boxcar_gpu.log"
timeout 240 compute-sanitizer --tool memcheck --leak-check full $BIN/test_candidates_gpu > "$R/memcheck_candidates_gpu.log" 2>&1; echo "memcheck candidates_gpu rc $?"; tail -2 "$R/memcheck_candidates_gpu.log"
echo "done at $((SECONDS-T0)) s"
