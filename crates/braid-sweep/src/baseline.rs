//! Baselines, each simulated once per sweep and shared by every run that has it.
//!
//! A run's baseline is `braid_sim::run(s, true)`: the same transfer over path 1 without the
//! tunnel. `braid_sim::run::world_config(s, true)` reads the server link, the end-to-end
//! settings, the seed, the simulator settings and the paths, and leaves the tunnel out
//! (`tunnel: None`, so no tunnel field and no path cost is read); the world then builds only
//! path 1's links, and `sim.path_handshake` acts on tunnel senders only. The other paths are
//! still turned into links and validated, but a run asks for its baseline only after its own
//! tunnel run passed that same validation. The scenario keys are already applied to the
//! fields they set. Path 1's cost is read by the tunnel only, and its name labels the report.
//! So the cache key is the resolved scenario as TOML with the tunnel reset to its default, the
//! keys list emptied, the paths cut to path 1 (with the default cost and name) and the
//! handshake off; a test checks that each of these leaves the baseline's DLCT unchanged.

use braid_sim::scenario::TunnelConfig;
use braid_sim::scenario::{PathConfig, ScenarioError};
use braid_sim::{run, Scenario};

use crate::once_map::OnceMap;

/// What a baseline depends on, as text: see the module documentation.
pub fn baseline_key(s: &Scenario) -> Result<String, ScenarioError> {
    let mut k = s.clone();
    k.tunnel = TunnelConfig::default();
    k.keys.clear();
    k.paths.truncate(1);
    if let Some(p) = k.paths.first_mut() {
        let default = PathConfig::default();
        p.cost = default.cost;
        p.name = default.name;
    }
    k.sim.path_handshake = false;
    k.to_toml_string()
}

/// Baseline DLCTs by [`baseline_key`]; safe to share between threads. A thread asking for a
/// baseline another thread is simulating waits for it rather than simulating it again.
#[derive(Default)]
pub struct BaselineCache {
    dlcts: OnceMap<Result<f64, String>>,
}

impl BaselineCache {
    pub fn new() -> Self {
        Self::default()
    }

    /// The baseline DLCT of `s` in seconds, or why the baseline run failed.
    pub fn dlct_s(&self, s: &Scenario) -> Result<f64, String> {
        let key = baseline_key(s).map_err(|e| e.to_string())?;
        self.dlcts.get_or_compute(key, || {
            run(s, true).map(|out| out.report.dlct_s).map_err(|e| format!("baseline: {e}"))
        })
    }

    /// How many baselines were simulated (not taken from the cache).
    pub fn simulated(&self) -> u64 {
        self.dlcts.computed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(overrides: &[&str]) -> Scenario {
        let mut o: Vec<String> = vec!["e2e.bytes=500000".into()];
        o.extend(overrides.iter().map(|s| s.to_string()));
        Scenario::from_toml_str("", &o).unwrap()
    }

    fn baseline_report(s: &Scenario) -> braid_sim::Report {
        braid_sim::Report { wall_s: 0.0, ..run(s, true).unwrap().report }
    }

    #[test]
    fn what_the_key_leaves_out_does_not_change_the_baseline() {
        let base = scenario(&[]);
        let reference = baseline_report(&base);
        for variant in [
            &["tunnel.cc=cubic", "tunnel.scheduler=srtt", "tunnel.header_bytes=80"][..],
            &["paths.1.rtt_ms=90", "paths.1.rate_mbps=5", "paths.1.name=x"],
            &["paths.0.cost=7", "paths.0.name=y"],
            &["sim.path_handshake=true"],
        ] {
            let s = scenario(variant);
            assert_eq!(baseline_key(&s).unwrap(), baseline_key(&base).unwrap(), "{variant:?}");
            let mut got = baseline_report(&s);
            // The report names and counts every path; the baseline DLCT is what is used.
            got.paths.truncate(1);
            let mut want = reference.clone();
            want.paths.truncate(1);
            assert_eq!(got.dlct_s.to_bits(), want.dlct_s.to_bits(), "{variant:?}");
            assert_eq!(got.events, want.events, "{variant:?}");
        }
    }

    #[test]
    fn what_the_baseline_reads_is_in_the_key() {
        let base = baseline_key(&scenario(&[])).unwrap();
        for o in
            ["seed=2", "e2e.cc=bbr", "paths.0.rtt_ms=30", "server_link.rtt_ms=30", "sim.bin_ms=50"]
        {
            assert_ne!(baseline_key(&scenario(&[o])).unwrap(), base, "{o}");
        }
    }

    #[test]
    fn each_baseline_is_simulated_once() {
        let cache = BaselineCache::new();
        let a = scenario(&["tunnel.scheduler=srtt"]);
        let b = scenario(&["tunnel.scheduler=cpf"]);
        let da = cache.dlct_s(&a).unwrap();
        let db = cache.dlct_s(&b).unwrap();
        assert_eq!(da.to_bits(), db.to_bits());
        assert_eq!(cache.simulated(), 1);
        assert_eq!(da.to_bits(), run(&a, true).unwrap().report.dlct_s.to_bits());
    }
}
