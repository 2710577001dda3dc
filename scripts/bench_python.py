#!/usr/bin/env python3
"""The Python package's costs, each against its baseline measured side by side in one run
(docs/python.md, "Performance"):

1. `braid.simulate` in-process against `braid sim --json` (a release binary, as a subprocess),
   on the 300 MB default scenario, interleaved --reps times. Wall time and CPU time of each
   (the child's user + sys; the calling thread's, where the package simulates); the ratios
   are the medians of the per-repetition ratios (Python / CLI). The CLI's time includes
   starting the process and printing the JSON; the Python call's includes building the
   DataFrames.
2. A sweep on a dask.distributed LocalCluster with two single-threaded worker processes
   against one with one worker: runs per second of wall time (cluster start excluded), each
   into a fresh folder, alternated --sweep-reps times; the speed-up is the median ratio.

Needs `make python` (the package in .venv) and a release binary:

    cargo build --release -p braid
    .venv/bin/python scripts/bench_python.py                 # or: make bench-python
    .venv/bin/python scripts/bench_python.py --reps 7 --json out/bench_python.json

Run it on an otherwise idle machine: both figures are ratios of wall times.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCENARIO = os.path.join(ROOT, "scenarios", "default.toml")
sys.path.insert(0, os.path.join(ROOT, "python"))

import braid  # noqa: E402

SWEEP = """base = "{base}"
reps = {reps}
[set]
"e2e.bytes" = {bytes}
[axes]
"e2e.cc" = ["cubic", "bbr"]
"tunnel.scheduler" = ["cpf", "srtt"]
"""


def default_braid():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "braid")


def time_cli(exe):
    """(wall s, CPU s of the child: user + sys, DLCT) of one `braid sim --json`."""
    start = time.perf_counter()
    child = subprocess.Popen([exe, "sim", SCENARIO, "--json"], stdout=subprocess.PIPE, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"braid sim failed with {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime, json.loads(out)["dlct_s"]


def time_python():
    """(wall s, CPU s of this thread, DLCT) of one `braid.simulate`: the simulation runs on
    the calling thread, so its CPU time is this thread's."""
    start, cpu = time.perf_counter(), time.thread_time()
    r = braid.simulate(SCENARIO)
    return time.perf_counter() - start, time.thread_time() - cpu, r.summary["dlct_s"]


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def bench_simulate(exe, reps):
    # One untimed call of each first: the first Python call imports pandas, the first CLI
    # call reads the binary from disk.
    time_cli(exe)
    time_python()
    rows = {"cli": [], "python": []}
    for k in range(reps):
        # Alternate which goes first, so neither always runs on a warmer machine.
        order = ("cli", "python") if k % 2 == 0 else ("python", "cli")
        got = {who: (time_cli(exe) if who == "cli" else time_python()) for who in order}
        if got["cli"][2] != got["python"][2]:
            sys.exit(f"the CLI's DLCT {got['cli'][2]} differs from the package's {got['python'][2]}: not the same run")
        for who in order:
            rows[who].append(got[who])
        print(f"simulate rep {k + 1}: cli {got['cli'][0]:.3f} s wall {got['cli'][1]:.3f} s CPU, "
              f"python {got['python'][0]:.3f} s wall {got['python'][1]:.3f} s CPU", file=sys.stderr)
    wall = {who: [r[0] for r in rows[who]] for who in rows}
    cpu = {who: [r[1] for r in rows[who]] for who in rows}
    return {
        "cli_wall_s": spread(wall["cli"]),
        "python_wall_s": spread(wall["python"]),
        "python_over_cli_wall": spread([p / c for p, c in zip(wall["python"], wall["cli"])]),
        "cli_cpu_s": spread(cpu["cli"]),
        "python_cpu_s": spread(cpu["python"]),
        "python_over_cli_cpu": spread([p / c for p, c in zip(cpu["python"], cpu["cli"])]),
    }


def sweep_rate(spec, out, workers):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(workers)
        start = time.perf_counter()
        df = braid.sweep(spec, out=out, client=client)
        wall = time.perf_counter() - start
    if not (df["status"] == "ok").all():
        sys.exit(f"failed runs in {out}")
    return len(df) / wall


def bench_cluster(reps, sweep_reps, mbytes):
    rates = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        spec = os.path.join(tmp, "spec.toml")
        with open(spec, "w") as f:
            f.write(SWEEP.format(base=SCENARIO, reps=reps, bytes=int(mbytes * 1e6)))
        for k in range(sweep_reps):
            for workers in ((1, 2) if k % 2 == 0 else (2, 1)):
                rate = sweep_rate(spec, os.path.join(tmp, f"out-{k}-{workers}"), workers)
                rates[workers].append(rate)
                print(f"sweep rep {k + 1}: {workers} worker(s) {rate:.2f} runs/s", file=sys.stderr)
    ratios = [b / a for a, b in zip(rates[1], rates[2])]
    return {"runs": 4 * reps, "e2e_mbytes": mbytes, "one_worker_runs_per_s": spread(rates[1]),
            "two_workers_runs_per_s": spread(rates[2]), "speedup": spread(ratios)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--braid", default=default_braid(), help="the release braid binary")
    ap.add_argument("--reps", type=int, default=5, help="simulate repetitions (default 5)")
    ap.add_argument("--sweep-reps", type=int, default=3, help="cluster sweep repetitions (default 3)")
    ap.add_argument("--sweep-runs-per-cell", type=int, default=6, help="reps per cell of the 4-cell sweep")
    ap.add_argument("--sweep-mbytes", type=float, default=300.0, help="E2E bytes per sweep run, MB (the paper's 300)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if not os.path.isfile(args.braid):
        sys.exit(f"{args.braid} not found: cargo build --release -p braid")
    result = {
        "simulate_300mb_default": bench_simulate(args.braid, args.reps),
        "local_cluster": bench_cluster(args.sweep_runs_per_cell, args.sweep_reps, args.sweep_mbytes),
        "cpus": os.cpu_count(),
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
