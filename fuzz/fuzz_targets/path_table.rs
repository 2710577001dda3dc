//! Decodes arbitrary bytes as a handshake's path table (`braid-net/src/crypto/path_table.rs`);
//! whatever decodes must re-encode to the same bytes, and the maps of any two decoded tables
//! must agree: every matched path's wire id names a path of the same name.
#![no_main]

use braid_net::crypto::path_table::{PathMap, PathTable, PATH_TABLE_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let decode = |b: &[u8]| -> Option<PathTable> {
        PathTable::decode(b.try_into().ok()?).ok()
    };
    let (a, b) = (bytes.get(..PATH_TABLE_LEN), bytes.get(PATH_TABLE_LEN..2 * PATH_TABLE_LEN));
    let Some(ours) = a.and_then(decode) else { return };
    assert_eq!(&ours.encode()[..], a.unwrap());
    let Some(theirs) = b.and_then(decode) else { return };
    for (map, local) in [(PathMap::initiator(&ours, &theirs), &ours), (PathMap::responder(&ours, &theirs), &ours)] {
        for (i, name) in local.names().iter().enumerate() {
            if let Some(w) = map.wire_id(i) {
                assert_eq!(map.wire_name(w), Some(name.as_str()));
            }
        }
    }
});
