//! A reader that closes stdout early (`braid sim ... | head -1`) ends the command quietly with
//! status 0: no panic message, and the files `--out` asked for complete.
//!
//! Each child gets a pipe whose read end is closed before it starts, so its first write to
//! stdout meets EPIPE whatever the scheduling: no race between the child's writes and the
//! test's close.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// A small transfer, so a debug build simulates it in well under a second.
const SMALL: &str = "e2e.bytes=2000000";

fn default_scenario() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/default.toml")
}

/// Runs `braid args` with a stdout nobody reads.
fn run_with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_braid"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn assert_quiet_success(args: &[&str]) {
    let out = run_with_closed_stdout(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "braid {args:?} panicked:\n{stderr}");
    assert!(stderr.is_empty(), "braid {args:?} wrote to stderr:\n{stderr}");
    assert_eq!(out.status.code(), Some(0), "braid {args:?}: {:?}\n{stderr}", out.status);
}

#[test]
fn sim_table_into_a_closed_pipe_ends_quietly() {
    let scenario = default_scenario();
    assert_quiet_success(&["sim", scenario.to_str().unwrap(), "--set", SMALL]);
}

#[test]
fn sim_json_into_a_closed_pipe_ends_quietly() {
    let scenario = default_scenario();
    assert_quiet_success(&["sim", scenario.to_str().unwrap(), "--set", SMALL, "--json"]);
}

#[test]
fn genkey_into_a_closed_pipe_ends_quietly() {
    assert_quiet_success(&["genkey"]);
}

/// The files are written before anything is printed, each through a temporary name: all four
/// are there and none is left half-written under its temporary name.
#[test]
fn out_files_are_complete_when_stdout_is_closed() {
    let dir = std::env::temp_dir().join(format!("braid-closed-stdout-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    let scenario = default_scenario();
    assert_quiet_success(&[
        "sim",
        scenario.to_str().unwrap(),
        "--set",
        SMALL,
        "--out",
        dir.to_str().unwrap(),
    ]);
    let mut names: Vec<String> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["scenario.toml", "summary.json", "throughput.csv", "trace.csv"]);
    let summary = fs::read_to_string(dir.join("summary.json")).unwrap();
    let report: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert!(report["dlct_s"].as_f64().unwrap() > 0.0, "{summary}");
    fs::remove_dir_all(&dir).unwrap();
}
