//! Decodes arbitrary bytes as an outer tunnel datagram; whatever decodes must re-encode to the
//! same bytes and decode again to the same value.
#![no_main]

use braid_net::crypto::envelope::Envelope;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(envelope) = Envelope::parse(bytes) else {
        return;
    };
    let mut buf = vec![0u8; envelope.len()];
    assert_eq!(envelope.emit(&mut buf), Ok(bytes.len()));
    assert_eq!(buf, bytes);
    assert_eq!(Envelope::parse(&buf), Ok(envelope));
});
