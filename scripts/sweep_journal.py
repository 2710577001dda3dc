"""A `braid sweep --out` folder read without a Parquet reader: the spec the folder keeps and its
journal (`runs.jsonl`), grouped by cell, and the statistics the tables quote. Shared by the
scripts that turn sweeps into the tables of docs/validation.md.
"""
import itertools
import json
import statistics
import tomllib
from pathlib import Path

# Two-sided 95% Student's t quantiles by degrees of freedom (1..30).
T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
       2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060,
       2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    """t(0.975, df): the table up to 30 degrees of freedom, above it the Cornish-Fisher
    expansion around the normal quantile, as `braid reproduce` computes it
    (crates/braid-reproduce/src/stats.rs), so that pooled cells of many runs agree with its
    tables instead of keeping the 30-degree value."""
    if df <= len(T95):
        return T95[df - 1]
    z = 1.959964
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df * df)


def ci95(values):
    """Half-width of the 95% confidence interval of the mean; 0 for fewer than two values."""
    n = len(values)
    if n < 2:
        return 0.0
    return t975(n - 1) * statistics.stdev(values) / n ** 0.5


def mean_ci_range(values, fmt="{:.1f}"):
    """`mean ± 95% half-width (min-max)` of the values, each number formatted by fmt; `-` when
    there are none."""
    if not values:
        return "-"
    f = fmt.format
    return (f"{f(statistics.mean(values))} ± {f(ci95(values))} "
            f"({f(min(values))}-{f(max(values))})")


def cells(spec):
    """Each cell's {axis: value or label}, in run order (last axis fastest)."""
    names, values = [], []
    for name, vals in spec.get("axes", {}).items():
        names.append(name)
        values.append([v["label"] if isinstance(v, dict) else v for v in vals])
    for combo in itertools.product(*values):
        yield dict(zip(names, combo))


def cell_runs(folder):
    """The spec, and per cell (in run order) its axes and its runs' journal lines (`run`, `rep`,
    `seed`, `status`, `error`, `report`, ...) in repetition order, failed runs included; a run
    the journal does not have yet is left out."""
    spec = tomllib.loads(Path(folder, "spec.toml").read_text())
    reps = spec.get("reps", 1)
    rows = [json.loads(l) for l in Path(folder, "runs.jsonl").read_text().splitlines() if l.strip()]
    by_run = {r["run"]: r for r in rows}
    out = []
    for c, cell in enumerate(cells(spec)):
        out.append((cell, [by_run[c * reps + r] for r in range(reps) if c * reps + r in by_run]))
    return spec, out


def cell_reports(folder):
    """The spec, and per cell (in run order) its axes and the reports of its successful runs."""
    spec, groups = cell_runs(folder)
    return spec, [(cell, [r["report"] for r in runs if r.get("status") == "ok"]) for cell, runs in groups]


def entry(spec, axis, label):
    """The entry of table axis `axis` whose label is `label` (its overrides and label)."""
    return next(e for e in spec["axes"][axis] if e["label"] == label)

