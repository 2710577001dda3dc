//! The TCP transport's stream framer (`braid-net/src/framing.rs`) against arbitrary bytes.
//!
//! First byte even: the input is a list of frames (one length byte, then that many bytes),
//! pushed through a `FrameWriter` that takes them in pieces and read back through a
//! `FrameReader` in pieces of the sizes the input's second byte sets; what comes out must be
//! exactly the frames that went in, in order. First byte odd: the rest is a hostile stream fed
//! to a reader in pieces; it must never panic, every frame must respect the bound, and after
//! the first error nothing more is read (the caller closes the connection).
#![no_main]

use braid_net::framing::{FrameReader, FrameWriter};
use libfuzzer_sys::fuzz_target;

const MAX_FRAME: usize = 300;

/// Feeds `stream` to a fresh reader in pieces of 1..=`piece` bytes; returns the frames, and
/// whether the reader refused the stream.
fn read_all(stream: &[u8], piece: usize) -> (Vec<Vec<u8>>, bool) {
    let mut reader = FrameReader::new(MAX_FRAME, 64);
    let mut frames = Vec::new();
    let mut at = 0;
    let mut step = 0usize;
    while at < stream.len() {
        step = step.wrapping_mul(31).wrapping_add(7);
        let n = 1 + step % piece;
        let took = reader
            .read_from(|buf| {
                let k = n.min(buf.len()).min(stream.len() - at);
                buf[..k].copy_from_slice(&stream[at..at + k]);
                Ok(k)
            })
            .expect("the closure does not fail");
        at += took;
        loop {
            match reader.next_frame() {
                Ok(Some(f)) => {
                    assert!((1..=MAX_FRAME).contains(&f.len()), "frame of {} bytes", f.len());
                    frames.push(f.to_vec());
                }
                Ok(None) => break,
                Err(_) => return (frames, true),
            }
        }
        if took == 0 {
            break;
        }
    }
    assert!(reader.buffered() <= stream.len());
    (frames, false)
}

fuzz_target!(|input: &[u8]| {
    let Some((&mode, rest)) = input.split_first() else { return };
    let Some((&piece, rest)) = rest.split_first() else { return };
    let piece = 1 + usize::from(piece) % 97;
    if mode % 2 == 1 {
        let _ = read_all(rest, piece);
        return;
    }
    // Frames from the input: a length byte, then up to that many bytes.
    let mut frames = Vec::new();
    let mut i = 0;
    while i < rest.len() {
        let len = usize::from(rest[i]).min(rest.len() - i - 1);
        let body = &rest[i + 1..i + 1 + len];
        i += 1 + len;
        if !body.is_empty() {
            frames.push(body.to_vec());
        }
    }
    let mut writer = FrameWriter::new(1 << 20);
    for f in &frames {
        assert!(writer.push(MAX_FRAME, |buf| {
            buf[..f.len()].copy_from_slice(f);
            f.len()
        }));
    }
    // The socket takes at most `piece` bytes per call, sometimes none.
    let mut stream = Vec::new();
    let mut calls = 0usize;
    while writer.pending() > 0 {
        writer
            .flush(|b| {
                calls += 1;
                if calls % 5 == 0 {
                    return Err(std::io::ErrorKind::WouldBlock.into());
                }
                let k = b.len().min(piece);
                stream.extend_from_slice(&b[..k]);
                Ok(k)
            })
            .expect("WouldBlock is not an error");
    }
    let (out, refused) = read_all(&stream, piece);
    assert!(!refused, "the writer's own stream was refused");
    assert_eq!(out, frames);
});
