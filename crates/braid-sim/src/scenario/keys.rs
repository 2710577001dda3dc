//! Scenario keys: the overlays of Table 2 of Pieska et al. 2024 (and docs/design.md section 4).
//!
//! n is the E2E round-trip propagation delay over path 1, `server_link.rtt_ms +
//! paths.0.rtt_ms`, as loaded and overridden:
//!
//! | key | server link | path 1 | path 2 |
//! |---|---|---|---|
//! | SHORT | 20 | 20 | 40 |
//! | LONG | 40 | 40 | 60 |
//! | NEAR | 0.8n | 0.2n | 0.2n + 20 |
//! | DIST | 0.2n | 0.8n | 0.8n + 20 |
//! | ASYM0 / ASYM40 / ASYM200 | 0.5n | 0.5n | 0.5n + 0 / 40 / 200 |
//!
//! BUF250 / BUF500 / BUF1000 set the bottleneck buffer of both paths (`buffer_pkts`);
//! CDL0 / CDL1 turn CoDel off / on at both bottlenecks (`aqm = "droptail"` / `"codel"` on
//! every path's downlink, with the path's `codel_target_ms` and `codel_interval_ms`, RFC 8289's
//! 5 and 100 ms by default; Pieska et al. 2024 enabled Linux's `codel` qdisc with its defaults).
//!
//! Keys are applied by group, RTT then placement then buffer then AQM, whatever the order they
//! were written in, so SHORT+NEAR places the proxy on SHORT's 40 ms. Each group takes at most
//! one key. Placement splits n in integer nanoseconds (path 1 rounded to the nearest ns, the
//! server link the rest), which makes applying a key twice give bit-identical values: a
//! resolved scenario written with its keys loads back unchanged.

use std::fmt;
use std::str::FromStr;

use super::{AqmChoice, Scenario, ScenarioError};

/// Largest n a placement key accepts, ms: two links at the validated maximum RTT.
const MAX_E2E_RTT_MS: f64 = 20_000.0;
const NS_PER_MS: f64 = 1e6;

/// One Table 2 scenario key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScenarioKey {
    Short,
    Long,
    Near,
    Dist,
    Asym0,
    Asym40,
    Asym200,
    Buf250,
    Buf500,
    Buf1000,
    Cdl0,
    Cdl1,
}

/// What a key sets; keys are applied in this order and at most one per group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KeyGroup {
    Rtt,
    Placement,
    Buffer,
    Aqm,
}

impl KeyGroup {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyGroup::Rtt => "RTT",
            KeyGroup::Placement => "proxy placement",
            KeyGroup::Buffer => "bottleneck buffer",
            KeyGroup::Aqm => "AQM",
        }
    }
}

impl ScenarioKey {
    pub const ALL: &'static [ScenarioKey] = &[
        ScenarioKey::Short,
        ScenarioKey::Long,
        ScenarioKey::Near,
        ScenarioKey::Dist,
        ScenarioKey::Asym0,
        ScenarioKey::Asym40,
        ScenarioKey::Asym200,
        ScenarioKey::Buf250,
        ScenarioKey::Buf500,
        ScenarioKey::Buf1000,
        ScenarioKey::Cdl0,
        ScenarioKey::Cdl1,
    ];

    pub const NAMES: &'static [&'static str] = &[
        "SHORT", "LONG", "NEAR", "DIST", "ASYM0", "ASYM40", "ASYM200", "BUF250", "BUF500",
        "BUF1000", "CDL0", "CDL1",
    ];

    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn group(self) -> KeyGroup {
        use ScenarioKey::*;
        match self {
            Short | Long => KeyGroup::Rtt,
            Near | Dist | Asym0 | Asym40 | Asym200 => KeyGroup::Placement,
            Buf250 | Buf500 | Buf1000 => KeyGroup::Buffer,
            Cdl0 | Cdl1 => KeyGroup::Aqm,
        }
    }

    /// Applies this key alone to `scenario`.
    pub fn apply(self, scenario: &mut Scenario) -> Result<(), ScenarioError> {
        use ScenarioKey::*;
        match self {
            Short => self.set_rtts(scenario, 20.0, 20.0, 40.0),
            Long => self.set_rtts(scenario, 40.0, 40.0, 60.0),
            Near => self.place(scenario, 2, 20.0),
            Dist => self.place(scenario, 8, 20.0),
            Asym0 => self.place(scenario, 5, 0.0),
            Asym40 => self.place(scenario, 5, 40.0),
            Asym200 => self.place(scenario, 5, 200.0),
            Buf250 => Self::set_buffers(scenario, 250),
            Buf500 => Self::set_buffers(scenario, 500),
            Buf1000 => Self::set_buffers(scenario, 1000),
            Cdl0 => Self::set_aqm(scenario, AqmChoice::DropTail),
            Cdl1 => Self::set_aqm(scenario, AqmChoice::CoDel),
        }
    }

    fn needs_two_paths(self, scenario: &Scenario) -> Result<(), ScenarioError> {
        match scenario.paths.len() {
            n if n >= 2 => Ok(()),
            n => Err(ScenarioError::KeyNotApplicable {
                key: self.as_str(),
                reason: format!("it sets path 2's RTT, but the scenario has {n} path(s)"),
            }),
        }
    }

    fn set_rtts(
        self,
        s: &mut Scenario,
        server_ms: f64,
        path1_ms: f64,
        path2_ms: f64,
    ) -> Result<(), ScenarioError> {
        self.needs_two_paths(s)?;
        s.server_link.rtt_ms = server_ms;
        s.paths[0].rtt_ms = path1_ms;
        s.paths[1].rtt_ms = path2_ms;
        Ok(())
    }

    /// Path 1 gets `tenths_path1`/10 of n, the server link the rest, path 2 path 1's RTT plus
    /// `extra_ms`.
    fn place(
        self,
        s: &mut Scenario,
        tenths_path1: u64,
        extra_ms: f64,
    ) -> Result<(), ScenarioError> {
        self.needs_two_paths(s)?;
        let n_ms = s.e2e_rtt_ms();
        if !(0.0..=MAX_E2E_RTT_MS).contains(&n_ms) {
            return Err(ScenarioError::KeyNotApplicable {
                key: self.as_str(),
                reason: format!("the E2E RTT server_link.rtt_ms + paths.0.rtt_ms = {n_ms} ms must be in [0, {MAX_E2E_RTT_MS}]"),
            });
        }
        // In range, so the cast is exact and the products below cannot overflow.
        let n_ns = (n_ms * NS_PER_MS).round() as u64;
        let path1_ns = (n_ns * tenths_path1 + 5) / 10;
        let server_ns = n_ns - path1_ns;
        s.server_link.rtt_ms = server_ns as f64 / NS_PER_MS;
        s.paths[0].rtt_ms = path1_ns as f64 / NS_PER_MS;
        s.paths[1].rtt_ms = s.paths[0].rtt_ms + extra_ms;
        Ok(())
    }

    fn set_buffers(s: &mut Scenario, pkts: u32) -> Result<(), ScenarioError> {
        for path in &mut s.paths {
            path.buffer_pkts = pkts;
        }
        Ok(())
    }

    /// The queue discipline of every path's downlink bottleneck.
    fn set_aqm(s: &mut Scenario, aqm: AqmChoice) -> Result<(), ScenarioError> {
        for path in &mut s.paths {
            path.aqm = aqm;
        }
        Ok(())
    }
}

impl FromStr for ScenarioKey {
    type Err = ScenarioError;
    /// Case-insensitive: `short` is SHORT.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let upper = s.trim().to_ascii_uppercase();
        Self::NAMES.iter().position(|name| *name == upper).map(|i| Self::ALL[i]).ok_or_else(|| {
            ScenarioError::UnknownKey { key: s.to_string(), allowed: Self::NAMES.join(", ") }
        })
    }
}

impl fmt::Display for ScenarioKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses `keys` into their canonical order, rejecting unknown keys and two keys of a group.
pub fn parse(keys: &[String]) -> Result<Vec<ScenarioKey>, ScenarioError> {
    let mut parsed = keys.iter().map(|k| k.parse()).collect::<Result<Vec<ScenarioKey>, _>>()?;
    parsed.sort();
    for pair in parsed.windows(2) {
        if pair[0].group() == pair[1].group() {
            return Err(ScenarioError::ConflictingKeys {
                group: pair[0].group().as_str(),
                first: pair[0].as_str(),
                second: pair[1].as_str(),
            });
        }
    }
    Ok(parsed)
}

/// Applies `scenario.keys` in canonical order and rewrites the list with the canonical names
/// in that order.
pub fn apply(scenario: &mut Scenario) -> Result<(), ScenarioError> {
    let keys = parse(&scenario.keys)?;
    for key in &keys {
        key.apply(scenario)?;
    }
    scenario.keys = keys.iter().map(|k| k.as_str().to_string()).collect();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_keys(keys: &[&str]) -> Result<Scenario, ScenarioError> {
        let mut s =
            Scenario { keys: keys.iter().map(|k| k.to_string()).collect(), ..Scenario::default() };
        apply(&mut s)?;
        Ok(s)
    }

    fn rtts(s: &Scenario) -> (f64, f64, f64) {
        (s.server_link.rtt_ms, s.paths[0].rtt_ms, s.paths[1].rtt_ms)
    }

    #[test]
    fn names_round_trip_in_table_order() {
        for (i, key) in ScenarioKey::ALL.iter().enumerate() {
            assert_eq!(key.as_str(), ScenarioKey::NAMES[i]);
            assert_eq!(key.as_str().parse::<ScenarioKey>().unwrap(), *key);
        }
        assert_eq!("asym40".parse::<ScenarioKey>().unwrap(), ScenarioKey::Asym40);
    }

    #[test]
    fn short_and_long_set_table2_rtts() {
        assert_eq!(rtts(&with_keys(&["SHORT"]).unwrap()), (20.0, 20.0, 40.0));
        assert_eq!(rtts(&with_keys(&["LONG"]).unwrap()), (40.0, 40.0, 60.0));
    }

    #[test]
    fn short_near_puts_the_proxy_near_the_user() {
        // n = 40: path 1 = 0.2n = 8, server = 0.8n = 32, path 2 = 8 + 20.
        assert_eq!(rtts(&with_keys(&["SHORT", "NEAR"]).unwrap()), (32.0, 8.0, 28.0));
        // LONG + NEAR: n = 80.
        assert_eq!(rtts(&with_keys(&["LONG", "NEAR"]).unwrap()), (64.0, 16.0, 36.0));
    }

    #[test]
    fn dist_with_n_100() {
        let mut s = Scenario::default();
        s.server_link.rtt_ms = 30.0;
        s.paths[0].rtt_ms = 70.0;
        s.keys = vec!["DIST".into()];
        apply(&mut s).unwrap();
        assert_eq!(rtts(&s), (20.0, 80.0, 100.0));
    }

    #[test]
    fn asym_keys_split_n_in_half() {
        // Default n = 20 + 20 = 40.
        assert_eq!(rtts(&with_keys(&["ASYM0"]).unwrap()), (20.0, 20.0, 20.0));
        assert_eq!(rtts(&with_keys(&["ASYM40"]).unwrap()), (20.0, 20.0, 60.0));
        assert_eq!(rtts(&with_keys(&["ASYM200"]).unwrap()), (20.0, 20.0, 220.0));
        assert_eq!(rtts(&with_keys(&["LONG", "ASYM200"]).unwrap()), (40.0, 40.0, 240.0));
    }

    #[test]
    fn buffer_keys_set_both_paths_and_cdl0_keeps_the_default_drop_tail() {
        let s = with_keys(&["BUF250", "CDL0"]).unwrap();
        assert!(s.paths.iter().all(|p| p.buffer_pkts == 250));
        let s = with_keys(&["BUF1000"]).unwrap();
        assert!(s.paths.iter().all(|p| p.buffer_pkts == 1000));
        assert_eq!(
            Scenario { keys: vec!["CDL0".into()], ..Scenario::default() },
            with_keys(&["CDL0"]).unwrap()
        );
    }

    #[test]
    fn order_written_does_not_matter() {
        let a = with_keys(&["SHORT", "NEAR", "BUF250", "CDL0"]).unwrap();
        let b = with_keys(&["CDL0", "BUF250", "NEAR", "SHORT"]).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.keys, ["SHORT", "NEAR", "BUF250", "CDL0"]);
    }

    #[test]
    fn applying_keys_twice_changes_nothing() {
        for n in [0.0, 1.0, 33.3, 77.7, 99.99, 123.456789] {
            for key in ["NEAR", "DIST", "ASYM0", "ASYM40"] {
                let mut s = Scenario::default();
                s.server_link.rtt_ms = n * 0.3;
                s.paths[0].rtt_ms = n * 0.7;
                s.keys = vec![key.into()];
                apply(&mut s).unwrap();
                let once = s.clone();
                apply(&mut s).unwrap();
                assert_eq!(s, once, "{key} with n = {n}");
            }
        }
    }

    #[test]
    fn unknown_and_conflicting_keys_are_errors() {
        let err = with_keys(&["SHORT", "MEDIUM"]).unwrap_err();
        assert!(matches!(err, ScenarioError::UnknownKey { .. }));
        let msg = err.to_string();
        assert!(
            msg.contains("\"MEDIUM\"") && msg.contains("SHORT, LONG, NEAR, DIST, ASYM0"),
            "{msg}"
        );
        let err = with_keys(&["LONG", "SHORT"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "scenario keys SHORT and LONG both set the RTT; give at most one"
        );
        assert!(matches!(
            with_keys(&["NEAR", "ASYM0"]),
            Err(ScenarioError::ConflictingKeys { .. })
        ));
        assert!(matches!(
            with_keys(&["BUF250", "BUF250"]),
            Err(ScenarioError::ConflictingKeys { .. })
        ));
    }

    #[test]
    fn cdl1_turns_codel_on_at_every_downlink_and_cdl0_off() {
        let s = with_keys(&["CDL1"]).unwrap();
        assert!(s.paths.iter().all(|p| p.aqm == AqmChoice::CoDel), "{:?}", s.paths);
        assert!(s.paths.iter().all(|p| p.uplink_aqm == AqmChoice::DropTail));
        let mut s = Scenario::default();
        s.paths[0].aqm = AqmChoice::CoDel;
        s.keys = vec!["CDL0".into()];
        apply(&mut s).unwrap();
        assert!(s.paths.iter().all(|p| p.aqm == AqmChoice::DropTail));
        // One path is enough for an AQM key.
        let mut s = Scenario::default();
        s.paths.truncate(1);
        s.keys = vec!["CDL1".into()];
        apply(&mut s).unwrap();
        assert_eq!(s.paths[0].aqm, AqmChoice::CoDel);
    }

    #[test]
    fn rtt_keys_need_two_paths_but_buffer_keys_do_not() {
        let mut s = Scenario::default();
        s.paths.truncate(1);
        s.keys = vec!["NEAR".into()];
        let err = apply(&mut s.clone()).unwrap_err();
        assert!(err.to_string().contains("scenario has 1 path"), "{err}");
        s.keys = vec!["BUF500".into()];
        apply(&mut s).unwrap();
    }

    #[test]
    fn placement_refuses_nan_n() {
        let mut s = Scenario { keys: vec!["NEAR".into()], ..Scenario::default() };
        s.server_link.rtt_ms = f64::NAN;
        assert!(matches!(apply(&mut s), Err(ScenarioError::KeyNotApplicable { key: "NEAR", .. })));
    }
}
