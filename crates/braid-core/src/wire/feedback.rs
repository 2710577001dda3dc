//! The feedback frame (placeholder: codec in progress).

/// At most this many ack ranges travel in one feedback frame.
pub const MAX_ACK_RANGES: usize = 16;

/// A closed range of path sequence numbers, `smallest..=largest`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckRange {
    pub smallest: u64,
    pub largest: u64,
}

/// Up to [`MAX_ACK_RANGES`] disjoint, non-adjacent ranges in descending order (the first range
/// holds the largest sequence number received). Fixed capacity: no allocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckRanges {
    len: u8,
    ranges: [AckRange; MAX_ACK_RANGES],
}

impl AckRanges {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[AckRange] {
        &self.ranges[..self.len as usize]
    }
    /// The largest acknowledged sequence number.
    pub fn largest(&self) -> Option<u64> {
        self.as_slice().first().map(|r| r.largest)
    }
    /// Appends a range below the last one; returns false when full or out of order.
    pub fn push(&mut self, range: AckRange) -> bool {
        if self.len as usize == MAX_ACK_RANGES || range.smallest > range.largest {
            return false;
        }
        if let Some(last) = self.as_slice().last() {
            if range.largest.saturating_add(1) >= last.smallest {
                return false;
            }
        }
        self.ranges[self.len as usize] = range;
        self.len += 1;
        true
    }
}

/// Per-path feedback: which path sequence numbers arrived, and an RTT echo.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    pub path_id: u8,
    pub ranges: AckRanges,
    /// Send timestamp (sender clock, ns) of the packet that triggered this feedback.
    pub echo_ts_ns: u64,
    /// How long the receiver held that packet before sending this feedback, in ns.
    pub hold_time_ns: u64,
}
