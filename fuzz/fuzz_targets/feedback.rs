//! Decodes arbitrary bytes as a feedback frame; whatever decodes must re-encode to the same bytes
//! and decode again to the same value.
#![no_main]

use braid_core::wire::Feedback;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(feedback) = Feedback::parse(bytes) else {
        return;
    };
    let mut buf = vec![0u8; feedback.encoded_len()];
    assert_eq!(feedback.emit(&mut buf), Ok(bytes.len()));
    assert_eq!(buf, bytes);
    assert_eq!(Feedback::parse(&buf), Ok(feedback));
});
