//! Replays the fuzz seed inputs (`fuzz/corpus-seeds/<target>/*`) through every decoder on stable
//! Rust, so the seeds are checked even where nightly and cargo-fuzz are absent.
//!
//! Every file goes through every decoder and must not panic; whatever decodes must re-encode to
//! the same bytes. Seeds come from `fuzz/gen_seeds.py`, an encoder written apart from the Rust
//! one: files named `valid-*` must decode with their folder's decoder and `invalid-*` must not.

use braid_core::wire::{DataHeader, Feedback, Probe, PROBE_LEN};
use std::fs;
use std::path::{Path, PathBuf};

fn seeds_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus-seeds")
}

/// Decodes `bytes` as a data frame; on success, checks canonical re-encoding.
fn check_data(bytes: &[u8]) -> bool {
    let Ok((header, payload)) = DataHeader::parse(bytes) else {
        return false;
    };
    let mut buf = vec![0u8; header.frame_len()];
    let n = header.emit(&mut buf).expect("a parsed header emits");
    buf[n..].copy_from_slice(payload);
    assert_eq!(buf, bytes, "data frame re-encodes differently");
    true
}

/// Decodes `bytes` as a feedback frame; on success, checks canonical re-encoding.
fn check_feedback(bytes: &[u8]) -> bool {
    let Ok(feedback) = Feedback::parse(bytes) else {
        return false;
    };
    let mut buf = vec![0u8; feedback.encoded_len()];
    let n = feedback.emit(&mut buf).expect("a parsed feedback emits");
    assert_eq!(&buf[..n], bytes, "feedback frame re-encodes differently");
    true
}

/// Decodes `bytes` as a probe frame; on success, checks canonical re-encoding.
fn check_probe(bytes: &[u8]) -> bool {
    let Ok(probe) = Probe::parse(bytes) else {
        return false;
    };
    let mut buf = [0u8; PROBE_LEN];
    probe.emit(&mut buf).expect("a parsed probe emits");
    assert_eq!(&buf[..], bytes, "probe frame re-encodes differently");
    true
}

#[test]
fn corpus_seeds_decode_without_panicking() {
    let mut files = 0;
    for target in ["data_header", "feedback", "probe"] {
        let dir = seeds_dir().join(target);
        let entries = fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let data_ok = check_data(&bytes);
            let feedback_ok = check_feedback(&bytes);
            let probe_ok = check_probe(&bytes);
            let decoded = match target {
                "data_header" => data_ok,
                "feedback" => feedback_ok,
                _ => probe_ok,
            };
            if name.starts_with("valid-") {
                assert!(decoded, "{target}/{name} should decode");
            } else if name.starts_with("invalid-") {
                assert!(!decoded, "{target}/{name} should be rejected");
            }
            files += 1;
        }
    }
    assert!(files >= 10, "only {files} seed files found under {}", seeds_dir().display());
}
