//! A sorted set of disjoint, non-adjacent half-open ranges of segment indices.
//!
//! Both ends keep one: the receiver for its out-of-order data (what it SACKs), the sender for
//! what has been SACKed (so a SACK block repeated on every ACK is skipped in O(log n) instead of
//! being walked segment by segment, the job of Linux's `recv_sack_cache`). The number of ranges is
//! the number of holes, small in practice and at most half the window; the vector's capacity is
//! reserved for that bound up front, so steady-state operation never allocates.

use super::SackBlock;

#[derive(Clone, Debug, Default)]
pub(crate) struct RangeSet {
    ranges: Vec<SackBlock>,
}

impl RangeSet {
    /// A set sized for a window of `window_segments`: at most one range per two segments.
    pub fn with_window(window_segments: usize) -> Self {
        RangeSet { ranges: Vec::with_capacity(window_segments / 2 + 2) }
    }

    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The range containing `seq`, if any.
    pub fn find(&self, seq: u64) -> Option<SackBlock> {
        let i = self.ranges.partition_point(|r| r.end <= seq);
        self.ranges.get(i).copied().filter(|r| r.start <= seq)
    }

    /// Adds `start..end` (non-empty), merging overlapping and adjacent ranges; returns the
    /// range that now contains it.
    pub fn insert(&mut self, start: u64, end: u64) -> SackBlock {
        debug_assert!(start < end);
        // First range that overlaps or touches start..end, and one past the last such range.
        let lo = self.ranges.partition_point(|r| r.end < start);
        let hi = self.ranges.partition_point(|r| r.start <= end);
        if lo == hi {
            let r = SackBlock { start, end };
            self.ranges.insert(lo, r);
            return r;
        }
        let merged = SackBlock {
            start: start.min(self.ranges[lo].start),
            end: end.max(self.ranges[hi - 1].end),
        };
        self.ranges[lo] = merged;
        self.ranges.drain(lo + 1..hi);
        merged
    }

    /// Drops everything below `seq`, trimming a range that straddles it.
    pub fn remove_below(&mut self, seq: u64) {
        let n = self.ranges.partition_point(|r| r.end <= seq);
        if n > 0 {
            self.ranges.drain(..n);
        }
        if let Some(first) = self.ranges.first_mut() {
            first.start = first.start.max(seq);
        }
    }

    /// Removes and returns the first range if it starts at `seq`.
    pub fn pop_first_at(&mut self, seq: u64) -> Option<SackBlock> {
        if self.ranges.first().is_some_and(|r| r.start == seq) {
            Some(self.ranges.remove(0))
        } else {
            None
        }
    }

    /// The first sub-range of `pos..end` not covered by the set, if any.
    pub fn next_gap(&self, pos: u64, end: u64) -> Option<(u64, u64)> {
        if pos >= end {
            return None;
        }
        let i = self.ranges.partition_point(|r| r.end <= pos);
        let mut pos = pos;
        if let Some(r) = self.ranges.get(i) {
            if r.start <= pos {
                // Inside a covered range: the gap (if any) starts where it ends; the next
                // range is non-adjacent, so the gap is not empty unless `end` cuts it off.
                pos = r.end;
                if pos >= end {
                    return None;
                }
                let gap_end = self.ranges.get(i + 1).map_or(end, |n| n.start.min(end));
                return Some((pos, gap_end));
            }
            return Some((pos, r.start.min(end)));
        }
        Some((pos, end))
    }

    /// Segments covered at or above `seq`.
    #[cfg(test)]
    pub fn covered_from(&self, seq: u64) -> u64 {
        self.ranges.iter().map(|r| r.end.saturating_sub(r.start.max(seq))).sum()
    }

    #[cfg(test)]
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(start: u64, end: u64) -> SackBlock {
        SackBlock { start, end }
    }

    #[test]
    fn insert_merges_overlapping_and_adjacent_ranges() {
        let mut s = RangeSet::with_window(100);
        s.insert(10, 12);
        s.insert(20, 22);
        s.insert(30, 31);
        assert_eq!(s.as_slice(), &[b(10, 12), b(20, 22), b(30, 31)]);
        assert_eq!(s.insert(12, 14), b(10, 14)); // adjacent on the left
        assert_eq!(s.insert(19, 20), b(19, 22)); // adjacent on the right
        assert_eq!(s.insert(13, 30), b(10, 31)); // swallows everything
        assert_eq!(s.as_slice(), &[b(10, 31)]);
        assert_eq!(s.insert(2, 3), b(2, 3));
        assert_eq!(s.as_slice(), &[b(2, 3), b(10, 31)]);
    }

    #[test]
    fn gaps_skip_covered_ranges() {
        let mut s = RangeSet::with_window(100);
        s.insert(5, 8);
        s.insert(10, 12);
        assert_eq!(s.next_gap(0, 20), Some((0, 5)));
        assert_eq!(s.next_gap(5, 20), Some((8, 10)));
        assert_eq!(s.next_gap(9, 20), Some((9, 10)));
        assert_eq!(s.next_gap(10, 20), Some((12, 20)));
        assert_eq!(s.next_gap(10, 12), None);
        assert_eq!(s.next_gap(6, 7), None);
        assert_eq!(s.find(11), Some(b(10, 12)));
        assert_eq!(s.find(9), None);
    }

    #[test]
    fn remove_below_trims_a_straddling_range() {
        let mut s = RangeSet::with_window(100);
        s.insert(5, 8);
        s.insert(10, 12);
        s.remove_below(6);
        assert_eq!(s.as_slice(), &[b(6, 8), b(10, 12)]);
        s.remove_below(9);
        assert_eq!(s.as_slice(), &[b(10, 12)]);
        assert_eq!(s.covered_from(0), 2);
        assert_eq!(s.pop_first_at(10), Some(b(10, 12)));
        assert!(s.is_empty());
    }
}
