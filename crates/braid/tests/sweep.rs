//! `braid sweep` end to end, with the real binary: a sweep killed with SIGKILL and run again
//! ends with the same table, byte for byte, as one never interrupted; shards merged equal the
//! whole; a failing cell is a row with status "error"; the table reads back with the
//! parquet crate and its relative DLCT is `braid sim --json --baseline`'s, bit for bit.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

/// 2 axes x 2 values x 2 reps = 8 runs, each with its baseline. 10 MB keeps a debug build's
/// run near 50 ms: long enough to kill the sweep between two runs, short for the suite.
const SPEC: &str = r#"
reps = 2
baseline = true
[set]
"e2e.bytes" = 10000000
[axes]
"e2e.cc" = ["cubic", "bbr"]
"tunnel.scheduler" = ["cpf", "srtt"]
"#;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("braid-sweep-test-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a spec whose base is the repository's default scenario, by absolute path.
fn write_spec(dir: &Path, body: &str) -> PathBuf {
    let base = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/default.toml");
    let path = dir.join("spec.toml");
    fs::write(&path, format!("base = {:?}\n{body}", base.canonicalize().unwrap())).unwrap();
    path
}

fn braid(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_braid"));
    c.args(args).stdin(Stdio::null());
    c
}

fn sweep(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let output = braid(&args).output().unwrap();
    assert!(
        output.status.success(),
        "braid {args:?}: {:?}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The uninterrupted sweep every test compares with, made once.
fn whole() -> &'static (PathBuf, Vec<u8>) {
    static WHOLE: OnceLock<(PathBuf, Vec<u8>)> = OnceLock::new();
    WHOLE.get_or_init(|| {
        let dir = scratch("whole");
        let spec = write_spec(&dir, SPEC);
        let out = dir.join("out");
        sweep(&spec, &out, &["--jobs", "2"]);
        (spec, fs::read(out.join("runs.parquet")).unwrap())
    })
}

fn lines(path: &Path) -> usize {
    fs::read_to_string(path).map_or(0, |s| s.matches('\n').count())
}

#[test]
fn a_killed_sweep_resumes_to_the_same_table() {
    let (spec, want) = whole();
    let out = scratch("killed").join("out");
    let journal = out.join("runs.jsonl");
    let mut child = braid(&["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .args(["--jobs", "1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while lines(&journal) < 1 {
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before it could be killed");
        assert!(Instant::now() < deadline, "no run finished within 60 s");
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let done = lines(&journal);
    assert!(done < 8, "the sweep finished ({done} runs) before it was killed");
    assert!(!out.join("runs.parquet").exists(), "no table before the sweep ends");
    // As if the process had died inside a write: a torn last line.
    let mut text = fs::read_to_string(&journal).unwrap();
    text.push_str("{\"run\":7,\"rep\":1,\"se");
    fs::write(&journal, text).unwrap();

    let again = sweep(spec, &out, &["--jobs", "2"]);
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(stdout.contains(&format!("{} found done", done)), "{stdout}");
    assert_eq!(lines(&journal), 8, "every run once, none twice");
    assert!(fs::read(out.join("runs.parquet")).unwrap() == *want, "resumed table differs");
}

#[test]
fn merged_shards_equal_the_whole() {
    let (spec, want) = whole();
    let dir = scratch("shards");
    let (one, two, merged) = (dir.join("1"), dir.join("2"), dir.join("merged"));
    sweep(spec, &one, &["--shard", "1/2", "--jobs", "1"]);
    sweep(spec, &two, &["--shard", "2/2", "--jobs", "1"]);
    assert_eq!((lines(&one.join("runs.jsonl")), lines(&two.join("runs.jsonl"))), (4, 4));
    let merge = ["--merge", one.to_str().unwrap(), "--merge", two.to_str().unwrap()];
    sweep(spec, &merged, &merge);
    assert!(fs::read(merged.join("runs.parquet")).unwrap() == *want, "merged table differs");

    // One shard alone is not the whole: the merge says what is missing.
    let partial = dir.join("partial");
    let args = ["sweep", spec.to_str().unwrap(), "--out", partial.to_str().unwrap()];
    let out = braid(&args).args(["--merge", one.to_str().unwrap()]).output().unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("lack 4 of 8 runs (run ids 1, 3, 5, 7"), "{stderr}");
}

fn read_table(path: &Path) -> (Vec<String>, Vec<Vec<(String, Field)>>) {
    let reader = SerializedFileReader::new(fs::File::open(path).unwrap()).unwrap();
    let names = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string());
    let names = names.collect();
    let rows = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap().get_column_iter().map(|(n, f)| (n.clone(), f.clone())).collect())
        .collect();
    (names, rows)
}

fn get<'a>(row: &'a [(String, Field)], name: &str) -> &'a Field {
    &row.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no column {name}")).1
}

#[test]
fn the_table_reads_back_and_matches_braid_sim() {
    let (spec, bytes) = whole();
    let dir = scratch("read");
    let path = dir.join("runs.parquet");
    fs::write(&path, bytes).unwrap();
    let (names, rows) = read_table(&path);
    assert_eq!(&names[..5], ["run_id", "e2e.cc", "tunnel.scheduler", "rep", "seed"]);
    for n in ["dlct_s", "relative_dlct", "baseline_dlct_s", "paths.0.share", "result.e2e.cc"] {
        assert!(names.iter().any(|x| x == n), "no column {n} in {names:?}");
    }
    assert!(!names.iter().any(|x| x == "wall_s"));
    assert_eq!(
        &names[names.len() - 5..],
        ["status", "error", "braid_version", "git_commit", "scenario_hash"]
    );
    assert_eq!(rows.len(), 8);

    // Run 7: the last cell (bbr, srtt), rep 1, so seed 1 + 1.
    let row = &rows[7];
    assert_eq!(get(row, "run_id"), &Field::Long(7));
    assert_eq!(get(row, "e2e.cc"), &Field::Str("bbr".into()));
    assert_eq!(get(row, "tunnel.scheduler"), &Field::Str("srtt".into()));
    assert_eq!((get(row, "rep"), get(row, "seed")), (&Field::Long(1), &Field::Long(2)));
    assert_eq!(get(row, "status"), &Field::Str("ok".into()));
    assert_eq!(get(row, "error"), &Field::Null);
    let Field::Double(relative) = get(row, "relative_dlct") else { panic!("relative_dlct") };

    let base = fs::read_to_string(spec).unwrap();
    let base = base.lines().next().unwrap().trim_start_matches("base = ").trim_matches('"');
    // The spec leaves `noise` at its default, on: the sweep set the noise model's fields.
    let mut sets = braid_sim::scenario::NoiseConfig::host().overrides();
    sets.extend(["e2e.bytes=10000000", "e2e.cc=bbr", "tunnel.scheduler=srtt"].map(String::from));
    let mut args = vec!["sim", base, "--json", "--baseline", "--seed", "2"];
    for s in &sets {
        args.extend(["--set", s]);
    }
    let out = braid(&args).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let want = json["relative_dlct"].as_f64().unwrap();
    assert_eq!(relative.to_bits(), want.to_bits(), "sweep {relative} vs braid sim {want}");
}

#[test]
fn a_failing_cell_is_an_error_row_and_the_sweep_goes_on() {
    let dir = scratch("failing");
    let body = "baseline = true\n[set]\n\"e2e.bytes\" = 2000000\n[axes]\n\"sim.max_time_s\" = [3600.0, 0.01]\n";
    let spec = write_spec(&dir, body);
    let out = dir.join("out");
    let o = sweep(&spec, &out, &[]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("2 rows (1 failed)"));
    let (_, rows) = read_table(&out.join("runs.parquet"));
    assert_eq!(get(&rows[0], "status"), &Field::Str("ok".into()));
    assert_eq!(get(&rows[1], "status"), &Field::Str("error".into()));
    let Field::Str(error) = get(&rows[1], "error") else { panic!("error column") };
    assert!(error.contains("did not complete within sim.max_time_s = 0.01"), "{error}");
    assert_eq!(get(&rows[1], "dlct_s"), &Field::Null);
    assert_eq!(get(&rows[1], "sim.max_time_s"), &Field::Double(0.01));
    assert!(matches!(get(&rows[0], "dlct_s"), Field::Double(_)));
}

#[test]
fn bad_specs_and_folders_are_refused_with_the_key_named() {
    let dir = scratch("bad");
    let check = |body: &str, want: &str| {
        let spec = write_spec(&dir, body);
        let out = dir.join("out-bad");
        let args = ["sweep", spec.to_str().unwrap(), "--out", out.to_str().unwrap()];
        let o = braid(&args).output().unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && stderr.contains(want), "{body:?}: {stderr}");
        assert!(!out.join("runs.jsonl").exists(), "{body:?}: a run started");
    };
    check("[set]\n\"e2e.bytez\" = 1", "e2e.bytez");
    check("[axes]\n\"tunnel.scheduler\" = [\"cpf\", \"nope\"]", "nope");
    check("reps = 0", "reps = 0 is out of range");
    check("colour = 1", "unknown key \"colour\"");

    let spec = write_spec(&dir, "[set]\n\"e2e.bytes\" = 2000000");
    let out = dir.join("out");
    sweep(&spec, &out, &[]);
    let other = write_spec(&dir, "[set]\n\"e2e.bytes\" = 3000000");
    let args = ["sweep", other.to_str().unwrap(), "--out", out.to_str().unwrap()];
    let o = braid(&args).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("made by a different sweep spec"));
    let o = braid(&["sweep", other.to_str().unwrap(), "--out", "x", "--shard", "3/2"]).output();
    assert!(String::from_utf8_lossy(&o.unwrap().stderr).contains("I must be in 1..=N"));
}
