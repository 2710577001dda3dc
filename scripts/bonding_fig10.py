#!/usr/bin/env python3
"""The daemon's default tunnel over Figure 10's scenarios and with 1% loss on either path,
measured in the lab: the table of docs/validation.md, "The daemon's default over Figure 10's
scenarios" (issue 15: never slower than the best single path).

    braid sweep sweeps/bonding-fig10-lab.toml --out out/bonding-fig10-lab --backend lab
    braid sweep sweeps/bonding-fig10-lab.toml --out out/bonding-fig10-sim --reps 10 --baseline true
    python3 scripts/bonding_fig10.py out/bonding-fig10-lab data/lab/lab-matrix-baselines \
        --sim out/bonding-fig10-sim

Each lab run's relative DLCT is its DLCT over the median DLCT of the lab's baselines (path 1
alone, without loss) of its scenario and end-to-end CC. A cell passes "never slower" when its
runs' mean is at most 100% and no run is above 105% (the rule of scripts/never_slower.py); a
run that failed fails its cell. With --sim, the simulator's runs of the same spec stand beside
the lab's, each against its own baseline (path 1 alone with the same seed), the lossy columns
against the lossless default's, and a last line says how well they agree: the mean absolute
difference of the simulator's mean from the lab's median, Spearman's rank correlation of the
two, the cells on the same side of 100% and the simulator's means inside the lab's range.
"""
import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_vs_lab_sweeps import relative_to_baselines, spearman  # noqa: E402
from sweep_journal import cell_runs, mean_ci_range  # noqa: E402

RUN_LIMIT = 105.0


def median_range(values, fmt="{:.0f}"):
    if not values:
        return "-"
    f = fmt.format
    return f"{f(statistics.median(values))} ({f(min(values))}-{f(max(values))})"


def key(cell):
    return (cell["column"], cell["e2e.cc"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("lab", help="folder of the lab sweep (bonding-fig10-lab.toml, --backend lab)")
    ap.add_argument("baselines", help="folder of the lab's baselines (lab-matrix-baselines.toml)")
    ap.add_argument("--sim", help="folder of the simulator's sweep of the same spec")
    args = ap.parse_args()

    spec, rel, _ = relative_to_baselines(args.lab, args.baselines)
    _, runs = cell_runs(args.lab)
    failed = {key(cell): sum(r.get("status") != "ok" for r in rs) for cell, rs in runs}
    detail = {key(cell): [r["report"] for r in rs if r.get("status") == "ok"] for cell, rs in runs}
    sim = {}
    if args.sim:
        _, sruns = cell_runs(args.sim)
        ok = [(cell, [r for r in rs if r.get("status") == "ok"]) for cell, rs in sruns]
        # The lossy columns against the lossless default's path 1 with the same seed, as the
        # lab's are (each run's own baseline there is path 1 with the loss).
        lossless = {(cell["e2e.cc"], r["seed"]): r["report"]["baseline_dlct_s"]
                    for cell, rs in ok if cell["column"] == "default" for r in rs}
        for cell, rs in ok:
            if cell["column"].startswith("LOSS"):
                sim[key(cell)] = [100.0 * r["report"]["dlct_s"] / lossless[(cell["e2e.cc"], r["seed"])]
                                  for r in rs if (cell["e2e.cc"], r["seed"]) in lossless]
            else:
                sim[key(cell)] = [100.0 * r["report"]["relative_dlct"] for r in rs]

    head = ("| scenario | e2e CC | lab runs | lab relative DLCT %, median (range) | e2e retrans. "
            "| gaps given up | never slower |")
    sep = "|---|---|---|---|---|---|---|"
    if args.sim:
        head += " simulator, mean ± 95% (range) |"
        sep += "---|"
    print(head)
    print(sep)
    passed = total = 0
    agreement = []  # (simulator mean, lab median, lab min, lab max) per cell with both
    for cell, values in rel:
        k = key(cell)
        reps = detail.get(k, [])
        retx = [r["e2e"]["retransmissions"] for r in reps]
        gaps = [r["reorder"]["released_on_timeout"] for r in reps]
        ok = (bool(values) and failed.get(k, 0) == 0 and statistics.mean(values) <= 100.0
              and max(values) <= RUN_LIMIT)
        total += 1
        passed += ok
        verdict = "yes" if ok else ("no (a run failed)" if failed.get(k) else "no")
        row = (f"| {cell['column']} | {cell['e2e.cc']} | {len(values)} | {median_range(values)} "
               f"| {median_range(retx)} | {median_range(gaps)} | {verdict} |")
        if args.sim:
            row += f" {mean_ci_range(sim.get(k, []), '{:.0f}')} |"
            if sim.get(k) and values:
                agreement.append((statistics.mean(sim[k]), statistics.median(values),
                                  min(values), max(values)))
        print(row)
    print(f"\nnever slower in {passed} of {total} cells (mean at most 100%, no run above "
          f"{RUN_LIMIT:.0f}%)")
    if agreement:
        mae = statistics.mean(abs(s - l) for s, l, _, _ in agreement)
        rho = spearman([s for s, *_ in agreement], [l for _, l, _, _ in agreement])
        same = sum((s <= 100.0) == (l <= 100.0) for s, l, _, _ in agreement)
        inside = sum(lo <= s <= hi for s, _, lo, hi in agreement)
        print(f"simulator against lab over {len(agreement)} cells: mean absolute difference "
              f"{mae:.1f} pp, Spearman {rho:.2f}, {same} on the same side of 100%, "
              f"{inside} simulator means inside the lab's range")


if __name__ == "__main__":
    main()
