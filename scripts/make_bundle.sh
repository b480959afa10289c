#!/usr/bin/env bash
# Portable bundle of gr-transient programs: the programs given, libtransient,
# libgnuradio-transient and every shared library they need (the ldd closure:
# GNU Radio runtime, PMT, VOLK, Boost, spdlog, fmt, the CUDA runtime, the C++
# runtime, ...), except the C library family (libc, libm, libmvec, libpthread,
# libdl, librt, libutil, libresolv, libanl, ld-linux) and the CUDA driver
# (libcuda, libnvidia-*) and cuFFT (libcufft, from the host's CUDA toolkit:
# `run` looks in ${CUDA_HOME:-/usr/local/cuda}/lib64), which come from the host. The bundle then runs on a
# host without GNU Radio whose glibc is as new as the build host's or newer.
#
#   scripts/make_bundle.sh [-o OUTDIR] [-n NAME] PROGRAM...
#
# Makes OUTDIR/NAME/ (default build-bundle/gr-transient-bundle) with bin/ (the
# programs), lib/ (the libraries), a `run` wrapper and MANIFEST, and
# OUTDIR/NAME.tar.gz. Usage on the other host:
#   tar xzf NAME.tar.gz && NAME/run transient-flowgraph-bench --json
# `run PROGRAM ARGS...` starts bin/PROGRAM (or a path) with LD_LIBRARY_PATH set
# to the bundle's lib/ (and GR_PREFS_PATH to its etc/, so that no user
# GNU Radio preferences of the host are read).
set -euo pipefail

out=build-bundle
name=gr-transient-bundle
while getopts "o:n:h" opt; do
    case $opt in
    o) out=$OPTARG ;;
    n) name=$OPTARG ;;
    *)
        sed -n '2,19p' "$0"
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
    echo "make_bundle.sh: no programs given" >&2
    exit 2
fi

dir=$out/$name
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib"

# Libraries that must come from the host.
excluded() {
    case $(basename "$1") in
    linux-vdso.so* | ld-linux*.so* | libc.so* | libm.so* | libmvec.so* | libpthread.so* | \
        libdl.so* | librt.so* | libutil.so* | libresolv.so* | libanl.so* | libnsl.so* | \
        libBrokenLocale.so* | libcuda.so* | libnvidia-*.so* | libcufft.so*)
        return 0
        ;;
    esac
    return 1
}

declare -A seen=()
add_deps() {
    local f=$1 lib
    # ldd lists the whole closure: "name => /path (addr)" or "/path (addr)".
    while read -r lib; do
        [ -n "$lib" ] || continue
        excluded "$lib" && continue
        # by name: a library found through another's RUNPATH $ORIGIN may
        # already be the bundle's own copy
        local base
        base=$(basename "$lib")
        [ -n "${seen[$base]:-}" ] && continue
        seen[$base]=1
        [ -e "$dir/lib/$base" ] || cp -L "$lib" "$dir/lib/$base"
    done < <(ldd "$f" | awk '/=>/ { if ($3 ~ /^\//) print $3; next } $1 ~ /^\// { print $1 }')
    if ldd "$f" | grep -q "not found"; then
        echo "make_bundle.sh: $f: libraries not found:" >&2
        ldd "$f" | grep "not found" >&2
        exit 1
    fi
}

for p in "$@"; do
    if [ ! -x "$p" ]; then
        echo "make_bundle.sh: $p is not an executable" >&2
        exit 1
    fi
    cp -L "$p" "$dir/bin/"
    add_deps "$p"
done
# The libraries themselves, in case a program loads them some other way.
for l in "$dir"/lib/*; do
    add_deps "$l"
done
for must in libtransient.so libgnuradio-transient.so libgnuradio-runtime.so; do
    if ! ls "$dir"/lib/"$must"* >/dev/null 2>&1; then
        echo "make_bundle.sh: $must is not among the libraries the programs need" >&2
        exit 1
    fi
done

cat >"$dir/run" <<'EOF'
#!/bin/sh
# Runs a program of this bundle with the bundle's libraries:
#   run PROGRAM [ARGS...]   (PROGRAM: a name in bin/ or a path)
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -eq 0 ]; then
    echo "usage: $0 PROGRAM [ARGS...]; programs:" >&2
    ls "$here/bin" >&2
    exit 2
fi
prog=$1
shift
case $prog in
*/*) ;;
*) prog=$here/bin/$prog ;;
esac
# cuFFT (a few hundred MB) comes from the host's CUDA toolkit.
LD_LIBRARY_PATH=$here/lib:${CUDA_HOME:-/usr/local/cuda}/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
# No GNU Radio configuration of the host is needed or read.
GR_PREFS_PATH=${GR_PREFS_PATH:-$here/etc}
export GR_PREFS_PATH
exec "$prog" "$@"
EOF
chmod +x "$dir/run"
mkdir -p "$dir/etc"

{
    echo "gr-transient bundle made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m)"
    echo "build host C library: $(ldd --version 2>&1 | head -1)"
    echo "programs:"
    (cd "$dir/bin" && ls -1 | sed 's/^/  /')
    echo "libraries:"
    (cd "$dir/lib" && ls -1 | sed 's/^/  /')
} >"$dir/MANIFEST"

tar -C "$out" -czf "$out/$name.tar.gz" "$name"
size=$(stat -c %s "$out/$name.tar.gz")
echo "bundle: $dir ($(du -sh "$dir" | cut -f1)), $out/$name.tar.gz ($((size / 1048576)) MiB)"
if [ "$size" -gt $((60 * 1048576)) ]; then
    echo "make_bundle.sh: the tarball is larger than 60 MiB" >&2
    exit 1
fi
