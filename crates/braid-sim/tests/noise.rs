//! The noise model (docs/design.md section 10): off, a run is the run it was before the model
//! existed; on, the same seed gives the same run and other seeds other runs, even without
//! random loss.

use braid_sim::scenario::NoiseConfig;
use braid_sim::{run, Scenario};

fn scenario(sets: &[&str]) -> Scenario {
    let o: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml_str("", &o).unwrap()
}

fn json_without_wall_time(s: &Scenario, baseline: bool) -> serde_json::Value {
    let mut v = serde_json::to_value(run(s, baseline).expect("runs").report).unwrap();
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

fn dlct(s: &Scenario) -> f64 {
    run(s, false).expect("runs").report.dlct_s
}

fn noisy(sets: &[&str], seed: u64) -> Scenario {
    let mut s = scenario(sets);
    s.sim.noise = NoiseConfig::host();
    s.seed = seed;
    s
}

const SMALL: &str = "e2e.bytes=5000000";

/// Noise fields absent, or written out at their off values, give the same report, and the
/// same scenario TOML (so sweep hashes and baseline keys do not move).
#[test]
fn noise_absent_and_explicitly_off_are_the_same_run() {
    let off = [
        "sim.noise.host_jitter_us=0.0",
        "sim.noise.host_jitter_max_us=1000.0",
        "sim.noise.host_stall_rate_per_s=0.0",
        "sim.noise.host_stall_mean_us=1000.0",
        "sim.noise.host_stall_max_us=6000.0",
        "sim.noise.start_offset_ms=0.0",
        "sim.noise.cc_phase=false",
    ];
    for sets in [
        &[SMALL][..],
        &[SMALL, "e2e.cc=bbr", "tunnel.scheduler=srtt", "keys=ASYM40"],
        &[SMALL, "tunnel.cc=bbr2", "paths.1.loss=0.01", "tunnel.reliability=reliable"],
        &[SMALL, "e2e.kind=udp", "e2e.udp_rate_mbps=80"],
    ] {
        let absent = scenario(sets);
        let explicit = scenario(&[sets, &off[..]].concat());
        assert_eq!(absent, explicit, "{sets:?}");
        assert_eq!(absent.to_toml_string().unwrap(), explicit.to_toml_string().unwrap());
        assert!(!absent.to_toml_string().unwrap().contains("noise"));
        assert_eq!(
            json_without_wall_time(&absent, false),
            json_without_wall_time(&explicit, false)
        );
    }
}

/// With the model off the seed changes nothing on a loss-free cell, as before the model.
#[test]
fn without_noise_a_loss_free_cell_ignores_the_seed() {
    let a = scenario(&[SMALL, "seed=1"]);
    let b = scenario(&[SMALL, "seed=2"]);
    assert_eq!(json_without_wall_time(&a, true), json_without_wall_time(&b, true));
}

/// The runs of `braid sim` before the noise model existed, pinned: DLCT bits of the pre-noise
/// binary (commit 6e5b2c2, `braid sim --json`), and the events processed. The second cell's
/// DLCT moved by 0.01 ms when ties between events at one instant stopped going by insertion
/// order (src/engine.rs; it was 4607366111986410166); the other two kept theirs. The event counts
/// are those of links without end-of-service events (src/link.rs's scheduled links; 29744,
/// 31768 and 29648 with them, and 31013, 33277 and 30917 with the heap of stale timer entries
/// before the timer slots). The second cell (BBR end to end) moved again when the end-to-end
/// BBR took Linux's TSO send quantum (`bbr_tso_segs_goal`, braid-core `SendQuantum::LinuxTso`;
/// it was 4607366061023676783 with 18 721 events): the cwnd target grows by 3 bursts.
#[test]
fn without_noise_runs_are_the_pre_noise_runs() {
    for (sets, dlct_bits, events) in PRE_NOISE {
        let report = run(&scenario(sets), false).unwrap().report;
        assert_eq!((report.dlct_s.to_bits(), report.events), (*dlct_bits, *events), "{sets:?}");
    }
}

const PRE_NOISE: &[(&[&str], u64, u64)] = &[
    (&[SMALL], 4608095451161548772, 16755),
    (&[SMALL, "e2e.cc=bbr", "tunnel.scheduler=srtt", "keys=ASYM40"], 4607223541929323265, 18600),
    (
        &[SMALL, "tunnel.cc=bbr2", "paths.1.loss=0.01", "tunnel.reliability=reliable"],
        4608064792758466660,
        16683,
    ),
];

#[test]
fn same_seed_same_run_with_noise() {
    for sets in [&[SMALL][..], &[SMALL, "e2e.cc=bbr", "tunnel.scheduler=srtt"]] {
        let s = noisy(sets, 3);
        assert_eq!(json_without_wall_time(&s, true), json_without_wall_time(&s, true));
    }
}

/// On the default loss-free cell, different seeds give different DLCTs, and the runs stay
/// close (host jitter is microseconds, not a different scenario).
#[test]
fn different_seeds_differ_on_a_loss_free_cell() {
    let dlcts: Vec<f64> = (1..=5).map(|seed| dlct(&noisy(&[SMALL], seed))).collect();
    let mut distinct = dlcts.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert_eq!(distinct.len(), dlcts.len(), "{dlcts:?}");
    let quiet = dlct(&scenario(&[SMALL]));
    for d in &dlcts {
        assert!((d / quiet - 1.0).abs() < 0.2, "{d} against {quiet} without noise");
    }
}

/// Each part alone: host jitter changes a run, and so do host stalls; seeded controllers change a BBR-tunnel run
/// long enough to reach ProbeBW; the start offset alone changes nothing on constant-rate
/// links (nothing in this model runs on the absolute clock before the transfer), but moves a
/// capacity trace under the transfer.
#[test]
fn each_part_alone() {
    let with = |sets: &[&str], noise: NoiseConfig, seed: u64| {
        let mut s = scenario(sets);
        s.sim.noise = noise;
        s.seed = seed;
        dlct(&s)
    };
    let off = NoiseConfig::default();
    let jitter = NoiseConfig { host_jitter_us: 20.0, ..off.clone() };
    let phase = NoiseConfig { cc_phase: true, ..off.clone() };
    let start = NoiseConfig { start_offset_ms: 1000.0, ..off.clone() };
    let stalls = NoiseConfig { host_stall_rate_per_s: 50.0, ..off.clone() };
    let quiet = with(&[SMALL], off.clone(), 1);
    assert_ne!(with(&[SMALL], jitter.clone(), 1), quiet);
    assert_ne!(with(&[SMALL], jitter.clone(), 1), with(&[SMALL], jitter, 2));
    // Stalls alone (no jitter): a host stalls, the run changes, and the seed places the stalls.
    assert_ne!(with(&[SMALL], stalls.clone(), 1), quiet);
    assert_ne!(with(&[SMALL], stalls.clone(), 1), with(&[SMALL], stalls.clone(), 2));
    assert_eq!(with(&[SMALL], stalls.clone(), 1).to_bits(), with(&[SMALL], stalls, 1).to_bits());
    let long = ["e2e.bytes=30000000", "e2e.cc=bbr"];
    let phases: Vec<f64> = (1..=3).map(|seed| with(&long, phase.clone(), seed)).collect();
    assert!(phases.iter().any(|&d| d != phases[0]), "{phases:?}");
    for seed in 1..=3 {
        assert_eq!(with(&[SMALL], start.clone(), seed).to_bits(), quiet.to_bits(), "seed {seed}");
    }
    let traces = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/traces.toml");
    let traced = |noise: NoiseConfig, seed: u64| {
        let mut s = Scenario::load(traces, &[SMALL.to_string()]).unwrap();
        s.sim.noise = noise;
        s.seed = seed;
        dlct(&s)
    };
    let still = traced(off, 1);
    let moved: Vec<f64> = (1..=3).map(|seed| traced(start.clone(), seed)).collect();
    assert!(moved.iter().any(|&d| d != still), "{moved:?} against {still}");
}
