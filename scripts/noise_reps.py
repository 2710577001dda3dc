#!/usr/bin/env python3
"""Spread of the repetitions of a `braid sweep` folder: per cell, the mean, standard deviation,
minimum and maximum of relative DLCT and every value, seed by seed.

Used by docs/validation.md ("Repetitions: the noise model"):

    braid sweep sweeps/noise-default.toml --out out/noise-default
    python3 scripts/noise_reps.py out/noise-default

With `--by-cell`, one row per cell of each folder instead: the mean with its 95% confidence
half-width (Student's t) and the range, and the gaps the UE's receiver gave up
(`reorder.released_on_timeout`), mean and range:

    braid sweep sweeps/equalize-bonding.toml --out out/equalize-bonding
    python3 scripts/noise_reps.py --by-cell out/equalize-bonding

With `--pool AXIS[,AXIS...]` as well, the runs of the cells that differ only in those axes are
taken together (for example a row's mean over every scenario column: `--pool keys`):

    python3 scripts/noise_reps.py --by-cell --pool rtt out/fig8c-tunnel-rtt-buffer

Reads the journal (`runs.jsonl`), so it needs no Parquet reader. The standard deviation is the
sample one (n - 1).
"""
import argparse
import json
import statistics
from pathlib import Path

from sweep_journal import cell_reports, mean_ci_range


def by_cell(d, field, pool=()):
    """One row per cell of sweep folder `d`, the cells that differ only in the axes `pool`
    taken together (in first-seen order)."""
    spec, cells = cell_reports(d)
    unknown = [a for a in pool if a not in spec.get("axes", {})]
    if unknown:
        raise SystemExit(f"--pool: {', '.join(unknown)} is not an axis of {d} "
                         f"(axes: {', '.join(spec.get('axes', {}))})")
    pooled = {}
    for cell, runs in cells:
        key = tuple((k, v) for k, v in cell.items() if k not in pool)
        pooled.setdefault(key, []).extend(runs)
    print("| cell | runs | mean ± 95% (range) | gaps given up, mean (range) |")
    print("|---|---|---|---|")
    for key, runs in pooled.items():
        cell = dict(key)
        vals = [100.0 * r[field] for r in runs]
        gaps = [r["reorder"]["released_on_timeout"] for r in runs]
        gap_s = f"{statistics.mean(gaps):.0f} ({min(gaps)}-{max(gaps)})" if gaps else "-"
        name = ", ".join(f"{k}={v}" for k, v in cell.items())
        print(f"| {name} | {len(vals)} | {mean_ci_range(vals)} | {gap_s} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders written by braid sweep --out")
    ap.add_argument("--field", default="relative_dlct", help="report field (default relative_dlct)")
    ap.add_argument("--by-cell", action="store_true", help="one row per cell, not per folder")
    ap.add_argument("--pool", default="", metavar="AXIS[,AXIS]",
                    help="with --by-cell: take the cells that differ only in these axes together")
    args = ap.parse_args()
    pool = tuple(a for a in args.pool.split(",") if a)
    if pool and not args.by_cell:
        raise SystemExit("--pool: goes with --by-cell")
    if args.by_cell:
        for d in args.dirs:
            by_cell(d, args.field, pool)
        return
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
