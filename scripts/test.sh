#!/usr/bin/env bash
# Quick start, tests: same set-up as the demo, then the whole test suite through
# ctest, and the C core's tests again under AddressSanitizer/UBSan.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tr_install_packages
tr_build_install
tr_say "test suite (tests labelled gpu are skipped without a GPU)"
(cd "$TR_BUILD" && ctest --output-on-failure -j "$TR_JOBS")
tr_say "C core under AddressSanitizer and UBSan"
asan="$TR_BUILD-asan"
: >"$asan.configure.log"
: >"$asan.build.log"
tr_step "configuring in $asan" "$asan.configure.log" \
    cmake -S "$TR_SRC" -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DENABLE_SANITIZERS=ON \
    -DENABLE_GNURADIO=OFF -DENABLE_CUDA=OFF
tr_step "building with $TR_JOBS jobs" "$asan.build.log" cmake --build "$asan" -j "$TR_JOBS"
(cd "$asan" && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$TR_JOBS")
