#!/usr/bin/env python3
"""Failover and rejoin of the data plane's default tunnel, for real: the table of
docs/operating.md, "Failover".

    cargo build --release -p braid
    sudo python3 scripts/failover.py --reps 5

Each run is `braid lab scenarios/bonding.toml --mode tunnel --emulator linkem --cut wifi:3-6`
(Table 1's topology with its delays, the daemon's default tunnel, a 100 MB download): the WiFi
path is dead in both directions from 3 s to 6 s after the transfer started. Reported per run:
the DLCT, `failover_gap_ms` (the longest time after the cut with no byte at the receiver, 10 ms
bins), `rejoin_ms` (from the restore until the server sends data on the path again), whether the
server declared the path down, and the end-to-end retransmissions; then the median and range
per end-to-end congestion control. Targets, fixed beforehand: gap at most 300 ms, rejoin at most
1000 ms, the download completing (no reset).
"""
import argparse
import json
import statistics
import subprocess
import sys


def run(braid, cc, nbytes, cut, daemon, sets=()):
    cmd = [
        braid, "lab", "scenarios/bonding.toml", "--mode", "tunnel", "--emulator", "linkem",
        "--cut", cut, "--set", f"e2e.bytes={nbytes}", "--set", f"e2e.cc={cc}", "--json",
    ] + (["--daemon", daemon] if daemon else [])
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr else "failed"}
    return json.loads(out.stdout)


def span(values):
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--braid", default="target/release/braid")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    ap.add_argument("--cut", default="wifi:3-6")
    ap.add_argument("--daemon", help="run the daemons from another braid build")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="a scenario field over the daemon's default (repeatable), e.g. a "
                         "candidate default: --set tunnel.reorder=static")
    args = ap.parse_args()
    if not 1 <= args.reps <= 100:
        sys.exit("--reps must be in 1..=100")
    rows = {}
    print("| e2e cc | run | DLCT s | failover gap ms | rejoin ms | declared down | e2e retransmissions |")
    print("|---|---|---|---|---|---|---|")
    for cc in ["cubic", "bbr"]:
        rows[cc] = []
        for rep in range(1, args.reps + 1):
            r = run(args.braid, cc, args.bytes, args.cut, args.daemon, args.set)
            if "error" in r:
                print(f"| {cc} | {rep} | failed: {r['error']} | | | | |")
                continue
            c = r["cut"]
            rows[cc].append(c)
            rejoin = c.get("rejoin_ms")
            print(
                f"| {cc} | {rep} | {r['dlct_s']:.2f} | {c['failover_gap_ms']:.0f} | "
                f"{'-' if rejoin is None else f'{rejoin:.0f}'} | {c['declared_down']} | "
                f"{r['e2e'].get('retransmissions', '-')} |",
                flush=True,
            )
    print()
    print("| e2e cc | runs | failover gap ms, median (range) | rejoin ms, median (range) |")
    print("|---|---|---|---|")
    for cc, cuts in rows.items():
        print(
            f"| {cc} | {len(cuts)} | {span(c['failover_gap_ms'] for c in cuts)} | "
            f"{span(c.get('rejoin_ms') for c in cuts)} |"
        )


if __name__ == "__main__":
    main()
