#!/usr/bin/python3
"""Write welch_fixture.txt: coloured noise and scipy's Welch median PSD of it.

The C test test_psd reads it and compares tr_psd_welch with what
scipy.signal.welch(x, rate, nperseg=nfft, average='median') returned here
(scipy's defaults otherwise: periodic Hann window, nfft / 2 overlap, each
segment minus its mean, one-sided density). Two segment lengths give an odd
(45) and an even (22) number of segments, so both forms of the median and
its bias correction are checked. Run: /usr/bin/python3 make_welch_fixture.py
"""
import os

import numpy as np
import scipy
from scipy import signal

RATE = 4096.0
N = 3000
CASES = (128, 256)


def main():
    rng = np.random.default_rng(20261126)
    white = rng.standard_normal(N + 64)
    # AR(2) colour with a resonance, plus an offset (removed per segment).
    x = signal.lfilter([1.0], [1.0, -1.6, 0.8], white)[64:] + 3.0
    x = x.astype(np.float32).astype(np.float64)
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "welch_fixture.txt")
    with open(path, "w") as f:
        f.write("# made by make_welch_fixture.py with scipy %s\n" % scipy.__version__)
        f.write("%d %.17g %d\n" % (N, RATE, len(CASES)))
        for v in x:
            f.write("%.9g\n" % v)
        for nfft in CASES:
            _, p = signal.welch(x, RATE, nperseg=nfft, average="median")
            f.write("%d %d\n" % (nfft, len(p)))
            for v in p:
                f.write("%.17g\n" % v)


if __name__ == "__main__":
    main()
