#!/usr/bin/env python3
"""LIA vs Coupled CUBIC on a high-BDP plus a low-BDP path, after Lee et al. 2023 (Coupled CUBIC).

The paper's testbed: subflow 1 over 500 Mbit/s with 100 ms delay, subflow 2 over 100 Mbit/s
(20 ms), buffers of about one BDP, packet error rate about 1e-6, iperf for 1000 s. Here: the
tunnel's two paths with those rates, 100 ms and 20 ms RTTs, buffers of one BDP (4200 and 170
packets), Bernoulli loss 1e-6 on both, carrying greedy UDP (700 Mbit/s offered) so the tunnel's
controller alone decides the rates, with the SRTT (MinRTT) scheduler as MPTCP's default, for
--seconds of traffic. The paper also ran a competing single-path TCP on subflow 2's path; Braid's
topology has no cross traffic yet, so that part is not reproduced.

    cargo build --release -p braid
    python3 scripts/coupled_cubic.py [--seconds 200]
"""
import argparse

from braidsim import report


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=200.0)
    args = ap.parse_args()
    offered = 700.0
    nbytes = int(offered * 1e6 / 8 * args.seconds)
    print("| tunnel CC | path 1 (500 Mbit/s, 100 ms) | utilisation | path 2 (100 Mbit/s, 20 ms) | utilisation | total |")
    print("|---|---|---|---|---|---|")
    for cc in ["lia", "coupled_cubic", "cubic", "newreno"]:
        sets = [
            "e2e.kind=udp", f"e2e.udp_rate_mbps={offered}", f"e2e.bytes={nbytes}",
            f"sim.max_time_s={args.seconds * 3}",
            "paths.0.rate_mbps=500", "paths.0.rtt_ms=100", "paths.0.buffer_pkts=4200",
            "paths.1.rate_mbps=100", "paths.1.rtt_ms=20", "paths.1.buffer_pkts=170",
            "paths.0.uplink_rate_mbps=500", "paths.1.uplink_rate_mbps=100",
            "paths.0.loss=0.000001", "paths.1.loss=0.000001",
            "server_link.rtt_ms=0.1", "tunnel.scheduler=srtt", f"tunnel.cc={cc}",
        ]
        r = report(sets)
        p1, p2 = r["paths"][0]["mean_mbps"], r["paths"][1]["mean_mbps"]
        print(f"| {cc} | {p1:.0f} Mbit/s | {p1 / 500 * 100:.0f}% | {p2:.0f} Mbit/s | {p2 / 100 * 100:.0f}% | {p1 + p2:.0f} Mbit/s |")


if __name__ == "__main__":
    main()
