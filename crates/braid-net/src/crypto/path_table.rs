//! Paths matched by name: the table of path names each end sends in its handshake message, and
//! the map from our paths to the ids on the wire that both ends derive from the two tables.
//!
//! A transport datagram names its path in byte 1 of its header (authenticated, see
//! [`super::envelope`]). That id must mean the same path at both ends whatever order their
//! configuration files list the paths in, so the id is the path's position in the
//! **initiator's** table: the initiation carries the initiator's names, the response the
//! responder's, and each end maps its own paths by name. A name one end has and the other does
//! not is an *unmatched* path: it carries nothing, and both ends can name it in an error
//! (the initiator's unmatched paths are named by both ends; the responder names its own too).
//! MPTCP signals its addresses with an id per address for the same reason (RFC 8684 3.4.1,
//! ADD_ADDR's Address ID); a name is what an operator wrote in both files.
//!
//! ```text
//!  table, exactly PATH_TABLE_LEN = 8 x 16 bytes, inside the encrypted handshake payload
//!  slot k (k = 0..8):  1 byte name length n (0: no path k; then the slot is all zeros)
//!                     15 bytes: the name (n bytes of [A-Za-z0-9._-]) and zeros after it
//! ```
//! The used slots come first (no gaps), names are unique. Decoding is strict and every failure
//! is a [`PathTableError`]; the table is authenticated, so a bad one is a peer's bug, not an
//! attack, but it is refused all the same.

use std::fmt;

/// Most paths a tunnel has: the table's slots (MPTCP's default subflow limit is of this order:
/// Linux `net.mptcp` allows at most 8 additional subflows per connection).
pub const MAX_PATHS: usize = 8;
/// Most bytes of a path name: a Linux interface name's (IFNAMSIZ - 1), so a path can be named
/// after its device.
pub const MAX_NAME_BYTES: usize = 15;
/// One slot: the length byte and the name's room.
const SLOT_LEN: usize = 1 + MAX_NAME_BYTES;
/// The encoded table.
pub const PATH_TABLE_LEN: usize = MAX_PATHS * SLOT_LEN;

/// Why a path table (or a name for one) was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PathTableError {
    #[error("a tunnel has 1..={MAX_PATHS} paths, not {0}")]
    Count(usize),
    #[error("path name {0:?}: must be 1..={MAX_NAME_BYTES} bytes of [A-Za-z0-9._-]")]
    Name(String),
    #[error("path name {0:?} appears twice")]
    Duplicate(String),
    #[error(
        "path table slot {0} is malformed (length out of range, bytes after the name, or a gap)"
    )]
    Slot(usize),
}

/// Whether `name` may name a path: what [`PathTable::new`] accepts.
pub fn valid_name(name: &str) -> bool {
    (1..=MAX_NAME_BYTES).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// One end's path names, in its configuration's order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathTable {
    names: Vec<String>,
}

impl PathTable {
    /// A table of `names`: 1..=[`MAX_PATHS`] valid, unique names.
    pub fn new<S: AsRef<str>>(names: &[S]) -> Result<Self, PathTableError> {
        if names.is_empty() || names.len() > MAX_PATHS {
            return Err(PathTableError::Count(names.len()));
        }
        let mut out: Vec<String> = Vec::with_capacity(names.len());
        for name in names.iter().map(AsRef::as_ref) {
            if !valid_name(name) {
                return Err(PathTableError::Name(name.to_owned()));
            }
            if out.iter().any(|n| n == name) {
                return Err(PathTableError::Duplicate(name.to_owned()));
            }
            out.push(name.to_owned());
        }
        Ok(PathTable { names: out })
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The table's wire form.
    pub fn encode(&self) -> [u8; PATH_TABLE_LEN] {
        let mut out = [0u8; PATH_TABLE_LEN];
        for (slot, name) in out.chunks_exact_mut(SLOT_LEN).zip(&self.names) {
            slot[0] = name.len() as u8;
            slot[1..=name.len()].copy_from_slice(name.as_bytes());
        }
        out
    }

    /// Reads a table's wire form, strictly: see the module documentation.
    pub fn decode(bytes: &[u8; PATH_TABLE_LEN]) -> Result<Self, PathTableError> {
        let mut names: Vec<String> = Vec::new();
        let mut ended = false;
        for (k, slot) in bytes.chunks_exact(SLOT_LEN).enumerate() {
            let n = usize::from(slot[0]);
            let padding_zero = slot[1 + n.min(MAX_NAME_BYTES)..].iter().all(|&b| b == 0);
            if n > MAX_NAME_BYTES || !padding_zero || (n > 0 && ended) {
                return Err(PathTableError::Slot(k));
            }
            if n == 0 {
                ended = true;
                continue;
            }
            let name = std::str::from_utf8(&slot[1..=n])
                .ok()
                .filter(|s| valid_name(s))
                .ok_or(PathTableError::Slot(k))?;
            if names.iter().any(|m| m == name) {
                return Err(PathTableError::Duplicate(name.to_owned()));
            }
            names.push(name.to_owned());
        }
        if names.is_empty() {
            return Err(PathTableError::Count(0));
        }
        Ok(PathTable { names })
    }
}

impl fmt::Display for PathTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names.join(", "))
    }
}

/// How one end's paths meet the peer's, from the two tables of a handshake.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathMap {
    /// The wire id of each of our paths (by our index); `None`: the peer has no such path.
    wire_of_local: Vec<Option<u8>>,
    /// Path names by wire id: the initiator's table.
    wire_names: Vec<String>,
    /// The peer's paths we have no path of that name for.
    peer_only: Vec<String>,
}

impl PathMap {
    /// The initiator's map: its own indices are the wire ids, for the paths the responder has.
    pub fn initiator(ours: &PathTable, theirs: &PathTable) -> Self {
        PathMap {
            wire_of_local: (0..ours.len())
                .map(|k| theirs.position(&ours.names[k]).map(|_| k as u8))
                .collect(),
            wire_names: ours.names.clone(),
            peer_only: theirs
                .names
                .iter()
                .filter(|n| ours.position(n).is_none())
                .cloned()
                .collect(),
        }
    }

    /// The responder's map: each of its paths takes the wire id of the initiator's path of the
    /// same name.
    pub fn responder(ours: &PathTable, theirs: &PathTable) -> Self {
        PathMap {
            wire_of_local: ours.names.iter().map(|n| theirs.position(n).map(|k| k as u8)).collect(),
            wire_names: theirs.names.clone(),
            peer_only: theirs
                .names
                .iter()
                .filter(|n| ours.position(n).is_none())
                .cloned()
                .collect(),
        }
    }

    /// The wire id of our path `local`, if the peer has a path of its name.
    pub fn wire_id(&self, local: usize) -> Option<u8> {
        self.wire_of_local.get(local).copied().flatten()
    }

    /// The name a wire id stands for, if any path has it.
    pub fn wire_name(&self, wire: u8) -> Option<&str> {
        self.wire_names.get(usize::from(wire)).map(String::as_str)
    }

    /// Whether our path `local` has a match at the peer.
    pub fn is_matched(&self, local: usize) -> bool {
        self.wire_id(local).is_some()
    }

    /// The peer's path names we have no path for.
    pub fn peer_only(&self) -> &[String] {
        &self.peer_only
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(names: &[&str]) -> PathTable {
        PathTable::new(names).unwrap()
    }

    #[test]
    fn a_table_survives_its_wire_form() {
        for names in
            [&["wifi"][..], &["wifi", "cellular"], &["a", "b", "c", "d", "e", "f", "g", "h"]]
        {
            let t = table(names);
            assert_eq!(PathTable::decode(&t.encode()), Ok(t));
        }
        let longest = "x".repeat(MAX_NAME_BYTES);
        let t = table(&[longest.as_str(), "wwan0.1"]);
        let bytes = t.encode();
        assert_eq!(bytes[0], 15);
        assert_eq!(&bytes[1..16], longest.as_bytes());
        assert_eq!(bytes[16], 7);
        assert!(bytes[32..].iter().all(|&b| b == 0));
        assert_eq!(PathTable::decode(&bytes), Ok(t));
    }

    #[test]
    fn names_and_counts_out_of_range_are_refused() {
        assert_eq!(PathTable::new::<&str>(&[]), Err(PathTableError::Count(0)));
        let nine: Vec<String> = (0..9).map(|k| format!("p{k}")).collect();
        assert_eq!(PathTable::new(&nine), Err(PathTableError::Count(9)));
        for bad in ["", "sixteen-bytes-xx", "wi fi", "wifi/1", "é"] {
            assert_eq!(PathTable::new(&[bad]), Err(PathTableError::Name(bad.to_owned())), "{bad}");
        }
        assert_eq!(
            PathTable::new(&["wifi", "wifi"]),
            Err(PathTableError::Duplicate("wifi".to_owned()))
        );
    }

    #[test]
    fn malformed_wire_tables_are_refused() {
        let good = table(&["wifi", "lte"]).encode();
        let mut long = good;
        long[0] = 16;
        assert_eq!(PathTable::decode(&long), Err(PathTableError::Slot(0)));
        let mut trailing = good;
        trailing[10] = b'x'; // after "wifi" in slot 0
        assert_eq!(PathTable::decode(&trailing), Err(PathTableError::Slot(0)));
        let mut gap = [0u8; PATH_TABLE_LEN];
        gap[16..20].copy_from_slice(&[3, b'l', b't', b'e']); // slot 0 empty, slot 1 used
        assert_eq!(PathTable::decode(&gap), Err(PathTableError::Slot(1)));
        let mut space = good;
        space[2] = b' ';
        assert_eq!(PathTable::decode(&space), Err(PathTableError::Slot(0)));
        let mut twice = good;
        twice[16..21].copy_from_slice(&[4, b'w', b'i', b'f', b'i']);
        assert_eq!(PathTable::decode(&twice), Err(PathTableError::Duplicate("wifi".into())));
        assert_eq!(PathTable::decode(&[0; PATH_TABLE_LEN]), Err(PathTableError::Count(0)));
    }

    /// Replays the committed fuzz seeds (written by fuzz/gen_seeds.py, an encoder apart from this
    /// one) on stable Rust: `valid-*` must decode and re-encode identically, `invalid-*` fail.
    #[test]
    fn fuzz_corpus_seeds() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus-seeds/path_table");
        let mut checked = 0;
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes: [u8; PATH_TABLE_LEN] =
                std::fs::read(&path).unwrap().try_into().expect("a seed is one table");
            let decoded = PathTable::decode(&bytes);
            if name.starts_with("valid-") {
                assert_eq!(decoded.map(|t| t.encode()), Ok(bytes), "{name}");
            } else {
                assert!(decoded.is_err(), "{name} should be refused");
            }
            checked += 1;
        }
        assert!(checked >= 7, "only {checked} seeds in {}", dir.display());
    }

    #[test]
    fn swapped_orders_agree_on_every_wire_id() {
        // The client lists wifi, cellular; the server cellular, wifi.
        let client = table(&["wifi", "cellular"]);
        let server = table(&["cellular", "wifi"]);
        let c = PathMap::initiator(&client, &server);
        let s = PathMap::responder(&server, &client);
        assert_eq!((c.wire_id(0), c.wire_id(1)), (Some(0), Some(1)));
        assert_eq!((s.wire_id(0), s.wire_id(1)), (Some(1), Some(0)));
        for (local, name) in server.names().iter().enumerate() {
            assert_eq!(s.wire_name(s.wire_id(local).unwrap()), Some(name.as_str()));
        }
        assert!(c.peer_only().is_empty() && s.peer_only().is_empty());
    }

    #[test]
    fn a_name_only_one_end_has_is_unmatched_at_both() {
        let client = table(&["wifi", "lte"]);
        let server = table(&["wifi", "cellular"]);
        let c = PathMap::initiator(&client, &server);
        let s = PathMap::responder(&server, &client);
        assert_eq!((c.wire_id(0), c.wire_id(1)), (Some(0), None));
        assert_eq!((s.wire_id(0), s.wire_id(1)), (Some(0), None));
        assert_eq!(c.peer_only(), ["cellular"]);
        assert_eq!(s.peer_only(), ["lte"]);
        assert_eq!(s.wire_name(1), Some("lte"));
        assert_eq!(s.wire_name(2), None);
    }
}
