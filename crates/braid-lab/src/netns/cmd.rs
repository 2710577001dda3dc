//! Running one iproute2 command (`ip`, `tc`) with a time limit, its failure as a typed error
//! quoting the command line and its stderr.

use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use super::NetError;

/// Longest an `ip` or `tc` command may take. They finish in milliseconds; a hang (a stuck
/// netlink socket, a namespace being torn down) must not hang the test bed.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `program args...`, waits at most [`COMMAND_TIMEOUT`], and returns its stdout. A non-zero
/// exit is [`NetError::Command`] with the command line and stderr; a command that does not exist
/// is [`NetError::Spawn`].
pub fn run(program: &str, args: &[&str]) -> Result<String, NetError> {
    run_with_timeout(program, args, COMMAND_TIMEOUT)
}

/// [`run`] with an explicit time limit; on expiry the command is killed.
pub fn run_with_timeout(
    program: &str,
    args: &[&str],
    timeout: Duration,
) -> Result<String, NetError> {
    let line = command_line(program, args);
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| NetError::Spawn { cmd: line.clone(), message: e.to_string() })?;
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    // `wait_with_output` drains both pipes while it waits, so a chatty command cannot block on a
    // full pipe; the thread lets us bound the wait.
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = match rx.recv_timeout(timeout) {
        Ok(result) => {
            result.map_err(|e| NetError::Spawn { cmd: line.clone(), message: e.to_string() })?
        }
        Err(_) => {
            // The child is ours and not yet reaped (the waiting thread still holds it), so its
            // PID cannot have been reused.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
            return Err(NetError::Timeout { cmd: line, timeout_ms: timeout.as_millis() as u64 });
        }
    };
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(NetError::Command {
            cmd: line,
            status: output.status.to_string(),
            stderr: String::from_utf8_lossy(&output.stderr).trim().to_string(),
        })
    }
}

/// The command as a shell would show it, for error messages.
pub fn command_line(program: &str, args: &[&str]) -> String {
    let mut line = program.to_string();
    for a in args {
        line.push(' ');
        line.push_str(a);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_command_is_a_typed_error_quoting_command_and_stderr() {
        let err = run("sh", &["-c", "echo boom >&2; exit 3"]).unwrap_err();
        match err {
            NetError::Command { cmd, status, stderr } => {
                assert_eq!(cmd, "sh -c echo boom >&2; exit 3");
                assert!(status.contains('3'), "{status}");
                assert_eq!(stderr, "boom");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = run("/nonexistent/braid-no-such-tool", &[]).unwrap_err();
        assert!(matches!(err, NetError::Spawn { .. }), "{err:?}");
    }

    #[test]
    fn hanging_command_times_out() {
        let err = run_with_timeout("sleep", &["5"], Duration::from_millis(100)).unwrap_err();
        assert!(matches!(err, NetError::Timeout { timeout_ms: 100, .. }), "{err:?}");
    }

    #[test]
    fn stdout_is_returned() {
        assert_eq!(run("sh", &["-c", "printf 'a b'"]).unwrap(), "a b");
    }
}
