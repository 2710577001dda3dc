#!/usr/bin/env python3
"""Drops against performance in the nested-CC matrix: the evidence for two claims of Pieska et
al. 2024 that docs/validation.md's checklist left at "needs a run" because the matrix recorded
drops without reporting them (C15 and C56).

    braid sweep sweeps/nested-cc-matrix.toml --out out/nested-cc-matrix
    python3 scripts/matrix_drops.py out/nested-cc-matrix

A run's drops are every packet a queue discarded: the tunnel paths' bottlenecks in both
directions (`paths.*.drops`), the tunnel sender's scheduler queue (`drops.scheduler`) and the
server's link (`drops.server_link`); per cell the mean over its runs.

- C56, "the best set-up is always the least congested and lossy": per group (scenario x e2e CC
  x scheduler, the rows of that e2e CC), is the row with the lowest mean relative DLCT also the
  row with the fewest drops, or within max(10, 10%) drops of the fewest? Decided beforehand:
  reproduced if that holds in at least 90% of the groups, contradicted below 75%.
- C15, "BBRv2 reacts to loss, which these cases raise" (BBR end to end: BBRv2 tunnels beat BBR
  tunnels at long tunnel RTT, with CoDel and with small buffers; C12-C14): BBR over BBR against
  BBR over BBRv2 in those scenarios and in Table 1's, drops and relative DLCT side by side.
"""
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_journal import cell_reports  # noqa: E402


def drops(report):
    paths = sum(p.get("drops", 0) for p in report.get("paths", []))
    d = report.get("drops", {})
    return paths + d.get("scheduler", 0) + d.get("server_link", 0)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    spec, groups = cell_reports(sys.argv[1])
    cells = {}
    for cell, reports in groups:
        if not reports:
            continue
        key = (cell["keys"] or "default", cell["tunnel.scheduler"], cell["row"])
        cells[key] = (
            100 * statistics.mean(r["relative_dlct"] for r in reports),
            statistics.mean(drops(r) for r in reports),
            len(reports),
        )

    print("## C56: is the fastest row of a group also the one with the fewest drops?\n")
    print("| scenario | scheduler | e2e CC | fastest row (rel. DLCT %, drops) | fewest drops (rel. DLCT %, drops) | holds |")
    print("|---|---|---|---|---|---|")
    holds = total = 0
    scenarios = sorted({k[0] for k in cells}, key=lambda s: (s != "default", s))
    for scen in scenarios:
        for sched in ("cpf", "srtt"):
            for cc in ("cubic", "bbr"):
                rows = {k[2]: v for k, v in cells.items()
                        if k[0] == scen and k[1] == sched and k[2].startswith(cc + " /")}
                if not rows:
                    continue
                fastest = min(rows, key=lambda r: rows[r][0])
                fewest = min(rows, key=lambda r: rows[r][1])
                least = rows[fewest][1]
                ok = rows[fastest][1] <= least + max(10.0, 0.1 * least)
                holds += ok
                total += 1
                f = lambda r: f"{r} ({rows[r][0]:.1f}, {rows[r][1]:.0f})"
                print(f"| {scen} | {sched} | {cc} | {f(fastest)} | {f(fewest)} | {'yes' if ok else 'no'} |")
    print(f"\nholds in {holds} of {total} groups ({100 * holds / total:.0f}%); "
          "reproduced at 90% or more, contradicted below 75%")

    print("\n## C15: BBR end to end, BBR against BBRv2 tunnels: relative DLCT % and drops per run\n")
    print("| scenario | scheduler | bbr / bbr | bbr / bbr2 |")
    print("|---|---|---|---|")
    for scen in ("default", "LONG", "LONG+DIST", "CDL1", "BUF250"):
        for sched in ("cpf", "srtt"):
            a = cells.get((scen, sched, "bbr / bbr"))
            b = cells.get((scen, sched, "bbr / bbr2"))
            if a and b:
                print(f"| {scen} | {sched} | {a[0]:.1f}, {a[1]:.0f} | {b[0]:.1f}, {b[1]:.0f} |")


if __name__ == "__main__":
    main()
