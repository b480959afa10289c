#!/usr/bin/env python3
#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Extract one analog channel and one logic probe of a sigrok session file.

Writes
  PREFIX_analog.f32  the analog channel as raw little-endian float32
  PREFIX_logic.u8    the logic probe as raw uint8, one 0 or 1 per sample
and prints one line with the sample count and rate. Needs only the Python
standard library (python/transient/sigrok.py is loaded by path).

usage: sr_extract.py [--analog NAME] [--probe NAME] INPUT.sr PREFIX
"""

import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SIGROK_PY = os.path.join(HERE, os.pardir, os.pardir, "python", "transient", "sigrok.py")


def load_sigrok():
    spec = importlib.util.spec_from_file_location("transient_sigrok", SIGROK_PY)
    if spec is None or spec.loader is None:
        raise ImportError("cannot load %s" % SIGROK_PY)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--analog", default="SDA analog", help="analog channel name")
    ap.add_argument("--probe", default="SDA", help="logic probe name")
    ap.add_argument("input", help="sigrok session file (.sr)")
    ap.add_argument("prefix", help="output prefix (directories are created)")
    args = ap.parse_args(argv)

    sigrok = load_sigrok()
    try:
        rec = sigrok.read_sr(args.input, use_numpy=False)
        analog = rec.analog_channel(args.analog)
        logic = rec.logic_channel(args.probe)
    except KeyError as e:  # str() of a KeyError quotes its message
        sys.stderr.write("sr_extract: %s\n" % (e.args[0] if e.args else e))
        return 1
    except (ValueError, OSError) as e:
        sys.stderr.write("sr_extract: %s\n" % e)
        return 1

    out_dir = os.path.dirname(os.path.abspath(args.prefix))
    os.makedirs(out_dir, exist_ok=True)
    if sys.byteorder != "little":
        analog = type(analog)(analog.typecode, analog)
        analog.byteswap()
    paths = (args.prefix + "_analog.f32", args.prefix + "_logic.u8")
    for path, data in zip(paths, (analog, logic)):
        tmp = path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data.tobytes())
        os.replace(tmp, path)
    print("sr_extract: %s: %d samples at %g Hz: %r -> %s, %r -> %s" %
          (args.input, rec.num_samples, rec.samplerate, args.analog, paths[0], args.probe,
           paths[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
