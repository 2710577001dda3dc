#!/usr/bin/env python3
"""Screens variants of the daemon's default tunnel in the lab: DLCT of each (variant, e2e CC,
loss cell, repetition), with what explains it (end-to-end retransmissions and srtt, gaps the
receiver gave up, scheduler-queue drops).

Each run is `braid lab scenarios/bonding.toml --mode tunnel --emulator linkem` (Table 1 of
Pieska et al. 2024, real kernel TCP end to end, the daemon's default tunnel unless the variant
overrides it), one at a time; variants alternate within a repetition so that drifts of the
machine hit them alike. Cells: `none` (no random loss), `p1`/`p2` (1% random loss on path 1 or
path 2). With --baseline the first run of each e2e CC also measures path 1 alone, and the table
gives relative DLCTs against it. The variant `before` runs the daemons of another build
(`--before-daemon PATH`, `braid lab --daemon`), for a before/after of a change to the daemon.

Usage (root, after `cargo build --release -p braid`):
  sudo python3 scripts/bonding_screen.py --variants default,fastloss200 --cc cubic,bbr \
      --cells none,p1,p2 --bytes 100000000 --reps 2 --baseline
  sudo python3 scripts/bonding_screen.py --variants before,default --before-daemon OLD/braid ...

Each run's row goes to stderr as a JSON line as it ends; `--rows FILE` renders the table again
from such lines without running anything (data/lab keeps the screens the docs quote).
`--lab-baselines DIR` takes the baselines (path 1 alone, no loss, the default scenario's cell
per e2e CC, median of its runs) from a `braid sweep --backend lab --lab-mode baseline` folder
of the same download size instead of measuring them (data/lab/lab-matrix-baselines: 50 MB).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# What each variant sets over the daemon's default (scenarios/bonding.toml).
VARIANTS = {
    "default": [],
    # A gap waits until every path has delivered beyond it (on reliable paths it is otherwise
    # still in flight), at most 200 ms: the daemon's default since the screens of
    # docs/validation.md chose it (the same as `default` today).
    "fastloss200": ["tunnel.fast_loss_detection=true", "tunnel.reorder=static",
                    "tunnel.static_wait_ms=200"],
    # The daemon's receiver before that: Table 1's adaptive wait limit. Rows kept in data/lab/
    # from before the change call it `default`.
    "adaptive": ["tunnel.fast_loss_detection=false", "tunnel.reorder=adaptive"],
    # Over the adaptive wait: gaps a reliable path may still be repairing wait up to 100 ms.
    "repair100": ["tunnel.fast_loss_detection=false", "tunnel.reorder=adaptive",
                  "tunnel.repair_wait_ms=100"],
    # The adaptive wait limit's margin at 30 and 50 ms instead of Table 1's 10 ms.
    "margin30": ["tunnel.fast_loss_detection=false", "tunnel.reorder=adaptive",
                 "tunnel.reorder_margin_ms=30"],
    "margin50": ["tunnel.fast_loss_detection=false", "tunnel.reorder=adaptive",
                 "tunnel.reorder_margin_ms=50"],
    # CoDel (RFC 8289) on the scheduler queue: TARGET 20 ms, INTERVAL 100 ms.
    "codel20": ["tunnel.sched_codel_target_ms=20"],
    # Delay equalisation: the faster path's packets held by its lag behind the slower path, so
    # end-to-end RTT samples do not jump with the path a packet took.
    "equalize": ["tunnel.equalize_delay=true"],
    # BBRv2's ProbeRTT every 10 s (the min_rtt filter's window) instead of every 5 s: the tunnel
    # paths drop to half their BDP half as often.
    "probertt10": ["tunnel.bbr2.probe_rtt_interval_ms=10000"],
    # Feedback after every 8th packet instead of every 2nd (the 1 ms maximum delay still
    # applies): fewer feedback frames, each 60 bytes of headers on the wire.
    "fb8": ["tunnel.feedback_every_pkts=8"],
    "probertt10-fb8": ["tunnel.bbr2.probe_rtt_interval_ms=10000", "tunnel.feedback_every_pkts=8"],
    # The default run by the daemons of --before-daemon.
    "before": [],
}
CELLS = {"none": [], "p1": ["paths.0.loss=0.01"], "p2": ["paths.1.loss=0.01"]}


def run(braid, sets, baseline, daemon=None, out=None):
    """One `braid lab` run of the daemon's default tunnel with `sets` over it; its JSON report.
    `out`: also keep the run's folder (`braid lab --out`)."""
    args = [braid, "lab", str(ROOT / "scenarios" / "bonding.toml"), "--mode", "tunnel",
            "--emulator", "linkem", "--json"]
    for s in sets:
        args += ["--set", s]
    if baseline:
        args.append("--baseline")
    if daemon:
        args += ["--daemon", daemon]
    if out:
        args += ["--out", str(out)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--braid", default=str(ROOT / "target" / "release" / "braid"))
    ap.add_argument("--variants", default="adaptive,default")
    ap.add_argument("--cc", default="cubic,bbr")
    ap.add_argument("--cells", default="none,p1,p2")
    ap.add_argument("--bytes", type=int, default=100_000_000)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--baseline", action="store_true")
    ap.add_argument("--before-daemon", help="braid executable whose daemons run the `before` variant")
    ap.add_argument("--rows", help="render from these JSON lines (a screen's stderr) instead of running")
    ap.add_argument("--lab-baselines", metavar="DIR",
                    help="baselines from this lab baseline sweep folder (its default cell)")
    args = ap.parse_args()
    variants = args.variants.split(",")
    for v in variants:
        if v not in VARIANTS:
            raise SystemExit(f"--variants: unknown {v!r}; known: {', '.join(VARIANTS)}")
    if ("before" in variants) != bool(args.before_daemon):
        raise SystemExit("--variants before and --before-daemon PATH go together")
    cells = args.cells.split(",")
    for c in cells:
        if c not in CELLS:
            raise SystemExit(f"--cells: unknown {c!r}; known: {', '.join(CELLS)}")
    rows, baselines = [], {}
    if args.lab_baselines:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from sweep_journal import cell_reports
        for cell, reports in cell_reports(args.lab_baselines)[1]:
            if cell.get("keys", "") == "" and reports:
                baselines[cell["e2e.cc"]] = statistics.median(r["dlct_s"] for r in reports)
    if args.rows:
        rows = [json.loads(line) for line in open(args.rows) if line.strip()]
        rows = [r for r in rows if r["variant"] in variants and r["cell"] in cells]
    for rep in range(1, 0 if args.rows else args.reps + 1):
        for cc in args.cc.split(","):
            for cell in cells:
                for v in variants:
                    sets = [f"e2e.bytes={args.bytes}", f"e2e.cc={cc}", f"seed={rep}"]
                    sets += CELLS[cell] + VARIANTS[v]
                    want_base = args.baseline and cc not in baselines and cell == "none"
                    daemon = args.before_daemon if v == "before" else None
                    r = run(args.braid, sets, want_base, daemon)
                    if want_base:
                        baselines[cc] = r["baseline_dlct_s"]
                    row = {"variant": v, "cc": cc, "cell": cell, "rep": rep, "dlct_s": r["dlct_s"],
                           "retrans": r["e2e"]["retransmissions"],
                           "srtt_ms": r["e2e"]["srtt_ms_mean"],
                           "gaps_given_up": r["reorder"]["released_on_timeout"],
                           "sched_drops": r["drops"]["scheduler"]}
                    rows.append(row)
                    print(json.dumps(row), file=sys.stderr, flush=True)
    print("| e2e cc | cell | variant | runs | DLCT s, median (range) | rel. DLCT median (range) | "
          "retrans median | gaps given up median | sched drops median | e2e srtt ms median |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    med = statistics.median
    for cc in args.cc.split(","):
        for cell in cells:
            for v in variants:
                rs = [r for r in rows if (r["cc"], r["cell"], r["variant"]) == (cc, cell, v)]
                if not rs:
                    continue
                d = [r["dlct_s"] for r in rs]
                rel = (f"{med(d) / baselines[cc]:.0%} ({min(d) / baselines[cc]:.0%}-"
                       f"{max(d) / baselines[cc]:.0%})" if cc in baselines else "-")
                print(f"| {cc} | {cell} | {v} | {len(rs)} | {med(d):.2f} ({min(d):.2f}-{max(d):.2f}) "
                      f"| {rel} | {med(r['retrans'] for r in rs):.0f} "
                      f"| {med(r['gaps_given_up'] for r in rs):.0f} "
                      f"| {med(r['sched_drops'] for r in rs):.0f} "
                      f"| {med(r['srtt_ms'] for r in rs):.0f} |")
    if baselines:
        print("\nbaselines (path 1 alone, no loss): " +
              ", ".join(f"{cc} {b:.2f} s" for cc, b in baselines.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
