//! `braid reproduce` end to end, with the real binary and tiny runs. nested-cc: the folder has
//! the specs, both sweeps, the examples and the tables; Table 3 has its 22 rows with finite
//! statistics; a second invocation simulates nothing and writes the same tables; other options
//! into the same folder are refused; the written spec reruns with plain `braid sweep`. acpf and
//! coupled-cubic (`--quick`): their CSVs have the expected rows, every goodput and throughput
//! lies within the paths' capacity, they resume, and bad or changed options are refused.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("braid-reproduce-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn braid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_braid")).args(args).stdin(Stdio::null()).output().unwrap()
}

/// 500 kB downloads, 3 contour points, no figures, `reps` repetitions.
fn reproduce(out: &Path, reps: &str) -> Output {
    let mut args = vec!["reproduce", "nested-cc", "--out", out.to_str().unwrap()];
    args.extend_from_slice(&["--bytes", "500000", "--reps", reps, "--points", "3", "--jobs", "2"]);
    args.push("--no-figures");
    braid(&args)
}

fn ok(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn a_tiny_reproduction_makes_table_3_and_resumes() {
    let out = scratch("tiny").join("out");
    let first = ok(&reproduce(&out, "2"));
    assert!(first.contains("matrix: 660 rows (0 failed); 660 runs simulated now"), "{first}");
    // Per set: combinations x buffers x 3 points.
    for (set, rows) in
        [("fig05", 6), ("fig08b", 3), ("fig08c", 27), ("fig09c", 3), ("fig09d-a0", 9)]
    {
        assert!(first.contains(&format!("contour {set}: {rows} rows (0 failed)")), "{first}");
    }
    assert!(first.contains("series: 12 run now"), "{first}");

    for file in [
        "base.toml",
        "matrix.toml",
        "contour-fig05.toml",
        "contour-fig09d-a40.toml",
        "contour_points.csv",
        "matrix/runs.parquet",
        "contour/fig05/runs.parquet",
        "contour/fig08c/runs.parquet",
        "series/fig4_bbr-bbr_short-near/throughput.csv",
        "series/fig9a_bbr-ccid2_long/summary.json",
        "reproduce.json",
        "README.md",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }

    let table3 = fs::read_to_string(out.join("table3.csv")).unwrap();
    let rows: Vec<&str> = table3.lines().collect();
    assert_eq!(
        rows[0],
        "combination,e2e_cc,tunnel_cc,reorder,scheduler,relative_dlct_mean,relative_dlct_ci95,\
         runs,failed,multimodal_scenarios"
    );
    assert_eq!(rows.len(), 1 + 22, "{table3}");
    for row in &rows[1..] {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), 10, "{row}");
        for stat in &cells[5..7] {
            let v: f64 = stat.parse().unwrap_or_else(|_| panic!("{row}"));
            assert!(v.is_finite() && v >= 0.0, "{row}");
        }
        // 2 repetitions a scenario cannot hold two modes of at least 2 runs each.
        assert_eq!(&cells[7..], ["30", "0", "0"], "{row}");
    }
    let scenarios = fs::read_to_string(out.join("table_scenarios.csv")).unwrap();
    assert_eq!(scenarios.lines().count(), 1 + 22 * 15);
    assert!(scenarios
        .lines()
        .next()
        .unwrap()
        .ends_with(",runs,failed,modes,mode_means,mode_shares"));
    for row in scenarios.lines().skip(1) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), 15, "{row}");
        // One mode holding every run, its mean the cell's (two runs sum alike in any order).
        assert_eq!(&cells[12..], ["1", cells[6], "1"], "{row}");
    }
    let points = fs::read_to_string(out.join("contour_points.csv")).unwrap();
    assert_eq!(points.lines().count(), 1 + 3);
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("reproduce.json")).unwrap()).unwrap();
    assert_eq!(manifest["scenarios"].as_array().unwrap().len(), 15);
    assert!(manifest["scenarios_note"].as_str().unwrap().contains("Figure 10"));
    let sets = manifest["contour"]["sets"].as_array().unwrap();
    assert_eq!(sets[0]["asymmetry_ms"], 0.0, "Figure 5: no asymmetry");
    let fig5 = fs::read_to_string(out.join("contour-fig05.toml")).unwrap();
    let p1 = fig5.lines().find(|l| l.contains("label = 0,")).unwrap();
    let rtt = |key: &str| -> f64 {
        let at = p1.find(key).unwrap() + key.len();
        p1[at..].trim_start_matches([' ', '=']).split([',', ' ']).next().unwrap().parse().unwrap()
    };
    assert_eq!(rtt("\"paths.0.rtt_ms\""), rtt("\"paths.1.rtt_ms\""), "{p1}");

    // Again: nothing to simulate, the same tables.
    let again = ok(&reproduce(&out, "2"));
    assert!(again.contains("0 runs simulated now, 660 found done"), "{again}");
    assert!(again.contains("series: 0 run now, 12 found done"), "{again}");
    assert_eq!(fs::read_to_string(out.join("table3.csv")).unwrap(), table3);

    // Other options into the same folder are refused, naming the spec that differs.
    let other = reproduce(&out, "3");
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("matrix.toml exists with other contents"), "{err}");

    // The written spec is a plain sweep spec: resuming its folder finds every run done.
    let spec = out.join("matrix.toml");
    let sweep = ok(&braid(&[
        "sweep",
        spec.to_str().unwrap(),
        "--out",
        out.join("matrix").to_str().unwrap(),
    ]));
    assert!(sweep.contains("0 runs simulated now, 660 found done"), "{sweep}");
}

/// The CSV `text` as a header and rows of cells.
fn csv(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(String::from).collect()).collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{row:?}");
    }
    (header, rows)
}

/// The number in column `name` of `row`.
fn cell(header: &[String], row: &[String], name: &str) -> f64 {
    let at = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name}"));
    row[at].parse().unwrap_or_else(|_| panic!("{name} = {:?} in {row:?}", row[at]))
}

#[test]
fn acpf_quick_makes_its_tables_within_capacity_and_resumes() {
    let out = scratch("acpf").join("out");
    let dir = out.to_str().unwrap();
    let args = ["reproduce", "acpf", "--out", dir, "--quick", "--jobs", "2", "--no-figures"];
    let first = ok(&braid(&args));
    assert!(first.contains("table: 48 rows (0 failed); 48 runs simulated now"), "{first}");
    assert!(first.contains("contour: 20 rows (0 failed)"), "{first}");
    assert!(first.contains("series: 6 run now"), "{first}");
    for file in [
        "base.toml",
        "table.toml",
        "contour.toml",
        "contour_points.csv",
        "table/runs.parquet",
        "contour/runs.parquet",
        "series/fig4b_newreno_acpf/trace.csv",
        "series/fig4e_bbr_cpf/throughput.csv",
        "README.md",
        "reproduce.json",
    ] {
        assert!(out.join(file).is_file(), "{file}");
    }

    // goodput.csv: 2 tunnels x 2 delay sets x 3 e2e CCs x 2 schedulers, 2 runs each, every
    // goodput positive and below both paths' rate together.
    let goodput = fs::read_to_string(out.join("goodput.csv")).unwrap();
    let (h, rows) = csv(&goodput);
    assert_eq!(rows.len(), 24, "{goodput}");
    for row in &rows {
        let both_paths = 2.0 * cell(&h, row, "rate_mbps");
        for stat in ["goodput_mbps_mean", "goodput_mbps_min", "goodput_mbps_max"] {
            let v = cell(&h, row, stat);
            assert!(v > 0.0 && v <= both_paths, "{stat} {v} beyond {both_paths}: {row:?}");
        }
        assert!(cell(&h, row, "goodput_mbps_ci95") >= 0.0, "{row:?}");
        for path in ["path1_mbps_mean", "path2_mbps_mean"] {
            assert!(cell(&h, row, path) <= cell(&h, row, "rate_mbps") * 1.001, "{row:?}");
        }
        assert_eq!((cell(&h, row, "runs"), cell(&h, row, "failed")), (2.0, 0.0), "{row:?}");
    }
    // gain.csv: one row per set, the gain made from its two means.
    let gain = fs::read_to_string(out.join("gain.csv")).unwrap();
    let (gh, grows) = csv(&gain);
    assert_eq!(grows.len(), 12);
    for row in &grows {
        let (cpf, acpf) = (cell(&gh, row, "cpf_goodput_mbps"), cell(&gh, row, "acpf_goodput_mbps"));
        let want = (acpf / cpf - 1.0) * 100.0;
        assert!((cell(&gh, row, "acpf_gain_percent") - want).abs() < 1e-6, "{row:?}");
    }
    // contour.csv: 10 points x CPF/ACPF; ACPF's fraction within its range, CPF's empty.
    let contour = fs::read_to_string(out.join("contour.csv")).unwrap();
    let (ch, crows) = csv(&contour);
    assert_eq!(crows.len(), 20);
    for row in &crows {
        assert!(cell(&ch, row, "goodput_mbps") <= 100.0, "{row:?}");
        assert!(cell(&ch, row, "server_cwnd_bytes_mean") > 0.0, "{row:?}");
        let fraction = &row[ch.iter().position(|c| c == "acpf_fraction_mean").unwrap()];
        if row[1] == "acpf" {
            let f: f64 = fraction.parse().unwrap();
            assert!((0.47..=1.0).contains(&f), "{row:?}");
        } else {
            assert_eq!(fraction, "", "{row:?}");
        }
    }
    let trace = fs::read_to_string(out.join("series/fig4b_newreno_acpf/trace.csv")).unwrap();
    assert!(trace.lines().nth(1).unwrap().split(',').nth(7).unwrap().parse::<f64>().is_ok());
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("reproduce.json")).unwrap()).unwrap();
    assert_eq!(manifest["experiment"], "acpf");
    assert!(manifest["setup_note"].as_str().unwrap().contains("RTTs"));

    let again = ok(&braid(&args));
    assert!(again.contains("0 runs simulated now, 48 found done"), "{again}");
    assert!(again.contains("series: 0 run now, 6 found done"), "{again}");
    assert_eq!(fs::read_to_string(out.join("goodput.csv")).unwrap(), goodput);

    // Another buffer into the same folder is refused; a bad flag names itself and its range.
    let other = braid(&["reproduce", "acpf", "--out", dir, "--quick", "--buffer-pkts", "300"]);
    assert!(!other.status.success());
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(err.contains("table.toml exists with other contents"), "{err}");
    let bad = braid(&["reproduce", "acpf", "--out", dir, "--buffer-pkts", "5"]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("--buffer-pkts") && err.contains("10..=100000"),
        "{err}"
    );
}

#[test]
fn coupled_cubic_quick_makes_its_table_within_capacity_and_resumes() {
    let out = scratch("coupled-cubic").join("out");
    let dir = out.to_str().unwrap();
    let args =
        ["reproduce", "coupled-cubic", "--out", dir, "--quick", "--jobs", "2", "--no-figures"];
    let first = ok(&braid(&args));
    assert!(first.contains("utilisation: 10 rows (0 failed); 10 runs simulated now"), "{first}");
    assert!(first.contains("single_path: 2 rows (0 failed)"), "{first}");
    assert!(first.contains("series: 2 run now"), "{first}");
    for file in
        ["utilisation.toml", "single_path.toml", "series/fig5_lia/trace.csv", "reproduce.json"]
    {
        assert!(out.join(file).is_file(), "{file}");
    }

    // 5 two-path variants x (2 subflows + total) + single path x (subflow 1 + total).
    let table = fs::read_to_string(out.join("utilisation.csv")).unwrap();
    let (h, rows) = csv(&table);
    assert_eq!(rows.len(), 5 * 3 + 2, "{table}");
    let variants: Vec<&str> = rows.iter().step_by(3).take(5).map(|r| r[0].as_str()).collect();
    assert_eq!(variants, ["lia", "coupled_cubic_a1", "coupled_cubic", "cubic", "newreno"]);
    for row in &rows {
        let (rate, capacity) =
            (cell(&h, row, "throughput_mbps_mean"), cell(&h, row, "capacity_mbps"));
        assert!(rate > 0.0 && rate <= capacity * 1.001, "{row:?}");
        let u = cell(&h, row, "utilisation_mean");
        assert!((u - rate / capacity).abs() < 1e-9 && u <= 1.001, "{row:?}");
        assert_eq!((cell(&h, row, "runs"), cell(&h, row, "failed")), (2.0, 0.0), "{row:?}");
        if row[3] != "total" {
            assert!(cell(&h, row, "cwnd_pkts_mean") >= 1.0, "{row:?}");
        }
    }
    // Each variant's total is the sum of its subflows.
    for v in rows.chunks(3).take(5) {
        let sum = cell(&h, &v[0], "throughput_mbps_mean") + cell(&h, &v[1], "throughput_mbps_mean");
        assert!((cell(&h, &v[2], "throughput_mbps_mean") - sum).abs() < 1e-6, "{v:?}");
        assert_eq!(cell(&h, &v[2], "capacity_mbps"), 600.0);
    }
    let single = &rows[15];
    assert_eq!((single[0].as_str(), single[3].as_str()), ("cubic_single_path", "subflow1"));

    let again = ok(&braid(&args));
    assert!(again.contains("0 runs simulated now, 10 found done"), "{again}");
    assert!(again.contains("series: 0 run now, 2 found done"), "{again}");
    assert_eq!(fs::read_to_string(out.join("utilisation.csv")).unwrap(), table);

    let other = braid(&["reproduce", "coupled-cubic", "--out", dir, "--seconds", "3"]);
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(!other.status.success() && err.contains("exists with other contents"), "{err}");
    let bad = braid(&["reproduce", "coupled-cubic", "--out", dir, "--seconds", "0"]);
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        !bad.status.success() && err.contains("--seconds") && err.contains("1..=1000"),
        "{err}"
    );
}
