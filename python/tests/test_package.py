"""The Python package against the command line and a real Dask cluster: `braid.simulate`
matches `braid sim --json` field by field, the series has one row per sample and path, a sweep
on a LocalCluster with two worker processes equals the local sweep row by row, bad input
raises with the CLI's message, and the time-series figures draw from a SimResult.

Needs the native module (`make python`) and the `braid` binary that `cargo test` builds
(target/debug/braid, or $BRAID)."""

import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

import braid
from plot_checks import assert_png, save

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT = os.path.join(ROOT, "scenarios", "default.toml")
SMALL = {"e2e.bytes": 3_000_000}


def cli():
    """The `braid` binary: $BRAID, else the newest of target/{debug,release}/braid."""
    if "BRAID" in os.environ:
        return os.environ["BRAID"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    found = [os.path.join(target, p, "braid") for p in ("debug", "release")]
    found = [p for p in found if os.path.isfile(p)]
    if not found:
        pytest.fail(f"no braid binary under {target}/debug or /release: run `cargo build -p braid` (or set BRAID)")
    return max(found, key=os.path.getmtime)


def run_cli(*args):
    return subprocess.run([cli(), *args], capture_output=True, text=True, timeout=600)


def without_wall_time(report):
    return {k: v for k, v in report.items() if k != "wall_s"}


def test_simulate_matches_braid_sim_json_field_by_field():
    sets = {**SMALL, "tunnel.scheduler": "srtt", "paths.1.rtt_ms": 60}
    r = braid.simulate(DEFAULT, set=sets, seed=7, baseline=True)
    args = ["sim", DEFAULT, "--json", "--baseline", "--seed", "7"]
    for k, v in sets.items():
        args += ["--set", f"{k}={v}"]
    done = run_cli(*args)
    assert done.returncode == 0, done.stderr
    want = json.loads(done.stdout)
    assert without_wall_time(r.summary) == without_wall_time(want)
    # The seed and the overrides took effect (not the scenario's defaults).
    assert "seed = 7" in r.scenario
    assert r.summary["relative_dlct"] == pytest.approx(r.summary["dlct_s"] / r.summary["baseline_dlct_s"])


def test_series_has_one_row_per_sample_and_path():
    r = braid.simulate(DEFAULT, set={**SMALL, "sim.sample_interval_ms": 20})
    s = r.series
    paths = [p["name"] for p in r.summary["paths"]]
    for column in ("t_s", "path", "path_index", "cwnd_bytes", "in_flight_bytes", "srtt_ms",
                   "pacing_rate_mbps", "queue_pkts", "phase", "drops", "e2e_cwnd_bytes",
                   "e2e_srtt_ms", "e2e_pacing_mbps", "sched_queue_pkts", "reorder_pkts",
                   "acpf_fraction"):
        assert column in s.columns, column
    times = np.sort(s["t_s"].unique())
    assert len(s) == len(times) * len(paths)
    assert (s.groupby("t_s")["path"].apply(list) == pd.Series([paths] * len(times), index=times)).all()
    assert np.allclose(np.diff(times), 0.020)
    # The run's last sample is near its end; the windows are real numbers of bytes.
    assert times[-1] <= r.summary["dlct_s"] + 0.02
    assert (s["cwnd_bytes"] > 0).all() and s["e2e_cwnd_bytes"].max() > 14_480
    assert s["acpf_fraction"].dtype == float  # missing values are NaN, not None
    # Throughput bins: one row per bin and path. The bins count whole tunnel frames (inner
    # packet, tunnel header, link framing), the report the inner packets: a few percent more.
    t = r.throughput
    assert len(t) == t["t_s"].nunique() * len(paths)
    bin_s = t["t_s"].drop_duplicates().diff().dropna().iloc[0]
    for i, name in enumerate(paths):
        frames = t[t["path"] == name]["mbps"].sum() * bin_s * 1e6 / 8
        inner = r.summary["paths"][i]["bytes"]
        assert inner < frames < 1.10 * inner, (name, frames, inner)


def test_simulate_releases_the_gil_while_rust_simulates():
    import threading
    import time

    span = {}

    def simulate():
        span["start"] = time.perf_counter()
        braid.simulate(DEFAULT, set={"e2e.bytes": 100_000_000})
        span["end"] = time.perf_counter()

    worker = threading.Thread(target=simulate)
    worker.start()
    ticks = []
    while worker.is_alive():  # Python code: runs only while the other thread lets go of the GIL
        ticks.append(time.perf_counter())
    worker.join()
    d = span["end"] - span["start"]
    middle = [t for t in ticks if span["start"] + 0.25 * d < t < span["end"] - 0.25 * d]
    assert d > 0.02 and len(middle) > 100, f"{len(middle)} ticks of this thread in the middle of a {d:.3f} s simulation"


def test_bad_input_raises_the_message_the_cli_prints():
    with pytest.raises(braid.BraidError) as e:
        braid.simulate(DEFAULT, set={"tunnel.bogus": 1})
    done = run_cli("sim", DEFAULT, "--set", "tunnel.bogus=1")
    assert done.returncode != 0
    assert done.stderr.strip() == f"error: {e.value}"
    assert "tunnel.bogus" in str(e.value)
    # A value out of range names the field and the range.
    with pytest.raises(ValueError) as e:
        braid.simulate(DEFAULT, set={"paths.0.rate_mbps": -5})
    done = run_cli("sim", DEFAULT, "--set", "paths.0.rate_mbps=-5")
    assert done.stderr.strip() == f"error: {e.value}"
    with pytest.raises(TypeError, match="set\\['e2e.bytes'\\]"):
        braid.simulate(DEFAULT, set={"e2e.bytes": object()})
    with pytest.raises(ValueError, match="seed"):
        braid.simulate(DEFAULT, seed=-1)


def write_spec(tmp_path, text):
    spec = tmp_path / "spec.toml"
    spec.write_text(f'base = "{DEFAULT}"\n' + text)
    return spec


SPEC = """reps = 2
baseline = true
[set]
"e2e.bytes" = 2000000
[axes]
"e2e.cc" = ["cubic", "bbr"]
"tunnel.scheduler" = ["cpf", "srtt"]
"""


def test_sweep_matches_the_cli_and_bad_specs_raise_its_message(tmp_path):
    spec = write_spec(tmp_path, SPEC)
    df = braid.sweep(spec, out=tmp_path / "py", jobs=2)
    done = run_cli("sweep", str(spec), "--out", str(tmp_path / "cli"), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    pd.testing.assert_frame_equal(df, braid.load(tmp_path / "cli"))
    assert len(df) == 8 and (df["status"] == "ok").all()
    assert df.attrs["sweep"]["rows"] == 8
    bad = write_spec(tmp_path, SPEC.replace('"tunnel.scheduler"', '"tunnel.schedular"'))
    with pytest.raises(braid.BraidError) as e:
        braid.sweep(bad, out=tmp_path / "bad")
    done = run_cli("sweep", str(bad), "--out", str(tmp_path / "bad-cli"))
    assert done.stderr.strip() == f"error: {e.value}"


def test_sweep_on_a_local_cluster_equals_the_local_sweep(tmp_path):
    distributed = pytest.importorskip("distributed")  # in python/requirements.txt: never skipped in make test
    spec = write_spec(tmp_path, SPEC)
    local = braid.sweep(spec, out=tmp_path / "local", jobs=1)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pids = set(client.run(os.getpid).values())
        assert len(pids) == 2 and os.getpid() not in pids, "two worker processes"
        spread = braid.sweep(spec, out=tmp_path / "cluster", client=client, chunk_size=3)
    pd.testing.assert_frame_equal(spread, local)
    with open(tmp_path / "local" / "runs.parquet", "rb") as a, open(tmp_path / "cluster" / "runs.parquet", "rb") as b:
        assert a.read() == b.read(), "the same table, byte for byte"
    assert spread.attrs["sweep"]["jobs"] == 2 and spread.attrs["sweep"]["ran"] == 8


def test_time_series_figures_draw_from_a_sim_result(tmp_path):
    r = braid.simulate(DEFAULT, set=SMALL)
    fig = braid.plot.throughput_over_time(r.throughput)
    assert fig.axes[0].get_ylabel() == "Throughput (Mbit/s)"
    assert_png(save(fig, tmp_path, "throughput.png"))
    fig = braid.plot.window_traces(r.series, r.throughput)
    labels = [a.get_ylabel() for a in fig.axes]
    assert labels[:3] == ["Throughput (Mbit/s)", "Live cwnd (kB)", "Server cwnd (kB)"], labels
    assert_png(save(fig, tmp_path, "windows.png"))
    # The long form pivots to the wide one of `braid sim --out`, value for value.
    wide = braid.plot.wide_trace(r.series)
    first = r.summary["paths"][0]["name"]
    assert (wide[f"{first}_cwnd_bytes"].to_numpy() == r.series[r.series["path_index"] == 0]["cwnd_bytes"].to_numpy()).all()


def test_shards_from_python_merge_into_the_local_table(tmp_path):
    """Plain job arrays: each task runs `braid.sweep(..., shard="I/N")` into its own folder, and
    `braid sweep --merge` joins them into the table a local sweep writes, byte for byte."""
    spec = write_spec(tmp_path, SPEC)
    braid.sweep(spec, out=tmp_path / "local", jobs=1)
    for i in (1, 2):
        part = braid.sweep(spec, out=tmp_path / f"s{i}", jobs=1, shard=f"{i}/2")
        assert len(part) == 4, f"shard {i}/2 holds half of the 8 runs"
    done = run_cli("sweep", str(spec), "--out", str(tmp_path / "all"),
                   "--merge", str(tmp_path / "s1"), "--merge", str(tmp_path / "s2"))
    assert done.returncode == 0, done.stderr
    with open(tmp_path / "local" / "runs.parquet", "rb") as a, open(tmp_path / "all" / "runs.parquet", "rb") as b:
        assert a.read() == b.read()
