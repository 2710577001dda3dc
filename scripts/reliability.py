#!/usr/bin/env python3
"""Tunnel reliability modes against each other: the table of docs/validation.md, "Tunnel
reliability: unreliable, reliable, partial".

    braid sweep sweeps/reliability.toml --out out/reliability
    python3 scripts/reliability.py out/reliability

One row per end-to-end / tunnel CC pair and reliability mode with its receiver; over the
cell's repetitions: the relative DLCT (against path 1 alone with the same loss) in percent as
mean with a 95% confidence half-width (Student's t) and range, the end-to-end retransmissions
as mean and range, and head-of-line blocking as the mean of the runs' means and the largest of
their maxima. Reads the journal (`runs.jsonl`) and the spec the folder keeps, so it needs no
Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports, entry, mean_ci_range


def receiver(e):
    """How the receiver waits, from a `mode` entry's overrides."""
    if e.get("tunnel.reorder") == "static":
        return f"static {e['tunnel.static_wait_ms']:g} ms"
    if "tunnel.repair_wait_ms" in e:
        return f"adaptive, repair wait {e['tunnel.repair_wait_ms']:g} ms"
    return "adaptive, 10 ms margin"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    args = ap.parse_args()
    spec, groups = cell_reports(args.dir)
    print("| e2e / tunnel | reliability | receiver | runs | rel. DLCT % mean ± 95% (range) "
          "| E2E retransmissions mean (range) | HOL mean / max ms |")
    print("|---|---|---|---|---|---|---|")
    for cell, runs in groups:
        e = entry(spec, "mode", cell["mode"])
        rel = [100 * r["relative_dlct"] for r in runs]
        rtx = [r["e2e"]["retransmissions"] for r in runs]
        hol = "-"
        if runs:
            hol = (f"{statistics.mean(r['hol_ms']['mean'] for r in runs):.1f} / "
                   f"{max(r['hol_ms']['max'] for r in runs):.0f}")
        rtx_s = f"{statistics.mean(rtx):.0f} ({min(rtx)}-{max(rtx)})" if rtx else "-"
        print(f"| {cell['pair']} | {e['tunnel.reliability']} | {receiver(e)} | {len(runs)} "
              f"| {mean_ci_range(rel)} | {rtx_s} | {hol} |")


if __name__ == "__main__":
    main()
