# Shared set-up of the Quick start scripts: Debian packages, build, install.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again and again.
set -euo pipefail

TR_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TR_BUILD=${TR_BUILD:-$TR_SRC/build}
TR_JOBS=${TR_JOBS:-$(nproc)}

# Debian 12 packages the module needs to build, install and test.
# gnuradio: grcc, the QT GUI sinks and gr-soapy of the examples; python3-pyqt5:
# the GUI examples (run headless in the tests); help2man: the man pages;
# libfftw3-dev: PSD estimation and whitening; python3-scipy: the tests'
# reference PSD; python3-h5py: strain files as GWOSC distributes them;
# python3-astropy: PSRFITS input of transient-detect frb.
TR_PACKAGES="build-essential cmake ninja-build pkg-config git gnuradio-dev gnuradio pybind11-dev
python3-pybind11 python3-numpy python3-packaging python3-yaml python3-pyqt5 help2man
libfftw3-dev python3-scipy python3-h5py python3-astropy"

tr_say() { printf '== %s\n' "$*"; }

# tr_step WHAT LOG COMMAND...: one line for the step, the command's output
# appended to LOG; on failure the end of LOG and where the rest is.
tr_step() {
    local what=$1 log=$2
    shift 2
    tr_say "$what (log: $log)"
    if ! "$@" >>"$log" 2>&1; then
        tail -n 40 "$log"
        tr_say "failed: $what; the whole output is in $log"
        return 1
    fi
}

tr_install_packages() {
    local missing=""
    for p in $TR_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        export DEBIAN_FRONTEND=noninteractive
        : >"$TR_BUILD.apt.log"
        tr_step "apt-get update" "$TR_BUILD.apt.log" apt-get update
        tr_step "installing Debian packages:$missing" "$TR_BUILD.apt.log" \
            apt-get install -y --no-install-recommends $missing
    fi
}

# Configure, build and install to /usr/local (CUDA backend when nvcc is found).
tr_build_install() {
    local cuda_args=()
    # With a GPU present build for it alone; without one, one architecture is
    # enough to keep the CUDA code compiled (the CPU backend is used).
    if [ -z "${TR_CUDA_ARCHITECTURES:-}" ]; then
        if nvidia-smi -L >/dev/null 2>&1; then TR_CUDA_ARCHITECTURES=native; else TR_CUDA_ARCHITECTURES=90; fi
    fi
    if [ -n "${TR_CUDA_ARCHITECTURES:-}" ]; then
        cuda_args+=("-DCMAKE_CUDA_ARCHITECTURES=$TR_CUDA_ARCHITECTURES")
    fi
    : >"$TR_BUILD.configure.log"
    : >"$TR_BUILD.build.log"
    : >"$TR_BUILD.install.log"
    tr_step "configuring in $TR_BUILD" "$TR_BUILD.configure.log" \
        cmake -S "$TR_SRC" -B "$TR_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/usr/local "${cuda_args[@]}"
    grep "gr-transient: CUDA" "$TR_BUILD.configure.log" || true
    tr_step "building with $TR_JOBS jobs" "$TR_BUILD.build.log" \
        cmake --build "$TR_BUILD" -j "$TR_JOBS"
    tr_step "installing to /usr/local" "$TR_BUILD.install.log" cmake --install "$TR_BUILD"
    ldconfig
}
