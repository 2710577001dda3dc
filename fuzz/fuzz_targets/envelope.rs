//! Decodes arbitrary bytes as an outer tunnel datagram; whatever decodes must re-encode to the
//! same bytes and decode again to the same value. A compact message's header
//! (crypto/compact.rs) likewise, and no datagram is both.
#![no_main]

use braid_net::crypto::compact::{is_compact, CompactHeader, COMPACT_HEADER_LEN};
use braid_net::crypto::envelope::Envelope;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    if let Some(h) = CompactHeader::decode(bytes) {
        assert!(is_compact(bytes));
        assert_eq!(h.encode()[..], bytes[..COMPACT_HEADER_LEN]);
        assert!(Envelope::parse(bytes).is_err(), "a compact datagram is no full message");
        return;
    }
    let Ok(envelope) = Envelope::parse(bytes) else {
        return;
    };
    let mut buf = vec![0u8; envelope.len()];
    assert_eq!(envelope.emit(&mut buf), Ok(bytes.len()));
    assert_eq!(buf, bytes);
    assert_eq!(Envelope::parse(&buf), Ok(envelope));
});
