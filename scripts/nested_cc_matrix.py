#!/usr/bin/env python3
"""The nested-congestion-control matrix of Pieska et al. 2024, and which configurations are never
slower than one path.

Rows: the paper's tunnel combinations, Cubic or BBR end to end over NewReno, BBR and BBRv2 TCP
tunnels (reliable, as the paper's TCP tunnels) and CCID2 and CCID5 DCCP tunnels (unreliable),
plus BBR over CCID5 with static reordering, each with CPF and SRTT. Columns: the Table 2
scenario keys and their pairings. Cells: relative DLCT, the download time over the tunnel
divided by the same download over path 1 alone (the best single path in every scenario: both
paths have the same rate and path 1 never the longer RTT). The last column is the worst cell:
at or below 100% the configuration was never slower than the best single path here.

    cargo build --release -p braid
    python3 scripts/nested_cc_matrix.py [--bytes 100000000] [--jobs 2] [--set KEY=VALUE ...]

`--set` adds overrides to every run, e.g. `--set tunnel.max_rtt_spread_ms=100` (path
exclusion) or `--set e2e.hystart=false`.
"""
import argparse
import concurrent.futures

from braidsim import try_report
SCENARIOS = ["", "SHORT", "LONG", "SHORT+NEAR", "SHORT+DIST", "LONG+NEAR", "LONG+DIST",
             "BUF250", "BUF1000", "CDL1", "ASYM0", "ASYM40", "ASYM200"]
TUNNELS = [
    ("newreno", "reliable", "adaptive"),
    ("ccid2", "unreliable", "adaptive"),
    ("bbr", "reliable", "adaptive"),
    ("ccid5", "unreliable", "adaptive"),
    ("bbr2", "reliable", "adaptive"),
]


def rel_dlct(sets):
    r = try_report(sets, baseline=True)
    return None if r is None else r["relative_dlct"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bytes", type=int, default=100_000_000)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], help="an override for every run")
    args = ap.parse_args()
    rows = []
    for e2e in ["cubic", "bbr"]:
        for cc, rel, reorder in TUNNELS:
            rows.append((e2e, cc, rel, reorder))
    rows.append(("bbr", "ccid5", "unreliable", "static"))
    jobs = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for row in rows:
            for sched in ["cpf", "srtt"]:
                for key in SCENARIOS:
                    e2e, cc, rel, reorder = row
                    sets = [f"e2e.cc={e2e}", f"tunnel.cc={cc}", f"tunnel.reliability={rel}",
                            f"tunnel.reorder={reorder}", f"tunnel.scheduler={sched}",
                            f"e2e.bytes={args.bytes}", *args.set]
                    if key:
                        sets.append(f"keys={key}")
                    jobs[(row, sched, key)] = pool.submit(rel_dlct, sets)
    head = ["e2e / tunnel", "sched"] + [k or "default" for k in SCENARIOS] + ["worst"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        e2e, cc, rel, reorder = row
        name = f"{e2e} / {cc}" + (" static" if reorder == "static" else "")
        for sched in ["cpf", "srtt"]:
            vals = [jobs[(row, sched, k)].result() for k in SCENARIOS]
            cells = ["fail" if v is None else f"{v * 100:.0f}" for v in vals]
            worst = max((v for v in vals if v is not None), default=None)
            flag = "" if worst is None or worst > 1.0 else " ok"
            print(f"| {name} | {sched} | " + " | ".join(cells) + f" | {worst * 100:.0f}{flag} |")


if __name__ == "__main__":
    main()
