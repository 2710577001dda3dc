//! Kathleen Nichols' windowed max filter, as in Linux `lib/win_minmax.c`.
//!
//! It tracks the largest value seen over the last `window` time units (for BBR: round trips)
//! in constant space. Three candidates are kept, best first, each no older than the one
//! before it: the best, the best since a quarter of the window, and the best since half of
//! the window. A new best replaces all three; when the best ages out, the second takes its
//! place. The answer can exceed the true windowed max only transiently and by the spread
//! between candidates, which is what makes three enough.

/// One filter candidate: a value and the time (round) it was measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Candidate {
    time: u64,
    value: u64,
}

/// Windowed running maximum over a monotonic `u64` clock (here, the BBR round count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowedMaxFilter {
    window: u64,
    best: [Candidate; 3],
}

impl WindowedMaxFilter {
    /// An empty filter (max 0) whose samples expire after `window` time units.
    pub fn new(window: u64) -> Self {
        WindowedMaxFilter { window, best: [Candidate::default(); 3] }
    }

    /// The windowed maximum.
    pub fn get(&self) -> u64 {
        self.best[0].value
    }

    /// Forgets everything and starts over with `value` measured at `time`.
    pub fn reset(&mut self, time: u64, value: u64) -> u64 {
        self.best = [Candidate { time, value }; 3];
        value
    }

    /// Adds `value` measured at `time` (non-decreasing) and returns the windowed maximum.
    pub fn update(&mut self, time: u64, value: u64) -> u64 {
        let new = Candidate { time, value };
        // A new best, or the newest candidate is out of the window: nothing older matters.
        if value >= self.best[0].value || time.saturating_sub(self.best[2].time) > self.window {
            return self.reset(time, value);
        }
        if value >= self.best[1].value {
            self.best[1] = new;
            self.best[2] = new;
        } else if value >= self.best[2].value {
            self.best[2] = new;
        }
        self.age(new)
    }

    /// Promotes candidates as the best ages out, and spreads them over the window.
    fn age(&mut self, new: Candidate) -> u64 {
        let age = new.time.saturating_sub(self.best[0].time);
        if age > self.window {
            // The best left the window: the second (and maybe the third) takes over. The
            // third is within the window (checked on entry), so two shifts always suffice.
            self.best = [self.best[1], self.best[2], new];
            if new.time.saturating_sub(self.best[0].time) > self.window {
                self.best = [self.best[1], self.best[2], new];
            }
        } else if self.best[1].time == self.best[0].time && age > self.window / 4 {
            // A quarter window passed without a second choice: take one from this quarter.
            self.best[1] = new;
            self.best[2] = new;
        } else if self.best[2].time == self.best[1].time && age > self.window / 2 {
            // Half a window passed without a third choice: take one from this half.
            self.best[2] = new;
        }
        self.best[0].value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_max_for_the_whole_window_then_forgets_it() {
        let mut f = WindowedMaxFilter::new(10);
        assert_eq!(f.update(0, 100), 100);
        for t in 1..=10 {
            assert_eq!(f.update(t, 50), 100, "round {t} is within the window");
        }
        assert_eq!(f.update(11, 50), 50, "round 11 is past the window");
    }

    #[test]
    fn a_larger_sample_replaces_the_max_at_once() {
        let mut f = WindowedMaxFilter::new(10);
        f.update(0, 100);
        assert_eq!(f.update(3, 150), 150);
        assert_eq!(f.update(4, 10), 150);
    }

    #[test]
    fn falls_back_to_the_best_later_candidate_not_the_latest_sample() {
        // 100 at t=0, then 80 at t=3 (second choice), then 20s: when 100 expires the answer
        // is 80, not 20.
        let mut f = WindowedMaxFilter::new(10);
        f.update(0, 100);
        f.update(3, 80);
        for t in 4..=10 {
            assert_eq!(f.update(t, 20), 100);
        }
        assert_eq!(f.update(11, 20), 80);
        assert_eq!(f.update(13, 20), 80);
        assert_eq!(f.update(14, 20), 20, "80 from t=3 expired at t=14");
    }

    #[test]
    fn tracks_a_decreasing_series_within_the_window() {
        // Decreasing data is the worst case the three candidates are spread for: the answer
        // must always be a value from inside the window (never stale), and at least the value
        // measured half a window ago (the candidates are at most that far apart).
        let window = 8;
        let mut f = WindowedMaxFilter::new(window);
        let series: Vec<u64> = (0..40).map(|t| 1000 - 10 * t).collect();
        for (t, &v) in series.iter().enumerate() {
            let got = f.update(t as u64, v);
            let in_window = &series[t.saturating_sub(window as usize)..=t];
            assert!(in_window.contains(&got), "t={t}: {got} is not from the window");
            let recent = series[t.saturating_sub(window as usize / 2)];
            assert!(got >= recent, "t={t}: {got} below the value half a window ago");
        }
    }
}
