//! A sweep folder: `spec.toml` (the spec as given), `spec.hash` (what the folder's runs were
//! made from), `runs.jsonl` (the journal), `runs.parquet` (the table) and `sweep.json` (the
//! last invocation's summary). A folder is tied to one spec: resuming or merging with a spec
//! of another hash is refused. It is tied to one backend too: a measuring backend's name
//! follows the hash in `spec.hash` (`3f2a... lab`), the simulator's adds nothing, so the
//! simulator's folders read as before and a lab sweep never resumes into a simulated one.

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
    #[error(
        "{} holds runs of the {found} backend, not of the {expected}; use another --out folder",
        dir.display()
    )]
    BackendMismatch { dir: PathBuf, found: String, expected: String },
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

/// Checks that `dir` holds simulated runs of `spec` (or nothing yet).
pub fn check(dir: &Path, spec: &Spec) -> Result<(), OutDirError> {
    check_backend(dir, spec, None)
}

/// What `spec.hash` holds for `spec`'s runs by `backend` (`None`: the simulator).
fn identity(spec: &Spec, backend: Option<&str>) -> String {
    match backend {
        None => spec.hash(),
        Some(name) => format!("{} {name}", spec.hash()),
    }
}

/// Checks that `dir` holds runs of `spec` by `backend` (`None`: the simulator), or nothing.
pub fn check_backend(dir: &Path, spec: &Spec, backend: Option<&str>) -> Result<(), OutDirError> {
    match recorded_hash(dir)? {
        Some(found) if found != identity(spec, backend) => {
            let mut words = found.split_whitespace();
            let (hash, found_backend) = (words.next().unwrap_or(""), words.next());
            if hash != spec.hash() {
                return Err(OutDirError::SpecMismatch {
                    dir: dir.to_path_buf(),
                    found: hash.to_string(),
                    expected: spec.hash(),
                });
            }
            let name = |b: Option<&str>| b.unwrap_or("simulator").to_string();
            Err(OutDirError::BackendMismatch {
                dir: dir.to_path_buf(),
                found: name(found_backend),
                expected: name(backend),
            })
        }
        Some(_) => Ok(()),
        None if dir.join(JOURNAL_FILE).exists() => {
            Err(OutDirError::NotASweep { dir: dir.to_path_buf() })
        }
        None => Ok(()),
    }
}

/// Creates `dir` for `spec`'s simulated runs, or checks that it already belongs to them.
pub fn prepare(dir: &Path, spec: &Spec) -> Result<(), OutDirError> {
    prepare_backend(dir, spec, None)
}

/// Creates `dir` for `spec`'s runs by `backend` (`None`: the simulator), or checks that it
/// already belongs to them.
pub fn prepare_backend(dir: &Path, spec: &Spec, backend: Option<&str>) -> Result<(), OutDirError> {
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    check_backend(dir, spec, backend)?;
    if recorded_hash(dir)?.is_none() {
        write_atomic(&dir.join(SPEC_FILE), &spec.text)?;
        write_atomic(&dir.join(HASH_FILE), &format!("{}\n", identity(spec, backend)))?;
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
        // A lab folder of the same spec is neither resumed nor merged as a simulated one.
        let err = prepare_backend(&dir, &spec(1), Some("lab")).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{} holds runs of the simulator backend, not of the lab; use another --out folder",
                dir.display()
            )
        );
        fs::remove_file(dir.join(HASH_FILE)).unwrap();
        fs::write(dir.join(JOURNAL_FILE), "").unwrap();
        assert!(matches!(prepare(&dir, &spec(1)), Err(OutDirError::NotASweep { .. })));
        fs::remove_dir_all(&dir).unwrap();
        prepare_backend(&dir, &spec(1), Some("lab")).unwrap();
        assert!(fs::read_to_string(dir.join(HASH_FILE)).unwrap().ends_with(" lab\n"));
        assert!(matches!(prepare(&dir, &spec(1)), Err(OutDirError::BackendMismatch { .. })));
        let _ = fs::remove_dir_all(&dir);
    }
}
