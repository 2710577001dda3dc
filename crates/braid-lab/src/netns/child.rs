//! A process started inside a network namespace, killed by PID when its guard drops.
//!
//! How it enters the namespace: the parent opens `/run/netns/NAME` and the child calls
//! `setns(fd, CLONE_NEWNET)` between `fork` and `exec` (`pre_exec`). We prefer this to
//! `ip netns exec NAME prog`, which does the same `setns` but also unshares a mount namespace
//! and remounts `/sys` for every child: here the PID we hold is the program itself from its
//! first instruction, nothing but the network namespace changes, and spawning needs no `ip`.
//! The child also asks for `SIGKILL` when its parent dies (`PR_SET_PDEATHSIG`), so a test bed
//! killed with `SIGKILL` leaves no emulators or tunnels running (its namespaces remain, for
//! [`super::cleanup_stale`]). Linux sends that signal when the *thread* that forked exits, so
//! spawn from a thread that outlives the child (the main thread, a test's thread).

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::{cmd::command_line, netns_path, NetError};

/// How long a child gets between SIGTERM and SIGKILL.
pub const TERM_GRACE: Duration = Duration::from_secs(2);
/// Lines of a child's output kept for error messages.
const TAIL_LINES: usize = 20;
/// Poll interval while waiting for a child to exit.
const EXIT_POLL: Duration = Duration::from_millis(10);

/// A running process; dropping the guard stops it (SIGTERM, then SIGKILL after
/// [`TERM_GRACE`]) and reaps it.
pub struct Child {
    name: String,
    child: std::process::Child,
    stdout_lines: Receiver<String>,
    tail: Arc<Mutex<VecDeque<String>>>,
    /// The threads copying stdout and stderr into `tail`; they end at the pipes' EOF.
    readers: Vec<thread::JoinHandle<()>>,
}

impl Child {
    /// Starts `program args...` in namespace `netns` (or in the caller's namespace when `None`),
    /// stdin closed, stdout and stderr captured: stdout lines can be awaited with
    /// [`Child::wait_for_line`], and the last lines of both appear in error messages.
    pub fn spawn(netns: Option<&str>, program: &str, args: &[&str]) -> Result<Child, NetError> {
        let line = command_line(program, args);
        let ns_file = match netns {
            Some(ns) => Some(File::open(netns_path(ns)).map_err(|e| NetError::Sys {
                netns: ns.to_string(),
                what: "open namespace".into(),
                message: e.to_string(),
            })?),
            None => None,
        };
        let ns_fd = ns_file.as_ref().map(|f| f.as_raw_fd());
        let mut command = Command::new(program);
        command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        // SAFETY: only async-signal-safe system calls run between fork and exec; the file
        // descriptor stays open in the parent until `spawn` returns.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if let Some(fd) = ns_fd {
                    if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|e| NetError::Spawn { cmd: line.clone(), message: e.to_string() })?;
        drop(ns_file);
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, stdout_lines) = mpsc::channel();
        let mut readers = Vec::new();
        if let Some(out) = child.stdout.take() {
            let tail = Arc::clone(&tail);
            readers.push(thread::spawn(move || forward_lines(out, "", &tail, Some(tx))));
        }
        if let Some(err) = child.stderr.take() {
            let tail = Arc::clone(&tail);
            readers.push(thread::spawn(move || forward_lines(err, "stderr: ", &tail, None)));
        }
        Ok(Child { name: line, child, stdout_lines, tail, readers })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The command line, for messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Waits until the child prints a stdout line containing `marker` (e.g. `linkem: ready`).
    /// Fails if it exits first or `timeout` passes; the error carries its last output lines.
    pub fn wait_for_line(&mut self, marker: &str, timeout: Duration) -> Result<(), NetError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.stdout_lines.recv_timeout(left) {
                Ok(line) if line.contains(marker) => return Ok(()),
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                    // Disconnected: stdout closed, the child has exited or is exiting.
                    let exited = self.exit_status_within(Duration::from_millis(200));
                    if exited.is_some() {
                        // stdout's EOF can come before the stderr thread has stored the
                        // child's last words; wait for both pipes to drain.
                        self.readers_done_within(Duration::from_millis(500));
                    }
                    return Err(NetError::NotReady {
                        what: self.name.clone(),
                        marker: marker.to_string(),
                        timeout_ms: timeout.as_millis() as u64,
                        status: exited.unwrap_or_else(|| "still running".into()),
                        output: self.output_tail(),
                    });
                }
            }
        }
    }

    /// Whether the child is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The last lines the child printed (stdout and stderr), oldest first.
    pub fn output_tail(&self) -> String {
        let tail = self.tail.lock().unwrap_or_else(|p| p.into_inner());
        tail.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Waits up to `limit` for the output threads to reach EOF (a grandchild holding the
    /// pipes open keeps them running; then the tail is whatever arrived in time).
    fn readers_done_within(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.readers.iter().all(|r| r.is_finished()) && Instant::now() < deadline {
            thread::sleep(EXIT_POLL);
        }
    }

    fn exit_status_within(&mut self, limit: Duration) -> Option<String> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status.to_string()),
                Ok(None) if Instant::now() < deadline => thread::sleep(EXIT_POLL),
                _ => return None,
            }
        }
    }

    /// Stops the child: SIGTERM, SIGKILL after [`TERM_GRACE`], then reaps it. Idempotent.
    pub fn stop(&mut self) {
        if !matches!(self.child.try_wait(), Ok(None)) {
            return;
        }
        // Not yet reaped, so the PID is still this child's.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        if self.exit_status_within(TERM_GRACE).is_none() {
            tracing::warn!(child = %self.name, "did not exit on SIGTERM; sending SIGKILL");
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.stop();
    }
}

fn forward_lines(
    stream: impl Read,
    label: &str,
    tail: &Mutex<VecDeque<String>>,
    tx: Option<mpsc::Sender<String>>,
) {
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        {
            let mut t = tail.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() == TAIL_LINES {
                t.pop_front();
            }
            t.push_back(format!("{label}{line}"));
        }
        if let Some(tx) = &tx {
            let _ = tx.send(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        // A zombie would still answer kill(0); the guard reaps, so a stopped child is gone.
        unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
    }

    #[test]
    fn drop_kills_the_process() {
        let child = Child::spawn(None, "sleep", &["30"]).unwrap();
        let pid = child.pid();
        assert!(alive(pid));
        drop(child);
        assert!(!alive(pid));
    }

    #[test]
    fn a_process_ignoring_sigterm_is_killed_after_the_grace_time() {
        let mut child =
            Child::spawn(None, "sh", &["-c", "trap '' TERM; echo armed; exec sleep 30"]).unwrap();
        child.wait_for_line("armed", Duration::from_secs(5)).unwrap();
        let pid = child.pid();
        let t0 = Instant::now();
        drop(child);
        assert!(!alive(pid));
        assert!(t0.elapsed() >= TERM_GRACE, "{:?}", t0.elapsed());
    }

    #[test]
    fn wait_for_line_sees_the_marker() {
        let mut child =
            Child::spawn(None, "sh", &["-c", "echo hello; echo 'x: ready'; sleep 30"]).unwrap();
        child.wait_for_line("x: ready", Duration::from_secs(5)).unwrap();
        assert!(child.is_running());
    }

    #[test]
    fn early_exit_is_reported_with_its_output() {
        let mut child = Child::spawn(None, "sh", &["-c", "echo bad flag >&2; exit 2"]).unwrap();
        let err = child.wait_for_line("ready", Duration::from_secs(5)).unwrap_err();
        match err {
            NetError::NotReady { status, output, .. } => {
                assert!(status.contains('2'), "{status}");
                assert!(output.contains("stderr: bad flag"), "{output}");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
