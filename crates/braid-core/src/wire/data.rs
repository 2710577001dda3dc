//! The data header (placeholder: codec in progress).

/// Length of the data header in bytes.
pub const DATA_HEADER_LEN: usize = 32;

/// The logical content of a data header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataHeader {
    pub flags: u8,
    pub path_id: u8,
    pub payload_len: u16,
    /// Sequence number across all paths of the tunnel (one per direction), for reordering.
    pub global_seq: u64,
    /// Sequence number on this path, for per-path loss detection and feedback.
    pub path_seq: u64,
    /// Sender clock at transmission, in ns; the receiver echoes it and measures one-way delay.
    pub send_ts_ns: u64,
}
