#!/usr/bin/env python3
"""One-way delays on the tunnel's paths, simulator against lab, from two sweep folders of one
spec (sweeps/owd-lab.toml; docs/validation.md, "The lab's spread against the simulator's"):

    braid sweep sweeps/owd-lab.toml --out out/owd-lab --backend lab
    braid sweep sweeps/owd-lab.toml --out out/owd-sim
    python3 scripts/owd_sim_vs_lab.py out/owd-sim out/owd-lab
    python3 scripts/owd_sim_vs_lab.py out/owd-host-jitter        # one folder: its cells alone

Per cell, side and path: the UE receiver's one-way-delay summary (`paths[].owd`: RFC 3550
jitter, mean above the path's smallest sample, standard deviation, range), as the median and
range over the repetitions, next to the gaps the receiver gave up
(`reorder.released_on_timeout`) and the relative DLCT.
"""
import argparse
import statistics

from sweep_journal import cell_reports

FIELDS = [("jitter_ms", "jitter ms"), ("mean_above_min_ms", "above min ms"),
          ("sd_ms", "sd ms"), ("range_ms", "range ms")]


def med_range(values, fmt="{:.2f}"):
    if not values:
        return "-"
    f = fmt.format
    return f"{f(statistics.median(values))} ({f(min(values))}-{f(max(values))})"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sim", help="the simulator's sweep folder")
    ap.add_argument("lab", nargs="?", help="the lab's sweep folder (--backend lab), if any")
    args = ap.parse_args()
    _, sim = cell_reports(args.sim)
    _, lab = cell_reports(args.lab) if args.lab else (None, None)
    print("| cell | side | runs | path | " + " | ".join(h for _, h in FIELDS)
          + " | gaps given up | relative DLCT % |")
    print("|---|---|---|---|" + "---|" * len(FIELDS) + "---|---|")
    for k, (cell, sim_runs) in enumerate(sim):
        sides = [("simulator", sim_runs)]
        if lab is not None:
            lab_cell, lab_runs = lab[k]
            if cell != lab_cell:
                raise SystemExit(f"the folders hold different specs: {cell} against {lab_cell}")
            sides.append(("lab", lab_runs))
        name = ", ".join(f"{k}={v}" for k, v in cell.items())
        for side, runs in sides:
            n_paths = max((len(r["paths"]) for r in runs), default=0)
            for i in range(n_paths):
                owds = [r["paths"][i].get("owd") for r in runs if i < len(r["paths"])]
                owds = [o for o in owds if o]
                cols = [med_range([o[f] for o in owds]) for f, _ in FIELDS]
                gaps = [r["reorder"]["released_on_timeout"] for r in runs
                        if r.get("reorder", {}).get("released_on_timeout") is not None]
                rel = [100 * r["relative_dlct"] for r in runs if r.get("relative_dlct")]
                tail = [med_range(gaps, "{:.0f}"), med_range(rel, "{:.1f}")] if i == 0 else ["", ""]
                print(f"| {name if i == 0 else ''} | {side if i == 0 else ''} | "
                      f"{len(runs) if i == 0 else ''} | {runs[0]['paths'][i]['name']} | "
                      + " | ".join(cols + tail) + " |")


if __name__ == "__main__":
    main()
