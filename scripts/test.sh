#!/usr/bin/env bash
# Quick start, tests: same set-up as the demo, then the whole test suite through
# ctest, the C core's tests again under AddressSanitizer/UBSan, and (with clang)
# the libFuzzer targets for a few seconds each (TR_FUZZ_SECONDS).
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
if command -v clang >/dev/null; then
    tr_say "libFuzzer targets (clang): seeds and regressions, then ${TR_FUZZ_SECONDS:-3} s each"
    fuzz="$TR_BUILD-fuzz"
    cmake -S "$TR_SRC" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DENABLE_FUZZING=ON \
        -DTR_FUZZ_SECONDS="${TR_FUZZ_SECONDS:-3}" -DENABLE_GNURADIO=OFF -DENABLE_CUDA=OFF \
        >"$fuzz.configure.log" 2>&1 || { cat "$fuzz.configure.log"; exit 1; }
    cmake --build "$fuzz" -j "$TR_JOBS" --target fuzz_targets
    (cd "$fuzz" && ctest -L fuzz --output-on-failure -j "$TR_JOBS")
else
    tr_say "libFuzzer targets skipped: no clang"
fi
