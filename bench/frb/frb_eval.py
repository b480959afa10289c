#!/usr/bin/env python3
"""One JSON line from a transient-frb run (Python standard library only):

  frb_eval.py --json CANDS.json --wall S1 [S2 ...] [--truth TRUTH.json |
              --known DM T_S] [--extra JSON]

CANDS.json: transient-frb --format json output. TRUTH.json: the bursts of a
synthetic file ("bursts": dm, t0_s, width_ms, snr). A burst is recovered when
a candidate has |DM_c - DM| <= 10 % DM and |t_c - t0| <= max(burst FWHM,
candidate width) + tsamp (the rule the Heimdall peer benchmark uses, so the
two runs are scored alike); times are those of the pulse centre at the top
of the band in both.
"""
import argparse
import json
import statistics


def near(c, b, tsamp):
    w = max(b.get("width_ms", 0.0) * 1e-3, c["width"] * tsamp) + tsamp
    return abs(c["dm"] - b["dm"]) <= 0.1 * b["dm"] and abs(c["time"] - b["t0_s"]) <= w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--wall", type=float, nargs="+", required=True)
    ap.add_argument("--truth")
    ap.add_argument("--known", type=float, nargs=2, metavar=("DM", "T_S"))
    ap.add_argument("--extra", default="{}")
    a = ap.parse_args()
    with open(a.json) as f:
        doc = json.load(f)
    h, plan, proc, cands = doc["header"], doc["plan"], doc["processed"], doc["candidates"]
    tsamp = h["tsamp"]
    wall = min(a.wall)
    rec = {"pipeline": "transient-frb", "file": doc["file"].split("/")[-1],
           "nchans": h["nchans"], "nsamps": h["nsamples"], "dm_trials": plan["dm_trials"],
           "dm_range": [plan["dms"][0], plan["dms"][-1]],
           "max_delay_samples": plan["max_delay_samples"], "backend": proc["backend"],
           "seconds_wall": round(wall, 4), "seconds_wall_all": [round(x, 4) for x in a.wall],
           "seconds_wall_median": round(statistics.median(a.wall), 4),
           "seconds_in_program": proc["seconds"],
           "samples_per_s": h["nchans"] * h["nsamples"] / wall,
           "dm_time_samples_per_s": plan["dm_trials"] * h["nsamples"] / wall,
           "candidates": len(cands), "parameters": doc["parameters"]}
    top = sorted(cands, key=lambda c: -c["snr"])[:5]
    rec["top"] = [{k: c[k] for k in ("snr", "dm", "time", "width", "members")} for c in top]
    bursts = []
    if a.truth:
        with open(a.truth) as f:
            bursts = json.load(f)["bursts"]
    elif a.known:
        bursts = [{"id": 0, "dm": a.known[0], "t0_s": a.known[1], "width_ms": 0.0}]
    if bursts:
        per = []
        for b in bursts:
            m = [c for c in cands if near(c, b, tsamp)]
            best = max(m, key=lambda c: c["snr"]) if m else None
            e = {"id": b["id"], "dm": b["dm"], "t0_s": b["t0_s"], "snr": b.get("snr"),
                 "found": best is not None}
            if best:
                e.update({"cand_snr": round(best["snr"], 3), "cand_dm": round(best["dm"], 3),
                          "cand_t_s": round(best["time"], 6), "cand_width": best["width"]})
            per.append(e)
        un = [c for c in cands if not any(near(c, b, tsamp) for b in bursts)]
        rec.update({"injected": len(bursts), "recovered": sum(e["found"] for e in per),
                    "unmatched_candidates": len(un),
                    "unmatched_snr_max": round(max((c["snr"] for c in un), default=0.0), 3),
                    "bursts": per})
    rec.update(json.loads(a.extra))
    print(json.dumps(rec, separators=(",", ":")))


if __name__ == "__main__":
    main()
