//! Decodes arbitrary bytes as a data frame; whatever decodes must re-encode to the same bytes and
//! decode again to the same value.
#![no_main]

use braid_core::wire::{DataHeader, DATA_HEADER_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok((header, payload)) = DataHeader::parse(bytes) else {
        return;
    };
    let mut buf = vec![0u8; header.frame_len()];
    assert_eq!(header.emit(&mut buf), Ok(DATA_HEADER_LEN));
    buf[DATA_HEADER_LEN..].copy_from_slice(payload);
    assert_eq!(buf, bytes);
    assert_eq!(DataHeader::parse(&buf), Ok((header, payload)));
});
