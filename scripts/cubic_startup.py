#!/usr/bin/env python3
"""The start of a Cubic download through the daemon's default tunnel, traced per run: whether
end-to-end TCP retransmitted in its first second (a gap the receiver gave up on while the
first packets of the slower path were still on their way), where Cubic's slow start ended
(`tcpi_snd_ssthresh`), how long the download took to first reach 80 Mbit/s, and its DLCT.

Each run is `braid lab scenarios/bonding.toml --mode tunnel --emulator linkem --out DIR`
(Table 1 of Pieska et al. 2024, real kernel Cubic end to end, the transfer's TCP_INFO sampled
every 10 ms); arms alternate within a repetition. The arm `before` runs the daemons of another
build (`--before-daemon PATH`, `braid lab --daemon`).

Usage (root, after `cargo build --release -p braid`):
  sudo python3 scripts/cubic_startup.py --reps 4 --before-daemon OLD/braid [--keep DIR]
"""

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import bonding_screen

ROOT = Path(__file__).resolve().parent.parent


def run(braid, out, sets, daemon=None):
    """The run's report and its transfer (all TCP_INFO samples)."""
    report = bonding_screen.run(braid, sets, baseline=False, daemon=daemon, out=out)
    transfer = json.loads((out / "transfer.json").read_text())
    return report, transfer


def startup(report, transfer):
    """The run's start, from the sender's TCP_INFO samples and the receiver's goodput bins."""
    samples = transfer["sender"]["samples"]
    at_1s = [s["info"] for s in samples if s["t_s"] <= 1.0]
    first = at_1s[-1] if at_1s else samples[0]["info"]
    bins = transfer["receiver"]["bin_bytes"]
    bin_s = transfer["receiver"]["bin_s"]
    fast = next((i for i, b in enumerate(bins) if b * 8 / bin_s / 1e6 >= 80), None)
    ssthresh = first["snd_ssthresh"]
    return {
        "dlct_s": report["dlct_s"],
        "retrans_1s": first["total_retrans"],
        "ssthresh_1s": None if ssthresh >= 2**31 - 1 else ssthresh,
        "cwnd_1s": first["snd_cwnd"],
        "to_80_mbps_s": None if fast is None else fast * bin_s,
        "retrans": report["e2e"]["retransmissions"],
        "gaps_given_up": report["reorder"]["released_on_timeout"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--bytes", type=int, default=300_000_000)
    ap.add_argument("--before-daemon", help="braid executable whose daemons the arm `before` runs")
    ap.add_argument("--braid", default=str(ROOT / "target" / "release" / "braid"))
    ap.add_argument("--keep", help="keep each run's `braid lab --out` folder under this directory")
    args = ap.parse_args()
    arms = [("before", args.before_daemon)] if args.before_daemon else []
    arms.append(("this build", None))
    sets = ["e2e.cc=cubic", f"e2e.bytes={args.bytes}"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.reps):
            for name, daemon in arms:
                out = Path(args.keep or tmp) / f"{name.replace(' ', '_')}-{rep}"
                report, transfer = run(args.braid, out, sets, daemon)
                row = {"arm": name, "rep": rep, **startup(report, transfer)}
                print(json.dumps(row), file=sys.stderr, flush=True)
                rows.append(row)
    print("| arm | rep | DLCT s | e2e retransmissions in the first second | ssthresh at 1 s | "
          "cwnd at 1 s | first 100 ms at 80 Mbit/s, s | e2e retransmissions | gaps given up |")
    print("|---|---|---|---|---|---|---|---|---|")
    show = lambda v: "-" if v is None else (f"{v:.1f}" if isinstance(v, float) else str(v))
    for r in sorted(rows, key=lambda r: (r["arm"], r["rep"])):
        print(f"| {r['arm']} | {r['rep']} | {r['dlct_s']:.2f} | {r['retrans_1s']} | "
              f"{show(r['ssthresh_1s'])} | {r['cwnd_1s']} | {show(r['to_80_mbps_s'])} | "
              f"{r['retrans']} | {r['gaps_given_up']} |")
    for name, _ in arms:
        d = [r["dlct_s"] for r in rows if r["arm"] == name]
        early = sum(r["retrans_1s"] > 0 for r in rows if r["arm"] == name)
        print(f"\n{name}: DLCT median {statistics.median(d):.2f} s ({min(d):.2f}-{max(d):.2f}); "
              f"runs with a retransmission in the first second: {early} of {len(d)}")


if __name__ == "__main__":
    main()
