#!/usr/bin/env python3
"""Pieska et al. 2024, Figures 2, 4, 5: proxy near vs. far from the user, CPF vs. SRTT.

Runs `braid sim` for NEAR and DIST placements at several end-to-end RTTs and prints a
Markdown table of relative DLCT (tunnel DLCT / single-path DLCT without tunnel) and the share
of bytes on path 2. Not part of the test suite; rerun with:

    cargo build --release -p braid && python3 scripts/near_dist.py [--bytes 300000000]
"""
import argparse

from braidsim import report


def run(overrides):
    return report(overrides, baseline=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=300_000_000)
    ap.add_argument("--rtts", default="20,40,60,80,100")
    ap.add_argument("--e2e", default="bbr,cubic")
    ap.add_argument("--tunnel", default="bbr")
    args = ap.parse_args()
    print("| e2e | tunnel | placement | E2E RTT ms | CPF rel. DLCT | CPF path-2 share | SRTT rel. DLCT | SRTT path-2 share |")
    print("|---|---|---|---|---|---|---|---|")
    for e2e in args.e2e.split(","):
        for place in ["NEAR", "DIST"]:
            for n in [float(x) for x in args.rtts.split(",")]:
                cells = []
                for sched in ["cpf", "srtt"]:
                    r = run([
                        f"e2e.cc={e2e}", f"tunnel.cc={args.tunnel}", f"tunnel.scheduler={sched}",
                        f"e2e.bytes={args.bytes}", f"server_link.rtt_ms={n / 2}",
                        f"paths.0.rtt_ms={n / 2}", f"keys={place}",
                    ])
                    cells += [f"{r['relative_dlct'] * 100:.0f}%", f"{r['paths'][1]['share'] * 100:.0f}%"]
                print(f"| {e2e} | {args.tunnel} | {place} | {n:.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
