//! Everything the `braid` command prints on stdout goes through [`outln!`] and [`out!`], so a
//! reader that goes away early (`braid sim ... | head -1`) ends every command the same way.
//!
//! Rust starts programs with SIGPIPE ignored, so a write to a pipe without a reader fails with
//! EPIPE, and `println!` panics on that error. Here the failure becomes [`StdoutClosed`], which
//! the caller returns with `?` and `main` turns into a quiet exit with status 0: the reader
//! chose to stop reading, which is not the command's failure. ripgrep does the same ("a broken
//! pipe means graceful termination", `crates/core/main.rs`).
//!
//! Why not restore SIGPIPE's default action and die by the signal, as C tools do: the action is
//! process-wide, and `braid tunnel`, `braid lab` and `braid linkem` write to sockets and to
//! pipes of child processes, where a vanished peer is an error to handle (a TCP path is
//! replaced, a child's death is reported), never a reason to kill the daemon. Only stdout's
//! EPIPE means "stop quietly", so only the writes to stdout are mapped.
//!
//! Files that `--out` asks for are written before anything is printed, each through a
//! temporary name and a rename ([`write_atomic`]), so a closed stdout leaves them complete.

use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// Stdout's reader has gone (EPIPE). `main` ends quietly with status 0 on it.
#[derive(Debug, thiserror::Error)]
#[error("stdout was closed by its reader")]
pub struct StdoutClosed;

/// Writes `args` to stdout and flushes them, so an error belongs to this write; a closed
/// stdout is [`StdoutClosed`], any other error says it was stdout's.
pub fn write_stdout(args: fmt::Arguments<'_>) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(anyhow::Error::new(e).context("writing to stdout")),
    }
}

/// `print!` that returns `Result` instead of panicking; see the module documentation.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*))
    };
}

/// `println!` that returns `Result` instead of panicking; see the module documentation.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};

/// Writes a file through a temporary name and a rename, so a run that fails or is cut short
/// leaves no half-written file behind.
pub fn write_atomic(path: &Path, contents: &str) -> Result<()> {
    let tmp = path.with_extension("partial");
    fs::write(&tmp, contents).with_context(|| format!("writing {}", tmp.display()))?;
    fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}
