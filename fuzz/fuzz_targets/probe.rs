//! Decodes arbitrary bytes as a path probe; whatever decodes must re-encode to the same bytes.
#![no_main]

use braid_core::wire::{Probe, PROBE_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(probe) = Probe::parse(bytes) else {
        return;
    };
    let mut buf = [0u8; PROBE_LEN];
    assert_eq!(probe.emit(&mut buf), Ok(PROBE_LEN));
    assert_eq!(&buf[..], bytes);
});
