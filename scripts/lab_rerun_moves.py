#!/usr/bin/env python3
"""What a rerun of a lab sweep moved, cell by cell: two lab folders of one spec (for example the
lab matrix before and after a daemon fix), each run's relative DLCT over its scenario's median
baseline (as scripts/sim_vs_lab_sweeps.py computes it with --lab-baselines).

    python3 scripts/lab_rerun_moves.py data/lab/lab-matrix-lab data/lab/lab-matrix-lab-startfix \\
        --lab-baselines data/lab/lab-matrix-baselines [--by row] [--min-move 10]

Prints the cells whose median moved by at least --min-move points (before: median (range),
after: median (range)), then over the cells both folders hold: the mean absolute change of
the median, how many cells moved by at least 5 and 10 points (and whether their ranges
overlap), and with --by AXIS the same per value of that axis. Cells one folder lacks are
counted, not compared.
"""
import argparse
import statistics
from collections import defaultdict

from sim_vs_lab_sweeps import relative_to_baselines


def by_cell(folder, baselines):
    """Per cell (sorted axis items) its runs' relative DLCT in percent, and the spec."""
    spec, groups, _ = relative_to_baselines(folder, baselines)
    return spec, {tuple(sorted(cell.items())): vals for cell, vals in groups if vals}


def fmt(vals):
    return f"{statistics.median(vals):.1f} ({min(vals):.1f}-{max(vals):.1f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--lab-baselines", required=True, help="baseline sweep folder of both")
    ap.add_argument("--by", help="also summarise per value of this axis (e.g. row, keys)")
    ap.add_argument("--min-move", type=float, default=10.0,
                    help="list the cells whose median moved by at least this many points")
    a = ap.parse_args()
    if a.min_move < 0:
        ap.error(f"--min-move {a.min_move}: must be at least 0")
    spec_b, before = by_cell(a.before, a.lab_baselines)
    spec_a, after = by_cell(a.after, a.lab_baselines)
    if spec_b["axes"] != spec_a["axes"]:
        ap.error("the two folders hold different axes: not reruns of one spec")
    common = [c for c in before if c in after]
    print(f"cells: {len(before)} before, {len(after)} after, {len(common)} in both")
    print()
    print("| cell | before, median (range) | after, median (range) | move (pp) |")
    print("|---|---|---|---|")
    moves = {}
    for c in common:
        move = statistics.median(after[c]) - statistics.median(before[c])
        moves[c] = move
        if abs(move) >= a.min_move:
            name = ", ".join(f"{k}={v}" for k, v in c)
            print(f"| {name} | {fmt(before[c])} | {fmt(after[c])} | {move:+.1f} |")
    print()

    def summary(cells):
        m = [abs(moves[c]) for c in cells]
        apart = sum(
            abs(moves[c]) >= 10 and (min(after[c]) > max(before[c]) or max(after[c]) < min(before[c]))
            for c in cells
        )
        return (f"{len(cells)} cells: mean absolute move {statistics.mean(m):.1f} pp; "
                f"5+ points: {sum(x >= 5 for x in m)}; 10+ points: {sum(x >= 10 for x in m)} "
                f"({apart} with ranges apart)")

    if common:
        print("all: " + summary(common))
    if a.by and common:
        groups = defaultdict(list)
        for c in common:
            groups[dict(c).get(a.by, "")].append(c)
        for value, cells in groups.items():
            print(f"{a.by}={value}: " + summary(cells))


if __name__ == "__main__":
    main()
