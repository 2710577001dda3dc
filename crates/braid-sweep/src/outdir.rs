//! A sweep folder: `spec.toml` (the spec as given), `spec.hash` (what the folder's runs were
//! made from), `runs.jsonl` (the journal), `runs.parquet` (the table) and `sweep.json` (the
//! last invocation's summary). A folder is tied to one spec: resuming or merging with a spec
//! of another hash is refused.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::journal::JOURNAL_FILE;
use crate::spec::Spec;

pub const SPEC_FILE: &str = "spec.toml";
pub const HASH_FILE: &str = "spec.hash";
pub const TABLE_FILE: &str = "runs.parquet";
pub const SUMMARY_FILE: &str = "sweep.json";

/// Why a sweep folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum OutDirError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
    #[error(
        "{} was made by a different sweep spec (spec hash {found}, this spec's is {expected}); \
         use another --out folder, or the spec in {}",
        dir.display(), dir.join(SPEC_FILE).display()
    )]
    SpecMismatch { dir: PathBuf, found: String, expected: String },
    #[error("{} has a run journal but no {HASH_FILE}; it was not made by braid sweep", dir.display())]
    NotASweep { dir: PathBuf },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OutDirError + '_ {
    move |source| OutDirError::Io { path: path.to_path_buf(), source }
}

/// The spec hash a folder records, if it has one.
pub fn recorded_hash(dir: &Path) -> Result<Option<String>, OutDirError> {
    let path = dir.join(HASH_FILE);
    match fs::read_to_string(&path) {
        Ok(s) => Ok(Some(s.trim().to_string())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(&path)(e)),
    }
}

/// Checks that `dir` holds runs of `spec` (or nothing yet).
pub fn check(dir: &Path, spec: &Spec) -> Result<(), OutDirError> {
    match recorded_hash(dir)? {
        Some(found) if found != spec.hash() => {
            Err(OutDirError::SpecMismatch { dir: dir.to_path_buf(), found, expected: spec.hash() })
        }
        Some(_) => Ok(()),
        None if dir.join(JOURNAL_FILE).exists() => {
            Err(OutDirError::NotASweep { dir: dir.to_path_buf() })
        }
        None => Ok(()),
    }
}

/// Creates `dir` for `spec`, or checks that it already belongs to it.
pub fn prepare(dir: &Path, spec: &Spec) -> Result<(), OutDirError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    check(dir, spec)?;
    if recorded_hash(dir)?.is_none() {
        write_atomic(&dir.join(SPEC_FILE), &spec.text)?;
        write_atomic(&dir.join(HASH_FILE), &format!("{}\n", spec.hash()))?;
    }
    Ok(())
}

/// Writes a file under a temporary name and renames it into place.
pub fn write_atomic(path: &Path, contents: &str) -> Result<(), OutDirError> {
    let tmp = path.with_extension("partial");
    fs::write(&tmp, contents).map_err(io_err(&tmp))?;
    fs::rename(&tmp, path).map_err(io_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(reps: u32) -> Spec {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        let text = format!("base = \"Cargo.toml\"\nreps = {reps}");
        Spec::parse(&text, Path::new("s.toml"), dir).unwrap()
    }

    #[test]
    fn a_folder_belongs_to_one_spec() {
        let dir = std::env::temp_dir().join(format!("braid-sweep-outdir-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        prepare(&dir, &spec(1)).unwrap();
        prepare(&dir, &spec(1)).unwrap();
        assert_eq!(fs::read_to_string(dir.join(SPEC_FILE)).unwrap(), spec(1).text);
        let err = prepare(&dir, &spec(2)).unwrap_err();
        assert!(matches!(err, OutDirError::SpecMismatch { .. }), "{err}");
        assert!(err.to_string().contains("different sweep spec"), "{err}");
        fs::remove_file(dir.join(HASH_FILE)).unwrap();
        fs::write(dir.join(JOURNAL_FILE), "").unwrap();
        assert!(matches!(prepare(&dir, &spec(1)), Err(OutDirError::NotASweep { .. })));
    }
}
