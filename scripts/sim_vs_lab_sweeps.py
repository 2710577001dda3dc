#!/usr/bin/env python3
"""The simulator against the lab, cell by cell, from two sweep folders of one spec: one run by
the simulator, one by `braid sweep --backend lab` (docs/sweeps.md).

    braid sweep SPEC --out out/X-sim
    braid sweep SPEC --out out/X-lab --backend lab
    python3 scripts/sim_vs_lab_sweeps.py out/X-sim out/X-lab [--metric goodput_mbps]
    python3 scripts/sim_vs_lab_sweeps.py out/X-sim out/X-lab --lab-baselines out/X-baselines \
        [--by row] [--summary-only]

Per cell: the simulator's relative DLCT (or, with --metric goodput_mbps, its goodput in Mbit/s,
for UDP flows whose completion time is their sending time) as mean and sample standard deviation over its
repetitions, the lab's as median and range over its repetitions, and whether the simulator's
mean lies inside the lab's range. With `--spread`, how far the runs of a cell spread on each side, like for
like: the range of the lab's runs against the range of the simulator's first as many
repetitions (the lab's smallest run count per cell), as median and quartiles over the cells.
Over all cells: the mean absolute error between the
simulator's mean and the lab's median (percentage points, or Mbit/s), Spearman's rank correlation
of the two, and for relative DLCT the share of cells on the same side of 100% (faster or slower
than one path). Reads
the journals (`runs.jsonl`) and the spec each folder keeps; both folders must hold the same
spec (the same axes give the same cells; each folder's own spec says its repetitions).

With `--lab-baselines DIR` the lab's runs carry no baseline of their own (a matrix measured
with `baseline = false`) and DIR holds `braid sweep --backend lab --lab-mode baseline` runs of
a spec whose axes are some of the scenario fields the matrix sets (for example `keys` and
`e2e.cc`): each lab run's relative DLCT is its DLCT over the median DLCT of the baselines of
its scenario. `--by AXIS` adds the statistics per value of one axis; `--summary-only` leaves
the per-cell table out.
"""
import argparse
import statistics
import sys
from pathlib import Path

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


def settings(spec, cell):
    """The scenario fields a cell sets through its axes: a scalar axis's value under its key, a
    table axis's entry field by field."""
    out = {}
    for axis, value in cell.items():
        entries = spec["axes"][axis]
        if entries and isinstance(entries[0], dict):
            entry = next(e for e in entries if e["label"] == value)
            out.update({k: v for k, v in entry.items() if k != "label"})
        else:
            out[axis] = value
    return out


def relative_to_baselines(lab_folder, baseline_folder):
    """Spec, and per lab cell its runs' DLCT over the median baseline DLCT of its scenario, in
    percent; the baselines' median and range (s) per baseline cell, keyed by its axis values."""
    spec, groups = cell_reports(lab_folder)
    bspec, bgroups = cell_reports(baseline_folder)
    baselines = {}
    for cell, runs in bgroups:
        if runs:
            dl = [r["dlct_s"] for r in runs]
            baselines[tuple(sorted(cell.items()))] = (statistics.median(dl), min(dl), max(dl))
    out = []
    for cell, runs in groups:
        fields = settings(spec, cell)
        missing = [k for k in bspec["axes"] if k not in fields]
        if missing:
            sys.exit(f"the lab cell {cell} does not set the baselines' axes {missing}")
        base = baselines.get(tuple(sorted((k, fields[k]) for k in bspec["axes"])))
        out.append((cell, [100.0 * r["dlct_s"] / base[0] for r in runs] if base else []))
    return spec, out, baselines


def detail(folder):
    """Per cell (keyed by its sorted axis values): path 1's share of the bytes and the
    end-to-end retransmissions, as mean (a simulated folder) or median (a lab folder) of its
    runs, formatted; `-` where the reports lack them."""
    spec, groups = cell_reports(folder)
    lab = Path(folder, "spec.hash").read_text().split()[1:2] != []
    pick = statistics.median if lab else statistics.mean
    out = {}
    for cell, runs in groups:
        shares = [r["paths"][0]["share"] for r in runs if r.get("paths")]
        retx = [r["e2e"]["retransmissions"] for r in runs if r.get("e2e", {}).get("retransmissions") is not None]
        out[tuple(sorted(cell.items()))] = (
            f"{100 * pick(shares):.0f}%" if shares else "-",
            f"{pick(retx):.0f}" if retx else "-",
        )
    return out


def stats_line(pairs, inside, err_unit, relative):
    mae = statistics.mean(abs(a - b) for a, b in pairs)
    rho = spearman([a for a, _ in pairs], [b for _, b in pairs])
    line = (f"cells: {len(pairs)}; simulator's mean inside the lab's range: {inside}; "
            f"mean absolute error {mae:.1f} {err_unit}; Spearman {rho:.2f}")
    if relative:
        same = sum((a < 100) == (b < 100) for a, b in pairs) / len(pairs)
        line += f"; same side of 100%: {100 * same:.0f}%"
    return line


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
    ap.add_argument("--lab-baselines", metavar="DIR",
                    help="folder of the lab's baseline sweep (--lab-mode baseline)")
    ap.add_argument("--by", metavar="AXIS", help="also the statistics per value of this axis")
    ap.add_argument("--summary-only", action="store_true", help="leave the per-cell table out")
    ap.add_argument("--spread", action="store_true",
                    help="also compare the spread of runs per cell: the range of the lab's runs "
                         "against that of as many of the simulator's first repetitions")
    ap.add_argument("--detail", action="store_true",
                    help="per cell also path 1's share of the bytes and the end-to-end "
                         "retransmissions, simulator mean against lab median (for tracing)")
    args = ap.parse_args()
    _, unit, err_unit = METRICS[args.metric]
    relative = args.metric == "relative_dlct"
    sim_spec, sim = values(args.sim, args.metric)
    if args.lab_baselines:
        if not relative:
            sys.exit("--lab-baselines is for --metric relative_dlct")
        lab_spec, lab, _ = relative_to_baselines(args.lab, args.lab_baselines)
    else:
        lab_spec, lab = values(args.lab, args.metric)
    if sim_spec.get("axes") != lab_spec.get("axes"):
        sys.exit("the two folders hold different specs (their axes differ)")
    names = list(sim_spec.get("axes", {}))
    if args.by and args.by not in names:
        sys.exit(f"--by {args.by}: not an axis of the spec (axes: {', '.join(names)})")
    extra = ""
    if args.detail:
        sim_detail, lab_detail = detail(args.sim), detail(args.lab)
        extra = " path 1 share sim / lab | e2e retrans sim / lab |"
    if not args.summary_only:
        print("| " + " | ".join(names) + " | sim mean (sd) | lab median (range) | sim in lab range |"
              + extra)
        print("|" + "---|" * (len(names) + 3 + 2 * args.detail))
    pairs, inside, groups = [], 0, {}
    n_lab = min((len(l) for _, l in lab if l), default=0)
    spreads = []
    for (cell, s), (_, l) in zip(sim, lab):
        if not s or not l:
            continue
        if len(s) >= n_lab >= 2:
            spreads.append((max(l) - min(l), max(s[:n_lab]) - min(s[:n_lab])))
        sm = statistics.mean(s)
        sd = statistics.stdev(s) if len(s) > 1 else 0.0
        lm = statistics.median(l)
        ok = min(l) <= sm <= max(l)
        inside += ok
        pairs.append((sm, lm))
        if args.by:
            g = groups.setdefault(cell[args.by], [[], 0])
            g[0].append((sm, lm))
            g[1] += ok
        if not args.summary_only:
            row = ("| " + " | ".join(str(cell[n]) for n in names) +
                   f" | {sm:.1f}{unit} ({sd:.1f}) | {lm:.1f}{unit} ({min(l):.1f}-{max(l):.1f})"
                   f" | {'yes' if ok else 'no'} |")
            if args.detail:
                key = tuple(sorted(cell.items()))
                (ss, sr), (ls, lr) = sim_detail[key], lab_detail[key]
                row += f" {ss} / {ls} | {sr} / {lr} |"
            print(row)
    if not pairs:
        sys.exit("no cell has runs in both folders")
    if args.by:
        print()
        print(f"| {args.by} | cells | sim in lab range | MAE ({err_unit}) | Spearman |"
              + (" same side of 100% |" if relative else ""))
        print("|---|---|---|---|---|" + ("---|" if relative else ""))
        for value, (ps, ok) in groups.items():
            mae = statistics.mean(abs(a - b) for a, b in ps)
            rho = spearman([a for a, _ in ps], [b for _, b in ps]) if len(ps) > 1 else float("nan")
            row = f"| {value or '(default)'} | {len(ps)} | {ok} | {mae:.1f} | {rho:.2f} |"
            if relative:
                same = sum((a < 100) == (b < 100) for a, b in ps) / len(ps)
                row += f" {100 * same:.0f}% |"
            print(row)
    print()
    print(stats_line(pairs, inside, err_unit, relative))
    if args.spread and spreads:
        def summary(xs):
            q = statistics.quantiles(xs, n=4)
            return f"median {q[1]:.1f} (quartiles {q[0]:.1f} and {q[2]:.1f})"
        lab_r, sim_r = [a for a, _ in spreads], [b for _, b in spreads]
        print(f"spread, the range of {n_lab} runs per cell ({err_unit}): lab {summary(lab_r)}, "
              f"simulator {summary(sim_r)}; 5 or more in {sum(x >= 5 for x in lab_r)} lab cells "
              f"and {sum(x >= 5 for x in sim_r)} simulated, under 1 in {sum(x < 1 for x in lab_r)} "
              f"and {sum(x < 1 for x in sim_r)}")


if __name__ == "__main__":
    main()
