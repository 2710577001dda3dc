#!/usr/bin/env python3
"""Never slower than the best single path: every scheduler x tunnel CC x reliability x receiver,
ranked. The tables of docs/validation.md, "Every scheduler, tunnel CC, reliability and receiver"
and "Waiting for the paths' repairs".

    braid sweep sweeps/never-slower.toml --out out/never-slower
    python3 scripts/never_slower.py out/never-slower
    braid sweep sweeps/never-slower-receivers.toml --out out/never-slower-receivers
    python3 scripts/never_slower.py out/never-slower out/never-slower-receivers --csv out/never_slower.csv
    braid sweep sweeps/never-slower-shortlist.toml --out out/never-slower-shortlist
    python3 scripts/never_slower.py out/never-slower-shortlist --runs
    braid sweep sweeps/never-slower-repair-wait.toml --out out/never-slower-repair-wait
    python3 scripts/never_slower.py out/never-slower-repair-wait

A combination is a tunnel scheduler, tunnel CC, reliability and receiver wait limit
(`tunnel.reorder`), read from the spec's axes or its `[set]` (Table 1's value when neither
gives it); every other axis (the short list's `repair_wait`), and any `[set]` key on which the
folders given differ, is one more dimension. Each is run for every end-to-end CC (the `e2e.cc`
axis: Cubic and BBR) over the columns of the spec's `column` axis: the Table 2 scenario keys of
Pieska et al. 2024 (SHORT, LONG, their NEAR/DIST pairings, BUF250, BUF1000, CDL1, ASYM0/40/200;
the default scenario is SHORT) and, beyond Table 2, RATE2/2, RATE2/5 (path 2 at half and a fifth
of path 1's rate), ASYM80 (path 2 80 ms longer) and LOSS2 (path 2 with 1% random loss). Path 1
alone is the best single path in every column, so a run's relative DLCT (its download time over
the same download over path 1 alone, with the same seed and noise) above 100% is a run slower
than the best single path. A cell is an end-to-end CC, a combination and a column; its value
is the mean over its repetitions (seeds under the noise model, which replace the perturbed runs
and LOSS2 seeds the script once made itself).

**Never slower** over a set of columns: in every one of them, for every end-to-end CC, the
cell's mean is at or below 100% and none of its runs is above `--run-limit` (105%). The mean
keeps one unlucky seed from failing a combination; the run limit keeps a cell with a mode well
above 100% (a bimodal cell whose mean happens to land below it) from passing. A failed run (an
incomplete transfer) fails its cell and is worse than any number. No combination is never
slower in ASYM200, where path exclusion leaves path 1 alone and the tunnel costs its headers,
so the main ranking is over every column but ASYM200.

The console gets, in Markdown: the combinations with the lowest worst cell over the Table 2
columns and the cells that fail the rule; the combinations never slower outside ASYM200, by
the mean of all their cells (both end-to-end CCs, every column), with each one's worst cell
mean per end-to-end CC over the Table 2 columns but ASYM200, in ASYM200 and beyond Table 2, the
mean of all its cells and its worst run over the Table 2 columns but ASYM200; and the best
combination for each value of one dimension. `--runs` gives instead one row per
combination with its runs outside ASYM200: how many are above 100%, the worst, their mean, and
each run of LOSS2 by seed (`--seeds`). `--cells` lists every cell: mean ± 95% confidence
half-width (Student's t), range, runs above 100%. `--scheduler`, `--tunnel-cc`,
`--reliability` and `--receiver` keep only some combinations. `--csv` writes every run, one row
each, for pandas.

Several folders are read as one (the adaptive and the static wait limit are two sweeps; a big
sweep split by end-to-end CC or by `--shard` is several); a cell two folders both have is taken
from the first. A combination missing a cell, or a cell missing runs (a sweep still running), is
left out of the rankings and counted. Reads the journals (`runs.jsonl`) and the specs the
folders keep, so it needs no Parquet reader.
"""
import argparse
import csv
import os
import statistics

from nested_cc_matrix import SCENARIOS
from sweep_journal import cell_runs, entry, mean_ci_range

# The combination's dimensions: (heading, scenario key), and Table 1's values (scenarios/default.toml).
DIMS = [("scheduler", "tunnel.scheduler"), ("tunnel CC", "tunnel.cc"),
        ("reliability", "tunnel.reliability"), ("receiver", "tunnel.reorder")]
DEFAULTS = {"e2e.cc": "cubic", "tunnel.scheduler": "cpf", "tunnel.cc": "bbr",
            "tunnel.reliability": "unreliable", "tunnel.reorder": "adaptive"}
# The Table 2 columns (the default scenario is Table 1, which is SHORT: one column for both).
TABLE2 = [k for k in SCENARIOS if k]
# The one column where a path is excluded: its floor is one path plus the tunnel's headers.
EXCLUDED = "ASYM200"
E2E_NAMES = {"cubic": "Cubic", "bbr": "BBR", "newreno": "NewReno"}
INF = float("inf")


def flat(d, prefix=""):
    """A TOML table as {dotted key: value} (an unquoted `e2e.cc = ...` is a nested table)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def text(v):
    return f"{v:g}" if isinstance(v, float) else str(v).lower() if isinstance(v, bool) else str(v)


class Cell:
    """One end-to-end CC x combination x column: its journal lines and what they say."""

    def __init__(self, folder, reps, runs):
        self.folder, self.reps, self.runs = folder, reps, runs
        self.values = [100 * r["report"]["relative_dlct"] for r in runs if ok(r)]
        self.failed = len(runs) - len(self.values)
        self.complete = len(runs) >= reps
        self.mean = INF if self.failed or not self.values else statistics.mean(self.values)
        self.max = INF if self.failed or not self.values else max(self.values)

    def passes(self, limit):
        return self.mean <= 100 and self.max <= limit


def ok(run):
    return (run.get("status") == "ok" and run.get("report") is not None
            and run["report"].get("relative_dlct") is not None)


def slim(run):
    """A journal line with only what the tables and the CSV use: a full report is about 9 kB in
    Python, and two folders of the main sweep hold 55 296 of them."""
    rep = run.get("report") or {}
    keep = {k: rep[k] for k in ("relative_dlct", "dlct_s", "baseline_dlct_s") if k in rep}
    keep["paths"] = [{"share": p.get("share")} for p in rep.get("paths") or []]
    keep["e2e"] = {"retransmissions": (rep.get("e2e") or {}).get("retransmissions")}
    return {**{k: run.get(k) for k in ("run", "rep", "seed", "status", "error")},
            "report": keep if run.get("report") is not None else None}


def load(folders):
    """{(e2e CC, combination, column): Cell}, the dimensions' headings, and notes on the folders."""
    loaded = []
    for f in folders:
        spec, groups = cell_runs(f)
        loaded.append((f, spec, [(cell, [slim(r) for r in runs]) for cell, runs in groups]))
    sets = [flat(spec.get("set", {})) for _, spec, _ in loaded]
    known = {"e2e.cc", *(k for _, k in DIMS)}
    # [set] keys the folders disagree on, then the other axes: more dimensions.
    extra = sorted({k for s in sets for k in s
                    if k not in known and any(t.get(k) != s.get(k) for t in sets)})
    for _, spec, _ in loaded:
        for name, vals in spec.get("axes", {}).items():
            if name in known or name == "column" or name in extra:
                continue
            if isinstance(vals[0], dict):
                keys = {k for v in vals for k in flat(v) if k != "label"}
                if keys and keys <= known:
                    continue
            extra.append(name)
    cells, notes = {}, []
    for (folder, spec, groups), s in zip(loaded, sets):
        axes = spec.get("axes", {})
        if "column" not in axes:
            raise SystemExit(f"{folder}: the spec has no `column` axis (sweeps/never-slower.toml has one)")
        if not spec.get("baseline"):
            raise SystemExit(f"{folder}: the spec needs `baseline = true` (relative_dlct)")
        dup = 0
        for cell, runs in groups:
            o = dict(s)
            for name, vals in axes.items():
                if isinstance(vals[0], dict):
                    o.update({k: v for k, v in flat(entry(spec, name, cell[name])).items() if k != "label"})
                else:
                    o[name] = cell[name]
            combo = (tuple(text(o.get(k, DEFAULTS[k])) for _, k in DIMS)
                     + tuple(text(cell.get(n, o.get(n, "-"))) for n in extra))
            key = (text(o.get("e2e.cc", DEFAULTS["e2e.cc"])), combo, cell["column"])
            if key in cells:
                dup += 1
                continue
            cells[key] = Cell(folder, spec.get("reps", 1), runs)
        n = sum(len(r) for _, r in groups)
        setup = ", ".join(f"{k}={text(v)}" for k, v in s.items())
        notes.append(f"{folder}: {n} runs, {spec.get('reps', 1)} per cell; {setup}"
                     + (f"; {dup} cells already read from an earlier folder" if dup else ""))
    return cells, [h for h, _ in DIMS] + extra, notes


def choose(combos, index, text_, what):
    """Keep the combinations whose dimension `index` is one of the comma-separated `text_`."""
    if not text_:
        return combos
    present = list(dict.fromkeys(c[index] for c in combos))
    chosen = text_.split(",")
    unknown = [c for c in chosen if c not in present]
    if unknown:
        raise SystemExit(f"--{what}: {unknown} not in the folders; they have {', '.join(present)}")
    return [c for c in combos if c[index] in chosen]


def pct(v, unit=""):
    return "fail" if v == INF else f"{v:.0f}{unit}"


class Table:
    def __init__(self, cells, e2es, columns, limit):
        self.cells, self.e2es, self.limit = cells, e2es, limit
        self.table2 = [c for c in columns if c in TABLE2]
        self.rest = [c for c in self.table2 if c != EXCLUDED]
        self.excluded = [EXCLUDED] if EXCLUDED in columns else []
        self.beyond = [c for c in columns if c not in TABLE2]
        self.columns = columns

    def of(self, combo, cols, e2es=None):
        return [self.cells[(e, combo, k)] for e in (e2es or self.e2es) for k in cols]

    def worst(self, combo, cols, e2es=None):
        return max((c.mean for c in self.of(combo, cols, e2es)), default=INF)

    def worst_run(self, combo, cols):
        return max((c.max for c in self.of(combo, cols)), default=INF)

    def mean(self, combo):
        means = [c.mean for c in self.of(combo, self.columns)]
        return INF if INF in means else statistics.mean(means)

    def passes(self, combo, cols):
        return all(c.passes(self.limit) for c in self.of(combo, cols))

    def failing(self, combo, cols):
        bad = []
        for e in self.e2es:
            for k in cols:
                c = self.cells[(e, combo, k)]
                if c.mean > 100:
                    bad.append(f"{e} {k}" + (" (failed)" if c.mean == INF else ""))
                elif c.max > self.limit:
                    bad.append(f"{e} {k} (a run at {c.max:.0f})")
        return ", ".join(bad) or "none"

    def head(self, dims):
        h = list(dims) + [f"{E2E_NAMES.get(e, e)}: worst without {EXCLUDED}" for e in self.e2es]
        h += [f"{EXCLUDED} (worst)"] if self.excluded else []
        h += ["beyond Table 2 (worst)"] if self.beyond else []
        h += ["mean of all cells", f"worst run without {EXCLUDED}"]
        return "| " + " | ".join(h) + " |\n|" + "---|" * len(h)

    def row(self, combo):
        cells = [pct(self.worst(combo, self.rest, [e])) for e in self.e2es]
        if self.excluded:
            cells.append(pct(self.worst(combo, self.excluded)))
        if self.beyond:
            cells.append(pct(self.worst(combo, self.beyond)))
        cells += [pct(self.mean(combo)), pct(self.worst_run(combo, self.rest))]
        return "| " + " | ".join(list(combo) + cells) + " |"


def rankings(t, combos, dims, top):
    n = len(combos)
    every = [c for c in combos if t.passes(c, t.table2)]
    print(f"\nNever slower in every Table 2 column, {' and '.join(t.e2es)} end to end: {len(every)} of {n} "
          f"combinations. Lowest worst cell means over the Table 2 columns:\n")
    print("| " + " | ".join(dims) + " | worst | cells failing the rule |\n|" + "---|" * (len(dims) + 2))
    for c in sorted(combos, key=lambda c: (t.worst(c, t.table2), t.mean(c)))[:top]:
        print(f"| {' | '.join(c)} | {pct(t.worst(c, t.table2))} | {t.failing(c, t.table2)} |")

    good = [c for c in combos if t.passes(c, t.rest)]
    both = [c for c in good if t.passes(c, t.beyond)]
    print(f"\n### Never slower in every Table 2 column but {EXCLUDED}, {' and '.join(t.e2es)} end to end\n")
    print(f"{len(good)} of {n} combinations; {len(both)} of them also beyond Table 2 "
          f"({', '.join(t.beyond) or 'no such columns'}). Sorted by the mean of all their cells "
          f"(every end-to-end CC, every column); the worst columns are cell means.\n")
    print(t.head(dims))
    for c in sorted(good, key=t.mean)[:top]:
        print(t.row(c))

    varied = [(i, label) for i, label in enumerate(dims) if len({c[i] for c in combos}) > 1]
    if varied:
        print("\n### The best combination for each value of one dimension (by the mean of all cells)")
    for index, label in varied:
        print(f"\nFor each {label}:\n\n{t.head(dims)}")
        for v in dict.fromkeys(c[index] for c in combos):
            print(t.row(min((c for c in combos if c[index] == v), key=t.mean)))


def runs_table(t, combos, dims, seeds):
    """One row per combination: its runs outside ASYM200, and the runs of column `seeds` by seed."""
    cols = t.rest + t.beyond
    seeded = [e for e in t.e2es if seeds in t.columns]
    rows = []
    for c in combos:
        runs = [r for cell in t.of(c, cols) for r in cell.runs]
        vals = [100 * r["report"]["relative_dlct"] for r in runs if ok(r)]
        failed = len(runs) - len(vals)
        above = failed + sum(v > 100 for v in vals)
        worst = INF if failed else max(vals, default=INF)
        mean = statistics.mean(vals) if vals else INF
        by_seed = []
        for e in seeded:
            cell = t.cells[(e, c, seeds)]
            by_seed.append(" ".join(f"{100 * r['report']['relative_dlct']:.0f}" if ok(r) else "fail"
                                    for r in sorted(cell.runs, key=lambda r: r.get("seed", 0))))
        rows.append(((above, worst, mean), c, len(runs), above, worst, mean, by_seed))
    heading = list(dims) + ["runs above 100%", "worst run", "mean", "never slower"]
    for e in seeded:
        s = sorted(r.get("seed", 0) for r in t.cells[(e, combos[0], seeds)].runs)
        heading.append(f"{seeds} under {E2E_NAMES.get(e, e)}, seeds {s[0]}-{s[-1]}" if s else seeds)
    print(f"\nRuns outside {EXCLUDED}; never slower: the rule above, over the same columns.\n")
    print("| " + " | ".join(heading) + " |\n|" + "---|" * len(heading))
    for _, c, n, above, worst, mean, by_seed in sorted(rows, key=lambda r: r[0]):
        verdict = "yes" if t.passes(c, cols) else "no"
        print("| " + " | ".join([*c, f"{above} (of {n})", pct(worst, "%"), pct(mean, "%"), verdict, *by_seed]) + " |")


def cells_table(t, combos, dims):
    print("| e2e | " + " | ".join(dims) + " | column | runs | rel. DLCT % mean ± 95% (range) | runs > 100% | failed |")
    print("|" + "---|" * (len(dims) + 6))
    for c in combos:
        for e in t.e2es:
            for k in t.columns:
                cell = t.cells[(e, c, k)]
                print(f"| {e} | {' | '.join(c)} | {k} | {len(cell.runs)} | {mean_ci_range(cell.values)} "
                      f"| {sum(v > 100 for v in cell.values)} | {cell.failed} |")


def write_csv(path, cells, dims):
    """One row per run, failed runs too (empty numbers), for pandas."""
    names = [d.replace(" ", "_").lower() for d in dims]
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["e2e_cc", *names, "scenario", "rep", "seed", "status", "relative_dlct", "dlct_s",
                    "baseline_dlct_s", "path1_share", "path2_share", "e2e_retransmissions", "folder",
                    "run", "error"])
        for (e, combo, k), cell in cells.items():
            for r in cell.runs:
                rep = r.get("report") or {}
                paths = rep.get("paths") or []
                share = [p.get("share", "") for p in paths[:2]] + [""] * (2 - len(paths[:2]))
                w.writerow([e, *combo, k, r.get("rep"), r.get("seed"), r.get("status"),
                            rep.get("relative_dlct", ""), rep.get("dlct_s", ""), rep.get("baseline_dlct_s", ""),
                            *share, (rep.get("e2e") or {}).get("retransmissions", ""), cell.folder,
                            r.get("run"), r.get("error") or ""])
    os.replace(path + ".tmp", path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="folders written by braid sweep --out, read as one")
    ap.add_argument("--run-limit", type=float, default=105.0,
                    help="never slower: no run of a cell above this relative DLCT, in %% (105)")
    ap.add_argument("--top", type=int, default=15, help="rows per ranking (15)")
    ap.add_argument("--runs", action="store_true", help="one row per combination with its runs outside ASYM200")
    ap.add_argument("--seeds", default="LOSS2", help="the column whose runs --runs lists by seed (LOSS2; '' for none)")
    ap.add_argument("--cells", action="store_true", help="one line per cell, with its interval")
    ap.add_argument("--csv", help="write every run to this CSV, one row each")
    for (label, key), opt in zip(DIMS, ["scheduler", "tunnel-cc", "reliability", "receiver"]):
        ap.add_argument(f"--{opt}", help=f"comma-separated {key} values to keep")
    args = ap.parse_args()

    cells, dims, notes = load(args.dirs)
    if args.csv:
        write_csv(args.csv, cells, dims)
    e2es = list(dict.fromkeys(e for e, _, _ in cells))
    columns = list(dict.fromkeys(k for _, _, k in cells))
    combos = list(dict.fromkeys(c for _, c, _ in cells))
    complete = [c for c in combos
                if all((e, c, k) in cells and cells[(e, c, k)].complete for e in e2es for k in columns)]
    for index, opt in enumerate(["scheduler", "tunnel_cc", "reliability", "receiver"]):
        complete = choose(complete, index, getattr(args, opt), opt.replace("_", "-"))
    runs = sum(len(c.runs) for c in cells.values())
    failed = sum(c.failed for c in cells.values())
    print("\n".join(notes))
    print(f"{runs} runs ({failed} failed) in {len(cells)} cells: {len(combos)} combinations x "
          f"{len(e2es)} end-to-end CCs ({', '.join(e2es)}) x {len(columns)} columns"
          + (f"; {len(combos) - len(complete)} combinations left out (a cell missing runs, or filtered)"
             if len(complete) < len(combos) else "")
          + (f"; every run in {args.csv}" if args.csv else ""))
    print(f"Never slower: every cell's mean at or below 100% and no run above {args.run_limit:g}%.")
    if not complete:
        return
    t = Table(cells, e2es, columns, args.run_limit)
    if args.cells:
        cells_table(t, complete, dims)
    elif args.runs:
        runs_table(t, complete, dims, args.seeds)
    else:
        rankings(t, complete, dims, args.top)


if __name__ == "__main__":
    main()
