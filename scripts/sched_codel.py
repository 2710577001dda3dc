#!/usr/bin/env python3
"""CoDel on the scheduler queue against drop-tail, in the simulator: the table of
docs/validation.md, "CoDel on the scheduler queue".

    braid sweep sweeps/sched-codel.toml --out out/sched-codel
    python3 scripts/sched_codel.py out/sched-codel

Per cell (e2e CC x scheduler x CoDel TARGET) over its repetitions: relative DLCT as mean with a
95% confidence half-width (Student's t) and range; the end-to-end srtt, scheduler drops (drop-tail
and CoDel alike), path 2's mean throughput and ACPF's fraction (the share of its decisions that
let the costly path take packets) as means. Reads the journal (`runs.jsonl`) and the spec the
folder keeps, so it needs no Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports, ci95


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    args = ap.parse_args()
    _, groups = cell_reports(args.dir)
    print("| e2e | scheduler | CoDel TARGET ms | runs | relative DLCT % mean ± 95% (range) | "
          "e2e srtt ms | scheduler drops | path 2 Mbit/s | ACPF fraction |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cell, runs in groups:
        if not runs:
            continue
        rel = [100 * r["relative_dlct"] for r in runs]
        mean = lambda f: statistics.mean(f(r) for r in runs)
        acpf = "-"
        if cell["tunnel.scheduler"] == "acpf":
            acpf = f"{mean(lambda x: x['tunnel']['acpf_fraction_mean'] or 0.0):.2f}"
        target = cell["tunnel.sched_codel_target_ms"]
        print(f"| {cell['e2e.cc']} | {cell['tunnel.scheduler']} | {target} | {len(runs)} "
              f"| {statistics.mean(rel):.1f} ± {ci95(rel):.1f} ({min(rel):.1f}-{max(rel):.1f}) "
              f"| {mean(lambda x: x['e2e']['srtt_ms_mean']):.0f} "
              f"| {mean(lambda x: x['drops']['scheduler']):.0f} "
              f"| {mean(lambda x: x['paths'][1]['mean_mbps']):.1f} | {acpf} |")

if __name__ == "__main__":
    main()
