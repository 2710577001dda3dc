//! Where a sweep's runs come from. By default the simulator runs each scenario in-process
//! ([`crate::runner`], with the sweep's caches). A [`Measure`] backend measures each scenario
//! some other way instead: `braid sweep --backend lab` runs it in the real namespace lab
//! (kernel TCP end to end, real `braid tunnel` daemons, emulated links), so the lab's numbers
//! land in the same journal and table as the simulator's and the same scripts read both.
//!
//! A measuring backend runs one run at a time (timings taken while runs compete for the CPU
//! measure the host, not the system), every repetition is measured (nothing is cached: the
//! point of repeating a real measurement is its spread), and a folder holds one backend's runs
//! (its name is recorded beside the spec hash, [`crate::outdir`]).

use braid_sim::Scenario;

/// A backend that measures scenarios itself.
pub trait Measure: Send + Sync {
    /// Short name recorded with the folder (`lab`): a folder holds one backend's runs.
    fn name(&self) -> &str;

    /// Measures `s`, and with `baseline` its single-path baseline too, setting
    /// `baseline_dlct_s` and `relative_dlct`. Returns the report as JSON text in the schema of
    /// `braid sim --json` (fields the backend does not measure left out, fields of its own
    /// added), or why the measurement failed.
    fn measure(&self, s: &Scenario, baseline: bool) -> Result<String, String>;

    /// Whether the user asked to stop. A run cut short is not journaled, so resuming the sweep
    /// measures it again.
    fn cancelled(&self) -> bool {
        false
    }
}
