//! Mahimahi capacity traces: when a link may deliver, as a repeating list of opportunities.
//!
//! # Format
//! The trace files of Mahimahi's `mm-link` (Netravali et al., "Mahimahi: Accurate
//! Record-and-Replay for HTTP", USENIX ATC 2015; `src/frontend/link_queue.cc`): one line per
//! delivery opportunity, each an integer millisecond timestamp, in non-decreasing order. A
//! timestamp repeated n times is n opportunities in that millisecond. Each opportunity delivers
//! up to one MTU, [`OPPORTUNITY_BYTES`]; one line per millisecond is therefore
//! 1500 * 8 / 1 ms = 12 Mbit/s. The trace repeats with a period equal to its last timestamp: the
//! opportunity at `t` ms recurs at `t + period`, `t + 2 period`, ... (so a last line at
//! `period` and a first line at 0 fall on the same instant of consecutive periods, as in
//! Mahimahi).
//!
//! # Parsing
//! As `link_queue.cc` does, the parser rejects empty lines, decreasing timestamps, a file with
//! no timestamp and a trace whose last timestamp is 0 (it would last no time). Unlike
//! `myatoi`, anything that is not a plain unsigned decimal integer is an error too. Surrounding
//! whitespace (and a `\r` line ending) is ignored. Every error names the 1-based line.
//!
//! # Choices
//! - Mahimahi counts 1504 bytes per opportunity (a TUN frame with its 4-byte header); we count
//!   1500, the IP MTU, so one line per millisecond is exactly 12 Mbit/s.
//! - How an opportunity's bytes are shared between packets is the link's business; the trace
//!   only says when opportunities happen ([`TraceCursor`]).

use std::sync::Arc;

use crate::time::Instant;

/// Bytes one delivery opportunity carries: one 1500-byte MTU.
pub const OPPORTUNITY_BYTES: u32 = 1500;
/// Largest timestamp accepted, ms (about 115 days): keeps every opportunity time, over as many
/// repetitions as a simulation can run, within the nanosecond clock.
pub const MAX_TIMESTAMP_MS: u64 = 10_000_000_000;
const NS_PER_MS: u64 = 1_000_000;

/// Why a trace was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("the trace is empty: it needs at least one millisecond timestamp")]
    Empty,
    #[error("line {line}: empty line; each line must hold one millisecond timestamp")]
    EmptyLine { line: usize },
    #[error("line {line}: {text:?} is not a millisecond timestamp (an unsigned integer)")]
    NotAnInteger { line: usize, text: String },
    #[error("line {line}: timestamp {ms} ms is beyond the largest accepted, {max} ms")]
    TooLarge { line: usize, ms: u64, max: u64 },
    #[error(
        "line {line}: timestamp {ms} ms is earlier than {previous} ms on line {}; \
         timestamps must not decrease",
        line - 1
    )]
    Decreasing { line: usize, ms: u64, previous: u64 },
    #[error(
        "line {line}: the last timestamp is 0 ms, so the trace would last no time \
         (its period is its last timestamp)"
    )]
    ZeroPeriod { line: usize },
}

/// A parsed Mahimahi trace: the opportunities of one period.
#[derive(Clone, PartialEq, Eq)]
pub struct MahimahiTrace {
    /// Non-empty, non-decreasing, last element positive and at most [`MAX_TIMESTAMP_MS`].
    opportunities_ms: Vec<u64>,
}

impl std::fmt::Debug for MahimahiTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MahimahiTrace")
            .field("opportunities", &self.opportunities_ms.len())
            .field("period_ms", &self.period_ms())
            .finish()
    }
}

impl MahimahiTrace {
    /// Parses the text of a trace file.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut opportunities_ms = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let token = raw.trim();
            if token.is_empty() {
                return Err(TraceError::EmptyLine { line });
            }
            if !token.bytes().all(|b| b.is_ascii_digit()) {
                return Err(TraceError::NotAnInteger { line, text: token.to_string() });
            }
            let ms = match token.parse::<u64>() {
                Ok(ms) if ms <= MAX_TIMESTAMP_MS => ms,
                // Only digits, so the parse fails only on overflow.
                Ok(ms) => return Err(TraceError::TooLarge { line, ms, max: MAX_TIMESTAMP_MS }),
                Err(_) => {
                    return Err(TraceError::TooLarge { line, ms: u64::MAX, max: MAX_TIMESTAMP_MS })
                }
            };
            if let Some(&previous) = opportunities_ms.last() {
                if ms < previous {
                    return Err(TraceError::Decreasing { line, ms, previous });
                }
            }
            opportunities_ms.push(ms);
        }
        Self::from_opportunities_ms(opportunities_ms)
    }

    /// A trace from its timestamps, checked as the parser checks a file (line numbers count
    /// from 1 in `opportunities_ms`).
    pub fn from_opportunities_ms(opportunities_ms: Vec<u64>) -> Result<Self, TraceError> {
        let Some(&last) = opportunities_ms.last() else { return Err(TraceError::Empty) };
        for (i, pair) in opportunities_ms.windows(2).enumerate() {
            if pair[1] < pair[0] {
                return Err(TraceError::Decreasing { line: i + 2, ms: pair[1], previous: pair[0] });
            }
        }
        if last > MAX_TIMESTAMP_MS {
            let line = opportunities_ms.len();
            return Err(TraceError::TooLarge { line, ms: last, max: MAX_TIMESTAMP_MS });
        }
        if last == 0 {
            return Err(TraceError::ZeroPeriod { line: opportunities_ms.len() });
        }
        Ok(MahimahiTrace { opportunities_ms })
    }

    /// The period after which the trace repeats: its last timestamp.
    pub fn period_ms(&self) -> u64 {
        self.opportunities_ms[self.opportunities_ms.len() - 1]
    }

    /// Opportunities in one period.
    pub fn opportunities_per_period(&self) -> usize {
        self.opportunities_ms.len()
    }

    /// Average capacity over a period, bytes per second.
    pub fn mean_rate_bytes_per_s(&self) -> f64 {
        self.opportunities_ms.len() as f64 * f64::from(OPPORTUNITY_BYTES) * 1e3
            / self.period_ms() as f64
    }

    /// Time of opportunity `index` of period `cycle`, ns.
    fn at_ns(&self, cycle: u64, index: usize) -> u64 {
        (cycle * self.period_ms() + self.opportunities_ms[index]) * NS_PER_MS
    }
}

/// A position in the endless repetition of a trace: the next opportunity not yet used.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    trace: Arc<MahimahiTrace>,
    /// Repetition of the trace the next opportunity belongs to.
    cycle: u64,
    /// Index of the next opportunity within the repetition.
    index: usize,
}

impl TraceCursor {
    /// Positioned on the first opportunity of the first repetition, which starts at time zero.
    pub fn new(trace: Arc<MahimahiTrace>) -> Self {
        TraceCursor { trace, cycle: 0, index: 0 }
    }

    pub fn trace(&self) -> &Arc<MahimahiTrace> {
        &self.trace
    }

    /// Time of the next unused opportunity at or after `t`. Unused opportunities before `t`
    /// are skipped for good: capacity not used when offered is lost, as on a radio link.
    pub fn next_at_or_after(&mut self, t: Instant) -> Instant {
        let t_ns = t.as_nanos();
        if self.peek_ns() < t_ns {
            self.seek(t_ns);
        }
        Instant::from_nanos(self.peek_ns())
    }

    /// Uses the next unused opportunity and returns its time.
    pub fn use_next(&mut self) -> Instant {
        let at = self.peek_ns();
        self.index += 1;
        if self.index == self.trace.opportunities_ms.len() {
            self.index = 0;
            self.cycle += 1;
        }
        Instant::from_nanos(at)
    }

    fn peek_ns(&self) -> u64 {
        self.trace.at_ns(self.cycle, self.index)
    }

    /// Moves to the first opportunity at or after `t_ns`, which lies ahead of the cursor.
    fn seek(&mut self, t_ns: u64) {
        let period_ns = self.trace.period_ms() * NS_PER_MS;
        // The repetition whose span (start, end] holds t: its last opportunity, at its end,
        // is at or after t. A t exactly on a boundary belongs to the repetition it ends.
        let cycle = t_ns.div_ceil(period_ns).saturating_sub(1);
        let base_ns = cycle * period_ns;
        let index =
            self.trace.opportunities_ms.partition_point(|&ms| base_ns + ms * NS_PER_MS < t_ns);
        self.cycle = cycle;
        self.index = index;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn trace(text: &str) -> MahimahiTrace {
        MahimahiTrace::parse(text).unwrap()
    }

    fn cursor(text: &str) -> TraceCursor {
        TraceCursor::new(Arc::new(trace(text)))
    }

    #[test]
    fn parses_timestamps_and_derives_period_and_rate() {
        let t = trace("1\n1\n3\r\n 4 \n");
        assert_eq!(t.opportunities_per_period(), 4);
        assert_eq!(t.period_ms(), 4);
        // 4 opportunities of 1500 bytes per 4 ms = 1500 bytes/ms = 1.5e6 B/s.
        assert_eq!(t.mean_rate_bytes_per_s(), 1.5e6);
    }

    #[test]
    fn one_line_per_ms_is_12_mbit_per_s() {
        // A single line "1": one opportunity per 1 ms period, 1500 * 8 * 1000 = 12e6 bit/s.
        assert_eq!(trace("1\n").mean_rate_bytes_per_s() * 8.0, 12e6);
        let per_ms: String = (1..=1000).map(|ms| format!("{ms}\n")).collect();
        assert_eq!(trace(&per_ms).mean_rate_bytes_per_s() * 8.0, 12e6);
    }

    #[test]
    fn rejects_decreasing_timestamps_naming_the_line() {
        let err = MahimahiTrace::parse("1\n5\n4\n9\n").unwrap_err();
        assert_eq!(err, TraceError::Decreasing { line: 3, ms: 4, previous: 5 });
        assert_eq!(
            err.to_string(),
            "line 3: timestamp 4 ms is earlier than 5 ms on line 2; timestamps must not decrease"
        );
    }

    #[test]
    fn rejects_non_integers_naming_the_line() {
        for (text, line, token) in [
            ("1\n2.5\n", 2, "2.5"),
            ("1\n2\n-3\n", 3, "-3"),
            ("x\n", 1, "x"),
            ("1 2\n", 1, "1 2"),
            ("+4\n", 1, "+4"),
        ] {
            let err = MahimahiTrace::parse(text).unwrap_err();
            assert_eq!(err, TraceError::NotAnInteger { line, text: token.to_string() }, "{text:?}");
            assert!(err.to_string().starts_with(&format!("line {line}: ")), "{err}");
        }
        let huge = MahimahiTrace::parse("1\n99999999999999999999999\n").unwrap_err();
        assert!(matches!(huge, TraceError::TooLarge { line: 2, .. }), "{huge:?}");
        let big = MahimahiTrace::parse("10000000001\n").unwrap_err();
        assert!(matches!(big, TraceError::TooLarge { line: 1, ms: 10_000_000_001, .. }));
    }

    #[test]
    fn rejects_empty_files_empty_lines_and_zero_periods() {
        assert_eq!(MahimahiTrace::parse(""), Err(TraceError::Empty));
        assert_eq!(MahimahiTrace::parse("1\n\n2\n"), Err(TraceError::EmptyLine { line: 2 }));
        assert_eq!(MahimahiTrace::parse("\n"), Err(TraceError::EmptyLine { line: 1 }));
        assert_eq!(MahimahiTrace::parse("0\n0\n"), Err(TraceError::ZeroPeriod { line: 2 }));
        assert!(MahimahiTrace::parse("0\n0\n").unwrap_err().to_string().starts_with("line 2: "));
        assert_eq!(MahimahiTrace::from_opportunities_ms(vec![]), Err(TraceError::Empty));
        assert_eq!(
            MahimahiTrace::from_opportunities_ms(vec![2, 1]),
            Err(TraceError::Decreasing { line: 2, ms: 1, previous: 2 })
        );
    }

    #[test]
    fn cursor_uses_opportunities_in_order_and_wraps_around() {
        // Period 10 ms: opportunities at 0, 4, 4, 10; then 10, 14, 14, 20; then 20, ...
        let mut c = cursor("0\n4\n4\n10\n");
        let times: Vec<u64> = (0..9).map(|_| c.use_next().as_nanos() / MS).collect();
        assert_eq!(times, [0, 4, 4, 10, 10, 14, 14, 20, 20]);
    }

    #[test]
    fn next_at_or_after_skips_unused_opportunities() {
        let mut c = cursor("2\n4\n6\n");
        // Exactly on an opportunity: that one.
        assert_eq!(c.next_at_or_after(Instant::from_nanos(2 * MS)).as_nanos(), 2 * MS);
        // Asking again does not consume it.
        assert_eq!(c.next_at_or_after(Instant::from_nanos(MS)).as_nanos(), 2 * MS);
        // 4.5 ms: the one at 4 ms is skipped.
        assert_eq!(c.next_at_or_after(Instant::from_nanos(4 * MS + MS / 2)).as_nanos(), 6 * MS);
        assert_eq!(c.use_next().as_nanos(), 6 * MS);
        // Far ahead, 6000.1 ms: repetition 1000 starts at 6000 ms, so its 6002 ms opportunity.
        let t = Instant::from_nanos(6 * 1000 * MS + MS / 10);
        assert_eq!(c.next_at_or_after(t).as_nanos(), 6_002 * MS);
        assert_eq!(c.use_next().as_nanos(), 6_002 * MS);
        assert_eq!(c.use_next().as_nanos(), 6_004 * MS);
        // Earlier times never move the cursor back.
        assert_eq!(c.next_at_or_after(Instant::ZERO).as_nanos(), 6_006 * MS);
    }

    #[test]
    fn next_at_or_after_a_period_boundary_keeps_both_coinciding_opportunities() {
        // Period 5: the last opportunity of a period (5 ms) and the first of the next (0 ms
        // of the next period, also 5 ms) are two opportunities at the same instant.
        let mut c = cursor("0\n5\n");
        assert_eq!(c.next_at_or_after(Instant::from_nanos(10 * MS)).as_nanos(), 10 * MS);
        assert_eq!(c.use_next().as_nanos(), 10 * MS);
        assert_eq!(c.use_next().as_nanos(), 10 * MS);
        assert_eq!(c.use_next().as_nanos(), 15 * MS);
    }

    #[test]
    fn cursor_over_many_periods_counts_the_trace_rate() {
        // 3 opportunities per 2 ms period; over 1 s (500 periods) 1500 opportunities are at or
        // before t = 1000 ms.
        let mut c = cursor("1\n2\n2\n");
        let end = Instant::from_nanos(1000 * MS);
        let mut used = 0;
        while c.next_at_or_after(Instant::ZERO) <= end {
            c.use_next();
            used += 1;
        }
        assert_eq!(used, 1500);
    }
}
