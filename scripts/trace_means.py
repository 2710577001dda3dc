#!/usr/bin/env python3
"""Means of a `braid sim --out DIR` trace over t > --after seconds, in packets.

Used by docs/validation.md to explain a result from cwnd, in-flight and queue levels:

    braid sim scenarios/default.toml --set keys=SHORT+DIST --out /tmp/run
    python3 scripts/trace_means.py /tmp/run

E2E columns are divided by the MSS (1448 bytes), tunnel columns by the tunnel's wire packet
(1448 + 52 + 60 = 1560 bytes would be exact for a full segment plus TCP/IP and tunnel headers;
we divide by --tunnel-pkt, default 1560). Queues are already in packets.
"""
import argparse
import csv
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="+", help="directories written by braid sim --out")
    ap.add_argument("--after", type=float, default=3.0, help="ignore samples before this time (s)")
    ap.add_argument("--mss", type=float, default=1448.0)
    ap.add_argument("--tunnel-pkt", type=float, default=1560.0)
    args = ap.parse_args()
    cols = [
        ("E2E cwnd", "e2e_cwnd_bytes", args.mss),
        ("E2E in flight", "e2e_in_flight_bytes", args.mss),
        ("path 1 cwnd", "wifi_cwnd_bytes", args.tunnel_pkt),
        ("path 1 in flight", "wifi_in_flight_bytes", args.tunnel_pkt),
        ("path 2 in flight", "cellular_in_flight_bytes", args.tunnel_pkt),
        ("path 1 queue", "wifi_queue_pkts", 1.0),
        ("path 2 queue", "cellular_queue_pkts", 1.0),
    ]
    print("| run | " + " | ".join(c[0] for c in cols) + " |")
    print("|---|" + "---|" * len(cols))
    for d in args.dirs:
        with open(f"{d}/trace.csv", newline="") as f:
            rows = [r for r in csv.DictReader(f) if float(r["t_s"]) > args.after]
        if not rows:
            sys.exit(f"{d}: no samples after {args.after} s")
        means = [sum(float(r[key]) for r in rows) / len(rows) / unit for _, key, unit in cols]
        print(f"| {d} | " + " | ".join(f"{m:.0f}" for m in means) + " |")


if __name__ == "__main__":
    main()
