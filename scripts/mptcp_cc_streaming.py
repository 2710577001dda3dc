#!/usr/bin/env python3
"""Coupled multipath CC for streaming, after Łuczak et al. 2023 (Future Internet 15(10), 328).

The paper ran MPTCP with LIA, OLIA, BALIA and wVegas over two LTE routers (one behind Ethernet,
one behind Wi-Fi 802.11bgn) and reported per algorithm the mean drop rate, the path delay
(SRTT), the protocol delay, the head-of-line (HoL) blocking degree and the throughput. Its text
gives no link figures, so the paths here are our choice, stated in docs/validation.md:

  path 1 "lte-eth":  30 Mbit/s down, 10 up, 50 ms RTT, 300-packet buffers, no random loss
  path 2 "lte-wifi": 20 Mbit/s down,  8 up, 70 ms RTT, 300-packet buffers, 0.1% random loss
                     (the Wi-Fi hop: 20 ms more and its residual loss)

MPTCP subflows are TCP, so the tunnel is reliable, scheduled by MinRTT (`srtt`, MPTCP's
default), and the receiver waits for gaps as MPTCP's in-order delivery does (a static 1 s wait
stands for "until the retransmission arrives"). Each tunnel CC is crossed with Reno (newreno),
Cubic and BBR end to end for a 50 MB bulk download, and runs a constant-rate 8 Mbit/s UDP stream
(a video-like load, where the end-to-end CC plays no part). Not part of the test suite; rerun:

    cargo build --release -p braid && python3 scripts/mptcp_cc_streaming.py
"""
import argparse

from braidsim import report

PATHS = [
    "paths.0.name=lte-eth", "paths.0.rate_mbps=30", "paths.0.uplink_rate_mbps=10",
    "paths.0.rtt_ms=50", "paths.0.buffer_pkts=300", "paths.0.uplink_buffer_pkts=300",
    "paths.1.name=lte-wifi", "paths.1.rate_mbps=20", "paths.1.uplink_rate_mbps=8",
    "paths.1.rtt_ms=70", "paths.1.buffer_pkts=300", "paths.1.uplink_buffer_pkts=300",
    "paths.1.loss=0.001",
]
TUNNEL = [
    "tunnel.reliability=reliable", "tunnel.scheduler=srtt", "tunnel.reorder=static",
    "tunnel.static_wait_ms=1000",
]


def row(label, r):
    sent = sum(p["packets_sent"] for p in r["paths"])
    d = r["drops"]
    dropped = d["scheduler"] + sum(d["bottleneck"]) + sum(d["bottleneck_aqm"]) + d["reorder"]
    p1, p2 = r["paths"]
    return (f"| {label} | {r['protocol_delay_ms']['mean']:.1f} / {r['protocol_delay_ms']['max']:.0f} "
            f"| {r['hol_ms']['mean']:.2f} / {r['hol_ms']['max']:.0f} "
            f"| {p1['srtt_ms_mean']:.0f} | {p2['srtt_ms_mean']:.0f} "
            f"| {100 * dropped / max(sent, 1):.2f}% | {r['goodput_mbps']:.1f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=50_000_000)
    ap.add_argument("--stream-mbps", type=float, default=8.0)
    ap.add_argument("--stream-seconds", type=float, default=30.0)
    ap.add_argument("--tunnel-cc", default="lia,olia,balia,wvegas")
    args = ap.parse_args()
    print("| tunnel CC / load | protocol delay mean / max ms | HoL mean / max ms "
          "| SRTT path 1 ms | SRTT path 2 ms | drop rate | throughput Mbit/s |")
    print("|---|---|---|---|---|---|---|")
    stream_bytes = int(args.stream_mbps * 1e6 / 8 * args.stream_seconds)
    for cc in args.tunnel_cc.split(","):
        for e2e in ["newreno", "cubic", "bbr"]:
            r = report(PATHS + TUNNEL + [f"tunnel.cc={cc}", f"e2e.cc={e2e}", f"e2e.bytes={args.bytes}"])
            print(row(f"{cc} / {e2e} bulk", r), flush=True)
        r = report(PATHS + TUNNEL + [
            f"tunnel.cc={cc}", "e2e.kind=udp", f"e2e.udp_rate_mbps={args.stream_mbps}",
            "e2e.udp_packet_bytes=1300", f"e2e.bytes={stream_bytes}",
        ])
        print(row(f"{cc} / {args.stream_mbps:g} Mbit/s stream", r), flush=True)


if __name__ == "__main__":
    main()
