#!/usr/bin/env python3
"""Tunnel reliability modes against each other (docs/validation.md, "Tunnel reliability").

Default scenario (two 50 Mbit/s paths, 20 and 40 ms), 100 MB, with random loss on path 1, for
Cubic over NewReno tunnels and BBR over BBR tunnels, unreliable / reliable / partial, for
partial also with a wider wait limit, and for reliable also with the 200 ms repair wait
(`tunnel.repair_wait_ms`). Prints a markdown table of relative DLCT (against path 1
alone, same loss), end-to-end retransmissions and head-of-line blocking.

    cargo build --release -p braid
    python3 scripts/reliability.py [--loss 0.01] [--bytes 100000000]
"""
import argparse

from braidsim import report


def run(overrides):
    return report(overrides, baseline=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loss", type=float, default=0.01)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    args = ap.parse_args()
    print("| e2e / tunnel | reliability | receiver | rel. DLCT | E2E retransmissions | HOL mean / max ms |")
    print("|---|---|---|---|---|---|")
    # (name, settings, the reliability it applies to; None: every one)
    receivers = [
        ("adaptive, 10 ms margin", [], None),
        ("adaptive, repair wait 200 ms", ["tunnel.repair_wait_ms=200"], "reliable"),
        ("static 100 ms", ["tunnel.reorder=static", "tunnel.static_wait_ms=100"], "partial"),
    ]
    for e2e, tunnel in [("cubic", "newreno"), ("bbr", "bbr")]:
        for rel in ["unreliable", "reliable", "partial"]:
            for rname, rset, only in receivers:
                if only not in (None, rel):
                    continue
                r = run([f"e2e.cc={e2e}", f"tunnel.cc={tunnel}", f"tunnel.reliability={rel}",
                         f"paths.0.loss={args.loss}", f"e2e.bytes={args.bytes}"] + rset)
                hol = r["hol_ms"]
                print(f"| {e2e} / {tunnel} | {rel} | {rname} | {r['relative_dlct'] * 100:.0f}% | "
                      f"{r['e2e']['retransmissions']} | {hol['mean']:.1f} / {hol['max']:.0f} |")


if __name__ == "__main__":
    main()
