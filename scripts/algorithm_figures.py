#!/usr/bin/env python3
"""Draws the figures of docs/algorithms.md from short simulations.

Each figure runs `braid sim` with a scenario and overrides, writes the traces with `--out`,
and plots columns of trace.csv (sampled every 10 ms) against time. Nothing is drawn from
fabricated data: every curve is a simulator trace, and the command that produced it is printed.

    pip install matplotlib
    cargo build --release -p braid
    python3 scripts/algorithm_figures.py            # all figures into docs/figures/
    python3 scripts/algorithm_figures.py cubic bbr  # only these

BRAID names the binary (default target/release/braid, or $CARGO_TARGET_DIR/release/braid).
"""
import csv
import os
import subprocess
import sys
import tempfile

import braidsim
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKT = 1560.0  # tunnel wire packet: 1448 payload + 52 TCP/IP + 60 tunnel header

# Greedy UDP at 120 Mbit/s over the default two paths with CPF saturates path 1 ("wifi"), so
# the tunnel controller of path 1 is always window- or rate-limited: its cwnd shows the
# algorithm's own dynamics.
UDP = ["e2e.kind=udp", "e2e.udp_rate_mbps=120", "e2e.bytes=250000000"]
# A 100-packet buffer (about 1.2 x the 83-packet BDP of path 1) makes loss-based cycles short
# enough to see several in a figure.
SMALL_BUFFER = ["paths.0.buffer_pkts=100"]


def tunnel_cc(name, cc, title, seconds=12.0, extra=()):
    return {
        "name": name,
        "title": title,
        "scenario": "scenarios/default.toml",
        "set": UDP + [f"tunnel.cc={cc}"] + list(extra),
        "until": seconds,
        "axes": [
            [("wifi_cwnd_bytes", "path 1 cwnd", 1 / PKT), ("wifi_in_flight_bytes", "path 1 in flight", 1 / PKT)],
            [("wifi_queue_pkts", "path 1 bottleneck queue", 1.0)],
        ],
        "ylabels": ["packets", "packets"],
    }


def coupled_cc(name, cc, title, seconds=20.0):
    """Both paths saturated (round robin, greedy UDP), 100-packet buffers: the coupled
    increase shows in how the two windows grow and share."""
    return {
        "name": name,
        "title": title,
        "scenario": "scenarios/default.toml",
        "set": UDP + [f"tunnel.cc={cc}", "tunnel.scheduler=rr", "paths.0.buffer_pkts=100",
                      "paths.1.buffer_pkts=100"],
        "until": seconds,
        "axes": [
            [("wifi_cwnd_bytes", "path 1 cwnd (20 ms)", 1 / PKT),
             ("cellular_cwnd_bytes", "path 2 cwnd (40 ms)", 1 / PKT)],
            [("wifi_queue_pkts", "path 1 queue", 1.0), ("cellular_queue_pkts", "path 2 queue", 1.0)],
        ],
        "ylabels": ["packets", "packets"],
    }


FIGURES = [
    tunnel_cc("newreno", "newreno", "NewReno tunnel (RFC 5681/6582): slow start, then the AIMD sawtooth",
              extra=SMALL_BUFFER),
    tunnel_cc("cubic", "cubic", "CUBIC tunnel (RFC 9438): beta = 0.7 cut, concave regrowth to W_max, convex probing",
              extra=SMALL_BUFFER),
    tunnel_cc("bbr", "bbr", "BBRv1 tunnel (tcp_bbr.c): Startup, Drain, ProbeBW gain cycle, ProbeRTT every 10 s", seconds=14.0),
    tunnel_cc("bbr2", "bbr2", "BBRv2 tunnel: ProbeBW DOWN/CRUISE/REFILL/UP, ProbeRTT every 5 s at half the BDP",
              seconds=14.0),
    tunnel_cc("bbr3", "bbr3", "BBRv3 tunnel: as BBRv2 with v3's gains; ProbeRTT every 5 s at half the BDP",
              seconds=14.0),
    coupled_cc("lia", "lia", "LIA (RFC 6356) on two saturated paths: coupled increase, Reno decrease"),
    coupled_cc("olia", "olia", "OLIA (Khalili et al. 2013): window shifts towards the best path"),
    coupled_cc("balia", "balia", "BALIA (Peng et al. 2016): balanced increase, decrease capped at 1.5 x"),
    coupled_cc("wvegas", "wvegas", "wVegas (Cao et al. 2012): per-path backlog targets, no loss needed"),
    coupled_cc("coupled_cubic", "coupled_cubic", "Coupled CUBIC (seed 003): CUBIC or LIA behaviour by BDP"),
    {
        "name": "acpf",
        "title": "ACPF (seed 004): the shared live-cwnd fraction follows the scheduler queue",
        "scenario": "scenarios/default.toml",
        "set": ["tunnel.scheduler=acpf", "e2e.cc=bbr", "e2e.bytes=100000000"],
        "until": 6.0,
        "axes": [
            [("acpf_fraction", "ACPF fraction", 1.0)],
            [("sched_queue_pkts", "scheduler queue", 1.0), ("wifi_queue_pkts", "path 1 bottleneck queue", 1.0)],
        ],
        "ylabels": ["fraction", "packets"],
    },
    {
        "name": "codel",
        "title": "CoDel (RFC 8289) at the bottlenecks (CDL1): Cubic end to end, NewReno tunnels",
        "scenario": "scenarios/default.toml",
        "set": ["keys=CDL1", "tunnel.cc=newreno", "e2e.cc=cubic", "e2e.bytes=100000000"],
        "until": 10.0,
        "axes": [
            [("wifi_queue_pkts", "path 1 queue", 1.0), ("cellular_queue_pkts", "path 2 queue", 1.0)],
            [("wifi_cwnd_bytes", "path 1 cwnd", 1 / PKT)],
        ],
        "ylabels": ["packets", "packets"],
    },
    {
        "name": "traces",
        "title": "Mahimahi capacity traces (traces/*.mahi): throughput per path, CPF, Cubic over BBR",
        "scenario": "scenarios/traces.toml",
        "set": [],
        "until": 20.0,
        "axes": [
            [("throughput.csv:wifi_mbps", "path 1 (wifi-var)", 1.0),
             ("throughput.csv:cellular_mbps", "path 2 (lte-var)", 1.0)],
        ],
        "ylabels": ["Mbit/s"],
    },
]


def run(fig, out_dir):
    cmd = braidsim.command(fig["set"], fig["scenario"], ["--out", out_dir])
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    tables = {}
    for name in ("trace.csv", "throughput.csv"):
        with open(os.path.join(out_dir, name), newline="") as f:
            tables[name] = list(csv.DictReader(f))
    return tables


def draw(fig, tables):
    n = len(fig["axes"])
    _, axes = plt.subplots(n, 1, figsize=(9, 2.6 * n + 0.6), sharex=True, squeeze=False)
    for ax, series, ylabel in zip(axes[:, 0], fig["axes"], fig["ylabels"]):
        for col, label, scale in series:
            table, _, col = col.rpartition(":")
            rows = [r for r in tables[table or "trace.csv"] if float(r["t_s"]) <= fig["until"]]
            pts = [(float(r["t_s"]), float(r[col]) * scale) for r in rows if r[col] != ""]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, linewidth=1)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    axes[0, 0].set_title(fig["title"], fontsize=10)
    plt.tight_layout()
    path = os.path.join(ROOT, "docs", "figures", f"{fig['name']}.png")
    plt.savefig(path, dpi=90)
    plt.close()
    print(path)


def main():
    wanted = set(sys.argv[1:])
    unknown = wanted - {f["name"] for f in FIGURES}
    if unknown:
        sys.exit(f"unknown figure(s) {sorted(unknown)}; known: {[f['name'] for f in FIGURES]}")
    os.makedirs(os.path.join(ROOT, "docs", "figures"), exist_ok=True)
    for fig in FIGURES:
        if wanted and fig["name"] not in wanted:
            continue
        with tempfile.TemporaryDirectory() as d:
            draw(fig, run(fig, d))


if __name__ == "__main__":
    main()
