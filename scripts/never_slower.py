#!/usr/bin/env python3
"""Never slower than the best single path: every scheduler x tunnel CC x reliability, swept.

For Cubic and BBR end to end, runs every combination of `tunnel.scheduler`, `tunnel.cc` and
`tunnel.reliability` over the scenarios of Pieska et al. 2024 (SHORT, LONG and their NEAR/DIST pairings,
BUF250, BUF1000, CDL1, ASYM0/40/200; the default scenario is SHORT) and reports each
combination's worst relative DLCT: the download time over the tunnel divided by the same
download over path 1 alone, the best single path in every one of these scenarios. A
combination "never slower" has its worst cell at or below 100%.

The paper's two paths always have the same rate, which flatters schedulers that ignore rates
(round robin). Four more columns, beyond its Table 2, test a default against what real bonding
meets: path 2 at half and at a fifth of path 1's rate (RATE2/2, RATE2/5), path 2 80 ms longer
than path 1 (ASYM80: between the paper's ASYM40 and the exclusion threshold), and path 2 with 1%
random loss (LOSS2); path 1 stays the best single path in each. They are reported apart from
the paper's columns.

Every cell goes to a CSV (one row per run, for pandas); the console gets the rankings in
Markdown. By default the paths are measured before the transfer and a path more than 100 ms
slower than the fastest is excluded, the set-up recommended for real bonding in
docs/validation.md; `--seed-setup` sweeps the paper's set-up instead (paths unmeasured, no
exclusion).

The random column (LOSS2) is the mean over `--loss-seeds` seeds. `--receiver` adds the
receiver's wait limit (`tunnel.reorder`) as a fourth dimension; `--perturb` makes every
loss-free cell the mean of its run and eight small perturbations (buffers, rates, feedback
delay), for ranking a short list of candidates whose cells may sit on a tipping point.

    cargo build --release -p braid
    python3 scripts/never_slower.py [--bytes 100000000] [--jobs 2] [--csv out/never_slower.csv]
    python3 scripts/never_slower.py --scheduler srtt,cpf --tunnel-cc ccid2 --set KEY=VALUE
    python3 scripts/never_slower.py --receiver adaptive,static --from-csv out/never_slower.csv
"""
import argparse
import concurrent.futures
import csv
import os

from braidsim import try_report
from nested_cc_matrix import SCENARIOS

SCHEDULERS = ["cpf", "srtt", "rr", "acpf", "otias", "blest", "ecf", "redundant"]
TUNNEL_CCS = ["newreno", "ccid2", "cubic", "bbr", "ccid5", "bbr2", "bbr3",
              "lia", "olia", "balia", "wvegas", "coupled_cubic"]
RELIABILITIES = ["unreliable", "reliable", "partial"]
# `tunnel.reorder`: the receiver's wait limit (static waits tunnel.static_wait_ms, 50 ms unless set).
RECEIVERS = ["adaptive", "static", "none"]
E2E_CCS = ["cubic", "bbr"]
# The default scenario is Table 1, which is SHORT: one column for both.
KEYS = [k for k in SCENARIOS if k]
MEASURED = ["sim.path_handshake=true", "tunnel.max_rtt_spread_ms=100"]
# Beyond the paper's Table 2: (column name, overrides), each on the default scenario (SHORT).
EXTRA = [("RATE2/2", ["paths.1.rate_mbps=25"]), ("RATE2/5", ["paths.1.rate_mbps=10"]),
         ("ASYM80", ["paths.1.rtt_ms=100"]), ("LOSS2", ["paths.1.loss=0.01"])]
# Columns whose runs draw random numbers (loss): their cell is the mean over --loss-seeds seeds.
RANDOM = {"LOSS2"}
# --perturb: small changes to a loss-free cell, which is otherwise one deterministic run. A cell
# on the edge of an overshoot or a Startup exit can move 10-30 points under them (validation.md,
# "The two SRTT cells the handshake made worse"); with --perturb a cell is the mean of the base
# run and these. A column's own overrides come later and win.
PERTURBATIONS = [["paths.0.buffer_pkts=480"], ["paths.0.buffer_pkts=520"], ["paths.1.buffer_pkts=480"],
                 ["paths.1.buffer_pkts=520"], ["paths.0.rate_mbps=49.5"], ["paths.1.rate_mbps=50.5"],
                 ["tunnel.feedback_max_delay_ms=0.8"], ["tunnel.feedback_max_delay_ms=1.2"]]
COLUMNS = [(k, [f"keys={k}"]) for k in KEYS] + EXTRA
EXTRA_KEYS = [name for name, _ in EXTRA]
# The one column where a path is excluded: its floor is one path plus the tunnel's headers.
EXCLUDED = "ASYM200"


def cell(sets):
    r = try_report(sets, baseline=True)
    if r is None:
        return None, None
    return r["relative_dlct"], r["dlct_s"]


def names(text, allowed, what):
    chosen = text.split(",") if text else allowed
    unknown = [c for c in chosen if c not in allowed]
    if unknown:
        raise SystemExit(f"--{what}: unknown {unknown}; expected some of {', '.join(allowed)}")
    return chosen


def average(vals):
    """The mean of one cell's runs (several seeds in a random column); None if any run failed."""
    return None if None in vals else sum(vals) / len(vals)


def pct(v):
    return "fail" if v is None else f"{v * 100:.0f}"


def worst(vals):
    """The worst cell; a failed run (no DLCT) is worse than any number."""
    return float("inf") if any(v is None for v in vals) else max(vals)


def column_worst(results, combo, keys, e2es=E2E_CCS):
    return worst([results[(e, *combo, k)] for e in e2es for k in keys])


def mean(results, combo):
    vals = [results[(e, *combo, k)] for e in E2E_CCS for k in KEYS + EXTRA_KEYS]
    return float("inf") if None in vals else sum(vals) / len(vals)


def over_100(results, combo, keys):
    bad = [f"{e} {k}" for e in E2E_CCS for k in keys
           if results[(e, *combo, k)] is None or results[(e, *combo, k)] > 1.0]
    return ", ".join(bad) or "none"


def show(v):
    return "fail" if v == float("inf") else pct(v)


def row(results, combo):
    """scheduler | tunnel CC | reliability | receiver | Cubic worst | BBR worst | ASYM200 | beyond | mean."""
    rest = [k for k in KEYS if k != EXCLUDED]
    cells = [show(column_worst(results, combo, rest, [e])) for e in E2E_CCS]
    cells += [show(column_worst(results, combo, [EXCLUDED])), show(column_worst(results, combo, EXTRA_KEYS)),
              show(mean(results, combo))]
    return "| " + " | ".join(list(combo) + cells) + " |"


HEAD = (f"| scheduler | tunnel CC | reliability | receiver | Cubic: worst without {EXCLUDED} | BBR: worst without {EXCLUDED} "
        f"| {EXCLUDED} (worst) | beyond Table 2 (worst) | mean of all cells |\n|---|---|---|---|---|---|---|---|---|")


def report(combos, results, top):
    rest = [k for k in KEYS if k != EXCLUDED]
    every = [c for c in combos if column_worst(results, c, KEYS) <= 1.0]
    print(f"\nAt or below 100% in every one of the Table 2 columns, both end-to-end CCs: {len(every)} of "
          f"{len(combos)} combinations. Lowest worst cells over the Table 2 columns:\n")
    print("| scheduler | tunnel CC | reliability | receiver | worst | cells above 100% |\n|---|---|---|---|---|---|")
    for c in sorted(combos, key=lambda c: (column_worst(results, c, KEYS), mean(results, c)))[:top]:
        print(f"| {' | '.join(c)} | {show(column_worst(results, c, KEYS))} | {over_100(results, c, KEYS)} |")

    good = [c for c in combos if column_worst(results, c, rest) <= 1.0]
    both = [c for c in good if column_worst(results, c, EXTRA_KEYS) <= 1.0]
    print(f"\n### At or below 100% in every column but {EXCLUDED}, both end-to-end CCs\n")
    print(f"{len(good)} of {len(combos)} combinations; {len(both)} of them also beyond Table 2 "
          f"({', '.join(EXTRA_KEYS)}). Sorted by the mean of all their cells (both end-to-end CCs, "
          f"every column).\n")
    print(HEAD)
    for c in sorted(good, key=lambda c: mean(results, c))[:top]:
        print(row(results, c))

    print("\n### The best combination for each value of one dimension (by the mean of all cells)")
    for index, label in enumerate(["scheduler", "tunnel CC", "reliability", "receiver"]):
        if len({c[index] for c in combos}) < 2:
            continue
        print(f"\nFor each {label}:\n\n{HEAD}")
        for v in dict.fromkeys(c[index] for c in combos):
            print(row(results, min((c for c in combos if c[index] == v), key=lambda c: mean(results, c))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--scheduler", help="comma-separated subset of " + ",".join(SCHEDULERS))
    ap.add_argument("--tunnel-cc", help="comma-separated subset of " + ",".join(TUNNEL_CCS))
    ap.add_argument("--reliability", help="comma-separated subset of " + ",".join(RELIABILITIES))
    ap.add_argument("--receiver", default="adaptive",
                    help="comma-separated tunnel.reorder policies, of " + ",".join(RECEIVERS))
    ap.add_argument("--perturb", action="store_true",
                    help="each loss-free cell is the mean of its run and %d small perturbations" % len(PERTURBATIONS))
    ap.add_argument("--loss-seeds", type=int, default=5,
                    help=f"seeds per random column ({', '.join(sorted(RANDOM))}); its cell is their mean")
    ap.add_argument("--seed-setup", action="store_true",
                    help="paths unmeasured before the transfer and no path exclusion (as in Pieska et al. 2024)")
    ap.add_argument("--set", action="append", default=[], help="an override for every run")
    ap.add_argument("--csv", default="out/never_slower.csv", help="where every cell is written")
    ap.add_argument("--top", type=int, default=15, help="rows per ranking")
    ap.add_argument("--from-csv", help="report a CSV this script wrote earlier instead of running")
    args = ap.parse_args()
    scheds = names(args.scheduler, SCHEDULERS, "scheduler")
    ccs = names(args.tunnel_cc, TUNNEL_CCS, "tunnel-cc")
    rels = names(args.reliability, RELIABILITIES, "reliability")
    recvs = names(args.receiver, RECEIVERS, "receiver")
    if args.loss_seeds < 1:
        raise SystemExit(f"--loss-seeds: must be at least 1, found {args.loss_seeds}")
    common = [f"e2e.bytes={args.bytes}"] + ([] if args.seed_setup else MEASURED) + args.set

    combos = [(s, c, r, v) for s in scheds for c in ccs for r in rels for v in recvs]
    if args.from_csv:
        with open(args.from_csv, newline="") as f:
            rows = list(csv.DictReader(f))
        runs = {}
        for r in rows:
            key = (r["e2e_cc"], r["scheduler"], r["tunnel_cc"], r["reliability"], r.get("receiver", "adaptive"),
                   r["scenario"])
            runs.setdefault(key, []).append(float(r["relative_dlct"]) if r["relative_dlct"] else None)
        results = {key: average(vals) for key, vals in runs.items()}
        combos = [c for c in combos if all((e, *c, k) in results for e in E2E_CCS for k in KEYS + EXTRA_KEYS)]
        print(f"{len(rows)} runs read from {args.from_csv} (set-up: {rows[0]['setup'] if rows else 'none'})")
        report(combos, results, args.top)
        return
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for e2e in E2E_CCS:
            for s, c, r, v in combos:
                for k, column in COLUMNS:
                    if k in RANDOM:
                        variants = [(f"seed={n}", [f"seed={n}"]) for n in range(1, args.loss_seeds + 1)]
                    else:
                        variants = [("base", [])]
                        if args.perturb:
                            variants += [(p[0], p) for p in PERTURBATIONS]
                    for variant, extra in variants:
                        sets = [f"e2e.cc={e2e}", f"tunnel.scheduler={s}", f"tunnel.cc={c}",
                                f"tunnel.reliability={r}", f"tunnel.reorder={v}", *extra, *column, *common]
                        jobs[(e2e, s, c, r, v, k, variant)] = pool.submit(cell, sets)
    runs = {}
    for key, f in jobs.items():
        runs.setdefault(key[:-1], []).append(f.result()[0])
    results = {key: average(vals) for key, vals in runs.items()}

    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    with open(args.csv + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["e2e_cc", "scheduler", "tunnel_cc", "reliability", "receiver", "scenario", "variant",
                    "relative_dlct", "dlct_s", "setup"])
        setup = "seed" if args.seed_setup else "measured+exclusion"
        for key, fut in jobs.items():
            rel, dlct = fut.result()
            w.writerow([*key, "" if rel is None else f"{rel:.4f}", "" if dlct is None else f"{dlct:.3f}", setup])
    os.replace(args.csv + ".tmp", args.csv)

    print(f"{len(jobs)} runs, {args.bytes} bytes each, {args.loss_seeds} seeds for {', '.join(sorted(RANDOM))}"
          + (f", {len(PERTURBATIONS)} perturbations of every other cell" if args.perturb else "") + "; set-up: "
          + ("as in Pieska et al. 2024 (unmeasured paths, no exclusion)" if args.seed_setup else "paths measured, exclusion at 100 ms")
          + f"; every cell in {args.csv}")
    report(combos, results, args.top)


if __name__ == "__main__":
    main()
