//! The output folder of a reproduction: files written once and checked when it is resumed
//! (the base scenario, the specs: what the runs are), and files rewritten on every
//! invocation (tables, `reproduce.json`), each written atomically.

use std::fs;
use std::path::Path;

use braid_sweep::outdir::{write_atomic, OutDirError};

use crate::error::ReproduceError;

/// The base scenario file's name, beside the specs.
pub const BASE_FILE: &str = "base.toml";

/// Creates the folder (and its parents) if it is missing.
pub fn create(dir: &Path) -> Result<(), ReproduceError> {
    fs::create_dir_all(dir).map_err(|source| ReproduceError::Io { path: dir.to_path_buf(), source })
}

/// Writes `contents` to `path` unless the file is there already; one that is there must
/// have the same contents (else [`ReproduceError::Changed`]: the folder was made with other
/// options, and mixing runs of two set-ups in one folder would be wrong).
pub fn write_once(path: &Path, contents: &str) -> Result<(), ReproduceError> {
    match fs::read_to_string(path) {
        Ok(existing) if existing == contents => Ok(()),
        Ok(_) => Err(ReproduceError::Changed { path: path.to_path_buf() }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => write(path, contents),
        Err(source) => Err(ReproduceError::Io { path: path.to_path_buf(), source }),
    }
}

/// Writes `contents` to `path`, replacing what is there.
pub fn write(path: &Path, contents: &str) -> Result<(), ReproduceError> {
    write_atomic(path, contents)
        .map_err(|e| ReproduceError::Io { path: path.to_path_buf(), source: io_of(e) })
}

fn io_of(e: OutDirError) -> std::io::Error {
    match e {
        OutDirError::Io { source, .. } => source,
        other => std::io::Error::other(other.to_string()),
    }
}

/// The default scenario as TOML: the base every reproduction's specs start from, written
/// beside them so the folder needs nothing from the repository.
pub fn default_scenario() -> Result<String, ReproduceError> {
    braid_sim::Scenario::default().to_toml_string().map_err(|e| ReproduceError::Base(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_once_then_only_checked() {
        let dir =
            std::env::temp_dir().join(format!("braid-reproduce-folder-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        create(&dir).unwrap();
        let file = dir.join("spec.toml");
        write_once(&file, "a").unwrap();
        write_once(&file, "a").unwrap();
        let err = write_once(&file, "b").unwrap_err();
        assert!(matches!(err, ReproduceError::Changed { .. }), "{err}");
        write(&file, "b").unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "b");
        let _ = fs::remove_dir_all(&dir);
    }
}
