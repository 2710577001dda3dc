#!/usr/bin/env python3
"""Runs docs/operating.md's "From zero to a bonded download" as written, in network namespaces.

The blocks of that section run in order, line by line, each on the host its first line names
(`# on the server`, `# on the client`), as root, from the repository's root directory (so
`examples/...` resolves), with `braid` on PATH (the binary given by --braid). Three namespaces
stand in for the world: the client with two uplinks `wlan0` (192.168.1.2, gateway .1) and
`wwan0` (10.64.0.2, gateway .1), each shaped to 20 Mbit/s (tbf) both ways; the server, which
is both uplinks' gateway and has the public address 203.0.113.7 and an `eth0` to the Internet;
and a web server at 198.51.100.10:8080 serving files named like their size (`25MB`).

What cannot run in a namespace is replaced by what it does, and said here:
- the block `# on your build machine` is skipped: --braid is the binary it would build;
- `/etc/braid` and `/run/braid` of each host are directories of its own (private bind mounts);
- `systemctl enable --now braid@NAME` runs what packaging/braid@.service runs (`braid tunnel
  check`, then `braid tunnel` in the background), and waits (at most 10 s) until the daemon
  answers `braid tunnel status` (a client: until its session is established);
  `systemctl stop braid@NAME` sends SIGTERM;
- `# copy HOST:PATH HOST:PATH` copies a file between the hosts.

At the end the script stops both daemons, checks that the client's routing rules are gone,
and removes everything it made. It prints one JSON object: the seconds each step took, the
download's speed, and whether every check passed; exit status 0 only if so.

Usage: sudo python3 scripts/walkthrough.py [--braid target/release/braid]
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "operating.md"
SECTION = "## From zero to a bonded download"
RATE = "20mbit"
FILES_MB = (25,)


# http.server's own server_bind looks up its address's name (socket.getfqdn), which waits for
# DNS timeouts in a namespace without a resolver; this one does not.
WEB_SERVER = """
import functools, http.server, socketserver, sys
class Server(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
Server(("198.51.100.10", 8080), handler).serve_forever()
"""


def sh(*args, check=True, timeout=30, **kw):
    return subprocess.run(args, check=check, timeout=timeout, capture_output=True, text=True, **kw)


def blocks():
    """The section's sh blocks: (host, [lines])."""
    text = DOC.read_text()
    start = text.index(SECTION)
    end = text.find("\n## ", start + len(SECTION))
    section = text[start : end if end >= 0 else len(text)]
    out = []
    for body in re.findall(r"```sh\n(.*?)```", section, re.S):
        lines = [l for l in body.splitlines() if l.strip()]
        head = lines[0]
        if head.startswith("# copy "):
            out.append(("copy", [l[len("# copy ") :] for l in lines]))
            continue
        m = re.fullmatch(r"# on (the )?(.+)", head)
        if not m:
            raise SystemExit(f"a block of {DOC.name} does not say its host: {head!r}")
        out.append((m.group(2), lines[1:]))
    return out


class World:
    """The namespaces, links, shaping and web server; removed by close()."""

    def __init__(self, prefix, work):
        self.prefix = prefix
        self.work = work
        self.ns = {h: f"{prefix}-{h}" for h in ("client", "server", "web")}
        self.pids = []
        self.made = []

    def ip(self, host, *args):
        return sh("ip", "-n", self.ns[host], *args)

    def run_in(self, host, *args, **kw):
        return sh("ip", "netns", "exec", self.ns[host], *args, **kw)

    def build(self):
        for n in self.ns.values():
            sh("ip", "netns", "add", n)
        links = [
            ("client", "wlan0", "192.168.1.2/24", "server", "wifi0", "192.168.1.1/24"),
            ("client", "wwan0", "10.64.0.2/24", "server", "cell0", "10.64.0.1/24"),
            ("server", "eth0", "198.51.100.1/24", "web", "eth0", "198.51.100.10/24"),
        ]
        for k, (a, ai, aaddr, b, bi, baddr) in enumerate(links):
            tmp_a, tmp_b = f"{self.prefix}a{k}", f"{self.prefix}b{k}"
            sh("ip", "link", "add", tmp_a, "type", "veth", "peer", "name", tmp_b)
            sh("ip", "link", "set", tmp_a, "netns", self.ns[a])
            sh("ip", "link", "set", tmp_b, "netns", self.ns[b])
            self.ip(a, "link", "set", tmp_a, "name", ai)
            self.ip(b, "link", "set", tmp_b, "name", bi)
            self.ip(a, "addr", "add", aaddr, "dev", ai)
            self.ip(b, "addr", "add", baddr, "dev", bi)
            self.ip(a, "link", "set", ai, "up")
            self.ip(b, "link", "set", bi, "up")
        for h in self.ns:
            self.ip(h, "link", "set", "lo", "up")
        self.ip("server", "addr", "add", "203.0.113.7/32", "dev", "lo")
        self.ip("client", "route", "add", "default", "via", "192.168.1.1", "dev", "wlan0", "metric", "100")
        self.ip("client", "route", "add", "default", "via", "10.64.0.1", "dev", "wwan0", "metric", "200")
        self.ip("web", "route", "add", "default", "via", "198.51.100.1")
        for host, dev in [("client", "wlan0"), ("client", "wwan0"), ("server", "wifi0"), ("server", "cell0")]:
            self.run_in(host, "tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", RATE,
                        "burst", "32kb", "latency", "50ms")
        files = self.work / "www"
        files.mkdir()
        for mb in FILES_MB:
            with open(files / f"{mb}MB", "wb") as f:
                f.write(os.urandom(mb * 1_000_000))
        web = subprocess.Popen(
            ["ip", "netns", "exec", self.ns["web"], sys.executable, "-c", WEB_SERVER, str(files)],
            stdout=subprocess.DEVNULL, stderr=open(self.work / "web.log", "w"), start_new_session=True)
        self.pids.append(web.pid)
        deadline = time.monotonic() + 10
        while sh("ip", "netns", "exec", self.ns["web"], "bash", "-c",
                 "exec 3<>/dev/tcp/198.51.100.10/8080", check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise RuntimeError("the web server did not start")
            time.sleep(0.1)
        for h in ("client", "server"):
            (self.work / h / "etc-braid").mkdir(parents=True)
            (self.work / h / "run-braid").mkdir(parents=True)
        for d in ("/etc/braid", "/run/braid"):
            if not Path(d).exists():
                Path(d).mkdir()
                self.made.append(d)

    def shell(self, host, line, env):
        """Runs one line on `host`: in its namespace, with its own /etc/braid and /run/braid
        (where the control socket is), from ROOT."""
        etc, run = self.work / host / "etc-braid", self.work / host / "run-braid"
        script = f"mount --bind {etc} /etc/braid && mount --bind {run} /run/braid && cd {ROOT} && {line}"
        return subprocess.run(
            ["ip", "netns", "exec", self.ns[host], "unshare", "-m", "--propagation", "private",
             "bash", "-euo", "pipefail", "-c", script],
            capture_output=True, text=True, timeout=120, env=env)

    def close(self):
        """Stops the web server and every daemon a block started (by the pid files the
        `systemctl` stand-in writes: deleting a namespace does not end its processes, so a
        step that failed after a start would otherwise leave daemons running), then removes
        the namespaces and the mount points it made."""
        for pid in self.pids:
            try:
                os.killpg(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        for pidfile in self.work.glob("*/etc-braid/*.pid"):
            try:
                os.kill(int(pidfile.read_text()), signal.SIGTERM)
            except (ProcessLookupError, ValueError):
                pass
        time.sleep(0.5)
        for n in self.ns.values():
            subprocess.run(["ip", "netns", "del", n], capture_output=True)
        for d in self.made:
            try:
                Path(d).rmdir()
            except OSError:
                pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--braid", default=str(ROOT / "target" / "release" / "braid"))
    args = ap.parse_args()
    braid = Path(args.braid).resolve()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the walkthrough makes namespaces")
    if not braid.is_file():
        raise SystemExit(f"--braid {braid}: no such file (cargo build --release -p braid)")
    for tool in ("curl", "nft", "tc", "unshare"):
        if shutil.which(tool) is None:
            raise SystemExit(f"the walkthrough needs {tool}")
    work = Path(tempfile.mkdtemp(prefix="braid-walkthrough-"))
    bindir = work / "bin"
    bindir.mkdir()
    (bindir / "braid").symlink_to(braid)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    world = World(f"wt{os.getpid() % 100000}", work)
    daemons = {}
    report = {"steps": [], "checks": {}}
    ok = True
    try:
        world.build()
        for host, lines in blocks():
            t0 = time.monotonic()
            if host == "your build machine":
                report["steps"].append({"host": host, "skipped": "--braid is the build"})
                continue
            for line in lines if host != "copy" else []:
                if line.lstrip().startswith("#"):
                    continue
                m = re.fullmatch(r"systemctl enable --now braid@(\S+)", line.strip())
                stop = re.fullmatch(r"systemctl stop braid@(\S+)", line.strip())
                if m:
                    name = m.group(1)
                    cfg = f"/etc/braid/{name}.toml"
                    line = (f"braid tunnel check --config {cfg} && "
                            f"{{ setsid braid tunnel --config {cfg} > /etc/braid/{name}.log 2>&1 "
                            f"< /dev/null & echo $! > /etc/braid/{name}.pid; }}")
                elif stop:
                    line = f"kill -TERM $(cat /etc/braid/{stop.group(1)}.pid)"
                r = world.shell(host, line, env)
                step = {"host": host, "line": line[:120], "rc": r.returncode, "out": r.stdout.strip()[-300:]}
                if r.returncode != 0:
                    step["err"] = r.stderr.strip()[-800:]
                    report["steps"].append(step)
                    raise RuntimeError(f"on the {host}: `{line}` failed: {r.stderr.strip()}")
                if m:
                    daemons[host] = m.group(1)
                    deadline = time.monotonic() + 10
                    while time.monotonic() < deadline:
                        st = world.shell(host, f"braid tunnel status --config /etc/braid/{m.group(1)}.toml --json", env)
                        up = json.loads(st.stdout) if st.returncode == 0 else {}
                        # A server is ready when it answers; a client when its session is.
                        if up.get("role") == "server" or up.get("established"):
                            break
                        time.sleep(0.1)
                if line.startswith("curl"):
                    mbps = float(r.stdout.strip()) * 8 / 1e6
                    report["download_mbps"] = round(mbps, 1)
                report["steps"].append(step)
            for spec in lines if host == "copy" else []:
                src, dst = spec.split()
                (sh_, sp), (dh, dp) = src.split(":", 1), dst.split(":", 1)
                rel = lambda p: Path(p).relative_to("/etc/braid")  # noqa: E731
                shutil.copy(work / sh_ / "etc-braid" / rel(sp), work / dh / "etc-braid" / rel(dp))
                report["steps"].append({"host": "copy", "line": spec})
            report["steps"][-1]["block_s"] = round(time.monotonic() - t0, 2)
        rate = float(RATE.removesuffix("mbit"))
        report["checks"]["download_faster_than_one_uplink"] = report.get("download_mbps", 0) > 1.4 * rate
        rules_running = world.run_in("client", "ip", "rule").stdout
        report["checks"]["rules_while_running"] = "suppress_prefixlength" in rules_running
        for host in ("client", "server"):
            if host in daemons:
                world.shell(host, f"kill -TERM $(cat /etc/braid/{daemons[host]}.pid)", env)
        time.sleep(1.0)
        rules_after = world.run_in("client", "ip", "rule").stdout
        links_after = world.run_in("client", "ip", "link").stdout
        report["checks"]["rules_removed_on_exit"] = "suppress_prefixlength" not in rules_after
        report["checks"]["tun_removed_on_exit"] = "braid0" not in links_after
        ok = all(report["checks"].values())
    except Exception as e:  # reported, then the world is removed
        report["error"] = str(e)
        ok = False
    finally:
        world.close()
    for host, name in daemons.items():
        log = work / host / "etc-braid" / f"{name}.log"
        if log.exists() and not ok:
            report[f"{host}_log"] = log.read_text()[-3000:]
    shutil.rmtree(work, ignore_errors=True)
    report["ok"] = ok
    print(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
