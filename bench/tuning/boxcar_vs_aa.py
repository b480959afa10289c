#!/usr/bin/env python3
"""Side-by-side table of the FAST boxcar kernel and AstroAccelerate's SPDT.

    boxcar_vs_aa.py RAW_DIR OUT_DIR

Reads what bench/tuning/boxcar_vs_aa.sh left in RAW_DIR (kernels_CxN.jsonl
from bench/tuning/boxcar_kernels.c, bench_CxN.jsonl from transient-bench,
aa_CxN.jsonl from the AstroAccelerate harness) and writes OUT_DIR/table.md
and OUT_DIR/table.json. Ceilings: bytes per sample over the device copy
bandwidth measured in the same run: FAST reads x once and writes S/N and
width (12 bytes); SPDT per iteration i (n / 2^i positions) reads its input
(and from i = 1 the partial sums), writes S/N (float) and width (ushort) per
position and half as many decimated values and partial sums: about
14 + 18 (1 - 2^(1 - iterations)) bytes per sample.
"""
import glob
import json
import os
import sys

CASES = [("BD-AA", "aa_default"), ("BD-32", "bd32"), ("BD-16", "bd16"), ("BD-8", "bd8"),
         ("IG(1)", None)]


def lines(path):
    try:
        with open(path) as f:
            for ln in f:
                if ln.startswith("{"):
                    try:
                        yield json.loads(ln)
                    except ValueError:
                        pass
    except OSError:
        return


def main(raw, out):
    rows = []
    for kpath in sorted(glob.glob(os.path.join(raw, "kernels_*.jsonl"))):
        tag = os.path.basename(kpath)[len("kernels_"):-len(".jsonl")]
        env, fast, paper = {}, {}, {}
        for r in lines(kpath):
            if r.get("type") == "env":
                env = r
            elif r.get("type") == "kernel":
                if r["variant"].endswith("paper"):
                    paper[r["algorithm"]] = r
                elif (r["tile"], r["split"], r["positions"]) == (8192, 1, 8):
                    fast[r["algorithm"]] = r
        bench = {r["config"]: r for r in lines(os.path.join(raw, f"bench_{tag}.jsonl"))
                 if r.get("type") == "result" and r.get("variant") == "cuda-fast"}
        aa = {r["case"]: r for r in lines(os.path.join(raw, f"aa_{tag}.jsonl")) if "case" in r}
        bw = env.get("copy_bw", 0.0)
        for ours, theirs in CASES:
            k = fast.get(ours, {})
            a = aa.get(f"{theirs}/spdt", {}) if theirs else {}
            it = a.get("iterations", 0)
            aa_bytes = 14 + 18 * (1 - 2.0 ** (1 - it)) if it else None
            row = {
                "case": ours, "size": tag,
                "boxcars_per_sample": k.get("boxcars_per_sample"),
                "aa_boxcars_per_sample": a.get("boxcars_per_sample"),
                "fast_kernel_sps": k.get("samples_per_s"),
                "fast_bench_sps": bench.get(ours, {}).get("samples_per_s"),
                "bench_ok": bench.get(ours, {}).get("ok"),
                "paper_sps": paper.get(ours, {}).get("samples_per_s"),
                "aa_spdt_sps": a.get("samples_per_s"),
                "aa_check_ok": a.get("check", {}).get("ok") if a else None,
                "fast_ceiling_sps": bw / 12.0 if bw else None,
                "aa_bytes_per_sample": aa_bytes,
                "aa_ceiling_sps": bw / aa_bytes if bw and aa_bytes else None,
                "copy_bw": bw, "gpu": env.get("gpu"),
            }
            f, s = row["fast_kernel_sps"], row["aa_spdt_sps"]
            row["ratio_kernel_vs_aa"] = f / s if f and s else None
            b = row["fast_bench_sps"]
            row["ratio_bench_vs_aa"] = b / s if b and s else None
            rows.append(row)

    def g(v, fmt="{:.3g}"):
        return "" if v is None else (fmt.format(v) if isinstance(v, float) else str(v))

    md = ["| case | size | boxcars/sample (ours / AA) | AA SPDT | FAST kernel | x AA | "
          "FAST transient-bench | x AA | PAPER | FAST of its ceiling | AA of its ceiling |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        fc = r["fast_kernel_sps"] / r["fast_ceiling_sps"] if r["fast_kernel_sps"] and r["fast_ceiling_sps"] else None
        ac = r["aa_spdt_sps"] / r["aa_ceiling_sps"] if r["aa_spdt_sps"] and r["aa_ceiling_sps"] else None
        md.append(f"| {r['case']} | {r['size']} | {g(r['boxcars_per_sample'], '{:.1f}')} / "
                  f"{g(r['aa_boxcars_per_sample'], '{:.1f}')} | {g(r['aa_spdt_sps'])} | "
                  f"{g(r['fast_kernel_sps'])} | {g(r['ratio_kernel_vs_aa'], '{:.2f}')} | "
                  f"{g(r['fast_bench_sps'])} | {g(r['ratio_bench_vs_aa'], '{:.2f}')} | "
                  f"{g(r['paper_sps'])} | {g(fc, '{:.0%}')} | {g(ac, '{:.0%}')} |")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "table.json"), "w") as f:
        json.dump(rows, f, indent=1)
    print("\n".join(md))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
