#!/usr/bin/env python3
"""The nested-congestion-control matrix of Pieska et al. 2024, and which configurations are never
slower than one path: the tables of docs/validation.md, "The matrix of Pieska et al. 2024, and
'never slower than the best single path'" and its subsections on path exclusion and on paths
measured before the transfer.

    braid sweep sweeps/nested-cc-matrix.toml --out out/nested-cc-matrix
    python3 scripts/nested_cc_matrix.py out/nested-cc-matrix
    braid sweep sweeps/nested-cc-matrix-exclusion.toml --out out/nested-cc-matrix-exclusion
    python3 scripts/nested_cc_matrix.py out/nested-cc-matrix-exclusion
    braid sweep sweeps/nested-cc-matrix-handshake.toml --out out/nested-cc-matrix-handshake
    python3 scripts/nested_cc_matrix.py out/nested-cc-matrix-handshake

Rows: the paper's tunnel combinations, Cubic or BBR end to end over NewReno, BBR and BBRv2 TCP
tunnels (reliable, as the paper's TCP tunnels) and CCID2 and CCID5 DCCP tunnels (unreliable),
plus BBR over CCID5 with static reordering, each with CPF and SRTT (the spec's `row` and
`tunnel.scheduler` axes). Columns: the Table 2 scenario keys and their pairings (its `keys`
axis). Cells: the relative DLCT in percent, the download time over the tunnel divided by the
same download over path 1 alone (the best single path in every scenario: both paths have the
same rate and path 1 never the longer RTT), as the mean over the cell's repetitions, each
against its own baseline with the same seed and noise. A cell whose runs spread over
`--spread` points or more also gives their range, `mean (min-max)`; a cell with runs on both
sides of 100% is marked `*` (with its range). The last column is the worst cell's mean, then
how many of the row's runs exceeded 100% out of its runs in distinct scenarios (the default
scenario is Table 1, which is SHORT, so the `default` column repeats SHORT's runs and is not
counted twice). "never slower" there means no run of the row exceeded 100%.

`--cells` lists every cell on a line of its own instead: mean ± 95% confidence half-width
(Student's t), range and the runs above 100%. Reads the journal (`runs.jsonl`) and the spec the
folder keeps, so it needs no Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports, mean_ci_range

# The matrix's scenario columns and tunnels (sweeps/nested-cc-matrix.toml has the same); other
# scripts (json_snapshot.py, never_slower.py) import them.
SCENARIOS = ["", "SHORT", "LONG", "SHORT+NEAR", "SHORT+DIST", "LONG+NEAR", "LONG+DIST",
             "BUF250", "BUF1000", "CDL1", "ASYM0", "ASYM40", "ASYM200"]
TUNNELS = [
    ("newreno", "reliable", "adaptive"),
    ("ccid2", "unreliable", "adaptive"),
    ("bbr", "reliable", "adaptive"),
    ("ccid5", "unreliable", "adaptive"),
    ("bbr2", "reliable", "adaptive"),
]


def cell_text(vals, spread):
    """`mean`, `mean (min-max)` when the runs spread `spread` points or more, and a `*` when
    they lie on both sides of 100%; `fail` without runs."""
    if not vals:
        return "fail"
    lo, hi = min(vals), max(vals)
    text = f"{statistics.mean(vals):.0f}"
    straddles = lo <= 100 < hi
    if straddles or hi - lo >= spread:
        text += f" ({lo:.0f}-{hi:.0f})"
    return text + ("*" if straddles else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    ap.add_argument("--spread", type=float, default=10.0,
                    help="give a cell's range when its runs spread this many points or more (10)")
    ap.add_argument("--cells", action="store_true", help="one line per cell, with its interval")
    args = ap.parse_args()
    spec, groups = cell_reports(args.dir)
    keys = spec["axes"]["keys"]
    rows = {}
    for cell, runs in groups:
        rel = [100 * r["relative_dlct"] for r in runs]
        rows.setdefault((cell["row"], cell["tunnel.scheduler"]), {})[cell["keys"]] = rel
    if args.cells:
        print("| e2e / tunnel | sched | scenario | runs | rel. DLCT % mean ± 95% (range) | runs > 100% |")
        print("|---|---|---|---|---|---|")
        for (row, sched), by in rows.items():
            for k in keys:
                v = by[k]
                print(f"| {row} | {sched} | {k or 'default'} | {len(v)} | {mean_ci_range(v)} "
                      f"| {sum(x > 100 for x in v)} |")
        return
    head = ["e2e / tunnel", "sched"] + [k or "default" for k in keys] + ["worst mean; runs > 100%"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for (row, sched), by in rows.items():
        cells = [cell_text(by[k], args.spread) for k in keys]
        means = [(statistics.mean(by[k]), k) for k in keys if by[k]]
        # The default scenario is SHORT: count each distinct scenario's runs once.
        distinct = [k for k in keys if not (k == "" and "SHORT" in keys)]
        runs = [x for k in distinct for x in by[k]]
        over = sum(x > 100 for x in runs)
        worst = f"{max(means)[0]:.0f}" if means else "-"
        verdict = "; never slower" if runs and over == 0 else ""
        print(f"| {row} | {sched} | " + " | ".join(cells) + f" | {worst}; {over}/{len(runs)}{verdict} |")


if __name__ == "__main__":
    main()
