"""A `braid sweep --out` folder read without a Parquet reader: the spec the folder keeps and its
journal (`runs.jsonl`), grouped by cell. Shared by the scripts that turn sweeps into the tables
of docs/validation.md.
"""
import itertools
import json
import tomllib
from pathlib import Path


def cells(spec):
    """Each cell's {axis: value or label}, in run order (last axis fastest)."""
    names, values = [], []
    for name, vals in spec.get("axes", {}).items():
        names.append(name)
        values.append([v["label"] if isinstance(v, dict) else v for v in vals])
    for combo in itertools.product(*values):
        yield dict(zip(names, combo))


def cell_reports(folder):
    """The spec, and per cell (in run order) its axes and the reports of its successful runs."""
    spec = tomllib.loads(Path(folder, "spec.toml").read_text())
    reps = spec.get("reps", 1)
    rows = [json.loads(l) for l in Path(folder, "runs.jsonl").read_text().splitlines() if l.strip()]
    by_run = {r["run"]: r for r in rows}
    out = []
    for c, cell in enumerate(cells(spec)):
        runs = [by_run.get(c * reps + r, {}) for r in range(reps)]
        out.append((cell, [r["report"] for r in runs if r.get("status") == "ok"]))
    return spec, out
