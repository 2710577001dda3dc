//! The run journal, `DIR/runs.jsonl`: one JSON line per finished run, appended and flushed as
//! each run ends, so a sweep killed at any moment has lost at most the runs in progress.
//!
//! Only the last line can be torn (the process died inside its write); opening the journal
//! cuts such a tail off before anything is appended, and every complete line is a finished
//! run. Lines are in finishing order; the table sorts them by run id.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The journal's file name inside a sweep folder.
pub const JOURNAL_FILE: &str = "runs.jsonl";

/// Why the journal could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error("{} line {line}: not a run record ({message}); the journal is damaged", path.display())]
    Corrupt { path: PathBuf, line: usize, message: String },
    #[error("{} line {line}: run id {id} is outside this sweep's runs 0..{runs}", path.display())]
    UnknownRun { path: PathBuf, line: usize, id: u64, runs: u64 },
}

/// One finished run as the journal stores it.
#[derive(Debug, Serialize)]
pub struct Record<'a> {
    pub run: u64,
    pub rep: u32,
    pub seed: Option<u64>,
    pub status: &'a str,
    pub error: Option<&'a str>,
    pub braid_version: &'a str,
    pub git_commit: &'a str,
    pub scenario_hash: Option<&'a str>,
    /// The run's report, as `braid sim --json` prints it (or a measuring backend in that
    /// schema, [`crate::Measure`]); null when it failed.
    pub report: Option<&'a serde_json::value::RawValue>,
}

/// The finished runs of a journal: each run id's line, as written.
pub type Finished = BTreeMap<u64, String>;

#[derive(Deserialize)]
struct RunId {
    run: u64,
}

/// Reads a journal's complete lines (a missing file has none) and cuts a torn last line off
/// the file. A run id seen twice keeps its first line. `runs` bounds the valid ids.
pub fn read(path: &Path, runs: u64) -> Result<Finished, JournalError> {
    let io_err = |source| JournalError::Io { path: path.to_path_buf(), source };
    let mut text = Vec::new();
    match File::open(path) {
        Ok(mut f) => f.read_to_end(&mut text).map(|_| ()).map_err(io_err)?,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Finished::new()),
        Err(e) => return Err(io_err(e)),
    }
    let complete = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if complete < text.len() {
        let f = OpenOptions::new().write(true).open(path).map_err(io_err)?;
        f.set_len(complete as u64).map_err(io_err)?;
        f.sync_all().map_err(io_err)?;
    }
    let mut finished = Finished::new();
    for (i, line) in text[..complete].split(|&b| b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let corrupt = |message: String| JournalError::Corrupt {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        let line = std::str::from_utf8(line).map_err(|e| corrupt(e.to_string()))?;
        let id = serde_json::from_str::<RunId>(line).map_err(|e| corrupt(e.to_string()))?.run;
        if id >= runs {
            return Err(JournalError::UnknownRun {
                path: path.to_path_buf(),
                line: i + 1,
                id,
                runs,
            });
        }
        finished.entry(id).or_insert_with(|| line.to_string());
    }
    Ok(finished)
}

/// An open journal, appending.
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    file: File,
}

impl Writer {
    /// Opens (or creates) the journal for appending. Call [`read`] first: it cuts off a torn
    /// tail that an append would otherwise glue a new line to.
    pub fn open(path: &Path) -> Result<Writer, JournalError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| JournalError::Io { path: path.to_path_buf(), source })?;
        Ok(Writer { path: path.to_path_buf(), file })
    }

    /// Appends one line (a newline is added) in a single write.
    pub fn append(&mut self, line: &str) -> Result<(), JournalError> {
        let mut buf = Vec::with_capacity(line.len() + 1);
        buf.extend_from_slice(line.as_bytes());
        buf.push(b'\n');
        self.file
            .write_all(&buf)
            .and_then(|()| self.file.flush())
            .map_err(|source| JournalError::Io { path: self.path.clone(), source })
    }

    /// Flushes the journal to disk.
    pub fn sync(&self) -> Result<(), JournalError> {
        self.file.sync_all().map_err(|source| JournalError::Io { path: self.path.clone(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("braid-sweep-journal-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(JOURNAL_FILE)
    }

    #[test]
    fn missing_journal_is_empty() {
        let p = temp("missing");
        let _ = std::fs::remove_file(&p);
        assert!(read(&p, 10).unwrap().is_empty());
    }

    #[test]
    fn torn_tail_is_cut_and_appends_continue_cleanly() {
        let p = temp("torn");
        std::fs::write(&p, "{\"run\":3,\"x\":1}\n{\"run\":1}\n{\"run\":2,\"x\"").unwrap();
        let f = read(&p, 10).unwrap();
        assert_eq!(f.keys().copied().collect::<Vec<_>>(), [1, 3]);
        let mut w = Writer::open(&p).unwrap();
        w.append("{\"run\":2}").unwrap();
        assert_eq!(read(&p, 10).unwrap().keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
        assert!(std::fs::read_to_string(&p).unwrap().ends_with("{\"run\":1}\n{\"run\":2}\n"));
    }

    #[test]
    fn duplicates_keep_the_first_line() {
        let p = temp("dup");
        std::fs::write(&p, "{\"run\":0,\"a\":1}\n{\"run\":0,\"a\":2}\n").unwrap();
        assert_eq!(read(&p, 1).unwrap()[&0], "{\"run\":0,\"a\":1}");
    }

    #[test]
    fn damaged_lines_and_foreign_ids_are_errors() {
        let p = temp("bad");
        std::fs::write(&p, "{\"run\":0}\nnot json\n{\"run\":1}\n").unwrap();
        let err = read(&p, 5).unwrap_err();
        assert!(err.to_string().contains("line 2"), "{err}");
        std::fs::write(&p, "{\"run\":7}\n").unwrap();
        let err = read(&p, 5).unwrap_err();
        assert!(matches!(err, JournalError::UnknownRun { id: 7, runs: 5, .. }), "{err}");
    }
}
