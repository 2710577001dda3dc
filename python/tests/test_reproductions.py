"""Tests of the figures of `braid reproduce acpf` and `braid reproduce coupled-cubic` on small
synthetic tables shaped like theirs (no Rust binary needed): each plot writes a non-blank PNG
with the expected axes and values, and each page draws what exists and skips what does not."""

import json
import os
import re

import numpy as np
import pandas as pd
import pytest

from braid import figures
from plot_checks import assert_png, save, visible_axes


# ------------------------------------------------------------------------------ synthetic data


def goodput_table():
    rows = []
    for tunnel, rate in (("ccid5", 25), ("bbr", 50)):
        for delays in ("short", "long"):
            for e2e in ("newreno", "cubic", "bbr"):
                for sched, g in (("cpf", 1.0), ("acpf", 1.8)):
                    rows.append({"tunnel": tunnel, "tunnel_cc": tunnel, "rate_mbps": rate, "delays": delays,
                                 "e2e_cc": e2e, "scheduler": sched, "goodput_mbps_mean": rate * g * 0.95,
                                 "goodput_mbps_ci95": 1.5, "runs": 3, "failed": 0})
    return pd.DataFrame(rows)


def trace_df(labels=("fig4a_newreno_cpf", "fig4b_newreno_acpf"), paths=("wifi", "cellular")):
    t = np.arange(0, 3, 0.02)
    frames = []
    for k, label in enumerate(labels):
        frame = {"label": label, "t_s": t, "e2e_cwnd_bytes": 1e5 + 5e4 * t * (k + 1),
                 "acpf_fraction": np.nan if label.endswith("cpf") and not label.endswith("acpf") else 0.5 + 0.1 * np.sin(t)}
        for i, p in enumerate(paths):
            frame[f"{p}_cwnd_bytes"] = (i + 1) * 2e5 + 1e4 * np.cos(3 * t)
            frame[f"{p}_in_flight_bytes"] = 1e5
        frames.append(pd.DataFrame(frame))
    return pd.concat(frames, ignore_index=True)


def throughput_df(labels=("fig4a_newreno_cpf", "fig4b_newreno_acpf")):
    t = np.arange(0, 3, 0.1)
    frames = [pd.DataFrame({"label": label, "t_s": t, "goodput_mbps": 80 + 5 * k + 0 * t,
                            "wifi_mbps": 50 + 0 * t, "cellular_mbps": 35 + 5 * k + 0 * t})
              for k, label in enumerate(labels)]
    return pd.concat(frames, ignore_index=True)


def utilisation_table():
    rows = []
    for variant, cc, a1 in (("lia", "lia", 120.0), ("coupled_cubic", "coupled_cubic", 480.0),
                            ("cubic_single_path", "cubic", 470.0)):
        subflows = [("subflow1", 500, a1)] + ([] if variant.endswith("single_path") else [("subflow2", 100, 99.0)])
        for name, cap, rate in subflows:
            rows.append({"variant": variant, "tunnel_cc": cc, "subflow": name, "capacity_mbps": cap,
                         "throughput_mbps_mean": rate, "throughput_mbps_ci95": 3.0, "utilisation_mean": rate / cap,
                         "cwnd_pkts_mean": rate * 8, "runs": 2, "failed": 0})
        total = sum(r for _, _, r in subflows)
        rows.append({"variant": variant, "tunnel_cc": cc, "subflow": "total",
                     "capacity_mbps": sum(c for _, c, _ in subflows), "throughput_mbps_mean": total,
                     "throughput_mbps_ci95": 4.0, "utilisation_mean": total / sum(c for _, c, _ in subflows),
                     "cwnd_pkts_mean": np.nan, "runs": 2, "failed": 0})
    return pd.DataFrame(rows)


def acpf_contour_df(points=25):
    rng = np.random.default_rng(3)
    e2e, share = rng.uniform(5, 100, points), rng.uniform(0.05, 0.95, points)
    rows = []
    for sched in ("cpf", "acpf"):
        for i in range(points):
            rows.append({"run_id": len(rows), "tunnel.scheduler": sched, "point": i,
                         "server_link.rtt_ms": e2e[i] * (1 - share[i]), "paths.0.rtt_ms": e2e[i] * share[i],
                         "paths.1.rtt_ms": e2e[i] * share[i] + 10, "rep": 0, "seed": 1,
                         "goodput_mbps": 50 + (40 if sched == "acpf" else 40 * share[i]),
                         "e2e.cwnd_bytes_mean": 3e5 + 2e3 * e2e[i],
                         "tunnel.acpf_fraction_mean": 0.5 + 0.4 * share[i] if sched == "acpf" else None,
                         "status": "ok"})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------ ACPF plots


def test_goodput_bars_panels_bars_and_capacity_lines(tmp_path):
    table = goodput_table()
    fig = figures.goodput_bars(table)
    axes = visible_axes(fig)
    assert [a.get_title() for a in axes] == ["ccid5 tunnels, 25 Mbit/s per path", "bbr tunnels, 50 Mbit/s per path"]
    for ax in axes:
        assert ax.get_ylabel() == "Goodput (Mbit/s)"
        assert ax.get_xlabel() == "Delay set / E2E CC"
        assert len(ax.patches) == 6 * 2
        assert [t.get_text() for t in ax.get_xticklabels()][:2] == ["short / newreno", "short / cubic"]
    # bars are the means: the first CPF bar and the first ACPF bar of the CCID5 panel
    heights = sorted({round(p.get_height(), 6) for p in axes[0].patches})
    assert heights == [round(25 * 0.95, 6), round(25 * 1.8 * 0.95, 6)]
    lines = {round(ln.get_ydata()[0], 6) for ln in axes[1].lines if len(ln.get_ydata()) == 2 and ln.get_linestyle() in (":", "--")}
    assert lines == {50.0, 100.0}
    assert {t.get_text() for t in fig.legends[0].get_texts()} >= {"CPF", "ACPF"}
    assert_png(save(fig, tmp_path, "goodput.png"))


def test_window_traces_rows_columns_and_live_cwnd(tmp_path):
    trace, tput = trace_df(), throughput_df()
    fig = figures.window_traces(trace, tput)
    axes = visible_axes(fig)
    assert len(axes) == 3 * 2
    assert [axes[i].get_ylabel() for i in (0, 2, 4)] == ["Throughput (Mbit/s)", "Live cwnd (kB)", "Server cwnd (kB)"]
    assert axes[4].get_xlabel() == axes[5].get_xlabel() == "Time (s)"
    assert [axes[i].get_title(loc="left") for i in (0, 1)] == ["fig4a_newreno_cpf", "fig4b_newreno_acpf"]
    # CPF: live = raw, one line per path; ACPF: live = fraction x raw, plus the raw window dotted
    cpf_live, acpf_live = axes[2], axes[3]
    assert len(cpf_live.lines) == 2 and len(acpf_live.lines) == 4
    acpf = trace[trace.label == "fig4b_newreno_acpf"]
    want = acpf["wifi_cwnd_bytes"].to_numpy() * acpf["acpf_fraction"].to_numpy() / 1e3
    assert np.allclose(acpf_live.lines[0].get_ydata(), want)
    assert acpf_live.get_ylim() == cpf_live.get_ylim()  # one scale per row
    assert acpf_live.get_ylim()[1] >= 4e5 / 1e3
    labels = {t.get_text() for t in fig.legends[0].get_texts()}
    assert {"path 1 (wifi) live cwnd", "path 2 (cellular) raw cwnd", "server cwnd", "E2E goodput"} <= labels
    assert_png(save(fig, tmp_path, "windows.png"))


def test_window_traces_without_throughput_has_two_rows():
    fig = figures.window_traces(trace_df(labels=("one_acpf",)))
    axes = visible_axes(fig)
    assert [a.get_ylabel() for a in axes] == ["Live cwnd (kB)", "Server cwnd (kB)"]


def test_contour_of_the_new_report_columns(tmp_path):
    df = acpf_contour_df()
    fig = figures.contour(df[df["tunnel.scheduler"] == "acpf"], "tunnel.acpf_fraction_mean", by=["tunnel.scheduler"])
    colorbar = [a for a in fig.axes if a.get_label() == "<colorbar>"][0]
    assert colorbar.get_ylabel() == "ACPF live / raw cwnd (%)"
    fig2 = figures.contour(df, "e2e.cwnd_bytes_mean", by=["tunnel.scheduler"])
    assert [a.get_title() for a in visible_axes(fig2)] == ["CPF", "ACPF"]
    assert [a for a in fig2.axes if a.get_label() == "<colorbar>"][0].get_ylabel() == "Server cwnd (kB)"
    assert_png(save(fig2, tmp_path, "cwnd.png"))


# ------------------------------------------------------------------------------ Coupled CUBIC plots


def test_subflow_windows_in_packets(tmp_path):
    trace = trace_df(labels=("fig5_lia", "fig6_coupled_cubic"), paths=("subflow1", "subflow2"))
    fig = figures.subflow_windows(trace, packet_bytes=1000)
    axes = visible_axes(fig)
    assert len(axes) == 2 * 2
    assert [axes[i].get_ylabel() for i in (0, 2)] == ["subflow1 cwnd (packets)", "subflow2 cwnd (packets)"]
    assert axes[2].get_xlabel() == "Time (s)"
    lia = trace[trace.label == "fig5_lia"]
    assert np.allclose(axes[0].lines[0].get_ydata(), lia["subflow1_cwnd_bytes"].to_numpy() / 1000)
    assert [axes[i].get_title(loc="left") for i in (0, 1)] == ["fig5_lia", "fig6_coupled_cubic"]
    assert_png(save(fig, tmp_path, "subflows.png"))


def test_utilisation_bars_per_subflow_with_percent_labels(tmp_path):
    fig = figures.utilisation_bars(utilisation_table())
    (ax,) = visible_axes(fig)
    assert ax.get_ylabel() == "Throughput (Mbit/s)"
    assert ax.get_xlabel() == "Tunnel congestion control"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["lia", "coupled_cubic", "cubic_single_path"]
    heights = [p.get_height() for p in ax.patches if np.isfinite(p.get_height())]
    assert 120.0 in heights and 480.0 in heights and 579.0 in heights
    assert {"24%", "96%", "99%"} <= {t.get_text() for t in ax.texts}
    assert {t.get_text() for t in fig.legends[0].get_texts()} == {"subflow1", "subflow2", "total"}
    assert_png(save(fig, tmp_path, "utilisation.png"))


# ------------------------------------------------------------------------------ pages


def write_series(root, tput, trace):
    for label in dict.fromkeys(trace.label):
        d = root / "series" / label
        os.makedirs(d)
        tput[tput.label == label].drop(columns=["label"]).to_csv(d / "throughput.csv", index=False)
        trace[trace.label == label].drop(columns=["label"]).to_csv(d / "trace.csv", index=False)


def test_acpf_page(tmp_path):
    goodput_table().to_csv(tmp_path / "goodput.csv", index=False)
    pd.DataFrame({"tunnel": ["bbr"], "delays": ["short"], "e2e_cc": ["bbr"], "cpf_goodput_mbps": [47.0],
                  "acpf_goodput_mbps": [88.0], "acpf_gain_percent": [87.234]}).to_csv(tmp_path / "gain.csv", index=False)
    labels = tuple(f"fig4{c}_{cc}_{s}" for c, cc, s in (("a", "newreno", "cpf"), ("b", "newreno", "acpf"),
                                                           ("e", "bbr", "cpf"), ("f", "bbr", "acpf")))
    write_series(tmp_path, throughput_df(labels), trace_df(labels))
    os.makedirs(tmp_path / "contour")
    acpf_contour_df().to_parquet(tmp_path / "contour" / "runs.parquet", index=False)
    manifest = {"options": {"reps": 3, "bytes": 300e6, "buffer_pkts": 2000},
                "setup_note": "SETUP-NOTE: delays read as RTTs.", "series_note": "SERIES-NOTE.",
                "series": [{"label": labels[1], "figure": "4b", "e2e_cc": "newreno", "scheduler": "acpf"}],
                "contour": {"note": "CONTOUR-NOTE: path 2 at path 1 + 10 ms."}}
    (tmp_path / "reproduce.json").write_text(json.dumps(manifest))
    assert figures.main(["acpf", str(tmp_path), "--strict", "--dpi", "60"]) == 0
    pngs = sorted(os.listdir(tmp_path / "figures"))
    assert pngs == sorted(["fig05_goodput.png", "fig04ab_windows.png", "fig04ef_windows.png",
                           "fig06a_contour_goodput.png", "fig06b_contour_acpf_fraction.png",
                           "fig06cd_contour_server_cwnd.png"])
    for png in pngs:
        assert_png(tmp_path / "figures" / png, min_bytes=4000)
    page = (tmp_path / "index.html").read_text()
    assert sorted(re.findall(r'<img src="([^"]+)"', page)) == [f"figures/{p}" for p in pngs]
    for note in ("SETUP-NOTE", "SERIES-NOTE", "CONTOUR-NOTE", "300 MB", "87.234"):
        assert note in page, note
    assert "Not drawn" in page and "contour.csv" in page  # the contour table is missing: listed


def test_coupled_cubic_page(tmp_path):
    utilisation_table().to_csv(tmp_path / "utilisation.csv", index=False)
    labels = ("fig5_lia", "fig6_coupled_cubic")
    tput = throughput_df(labels).rename(columns={"wifi_mbps": "subflow1_mbps", "cellular_mbps": "subflow2_mbps"})
    write_series(tmp_path, tput, trace_df(labels, paths=("subflow1", "subflow2")))
    (tmp_path / "reproduce.json").write_text(json.dumps({"options": {"seconds": 60, "reps": 2},
                                                         "packet_bytes": 1500, "setup_note": "SETUP-NOTE."}))
    figures.coupled_cubic(tmp_path, strict=True, dpi=60)
    pngs = sorted(os.listdir(tmp_path / "figures"))
    assert pngs == ["fig05_windows.png", "fig06_windows.png", "fig07_throughput.png", "throughput_over_time.png"]
    page = (tmp_path / "index.html").read_text()
    assert "Runs last 60 s of traffic, not the paper&#x27;s 1000 s" in page
    assert "SETUP-NOTE" in page and "Not drawn" not in page
    assert page.count('<table class="dataframe data"') == 1


def test_pages_skip_missing_inputs(tmp_path):
    figures.acpf(tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "<img" not in page and "no goodput.csv" in page and "no series" in page
    figures.coupled_cubic(tmp_path)
    page = (tmp_path / "index.html").read_text()
    assert "<img" not in page and "no utilisation.csv" in page
    with pytest.raises(SystemExit):
        figures.main(["coupled-cubic", str(tmp_path / "nowhere")])
