"""The PNG of ``transient-detect frb --plot``: every candidate's S/N against DM
and against time (marker size: S/N), and for the best candidates the
dedispersed waterfall (frequency against time around the burst) with its
profile. The waterfall is dedispersed here, in numpy, from the filterbank's
own samples at the candidate's DM with the delays of tr_dedisp (rounded
dispersion delays to the top of the band), so it shows what the search saw.
"""

import math

import numpy as np

KDM = 4.148808e3  # MHz^2 pc^-1 cm^3 s
TOP = 3           # candidates shown as waterfalls
MAX_ROWS = 64     # frequency rows of a waterfall (channels are averaged down)


def _read_spectra(path, hdr, hdr_bytes, first, count):
    """count spectra from `first` as float32 (count, nchans); spectra beyond
    the file are zeros. Packed 1/2/4-bit samples: first channel in the most
    significant bits, as the reader."""
    nch, nbits = hdr["nchans"], hdr.get("nbits", 32)
    frame = nch * nbits // 8
    total = hdr["_nsamples"]
    lo, hi = max(0, first), min(total, first + count)
    out = np.zeros((count, nch), dtype=np.float32)
    if hi <= lo:
        return out
    with open(path, "rb") as f:
        f.seek(hdr_bytes + lo * frame)
        raw = np.frombuffer(f.read((hi - lo) * frame), dtype=np.uint8)
    if nbits == 32:
        vals = raw.view("<f4")
    elif nbits == 16:
        vals = raw.view("<u2").astype(np.float32)
    elif nbits == 8:
        vals = raw.astype(np.float32)
    else:
        per = 8 // nbits
        shifts = np.arange(per - 1, -1, -1, dtype=np.uint8) * nbits
        vals = ((raw[:, None] >> shifts) & ((1 << nbits) - 1)).reshape(-1).astype(np.float32)
    out[lo - first:hi - first] = vals.reshape(hi - lo, nch)
    return out


def _dedispersed(path, hdr, hdr_bytes, cand, span):
    """(waterfall rows x time, profile, first sample, frequencies of the rows)."""
    nch, tsamp = hdr["nchans"], hdr["tsamp"]
    freqs = hdr["fch1"] + np.arange(nch) * hdr["foff"]
    ftop = freqs.max()
    delays = np.floor(KDM * cand["dm"] * (freqs**-2.0 - ftop**-2.0) / tsamp + 0.5).astype(int)
    first = int(cand["sample"]) - span // 2
    data = _read_spectra(path, hdr, hdr_bytes, first, span + int(delays.max()))
    rows = np.stack([data[delays[c]:delays[c] + span, c] for c in range(nch)])
    rows -= np.median(rows, axis=1, keepdims=True)
    group = max(1, int(math.ceil(nch / float(MAX_ROWS))))
    nrow = nch // group
    wf = rows[:nrow * group].reshape(nrow, group, span).mean(axis=1)
    fr = freqs[:nrow * group].reshape(nrow, group).mean(axis=1)
    return wf, rows.sum(axis=0), first, fr


def plot(png, path, hdr_bytes, doc):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hdr = dict(doc["header"])
    hdr["_nsamples"] = hdr["nsamples"]
    cands = doc["candidates"]
    best = sorted(cands, key=lambda c: -c["snr"])[:TOP]
    ncol = max(2, len(best))
    fig = plt.figure(figsize=(4.2 * ncol, 9.5))
    gs = fig.add_gridspec(3, ncol, height_ratios=[2.2, 1, 2.4], hspace=0.35, wspace=0.3)
    dm = np.array([c["dm"] for c in cands])
    t = np.array([c["time"] for c in cands])
    snr = np.array([c["snr"] for c in cands])
    size = 6 + 3 * np.clip(snr - snr.min(), 0, 40) if len(cands) else []
    half = ncol // 2
    ax = fig.add_subplot(gs[0, :half])
    ax.scatter(dm, snr, s=size, c="C0")
    ax.set_xlabel("DM (pc cm$^{-3}$)")
    ax.set_ylabel("S/N")
    ax.set_title("S/N against DM")
    ax = fig.add_subplot(gs[0, half:])
    ax.scatter(t, dm, s=size, c=snr, cmap="viridis")
    ax.set_xlabel("time at the top of the band (s)")
    ax.set_ylabel("DM (pc cm$^{-3}$)")
    ax.set_xlim(0, hdr["nsamples"] * hdr["tsamp"])
    plan = doc["plan"]
    ax.set_ylim(plan["dms"][0], plan["dms"][-1])
    ax.set_title("%d candidates (S/N >= %g)" % (len(cands), doc["parameters"]["threshold"]))
    for i, c in enumerate(best):
        span = int(min(max(64, 16 * c["width"]), 4096))
        wf, prof, first, fr = _dedispersed(path, hdr, hdr_bytes, c, span)
        tt = (first + np.arange(span)) * hdr["tsamp"]
        ap = fig.add_subplot(gs[1, i])
        ap.plot(tt, prof, lw=0.8)
        ap.set_title("DM %.1f, t %.4f s, S/N %.1f, width %d" %
                     (c["dm"], c["time"], c["snr"], c["width"]), fontsize=9)
        ap.set_xlim(tt[0], tt[-1])
        ap.set_yticks([])
        aw = fig.add_subplot(gs[2, i], sharex=ap)
        lo, hi = np.percentile(wf, [1, 99]) if wf.size else (0, 1)
        aw.imshow(wf, aspect="auto", origin="upper", vmin=lo, vmax=hi, cmap="gray_r",
                  extent=(tt[0], tt[-1], fr[-1], fr[0]) if fr[0] > fr[-1] else
                  (tt[0], tt[-1], fr[0], fr[-1]))
        aw.set_xlabel("time (s)")
        if i == 0:
            aw.set_ylabel("frequency (MHz)")
    if not best:
        fig.text(0.5, 0.3, "no candidate above the threshold", ha="center")
    fig.suptitle("%s: %d DM trials %.4g..%.4g, %d spectra" %
                 (doc["file"], plan["dm_trials"], plan["dms"][0], plan["dms"][-1],
                  doc["processed"]["spectra"]))
    fig.savefig(png, dpi=90)
    plt.close(fig)
