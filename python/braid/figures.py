"""Figures of Braid's reproductions: Pieska et al. 2024 (nested congestion control), Pieska et
al. 2021 (ACPF) and Lee et al. 2023 (Coupled CUBIC).

Plotting functions take pandas DataFrames and return a matplotlib Figure, so any sweep of
your own redraws with one call and restyles like any matplotlib figure:

    from braid import figures
    df = figures.load_sweep("out/nested/matrix")           # runs.parquet
    fig = figures.bars_relative_dlct(df)                    # mean, SD error bars
    fig.savefig("relative_dlct.png")

- `bars_relative_dlct`: relative DLCT per combination and scheduler (the paper's Figure 2);
  `bars_relative_dlct_by_scenario`: per scenario and combination (Figure 10).
- `throughput_over_time`: per-path tunnel throughput and E2E goodput (Figures 4, 8a, 9a).
- `contour`: a value over E2E RTT x tunnel share of it, with constant-tunnel-RTT arcs
  (Figures 5, 8b-c, 9c-d).
- `goodput_bars`: mean goodput per set and scheduler with 95% intervals (ACPF, Figure 5).
- `window_traces`: throughput, live cwnd per path and server cwnd over time (ACPF, Figure 4).
- `subflow_windows`: each subflow's congestion window over time (Coupled CUBIC, Figures 5, 6).
- `utilisation_bars`: per-subflow and total throughput per tunnel CC (Coupled CUBIC, Figure 7).
- `load_sweep`, `load_series`, `load_traces`: the files `braid sweep` / `braid reproduce` /
  `braid sim --out` write.

The command line draws every figure it can from a `braid reproduce EXPERIMENT --out DIR`
folder into DIR/figures/ and writes DIR/index.html:

    python3 -m braid.figures nested-cc DIR
    python3 -m braid.figures acpf DIR
    python3 -m braid.figures coupled-cubic DIR
"""

import argparse
import html
import json
import math
import os
import re
import sys

import numpy as np
import pandas as pd
from matplotlib.colors import TwoSlopeNorm
from matplotlib.ticker import MaxNLocator

from . import style
from .style import plt

__all__ = [
    "load_sweep",
    "load_series",
    "load_traces",
    "wide_throughput",
    "wide_trace",
    "bars_relative_dlct",
    "bars_relative_dlct_by_scenario",
    "throughput_over_time",
    "contour",
    "contour_coordinates",
    "with_combination",
    "with_scenario",
    "goodput_bars",
    "window_traces",
    "subflow_windows",
    "utilisation_bars",
    "nested_cc",
    "acpf",
    "coupled_cubic",
    "main",
]

# How each value column is shown: axis label, factor from the table's unit, and whether a
# lower value is the better one (reverses the contour colours so blue stays "good").
VALUES = {
    "relative_dlct": ("DLCT relative to no tunnel (%)", 100.0, True),
    "goodput_mbps": ("Goodput (Mbit/s)", 1.0, False),
    "dlct_s": ("DLCT (s)", 1.0, True),
    "tunnel.acpf_fraction_mean": ("ACPF live / raw cwnd (%)", 100.0, False),
    "e2e.cwnd_bytes_mean": ("Server cwnd (kB)", 1e-3, False),
}

AXIS_NAMES = {
    "combination": "E2E CC / tunnel CC",
    "scenario": "Scenario (Table 2 keys)",
    "keys": "Scenario (Table 2 keys)",
    "tunnel.scheduler": "Scheduler",
    "e2e.cc": "E2E CC",
    "tunnel.cc": "Tunnel CC",
}


def _value_info(value):
    label, scale, lower_better = VALUES.get(value, (value, 1.0, False))
    return label, scale, lower_better


def _axis_name(column):
    return AXIS_NAMES.get(column, column)


def _display(column, v):
    """A category value as shown: schedulers upper-case, scenario "" as "default"."""
    if column == "tunnel.scheduler":
        return str(v).upper()
    if column in ("keys", "scenario") and (v is None or v == "" or (isinstance(v, float) and math.isnan(v))):
        return "default"
    return str(v)


# ---------------------------------------------------------------------------------------
# Loaders


def load_sweep(path):
    """The table of a sweep: `path` is a folder holding runs.parquet, or the file itself."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "runs.parquet")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no sweep table at {path}")
    return pd.read_parquet(path)


def _series_folders(path, filename):
    """[(label, folder)] of the runs holding `filename` at `path`: one `braid sim --out` folder
    (label = its name), or the subfolders of `path`/series (or of `path`), sorted by name."""
    path = os.fspath(path)
    if os.path.isfile(os.path.join(path, filename)):
        return [(os.path.basename(os.path.normpath(path)), path)]
    root = os.path.join(path, "series") if os.path.isdir(os.path.join(path, "series")) else path
    if not os.path.isdir(root):
        raise FileNotFoundError(f"no series folder at {path}")
    folders = [
        (name, os.path.join(root, name))
        for name in sorted(os.listdir(root))
        if os.path.isfile(os.path.join(root, name, filename))
    ]
    if not folders:
        raise FileNotFoundError(f"no {filename} under {path}")
    return folders


def load_series(path):
    """Throughput time series as one long DataFrame with a `label` column.

    `path` is a folder with series/<label>/throughput.csv, a folder of <label>/throughput.csv,
    or one `braid sim --out` folder (its throughput.csv; label = the folder's name). The
    columns are those of throughput.csv: `t_s`, `goodput_mbps`, one `<path name>_mbps` per
    path. Each label's summary.json, where present, is in `df.attrs["summary"][label]`.
    """
    folders = _series_folders(path, "throughput.csv")
    frames, summaries = [], {}
    for label, folder in folders:
        frame = pd.read_csv(os.path.join(folder, "throughput.csv"))
        frame.insert(0, "label", label)
        frames.append(frame)
        summary = os.path.join(folder, "summary.json")
        if os.path.isfile(summary):
            try:
                with open(summary) as f:
                    summaries[label] = json.load(f)
            except (OSError, ValueError):
                pass
    df = pd.concat(frames, ignore_index=True)
    df.attrs["summary"] = summaries
    return df


def load_traces(path):
    """The periodic traces (trace.csv: windows, in flight, queues, ACPF fraction per sample) as
    one long DataFrame with a `label` column, from the same folders as `load_series`."""
    folders = _series_folders(path, "trace.csv")
    frames = []
    for label, folder in folders:
        frame = pd.read_csv(os.path.join(folder, "trace.csv"))
        frame.insert(0, "label", label)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


# Per-path columns of `SimResult.series` and their names in the wide trace.csv.
_TRACE_PATH_COLUMNS = {
    "cwnd_bytes": "cwnd_bytes",
    "in_flight_bytes": "in_flight_bytes",
    "srtt_ms": "srtt_ms",
    "pacing_rate_mbps": "pacing_mbps",
    "queue_pkts": "queue_pkts",
    "phase": "phase",
    "drops": "drops",
}


def _path_names(df):
    """The `path` values of a long table, in path order."""
    if "path_index" in df.columns:
        return df.drop_duplicates("path_index").sort_values("path_index")["path"].tolist()
    return _ordered_unique(df["path"])


def wide_throughput(df):
    """A throughput table in throughput.csv's wide form (`t_s`, `goodput_mbps`, one
    `<path>_mbps` column per path, and `label` if it has one). `SimResult.throughput` (one row
    per bin and path) is pivoted; a wide table is returned as it is."""
    if "path" not in df.columns or "mbps" not in df.columns:
        return df
    keys = [c for c in ("label", "t_s") if c in df.columns]
    names = _path_names(df)
    wide = df.pivot(index=keys, columns="path", values="mbps")[names]
    wide.columns = [f"{n}_mbps" for n in names]
    wide.insert(0, "goodput_mbps", df.groupby(keys, sort=False)["goodput_mbps"].first())
    return wide.reset_index()


def wide_trace(df):
    """A trace in trace.csv's wide form (one row per sample, `<path>_cwnd_bytes` ... per path).
    `SimResult.series` (one row per sample and path) is pivoted; a wide trace is returned as
    it is."""
    if "path" not in df.columns or "cwnd_bytes" not in df.columns:
        return df
    keys = [c for c in ("label", "t_s") if c in df.columns]
    shared = [c for c in df.columns if c not in keys and c not in _TRACE_PATH_COLUMNS and c not in ("path", "path_index")]
    wide = df.groupby(keys, sort=False)[shared].first()
    for name in _path_names(df):
        rows = df[df["path"] == name].set_index(keys)
        for column, wide_name in _TRACE_PATH_COLUMNS.items():
            wide[f"{name}_{wide_name}"] = rows[column]
    return wide.reset_index()


# ---------------------------------------------------------------------------------------
# Shared preparation


def with_combination(df):
    """`df` with a `combination` column ("e2e/tunnel"), made from `e2e.cc` and `tunnel.cc`
    (plus a non-default `tunnel.reorder`) when the sweep has none."""
    if "combination" in df.columns:
        return df
    df = df.copy()
    if "e2e.cc" in df.columns and "tunnel.cc" in df.columns:
        combo = df["e2e.cc"].astype(str) + "/" + df["tunnel.cc"].astype(str)
        if "tunnel.reorder" in df.columns:
            reorder = df["tunnel.reorder"].astype(str)
            combo = combo.where(reorder.isin(["adaptive", "None", "nan"]), combo + " " + reorder)
        df["combination"] = combo
    elif "e2e.cc" in df.columns:
        df["combination"] = df["e2e.cc"].astype(str)
    elif "tunnel.cc" in df.columns:
        df["combination"] = "/" + df["tunnel.cc"].astype(str)
    else:
        df["combination"] = "all runs"
    return df


def with_scenario(df):
    """`df` with a `scenario` column: the `keys` axis, "" shown as "default"."""
    df = df.copy()
    if "keys" in df.columns:
        df["scenario"] = [_display("keys", v) for v in df["keys"]]
    elif "scenario" not in df.columns:
        df["scenario"] = "default"
    return df


def _usable(df, value):
    """Rows that ran (`status` ok, where the table has one) with a finite `value`."""
    if value not in df.columns:
        raise KeyError(f"no column {value!r} (columns: {', '.join(map(str, df.columns[:20]))} ...)")
    if "status" in df.columns:
        df = df[df["status"].astype(str) == "ok"]
    vals = pd.to_numeric(df[value], errors="coerce")
    df = df[np.isfinite(vals.to_numpy(dtype=float))].copy()
    df[value] = pd.to_numeric(df[value])
    return df


def _ordered_unique(series, order=None):
    seen = list(dict.fromkeys(series.tolist()))
    if order is None:
        return seen
    return [v for v in order if v in seen] + [v for v in seen if v not in order]


def _legend_above(fig, axes, handles, labels, own_axes):
    """One legend for the figure, above its panels (never over the data)."""
    if own_axes:  # the caller's Axes: keep to it
        axes[0].legend(handles, labels, loc="best")
        return
    fig.legend(handles, labels, loc="outside upper center", ncol=min(len(labels), 5))


def _grid(n, ncols, panel_w, panel_h, figsize=None, sharex=False, sharey=False):
    ncols = max(1, min(ncols, n))
    nrows = math.ceil(n / ncols)
    size = figsize or (panel_w * ncols, panel_h * nrows)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=size, squeeze=False, sharex=sharex, sharey=sharey, layout="constrained"
    )
    flat = list(axes.ravel())
    for extra in flat[n:]:
        extra.set_visible(False)
    return fig, flat[:n]


# ---------------------------------------------------------------------------------------
# Bars: Figures 2 and 10


def bars_relative_dlct(
    df,
    *,
    value="relative_dlct",
    group="combination",
    hue="tunnel.scheduler",
    panel=None,
    scenario="",
    sort=False,
    order=None,
    hue_order=None,
    reference_lines=True,
    modes=None,
    ncols=3,
    ax=None,
    title=None,
    figsize=None,
    rc=None,
):
    """Horizontal bars of `value` (mean over repetitions, standard-deviation error bars).

    One bar per (`group`, `hue`) value, optionally one panel per `panel` value. With the
    defaults: relative DLCT per E2E/tunnel CC combination, one bar per scheduler, as the
    paper's Figure 2. `group`, `hue` and `panel` name columns; "scenario" is the `keys`
    axis with "" shown as "default"; `combination` is made from `e2e.cc`/`tunnel.cc` when
    the sweep has no such column.

    scenario: with a `keys` column not used as group/hue/panel, keep only these keys (""
        = the default scenario); None pools every scenario. If no row has those keys, all
        rows are pooled.
    sort: order the groups by the mean of the first hue value (best first), as Table 3.
    order, hue_order: explicit category orders (others follow in table order).
    reference_lines: for relative DLCT, dashed lines at 50% (both paths fully used) and
        100% (no gain over one path).
    modes: a table with a `modes` column per cell, as table_scenarios.csv (`combination`,
        `scheduler`, `scenario`, `modes`): bars of cells with two or more modes are hatched,
        since their mean describes no run. Cells pooled over scenarios are not marked.
    ax: draw into this Axes (only without `panel`).
    rc: matplotlib rc overrides (see `braid.style`).
    """
    with style.context(rc):
        df = with_scenario(with_combination(_usable(df, value)))
        used = {group, hue, panel}
        shown = None  # the one scenario drawn, if rows were kept by `scenario`
        if scenario is not None and "keys" in df.columns and not used & {"keys", "scenario"}:
            wanted = df["keys"].fillna("").astype(str) == str(scenario)
            if wanted.any():
                df, shown = df[wanted], scenario
        if df.empty:
            raise ValueError(f"no usable rows with a {value!r} value")
        if hue is None or hue not in df.columns:
            df = df.assign(_hue="")
            hue = "_hue"
        for column in (group, panel):
            if column is not None and column not in df.columns:
                raise KeyError(f"no column {column!r}")
        label, scale, lower_better = _value_info(value)

        keys = [c for c in (panel, group, hue) if c is not None]
        marked = _multimodal(modes, keys, shown)
        stats = df.groupby(keys, sort=False, dropna=False)[value].agg(["mean", "std", "count"]).reset_index()
        stats["std"] = stats["std"].fillna(0.0)

        groups = _ordered_unique(stats[group], order)
        hues = _ordered_unique(stats[hue], hue_order)
        if sort:
            first = stats[stats[hue] == hues[0]].groupby(group, sort=False)["mean"].mean()
            rank = first.reindex(groups).fillna(np.inf if lower_better else -np.inf)
            groups = list(rank.sort_values(ascending=lower_better, kind="stable").index)
        panels = _ordered_unique(stats[panel]) if panel is not None else [None]

        bar_h = 0.8 / len(hues)
        panel_h = max(2.2, 0.22 * len(groups) * len(hues) + 1.2)
        if ax is not None:
            if len(panels) > 1:
                raise ValueError("ax= draws one panel; leave it out to draw one panel per value")
            fig, axes = ax.figure, [ax]
        else:
            fig, axes = _grid(len(panels), ncols, 5.2, panel_h, figsize, sharex=True)

        for a, p in zip(axes, panels):
            sub = stats if p is None else stats[stats[panel] == p]
            for j, h in enumerate(hues):
                rows = sub[sub[hue] == h].set_index(group).reindex(groups)
                ys = np.arange(len(groups)) - 0.4 + bar_h * (j + 0.5)
                bars = a.barh(
                    ys,
                    rows["mean"].to_numpy(dtype=float) * scale,
                    height=bar_h * 0.92,
                    xerr=rows["std"].to_numpy(dtype=float) * scale,
                    color=style.colour(j),
                    ecolor=style.ERRORBAR_COLOUR,
                    error_kw={"elinewidth": 1.0, "capsize": 2},
                    label=_display(hue, h) if hue != "_hue" else None,
                )
                for bar, g in zip(bars, groups):
                    if tuple(str(v) for v in (p, g, h)[3 - len(keys) :]) in marked:
                        bar.set_hatch("///")
                        bar.set_edgecolor("white")
            a.set_yticks(np.arange(len(groups)))
            a.set_yticklabels([_display(group, g) for g in groups])
            a.set_ylim(len(groups) - 0.5, -0.5)  # first group on top
            a.grid(axis="y", visible=False)
            if reference_lines and value == "relative_dlct":
                a.axvline(50, color="0.3", ls=":", lw=1, label="50%: both paths used")
                a.axvline(100, color="0.3", ls="--", lw=1, label="100%: no tunnel")
            a.set_xlabel(label)
            a.set_ylabel(_axis_name(group))
            a.tick_params(labelbottom=True)
            if p is not None:
                a.set_title(_display(panel, p))
        handles, labels = axes[0].get_legend_handles_labels()
        if marked:
            handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="0.6", edgecolor="white", hatch="///"))
            labels.append("two or more modes")
        if labels:
            _legend_above(fig, axes, handles, labels, ax is not None)
        if title:
            fig.suptitle(title)
        return fig


def _multimodal(modes, keys, scenario):
    """The (panel, group, hue) keys, as strings, of the `modes` table's cells with two or more
    modes; with `scenario` not a key, only that scenario's cells ("" = default; None = pooled,
    none marked)."""
    if modes is None or "modes" not in modes.columns:
        return set()
    m = modes.rename(columns={"scheduler": "tunnel.scheduler"})
    if "scenario" in m.columns and "scenario" not in keys:
        if scenario is None:
            return set()
        m = m[m["scenario"].astype(str) == _display("keys", scenario)]
    if any(k not in m.columns for k in keys if k != "_hue"):
        return set()
    m = m[pd.to_numeric(m["modes"], errors="coerce") > 1]
    cols = [m[k].astype(str) if k != "_hue" else pd.Series("", index=m.index) for k in keys]
    return set(zip(*cols)) if len(m) else set()


def bars_relative_dlct_by_scenario(df, *, arrange="combination", value="relative_dlct", **kwargs):
    """Figure 10: relative DLCT per scenario and combination, one bar per scheduler.

    arrange="combination": one panel per combination, a bar per scenario (Figure 10c-f);
    arrange="scenario": one panel per scenario, a bar per combination (Figure 10a-b).
    Other arguments go to `bars_relative_dlct`.
    """
    if arrange == "combination":
        kwargs.setdefault("panel", "combination")
        kwargs.setdefault("group", "scenario")
    elif arrange == "scenario":
        kwargs.setdefault("panel", "scenario")
        kwargs.setdefault("group", "combination")
    else:
        raise ValueError(f"arrange must be 'combination' or 'scenario', not {arrange!r}")
    kwargs.setdefault("scenario", None)
    return bars_relative_dlct(df, value=value, **kwargs)


# ---------------------------------------------------------------------------------------
# Throughput over time: Figures 4, 8a, 9a


def _path_columns(df):
    return [c for c in df.columns if c.endswith("_mbps") and c != "goodput_mbps"]


def throughput_over_time(
    series_df,
    *,
    labels=None,
    stacked=True,
    goodput=True,
    paths=None,
    titles=None,
    ax=None,
    figsize=None,
    rc=None,
):
    """Per-path tunnel throughput over time and the end-to-end goodput.

    `series_df` has `t_s`, `goodput_mbps` and one `<path>_mbps` column per path (a
    throughput.csv of `braid sim --out`), and optionally `label`: one panel per label, stacked
    vertically on a shared time axis (Figure 4 has four). stacked=True stacks the paths'
    areas (their sum is the tunnel's throughput); False draws one line per path.
    labels: which labels, in which order (default: all, in table order).
    paths: which path columns (default: every `*_mbps` column but goodput).
    titles: {label: panel title} (default: the label).
    """
    series_df = wide_throughput(series_df)
    with style.context(rc):
        if "t_s" not in series_df.columns:
            raise KeyError("no column 't_s'")
        if "label" in series_df.columns:
            panels = labels or _ordered_unique(series_df["label"])
        else:
            panels = [None]
        if ax is not None:
            if len(panels) > 1:
                raise ValueError("ax= draws one panel; pass labels=[one label]")
            fig, axes = ax.figure, [ax]
        else:
            fig, axes = _grid(len(panels), 1, 7.5, 2.3, figsize, sharex=True)
            if figsize is None:
                fig.set_size_inches(7.5, 1.0 + 2.1 * len(panels))
        names = {}
        for a, p in zip(axes, panels):
            sub = series_df if p is None else series_df[series_df["label"] == p]
            cols = paths or [c for c in _path_columns(sub) if sub[c].notna().any()]
            t = sub["t_s"].to_numpy(dtype=float)
            ys = [sub[c].fillna(0.0).to_numpy(dtype=float) for c in cols]
            labels_ = [f"path {i + 1} ({c[: -len('_mbps')]})" for i, c in enumerate(cols)]
            colours = [style.path_colour(i) for i in range(len(cols))]
            if stacked and cols:
                a.stackplot(t, *ys, labels=labels_, colors=colours, alpha=0.85, linewidth=0)
            else:
                for y, lab, col in zip(ys, labels_, colours):
                    a.plot(t, y, color=col, lw=1.2, label=lab)
            if goodput and "goodput_mbps" in sub.columns:
                a.plot(t, sub["goodput_mbps"].to_numpy(dtype=float), color=style.GOODPUT_COLOUR, lw=1.0,
                       ls="--", label="E2E goodput")
            a.set_ylabel("Throughput (Mbit/s)")
            a.set_ylim(bottom=0)
            if len(t):
                a.set_xlim(t.min(), t.max())
            if p is not None:
                a.set_title((titles or {}).get(p, str(p)), loc="left")
            for h, lab in zip(*a.get_legend_handles_labels()):
                names.setdefault(lab, h)
        axes[-1].set_xlabel("Time (s)")
        if names:
            _legend_above(fig, axes, list(names.values()), list(names.keys()), ax is not None)
        return fig


# ---------------------------------------------------------------------------------------
# Contours: Figures 5, 8b-c, 9c-d


def contour_coordinates(df):
    """`df` with `e2e_rtt_ms` and `tunnel_share_pct` (0-100), from the columns `e2e_rtt_ms`
    and `tunnel_share` (0-1), or from the overrides `server_link.rtt_ms` and
    `paths.0.rtt_ms` (tunnel RTT = path 1's; E2E RTT = server link + tunnel)."""
    df = df.copy()
    cols = df.columns
    if "e2e_rtt_ms" in cols and "tunnel_share" in cols:
        e2e = pd.to_numeric(df["e2e_rtt_ms"], errors="coerce")
        share = pd.to_numeric(df["tunnel_share"], errors="coerce")
    elif "server_link.rtt_ms" in cols and "paths.0.rtt_ms" in cols:
        tunnel = pd.to_numeric(df["paths.0.rtt_ms"], errors="coerce")
        e2e = pd.to_numeric(df["server_link.rtt_ms"], errors="coerce") + tunnel
        share = tunnel / e2e
    elif "e2e_rtt_ms" in cols and "paths.0.rtt_ms" in cols:
        e2e = pd.to_numeric(df["e2e_rtt_ms"], errors="coerce")
        share = pd.to_numeric(df["paths.0.rtt_ms"], errors="coerce") / e2e
    else:
        raise KeyError("contour needs e2e_rtt_ms and tunnel_share, or server_link.rtt_ms and paths.0.rtt_ms")
    if share.max(skipna=True) > 1.0 + 1e-9:  # given in percent already
        share = share / 100.0
    df["e2e_rtt_ms"] = e2e
    df["tunnel_share_pct"] = share * 100.0
    return df


def _facets(df, by):
    by = [c for c in (by or ()) if c in df.columns]
    if not by:
        return [((), df)]
    return [(k if isinstance(k, tuple) else (k,), g) for k, g in df.groupby(by, sort=False, dropna=False)]


def contour(
    df,
    value="goodput_mbps",
    *,
    arcs=(10, 20, 40),
    by=("combination", "tunnel.scheduler"),
    points=True,
    levels=11,
    vmin=None,
    vmax=None,
    cmap=None,
    center="auto",
    ncols=3,
    ax=None,
    title=None,
    figsize=None,
    rc=None,
):
    """Filled contours of `value` over E2E RTT (x, ms) and the tunnel's share of it (y, %).

    Each point (repetitions averaged) is a run; tricontourf interpolates between the
    scattered points, which are marked lightly (points=False hides them). `arcs` are tunnel
    RTTs in ms: each draws the curve where share x E2E RTT = that tunnel RTT (dashed, with
    its value). One panel per value of the `by` columns present (combination, scheduler),
    on one colour scale. Blue is good: high goodput, low relative DLCT. center: the value
    drawn white ("auto": 100% for relative DLCT, no gain over one path; else the middle of the
    range; None: the middle). If a panel's points
    cannot be triangulated (fewer than 3, or on one line) they are drawn as coloured dots.
    """
    with style.context(rc):
        label, scale, lower_better = _value_info(value)
        df = contour_coordinates(with_combination(_usable(df, value)))
        df = df[np.isfinite(df["e2e_rtt_ms"]) & np.isfinite(df["tunnel_share_pct"])]
        if df.empty:
            raise ValueError(f"no usable rows with a {value!r} value")
        by = [c for c in (by or ()) if c in df.columns]
        if "point" in df.columns:
            df["_point"] = df["point"].astype(str)
        else:  # no point axis: a point is its coordinates
            df["_point"] = df["e2e_rtt_ms"].round(6).astype(str) + "/" + df["tunnel_share_pct"].round(6).astype(str)
        agg = df.groupby(by + ["_point"], sort=False, dropna=False).agg(
            e2e_rtt_ms=("e2e_rtt_ms", "mean"), tunnel_share_pct=("tunnel_share_pct", "mean"), z=(value, "mean")
        ).reset_index()
        agg["z"] = agg["z"] * scale
        facets = _facets(agg, by)
        lo = float(agg["z"].min()) if vmin is None else vmin
        hi = float(agg["z"].max()) if vmax is None else vmax
        if hi <= lo:
            hi = lo + 1.0
        if isinstance(levels, int):
            bounds = MaxNLocator(levels, steps=[1, 2, 2.5, 5, 10]).tick_values(lo, hi)
        else:
            bounds = np.asarray(levels, dtype=float)
        cmap = cmap or (style.CONTOUR_CMAP + "_r" if lower_better else style.CONTOUR_CMAP)
        if center == "auto":
            center = 100.0 if value == "relative_dlct" else None
        norm = None
        if center is not None and bounds[0] < center < bounds[-1]:
            norm = TwoSlopeNorm(vcenter=center, vmin=bounds[0], vmax=bounds[-1])
        xmax = max(float(agg["e2e_rtt_ms"].max()), 1.0)

        if ax is not None:
            if len(facets) > 1:
                raise ValueError("ax= draws one panel; filter the table to one combination and scheduler")
            fig, axes = ax.figure, [ax]
        else:
            fig, axes = _grid(len(facets), ncols, 4.4, 3.6, figsize, sharex=True, sharey=True)
        mappable = None
        for a, (keyvals, g) in zip(axes, facets):
            x = g["e2e_rtt_ms"].to_numpy(dtype=float)
            y = g["tunnel_share_pct"].to_numpy(dtype=float)
            z = g["z"].to_numpy(dtype=float)
            drawn = None
            if len(x) >= 3:
                try:
                    drawn = a.tricontourf(x, y, z, levels=bounds, cmap=cmap, norm=norm, extend="both")
                except (ValueError, RuntimeError):
                    drawn = None
            if drawn is None:
                limits = {} if norm is not None else {"vmin": bounds[0], "vmax": bounds[-1]}
                drawn = a.scatter(x, y, c=z, cmap=cmap, norm=norm, s=40, edgecolors="0.3", **limits)
            elif points:
                a.scatter(x, y, s=5, c="k", alpha=0.25, linewidths=0, gid="points")
            mappable = mappable or drawn
            for t in arcs or ():
                if t >= xmax:
                    continue
                xs = np.linspace(t, xmax, 200)
                a.plot(xs, 100.0 * t / xs, color="k", ls="--", lw=1.0, gid=f"arc-{t:g}",
                                 label=f"tunnel RTT {t:g} ms")
                a.text(0.98 * xmax, 100.0 * t / (0.98 * xmax), f"{t:g} ms", fontsize=8, va="bottom", ha="right",
                       bbox={"boxstyle": "round,pad=0.1", "fc": "white", "ec": "none", "alpha": 0.7})
            a.set_xlim(0, xmax)
            a.set_ylim(0, 100)
            a.set_xlabel("End-to-end RTT (ms)")
            a.set_ylabel("Tunnel share of the RTT (%)")
            a.grid(False)
            name = ", ".join(
                _display(c, v) if c in ("combination", "tunnel.scheduler", "keys", "scenario")
                else f"buffer {v} pkts" if c == "buffer" else f"{c} = {v}"
                for c, v in zip(by, keyvals)
            )
            if name:
                a.set_title(name)
        fig.colorbar(mappable, ax=axes, label=label, shrink=0.9)
        if title:
            fig.suptitle(title)
        return fig


# ---------------------------------------------------------------------------------------
# ACPF (Pieska et al. 2021): Figures 4 and 5


def _bar_group_label(row, group):
    return " / ".join(str(row[c]) for c in group)


def goodput_bars(
    table,
    *,
    panel="tunnel",
    group=("delays", "e2e_cc"),
    hue="scheduler",
    value="goodput_mbps",
    capacity="rate_mbps",
    ncols=2,
    figsize=None,
    title=None,
    rc=None,
):
    """Mean goodput per set, one bar per scheduler, 95% confidence intervals as error bars
    (the ACPF paper's Figure 5, from `goodput.csv` of `braid reproduce acpf`).

    `table` has `<value>_mean` and optionally `<value>_ci95` columns; one panel per `panel`
    value (tunnel kind), groups along x by the `group` columns, bars by `hue`. With a
    `capacity` column (one path's rate), dotted lines mark one path's and both paths' rates.
    """
    with style.context(rc):
        mean, ci = f"{value}_mean", f"{value}_ci95"
        for c in (mean, hue, *group):
            if c not in table.columns:
                raise KeyError(f"no column {c!r}")
        df = table.copy()
        df[mean] = pd.to_numeric(df[mean], errors="coerce")
        df[ci] = pd.to_numeric(df[ci], errors="coerce") if ci in df.columns else np.nan
        panels = _ordered_unique(df[panel]) if panel in df.columns else [None]
        fig, axes = _grid(len(panels), ncols, 6.0, 3.6, figsize, sharey=False)
        hues = _ordered_unique(df[hue])
        width = 0.8 / max(len(hues), 1)
        for a, p in zip(axes, panels):
            sub = df if p is None else df[df[panel] == p]
            groups = list(dict.fromkeys(_bar_group_label(r, group) for _, r in sub.iterrows()))
            for j, h in enumerate(hues):
                rows = sub[sub[hue] == h].copy()
                rows["_g"] = [_bar_group_label(r, group) for _, r in rows.iterrows()]
                rows = rows.set_index("_g").reindex(groups)
                xs = np.arange(len(groups)) - 0.4 + width * (j + 0.5)
                a.bar(xs, rows[mean].to_numpy(dtype=float), width=width * 0.92,
                      yerr=np.nan_to_num(rows[ci].to_numpy(dtype=float)), color=style.colour(j),
                      ecolor=style.ERRORBAR_COLOUR, error_kw={"elinewidth": 1.0, "capsize": 2},
                      label=_display("tunnel.scheduler", h))
            if capacity in sub.columns and sub[capacity].notna().any():
                rate = float(pd.to_numeric(sub[capacity]).iloc[0])
                a.axhline(rate, color="0.3", ls=":", lw=1, label="one path's rate")
                a.axhline(2 * rate, color="0.3", ls="--", lw=1, label="both paths' rate")
            a.set_xticks(np.arange(len(groups)))
            a.set_xticklabels(groups, rotation=30, ha="right")
            a.grid(axis="x", visible=False)
            a.set_xlabel(" / ".join({"delays": "Delay set", "e2e_cc": "E2E CC"}.get(c, c) for c in group))
            a.set_ylabel("Goodput (Mbit/s)")
            a.set_ylim(bottom=0)
            if p is not None:
                rate = sub[capacity].iloc[0] if capacity in sub.columns else None
                a.set_title(f"{p} tunnels" + (f", {rate:g} Mbit/s per path" if rate is not None else ""))
        handles, labels = axes[0].get_legend_handles_labels()
        _legend_above(fig, axes, handles, labels, False)
        if title:
            fig.suptitle(title)
        return fig


def _trace_paths(trace):
    return [c[: -len("_cwnd_bytes")] for c in trace.columns if c.endswith("_cwnd_bytes") and c != "e2e_cwnd_bytes"]


def window_traces(
    trace,
    throughput=None,
    *,
    labels=None,
    titles=None,
    live=True,
    figsize=None,
    rc=None,
):
    """One column per run: its throughput per path (stacked) and end-to-end goodput, each
    path's live cwnd, and the server's cwnd, over time (the ACPF paper's Figure 4).

    `trace` is trace.csv (`load_traces`: `label`, `t_s`, `e2e_cwnd_bytes`, `acpf_fraction`,
    `<path>_cwnd_bytes` ...), `throughput` throughput.csv (`load_series`); without it the
    throughput row is left out. live=True draws the live cwnd, ACPF's fraction times the raw
    window (the raw window where there is no fraction: CPF), with the raw window dotted.
    """
    trace = wide_trace(trace)
    if throughput is not None:
        throughput = wide_throughput(throughput)
    with style.context(rc):
        if "t_s" not in trace.columns:
            raise KeyError("no column 't_s'")
        if "label" not in trace.columns:
            trace = trace.assign(label="run")
            if throughput is not None and "label" not in throughput.columns:
                throughput = throughput.assign(label="run")
        runs = labels or _ordered_unique(trace["label"])
        paths = _trace_paths(trace)
        rows = (["throughput"] if throughput is not None else []) + ["live", "server"]
        fig, grid = plt.subplots(len(rows), len(runs), squeeze=False, sharex="col", sharey="row",
                                 figsize=figsize or (4.2 * len(runs), 1.0 + 2.0 * len(rows)), layout="constrained")
        names = {}
        top = [0.0] * len(rows)  # each row's highest value: one scale per row, set at the end
        for col, run in enumerate(runs):
            tr = trace[trace["label"] == run]
            t = tr["t_s"].to_numpy(dtype=float)
            fraction = pd.to_numeric(tr["acpf_fraction"], errors="coerce") if "acpf_fraction" in tr else None
            has_fraction = live and fraction is not None and fraction.notna().any()
            for r, what in enumerate(rows):
                a = grid[r][col]
                if what == "throughput":
                    run_tput = throughput[throughput["label"] == run].drop(columns=["label"])
                    throughput_over_time(run_tput, ax=a)
                    a.set_xlabel("")
                    if a.get_legend():
                        a.get_legend().remove()
                    cols = _path_columns(run_tput) + ["goodput_mbps"]
                    if len(run_tput):
                        top[r] = max(top[r], float(run_tput[_path_columns(run_tput)].sum(axis=1).max()),
                                     float(run_tput[cols].max().max()))
                elif what == "live":
                    for i, p in enumerate(paths):
                        raw = tr[f"{p}_cwnd_bytes"].to_numpy(dtype=float) / 1e3
                        scale = fraction.fillna(1.0).to_numpy(dtype=float) if has_fraction else 1.0
                        a.plot(t, raw * scale, color=style.path_colour(i), lw=1.0,
                               label=f"path {i + 1} ({p}) live cwnd")
                        if has_fraction:
                            a.plot(t, raw, color=style.path_colour(i), lw=0.8, ls=":", label=f"path {i + 1} ({p}) raw cwnd")
                        top[r] = max([top[r], *raw])
                    a.set_ylabel("Live cwnd (kB)")
                else:
                    server = tr["e2e_cwnd_bytes"].to_numpy(dtype=float) / 1e3
                    a.plot(t, server, color=style.GOODPUT_COLOUR, lw=1.0, label="server cwnd")
                    top[r] = max([top[r], *server])
                    a.set_ylabel("Server cwnd (kB)")
                    a.set_xlabel("Time (s)")
                if len(t):
                    a.set_xlim(t.min(), t.max())
                if r == 0:
                    a.set_title((titles or {}).get(run, str(run)), loc="left")
                for h, lab in zip(*a.get_legend_handles_labels()):
                    names.setdefault(lab, h)
        for r in range(len(rows)):
            for a in grid[r]:
                a.set_ylim(0, 1.05 * top[r] if top[r] > 0 else 1.0)
        # Two legend columns fit over a single run's panels, three over more.
        fig.legend(list(names.values()), list(names.keys()), loc="outside upper center", ncol=2 if len(runs) == 1 else 3)
        return fig


# ---------------------------------------------------------------------------------------
# Coupled CUBIC (Lee et al. 2023): Figures 5, 6 and 7


def subflow_windows(trace, *, labels=None, titles=None, packet_bytes=1500, paths=None, figsize=None, rc=None):
    """Each subflow's congestion window over time, one row per subflow (their scales differ
    a hundredfold), one column per run (the Coupled CUBIC paper's Figures 5 and 6).

    `trace` is trace.csv (`load_traces`) or `SimResult.series`; windows are shown in packets
    of `packet_bytes`.
    """
    trace = wide_trace(trace)
    with style.context(rc):
        if "label" not in trace.columns:
            trace = trace.assign(label="run")
        runs = labels or _ordered_unique(trace["label"])
        paths = paths or _trace_paths(trace)
        if not paths:
            raise KeyError("no <path>_cwnd_bytes column")
        fig, grid = plt.subplots(len(paths), len(runs), squeeze=False, sharex=True, sharey="row",
                                 figsize=figsize or (5.0 * len(runs), 1.0 + 2.2 * len(paths)), layout="constrained")
        for col, run in enumerate(runs):
            tr = trace[trace["label"] == run]
            t = tr["t_s"].to_numpy(dtype=float)
            for i, p in enumerate(paths):
                a = grid[i][col]
                a.plot(t, tr[f"{p}_cwnd_bytes"].to_numpy(dtype=float) / packet_bytes, color=style.path_colour(i), lw=1.0)
                a.set_ylabel(f"{p} cwnd (packets)")
                a.set_ylim(bottom=0)
                if len(t):
                    a.set_xlim(t.min(), t.max())
                if i == 0:
                    a.set_title((titles or {}).get(run, str(run)), loc="left")
            grid[-1][col].set_xlabel("Time (s)")
        return fig


def utilisation_bars(table, *, order=None, figsize=None, title=None, rc=None):
    """Mean throughput of each subflow and their total per tunnel congestion control, 95%
    confidence intervals as error bars, each subflow bar labelled with its utilisation (the
    Coupled CUBIC paper's Figure 7, from `utilisation.csv` of `braid reproduce
    coupled-cubic`)."""
    with style.context(rc):
        for c in ("variant", "subflow", "throughput_mbps_mean"):
            if c not in table.columns:
                raise KeyError(f"no column {c!r}")
        df = table.copy()
        for c in ("throughput_mbps_mean", "throughput_mbps_ci95", "utilisation_mean"):
            if c in df.columns:
                df[c] = pd.to_numeric(df[c], errors="coerce")
        variants = _ordered_unique(df["variant"], order)
        subflows = _ordered_unique(df["subflow"])
        width = 0.8 / max(len(subflows), 1)
        fig, ax = plt.subplots(figsize=figsize or (max(6.0, 1.5 * len(variants) + 2), 4.2), layout="constrained")
        for j, sf in enumerate(subflows):
            rows = df[df["subflow"] == sf].set_index("variant").reindex(variants)
            xs = np.arange(len(variants)) - 0.4 + width * (j + 0.5)
            y = rows["throughput_mbps_mean"].to_numpy(dtype=float)
            err = rows["throughput_mbps_ci95"].to_numpy(dtype=float) if "throughput_mbps_ci95" in rows else None
            colour = style.GOODPUT_COLOUR if sf == "total" else style.path_colour(j)
            ax.bar(xs, y, width=width * 0.92, color=colour, yerr=None if err is None else np.nan_to_num(err),
                   ecolor=style.ERRORBAR_COLOUR, error_kw={"elinewidth": 1.0, "capsize": 2}, label=str(sf))
            if sf != "total" and "utilisation_mean" in rows:
                for x, v, u in zip(xs, y, rows["utilisation_mean"].to_numpy(dtype=float)):
                    if np.isfinite(v) and np.isfinite(u):
                        ax.text(x, v, f"{100 * u:.0f}%", ha="center", va="bottom", fontsize=7)
        ax.set_xticks(np.arange(len(variants)))
        ax.set_xticklabels(variants, rotation=20, ha="right")
        ax.grid(axis="x", visible=False)
        ax.set_xlabel("Tunnel congestion control")
        ax.set_ylabel("Throughput (Mbit/s)")
        ax.set_ylim(bottom=0)
        handles, labels = ax.get_legend_handles_labels()
        _legend_above(fig, [ax], handles, labels, False)
        if title:
            fig.suptitle(title)
        return fig


# ---------------------------------------------------------------------------------------
# The page: python3 -m braid.figures nested-cc DIR

SETUP = (
    "Differences from the paper's set-up, for every figure: the runs are simulated by Braid's "
    "discrete-event simulator (with its own models of the congestion controls, tunnel, "
    "scheduler and reordering), not measured in Mininet with the MP-DCCP user-space framework "
    "or the kernel testbed. Repetitions of a cell differ only through the seeded random "
    "choices of our noise model, not through real-system timing jitter, so their spread is "
    "not the paper's. Transfer sizes, repetition counts and sample points are those of this "
    "run (given in each caption); the paper downloaded 300 MB, repeated each cell 10 times "
    "and drew each contour from 400 random points."
)

PAPER_SERIES = {
    "4": "the paper's Figure 4 (BBR end to end over BBR or CCID5 tunnels)",
    "8": "the paper's Figure 8a (Cubic end to end over BBR or CCID5 tunnels)",
    "9": "the paper's Figure 9a (BBR end to end over NewReno or CCID2 tunnels)",
}


class _Page:
    def __init__(self, out_dir, fig_dir, strict, dpi=None):
        self.out_dir, self.fig_dir, self.strict, self.dpi = out_dir, fig_dir, strict, dpi
        self.items = []  # ("figure", name, title, caption) | ("table", title, html, caption) | ("skip", title, why)

    def figure(self, name, title, draw, caption):
        """draw() -> Figure; caption: str or a function of the figure's data (called after)."""
        try:
            fig = draw()
        except Exception as e:  # noqa: BLE001 - a figure that cannot be drawn is a note
            if self.strict and not isinstance(e, FileNotFoundError):
                raise
            self.skip(title, f"{type(e).__name__}: {e}")
            return None
        os.makedirs(self.fig_dir, exist_ok=True)
        path = os.path.join(self.fig_dir, name)
        try:
            with style.context():
                fig.savefig(path, **({"dpi": self.dpi} if self.dpi else {}))
        finally:
            plt.close(fig)
        self.items.append(("figure", os.path.relpath(path, self.out_dir), title, caption() if callable(caption) else caption))
        return path

    def table(self, csv_path, title, caption):
        try:
            table = pd.read_csv(csv_path)
        except FileNotFoundError:
            self.skip(title, f"no {os.path.relpath(csv_path, self.out_dir)}")
            return
        except Exception as e:  # noqa: BLE001
            if self.strict:
                raise
            self.skip(title, f"{type(e).__name__}: {e}")
            return
        body = table.to_html(index=False, border=0, classes="data", na_rep="", float_format=lambda v: f"{v:.3f}")
        self.items.append(("table", os.path.relpath(csv_path, self.out_dir), title, body, caption))

    def skip(self, title, why):
        print(f"braid.figures: skipped {title}: {why}", file=sys.stderr)
        self.items.append(("skip", title, why))

    def write(self, heading, setup=SETUP):
        e = html.escape
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{e(heading)}</title>",
            "<style>",
            "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
            "color:#222;line-height:1.45}",
            "figure{margin:2em 0;border-top:1px solid #ddd;padding-top:1em}",
            "figure img{max-width:100%;height:auto}",
            "figcaption{font-size:.95em;color:#333}",
            "table.data{border-collapse:collapse;font-size:.9em;margin:.5em 0}",
            "table.data th,table.data td{padding:.25em .7em;border-bottom:1px solid #ddd;text-align:right}",
            "table.data th{background:#f4f4f4}",
            ".note{color:#8a5a00}",
            "</style></head><body>",
            f"<h1>{e(heading)}</h1>",
            f"<p>{e(setup)}</p>",
        ]
        skipped = [i for i in self.items if i[0] == "skip"]
        for item in self.items:
            if item[0] == "figure":
                _, src, title, caption = item
                parts += [
                    "<figure>",
                    f'<img src="{e(src)}" alt="{e(title)}">',
                    f"<figcaption><strong>{e(title)}.</strong> {e(caption)}</figcaption>",
                    "</figure>",
                ]
            elif item[0] == "table":
                _, src, title, body, caption = item
                parts += [
                    "<figure>",
                    f"<figcaption><strong>{e(title)}.</strong> {e(caption)} "
                    f'(<a href="{e(src)}">{e(src)}</a>)</figcaption>',
                    body,
                    "</figure>",
                ]
        if skipped:
            parts.append("<h2>Not drawn</h2><ul>")
            parts += [f'<li class="note"><strong>{e(t)}</strong>: {e(w)}</li>' for _, t, w in skipped]
            parts.append("</ul>")
        parts.append("</body></html>")
        path = os.path.join(self.out_dir, "index.html")
        with open(path, "w") as f:
            f.write("\n".join(parts) + "\n")
        return path


def _runs_facts(df):
    """A sentence on how many runs, repetitions and bytes a table holds."""
    facts = [f"The table holds {len(df)} runs"]
    if "status" in df.columns:
        failed = int((df["status"].astype(str) != "ok").sum())
        if failed:
            facts.append(f"{failed} failed and left out")
    if "rep" in df.columns:
        facts.append(f"{int(pd.to_numeric(df['rep']).max()) + 1} repetitions per cell")
    if "e2e.bytes_delivered" in df.columns:
        delivered = pd.to_numeric(df["e2e.bytes_delivered"], errors="coerce").max()
        if np.isfinite(delivered):
            facts.append(f"{delivered / 1e6:g} MB per transfer (paper: 300 MB)")
    return "; ".join(facts) + "."


# Axis columns the page knows; any other axis of the contour table (a buffer size, an
# asymmetry: the paper's Figures 8c and 9d) becomes one more panel dimension, never pooled.
_KNOWN_AXES = {
    "point", "e2e_rtt_ms", "tunnel_share", "server_link.rtt_ms", "paths.0.rtt_ms", "paths.1.rtt_ms",
    # what braid reproduce's `buffer` axis sets; the axis itself titles the panels
    "paths.0.buffer_pkts", "paths.1.buffer_pkts",
    "combination", "e2e.cc", "tunnel.cc", "tunnel.reorder", "tunnel.reliability", "tunnel.scheduler",
}


def _extra_axes(df):
    """Axis columns (between `run_id` and `rep`, as `braid sweep` writes them) not in
    _KNOWN_AXES that take more than one value."""
    cols = list(df.columns)
    if "rep" not in cols:
        return []
    start = cols.index("run_id") + 1 if "run_id" in cols else 0
    return [c for c in cols[start : cols.index("rep")] if c not in _KNOWN_AXES and df[c].nunique(dropna=False) > 1]


def _series_group(label):
    m = re.match(r"^fig(?:ure)?[-_ ]?0*(\d+)([a-z]?)(?=$|[-_/ .])", str(label), re.IGNORECASE)
    return (m.group(1), m.group(2).lower()) if m else (None, "")


def nested_cc(directory, *, out_dir=None, strict=False, dpi=None):
    """Draw every figure of the nested-cc reproduction that `directory`'s files allow.

    Figures go to `directory`/figures/*.png and the page to `directory`/index.html (or
    under `out_dir`). A figure whose input is missing or unusable is listed as not drawn;
    strict=True raises on anything but a missing file instead. dpi: of the PNGs (default
    `braid.style.RC["savefig.dpi"]`). Returns the page's path.
    """
    directory = os.fspath(directory)
    out_dir = os.fspath(out_dir or directory)
    os.makedirs(out_dir, exist_ok=True)
    page = _Page(out_dir, os.path.join(out_dir, "figures"), strict, dpi)

    def table(name):
        return load_sweep(os.path.join(directory, name))

    # Matrix: Figure 2 and Figure 10.
    try:
        matrix = table("matrix")
    except FileNotFoundError as err:
        matrix = None
        for t in ("Figure 2: relative DLCT per combination", "Figure 10: relative DLCT per scenario"):
            page.skip(t, str(err))
    if matrix is not None:
        modes = _modes_table(os.path.join(directory, "table_scenarios.csv"))
        hatched = " Hatched bars: cells whose runs fall into two or more modes (table_scenarios.csv)." if modes is not None else ""
        has_default = "keys" in matrix.columns and (matrix["keys"].fillna("").astype(str) == "").any()
        page.figure(
            "fig02_relative_dlct.png",
            "Figure 2: relative DLCT per combination",
            lambda: bars_relative_dlct(matrix, sort=True, modes=modes),
            lambda: "Download completion time through the two-path tunnel relative to the same download over "
            "path 1 without a tunnel, per E2E/tunnel congestion-control combination and scheduler; bars are "
            "means over repetitions, grey lines one standard deviation. 50% would be full use of both paths, "
            "above 100% the tunnel is slower than one path. "
            + ("Default scenario only. " if has_default else "All scenarios pooled. ")
            + "Sorted by the first scheduler's mean. "
            + _runs_facts(matrix)
            + hatched,
        )
        scenarios = matrix["keys"].fillna("").nunique() if "keys" in matrix.columns else 0
        if scenarios > 1:
            page.figure(
                "fig10_by_combination.png",
                "Figure 10 (c-f): relative DLCT per scenario, one panel per combination",
                lambda: bars_relative_dlct_by_scenario(matrix, arrange="combination", modes=modes),
                lambda: "Relative DLCT for each Table 2 scenario (keys; default = Table 1), one panel per "
                "E2E/tunnel combination, bars per scheduler, mean and one standard deviation over repetitions. "
                "The paper's Figure 10 is drawn for its default scheduler (CPF) and highlights pairs of scenarios "
                "that differ in RTT; here every scheduler in the sweep is drawn side by side. "
                + _runs_facts(matrix)
                + hatched,
            )
            page.figure(
                "fig10_by_scenario.png",
                "Figure 10 (a-b): relative DLCT per combination, one panel per scenario",
                lambda: bars_relative_dlct_by_scenario(matrix, arrange="scenario", modes=modes),
                lambda: "The same runs arranged by scenario: each panel one scenario, a bar per combination "
                "and scheduler. The paper shows a subset of the scenarios here; this page shows all of them. "
                + _runs_facts(matrix)
                + hatched,
            )
        else:
            page.skip("Figure 10: relative DLCT per scenario", "the matrix has a single scenario (no keys axis)")

    # Series: Figures 4, 8a, 9a.
    try:
        series = load_series(os.path.join(directory, "series"))
    except FileNotFoundError as err:
        series = None
        page.skip("Figures 4, 8a, 9a: throughput over time", str(err))
    if series is not None:
        groups = {}
        for label in _ordered_unique(series["label"]):
            groups.setdefault(_series_group(label), []).append(label)
        for (num, sub), labels in sorted(groups.items(), key=lambda kv: (kv[0][0] is None, int(kv[0][0] or 0), kv[0][1])):
            chunks = [labels] if num else [labels[i : i + 4] for i in range(0, len(labels), 4)]
            for ci, chunk in enumerate(chunks):
                if num:
                    name, title = f"fig{int(num):02d}{sub}_throughput.png", f"Figure {num}{sub}: throughput over time"
                    what = PAPER_SERIES.get(num, f"the paper's Figure {num}{sub}")
                else:
                    suffix = f"_{ci + 1}" if len(chunks) > 1 else ""
                    name, title = f"throughput{suffix}.png", f"Throughput over time{suffix.replace('_', ' ')}"
                    what = "the paper's Figures 4, 8a and 9a"
                page.figure(
                    name,
                    title,
                    lambda chunk=chunk: throughput_over_time(series, labels=chunk),
                    _series_caption(series, chunk, what),
                )

    # Contours: Figures 5, 8b-c, 9c-d, one sweep per batch under contour/<set>/ (a single
    # contour/ sweep, as older folders have, is one batch).
    sets = _contour_sets(directory)
    if not sets:
        page.skip("Figures 5, 8b-c, 9c-d: contours", f"no sweep table under {os.path.join(directory, 'contour')}")
    relative = []
    for name, folder, about in sets:
        grid = with_combination(table(folder))
        by = ["combination", "tunnel.scheduler"] + _extra_axes(grid)
        title = f"{about.get('figure', name)}: goodput over E2E RTT and tunnel share"
        caption = _contour_caption(grid, "goodput") + _contour_set_caption(about)
        if "goodput_mbps" in grid.columns:
            page.figure(f"contour_{name}_goodput.png", title,
                        lambda grid=grid, by=by: contour(grid, "goodput_mbps", by=by), caption)
        else:
            page.skip(title, "the contour table has no goodput_mbps column")
        if "relative_dlct" in grid.columns:
            relative.append((name, grid, by, about))
    for name, grid, by, about in relative:
        page.figure(
            f"contour_{name}_relative_dlct.png",
            f"{about.get('figure', name)}: relative DLCT over E2E RTT and tunnel share",
            lambda grid=grid, by=by: contour(grid, "relative_dlct", by=by),
            _contour_caption(grid, "DLCT relative to the single-path download (blue = faster, below 100%)")
            + _contour_set_caption(about),
        )

    page.table(
        os.path.join(directory, "table3.csv"),
        "Table 3: average relative DLCT per combination and scheduler",
        "Mean DLCT through the tunnel divided by the single-path DLCT (1.0 = no gain, 0.5 = both paths "
        "fully used), over every scenario and repetition, with a 95% confidence half-width and the number "
        "of runs; multimodal_scenarios counts the row's scenarios whose runs fall into two or more modes, "
        "where the mean describes no run. Simulated, so values are comparable with the paper's in trend, "
        "not in digits.",
    )
    page.table(
        os.path.join(directory, "table_scenarios.csv"),
        "Relative DLCT per scenario",
        "The matrix broken down by Table 2 scenario (the numbers behind Figure 10). modes: how many "
        "clusters the cell's runs form with nothing between them; mode_means and mode_shares: each "
        "one's mean and fraction of the runs, lowest first, separated by ';' (docs/sweeps.md).",
    )
    return page.write("Braid: nested congestion control (Pieska et al. 2024), reproduced")


def _modes_table(path):
    """table_scenarios.csv if it exists and has a `modes` column, else None (no hatching)."""
    try:
        table = pd.read_csv(path, keep_default_na=False)
    except (OSError, ValueError):
        return None
    return table if "modes" in table.columns else None


def _series_caption(series, labels, what):
    summaries = series.attrs.get("summary", {})
    notes = []
    for label in labels:
        s = summaries.get(label)
        if not s:
            notes.append(f"{label}")
            continue
        bits = []
        if "goodput_mbps" in s:
            bits.append(f"goodput {s['goodput_mbps']:.1f} Mbit/s")
        if "dlct_s" in s:
            bits.append(f"DLCT {s['dlct_s']:.2f} s")
        shares = [p.get("share") for p in s.get("paths", []) if isinstance(p, dict)]
        if shares and all(isinstance(v, (int, float)) for v in shares):
            bits.append("path shares " + "/".join(f"{100 * v:.0f}%" for v in shares))
        delivered = s.get("e2e", {}).get("bytes_delivered") if isinstance(s.get("e2e"), dict) else None
        if delivered:
            bits.append(f"{delivered / 1e6:g} MB")
        notes.append(f"{label}: " + ", ".join(bits))
    return (
        f"Tunnel throughput per path, stacked (their sum is the tunnel's), and end-to-end goodput (dashed), "
        f"one panel per run, as {what}. Path 1 is the preferred (cheaper) path. The paper's colours for the "
        f"two paths differ between its figures; here path 1 is always vermillion and path 2 blue. "
        + "; ".join(notes)
        + "."
    )


def _contour_sets(directory):
    """[(name, folder, about)] of the contour batches under `directory`/contour: each
    subfolder holding runs.parquet, in reproduce.json's order when it lists them (`about`:
    its entry, with figure, asymmetry_ms and buffers_pkts), else by name; or the folder itself
    when it holds one sweep."""
    root = os.path.join(directory, "contour")
    if os.path.isfile(os.path.join(root, "runs.parquet")):
        return [("contour", root, {})]
    if not os.path.isdir(root):
        return []
    listed = {}
    try:
        with open(os.path.join(directory, "reproduce.json")) as f:
            for entry in json.load(f).get("contour", {}).get("sets", []):
                listed[entry["name"]] = entry
    except (OSError, ValueError, KeyError, TypeError):
        listed = {}
    present = [n for n in sorted(os.listdir(root)) if os.path.isfile(os.path.join(root, n, "runs.parquet"))]
    order = [n for n in listed if n in present] + [n for n in present if n not in listed]
    return [(n, os.path.join(root, n), listed.get(n, {})) for n in order]


def _contour_set_caption(about):
    facts = []
    if "asymmetry_ms" in about:
        facts.append(f"path 2's RTT {about['asymmetry_ms']:g} ms above path 1's")
    if about.get("buffers_pkts"):
        facts.append("bottleneck buffers of " + ", ".join(str(b) for b in about["buffers_pkts"]) + " packets, a panel each")
    elif "buffers_pkts" in about:
        facts.append("Table 1's 500-packet buffers")
    return (" This batch: " + "; ".join(facts) + ".") if facts else ""


def _contour_caption(df, what):
    n = df["point"].nunique() if "point" in df.columns else len(df)
    combos = ", ".join(str(c) for c in _ordered_unique(df["combination"])) if "combination" in df.columns else "?"
    return (
        f"{what[0].upper() + what[1:]} over the end-to-end RTT (x) and the share of it spent in the tunnel "
        f"(y; a high share puts the proxy near the server), interpolated between {n} sample points (dots) "
        f"per panel, repetitions averaged; dashed curves mark constant tunnel RTTs. Panels: {combos}, per "
        f"scheduler. The paper drew 400 random points per batch; ours are the sweep's points. "
        + _runs_facts(df)
    )


# ---------------------------------------------------------------------------------------
# The pages of `braid reproduce acpf` and `braid reproduce coupled-cubic`

SIMULATED = (
    "Every run is simulated by Braid's discrete-event simulator (its own models of the congestion "
    "controls, tunnel, schedulers and reordering), not measured on the paper's testbed; repetitions "
    "differ only through the seeded choices of the noise model and random loss, so their spread is "
    "not the paper's. "
)


def _manifest(directory):
    """reproduce.json of a reproduction folder, or {} when it is missing or unreadable."""
    try:
        with open(os.path.join(directory, "reproduce.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _load_series_and_traces(directory):
    """(throughput, traces) of the folder's series/, either None where missing."""
    root = os.path.join(directory, "series")
    try:
        tput = load_series(root)
    except FileNotFoundError:
        tput = None
    try:
        traces = load_traces(root)
    except FileNotFoundError:
        traces = None
    return tput, traces


ACPF_PANELS = {"4a": "NewReno", "4c": "Cubic", "4e": "BBR"}


def acpf(directory, *, out_dir=None, strict=False, dpi=None):
    """Draw the figures of `braid reproduce acpf` (Pieska et al. 2021) that `directory`'s files
    allow into `directory`/figures/ and write `directory`/index.html (or under `out_dir`).
    A figure whose input is missing or unusable is listed as not drawn (strict=True raises
    instead, but for missing files). Returns the page's path."""
    directory = os.fspath(directory)
    out_dir = os.fspath(out_dir or directory)
    os.makedirs(out_dir, exist_ok=True)
    page = _Page(out_dir, os.path.join(out_dir, "figures"), strict, dpi)
    m = _manifest(directory)
    opts = m.get("options", {})
    run_facts = (
        f" {opts.get('reps', '?')} repetitions per set, downloads of {opts.get('bytes', 0) / 1e6:g} MB over the "
        f"50 Mbit/s tunnels (half over the 25 Mbit/s ones), {opts.get('buffer_pkts', '?')}-packet buffers."
        if opts else ""
    )

    # Figure 5 and the tables.
    goodput_csv = os.path.join(directory, "goodput.csv")
    if os.path.isfile(goodput_csv):
        table = pd.read_csv(goodput_csv)
        page.figure(
            "fig05_goodput.png",
            "Figure 5: goodput of CPF and ACPF per set",
            lambda: goodput_bars(table),
            "Mean goodput (application bytes over the download time) per delay set and end-to-end congestion "
            "control, one panel per tunnel kind (the paper's kernel CCID5 tunnels at 25 Mbit/s, user-space "
            "TCP-BBR tunnels at 50 Mbit/s), bars per scheduler, error bars the 95% confidence interval over "
            "repetitions; dotted and dashed lines mark one path's and both paths' rate. The paper reports ACPF "
            "gains of 69-86% over CCID5 and 24-66% over BBR tunnels." + run_facts,
        )
    else:
        page.skip("Figure 5: goodput of CPF and ACPF per set", "no goodput.csv")
    page.table(
        os.path.join(directory, "gain.csv"),
        "ACPF's gain over CPF",
        "Mean goodput of CPF and ACPF per set and ACPF's gain, (ACPF / CPF - 1) x 100%.",
    )
    page.table(
        goodput_csv,
        "Goodput per set and scheduler",
        "Mean, 95% confidence half-width (Student's t), minimum and maximum goodput over the repetitions, "
        "each path's mean wire rate, and the number of runs (failed runs are left out and counted).",
    )

    # Figure 4.
    tput, traces = _load_series_and_traces(directory)
    if traces is None:
        page.skip("Figure 4: windows over time", "no series/*/trace.csv")
    else:
        labels = _ordered_unique(traces["label"])
        titles = {
            r["label"]: f"Figure {r['figure']}: {r['e2e_cc']} over BBR, {str(r['scheduler']).upper()}"
            for r in m.get("series", [])
            if isinstance(r, dict) and {"label", "figure", "e2e_cc", "scheduler"} <= set(r)
        }
        for first, cc in ACPF_PANELS.items():
            pair = [lab for lab in labels if re.match(rf"^fig{first[0]}[{first[1]}{chr(ord(first[1]) + 1)}]_", lab)]
            if not pair:
                continue
            letters = f"{first[1]}-{chr(ord(first[1]) + 1)}"
            page.figure(
                f"fig04{first[1]}{chr(ord(first[1]) + 1)}_windows.png",
                f"Figure 4{letters}: {cc} end to end over BBR tunnels, CPF and ACPF",
                lambda pair=pair: window_traces(traces, tput, labels=pair, titles=titles),
                "Per run (columns), top to bottom: each path's tunnel throughput (stacked) and the end-to-end "
                "goodput (dashed); each path's live cwnd (ACPF's fraction times the tunnel controller's raw "
                "window, dotted; with CPF live = raw); the server's cwnd. "
                + m.get("series_note", ""),
            )

    # Figure 6.
    try:
        grid = load_sweep(os.path.join(directory, "contour"))
    except FileNotFoundError as err:
        grid = None
        page.skip("Figure 6: contours", str(err))
    if grid is not None:
        note = m.get("contour", {}).get("note", "")
        by = ["tunnel.scheduler"]
        page.figure(
            "fig06a_contour_goodput.png",
            "Figure 6a: goodput over E2E RTT and tunnel share, BBR over BBR",
            lambda: contour(grid, "goodput_mbps", by=by),
            _contour_caption(grid.assign(combination="bbr/bbr"), "goodput (blue = both paths used)") + " " + note,
        )
        if "tunnel.acpf_fraction_mean" in grid.columns:
            acpf_rows = grid[grid["tunnel.scheduler"].astype(str) == "acpf"]
            page.figure(
                "fig06b_contour_acpf_fraction.png",
                "Figure 6b: ACPF's mean live cwnd as a percent of the raw cwnd",
                lambda: contour(acpf_rows, "tunnel.acpf_fraction_mean", by=by),
                "The ACPF fraction (live cwnd / raw cwnd) averaged over each run's samples, at each point; "
                "low where ACPF offloads to path 2 (0.47 is its minimum). " + _runs_facts(acpf_rows),
            )
        if "e2e.cwnd_bytes_mean" in grid.columns:
            order = {"acpf": 0, "cpf": 1}
            both = grid.assign(_o=grid["tunnel.scheduler"].astype(str).map(order).fillna(2)).sort_values("_o", kind="stable")
            page.figure(
                "fig06cd_contour_server_cwnd.png",
                "Figure 6c-d: the server's mean cwnd, ACPF (c) and CPF (d)",
                lambda: contour(both.drop(columns=["_o"]), "e2e.cwnd_bytes_mean", by=by),
                "The end-to-end BBR sender's congestion window averaged over each run's samples. Where the "
                "server perceives both paths its window grows with the aggregate BDP. " + _runs_facts(grid),
            )
    page.table(
        os.path.join(directory, "contour.csv"),
        "Figure 6's values per point",
        "Goodput, mean ACPF fraction and mean server cwnd of each contour run (coordinates in "
        "contour_points.csv).",
    )
    setup = SIMULATED + m.get("setup_note", "")
    return page.write("Braid: Adaptive Cheapest Path First (Pieska et al. 2021), reproduced", setup)


def coupled_cubic(directory, *, out_dir=None, strict=False, dpi=None):
    """Draw the figures of `braid reproduce coupled-cubic` (Lee et al. 2023) that
    `directory`'s files allow into `directory`/figures/ and write `directory`/index.html (or
    under `out_dir`); see `acpf` for the rest."""
    directory = os.fspath(directory)
    out_dir = os.fspath(out_dir or directory)
    os.makedirs(out_dir, exist_ok=True)
    page = _Page(out_dir, os.path.join(out_dir, "figures"), strict, dpi)
    m = _manifest(directory)
    opts = m.get("options", {})
    seconds = opts.get("seconds")
    shortened = (
        f" Runs last {seconds} s of traffic, not the paper's 1000 s, so the averages weigh the start "
        "(slow start fills the large path before the first loss) far more than the paper's."
        if seconds is not None else ""
    )
    packet = m.get("packet_bytes", 1500)

    util_csv = os.path.join(directory, "utilisation.csv")
    if os.path.isfile(util_csv):
        table = pd.read_csv(util_csv)
        page.figure(
            "fig07_throughput.png",
            "Figure 7: throughput per subflow and in total, per tunnel congestion control",
            lambda: utilisation_bars(table),
            "Mean wire rate of subflow 1 (500 Mbit/s, 100 ms), subflow 2 (100 Mbit/s, 20 ms) and their total, "
            "error bars the 95% confidence interval over repetitions, labels each subflow's utilisation. "
            "cubic_single_path is the paper's first bar (CUBIC alone on the large path); lia, coupled_cubic_a1 "
            "(CCUBIC(alpha_1)) and coupled_cubic (CCUBIC(alpha_2)) the paper's others; cubic and newreno, "
            "uncoupled on each path, are ours. The paper measured LIA 95 + 20 = 115 Mbit/s, CCUBIC(alpha_1) "
            "397 + 25 = 422 and CCUBIC(alpha_2) 402 + 21 = 423 over 1000 s." + shortened,
        )
    else:
        page.skip("Figure 7: throughput per subflow", "no utilisation.csv")
    page.table(
        util_csv,
        "Throughput, utilisation and mean window per subflow",
        "Mean and 95% confidence half-width of each subflow's wire rate, utilisation (rate over capacity) and "
        f"the mean congestion window in {packet}-byte packets (the paper's Tables 4 and 5 give average windows)."
        + shortened,
    )

    tput, traces = _load_series_and_traces(directory)
    if traces is None:
        page.skip("Figures 5 and 6: windows over time", "no series/*/trace.csv")
    else:
        names = {"5": "LIA", "6": "Coupled CUBIC"}
        for num, what in names.items():
            labels = [lab for lab in _ordered_unique(traces["label"]) if _series_group(lab)[0] == num]
            if not labels:
                continue
            page.figure(
                f"fig{int(num):02d}_windows.png",
                f"Figure {num}: subflow windows over time, {what}",
                lambda labels=labels: subflow_windows(traces, labels=labels, packet_bytes=packet),
                f"Each subflow's congestion window under {what}, in {packet}-byte packets, one row per subflow. "
                + m.get("series_note", "") + shortened,
            )
        if tput is not None:
            page.figure(
                "throughput_over_time.png",
                "Throughput over time (not in the paper)",
                lambda: throughput_over_time(tput),
                "Each subflow's wire rate (stacked) and the delivered UDP goodput (dashed) of the Figure 5 and 6 "
                "runs, per 100 ms bin." + shortened,
            )
    setup = SIMULATED + m.get("setup_note", "")
    return page.write("Braid: Coupled CUBIC (Lee et al. 2023), reproduced", setup)


EXPERIMENTS = {
    "nested-cc": (nested_cc, "braid reproduce nested-cc"),
    "acpf": (acpf, "braid reproduce acpf"),
    "coupled-cubic": (coupled_cubic, "braid reproduce coupled-cubic"),
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m braid.figures", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (_, command) in EXPERIMENTS.items():
        one = sub.add_parser(name, help=f"figures and index.html of `{command} --out DIR`")
        one.add_argument("dir", help="the folder braid reproduce wrote")
        one.add_argument("--out", help="write figures/ and index.html here instead of DIR")
        one.add_argument("--strict", action="store_true", help="fail on a figure that cannot be drawn")
        one.add_argument("--dpi", type=int, help=f"resolution of the PNGs (default {style.RC['savefig.dpi']})")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.dir):
        parser.error(f"no folder {args.dir}")
    draw = EXPERIMENTS[args.command][0]
    page = draw(args.dir, out_dir=args.out, strict=args.strict, dpi=args.dpi)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
