#!/usr/bin/env python3
"""CPF vs ACPF, after the ACPF paper (Pieska et al. 2021): CCID5 and BBR tunnels, short and long
delay sets.

The paper's Mininet setup (section 5.1): both paths 25 Mbit/s with CCID5 tunnels (kernel
framework) or 50 Mbit/s with TCP-BBR tunnels (user-space framework); 4 ms between anchor and
server and 16 / 26 ms over the primary / secondary path ("short"), or 8 / 32 / 42 ms ("long");
bottleneck buffers large enough not to overflow from BBR; a greedy iperf flow with NewReno,
Cubic or BBR end to end. We read the delays as RTTs (the paper does not say whether netem's
delay was set in one or both directions) and a 300 MB download (150 MB at 25 Mbit/s). The
buffer ("large enough not to overflow from BBR") is --buffer packets (default 2000; BBR keeps
about one BDP, 55-110 packets here, in the queue). Prints the mean goodput and ACPF's gain.

    cargo build --release -p braid
    python3 scripts/acpf_gain.py [--buffer 2000]
"""
import argparse

from braidsim import report

DELAYS = {"short": (4, 16, 26), "long": (8, 32, 42)}


def goodput(sets):
    return report(sets)["goodput_mbps"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--buffer", type=int, default=2000)
    args = ap.parse_args()
    print("| tunnel (rate) | delays | e2e | CPF Mbit/s | ACPF Mbit/s | ACPF gain |")
    print("|---|---|---|---|---|---|")
    for tunnel, rate, nbytes in [("ccid5", 25, 150_000_000), ("bbr", 50, 300_000_000)]:
        for name, (server, p1, p2) in DELAYS.items():
            for e2e in ["newreno", "cubic", "bbr"]:
                base = [
                    f"tunnel.cc={tunnel}", f"e2e.cc={e2e}", f"e2e.bytes={nbytes}",
                    f"server_link.rtt_ms={server}", f"paths.0.rtt_ms={p1}", f"paths.1.rtt_ms={p2}",
                    f"paths.0.rate_mbps={rate}", f"paths.1.rate_mbps={rate}",
                    f"paths.0.uplink_rate_mbps={rate}", f"paths.1.uplink_rate_mbps={rate}",
                    f"paths.0.buffer_pkts={args.buffer}", f"paths.1.buffer_pkts={args.buffer}",
                ]
                cpf = goodput(base + ["tunnel.scheduler=cpf"])
                acpf = goodput(base + ["tunnel.scheduler=acpf"])
                print(f"| {tunnel} ({rate} Mbit/s) | {name} {server}/{p1}/{p2} ms | {e2e} | "
                      f"{cpf:.1f} | {acpf:.1f} | {(acpf / cpf - 1) * 100:+.0f}% |")


if __name__ == "__main__":
    main()
