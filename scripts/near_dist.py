#!/usr/bin/env python3
"""Proxy placement, NEAR against DIST, CPF against SRTT (Pieska et al. 2024, Figures 2, 4, 5):
the table of docs/validation.md, "Proxy placement: NEAR vs. DIST, CPF vs. SRTT".

    braid sweep sweeps/near-dist.toml --out out/near-dist
    python3 scripts/near_dist.py out/near-dist

One row per end-to-end CC, placement and end-to-end RTT n; per scheduler over its repetitions
the relative DLCT (tunnel DLCT / DLCT of the same transfer over path 1 without the tunnel) in
percent as mean with a 95% confidence half-width (Student's t) and range, and path 2's share of
the bytes as a mean and range. Reads the journal (`runs.jsonl`) and the spec the folder keeps,
so it needs no Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports, mean_ci_range


def share(runs):
    s = [100 * r["paths"][1]["share"] for r in runs]
    if not s:
        return "-"
    return f"{statistics.mean(s):.0f}% ({min(s):.0f}-{max(s):.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    args = ap.parse_args()
    spec, groups = cell_reports(args.dir)
    tunnel = spec["set"]["tunnel.cc"]
    rows = {}
    for cell, runs in groups:
        key = (cell["e2e.cc"], cell["keys"], cell["rtt"])
        rows.setdefault(key, {})[cell["tunnel.scheduler"]] = runs
    print("| e2e | tunnel | placement | E2E RTT ms | runs | CPF rel. DLCT % mean ± 95% (range) "
          "| CPF path-2 share (range) | SRTT rel. DLCT % mean ± 95% (range) | SRTT path-2 share (range) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (e2e, place, rtt), by in rows.items():
        cols, n = [], []
        for sched in ["cpf", "srtt"]:
            runs = by.get(sched, [])
            n.append(str(len(runs)))
            cols += [mean_ci_range([100 * r["relative_dlct"] for r in runs]), share(runs)]
        print(f"| {e2e} | {tunnel} | {place} | {rtt} | {' / '.join(n)} | " + " | ".join(cols) + " |")


if __name__ == "__main__":
    main()
