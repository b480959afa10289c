#!/usr/bin/env python3
"""ROC of the Kalman-bank detector with models fitted from data, beside the
detector with the true models and the energy detector (docs/kalman.md,
"Fitting models from data").

The scenario of the detection-quality section: AR(2) bursts of 91 samples
(M = 92) in AR(2) noise of the same spectral shape (poles 0.8 e^{+-0.3i}, 0 dB
innovation ratio) plus white measurement noise of variance 0.05; N_s = 30.
Fit: gnuradio.transient.kalman_fit on a 300000-sample recording with 149
labelled bursts (the fitted noise model is AR only: the white measurement noise
is absorbed by its order). Test: 600000 new noise-only samples (false alarms
per sample) and 400 new bursts, through kalman_detector_ff (CPU) with each
model file, at alpha = 1e-9 (the detector's default) and at the fitted alpha
(the onset rate of the recording). Writes docs/data/kalman_fit_roc.txt
and docs/img/kalman_fit_roc.png. Needs GNU Radio's Python, the built package
and matplotlib:
  PYTHONPATH=build/test_modules /usr/bin/python3 docs/plots/plot_kalman_fit_roc.py
"""
import os
import tempfile

import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from gnuradio import transient  # noqa: E402
from gnuradio.transient import kalman_fit, kalman_roc  # noqa: E402
from gnuradio.transient import kalman_signals as ks  # noqa: E402
from plot_kalman_roc import finish_roc  # noqa: E402  (docs/plots, beside this script)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
M, NS = 92, 30
AR = [2 * 0.8 * np.cos(0.3), -0.64]
MODEL = dict(M=M, noise_ar=AR, noise_var=1.0, meas_var=0.05, target_ar=AR, target_var=1.0)
PFA = np.geomspace(1e-5, 1e-1, 17)


def main():
    on = np.arange(1000, 300000 - M, 2000)
    x, on = ks.gaussian_bursts(300000, on, seed=31, **MODEL)
    signal = [(int(o), int(o) + M - 1) for o in on]
    noise = [(0, 1000)] + [(b + M, a) for (_, b), (a, _) in zip(signal[:-1], signal[1:])]
    fit = kalman_fit.fit_models(x, noise, signal)
    print(fit.summary())

    onsets = np.arange(600000, 1000000, 1000)
    y, onsets = ks.gaussian_bursts(1000000, onsets, seed=32, **MODEL)
    bursts = [(int(o), int(o) + M - 1) for o in onsets]
    mask = np.zeros(len(y), dtype=bool)
    mask[2 * M:600000 - M] = True
    curves = {}
    with tempfile.TemporaryDirectory() as d:
        true_path, fit_path = os.path.join(d, "true"), os.path.join(d, "fit")
        transient.kalman_detector_ff.save_model(true_path, M, AR, 1.0, 0.05, AR, 1.0)
        fit.save(fit_path)
        for alpha, tag in ((1e-9, ""), (fit.alpha, " rate")):
            for name, path in (("true", true_path), ("fitted", fit_path)):
                llr = kalman_roc.detector_llr(y, path, NS, alpha)
                curves[name + tag] = kalman_roc.roc(llr, bursts, mask, PFA)[0]
    curves["energy"] = kalman_roc.roc(kalman_roc.energy_statistic(y, NS), bursts, mask, PFA)[0]

    title = ("AR(2) bursts (M = %d) in AR(2) + white noise, N_s = %d;\nfitted: noise AR(%d), "
             "burst AR(%d), %s envelope, alpha %.3g" %
             (M, NS, fit.noise.order, fit.target.order, fit.envelope, fit.alpha))
    with open(os.path.join(ROOT, "docs/data/kalman_fit_roc.txt"), "w") as f:
        f.write("# detector pfa_per_sample pd; %s\n" % title.replace("\n", " "))
        for name, pd in curves.items():
            for p, v in zip(PFA, pd):
                f.write("%s %.6g %.4f\n" % (name.replace(" ", "_"), p, v))
    for name in curves:
        print(name, " ".join("%.4g:%.4f" % (p, v) for p, v in zip(PFA, curves[name])
                             if p in (1e-2, 1e-3, 1e-4) or np.isclose(p, [1e-2, 1e-3,
                                                                         1e-4]).any()))

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    rate = "alpha %.3g (the onset rate)" % fit.alpha
    labels = {"true": "Kalman bank, true models, alpha 1e-9",
              "fitted": "Kalman bank, fitted models, alpha 1e-9",
              "true rate": "Kalman bank, true models, " + rate,
              "fitted rate": "Kalman bank, fitted models, " + rate,
              "energy": "energy detector (mean of x^2 over N_s)"}
    styles = {"true": ("-", "C0"), "fitted": ("--", "C1"), "true rate": ("-", "C2"),
              "fitted rate": ("--", "C3"), "energy": (":", "C7")}
    for name, pd in curves.items():
        ax.semilogx(PFA, pd, styles[name][0], color=styles[name][1], marker=".",
                    label=labels[name])
    finish_roc(fig, ax, "ROC, " + title, os.path.join(ROOT, "docs/img/kalman_fit_roc.png"),
               title_size=7)


if __name__ == "__main__":
    main()
