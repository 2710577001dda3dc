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
    coupled_cc("coupled_cubic", "coupled_cubic", "Coupled CUBIC (Lee et al. 2023): CUBIC or LIA behaviour by BDP"),
    {
        "name": "acpf",
        "title": "ACPF (Pieska et al. 2021): the shared live-cwnd fraction follows the scheduler queue",
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


# Schedulers with their own rule each. The cheap path (cost 1) is the slow one, 100 ms RTT, so
# cost and RTT disagree; 70 Mbit/s of UDP needs both 50 Mbit/s paths.
PRIORITY = ["e2e.kind=udp", "e2e.udp_rate_mbps=70", "e2e.bytes=40000000", "paths.0.cost=2",
            "paths.1.cost=1", "paths.1.rtt_ms=100"]
# The heterogeneous case of docs/algorithms.md: path 2 at 5 Mbit/s and 100 ms, a 200-packet
# reorder buffer, a 20 MB Cubic download.
HETERO = ["paths.1.rate_mbps=5", "paths.1.rtt_ms=100", "tunnel.reorder_buffer_pkts=200",
          "e2e.bytes=20000000"]
# Receiver and reliability figures: greedy-free UDP (no end-to-end control loop), 1% or 2%
# Bernoulli loss on path 1, unreliable unless the run says otherwise.
REORDER = ["e2e.kind=udp", "e2e.udp_rate_mbps=60", "e2e.bytes=30000000", "tunnel.scheduler=rr",
           "paths.0.loss=0.01"]
RELIABILITY = ["e2e.kind=udp", "e2e.udp_rate_mbps=30", "e2e.bytes=20000000", "paths.0.loss=0.02",
               "tunnel.reorder=static", "tunnel.static_wait_ms=25"]
# Gilbert-Elliott with bursts of 1/r = 10 packets, all lost (h = 0), entered with p = 0.001 per
# packet: stationary P(bad) = p / (p + r) = 0.0099, the Bernoulli run's loss rate.
GE = 'paths.0.loss={ model = "gilbert_elliott", p = 0.001, r = 0.1, h = 0.0, k = 1.0 }'

FIGURES += [
    {
        "name": "sched_priority",
        "title": "CPF, SRTT, round robin: 70 Mbit/s UDP, path 1 20 ms (cost 2), path 2 100 ms (cost 1)",
        "scenario": "scenarios/default.toml",
        "set": PRIORITY,
        "until": 5.0,
        "runs": {s: [f"tunnel.scheduler={s}"] for s in ("cpf", "srtt", "rr")},
        "axes": [
            [("throughput.csv:wifi_mbps", "path 1 (20 ms)", 1.0, s),
             ("throughput.csv:cellular_mbps", "path 2 (100 ms)", 1.0, s)]
            for s in ("cpf", "srtt", "rr")
        ],
        "ylabels": ["Mbit/s"] * 3,
        "panel_titles": ["CPF: the cheap path full, the rest spills to path 1",
                         "SRTT: the low-RTT path full, the rest spills to path 2",
                         "round robin: equal shares"],
        "height": 5.4,
    },
    {
        "name": "sched_arrival",
        "title": "SRTT, OTIAS, BLEST, ECF: Cubic 20 MB, path 1 50 Mbit/s 20 ms, path 2 5 Mbit/s 100 ms",
        "scenario": "scenarios/default.toml",
        "set": HETERO,
        "until": 4.6,
        "runs": {s: [f"tunnel.scheduler={s}"] for s in ("srtt", "otias", "blest", "ecf")},
        "axes": [
            [("throughput.csv:cellular_mbps", s, 1.0, s) for s in ("srtt", "otias", "blest", "ecf")],
            [("reorder_pkts", s, 1.0, s) for s in ("srtt", "otias", "blest", "ecf")],
        ],
        "ylabels": ["path 2 Mbit/s", "reorder buffer (pkts)"],
        "height": 4.4,
    },
    {
        # ECF's own rule needs a queue: 52 Mbit/s of UDP against a 50 Mbit/s fast path keeps
        # packets waiting, and the 200 ms slow path would deliver them later than the fast
        # path's next windows do, so ECF waits where SRTT sends.
        "name": "sched_wait",
        "title": "Waiting for the fast path: 52 Mbit/s UDP, path 1 50 Mbit/s 20 ms, path 2 5 Mbit/s 200 ms",
        "scenario": "scenarios/default.toml",
        "set": ["e2e.kind=udp", "e2e.udp_rate_mbps=52", "e2e.bytes=30000000",
                "paths.1.rate_mbps=5", "paths.1.rtt_ms=200"],
        "until": 5.3,
        "runs": {s: [f"tunnel.scheduler={s}"] for s in ("srtt", "otias", "blest", "ecf")},
        "axes": [
            [("throughput.csv:cellular_mbps", s, 1.0, s) for s in ("srtt", "otias", "blest", "ecf")],
            [("hol_ms_mean", s, 1.0, s) for s in ("srtt", "otias", "blest", "ecf")],
            [("sched_queue_pkts", s, 1.0, s) for s in ("srtt", "otias", "blest", "ecf")],
        ],
        "ylabels": ["path 2 Mbit/s", "mean HoL wait (ms)", "scheduler queue (pkts)"],
        "height": 5.8,
    },
    {
        "name": "redundant",
        "title": "Redundant scheduler: every packet on every path with room (UDP, default paths)",
        "scenario": "scenarios/default.toml",
        "set": ["e2e.kind=udp", "tunnel.scheduler=redundant"],
        "until": 4.0,
        "runs": {"light": ["e2e.udp_rate_mbps=20", "e2e.bytes=10000000"],
                 "full": ["e2e.udp_rate_mbps=120", "e2e.bytes=60000000"]},
        "axes": [
            [("throughput.csv:goodput_mbps", "goodput", 1.0, r),
             ("throughput.csv:wifi_mbps", "path 1 (20 ms)", 1.0, r),
             ("throughput.csv:cellular_mbps", "path 2 (40 ms)", 1.0, r)]
            for r in ("light", "full")
        ],
        "ylabels": ["Mbit/s", "Mbit/s"],
        "panel_titles": ["20 Mbit/s offered: both paths carry every packet",
                         "120 Mbit/s offered: each path carries what it has room for"],
        "height": 4.4,
    },
    {
        "name": "reorder",
        "title": "Receiver policies: 60 Mbit/s UDP, round robin, 1% loss on path 1 (20 vs 40 ms RTT)",
        "scenario": "scenarios/default.toml",
        "set": REORDER,
        "until": 3.0,
        "runs": {
            "none": ["tunnel.reorder=none"],
            "static": ["tunnel.reorder=static"],
            "adaptive": ["tunnel.reorder=adaptive"],
            "adaptive+fast loss": ["tunnel.reorder=adaptive", "tunnel.fast_loss_detection=true"],
            "adaptive+equalise": ["tunnel.reorder=adaptive", "tunnel.equalize_delay=true"],
        },
        "axes": [
            [("wait_limit_ms", "static", 1.0, "static"), ("wait_limit_ms", "adaptive", 1.0, "adaptive")],
            [("hol_ms_mean", r, 1.0, r, "avg10") for r in
             ("none", "static", "adaptive", "adaptive+fast loss", "adaptive+equalise")],
            [("released_on_timeout", "adaptive: on the wait limit", 1.0, "adaptive"),
             ("released_on_timeout", "adaptive+fast loss: on the wait limit", 1.0, "adaptive+fast loss"),
             ("released_on_fast_loss", "adaptive+fast loss: on fast loss", 1.0, "adaptive+fast loss")],
        ],
        "ylabels": ["wait limit (ms)", "HoL, 100 ms mean (ms)", "gap releases"],
        "height": 5.4,
    },
    {
        "name": "reliability",
        "title": "Tunnel reliability: 30 Mbit/s UDP on path 1 (CPF), 2% loss, static 25 ms wait",
        "scenario": "scenarios/default.toml",
        "set": RELIABILITY,
        "until": 3.0,
        "runs": {r: [f"tunnel.reliability={r}"] for r in ("unreliable", "reliable", "partial")},
        "axes": [
            [("tunnel_retransmissions", r, 1.0, r) for r in ("unreliable", "reliable", "partial")],
            [("released_on_timeout", r, 1.0, r) for r in ("unreliable", "reliable", "partial")],
            [("hol_ms_max", r, 1.0, r) for r in ("unreliable", "reliable", "partial")],
        ],
        "ylabels": ["retransmissions", "gaps given up", "max HoL (ms)"],
        "height": 5.4,
    },
    {
        # BBR end to end over reliable BBR tunnels (the TCP tunnels of Pieska et al. 2024), 1% loss on path 1:
        # with the adaptive wait alone the receiver gives up what path 1 is repairing.
        "name": "repair_wait",
        "title": "Repair wait: BBR over reliable BBR tunnels, 1% loss on path 1, 30 MB",
        "scenario": "scenarios/default.toml",
        "set": ["e2e.cc=bbr", "tunnel.cc=bbr", "tunnel.reliability=reliable",
                "paths.0.loss=0.01", "e2e.bytes=30000000"],
        "until": 6.6,
        "runs": {"adaptive wait": [], "adaptive + repair wait 200 ms": ["tunnel.repair_wait_ms=200"]},
        "axes": [
            [("released_on_timeout", r, 1.0, r) for r in ("adaptive wait", "adaptive + repair wait 200 ms")],
            [("hol_ms_max", r, 1.0, r) for r in ("adaptive wait", "adaptive + repair wait 200 ms")],
            [("throughput.csv:goodput_mbps", r, 1.0, r, "cumsum")
             for r in ("adaptive wait", "adaptive + repair wait 200 ms")],
        ],
        "ylabels": ["gaps given up", "max HoL (ms)", "delivered (MB)"],
        "height": 5.4,
    },
    {
        "name": "droptail",
        "title": "Drop-tail FIFO (100 packets) at path 1: NewReno tunnel, 120 Mbit/s UDP, CPF",
        "scenario": "scenarios/default.toml",
        "set": UDP + ["tunnel.cc=newreno"] + SMALL_BUFFER,
        "until": 8.0,
        "axes": [
            [("wifi_queue_pkts", "path 1 queue", 1.0), ("wifi_cwnd_bytes", "path 1 cwnd", 1 / PKT)],
            [("wifi_drops", "path 1 drops per 10 ms", 1.0, "", "diff")],
        ],
        "ylabels": ["packets", "drops"],
        "height": 4.0,
    },
    {
        "name": "random_loss",
        "title": "Random loss at path 1, both 0.99% in the long run: 30 Mbit/s UDP, CPF",
        "scenario": "scenarios/default.toml",
        "set": ["e2e.kind=udp", "e2e.udp_rate_mbps=30", "e2e.bytes=20000000"],
        "until": 4.0,
        "runs": {"bernoulli": ["paths.0.loss=0.0099"], "ge": [GE]},
        "axes": [
            [("wifi_drops", "Bernoulli p = 0.0099", 1.0, "bernoulli", "diff")],
            [("wifi_drops", "Gilbert-Elliott p = 0.001, r = 0.1, h = 0, k = 1", 1.0, "ge", "diff")],
        ],
        "ylabels": ["drops / 10 ms", "drops / 10 ms"],
        "style": "stem",
        "height": 4.0,
    },
]


def run(fig, sets, out_dir):
    cmd = braidsim.command(fig["set"] + sets, fig["scenario"], ["--out", out_dir])
    print("$", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    tables = {}
    for name in ("trace.csv", "throughput.csv"):
        with open(os.path.join(out_dir, name), newline="") as f:
            tables[name] = list(csv.DictReader(f))
    return tables


def points(rows, col, scale, op, until):
    """(t, value) pairs of one column. op "diff" turns a running counter into the increase
    per sample; "cumsum" turns Mbit/s per bin into MB so far; "avg10" averages the last 10
    non-empty samples (100 ms of the 10 ms trace)."""
    pts = []
    prev = 0.0
    total = 0.0
    for i, r in enumerate(rows):
        t = float(r["t_s"])
        if t > until or r[col] == "":
            continue
        v = float(r[col])
        if op == "diff":
            v, prev = v - prev, v
        elif op == "cumsum":
            dt = float(rows[1]["t_s"]) - float(rows[0]["t_s"])
            total += v * dt / 8.0
            v = total
        pts.append((t, v * scale))
    if op == "avg10":
        vals = [p[1] for p in pts]
        pts = [(t, sum(vals[max(0, i - 9):i + 1]) / len(vals[max(0, i - 9):i + 1]))
               for i, (t, _) in enumerate(pts)]
    return pts


def draw(fig, runs):
    n = len(fig["axes"])
    height = fig.get("height", 2.6 * n + 0.6)
    _, axes = plt.subplots(n, 1, figsize=(9, height), sharex=True, squeeze=False)
    titles = fig.get("panel_titles", [None] * n)
    for ax, series, ylabel, sub in zip(axes[:, 0], fig["axes"], fig["ylabels"], titles):
        for spec in series:
            col, label, scale = spec[:3]
            run_name = spec[3] if len(spec) > 3 else ""
            op = spec[4] if len(spec) > 4 else None
            table, _, col = col.rpartition(":")
            pts = points(runs[run_name][table or "trace.csv"], col, scale, op, fig["until"])
            style = fig.get("style", "line")
            if style == "stem":
                ax.vlines([p[0] for p in pts if p[1]], 0, [p[1] for p in pts if p[1]], label=label,
                          linewidth=1, color=f"C{series.index(spec)}")
            else:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, linewidth=1)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=7)
        if sub:
            ax.set_title(sub, fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    axes[0, 0].set_title(fig["title"] + ("\n" + titles[0] if titles[0] else ""), fontsize=9)
    plt.tight_layout()
    path = os.path.join(ROOT, "docs", "figures", f"{fig['name']}.png")
    plt.savefig(path, dpi=fig.get("dpi", 90))
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
        runs = {}
        for run_name, sets in fig.get("runs", {"": []}).items():
            with tempfile.TemporaryDirectory() as d:
                runs[run_name] = run(fig, sets, d)
        draw(fig, runs)


if __name__ == "__main__":
    main()
