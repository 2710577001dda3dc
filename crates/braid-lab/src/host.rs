//! What the host did to a measurement. A lab run shares the machine's CPUs with its emulators,
//! daemons and endpoints, and on a virtual machine also with other guests: the hypervisor's
//! *steal* time (the 8th value of the `cpu` line of /proc/stat, proc(5)) is CPU time this guest
//! wanted and did not get. A timing window taken while steal is high says more about the host
//! than about the system under test, so lab timings report it beside the figure.
//!
//! [`attempts`] runs a timing-sensitive check more than once before it fails, printing every
//! attempt with the steal during it: a real regression fails every attempt, a host that took
//! the CPUs away for a few seconds fails one.

use std::fmt;

/// CPU time counters of all CPUs together, in USER_HZ jiffies (proc(5), `/proc/stat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CpuTimes {
    steal: u64,
    total: u64,
}

impl CpuTimes {
    /// Parses the aggregate `cpu` line: user nice system idle iowait irq softirq steal guest
    /// guest_nice. `None` when /proc/stat is unreadable or shaped otherwise.
    fn parse(stat: &str) -> Option<Self> {
        let line = stat.lines().find(|l| l.starts_with("cpu "))?;
        let values: Vec<u64> =
            line.split_whitespace().skip(1).map(str::parse).collect::<Result<_, _>>().ok()?;
        let steal = *values.get(7)?;
        // guest and guest_nice are already counted in user and nice (kernel/sched/cputime.c).
        let total = values.iter().take(8).sum();
        Some(Self { steal, total })
    }

    fn now() -> Option<Self> {
        Self::parse(&std::fs::read_to_string("/proc/stat").ok()?)
    }
}

/// Measures CPU steal from its start to each [`read`](StealMeter::read).
#[derive(Debug, Clone, Copy)]
pub struct StealMeter {
    start: Option<CpuTimes>,
}

/// CPU steal over an interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Steal {
    /// Steal of all CPUs together, jiffies (USER_HZ, 100 per second on Linux).
    pub jiffies: u64,
    /// Steal as a share of all CPU time in the interval, 0 to 1.
    pub share: f64,
}

impl StealMeter {
    /// Starts measuring now.
    pub fn start() -> Self {
        Self { start: CpuTimes::now() }
    }

    /// Steal since [`start`](StealMeter::start); `None` where /proc/stat cannot be read.
    pub fn read(&self) -> Option<Steal> {
        steal_between(self.start?, CpuTimes::now()?)
    }
}

fn steal_between(a: CpuTimes, b: CpuTimes) -> Option<Steal> {
    let jiffies = b.steal.checked_sub(a.steal)?;
    let total = b.total.checked_sub(a.total)?;
    let share = if total == 0 { 0.0 } else { jiffies as f64 / total as f64 };
    Some(Steal { jiffies, share })
}

impl fmt::Display for Steal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CPU steal {:.1}% ({} jiffies)", self.share * 100.0, self.jiffies)
    }
}

/// Runs `measure` up to `max` times (at least once) until `check` accepts a result, printing
/// each attempt with the CPU steal during it to stderr under `what`. Returns the accepted
/// result, or every attempt's reason joined when none was accepted.
pub fn attempts<T>(
    what: &str,
    max: usize,
    mut measure: impl FnMut() -> T,
    mut check: impl FnMut(&T) -> Result<(), String>,
) -> Result<T, String> {
    let mut reasons = Vec::new();
    for attempt in 1..=max.max(1) {
        let meter = StealMeter::start();
        let result = measure();
        let steal = meter.read().map_or("CPU steal unknown".to_string(), |s| s.to_string());
        match check(&result) {
            Ok(()) => {
                eprintln!("{what}: attempt {attempt} met the bar ({steal})");
                return Ok(result);
            }
            Err(reason) => {
                eprintln!("{what}: attempt {attempt} missed: {reason} ({steal})");
                reasons.push(format!("attempt {attempt}: {reason} ({steal})"));
            }
        }
    }
    Err(format!("{what}: no attempt met the bar: {}", reasons.join("; ")))
}

/// User + system CPU seconds of process `pid` (`/proc/PID/stat` fields 14 and 15, in clock
/// ticks); 0 if the process is gone.
pub fn process_cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return 0.0 };
    // The command name (field 2) may hold spaces; fields after it follow the last ')'.
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { return 0.0 };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<f64>().ok()).unwrap_or(0.0);
    // After ')' the first field is field 3 (state): utime is field 14, stime 15.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    (ticks(14 - 3) + ticks(15 - 3)) / hz.max(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_seconds_of_this_process_grow_with_work() {
        let before = process_cpu_seconds(std::process::id());
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed() < std::time::Duration::from_millis(300) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let after = process_cpu_seconds(std::process::id());
        assert!(after - before >= 0.1, "{before} -> {after}");
        assert_eq!(process_cpu_seconds(u32::MAX), 0.0, "a missing process counts nothing");
    }

    const STAT: &str = "cpu  4002886 406648 446090 1365029 22440 0 78897 78341 0 0\n\
                        cpu0 1942875 206271 213137 755083 6018 0 37464 39064 0 0\n";

    #[test]
    fn parses_steal_and_total_from_the_aggregate_line() {
        let t = CpuTimes::parse(STAT).unwrap();
        assert_eq!(t.steal, 78341);
        assert_eq!(t.total, 4002886 + 406648 + 446090 + 1365029 + 22440 + 78897 + 78341);
    }

    #[test]
    fn a_short_or_garbled_cpu_line_is_none() {
        assert_eq!(CpuTimes::parse("cpu  1 2 3\n"), None);
        assert_eq!(CpuTimes::parse("cpu  1 2 3 x 5 6 7 8\n"), None);
        assert_eq!(CpuTimes::parse("intr 5\n"), None);
    }

    #[test]
    fn steal_share_is_of_all_cpu_time_in_the_interval() {
        let a = CpuTimes { steal: 100, total: 1000 };
        let b = CpuTimes { steal: 150, total: 1200 };
        assert_eq!(steal_between(a, b), Some(Steal { jiffies: 50, share: 0.25 }));
        // Counters that went backwards (another boot, a broken read) are no measurement.
        assert_eq!(steal_between(b, a), None);
    }

    #[test]
    fn attempts_stop_at_the_first_accepted_result_and_report_every_miss() {
        let mut n = 0;
        let ok = attempts(
            "t",
            5,
            || {
                n += 1;
                n
            },
            |&v| if v >= 3 { Ok(()) } else { Err(format!("{v} < 3")) },
        );
        assert_eq!(ok, Ok(3));
        let err = attempts("t", 2, || 1, |_| Err("low".to_string())).unwrap_err();
        assert!(err.contains("attempt 1: low") && err.contains("attempt 2: low"), "{err}");
        // Zero attempts still measure once.
        assert_eq!(attempts("t", 0, || 7, |_| Ok(())), Ok(7));
    }
}
