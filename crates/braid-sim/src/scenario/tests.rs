//! Tests of the loading pipeline: files, overrides, keys, errors, round trips.

use super::*;
use braid_config::FieldError;
use braid_core::cc::TunnelCc;
use braid_core::reorder::ReorderKind;
use braid_core::sched::SchedulerKind;
use braid_core::tunnel::Reliability;
use proptest::prelude::*;

const DEFAULT_TOML: &str = include_str!("../../../../scenarios/default.toml");
const UDP_TOML: &str = include_str!("../../../../scenarios/udp.toml");
const SINGLE_PATH_TOML: &str = include_str!("../../../../scenarios/single-path.toml");
const SHORT_NEAR_CCID5_TOML: &str = include_str!("../../../../scenarios/short-near-ccid5.toml");

fn sets(overrides: &[&str]) -> Vec<String> {
    overrides.iter().map(|s| s.to_string()).collect()
}

fn load(text: &str, overrides: &[&str]) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str(text, &sets(overrides))
}

#[test]
fn defaults_are_table_1() {
    let s = Scenario::default();
    assert_eq!(s.seed, 1);
    assert!(s.keys.is_empty());
    assert_eq!(s.server_link.rtt_ms, 20.0);
    assert_eq!(s.paths.len(), 2);
    let (wifi, cell) = (&s.paths[0], &s.paths[1]);
    assert_eq!((wifi.name.as_str(), wifi.rtt_ms, wifi.cost), ("wifi", 20.0, 1));
    assert_eq!((cell.name.as_str(), cell.rtt_ms, cell.cost), ("cellular", 40.0, 2));
    for p in &s.paths {
        assert_eq!((p.rate_mbps, p.buffer_pkts, p.loss), (50.0, 500, LossChoice::None));
        assert_eq!((p.aqm, p.uplink_aqm), (AqmChoice::DropTail, AqmChoice::DropTail));
        assert_eq!((p.codel_target_ms, p.codel_interval_ms), (5.0, 100.0));
        assert_eq!((p.trace.as_ref(), p.uplink_trace.as_ref()), (None, None));
        assert_eq!((p.uplink_rate_mbps, p.uplink_buffer_pkts), (50.0, 500));
    }
    let t = &s.tunnel;
    assert_eq!(t.scheduler, SchedulerKind::Cpf);
    assert_eq!(t.cc, TunnelCc::Bbr);
    assert_eq!(t.reorder, ReorderKind::Adaptive);
    assert_eq!((t.sched_queue_pkts, t.reorder_buffer_pkts), (1500, 1500));
    assert_eq!((t.reorder_weight, t.reorder_margin_ms), (0.95, 10.0));
    assert_eq!(t.header_bytes, 60);
    let e = &s.e2e;
    assert_eq!((e.kind, e.cc, e.bytes), (E2eKind::Tcp, CcAlgorithm::Cubic, 300_000_000));
    assert_eq!((e.mss_bytes, e.initial_window_pkts, e.rwnd_bytes), (1448, 10, 6 << 20));
    assert_eq!(e.udp_rate_mbps, None);
    assert_eq!(s.udp_rate_mbps(), 1000.0);
    assert_eq!(
        s.sim,
        SimConfig {
            max_time_s: 3600.0,
            sample_interval_ms: 10.0,
            bin_ms: 100.0,
            framing_bytes: 14,
            path_handshake: false,
            wire: Wire::Plain,
            noise: NoiseConfig::default(),
        }
    );
    assert!(s.sim.noise.is_off(), "no noise unless asked for");
    assert_eq!(s.e2e_rtt_ms(), 40.0);
}

#[test]
fn default_toml_is_exactly_the_default() {
    assert_eq!(load(DEFAULT_TOML, &[]).unwrap(), Scenario::default());
    assert_eq!(load("", &[]).unwrap(), Scenario::default());
}

#[test]
fn default_toml_writes_every_field_out() {
    // Every key of the serialized default (unset options are not serialized) is in the file,
    // in every table at any depth, the algorithms' tables included.
    fn missing(prefix: &str, want: &toml::Value, have: Option<&toml::Value>) -> Vec<String> {
        let prefix = prefix.trim_start_matches('.');
        match (want, have) {
            (toml::Value::Table(w), Some(toml::Value::Table(h))) => {
                w.iter().flat_map(|(k, v)| missing(&format!("{prefix}.{k}"), v, h.get(k))).collect()
            }
            (toml::Value::Array(w), Some(toml::Value::Array(h))) => w
                .iter()
                .enumerate()
                .flat_map(|(i, v)| missing(&format!("{prefix}.{i}"), v, h.get(i)))
                .collect(),
            (_, None) => vec![prefix.to_string()],
            _ => Vec::new(),
        }
    }
    let want = toml::Value::Table(de::defaults_table().unwrap());
    let have: toml::Table = DEFAULT_TOML.parse().unwrap();
    assert_eq!(missing("", &want, Some(&toml::Value::Table(have))), Vec::<String>::new());
}

#[test]
fn example_files_load() {
    let udp = load(UDP_TOML, &[]).unwrap();
    assert_eq!(udp.e2e.kind, E2eKind::Udp);
    assert_eq!((udp.udp_rate_mbps(), udp.e2e.bytes), (120.0, 50_000_000));
    assert_eq!(udp.paths, Scenario::default().paths);

    let single = load(SINGLE_PATH_TOML, &[]).unwrap();
    assert_eq!(single.paths, vec![PathConfig::default()]);
    assert!(load(SINGLE_PATH_TOML, &["keys=BUF250"]).is_ok());
    assert!(matches!(
        load(SINGLE_PATH_TOML, &["keys=SHORT"]),
        Err(ScenarioError::KeyNotApplicable { .. })
    ));

    let near = load(SHORT_NEAR_CCID5_TOML, &[]).unwrap();
    assert_eq!(near.keys, ["SHORT", "NEAR", "BUF250"]);
    assert_eq!(
        (near.server_link.rtt_ms, near.paths[0].rtt_ms, near.paths[1].rtt_ms),
        (32.0, 8.0, 28.0)
    );
    assert_eq!((near.tunnel.cc, near.e2e.cc), (TunnelCc::Ccid5, CcAlgorithm::Bbr));
}

#[test]
fn partial_files_keep_defaults_and_paths_replace_the_list() {
    let s =
        load("[tunnel]\ncc = \"ccid2\"\n[[paths]]\nname = \"only\"\nrtt_ms = 5\n", &[]).unwrap();
    assert_eq!(s.tunnel.cc, TunnelCc::Ccid2);
    assert_eq!(s.tunnel.scheduler, SchedulerKind::Cpf);
    assert_eq!(
        s.paths,
        vec![PathConfig { name: "only".into(), rtt_ms: 5.0, ..PathConfig::default() }]
    );
    // Two [[paths]] entries without names both default to "wifi".
    let err = load("[[paths]]\n[[paths]]\n", &[]).unwrap_err();
    assert!(err.to_string().contains("paths.1.name = \"wifi\": must be unique"), "{err}");
}

#[test]
fn keys_as_list_or_plus_string() {
    let a = load("keys = [\"SHORT\", \"NEAR\"]", &[]).unwrap();
    let b = load("keys = \"SHORT+NEAR\"", &[]).unwrap();
    let c = load("", &["keys=SHORT+NEAR"]).unwrap();
    let d = load("", &["keys=near+short"]).unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
    assert_eq!(a, d);
    assert_eq!((a.server_link.rtt_ms, a.paths[0].rtt_ms, a.paths[1].rtt_ms), (32.0, 8.0, 28.0));
    assert_eq!(load("keys = \"\"", &[]).unwrap(), Scenario::default());
}

#[test]
fn placement_splits_the_overridden_rtt() {
    // n = 30 + 70 = 100 after overrides; DIST: server 20, path 1 80, path 2 100.
    let s = load("", &["server_link.rtt_ms=30", "paths.0.rtt_ms=70", "keys=DIST"]).unwrap();
    assert_eq!((s.server_link.rtt_ms, s.paths[0].rtt_ms, s.paths[1].rtt_ms), (20.0, 80.0, 100.0));
    // An RTT key wins over an override of the same field.
    let s = load("", &["server_link.rtt_ms=30", "keys=LONG"]).unwrap();
    assert_eq!(s.server_link.rtt_ms, 40.0);
}

#[test]
fn overrides_on_nested_fields_and_array_indices() {
    let s = load(
        DEFAULT_TOML,
        &[
            "paths.1.rtt_ms=60",
            "paths.0.loss=0.01",
            "tunnel.cc=ccid2",
            "tunnel.reorder=static",
            "e2e.udp_rate_mbps=80",
            "e2e.delayed_ack=false",
            "sim.bin_ms=50",
            "seed=7",
        ],
    )
    .unwrap();
    assert_eq!((s.paths[1].rtt_ms, s.paths[0].loss), (60.0, LossChoice::Bernoulli { p: 0.01 }));
    assert_eq!((s.tunnel.cc, s.tunnel.reorder), (TunnelCc::Ccid2, ReorderKind::Static));
    assert_eq!((s.e2e.udp_rate_mbps, s.e2e.delayed_ack), (Some(80.0), false));
    assert_eq!((s.sim.bin_ms, s.seed), (50.0, 7));
    // Overrides apply to default paths even when the file has none.
    assert_eq!(load("", &["paths.1.name=lte"]).unwrap().paths[1].name, "lte");
    // Later overrides win.
    assert_eq!(load("", &["seed=2", "seed=3"]).unwrap().seed, 3);
}

#[test]
fn override_into_a_missing_path_names_the_index_and_count() {
    let err = load(SINGLE_PATH_TOML, &["paths.1.rtt_ms=60"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--set \"paths.1.rtt_ms=60\": index 1 is out of range: paths has 1 entries"
    );
    assert!(matches!(load("", &["tunnel.cc"]), Err(ScenarioError::OverrideSyntax { .. })));
}

#[test]
fn unknown_fields_name_the_dotted_key_and_the_allowed_fields() {
    let err = load("[tunnel]\nccc = \"bbr\"\n", &[]).unwrap_err();
    assert!(
        matches!(err, ScenarioError::Field(FieldError::UnknownField { ref field, .. }) if field == "tunnel.ccc"),
        "{err:?}"
    );
    assert!(err
        .to_string()
        .starts_with("unknown field tunnel.ccc; expected one of: scheduler, cc, reorder,"));
    let err = load("", &["paths.1.rtt=60"]).unwrap_err();
    assert!(
        err.to_string().starts_with("unknown field paths.1.rtt; expected one of: name, rtt_ms,"),
        "{err}"
    );
    let err = load("sedd = 3", &[]).unwrap_err();
    assert!(
        err.to_string().starts_with("unknown field sedd; expected one of: keys, seed,"),
        "{err}"
    );
    let err = load("", &["e2e.foo.bar=1"]).unwrap_err();
    assert!(err.to_string().starts_with("unknown field e2e.foo;"), "{err}");
}

#[test]
fn misspelt_names_list_the_choices() {
    let err = load("[tunnel]\ncc = \"bbr9\"\n", &[]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "tunnel.cc: unknown tunnel congestion control \"bbr9\"; expected one of: {}",
            TunnelCc::NAMES.join(", ")
        )
    );
    assert!(err.to_string().contains("newreno, cubic, bbr, ccid2, ccid5"), "{err}");
    let err = load("", &["e2e.cc=reno"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "e2e.cc: unknown congestion control \"reno\"; expected one of: {}",
            CcAlgorithm::NAMES.join(", ")
        )
    );
    let err = load("", &["tunnel.scheduler=fastest"]).unwrap_err();
    assert!(err
        .to_string()
        .starts_with("tunnel.scheduler: unknown scheduler \"fastest\"; expected one of: cpf"));
    let err = load("", &["tunnel.reorder=on"]).unwrap_err();
    assert!(err.to_string().ends_with("expected one of: none, static, adaptive"), "{err}");
    let err = load("", &["e2e.kind=quic"]).unwrap_err();
    assert!(err.to_string().ends_with("expected one of: tcp, udp"), "{err}");
}

#[test]
fn wrong_types_name_the_field() {
    let err = load("[server_link]\nrtt_ms = \"fast\"\n", &[]).unwrap_err();
    assert!(
        matches!(err, ScenarioError::Field(FieldError::BadField { ref field, .. }) if field == "server_link.rtt_ms"),
        "{err:?}"
    );
    let err = load("", &["paths.0.buffer_pkts=-1"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.0.buffer_pkts: "), "{err}");
    let err = load("paths = 3", &[]).unwrap_err();
    assert!(err.to_string().starts_with("paths: expected an array of tables"), "{err}");
    let err = load("", &["paths.1=3"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.1: expected a table"), "{err}");
    let err = load("tunnel = 3", &[]).unwrap_err();
    assert!(err.to_string().starts_with("tunnel: expected a table"), "{err}");
    let err = load("keys = 3", &[]).unwrap_err();
    assert!(err.to_string().starts_with("keys: "), "{err}");
}

#[test]
fn unknown_key_is_an_error_and_cdl1_sets_codel() {
    let err = load("keys = \"SHORT+FAR\"", &[]).unwrap_err();
    assert!(
        err.to_string().contains("unknown scenario key \"FAR\"; expected one of: SHORT, LONG"),
        "{err}"
    );
    let s = load("", &["keys=CDL1"]).unwrap();
    assert!(s.paths.iter().all(|p| p.aqm == AqmChoice::CoDel));
    // The key wins over an override of the field it sets.
    let s = load("", &["paths.0.aqm=codel", "keys=CDL0"]).unwrap();
    assert_eq!(s.paths[0].aqm, AqmChoice::DropTail);
}

#[test]
fn link_model_fields_load_from_files_and_overrides() {
    let s = load(
        "[[paths]]\nname = \"a\"\naqm = \"codel\"\ncodel_target_ms = 10\n\
         loss = { model = \"gilbert_elliott\", p = 0.01, r = 0.25 }\n\
         uplink_loss = 0.002\nuplink_aqm = \"codel\"\n",
        &[],
    )
    .unwrap();
    let p = &s.paths[0];
    assert_eq!(
        (p.aqm, p.uplink_aqm, p.codel_target_ms),
        (AqmChoice::CoDel, AqmChoice::CoDel, 10.0)
    );
    assert_eq!(p.loss, LossChoice::GilbertElliott { p: 0.01, r: 0.25, h: 0.0, k: 1.0 });
    assert_eq!(p.uplink_loss, LossChoice::Bernoulli { p: 0.002 });
    let s = load(
        "",
        &[
            "paths.1.loss={ model = \"gilbert_elliott\", p = 0.05, r = 0.5, h = 0.1, k = 0.99 }",
            "paths.0.loss.model=bernoulli",
            "paths.0.loss.p=0.03",
        ],
    )
    .unwrap();
    assert_eq!(s.paths[1].loss, LossChoice::GilbertElliott { p: 0.05, r: 0.5, h: 0.1, k: 0.99 });
    assert_eq!(s.paths[0].loss, LossChoice::Bernoulli { p: 0.03 });
}

#[test]
fn link_model_errors_name_the_field() {
    let err = load("", &["paths.0.aqm=red"]).unwrap_err();
    assert!(
        err.to_string().starts_with("paths.0.aqm: unknown queue discipline \"red\"")
            && err.to_string().ends_with("expected one of: droptail, codel"),
        "{err}"
    );
    let err = load("", &["paths.1.loss={ model = \"bernoulli\", q = 1 }"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.1.loss: unknown field `q`"), "{err}");
    let err = load("", &["paths.0.loss.r=0.5"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.0.loss: unknown field `r`"), "{err}");
    let err =
        load("", &["paths.0.loss={ model = \"gilbert_elliott\", p = 0.1, r = 2 }"]).unwrap_err();
    assert_eq!(err.to_string(), "paths.0.loss.r = 2: must be in (0, 1]");
    let err = load("", &["paths.0.trace="]).unwrap_err();
    assert!(err.to_string().starts_with("paths.0.trace: a trace file path must not be empty"));
    let err = load("", &["paths.1.uplink_trace=/nonexistent/braid.mahi"]).unwrap_err();
    assert!(
        err.to_string().starts_with("paths.1.uplink_trace: trace file /nonexistent/braid.mahi: "),
        "{err}"
    );
}

#[test]
fn trace_paths_are_relative_to_the_scenario_file() {
    let dir = std::env::temp_dir().join(format!("braid-scenario-trace-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("link.mahi"), "1\n2\n2\n").unwrap();
    let file = dir.join("sub/s.toml");
    std::fs::write(&file, "[[paths]]\nname = \"a\"\ntrace = \"../link.mahi\"\n").unwrap();
    let s = Scenario::load(&file, &[]).unwrap();
    let trace = s.paths[0].trace.as_ref().unwrap();
    assert!(trace.path().is_absolute(), "{trace:?}");
    assert_eq!(trace.trace().unwrap().opportunities_per_period(), 3);
    // Written out and loaded from another directory, it still names the same file.
    let elsewhere = dir.join("copy.toml");
    std::fs::write(&elsewhere, s.to_toml_string().unwrap()).unwrap();
    assert_eq!(Scenario::load(&elsewhere, &[]).unwrap(), s);
    // An override is relative to the scenario file too.
    let s = Scenario::load(&file, &["paths.0.uplink_trace=../link.mahi".into()]).unwrap();
    assert_eq!(s.paths[0].uplink_trace.as_ref().unwrap().trace().unwrap().period_ms(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn validation_runs_on_loaded_scenarios() {
    let err = load("", &["paths.0.rate_mbps=0"]).unwrap_err();
    assert_eq!(err.to_string(), "paths.0.rate_mbps = 0: must be in (0, 100000]");
    let err = load("", &["paths.0.rtt_ms=nan"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.0.rtt_ms = NaN"), "{err}");
    // NaN is caught before a placement key could overwrite it.
    let err = load("", &["server_link.rtt_ms=nan", "keys=NEAR"]).unwrap_err();
    assert!(err.to_string().starts_with("server_link.rtt_ms = NaN"), "{err}");
    let many: String = (0..9).map(|i| format!("[[paths]]\nname = \"p{i}\"\n")).collect();
    let err = load(&many, &[]).unwrap_err();
    assert!(err.to_string().contains("must have 1..=8 entries"), "{err}");
    // A key may push a value out of range; the second validation catches it.
    let err =
        load("", &["server_link.rtt_ms=9000", "paths.0.rtt_ms=9000", "keys=DIST"]).unwrap_err();
    assert!(err.to_string().starts_with("paths.0.rtt_ms = 14400"), "{err}");
}

#[test]
fn syntax_errors_name_the_file() {
    let err = load("[tunnel\n", &[]).unwrap_err();
    assert!(matches!(err, ScenarioError::Syntax { file: None, .. }));
    let dir = std::env::temp_dir().join(format!("braid-scenario-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(&file, "seed = = 1\n").unwrap();
    let err = Scenario::load(&file, &[]).unwrap_err();
    assert!(
        err.to_string().starts_with(&format!("TOML syntax error in {}", file.display())),
        "{err}"
    );
    let missing = dir.join("missing.toml");
    assert!(matches!(Scenario::load(&missing, &[]), Err(ScenarioError::Io { .. })));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn load_reads_the_scenario_folder() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    assert_eq!(Scenario::load(dir.join("default.toml"), &[]).unwrap(), Scenario::default());
}

#[test]
fn to_toml_string_round_trips() {
    let cases: &[&[&str]] = &[
        &[],
        &["keys=SHORT+NEAR+BUF250"],
        &["keys=LONG+DIST", "paths.1.loss=0.001", "e2e.udp_rate_mbps=33.3"],
        &["keys=CDL1", "paths.0.uplink_loss={ model = \"gilbert_elliott\", p = 0.1, r = 0.2 }"],
        &["server_link.rtt_ms=13.7", "paths.0.rtt_ms=51.3", "keys=DIST+CDL0"],
        &["server_link.rtt_ms=0.1", "paths.0.rtt_ms=0.2", "keys=NEAR"],
        &["tunnel.cc=ccid2", "tunnel.reorder=none", "e2e.kind=udp", "seed=9223372036854775807"],
        &[
            "tunnel.acpf.min_fraction=0.6",
            "tunnel.acpf.tick_ms=0.3",
            "tunnel.blest.lambda_max=2",
            "tunnel.ecf.beta=0.5",
            "tunnel.bbr2.loss_thresh_percent=5",
            "tunnel.wvegas.queue_drain=false",
            "tunnel.coupled_cubic.alpha_exponent=0.5",
            "e2e.bbr2.probe_rtt_duration_ms=50.5",
        ],
        &["tunnel.acpf.initial_fraction=0.9"],
    ];
    for overrides in cases {
        let s = load("", overrides).unwrap();
        let text = s.to_toml_string().unwrap();
        let back = load(&text, &[]).unwrap_or_else(|e| panic!("{overrides:?}: {e}\n{text}"));
        assert_eq!(back, s, "{overrides:?}\n{text}");
    }
    let single = load(SINGLE_PATH_TOML, &[]).unwrap();
    assert_eq!(load(&single.to_toml_string().unwrap(), &[]).unwrap(), single);
}

proptest! {
    #[test]
    fn arbitrary_overrides_never_panic(spec in "\\PC{0,40}") {
        let _ = load("", &[spec.as_str()]);
    }

    #[test]
    fn structured_overrides_never_panic(
        key in "(keys|seed|paths|paths\\.[0-9]|paths\\.[0-9]\\.(rtt_ms|name|loss|aqm|trace|codel_target_ms)|tunnel\\.(cc|reorder)|tunnel\\.(acpf|bbr2)\\.(tick_ms|min_fraction|initial_fraction|probe_rtt_interval_ms|loss_thresh_percent)|e2e\\.bbr2\\.probe_wait_rand_ms|e2e|sim\\.bin_ms|x)(\\.[a-z0-9]{0,3}){0,2}",
        value in "(-?[0-9]{1,25}(\\.[0-9]*)?(e[0-9]{1,3})?|nan|-inf|inf|true|\"[a-z+]{0,8}\"|\\[[0-9, ]{0,6}\\]|\\{[a-z= 0-9]{0,8}\\}|[A-Z+]{0,12})",
    ) {
        let _ = Scenario::from_toml_str("", &[format!("{key}={value}")]);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = load(&text, &[]);
    }
}

#[test]
fn every_tunnel_algorithm_name_is_accepted_and_misspellings_are_refused() {
    for name in SchedulerKind::NAMES {
        let s = load("", &[&format!("tunnel.scheduler={name}")]).unwrap();
        assert_eq!(s.tunnel.scheduler.as_str(), *name);
    }
    for name in TunnelCc::NAMES {
        assert_eq!(load("", &[&format!("tunnel.cc={name}")]).unwrap().tunnel.cc.as_str(), *name);
    }
    for name in Reliability::NAMES {
        let s = load("", &[&format!("tunnel.reliability={name}")]).unwrap();
        assert_eq!(s.tunnel.reliability.as_str(), *name);
    }
    let err = load("", &["tunnel.reliability=reliabel"]).unwrap_err().to_string();
    assert!(err.contains("unknown tunnel reliability \"reliabel\"; expected one of: unreliable, reliable, partial"), "{err}");
    let err = load("", &["tunnel.scheduler=redundent"]).unwrap_err().to_string();
    assert!(err.contains("redundant"), "the error lists the allowed names: {err}");
}

#[test]
fn fast_loss_detection_needs_a_wait_limit() {
    let s = load("", &["tunnel.fast_loss_detection=true", "tunnel.equalize_delay=true"]).unwrap();
    assert!(s.tunnel.fast_loss_detection && s.tunnel.equalize_delay);
    let err = load("", &["tunnel.fast_loss_detection=true", "tunnel.reorder=none"]).unwrap_err();
    assert!(err.to_string().starts_with("tunnel.fast_loss_detection = true: needs"), "{err}");
    let err = load("", &["tunnel.equalize_delay=yes"]).unwrap_err();
    assert!(err.to_string().contains("tunnel.equalize_delay"), "{err}");
}

#[test]
fn counting_overrides_the_name_and_misspellings_list_the_choices() {
    use braid_core::cc::Counting;
    let core = |sets: &[&str]| load("", sets).unwrap().tunnel.to_core(&[1, 2], 1500).counting;
    assert_eq!(core(&[]), None, "auto keeps the name's counting");
    assert_eq!(core(&["tunnel.cc=bbr2", "tunnel.counting=packets"]), Some(Counting::Packets));
    assert_eq!(core(&["tunnel.cc=ccid2", "tunnel.counting=bytes"]), Some(Counting::Bytes));
    let err = load("", &["tunnel.counting=packet"]).unwrap_err().to_string();
    assert!(err.contains("tunnel.counting") && err.contains("auto, bytes, packets"), "{err}");
}

#[test]
fn max_rtt_spread_reaches_the_core_and_is_range_checked() {
    let s = load("", &["tunnel.max_rtt_spread_ms=100"]).unwrap();
    let core = s.tunnel.to_core(&[1, 2], 1500);
    assert_eq!(core.max_rtt_spread, Some(std::time::Duration::from_millis(100)));
    assert_eq!(Scenario::default().tunnel.to_core(&[1, 2], 1500).max_rtt_spread, None);
    let err = load("", &["tunnel.max_rtt_spread_ms=0.5"]).unwrap_err().to_string();
    assert!(err.starts_with("tunnel.max_rtt_spread_ms = 0.5"), "{err}");
}

#[test]
fn repair_wait_needs_reliable_paths_and_a_wait_and_reaches_the_core() {
    let s = load("", &["tunnel.reliability=reliable", "tunnel.repair_wait_ms=200"]).unwrap();
    let core = s.tunnel.to_core(&[1, 2], 1500);
    assert_eq!(core.reorder.repair_wait, Some(std::time::Duration::from_millis(200)));
    assert_eq!(Scenario::default().tunnel.to_core(&[1, 2], 1500).reorder.repair_wait, None);
    let off = load("", &["tunnel.repair_wait_ms=off"]).unwrap();
    assert_eq!(off.tunnel.repair_wait_ms, None, "off needs no reliable paths");
    for (sets, wants) in [
        (&["tunnel.repair_wait_ms=200"][..], "needs tunnel.reliability = \"reliable\""),
        (&["tunnel.reliability=partial", "tunnel.repair_wait_ms=200"][..], "needs"),
        (
            &["tunnel.reliability=reliable", "tunnel.reorder=none", "tunnel.repair_wait_ms=200"][..],
            "tunnel.reorder = \"static\" or \"adaptive\"",
        ),
        (&["tunnel.reliability=reliable", "tunnel.repair_wait_ms=0.5"][..], "[1, 10000]"),
    ] {
        let err = load("", sets).unwrap_err().to_string();
        assert!(err.starts_with("tunnel.repair_wait_ms = "), "{sets:?}: {err}");
        assert!(err.contains(wants), "{sets:?}: {err}");
    }
}

#[test]
fn max_rtt_spread_is_switched_off_by_name_and_written_out_so() {
    assert_eq!(load("", &["tunnel.max_rtt_spread_ms=off"]).unwrap().tunnel.max_rtt_spread_ms, None);
    let file = "[tunnel]\nmax_rtt_spread_ms = \"off\"\n";
    assert_eq!(load(file, &[]).unwrap(), Scenario::default());
    let err = load("", &["tunnel.max_rtt_spread_ms=of"]).unwrap_err().to_string();
    assert!(err.contains("tunnel.max_rtt_spread_ms") && err.contains("\"off\""), "{err}");
    // Written out, an unset limit stays unset when read back, and a set one stays set.
    for spread in [None, Some(100.0)] {
        let tunnel = TunnelConfig { max_rtt_spread_ms: spread, ..TunnelConfig::default() };
        let text = toml::to_string(&tunnel).unwrap();
        let back = TunnelConfig::from_table_over(&TunnelConfig::bonding(), text.parse().unwrap());
        assert_eq!(back.unwrap(), tunnel, "{text}");
    }
}

#[test]
fn tuning_tables_reach_the_core_from_files_and_overrides() {
    use std::time::Duration;
    let file = "[tunnel]\nscheduler = \"acpf\"\ncc = \"bbr3\"\n\
                [tunnel.acpf]\nmin_fraction = 0.6\nramp_up_ms = 265\n\
                [tunnel.wvegas]\ntotal_alpha_pkts = 20\n";
    let s = load(file, &["tunnel.bbr2.beta_percent=50", "tunnel.acpf.max_fraction=0.9"]).unwrap();
    let core = s.tunnel.to_core(&[1, 2], 1500);
    core.validate().unwrap();
    assert_eq!(core.scheduler, SchedulerKind::Acpf);
    let acpf = &core.sched.acpf;
    assert_eq!((acpf.min_fraction, acpf.initial_fraction, acpf.max_fraction), (0.6, 0.6, 0.9));
    assert_eq!(acpf.ramp_up, Duration::from_millis(265));
    assert_eq!(acpf.tick, Duration::from_millis(1), "the fields not given keep their default");
    assert_eq!(core.cc_tuning.bbr2.beta_percent, 50);
    assert_eq!(core.cc_tuning.wvegas.total_alpha_pkts, 20);
    // A partial table keeps the other fields' defaults.
    assert_eq!(s.tunnel.wvegas.initial_alpha_pkts, 2);
    // The schedulers built from it start where the tables say.
    let built = SchedulerKind::Acpf.build(&core.sched, 1500);
    assert_eq!(built.metrics().acpf_fraction, Some(0.6));
    let other = load("", &["tunnel.blest.lambda_initial=1.25", "tunnel.ecf.beta=0.5"]).unwrap();
    let core = other.tunnel.to_core(&[1, 2], 1500);
    assert_eq!(SchedulerKind::Blest.build(&core.sched, 1500).metrics().blest_lambda, Some(1.25));
    assert_eq!(core.sched.ecf.beta, 0.5);
    let cubic =
        load("", &["tunnel.coupled_cubic.beta=0.8", "tunnel.coupled_cubic.alpha_refinements=3"]);
    let c = cubic.unwrap().tunnel.to_core(&[1, 2], 1500).cc_tuning.coupled_cubic;
    assert_eq!((c.beta, c.alpha_refinements), (0.8, 3));
    assert_eq!(
        Scenario::default().tunnel.to_core(&[1, 2], 1500),
        braid_core::tunnel::TunnelConfig {
            mss_bytes: 1560,
            ..braid_core::tunnel::TunnelConfig::default()
        },
        "no table: the core's defaults"
    );
}

#[test]
fn e2e_bbr2_reaches_the_server() {
    use crate::topology::AppConfig;
    let s = load("", &["e2e.cc=bbr2", "e2e.bbr2.loss_thresh_percent=5"]).unwrap();
    let AppConfig::Tcp { cc, .. } = crate::run::world_config(&s, false).unwrap().app else {
        panic!("a TCP download");
    };
    assert_eq!(cc.bbr2.loss_thresh_percent, 5);
    assert_eq!(s.tunnel.bbr2, Bbr2Table::default(), "the tunnel's table is another one");
}

#[test]
fn e2e_cubic_undo_reaches_the_server_and_names_its_choices() {
    use crate::topology::AppConfig;
    use braid_core::cc::cubic::CubicUndo;
    let undo = |s: &Scenario| match crate::run::world_config(s, false).unwrap().app {
        AppConfig::Tcp { cc, .. } => cc.cubic_undo,
        AppConfig::Udp { .. } => panic!("a TCP download"),
    };
    // Linux's undo by default (tcp_cubic undoes with tcp_reno_undo_cwnd).
    assert_eq!(undo(&Scenario::default()), CubicUndo::Linux);
    assert_eq!(undo(&load("", &["e2e.cubic_undo=rfc9438"]).unwrap()), CubicUndo::Rfc9438);
    let err = load("", &["e2e.cubic_undo=bsd"]).unwrap_err().to_string();
    assert!(err.contains("e2e.cubic_undo") && err.contains("rfc9438, linux"), "{err}");
}

#[test]
fn e2e_dsack_reaches_the_tcp_config() {
    use crate::topology::AppConfig;
    let dsack = |s: &Scenario| match crate::run::world_config(s, false).unwrap().app {
        AppConfig::Tcp { tcp, .. } => tcp.dsack,
        AppConfig::Udp { .. } => panic!("a TCP download"),
    };
    // Linux's default (tcp_dsack = 1), in the built-in default and in scenarios/default.toml.
    assert!(dsack(&Scenario::default()));
    assert!(dsack(&load("", &[]).unwrap()));
    assert!(!dsack(&load("", &["e2e.dsack=false"]).unwrap()));
}

#[test]
fn e2e_prr_reaches_the_server_and_the_kernel_tcp_paths_for_reno_and_cubic_only() {
    use crate::topology::AppConfig;
    let prr = |sets: &[&str]| {
        let s =
            load("", &[&["tunnel.transport=tcp", "tunnel.reliability=reliable"], sets].concat())
                .unwrap();
        let w = crate::run::world_config(&s, false).unwrap();
        let AppConfig::Tcp { cc, .. } = w.app else { panic!("a TCP download") };
        (cc.reduces_with_prr(), w.tcp_paths.expect("kernel TCP paths").cc.reduces_with_prr())
    };
    assert_eq!(prr(&["tunnel.cc=newreno"]), (true, true), "Linux's, by default");
    assert!(Scenario::default().e2e.prr);
    assert_eq!(prr(&["e2e.prr=true", "tunnel.cc=newreno"]), (true, true));
    assert_eq!(prr(&["e2e.prr=true", "e2e.cc=bbr", "tunnel.cc=bbr"]), (false, false));
    assert_eq!(prr(&["e2e.prr=false", "tunnel.cc=cubic"]), (false, false));
}

/// The end-to-end TCP's configuration a scenario with `sets` gives the simulator.
fn e2e_tcp_config(sets: &[&str]) -> crate::tcp::TcpConfig {
    match crate::run::world_config(&load("", sets).unwrap(), false).unwrap().app {
        crate::topology::AppConfig::Tcp { tcp, .. } => tcp,
        crate::topology::AppConfig::Udp { .. } => panic!("a TCP download"),
    }
}

#[test]
fn e2e_linux_rto_reaches_the_tcp_config() {
    let linux_rto = |sets: &[&str]| e2e_tcp_config(sets).linux_rto;
    assert_eq!(linux_rto(&[]), Scenario::default().e2e.linux_rto);
    assert!(linux_rto(&["e2e.linux_rto=true"]));
    assert!(!linux_rto(&["e2e.linux_rto=false"]));
}

#[test]
fn e2e_linux_undo_reaches_the_tcp_config_and_is_linux_by_default() {
    let linux_undo = |sets: &[&str]| e2e_tcp_config(sets).linux_undo;
    assert!(Scenario::default().e2e.linux_undo);
    assert!(linux_undo(&[]));
    assert!(!linux_undo(&["e2e.linux_undo=false"]));
}

#[test]
fn tuning_errors_name_the_dotted_key() {
    let err = |text: &str, overrides: &[&str]| load(text, overrides).unwrap_err().to_string();
    assert_eq!(
        err("", &["tunnel.acpf.min_fraction=0.01", "tunnel.acpf.max_fraction=0.005"]),
        "tunnel.acpf.max_fraction = 0.005: must be in [tunnel.acpf.min_fraction, 1]"
    );
    assert_eq!(
        err("[tunnel.acpf]\nmin_fraction = 0\n", &[]),
        "tunnel.acpf.min_fraction = 0: must be in (0, 1]"
    );
    assert_eq!(
        err("", &["e2e.bbr2.probe_rtt_interval_ms=20000"]),
        "e2e.bbr2.probe_rtt_interval_ms = 20000: must be in (0, 10 s] (the min_rtt filter window)"
    );
    let misspelt = err("", &["tunnel.acpf.min_fractio=0.6"]);
    let expected = "unknown field tunnel.acpf.min_fractio; expected one of: queue_threshold_pkts,";
    assert!(misspelt.starts_with(expected), "{misspelt}");
    assert!(err("[e2e.bbr2]\nloss_thresh = 5\n", &[])
        .starts_with("unknown field e2e.bbr2.loss_thresh; expected one of: loss_thresh_percent,"));
    assert!(err("", &["tunnel.bbr2.loss_thresh_percent=\"5%\""])
        .starts_with("tunnel.bbr2.loss_thresh_percent: "));
    assert!(err("", &["tunnel.wvegas.gamma_pkts=-1"]).starts_with("tunnel.wvegas.gamma_pkts: "));
    assert!(err("", &["tunnel.ecf=0.5"]).starts_with("tunnel.ecf: expected a table"));
}

/// Through a tunnel with an interface MTU the end-to-end TCP takes its MSS from it (MTU - 52),
/// as Linux does from the route's MTU; the baseline keeps `e2e.mss_bytes`, and so does a
/// tunnel without an MTU (the default). A UDP flow must fit the MTU.
#[test]
fn a_tunnel_mtu_sets_the_end_to_end_mss_of_tunnelled_runs_only() {
    use crate::topology::AppConfig;
    let mss = |sets: &[&str], baseline: bool| {
        let cfg = crate::run::world_config(&load("", sets).unwrap(), baseline).unwrap();
        let tunnel_mss = cfg.tunnel.map(|t| t.mss_bytes);
        match cfg.app {
            AppConfig::Tcp { tcp, .. } => (tcp.mss_bytes, tunnel_mss),
            AppConfig::Udp { .. } => panic!("a TCP download"),
        }
    };
    // Off: 1448 end to end; the tunnel's largest packet is 1500 + its 60 bytes.
    assert_eq!(mss(&[], false), (1448, Some(1560)));
    assert_eq!(mss(&["tunnel.mtu_bytes=1400"], false), (1348, Some(1460)));
    assert_eq!(mss(&["tunnel.mtu_bytes=1400"], true), (1448, None));
    // An MTU above what the MSS needs changes nothing.
    assert_eq!(mss(&["tunnel.mtu_bytes=9000"], false), (1448, Some(1560)));
    let err = load("", &["e2e.kind=udp", "e2e.udp_packet_bytes=1500", "tunnel.mtu_bytes=1400"])
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("e2e.udp_packet_bytes = 1500: must be at most tunnel.mtu_bytes"),
        "{err}"
    );
    let err = load("", &["tunnel.mtu_bytes=580"]).unwrap_err().to_string();
    assert!(err.starts_with("tunnel.mtu_bytes = 580: must be at least 588"), "{err}");
}
