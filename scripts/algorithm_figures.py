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


FIGURES = [
    tunnel_cc("newreno", "newreno", "NewReno tunnel (RFC 5681/6582): slow start, then the AIMD sawtooth",
              extra=SMALL_BUFFER),
    tunnel_cc("cubic", "cubic", "CUBIC tunnel (RFC 9438): beta = 0.7 cut, concave regrowth to W_max, convex probing",
              extra=SMALL_BUFFER),
    tunnel_cc("bbr", "bbr", "BBRv1 tunnel (tcp_bbr.c): Startup, Drain, ProbeBW gain cycle, ProbeRTT every 10 s", seconds=14.0),
]


def braid_binary():
    if "BRAID" in os.environ:
        return os.environ["BRAID"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "braid")


def run(fig, out_dir):
    cmd = [braid_binary(), "sim", os.path.join(ROOT, fig["scenario"]), "--out", out_dir]
    for s in fig["set"]:
        cmd += ["--set", s]
    print("$", " ".join(cmd[0:1] + [fig["scenario"]] + cmd[3:5] + [f"--set {s}" for s in fig["set"]]), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out_dir, "trace.csv"), newline="") as f:
        return list(csv.DictReader(f))


def draw(fig, rows):
    rows = [r for r in rows if float(r["t_s"]) <= fig["until"]]
    t = [float(r["t_s"]) for r in rows]
    n = len(fig["axes"])
    _, axes = plt.subplots(n, 1, figsize=(9, 2.6 * n + 0.6), sharex=True, squeeze=False)
    for ax, series, ylabel in zip(axes[:, 0], fig["axes"], fig["ylabels"]):
        for col, label, scale in series:
            ax.plot(t, [float(r[col]) * scale for r in rows], label=label, linewidth=1)
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
