//! Whether a sender used its congestion window, as Linux decides it before growing the window.
//!
//! Linux grows a Reno or CUBIC window only when `tcp_is_cwnd_limited` (include/net/tcp.h)
//! holds: the window was used (`tp->is_cwnd_limited`), or, in slow start, the window is below
//! twice the largest flight of the current window (`cwnd < 2 * max_packets_out`, so slow start
//! can double what was really sent). The flag and the largest flight are kept by
//! `tcp_cwnd_validate` (net/ipv4/tcp_output.c), called after each transmission pass with
//! `is_cwnd_limited = packets_in_flight >= cwnd`: once per window of data (until `snd_una`
//! passes the `snd_nxt` recorded at the last update) it starts afresh, and within a window a
//! cwnd-limited pass, or a larger flight while not yet limited, updates it. A window that filled
//! once counts as used until the data sent then is acknowledged.
//!
//! This is a weaker condition than the delivery-rate estimator's application-limited mark
//! (draft-cheng-iccrg-delivery-rate-estimation section 3.4, [`super::rate`]), which a sender
//! sets whenever it has nothing queued and room in its window, and which stays on until the
//! flight of that moment is delivered. A multipath scheduler that moves whatever does not fit a
//! path's window to another path leaves every path's queue empty, so under the estimator's mark
//! a fast path whose window the data always fills would never be allowed to grow; Linux, and a
//! kernel-TCP tunnel path, grow it.

/// The cwnd-usage state of one sender (Linux `is_cwnd_limited`, `max_packets_out`,
/// `cwnd_usage_seq`), in bytes and the sender's own packet sequence numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CwndUsage {
    limited: bool,
    max_in_flight_bytes: u64,
    /// The window's end: the first sequence number sent after the last update.
    window_end_seq: u64,
}

impl CwndUsage {
    pub fn new() -> Self {
        Self::default()
    }

    /// `tcp_cwnd_validate` after a transmission: `in_flight_bytes` outstanding now, `cwnd_bytes`
    /// the window, `lowest_unacked_seq` the oldest unacknowledged sequence number (`snd_una`),
    /// `next_seq` the next one to send (`snd_nxt`). Linux counts the window in packets and calls
    /// it full when `packets_in_flight >= cwnd`; in bytes, full is no room for one more
    /// `mss_bytes` packet.
    pub fn on_sent(
        &mut self,
        in_flight_bytes: u64,
        cwnd_bytes: u64,
        mss_bytes: u64,
        lowest_unacked_seq: u64,
        next_seq: u64,
    ) {
        let limited = in_flight_bytes + mss_bytes > cwnd_bytes;
        let window_over = lowest_unacked_seq >= self.window_end_seq;
        if window_over || limited || (!self.limited && in_flight_bytes > self.max_in_flight_bytes) {
            self.limited = limited;
            self.max_in_flight_bytes = in_flight_bytes;
            self.window_end_seq = next_seq;
        }
    }

    /// Whether the current window filled the congestion window (`tp->is_cwnd_limited`).
    pub fn is_cwnd_limited(&self) -> bool {
        self.limited
    }

    /// The largest flight of the current window, bytes (`tp->max_packets_out`).
    pub fn max_in_flight_bytes(&self) -> u64 {
        self.max_in_flight_bytes
    }
}

/// `tcp_is_cwnd_limited`: whether an ACK may grow a window of `cwnd_bytes` (`in_slow_start`
/// below `ssthresh`), given the sender's usage as an ACK carries it.
pub fn may_grow(
    cwnd_limited: bool,
    max_in_flight_bytes: u64,
    cwnd_bytes: u64,
    in_slow_start: bool,
) -> bool {
    cwnd_limited || (in_slow_start && cwnd_bytes < max_in_flight_bytes.saturating_mul(2))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1000;

    #[test]
    fn a_window_that_filled_once_counts_until_its_data_is_acknowledged() {
        let mut u = CwndUsage::new();
        // Ten packets into a ten-packet window: the last send fills it.
        for seq in 0..10 {
            u.on_sent((seq + 1) * MSS, 10 * MSS, MSS, 0, seq + 1);
        }
        assert!(u.is_cwnd_limited());
        assert_eq!(u.max_in_flight_bytes(), 10 * MSS);
        // Half acknowledged; a send within the same window keeps the flag.
        u.on_sent(6 * MSS, 10 * MSS, MSS, 5, 11);
        assert!(u.is_cwnd_limited(), "the window's data is not acknowledged yet");
        // Past the window's end a short flight starts a new, unused window.
        u.on_sent(2 * MSS, 10 * MSS, MSS, 10, 12);
        assert!(!u.is_cwnd_limited());
        assert_eq!(u.max_in_flight_bytes(), 2 * MSS);
    }

    #[test]
    fn a_larger_flight_updates_an_unused_window() {
        let mut u = CwndUsage::new();
        u.on_sent(2 * MSS, 10 * MSS, MSS, 0, 2);
        u.on_sent(4 * MSS, 10 * MSS, MSS, 0, 4);
        assert_eq!(u.max_in_flight_bytes(), 4 * MSS);
        assert!(!u.is_cwnd_limited());
    }

    #[test]
    fn slow_start_grows_up_to_twice_the_largest_flight() {
        // Linux: in slow start, cwnd < 2 * max_packets_out lets an unfilled window grow.
        assert!(may_grow(false, 6 * MSS, 10 * MSS, true));
        assert!(!may_grow(false, 5 * MSS, 10 * MSS, true));
        assert!(
            !may_grow(false, 6 * MSS, 10 * MSS, false),
            "congestion avoidance needs a full window"
        );
        assert!(may_grow(true, 0, 10 * MSS, false));
    }
}
