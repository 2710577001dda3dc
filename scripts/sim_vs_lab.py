#!/usr/bin/env python3
"""The simulator against the lab (docs/validation.md, "Simulator against the lab").

For each end-to-end CC and scheduler, runs `braid sim --baseline` once (it is deterministic)
and `braid lab --mode tunnel --emulator linkem --baseline` several times (real namespaces,
kernel TCP, two `braid tunnel` daemons), and prints a Markdown table of DLCTs and relative
DLCTs with the lab's spread. Needs root; not part of the test suite. Rerun with:

    cargo build --release -p braid && python3 scripts/sim_vs_lab.py [--runs 3] [--bytes 50000000]

`--keys ASYM40,LONG+DIST` runs each row under each scenario key; `--alt-set KEY=VALUE`
(repeatable) adds a column: the simulator again with those overrides too, e.g. the end-to-end
TCP's Linux switches `--alt-set e2e.dsack=true --alt-set e2e.cubic_undo=linux`.

The lab is a 2-core VM: run it on a quiet machine, and read the min-max spread.
"""
import argparse
import statistics

from braidsim import lab, report


def spread(values, fmt):
    med = statistics.median(values)
    return f"{fmt(med)} ({fmt(min(values))}-{fmt(max(values))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bytes", type=int, default=50_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--e2e", default="cubic,bbr")
    ap.add_argument("--sched", default="cpf,srtt")
    ap.add_argument("--keys", default="", help="comma-separated scenario keys, e.g. ASYM40,LONG+DIST")
    ap.add_argument("--set", action="append", default=[], help="more overrides for both")
    ap.add_argument("--alt-set", action="append", default=[],
                    help="overrides for a second simulator column")
    args = ap.parse_args()
    secs = lambda v: f"{v:.2f} s"
    pct = lambda v: f"{v * 100:.0f}%"
    alt = f" | sim relative with {' '.join(args.alt_set)}" if args.alt_set else ""
    print(f"| E2E / sched | keys | sim DLCT | sim relative{alt} | lab DLCT, median (min-max of "
          f"{args.runs}) | lab baseline | lab relative | lab E2E retransmissions |")
    print("|---|---|---|---|" + ("---|" if alt else "") + "---|---|---|---|")
    for e2e in args.e2e.split(","):
        for sched in args.sched.split(","):
            for key in args.keys.split(",") if args.keys else [""]:
                o = [f"e2e.cc={e2e}", f"tunnel.scheduler={sched}", f"e2e.bytes={args.bytes}",
                     *([f"keys={key}"] if key else []), *args.set]
                s = report(o, baseline=True)
                alt_cell = ""
                if args.alt_set:
                    alt_cell = f" | {pct(report(o + args.alt_set, baseline=True)['relative_dlct'])}"
                runs = [lab(o) for _ in range(args.runs)]
                dlct = [r["dlct_s"] for r in runs]
                base = [r["baseline_dlct_s"] for r in runs]
                rel = [r["relative_dlct"] for r in runs]
                retr = [r["e2e"]["retransmissions"] for r in runs]
                print(f"| {e2e} / {sched} | {key or 'default'} | {secs(s['dlct_s'])} "
                      f"| {pct(s['relative_dlct'])}{alt_cell} "
                      f"| {spread(dlct, secs)} | {spread(base, secs)} | {spread(rel, pct)} "
                      f"| {spread(retr, str)} |", flush=True)


if __name__ == "__main__":
    main()
