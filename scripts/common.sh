# Shared set-up of the Quick start scripts: Debian packages, build, install.
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again and again.
set -euo pipefail

TR_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TR_BUILD=${TR_BUILD:-$TR_SRC/build}
TR_JOBS=${TR_JOBS:-$(nproc)}

# Debian 12 packages the module needs to build, install and test.
# gnuradio: grcc, the QT GUI sinks and gr-soapy of the examples; python3-pyqt5:
# the GUI examples (run headless in the tests); help2man: the man pages.
TR_PACKAGES="build-essential cmake ninja-build pkg-config git gnuradio-dev gnuradio pybind11-dev
python3-pybind11 python3-numpy python3-packaging python3-yaml python3-pyqt5 help2man"

tr_say() { printf '== %s\n' "$*"; }

tr_install_packages() {
    local missing=""
    for p in $TR_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        tr_say "installing Debian packages:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends $missing
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
    tr_say "configuring in $TR_BUILD"
    cmake -S "$TR_SRC" -B "$TR_BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_INSTALL_PREFIX=/usr/local "${cuda_args[@]}" >"$TR_BUILD.configure.log" 2>&1 ||
        { cat "$TR_BUILD.configure.log"; return 1; }
    grep "gr-transient:" "$TR_BUILD.configure.log" || true
    tr_say "building with $TR_JOBS jobs"
    cmake --build "$TR_BUILD" -j "$TR_JOBS"
    tr_say "installing to /usr/local"
    cmake --install "$TR_BUILD" >/dev/null
    ldconfig
}
