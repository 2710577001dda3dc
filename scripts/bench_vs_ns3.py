#!/usr/bin/env python3
"""Braid against ns-3, side by side: the nested 300 MB default (`braid sim
scenarios/default.toml`: two paths, the tunnel) and ns-3's single-path 300 MB download
(bench/ns3/single_path.cc: the same server link and path 1, TCP Cubic), run interleaved
--reps times in one invocation. docs/performance.md describes the models and the result.

Per process it measures the wall time (perf_counter around the child) and the child's CPU
time (user + sys, from os.wait4), and reports median, minimum and maximum of each, the
ns-3 / Braid ratio as the median of the per-repetition ratios and as the ratio of the
medians, and the simulated DLCTs as a sanity check: ns-3's single-path DLCT next to Braid's
single-path baseline (`braid sim --baseline`, path 1 alone without the tunnel, run after
the timed repetitions).

Several braid binaries can run in the same invocation (`--braid LABEL=PATH`, repeated), each
interleaved with the others and with ns-3, so that builds are compared side by side under the
same load (for example a commit before and after a change, or the `release` and `dist`
profiles); each gets its own ratio against the same ns-3 runs.

Needs Debian's ns-3 (apt-get install libns3-dev) and a braid build:

    cargo build --profile dist -p braid
    python3 scripts/bench_vs_ns3.py                   # or: make bench-ns3
    python3 scripts/bench_vs_ns3.py --reps 9 --json out/bench_vs_ns3.json
    python3 scripts/bench_vs_ns3.py --braid before=/tmp/old/braid --braid after=target/dist/braid
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NS3_DIR = os.path.join(ROOT, "bench", "ns3")
NS3_BIN = os.path.join(NS3_DIR, "single_path")
SCENARIO = os.path.join(ROOT, "scenarios", "default.toml")


def default_braid():
    """The `dist` build (`cargo build --profile dist`), else the release build."""
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    dist = os.path.join(target, "dist", "braid")
    return dist if os.access(dist, os.X_OK) else os.path.join(target, "release", "braid")


def braid_arg(text):
    """`LABEL=PATH` or a bare PATH (labelled `braid`)."""
    label, sep, path = text.partition("=")
    if not sep:
        label, path = "braid", text
    if not label or not path:
        raise argparse.ArgumentTypeError(f"--braid {text!r}: expected LABEL=PATH or PATH")
    return label, path


def build_ns3():
    """(Re)builds the ns-3 program when it is missing or older than its source."""
    src = os.path.join(NS3_DIR, "single_path.cc")
    if os.path.exists(NS3_BIN) and os.path.getmtime(NS3_BIN) >= os.path.getmtime(src):
        return
    if not os.path.exists("/usr/include/ns3/core-module.h"):
        sys.exit("ns-3 headers not found: apt-get install libns3-dev (Debian's ns-3 3.37)")
    print("building bench/ns3/single_path ...", file=sys.stderr)
    subprocess.run(["make", "-C", NS3_DIR, "single_path"], check=True, stdout=sys.stderr)


def timed(cmd):
    """Runs cmd; returns (stdout, wall seconds, child CPU seconds user + sys)."""
    with tempfile.TemporaryFile(mode="w+") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True)
        # Read stdout to its end, then reap the child with wait4, which returns its resource
        # usage (Popen.wait would reap it without).
        out = p.stdout.read()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        p.stdout.close()
        p.returncode = os.waitstatus_to_exitcode(status)
        if p.returncode != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{err.read()}")
    return out, wall, ru.ru_utime + ru.ru_stime


def spread(xs):
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "all": xs}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--braid", dest="braids", action="append", type=braid_arg, metavar="[LABEL=]PATH",
                    help="braid binary, repeatable for builds side by side (default: the dist "
                         "build if present, else the release build)")
    ap.add_argument("--reps", type=int, default=5, help="interleaved repetitions (default 5)")
    ap.add_argument("--bytes", type=int, default=300_000_000, help="download size (default 300 MB)")
    ap.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                    help="extra override for the braid runs, e.g. --set e2e.cc=bbr (braid bench's scenario)")
    ap.add_argument("--ns3-arg", action="append", default=[], metavar="--NAME=VALUE",
                    help="extra argument for the ns-3 program, e.g. --ns3-arg=--recovery=classic")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args()
    braids = args.braids or [("braid", default_braid())]
    labels = [label for label, _ in braids]
    if len(set(labels)) != len(labels) or "ns3" in labels:
        sys.exit(f"--braid labels must be distinct and not 'ns3': {labels}")
    if args.reps < 1:
        sys.exit(f"--reps {args.reps}: at least 1")
    for _, path in braids:
        if not os.access(path, os.X_OK):
            sys.exit(f"{path}: not found; cargo build --profile dist -p braid, or pass --braid")
    build_ns3()

    overrides = [f"e2e.bytes={args.bytes}", *args.overrides]
    braid_cmds = {}
    for label, path in braids:
        braid_cmds[label] = [path, "sim", SCENARIO, "--json"]
        for o in overrides:
            braid_cmds[label] += ["--set", o]
    # ns-3 gets the default scenario's server link and path 1 (its own defaults), and the size.
    ns3_cmd = [NS3_BIN, f"--bytes={args.bytes}", *args.ns3_arg]

    rows = {"ns3": {"wall": [], "cpu": [], "dlct": [], "handshake": []}}
    for label in labels:
        rows[label] = {"wall": [], "cpu": [], "dlct": []}
    runs = [("ns3", ns3_cmd)] + list(braid_cmds.items())
    for rep in range(args.reps):
        # Rotate the order, so that no process always runs right after the same other one.
        k = rep % len(runs)
        order = runs[k:] + runs[:k]
        for name, cmd in order:
            out, wall, cpu = timed(cmd)
            rows[name]["wall"].append(wall)
            rows[name]["cpu"].append(cpu)
            rep_out = json.loads(out)
            rows[name]["dlct"].append(rep_out["dlct_s"])
            if name == "ns3":
                rows[name]["handshake"].append(rep_out["handshake_s"])
        walls = ", ".join(f"{label} {rows[label]['wall'][-1]:.3f} s" for label in labels)
        print(f"rep {rep + 1}/{args.reps}: ns-3 {rows['ns3']['wall'][-1]:.2f} s, {walls}",
              file=sys.stderr)

    # Sanity check, not part of the ratio: Braid's single-path baseline (Cubic, as ns-3), after
    # the timed repetitions. Its own wall time is the in-process wall_s of a --baseline run (tunnel +
    # baseline) minus that of the tunnel run alone, a median over --reps pairs.
    # It runs the scenario ns-3 models: the default file with only the size changed, whatever
    # --set gave the timed runs.
    plain_cmd = [braids[-1][1], "sim", SCENARIO, "--json", "--set", f"e2e.bytes={args.bytes}"]
    base_walls = []
    for _ in range(args.reps):
        base = json.loads(timed(plain_cmd + ["--baseline"])[0])
        tunnel_only = json.loads(timed(plain_cmd)[0])
        base_walls.append(base["wall_s"] - tunnel_only["wall_s"])
    braid_baseline_wall = statistics.median(base_walls)

    result = {"reps": args.reps, "bytes": args.bytes, "braid_overrides": overrides,
              "ns3_args": ns3_cmd[1:], "host": platform.node(), "cpus": os.cpu_count(),
              "braids": dict(braids)}
    for name in rows:
        result[name] = {k: spread(v) for k, v in rows[name].items()}
    for label in labels:
        for kind in ("wall", "cpu"):
            per_rep = [n / b for n, b in zip(rows["ns3"][kind], rows[label][kind])]
            result[label][f"ratio_{kind}"] = {
                "median_of_ratios": statistics.median(per_rep),
                "ratio_of_medians": statistics.median(rows["ns3"][kind]) / statistics.median(rows[label][kind]),
                "min": min(per_rep),
                "max": max(per_rep),
            }
    ns3_dlct = statistics.median(rows["ns3"]["dlct"])
    # Braid's simulated TCP starts with data at time zero; ns-3's DLCT starts at the SYN.
    ns3_data = statistics.median(d - h for d, h in zip(rows["ns3"]["dlct"], rows["ns3"]["handshake"]))
    result["sanity"] = {
        "ns3_single_path_dlct_s": ns3_dlct,
        "ns3_single_path_dlct_after_handshake_s": ns3_data,
        "braid_baseline_dlct_s": base["baseline_dlct_s"],
        "ns3_over_braid_baseline": ns3_data / base["baseline_dlct_s"],
        "braid_baseline_wall_s": braid_baseline_wall,
    }

    def fmt(s, digits):
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"

    n = result["ns3"]
    print(f"{args.reps} interleaved repetitions, {args.bytes / 1e6:g} MB; "
          f"median (min-max); {os.cpu_count()} CPUs\n")
    print("| run | simulated DLCT s | wall s | CPU s (user+sys) |")
    print("|---|---|---|---|")
    print(f"| ns-3 3.37, single path (Cubic) | {ns3_dlct:.2f} ({ns3_data:.2f} after the handshake) | {fmt(n['wall'], 2)} | {fmt(n['cpu'], 2)} |")
    for label in labels:
        b = result[label]
        print(f"| {label}, nested default ({' '.join(args.overrides) or 'scenarios/default.toml'}) "
              f"| {b['dlct']['median']:.2f} | {fmt(b['wall'], 3)} | {fmt(b['cpu'], 3)} |")
    # A difference of two runs: meaningful for long downloads only.
    base_wall = f"~{braid_baseline_wall:.3f}" if braid_baseline_wall > 0 else "n/a"
    print(f"| {labels[-1]}, single-path baseline of scenarios/default.toml (in-process wall, no start-up; "
          f"approximate) | {base['baseline_dlct_s']:.2f} | {base_wall} | |")
    print()
    for label in labels:
        for kind in ("wall", "cpu"):
            r = result[label][f"ratio_{kind}"]
            print(f"ns-3 / {label}, {kind}: median of ratios {r['median_of_ratios']:.1f}x, "
                  f"ratio of medians {r['ratio_of_medians']:.1f}x (per repetition {r['min']:.1f}-{r['max']:.1f}x)")
    s = result["sanity"]
    print(f"single-path DLCT: ns-3 {s['ns3_single_path_dlct_after_handshake_s']:.3f} s after the handshake "
          f"({s['ns3_single_path_dlct_s']:.3f} s from the SYN), braid baseline "
          f"{s['braid_baseline_dlct_s']:.3f} s ({100 * (s['ns3_over_braid_baseline'] - 1):+.1f}%)")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
