#!/usr/bin/env python3
"""Writes the seed inputs in corpus-seeds/ from an encoder written independently of the Rust one.

Files named valid-* must decode and re-encode to the same bytes; invalid-* must be rejected.
crates/braid-core/tests/fuzz_corpus.rs checks both, so these double as cross-implementation
known answers. Run from anywhere: python3 fuzz/gen_seeds.py
"""
from pathlib import Path

SEEDS = Path(__file__).resolve().parent / "corpus-seeds"


def u64(v):
    return v.to_bytes(8, "big")


def varint(v):
    # RFC 9000 section 16, shortest form.
    for length, prefix in ((1, 0), (2, 0x40), (4, 0x80), (8, 0xC0)):
        if v < 1 << (8 * length - 2):
            raw = bytearray(v.to_bytes(length, "big"))
            raw[0] |= prefix
            return bytes(raw)
    raise ValueError(v)


def data(payload, flags=0, path=0, gseq=0, pseq=0, ts=0):
    head = bytes([0x10, flags, path, 0]) + len(payload).to_bytes(2, "big") + b"\0\0"
    return head + u64(gseq) + u64(pseq) + u64(ts) + payload


def feedback(ranges, path=0, echo=0, hold=0):
    """ranges: (smallest, largest) pairs, largest first."""
    out = bytes([0x11, path, len(ranges), 0]) + u64(ranges[0][1]) + u64(echo) + u64(hold)
    out += varint(ranges[0][1] - ranges[0][0])
    for (above_smallest, _), (smallest, largest) in zip(ranges, ranges[1:]):
        out += varint(above_smallest - largest - 2) + varint(largest - smallest)
    return out


def probe(kind=0, path=0, ts=0):
    return bytes([0x12, kind, path]) + bytes(5) + u64(ts)


def envelope_initiation(sender, noise, mac1=b"\x01" * 16, mac2=b"\0" * 16):
    # e, encrypted s, encrypted TAI64N timestamp, instance and path table
    assert len(noise) == 32 + 48 + (12 + 8 + 128 + 16)
    return bytes([1, 0, 0, 0]) + sender.to_bytes(4, "big") + noise + mac1 + mac2


def envelope_response(sender, receiver, noise, mac1=b"\x02" * 16, mac2=b"\x03" * 16):
    assert len(noise) == 32 + (8 + 128 + 16)  # e, encrypted instance and path table
    head = bytes([2, 0, 0, 0]) + sender.to_bytes(4, "big") + receiver.to_bytes(4, "big")
    return head + noise + mac1 + mac2


def envelope_cookie_reply(receiver, nonce, sealed_cookie):
    assert len(nonce) == 24 and len(sealed_cookie) == 16 + 16  # cookie and its tag
    return bytes([3, 0, 0, 0]) + receiver.to_bytes(4, "big") + nonce + sealed_cookie


def envelope_transport(receiver, counter, sealed, path=0):
    assert len(sealed) >= 16  # ciphertext and its tag
    return bytes([4, path, 0, 0]) + receiver.to_bytes(4, "big") + u64(counter) + sealed


def seeds():
    known_data = data(b"\xde\xad\xbe\xef", 0xA5, 3, 0x0102030405060708, 42, 1_000_000_000)
    known_fb = feedback([(1000, 1010), (990, 997), (0, 900)], 2, 0x1122334455667788, 250_000)
    sixteen = [(i * 10, i * 10 + 3) for i in range(15, -1, -1)]
    wide = [(2**63, 2**63 + 2**40), (2**62, 2**62 + 2**30), (0, 2**20)]
    init = envelope_initiation(0x01020304, bytes(range(244)))
    resp = envelope_response(7, 0x01020304, bytes(range(50, 234)))
    transport = envelope_transport(0xFFFFFFFE, 2**60, b"\xaa" * 100)
    cookie = envelope_cookie_reply(0x01020304, bytes(range(24)), b"\xcc" * 32)
    return {
        "envelope": {
            "valid-initiation": init,
            "valid-response": resp,
            "valid-keepalive": envelope_transport(1, 0, b"\0" * 16),
            "valid-transport": transport,
            "invalid-empty": b"",
            "valid-cookie-reply": cookie,
            "invalid-cookie-reply-short": cookie[:-1],
            "invalid-unknown-type": bytes([5, 0, 0, 0]) + b"\0" * 60,
            "invalid-initiation-without-macs": init[:116],
            "invalid-initiation-without-path-table": init[:156],
            "invalid-initiation-short": init[:-1],
            "invalid-initiation-long": init + b"\0",
            "invalid-response-reserved": resp[:2] + b"\x01" + resp[3:],
            "invalid-transport-truncated": transport[:31],
            "valid-transport-path-7": envelope_transport(9, 3, b"\xbb" * 20, path=7),
            "invalid-transport-reserved": transport[:2] + b"\x80" + transport[3:],
            "invalid-braid-frame": known_data,
        },
        "data_header": {
            "valid-empty": data(b""),
            "valid-known": known_data,
            "valid-max-fields": data(b"x" * 100, 0xFF, 0xFF, 2**64 - 1, 2**64 - 1, 2**64 - 1),
            "invalid-truncated": known_data[:20],
            "invalid-short-payload": known_data[:-1],
            "invalid-trailing": known_data + b"\0",
            "invalid-reserved": known_data[:6] + b"\x01" + known_data[7:],
            "invalid-feedback": known_fb,
        },
        "feedback": {
            "valid-one-range": feedback([(5, 5)], 1, 7, 0),
            "valid-known": known_fb,
            "valid-sixteen": feedback(sixteen, 4, 123_456_789, 1_000),
            "valid-wide": feedback(wide, 255, 2**64 - 1, 2**64 - 1),
            "invalid-zero-ranges": known_fb[:2] + b"\0" + known_fb[3:28],
            "invalid-seventeen": known_fb[:2] + b"\x11" + known_fb[3:],
            "invalid-non-minimal": known_fb[:28] + b"\x40\x0a" + known_fb[29:],
            "invalid-below-zero": known_fb[:34] + b"\x85",
            "invalid-trailing": known_fb + b"\0",
            "invalid-data": known_data,
        },
        "probe": {
            "valid-request": probe(0, 1, 123_456_789),
            "valid-response": probe(1, 255, 2**64 - 1),
            "invalid-kind": probe(2, 1, 5),
            "invalid-reserved": probe(0, 1, 5)[:4] + b"\x01" + probe(0, 1, 5)[5:],
            "invalid-truncated": probe(0, 1, 5)[:15],
            "invalid-trailing": probe(0, 1, 5) + b"\0",
        },
    }


def framer_frames(*frames):
    """tcp_framer's round-trip mode: even first byte, piece size, then length-prefixed frames."""
    out = bytes([0, 13])
    for f in frames:
        out += bytes([len(f)]) + f
    return out


def path_table(*names):
    """A handshake's path table: 8 slots of a length byte and 15 bytes of name, zero-padded."""
    out = b""
    for n in names:
        out += bytes([len(n)]) + n + bytes(15 - len(n))
    return out + bytes(16 * (8 - len(names)))


def session_script(*ops):
    """session's script: the cipher byte, then (operation, argument, extra bytes...) steps."""
    return bytes([0]) + b"".join(bytes(op) for op in ops)


def extra_seeds():
    root = SEEDS.parent.parent
    examples = {
        f"example-{p.stem}": p.read_bytes() for p in sorted((root / "examples").glob("*.toml"))
    }
    handshake, seal_c, seal_s = [0, 0], [1, 5] + [0x41] * 5, [2, 3] + [0x42] * 3
    deliver = lambda i, how=0: [3, i, how]  # noqa: E731
    return {
        "config": {
            **examples,
            "invalid-empty": b"",
            "invalid-no-paths": b'[interface]\nname = "braid0"\nrole = "client"\n',
        },
        "path_table": {
            "valid-two": path_table(b"wifi", b"cellular"),
            "valid-eight-longest": path_table(*[bytes([0x61 + k]) * 15 for k in range(8)]),
            "invalid-empty": path_table(),
            "invalid-gap": bytes(16) + path_table(b"lte")[:112],
            "invalid-duplicate": path_table(b"wifi", b"wifi"),
            "invalid-space": path_table(b"wi fi"),
            "invalid-after-name": path_table(b"wifi")[:6] + b"x" + path_table(b"wifi")[7:],
        },
        "tcp_framer": {
            "valid-three-frames": framer_frames(b"\x04" + b"\0" * 31, b"abc", b"\xff" * 200),
            "valid-one-byte-pieces": bytes([0, 0, 1, 0x61, 2, 0x62, 0x63]),
            "invalid-zero-length": bytes([1, 5, 0, 0, 0, 4, 1, 2, 3, 4]),
            "invalid-too-long": bytes([1, 5, 0xFF, 0xFF]) + b"\0" * 40,
        },
        "session": {
            "valid-handshake-then-data": session_script(
                handshake, seal_c, seal_s, deliver(2), deliver(3), deliver(2), [6, 200, 64]
            ),
            "valid-tampered-and-replayed": session_script(
                handshake, seal_c, deliver(2, 1) + [20, 1], deliver(2), deliver(2), deliver(0)
            ),
            "valid-rekey-after-time": session_script(
                handshake, seal_c, [6, 255, 40], [6, 255, 40], handshake, seal_s, deliver(4)
            ),
            "valid-raw": session_script([5, 0, 8] + [1, 0, 0, 0] + [9] * 4, handshake),
        },
    }


def main():
    for target, files in {**seeds(), **extra_seeds()}.items():
        folder = SEEDS / target
        folder.mkdir(parents=True, exist_ok=True)
        for name, content in files.items():
            (folder / f"{name}.bin").write_bytes(content)


if __name__ == "__main__":
    main()
