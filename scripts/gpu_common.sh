# Helpers shared by the GPU host scripts (scripts/gpu_run*.sh,
# bench/tuning/*_gpu_run.sh); sourced, not run. The sourcing script sets SRC
# and BUILD, calls gpu_init with its results folder, then uses step,
# env_header and build_core. STEP_KILL_AFTER and CUDA_ARCH may be changed
# after sourcing.

NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
JOBS=$(nproc 2>/dev/null || echo 4)
STEP_KILL_AFTER=10
CUDA_ARCH=90

say() { printf '== %s\n' "$*"; }

# Create the results folder DIR and start an empty env.txt in it.
gpu_init() {
    mkdir -p "$1"
    ENV_TXT=$1/env.txt
    : >"$ENV_TXT"
    failed=()
}

# Run a step under a time limit, recording its exact command line.
step() { # name limit log command...
    local name=$1 limit=$2 log=$3
    shift 3
    printf '%s (limit %ss): %s\n' "$name" "$limit" "$*" >>"$ENV_TXT"
    say "$name"
    local t0=$SECONDS
    timeout --kill-after="$STEP_KILL_AFTER" "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    printf '   %s: exit %d after %ds\n' "$name" "$rc" $((SECONDS - t0)) | tee -a "$ENV_TXT"
    [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
    return "$rc"
}

# Write the environment header to env.txt, one line per field in the order
# given, and print it. Fields: date, host, cpu, cpu_cores (the CPU line with
# the core count), gpu:QUERY (nvidia-smi --query-gpu=QUERY), nvcc, cmake,
# ninja, python3, source.
env_header() {
    local field
    {
        for field in "$@"; do
            case $field in
            date) echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)" ;;
            host) echo "host: $(uname -srm), $JOBS cores" ;;
            cpu) echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')" ;;
            cpu_cores)
                echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- |
                    sed 's/^ *//'), $JOBS cores"
                ;;
            gpu:*)
                echo "gpu (nvidia-smi): $(nvidia-smi --query-gpu="${field#gpu:}" \
                    --format=csv,noheader 2>&1 | paste -sd ';' -)"
                ;;
            nvcc) echo "nvcc: $("$NVCC" --version 2>&1 | grep -m1 release)" ;;
            cmake) echo "cmake: $(cmake --version 2>&1 | head -n1)" ;;
            ninja) echo "ninja: $(ninja --version 2>&1)" ;;
            python3) echo "python3: $(python3 --version 2>&1)" ;;
            source)
                echo "source: $SRC ($(git -C "$SRC" rev-parse --short HEAD 2>/dev/null ||
                    echo 'no git'))"
                ;;
            *) echo "env_header: unknown field $field" >&2 ;;
            esac
        done
        echo "commands:"
    } >>"$ENV_TXT"
    cat "$ENV_TXT"
}

# Configure libtransient in $BUILD with CUDA for $CUDA_ARCH and GNU Radio and
# Python off, then build TARGETS (all when none are given). On failure the
# last TAIL lines of LOG are printed. Sets built to the exit status.
build_core() { # log configure_limit build_limit tail targets...
    local log=$1 conf_limit=$2 build_limit=$3 tail_lines=$4
    shift 4
    local targets=()
    [ "$#" -eq 0 ] || targets=(--target "$@")
    step configure "$conf_limit" "$log" \
        cmake -S "$SRC" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DENABLE_GNURADIO=OFF -DENABLE_PYTHON=OFF -DENABLE_CUDA=ON \
        -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="$CUDA_ARCH" &&
        step build "$build_limit" "$log" cmake --build "$BUILD" -j "$JOBS" "${targets[@]}"
    built=$?
    [ "$built" -eq 0 ] || tail -n "$tail_lines" "$log"
    return "$built"
}

# Print the closing result line from the failed steps.
print_result() {
    if [ "${#failed[@]}" -eq 0 ]; then
        echo "result: all steps passed"
    else
        echo "result: FAILED: ${failed[*]}"
    fi
}
