//! `braid sweep --backend lab`: a spec's runs measured in the namespace lab (kernel TCP end to
//! end, two `braid tunnel` daemons, htb links) land in the journal and table as simulated ones
//! do, each repetition with its own measured baseline; the folder is the lab's, so a simulated
//! sweep does not resume into it. Needs root.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("braid-lab-sweep-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn braid(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_braid")).args(args).stdin(Stdio::null()).output().unwrap()
}

#[test]
fn a_lab_sweep_measures_every_repetition_with_its_baseline_into_the_same_table() {
    let dir = scratch("reps");
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/single-path.toml");
    let spec = dir.join("spec.toml");
    // One path, a 4 MB download over kernel TCP paths and over UDP paths, twice each.
    let text = format!(
        "base = {:?}\nreps = 2\nbaseline = true\n[set]\n\"e2e.bytes\" = 4000000\n\
         \"tunnel.reliability\" = \"reliable\"\n[axes]\n\"tunnel.transport\" = [\"udp\", \"tcp\"]\n",
        base.canonicalize().unwrap()
    );
    fs::write(&spec, text).unwrap();
    let out = dir.join("out");
    let (spec_s, out_s) = (spec.to_str().unwrap(), out.to_str().unwrap());
    let o = braid(&["sweep", spec_s, "--out", out_s, "--backend", "lab", "--emulator", "htb"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("4 rows (0 failed); 4 runs measured in the lab now"), "{stdout}");

    let journal = fs::read_to_string(out.join("runs.jsonl")).unwrap();
    let mut rows: Vec<serde_json::Value> =
        journal.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    rows.sort_by_key(|r| r["run"].as_u64());
    assert_eq!(rows.len(), 4);
    let mut baselines = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["status"], "ok", "{r}");
        let report = &r["report"];
        assert_eq!(report["lab"]["mode"], "tunnel", "{report}");
        assert_eq!(report["e2e"]["bytes_delivered"], 4_000_000, "{report}");
        let (dlct, base) =
            (report["dlct_s"].as_f64().unwrap(), report["baseline_dlct_s"].as_f64().unwrap());
        let relative = report["relative_dlct"].as_f64().unwrap();
        assert!((relative - dlct / base).abs() < 1e-9, "{report}");
        baselines.push(base);
        // Runs 0-1 are UDP paths, 2-3 kernel TCP paths; a repetition's seed counts up.
        assert_eq!(r["seed"], 1 + (i as u64 % 2), "{r}");
    }
    // Each repetition measured its own baseline: real ones differ, if only by microseconds.
    assert!(baselines.windows(2).all(|w| w[0] != w[1]), "{baselines:?}");
    assert!(out.join("runs.parquet").exists());
    assert!(fs::read_to_string(out.join("spec.hash")).unwrap().trim_end().ends_with(" lab"));

    // A simulated sweep of the same spec refuses the lab's folder.
    let o = braid(&["sweep", spec_s, "--out", out_s]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("runs of the lab backend"), "{err}");
    let _ = fs::remove_dir_all(&dir);
    let left = braid_lab::netns::list_netns_with_prefix(braid_lab::topology::TAG).unwrap();
    assert!(left.is_empty(), "{left:?}");
}
