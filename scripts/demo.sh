#!/usr/bin/env bash
# Quick start, main job: set up (Debian packages, build, install) and run the
# demo through the installed module: it compiles examples/demo_*.grc with grcc
# (Debian package gnuradio) and runs them. Pass demo options through, e.g.
# `bash scripts/demo.sh --backend cpu` or `--source file --file x.f32`
# (`--source sdr` needs gr-osmosdr, which is not installed here).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
tr_install_packages
tr_build_install
tr_say "running the demo"
cd /tmp
exec /usr/bin/python3 "$TR_SRC/apps/transient_demo.py" "$@"
