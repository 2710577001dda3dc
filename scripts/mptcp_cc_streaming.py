#!/usr/bin/env python3
"""MPTCP's coupled controllers under Reno, Cubic and BBR end to end and under a constant-rate
stream, after Łuczak et al. 2023 (Future Internet 15(10), 328): the table of
docs/validation.md, "MPTCP's coupled CCs under Reno, Cubic and BBR". The paths and the tunnel
(our choices; the paper gives no link figures) are in the spec's comment.

    braid sweep sweeps/mptcp-cc-streaming.toml --out out/mptcp-cc-streaming
    python3 scripts/mptcp_cc_streaming.py out/mptcp-cc-streaming

One row per tunnel CC and load; over the cell's repetitions: the protocol delay (tunnel entry to
in-order delivery) and the head-of-line wait in the reorder buffer as the mean of the runs'
means and the largest of their maxima, each path's smoothed RTT as a mean, the drop rate (the
scheduler's, the bottlenecks' and the reorder buffer's drops against packets sent) as a mean,
and the goodput as mean with a 95% confidence half-width (Student's t) and range. Reads the
journal (`runs.jsonl`) and the spec the folder keeps, so it needs no Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports, mean_ci_range


def drop_rate(r):
    sent = sum(p["packets_sent"] for p in r["paths"])
    d = r["drops"]
    dropped = d["scheduler"] + sum(d["bottleneck"]) + sum(d["bottleneck_aqm"]) + d["reorder"]
    return 100 * dropped / max(sent, 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    args = ap.parse_args()
    _, groups = cell_reports(args.dir)
    print("| tunnel CC / load | runs | protocol delay mean / max ms | HoL mean / max ms "
          "| SRTT path 1 ms | SRTT path 2 ms | drop rate | throughput Mbit/s mean ± 95% (range) |")
    print("|---|---|---|---|---|---|---|---|")
    for cell, runs in groups:
        label = f"{cell['tunnel.cc']} / {cell['load']}"
        if not runs:
            print(f"| {label} | 0 | - | - | - | - | - | - |")
            continue
        mean = lambda f: statistics.mean(f(r) for r in runs)
        top = lambda f: max(f(r) for r in runs)
        print(f"| {label} | {len(runs)} "
              f"| {mean(lambda r: r['protocol_delay_ms']['mean']):.1f} / "
              f"{top(lambda r: r['protocol_delay_ms']['max']):.0f} "
              f"| {mean(lambda r: r['hol_ms']['mean']):.2f} / {top(lambda r: r['hol_ms']['max']):.0f} "
              f"| {mean(lambda r: r['paths'][0]['srtt_ms_mean']):.0f} "
              f"| {mean(lambda r: r['paths'][1]['srtt_ms_mean']):.0f} "
              f"| {mean(drop_rate):.2f}% "
              f"| {mean_ci_range([r['goodput_mbps'] for r in runs])} |")


if __name__ == "__main__":
    main()
