#!/usr/bin/env python3
"""One path through a kernel-TCP tunnel in the simulator against real Linux measurements of the
same nesting: the table of docs/validation.md, "Kernel TCP tunnels on one path".

    braid sweep sweeps/tcp-tunnel-one-path.toml --out out/tcp-one-path
    python3 scripts/tcp_tunnel_one_path.py out/tcp-one-path

Per cell (writer x tunnel CC x end-to-end CC) over its repetitions: relative DLCT as mean, sample
standard deviation and range; the end-to-end and tunnel srtt and the tunnel connection's send
queue as means. The measured column is real kernel TCP inside a real OpenVPN 2.6 TCP tunnel (no
encryption, kernel-autotuned buffers) on the same topology with the shaper one hop beyond the
tunnel sender, as in `braid lab` and the simulator; the `openvpn` writer models that set-up.
Agreement means within 2 percentage points of relative DLCT, the tolerance fixed before the
comparison. Reads the journal (`runs.jsonl`) and the spec the folder keeps, so it needs no
Parquet reader.
"""
import argparse
import statistics

from sweep_journal import cell_reports

# (tunnel cc, e2e cc) -> (relative DLCT, e2e srtt ms, tunnel srtt ms, send-q MB); text ranges
# where only a range was recorded, "" where nothing was.
MEASURED = {
    ("bbr", "cubic"): (1.064, "", "", ""),
    ("bbr", "bbr"): (1.066, "", "", ""),
    ("newreno", "cubic"): (1.048, "330-470", "~95", "1.4-2.6"),
    ("newreno", "bbr"): (1.052, "", "", ""),
}
TOLERANCE = 0.02


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="folder written by braid sweep --out")
    args = ap.parse_args()
    _, groups = cell_reports(args.dir)
    print("| writer | tunnel | e2e | relative DLCT mean (sd, range) | measured | agrees (2 pp) | "
          "e2e srtt ms (measured) | tunnel srtt ms (measured) | send-q MB (measured) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cell, runs in groups:
        if not runs:
            continue
        rel = [r["relative_dlct"] for r in runs]
        mean = lambda f: statistics.mean(f(r) for r in runs)
        e2e = mean(lambda x: x["e2e"]["srtt_ms_mean"])
        path = mean(lambda x: x["paths"][0]["srtt_ms_mean"])
        sendq = mean(lambda x: x["paths"][0]["send_queue_bytes_mean"]) / 1e6
        t, e = cell["tunnel.cc"], cell["e2e.cc"]
        m = MEASURED[(t, e)]
        sd = statistics.stdev(rel) if len(rel) > 1 else 0.0
        m_rel = statistics.mean(rel)
        agrees = "yes" if abs(m_rel - m[0]) <= TOLERANCE else f"no ({100 * (m_rel - m[0]):+.1f} pp)"
        if cell["writer"] != "openvpn":
            agrees = "(other set-up)"
        ref = lambda v: f" ({v})" if v else ""
        print(f"| {cell['writer']} | {t} | {e} | {m_rel:.3f} ({sd:.3f}, {min(rel):.3f}-{max(rel):.3f}) "
              f"| {m[0]:.3f} | {agrees} | {e2e:.0f}{ref(m[1])} | {path:.0f}{ref(m[2])} | "
              f"{sendq:.2f}{ref(m[3])} |")


if __name__ == "__main__":
    main()
