#!/usr/bin/env python3
"""Plots of docs/spiir.md's strain search, written to docs/img/:

  spiir_chisq.png    autocorrelation chi-square against SNR for 0PN chirps
                     (10 + 10 Msun, 30 to 300 Hz, 2048 Hz) and sine-Gaussian
                     glitches (150 Hz, Q 9) injected into white noise with the
                     same bank SNR, and the GW150914 trigger of the Hanford data
  spiir_gw150914.png the Hanford strain (raw, whitened by the core) and the
                     SPIIR bank's |SNR| around GW150914, merger marked

Needs numpy, matplotlib, h5py and the Python bindings (gnuradio.transient,
e.g. PYTHONPATH=<build>/test_modules):
    /usr/bin/python3 docs/plots/plot_spiir_gw.py
"""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from gnuradio import transient as tr  # noqa: E402
from gnuradio.transient import gw_strain  # noqa: E402
from gnuradio.transient import spiir_design as sd  # noqa: E402
from gnuradio.transient import spiir_search as ss  # noqa: E402
from gnuradio.transient import spiir_templates as st  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IMG = os.path.join(ROOT, "docs", "img")
DATA = os.path.join(ROOT, "examples", "data")
MERGER_GPS = 1126259462.42


def loudest(bank, ac, h, fs, sig, snr, rng):
    """(SNR, chisq) of the loudest trigger with sig scaled to bank SNR `snr`
    in unit white noise."""
    z0 = tr.spiir_filter(sig.astype(np.float32), *bank, 1.0 / fs)[:, 0]
    x = rng.standard_normal(len(sig)) + sig * snr / np.abs(z0).max()
    z = tr.spiir_filter(x.astype(np.float32), *bank, 1.0 / fs)
    t = tr.spiir_triggers(z, 6.0, len(h))
    t = t[t["sample"] > len(h)]
    k = int(np.argmax(t["snr"]))
    chi = tr.spiir_autochisq(z, t["sample"][k:k + 1].astype(np.int64), np.zeros(1, np.int64),
                             ac[None, :])[0]
    return t["snr"][k], chi


def chisq_plot(gw):
    fs = 2048.0
    c = sd.newtonian_chirp(fs, 30.0, 300.0, m1=10, m2=10)
    r = sd.design(c.h, fs)
    f = r.filters
    bank = (f["a1"], f["b0"], f["delay"].astype(np.int64), f["level"].astype(np.int64),
            np.array([len(f)], dtype=np.int64))
    ac = ss.autocorrelation(f, c.h, fs, int(0.1 * fs))[0]
    rng = np.random.default_rng(11)
    n = len(c.h) + int(4 * fs)
    end = len(c.h) + int(2 * fs)
    chirp = np.zeros(n)
    sd.inject(chirp, c.h, end, 1.0)
    glitch = sd.sine_gaussian(fs, 150.0, 9.0, n, end)
    snrs = np.geomspace(8, 60, 14)
    pts = {k: np.array([loudest(bank, ac, c.h, fs, s, v, rng) for v in snrs])
           for k, s in (("chirp", chirp), ("glitch", glitch))}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.loglog(pts["chirp"][:, 0], pts["chirp"][:, 1], "o", label="0PN chirp 10+10 Msun")
    ax.loglog(pts["glitch"][:, 0], pts["glitch"][:, 1], "s",
              label="sine-Gaussian 150 Hz, Q 9")
    ax.loglog([gw["snr"]], [gw["chisq"]], "*", ms=14, color="k",
              label="GW150914 (H1 data, NR template)")
    ax.set_xlabel("SNR of the loudest trigger")
    ax.set_ylabel("autocorrelation chi-square (gstlal normalisation)")
    ax.set_title("Injections into white noise, 2048 Hz, lags +-0.1 s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "spiir_chisq.png"), dpi=110)


def gw_plot():
    s = gw_strain.read_gwosc(os.path.join(DATA, "H-H1_LOSC_4_V2-1126259446-32.hdf5"))
    tp = st.load_template(os.path.join(DATA, "GW150914_4_NR_waveform.txt"), s.sample_rate)
    psd = ss.psd(s.data, s.sample_rate)
    r = ss.search(s.data, s.sample_rate, tp, psd, gps_start=s.gps_start)
    t = s.gps_start + np.arange(len(s)) / s.sample_rate - MERGER_GPS
    sel = np.abs(t) < 1.0
    # |SNR| row k: the whitened template ends at sample k; shifted to the merger
    tm = t - r.template.end_to_merger
    fig, ax = plt.subplots(3, 1, figsize=(7, 7), sharex=True)
    ax[0].plot(t[sel], s.data[sel] * 1e21, lw=0.6)
    ax[0].set_ylabel("strain x 1e21")
    ax[1].plot(t[sel], r.whitened[sel], lw=0.5)
    ax[1].set_ylabel("whitened")
    snr = np.abs(r.snr[:, 0])
    selm = np.abs(tm) < 1.0
    ax[2].plot(tm[selm], snr[selm], lw=0.8)
    ax[2].axvline(0.0, color="k", ls=":", lw=0.8)
    ax[2].set_ylabel("|SNR| (at the merger time)")
    ax[2].set_xlabel("time from GPS 1126259462.42 (s)")
    trig = r.triggers[np.argmax(r.triggers["snr"])]
    ax[0].set_title("H1, GW150914: SNR %.1f, chi-square %.2f, merger GPS %.3f" %
                    (trig["snr"], trig["chisq"], trig["merger_time"]))
    fig.tight_layout()
    fig.savefig(os.path.join(IMG, "spiir_gw150914.png"), dpi=110)
    return trig


if __name__ == "__main__":
    gw = gw_plot()
    chisq_plot(gw)
