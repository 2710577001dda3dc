//! Progress on stderr: runs done out of the total, failures, runs per second and the time
//! left. On a terminal one line is redrawn in place; otherwise (a log file, a batch job) a
//! plain line is written every 5 s, and one at the end.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// One line redrawn with `\r`.
    Redraw,
    /// A line every 5 s and at the end.
    Lines,
    /// Nothing.
    Quiet,
}

impl Mode {
    /// [`Mode::Redraw`] when stderr is a terminal, else [`Mode::Lines`].
    pub fn for_stderr() -> Mode {
        if std::io::stderr().is_terminal() {
            Mode::Redraw
        } else {
            Mode::Lines
        }
    }

    /// How often the progress is drawn.
    pub fn interval(self) -> Duration {
        match self {
            Mode::Redraw => Duration::from_millis(250),
            Mode::Lines | Mode::Quiet => Duration::from_secs(5),
        }
    }
}

/// Counters shared by the workers.
pub struct Progress {
    mode: Mode,
    /// Runs this invocation has to do (its shard's, not yet in the journal).
    todo: u64,
    /// Runs of this invocation's selection already in the journal.
    skipped: u64,
    done: AtomicU64,
    failed: AtomicU64,
    start: Instant,
}

impl Progress {
    pub fn new(mode: Mode, todo: u64, skipped: u64) -> Progress {
        Progress {
            mode,
            todo,
            skipped,
            done: AtomicU64::new(0),
            failed: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    /// Counts a finished run.
    pub fn finished(&self, ok: bool) {
        self.done.fetch_add(1, Ordering::Relaxed);
        if !ok {
            self.failed.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The progress line.
    pub fn line(&self) -> String {
        let done = self.done();
        let secs = self.elapsed().as_secs_f64();
        let rate = if secs > 0.0 { done as f64 / secs } else { 0.0 };
        let eta = if done == 0 || rate == 0.0 {
            "?".to_string()
        } else {
            format_secs((self.todo - done) as f64 / rate)
        };
        let total = self.todo + self.skipped;
        let skipped = if self.skipped > 0 {
            format!(" ({} done before)", self.skipped)
        } else {
            String::new()
        };
        format!(
            "sweep: {}/{total} runs{skipped}, {} failed, {rate:.2} runs/s, ETA {eta}",
            self.skipped + done,
            self.failed()
        )
    }

    /// Draws the progress now; `last` ends a redrawn line.
    pub fn draw(&self, last: bool) {
        let mut err = std::io::stderr().lock();
        // Progress is a courtesy: a closed stderr must not stop the sweep.
        let _ = match self.mode {
            Mode::Redraw if last => writeln!(err, "\r{}\x1b[K", self.line()),
            Mode::Redraw => write!(err, "\r{}\x1b[K", self.line()).and_then(|()| err.flush()),
            Mode::Lines => writeln!(err, "{}", self.line()),
            Mode::Quiet => Ok(()),
        };
    }
}

fn format_secs(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s / 60 % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_counts_runs_and_failures() {
        let p = Progress::new(Mode::Quiet, 10, 2);
        p.finished(true);
        p.finished(false);
        let line = p.line();
        assert!(line.starts_with("sweep: 4/12 runs (2 done before), 1 failed, "), "{line}");
        assert!(line.contains("runs/s, ETA "), "{line}");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_secs(59.4), "59s");
        assert_eq!(format_secs(61.0), "1m01s");
        assert_eq!(format_secs(3725.0), "1h02m");
    }
}
