#!/usr/bin/env python3
"""Spread of the repetitions of a `braid sweep` folder: per cell, the mean, standard deviation,
minimum and maximum of relative DLCT and every value, seed by seed.

Used by docs/validation.md ("Repetitions: the noise model"):

    braid sweep sweeps/noise-default.toml --out out/noise-default
    python3 scripts/noise_reps.py out/noise-default

Reads the journal (`runs.jsonl`), so it needs no Parquet reader. The standard deviation is the
sample one (n - 1).
"""
import argparse
import json
import statistics
from pathlib import Path


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders written by braid sweep --out")
    ap.add_argument("--field", default="relative_dlct", help="report field (default relative_dlct)")
    args = ap.parse_args()
    print(f"| sweep | runs | mean | sd | min | max | values by seed |")
    print("|---|---|---|---|---|---|---|")
    for d in args.dirs:
        rows = [json.loads(l) for l in Path(d, "runs.jsonl").read_text().splitlines() if l.strip()]
        rows.sort(key=lambda r: r["run"])
        ok = [r for r in rows if r["status"] == "ok"]
        vals = [100.0 * r["report"][args.field] for r in ok]
        sd = statistics.stdev(vals) if len(vals) > 1 else 0.0
        by_seed = " ".join(f"{v:.1f}" for v in vals)
        failed = len(rows) - len(ok)
        name = Path(d).name + (f" ({failed} failed)" if failed else "")
        print(f"| {name} | {len(vals)} | {statistics.mean(vals):.1f}% | {sd:.1f} | {min(vals):.1f}% "
              f"| {max(vals):.1f}% | {by_seed} |")


if __name__ == "__main__":
    main()
