"""Runs `braid sim` for the validation and figure scripts in this folder.

BRAID names the binary; otherwise $CARGO_TARGET_DIR/release/braid, or target/release/braid
at the repository root. Build it first with `cargo build --release -p braid`.
"""
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def binary():
    if "BRAID" in os.environ:
        return os.environ["BRAID"]
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "braid")


def command(overrides, scenario="scenarios/default.toml", extra=()):
    cmd = [binary(), "sim", os.path.join(ROOT, scenario), *extra]
    for o in overrides:
        cmd += ["--set", o]
    return cmd


def report(overrides, scenario="scenarios/default.toml", baseline=False):
    """The JSON report of one run (with --baseline: relative_dlct too)."""
    extra = ["--json"] + (["--baseline"] if baseline else [])
    out = subprocess.run(command(overrides, scenario, extra), check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def try_report(overrides, scenario="scenarios/default.toml", baseline=False):
    """As `report`, or None when the run fails (e.g. the transfer does not complete)."""
    try:
        return report(overrides, scenario, baseline)
    except subprocess.CalledProcessError:
        return None


def lab(overrides, scenario="scenarios/default.toml"):
    """The JSON report of one `braid lab --mode tunnel --emulator linkem --baseline` run (real
    namespaces, kernel TCP, two `braid tunnel` daemons; needs root)."""
    cmd = [binary(), "lab", os.path.join(ROOT, scenario), "--mode", "tunnel",
           "--emulator", "linkem", "--baseline", "--json"]
    for o in overrides:
        cmd += ["--set", o]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)
