//! MSS clamping of packets read from the TUN device (`braid-net/src/mss_clamp.rs`): on a server
//! they come from the Internet. Whatever the bytes: no panic; clamping twice changes nothing
//! more; a changed packet differs only in the MSS value and the TCP checksum, and its new MSS is
//! the limit.
#![no_main]

use braid_net::mss_clamp::clamp;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&limit, bytes)) = input.split_first() else { return };
    let max = (1000 + u16::from(limit), 900 + u16::from(limit));
    let mut packet = bytes.to_vec();
    let changed = clamp(&mut packet, max);
    let mut again = packet.clone();
    assert_eq!(clamp(&mut again, max), None, "clamping twice changed more");
    match changed {
        None => assert_eq!(packet, bytes, "unchanged means unchanged"),
        Some(old) => {
            let differing = packet.iter().zip(bytes).filter(|(a, b)| a != b).count();
            assert!(differing <= 4, "only the MSS and the checksum change: {differing} bytes");
            assert!(old > max.0.min(max.1));
        }
    }
});
