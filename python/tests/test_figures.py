"""Tests of braid.figures on small synthetic tables shaped like `braid reproduce nested-cc`'s
(no Rust binary needed): every figure is a non-blank PNG with the expected axes, the contour
draws its constant-tunnel-RTT arcs, and the page renders what exists and skips what does not."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from braid import figures
from plot_checks import assert_png, save, visible_axes

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COMBOS = {
    "bbr/bbr": ("bbr", "bbr", "adaptive", "reliable"),
    "cubic/bbr": ("cubic", "bbr", "adaptive", "reliable"),
    "cubic/newreno static": ("cubic", "newreno", "static", "reliable"),
}
SCHEDULERS = ["cpf", "srtt"]
SCENARIOS = ["", "SHORT+NEAR", "LONG+DIST"]


def matrix_df(reps=3, failed=True):
    rng = np.random.default_rng(1)
    rows = []
    for combo, (e2e, tcc, reorder, rel) in COMBOS.items():
        for sched in SCHEDULERS:
            for keys in SCENARIOS:
                for rep in range(reps):
                    rel_dlct = 0.6 + 0.4 * rng.random()
                    rows.append({
                        "run_id": len(rows), "combination": combo, "e2e.cc": e2e, "tunnel.cc": tcc,
                        "tunnel.reorder": reorder, "tunnel.reliability": rel, "tunnel.scheduler": sched,
                        "keys": keys, "rep": rep, "seed": 1 + rep, "dlct_s": 10 * rel_dlct,
                        "goodput_mbps": 50 / rel_dlct, "paths.0.share": 0.7, "paths.1.share": 0.3,
                        "e2e.bytes_delivered": 20_000_000, "baseline_dlct_s": 10.0,
                        "relative_dlct": rel_dlct, "status": "ok", "error": None,
                    })
    if failed:
        rows.append({**rows[0], "run_id": len(rows), "rep": reps, "dlct_s": None, "goodput_mbps": None,
                     "relative_dlct": None, "status": "error", "error": "incomplete transfer"})
    return pd.DataFrame(rows)


def contour_df(points=30, overrides=True, combos=("bbr/bbr", "cubic/bbr")):
    rng = np.random.default_rng(2)
    e2e = rng.uniform(5, 100, points)
    share = rng.uniform(0.05, 0.95, points)
    rows = []
    for combo in combos:
        for i in range(points):
            goodput = 95 - 0.5 * e2e[i] * share[i]
            row = {"run_id": len(rows), "combination": combo, "tunnel.scheduler": "cpf", "point": str(i),
                   "rep": 0, "seed": 1, "goodput_mbps": goodput, "relative_dlct": 50 / goodput, "status": "ok"}
            if overrides:
                row["server_link.rtt_ms"] = e2e[i] * (1 - share[i])
                row["paths.0.rtt_ms"] = e2e[i] * share[i]
            else:
                row["e2e_rtt_ms"] = e2e[i]
                row["tunnel_share"] = share[i]
            rows.append(row)
    return pd.DataFrame(rows)


def series_df(labels=("fig4-bbr-bbr-short", "fig4-bbr-bbr-long")):
    t = np.arange(0, 5, 0.1)
    frames = []
    for k, label in enumerate(labels):
        wifi = np.minimum(50, 10 * t + 5)
        cell = np.clip(45 - 20 * k - 5 * t, 0, 50)
        frames.append(pd.DataFrame({"label": label, "t_s": t, "goodput_mbps": 0.95 * (wifi + cell),
                                    "wifi_mbps": wifi, "cellular_mbps": cell}))
    return pd.concat(frames, ignore_index=True)


# ------------------------------------------------------------------------------ bars


def test_bars_relative_dlct_labels_bars_and_error_bars(tmp_path):
    fig = figures.bars_relative_dlct(matrix_df())
    (ax,) = visible_axes(fig)
    assert ax.get_xlabel() == "DLCT relative to no tunnel (%)"
    assert ax.get_ylabel() == "E2E CC / tunnel CC"
    assert [t.get_text() for t in ax.get_yticklabels()] == list(COMBOS)
    assert len(ax.patches) == len(COMBOS) * len(SCHEDULERS)  # the default scenario only
    legend = fig.legends[0]
    assert {t.get_text() for t in legend.get_texts()} >= {"CPF", "SRTT"}
    # bars in percent, the mean of the reps of the default scenario
    df = matrix_df()
    want = df[(df.combination == "bbr/bbr") & (df["tunnel.scheduler"] == "cpf") & (df["keys"] == "")]
    assert ax.patches[0].get_width() == pytest.approx(100 * want.relative_dlct.mean())
    assert_png(save(fig, tmp_path, "bars.png"))


def test_bars_sorted_best_first_and_pooled_without_default_scenario():
    df = matrix_df()
    df = df[df["keys"] != ""]
    fig = figures.bars_relative_dlct(df, sort=True)
    ax = visible_axes(fig)[0]
    order = [t.get_text() for t in ax.get_yticklabels()]
    means = df[df["tunnel.scheduler"] == "cpf"].groupby("combination").relative_dlct.mean()
    assert order == list(means.sort_values().index)
    assert len(ax.patches) == len(COMBOS) * len(SCHEDULERS)


def test_bars_build_the_combination_from_cc_columns():
    df = matrix_df().drop(columns=["combination"])
    fig = figures.bars_relative_dlct(df)
    labels = [t.get_text() for t in visible_axes(fig)[0].get_yticklabels()]
    assert labels == ["bbr/bbr", "cubic/bbr", "cubic/newreno static"]


@pytest.mark.parametrize("arrange,panels,ylabel", [
    ("combination", len(COMBOS), "Scenario (Table 2 keys)"),
    ("scenario", len(SCENARIOS), "E2E CC / tunnel CC"),
])
def test_bars_by_scenario(tmp_path, arrange, panels, ylabel):
    fig = figures.bars_relative_dlct_by_scenario(matrix_df(), arrange=arrange)
    axes = visible_axes(fig)
    assert len(axes) == panels
    for ax in axes:
        assert ax.get_xlabel() == "DLCT relative to no tunnel (%)"
        assert ax.get_ylabel() == ylabel
    if arrange == "combination":
        assert [t.get_text() for t in axes[0].get_yticklabels()] == ["default", "SHORT+NEAR", "LONG+DIST"]
        assert [a.get_title() for a in axes] == list(COMBOS)
    assert_png(save(fig, tmp_path, f"by_{arrange}.png"))


def test_bars_hatch_multimodal_cells_of_the_scenario_drawn():
    combos = list(COMBOS)
    modes = pd.DataFrame({
        "combination": [combos[1], combos[0], combos[2]], "scheduler": ["srtt", "cpf", "cpf"],
        "scenario": ["default", "SHORT+NEAR", "default"], "modes": [2, 3, 1],
    })
    fig = figures.bars_relative_dlct(matrix_df(), modes=modes)
    (ax,) = visible_axes(fig)
    # Patches: every combination's CPF bar, then every SRTT bar; only (combos[1], SRTT, default).
    hatched = [i for i, bar in enumerate(ax.patches) if bar.get_hatch()]
    assert hatched == [len(combos) + 1]
    assert "two or more modes" in {t.get_text() for t in fig.legends[0].get_texts()}
    # Per scenario: (combos[0], CPF, SHORT+NEAR) is hatched in its panel as well.
    fig = figures.bars_relative_dlct_by_scenario(matrix_df(), arrange="combination", modes=modes)
    axes = visible_axes(fig)
    first = [i for i, bar in enumerate(axes[0].patches) if bar.get_hatch()]
    assert first == [1]  # CPF bars of default, SHORT+NEAR, LONG+DIST
    # Without a modes table, or pooled over scenarios, nothing is hatched.
    for fig in (figures.bars_relative_dlct(matrix_df()),
                figures.bars_relative_dlct(matrix_df(), modes=modes, scenario=None)):
        assert not any(bar.get_hatch() for bar in visible_axes(fig)[0].patches)


def test_bars_into_a_given_axes():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    assert figures.bars_relative_dlct(matrix_df(), ax=ax) is fig
    assert ax.get_xlabel() == "DLCT relative to no tunnel (%)"
    plt.close(fig)


# ------------------------------------------------------------------------------ throughput


def test_throughput_over_time_stacked(tmp_path):
    fig = figures.throughput_over_time(series_df())
    axes = visible_axes(fig)
    assert len(axes) == 2
    assert all(a.get_ylabel() == "Throughput (Mbit/s)" for a in axes)
    assert axes[-1].get_xlabel() == "Time (s)"
    assert [a.get_title(loc="left") for a in axes] == ["fig4-bbr-bbr-short", "fig4-bbr-bbr-long"]
    assert len(axes[0].collections) == 2  # one stacked area per path
    assert [ln.get_label() for ln in axes[0].lines] == ["E2E goodput"]
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert labels == {"path 1 (wifi)", "path 2 (cellular)", "E2E goodput"}
    assert_png(save(fig, tmp_path, "tput.png"))


def test_throughput_over_time_lines_one_run(tmp_path):
    df = series_df().query("label == 'fig4-bbr-bbr-short'").drop(columns=["label"])
    fig = figures.throughput_over_time(df, stacked=False)
    (ax,) = visible_axes(fig)
    assert [ln.get_label() for ln in ax.lines] == ["path 1 (wifi)", "path 2 (cellular)", "E2E goodput"]
    assert ax.get_xlabel() == "Time (s)"
    assert_png(save(fig, tmp_path, "lines.png"))


# ------------------------------------------------------------------------------ contour


def test_contour_draws_arcs_points_and_colorbar(tmp_path):
    fig = figures.contour(contour_df(), "goodput_mbps", arcs=(10, 20, 40))
    axes = visible_axes(fig)
    assert len(axes) == 2
    assert [a.get_title() for a in axes] == ["bbr/bbr, CPF", "cubic/bbr, CPF"]
    for ax in axes:
        assert ax.get_xlabel() == "End-to-end RTT (ms)"
        assert ax.get_ylabel() == "Tunnel share of the RTT (%)"
        arcs = {ln.get_gid(): ln for ln in ax.lines if (ln.get_gid() or "").startswith("arc-")}
        assert set(arcs) == {"arc-10", "arc-20", "arc-40"}
        for t, ln in ((10, arcs["arc-10"]), (40, arcs["arc-40"])):
            x, y = ln.get_data()
            assert np.allclose(np.asarray(x) * np.asarray(y) / 100, t)  # share x E2E RTT = tunnel RTT
        assert any(c.get_gid() == "points" for c in ax.collections)
        assert {t.get_text() for t in ax.texts} == {"10 ms", "20 ms", "40 ms"}
    colorbars = [a for a in fig.axes if a.get_label() == "<colorbar>"]
    assert colorbars and colorbars[0].get_ylabel() == "Goodput (Mbit/s)"
    assert_png(save(fig, tmp_path, "contour.png"))


def test_contour_reads_either_coordinate_columns():
    a = figures.contour_coordinates(contour_df(overrides=True))
    b = figures.contour_coordinates(contour_df(overrides=False))
    assert np.allclose(a.e2e_rtt_ms, b.e2e_rtt_ms)
    assert np.allclose(a.tunnel_share_pct, b.tunnel_share_pct)
    assert 0 < b.tunnel_share_pct.min() and b.tunnel_share_pct.max() < 100
    with pytest.raises(KeyError):
        figures.contour_coordinates(pd.DataFrame({"goodput_mbps": [1.0]}))


def test_contour_relative_dlct_one_panel_and_few_points(tmp_path):
    df = contour_df(combos=("bbr/bbr",))
    fig = figures.contour(df, "relative_dlct", arcs=(20,))
    (ax,) = visible_axes(fig)
    assert [ln.get_gid() for ln in ax.lines] == ["arc-20"]
    colorbar = [a for a in fig.axes if a.get_label() == "<colorbar>"][0]
    assert colorbar.get_ylabel() == "DLCT relative to no tunnel (%)"
    # two points cannot be triangulated: drawn as coloured dots, not an error
    fig2 = figures.contour(df.head(2), "goodput_mbps")
    assert len(visible_axes(fig2)[0].collections) == 1
    assert_png(save(fig2, tmp_path, "two.png"), min_bytes=4000)


# ------------------------------------------------------------------------------ loaders and CLI


def write_dir(root, *, matrix=True, contour=True, series=True, tables=True):
    if matrix:
        os.makedirs(root / "matrix")
        matrix_df().to_parquet(root / "matrix" / "runs.parquet", index=False)
    if contour:
        # braid reproduce's layout: a sweep per batch under contour/<set>/, described in
        # reproduce.json (fig08c has a buffer axis: a panel per buffer).
        os.makedirs(root / "contour" / "fig05")
        contour_df(points=20, combos=("bbr/bbr",)).to_parquet(root / "contour" / "fig05" / "runs.parquet", index=False)
        os.makedirs(root / "contour" / "fig08c")
        a, b = contour_df(points=12, combos=("cubic/bbr",)), contour_df(points=12, combos=("cubic/bbr",))
        a.insert(1, "buffer", 250)
        b.insert(1, "buffer", 1000)
        pd.concat([a, b], ignore_index=True).to_parquet(root / "contour" / "fig08c" / "runs.parquet", index=False)
        sets = [{"name": "fig08c", "figure": "Figure 8c", "asymmetry_ms": 20.0, "buffers_pkts": [250, 1000]},
                {"name": "fig05", "figure": "Figure 5", "asymmetry_ms": 0.0, "buffers_pkts": []}]
        (root / "reproduce.json").write_text(json.dumps({"contour": {"sets": sets}}))
    if series:
        for label, frame in series_df(("fig4-a", "fig4-b", "fig8a-c", "other")).groupby("label", sort=False):
            d = root / "series" / label
            os.makedirs(d)
            frame.drop(columns=["label"]).to_csv(d / "throughput.csv", index=False, float_format="%.3f")
            summary = {"dlct_s": 3.2, "goodput_mbps": 51.5, "paths": [{"share": 0.7}, {"share": 0.3}],
                       "e2e": {"bytes_delivered": 20000000}}
            (d / "summary.json").write_text(json.dumps(summary))
    if tables:
        pd.DataFrame({"e2e_cc": ["bbr", "cubic"], "tunnel_cc": ["bbr2", "newreno"], "reorder": ["adaptive", "static"],
                      "scheduler": ["cpf", "cpf"], "relative_dlct_mean": [0.6543, 0.8123],
                      "relative_dlct_ci95": [0.012, 0.034], "runs": [150, 150]}).to_csv(root / "table3.csv", index=False)
        pd.DataFrame({"scenario": ["SHORT+NEAR"], "combination": ["bbr/bbr"], "scheduler": ["cpf"],
                      "relative_dlct_mean": [0.7777], "modes": [2], "mode_means": ["0.54;1.02"],
                      "mode_shares": ["0.6;0.4"]}).to_csv(root / "table_scenarios.csv", index=False)


def test_loaders(tmp_path):
    write_dir(tmp_path, contour=False, tables=False)
    df = figures.load_sweep(tmp_path / "matrix")
    assert len(df) == len(matrix_df()) and "relative_dlct" in df.columns
    assert len(figures.load_sweep(tmp_path / "matrix" / "runs.parquet")) == len(df)
    s = figures.load_series(tmp_path)
    assert list(dict.fromkeys(s.label)) == ["fig4-a", "fig4-b", "fig8a-c", "other"]
    assert list(s.columns) == ["label", "t_s", "goodput_mbps", "wifi_mbps", "cellular_mbps"]
    assert s.attrs["summary"]["fig4-a"]["dlct_s"] == 3.2
    one = figures.load_series(tmp_path / "series" / "other")
    assert set(one.label) == {"other"}
    with pytest.raises(FileNotFoundError):
        figures.load_sweep(tmp_path / "contour")
    with pytest.raises(FileNotFoundError):
        figures.load_series(tmp_path / "nothing")


def test_cli_draws_every_figure_and_the_page(tmp_path):
    write_dir(tmp_path)
    assert figures.main(["nested-cc", str(tmp_path), "--strict", "--dpi", "60"]) == 0
    page = (tmp_path / "index.html").read_text()
    pngs = sorted(os.listdir(tmp_path / "figures"))
    assert pngs == sorted([
        "fig02_relative_dlct.png", "fig10_by_combination.png", "fig10_by_scenario.png",
        "fig04_throughput.png", "fig08a_throughput.png", "throughput.png",
        "contour_fig05_goodput.png", "contour_fig08c_goodput.png",
        "contour_fig05_relative_dlct.png", "contour_fig08c_relative_dlct.png",
    ])
    srcs = re.findall(r'<img src="([^"]+)"', page)
    assert sorted(srcs) == [f"figures/{p}" for p in pngs]  # relative links, each PNG once
    for src in srcs:
        assert_png(tmp_path / src)
    assert page.count('<table class="dataframe data"') == 2
    assert "0.654" in page and "bbr2" in page and "0.778" in page  # both tables rendered
    assert "0.54;1.02" in page and "Hatched bars" in page  # the modes, and the figures mark them
    assert "Not drawn" not in page
    assert "http" not in page.split("</style>")[0]  # nothing fetched from outside
    assert "300 MB" in page and "simulated" in page.lower()
    # reproduce.json's order and facts reach the page
    assert page.index("Figure 8c: goodput") < page.index("Figure 5: goodput")
    assert "path 2&#x27;s RTT 0 ms above path 1&#x27;s" in page or "path 2's RTT 0 ms above path 1's" in page


def test_cli_skips_missing_inputs(tmp_path):
    write_dir(tmp_path, matrix=False, contour=False, series=False, tables=False)
    figures.nested_cc(tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "<img" not in page and "<table" not in page
    assert "Not drawn" in page and "table3.csv" in page and "no sweep table" in page


def test_cli_partial_dir_and_unusable_table(tmp_path):
    write_dir(tmp_path, matrix=False, series=False)
    # a contour table without coordinates: skipped with a note, the rest still drawn
    contour_df().drop(columns=["server_link.rtt_ms", "paths.0.rtt_ms"]).to_parquet(
        tmp_path / "contour" / "fig05" / "runs.parquet", index=False)
    figures.nested_cc(tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "KeyError" in page and "contour needs" in page
    assert page.count("<table class") == 2
    assert not os.path.exists(tmp_path / "figures") or not any(
        p.startswith("contour_fig05") for p in os.listdir(tmp_path / "figures"))


def test_module_entry_point_and_light_package(tmp_path):
    env = {**os.environ, "PYTHONPATH": PYTHON_DIR}
    code = "import sys, braid; assert 'matplotlib' not in sys.modules and 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    out = subprocess.run([sys.executable, "-m", "braid.figures", "nested-cc", str(tmp_path)],
                         check=True, env=env, capture_output=True, text=True)
    assert out.stdout.strip() == str(tmp_path / "index.html")
    assert "skipped" in out.stderr


def test_cli_contour_panels_per_extra_axis(tmp_path):
    # a buffer axis in the contour table (Figure 8c's columns) is a panel each, not pooled;
    # the columns it sets are not panels of their own
    a, b = contour_df(points=12, combos=("cubic/bbr",)), contour_df(points=12, combos=("cubic/bbr",))
    for df, pkts in ((a, 250), (b, 1000)):
        df.insert(1, "buffer", pkts)
        df.insert(2, "paths.0.buffer_pkts", pkts)
        df.insert(3, "paths.1.buffer_pkts", pkts)
    both = pd.concat([a, b], ignore_index=True)
    both["goodput_mbps"] += np.where(both["buffer"] == 250, -30.0, 0.0)
    os.makedirs(tmp_path / "contour")
    both.to_parquet(tmp_path / "contour" / "runs.parquet", index=False)
    assert figures._extra_axes(both) == ["buffer"]
    fig = figures.contour(both, by=["combination", "tunnel.scheduler"] + figures._extra_axes(both))
    assert [a.get_title() for a in visible_axes(fig)] == ["cubic/bbr, CPF, buffer 250 pkts", "cubic/bbr, CPF, buffer 1000 pkts"]
    figures.nested_cc(tmp_path, strict=True, dpi=50)
    # an older folder's single contour/ sweep is one batch
    assert os.path.exists(tmp_path / "figures" / "contour_contour_goodput.png")
