#!/usr/bin/env python3
"""The simulator against the lab, cell by cell, from two sweep folders of one spec: one run by
the simulator, one by `braid sweep --backend lab` (docs/sweeps.md).

    braid sweep SPEC --out out/X-sim
    braid sweep SPEC --out out/X-lab --backend lab
    python3 scripts/sim_vs_lab_sweeps.py out/X-sim out/X-lab [--metric goodput_mbps]

Per cell: the simulator's relative DLCT (or, with --metric goodput_mbps, its goodput in Mbit/s,
for UDP flows whose completion time is their sending time) as mean and sample standard deviation over its
repetitions, the lab's as median and range over its repetitions, and whether the simulator's
mean lies inside the lab's range. Over all cells: the mean absolute error between the
simulator's mean and the lab's median (percentage points, or Mbit/s), Spearman's rank correlation
of the two, and for relative DLCT the share of cells on the same side of 100% (faster or slower
than one path). Reads
the journals (`runs.jsonl`) and the spec each folder keeps; both folders must hold the same
spec (the same axes and repetitions give the same run ids).
"""
import argparse
import statistics
import sys

from sweep_journal import cell_reports


METRICS = {
    # name: (scale, unit, pp or absolute unit of the error)
    "relative_dlct": (100.0, "%", "pp"),
    "goodput_mbps": (1.0, "", "Mbit/s"),
}


def values(folder, metric):
    """Spec, and per cell the metric of its successful runs (relative DLCT in percent)."""
    spec, groups = cell_reports(folder)
    scale = METRICS[metric][0]
    return spec, [(cell, [scale * r[metric] for r in runs]) for cell, runs in groups]


def ranks(xs):
    """Ranks 1..n, ties sharing their mean rank."""
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.mean(ra), statistics.mean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    sa = sum((x - ma) ** 2 for x in ra) ** 0.5
    sb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (sa * sb) if sa and sb else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim", help="folder of the simulated sweep")
    ap.add_argument("lab", help="folder of the lab sweep (--backend lab)")
    ap.add_argument("--metric", choices=sorted(METRICS), default="relative_dlct")
    args = ap.parse_args()
    _, unit, err_unit = METRICS[args.metric]
    sim_spec, sim = values(args.sim, args.metric)
    lab_spec, lab = values(args.lab, args.metric)
    if sim_spec.get("axes") != lab_spec.get("axes"):
        sys.exit("the two folders hold different specs (their axes differ)")
    names = list(sim_spec.get("axes", {}))
    print("| " + " | ".join(names) + " | sim mean (sd) | lab median (range) | sim in lab range |")
    print("|" + "---|" * (len(names) + 3))
    pairs, inside = [], 0
    for (cell, s), (_, l) in zip(sim, lab):
        if not s or not l:
            continue
        sm = statistics.mean(s)
        sd = statistics.stdev(s) if len(s) > 1 else 0.0
        lm = statistics.median(l)
        ok = min(l) <= sm <= max(l)
        inside += ok
        pairs.append((sm, lm))
        print("| " + " | ".join(str(cell[n]) for n in names) +
              f" | {sm:.1f}{unit} ({sd:.1f}) | {lm:.1f}{unit} ({min(l):.1f}-{max(l):.1f}) | {'yes' if ok else 'no'} |")
    if not pairs:
        sys.exit("no cell has runs in both folders")
    mae = statistics.mean(abs(a - b) for a, b in pairs)
    rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
    line = (f"cells: {len(pairs)}; simulator's mean inside the lab's range: {inside}; "
            f"mean absolute error {mae:.1f} {err_unit}; Spearman {rho:.2f}")
    if args.metric == "relative_dlct":
        same = sum((a < 100) == (b < 100) for a, b in pairs) / len(pairs)
        line += f"; same side of 100%: {100 * same:.0f}%"
    print()
    print(line)


if __name__ == "__main__":
    main()
