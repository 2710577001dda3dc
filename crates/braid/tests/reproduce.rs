//! `braid reproduce nested-cc` end to end, with the real binary and tiny downloads: the folder
//! has the specs, both sweeps, the examples and the tables; Table 3 has its 22 rows with
//! finite statistics; a second invocation simulates nothing and writes the same tables; other
//! options into the same folder are refused; the written spec reruns with plain `braid sweep`.

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
