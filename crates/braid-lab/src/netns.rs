//! Network namespaces, veth pairs, sysctls, offloads and processes for the test bed, as RAII
//! guards over iproute2 (`ip`, `tc`) and a few system calls.
//!
//! - [`Netns`] deletes its namespace on drop (which deletes the veths inside it) after killing
//!   any process still running in it.
//! - [`Child`] is a process started inside a namespace; its guard stops it by PID.
//! - Every `ip`/`tc` failure is a [`NetError::Command`] quoting the command line and stderr.
//! - Names are unique per run ([`unique_prefix`]: tag, PID, per-process counter), so parallel
//!   runs and parallel tests never collide, and [`cleanup_stale`] can tell a dead run's leftovers
//!   (their PID no longer exists) from a live run's.
//!
//! Settings that iproute2 does not cover are made from a thread that has entered the namespace
//! (`setns(CLONE_NEWNET)` affects only the calling thread): sysctls through `/proc/sys/net`,
//! which shows the namespace of the thread that opens it, and offloads through `SIOCETHTOOL`
//! ([`crate::offload`]).

mod child;
mod cmd;

use std::fs::{self, File};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;

use crate::offload;

pub use child::{Child, TERM_GRACE};
pub use cmd::{run, run_with_timeout, COMMAND_TIMEOUT};

/// Where iproute2 keeps its named namespaces (bind mounts of `/proc/PID/ns/net`).
const NETNS_DIR: &str = "/run/netns";
/// Longest namespace name we create (the name is a file in [`NETNS_DIR`]).
const MAX_NAME_LEN: usize = 64;
/// `CAP_NET_ADMIN` (include/uapi/linux/capability.h): links, addresses, routes, qdiscs.
const CAP_NET_ADMIN: u32 = 12;
/// `CAP_SYS_ADMIN`: `ip netns add` mounts, and `setns`.
const CAP_SYS_ADMIN: u32 = 21;

/// An error from building or tearing down the test bed.
#[derive(Debug, thiserror::Error)]
pub enum NetError {
    /// The process lacks the capabilities the test bed needs.
    #[error("needs CAP_NET_ADMIN: run as root ({detail})")]
    NotPrivileged { detail: String },

    /// A command exited with a failure status.
    #[error("`{cmd}` failed ({status}): {stderr}")]
    Command { cmd: String, status: String, stderr: String },

    /// A command did not finish in time and was killed.
    #[error("`{cmd}` did not finish within {timeout_ms} ms")]
    Timeout { cmd: String, timeout_ms: u64 },

    /// A program could not be started.
    #[error("cannot start `{cmd}`: {message}")]
    Spawn { cmd: String, message: String },

    /// A system call or /proc write inside a namespace failed.
    #[error("{what} in namespace {netns}: {message}")]
    Sys { netns: String, what: String, message: String },

    /// A namespace or interface name we were asked to create is not acceptable.
    #[error("invalid {what} name {name:?}: {allowed}")]
    BadName { what: &'static str, name: String, allowed: String },

    /// A child did not print its readiness line in time, or exited first.
    #[error("`{what}` did not print {marker:?} within {timeout_ms} ms ({status}); its output:\n{output}")]
    NotReady { what: String, marker: String, timeout_ms: u64, status: String, output: String },

    /// Output of a command could not be understood.
    #[error("cannot parse the output of `{cmd}`: {message}")]
    Parse { cmd: String, message: String },

    /// A file of the test bed (an emulator's counters) could not be written or read.
    #[error("{what} {path}: {message}")]
    File { what: &'static str, path: String, message: String },
}

/// Checks that the calling thread may create namespaces and configure links: effective
/// capabilities `CAP_NET_ADMIN` and `CAP_SYS_ADMIN` (root has both). Capabilities belong to
/// threads, so this reads `/proc/thread-self/status`.
pub fn require_net_admin() -> Result<(), NetError> {
    const STATUS: &str = "/proc/thread-self/status";
    let status = fs::read_to_string(STATUS)
        .map_err(|e| NetError::NotPrivileged { detail: format!("cannot read {STATUS}: {e}") })?;
    let cap_eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .ok_or_else(|| NetError::NotPrivileged { detail: format!("no CapEff line in {STATUS}") })?;
    for (bit, name) in [(CAP_NET_ADMIN, "CAP_NET_ADMIN"), (CAP_SYS_ADMIN, "CAP_SYS_ADMIN")] {
        if cap_eff & (1 << bit) == 0 {
            return Err(NetError::NotPrivileged {
                detail: format!("{name} is not in the effective set"),
            });
        }
    }
    Ok(())
}

/// The bind-mount file of a named namespace.
pub fn netns_path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

/// A name prefix unique to this process and call: `{tag}-{pid}-{n}`. Namespaces named
/// `{prefix}-{role}` never collide with another run's, and [`cleanup_stale`] recognises them by
/// the PID.
pub fn unique_prefix(tag: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{tag}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn check_name(what: &'static str, name: &str, max_len: usize) -> Result<(), NetError> {
    let ok_chars = name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if name.is_empty() || name.len() > max_len || !ok_chars || name.starts_with('-') {
        return Err(NetError::BadName {
            what,
            name: name.to_string(),
            allowed: format!("1 to {max_len} characters of [A-Za-z0-9_-], not starting with '-'"),
        });
    }
    Ok(())
}

/// Checks an interface name: at most 15 bytes (`IFNAMSIZ` - 1).
pub fn check_ifname(name: &str) -> Result<(), NetError> {
    check_name("interface", name, 15)
}

/// Moves the calling thread into namespace `name`. Only this thread changes namespace; sockets
/// it creates afterwards belong to `name` for their whole life, whichever thread uses them.
pub fn enter(name: &str) -> Result<(), NetError> {
    let sys = |what: &str, e: &dyn std::fmt::Display| NetError::Sys {
        netns: name.to_string(),
        what: what.to_string(),
        message: e.to_string(),
    };
    let file = File::open(netns_path(name)).map_err(|e| sys("open namespace", &e))?;
    nix::sched::setns(&file, nix::sched::CloneFlags::CLONE_NEWNET).map_err(|e| sys("setns", &e))
}

/// Runs `f` on a fresh thread inside namespace `name` and returns its result.
pub fn run_in<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> Result<T, NetError> {
    thread::scope(|s| {
        let worker = s.spawn(|| {
            enter(name)?;
            Ok(f())
        });
        match worker.join() {
            Ok(result) => result,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// A network namespace we created; dropping the guard kills whatever still runs in it and
/// deletes it (its veths go with it).
#[derive(Debug)]
pub struct Netns {
    name: String,
    deleted: bool,
}

impl Netns {
    /// `ip netns add NAME` and brings its loopback up.
    pub fn create(name: &str) -> Result<Netns, NetError> {
        check_name("namespace", name, MAX_NAME_LEN)?;
        run("ip", &["netns", "add", name])?;
        let ns = Netns { name: name.to_string(), deleted: false };
        ns.ip(&["link", "set", "dev", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ip -n NAME args...`.
    pub fn ip(&self, args: &[&str]) -> Result<String, NetError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        run("ip", &all)
    }

    /// `tc -n NAME args...`.
    pub fn tc(&self, args: &[&str]) -> Result<String, NetError> {
        let mut all = vec!["-n", self.name.as_str()];
        all.extend_from_slice(args);
        run("tc", &all)
    }

    /// Runs `f` on a thread inside this namespace ([`run_in`]).
    pub fn run_in<T: Send>(&self, f: impl FnOnce() -> T + Send) -> Result<T, NetError> {
        run_in(&self.name, f)
    }

    /// Sets a sysctl of this namespace: `key` as `sysctl` spells it (`net.ipv4.ip_forward`).
    pub fn sysctl(&self, key: &str, value: &str) -> Result<(), NetError> {
        let path = PathBuf::from("/proc/sys").join(key.replace('.', "/"));
        self.run_in(|| fs::write(&path, value))?.map_err(|e| NetError::Sys {
            netns: self.name.clone(),
            what: format!("sysctl {key}={value}"),
            message: e.to_string(),
        })
    }

    /// Reads a sysctl of this namespace.
    pub fn read_sysctl(&self, key: &str) -> Result<String, NetError> {
        let path = PathBuf::from("/proc/sys").join(key.replace('.', "/"));
        self.run_in(|| fs::read_to_string(&path))?.map(|v| v.trim().to_string()).map_err(|e| {
            NetError::Sys {
                netns: self.name.clone(),
                what: format!("read sysctl {key}"),
                message: e.to_string(),
            }
        })
    }

    /// Turns segmentation and receive-coalescing offloads off on `ifname` in this namespace
    /// ([`offload::disable_offloads`]).
    pub fn disable_offloads(&self, ifname: &str) -> Result<(), NetError> {
        self.run_in(|| offload::disable_offloads(ifname))?.map_err(|e| NetError::Sys {
            netns: self.name.clone(),
            what: format!("turn offloads off on {ifname}"),
            message: e.to_string(),
        })
    }

    /// Starts `program args...` inside this namespace.
    pub fn spawn(&self, program: &str, args: &[&str]) -> Result<Child, NetError> {
        Child::spawn(Some(&self.name), program, args)
    }

    /// PIDs of the processes whose network namespace is this one (`ip netns pids`).
    pub fn pids(&self) -> Result<Vec<u32>, NetError> {
        pids_in(&self.name)
    }

    /// Deletes the namespace now, reporting failure (drop deletes silently).
    pub fn delete(mut self) -> Result<(), NetError> {
        self.deleted = true;
        remove(&self.name)
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if !self.deleted {
            if let Err(e) = remove(&self.name) {
                tracing::warn!(netns = %self.name, error = %e, "cannot delete namespace");
            }
        }
    }
}

fn pids_in(name: &str) -> Result<Vec<u32>, NetError> {
    let out = run("ip", &["netns", "pids", name])?;
    Ok(out.split_whitespace().filter_map(|p| p.parse().ok()).collect())
}

/// Kills what still runs in namespace `name` and deletes it.
fn remove(name: &str) -> Result<(), NetError> {
    let me = std::process::id();
    for pid in pids_in(name).unwrap_or_default() {
        if pid != me {
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    }
    run("ip", &["netns", "del", name]).map(drop)
}

/// Creates a veth pair with end `a_if` in namespace `a` and end `b_if` in namespace `b`. The
/// ends are created directly inside their namespaces, so the names only need to be unique
/// there. Both ends stay down.
pub fn veth_pair(a: &Netns, a_if: &str, b: &Netns, b_if: &str) -> Result<(), NetError> {
    check_ifname(a_if)?;
    check_ifname(b_if)?;
    a.ip(&["link", "add", "name", a_if, "type", "veth", "peer", "name", b_if, "netns", b.name()])
        .map(drop)
}

/// Names of all named namespaces (`ip netns list`).
pub fn list_netns() -> Result<Vec<String>, NetError> {
    let out = run("ip", &["netns", "list"])?;
    Ok(out.lines().filter_map(|l| l.split_whitespace().next()).map(str::to_string).collect())
}

/// Names of the namespaces of `prefix` still present: those called `{prefix}-...`, as the test
/// bed names everything it makes under a [`unique_prefix`]. A test's clean-up check.
pub fn list_netns_with_prefix(prefix: &str) -> Result<Vec<String>, NetError> {
    Ok(with_prefix(list_netns()?, prefix))
}

/// The names of `names` that are `{prefix}-...`: `bl-7-1` owns `bl-7-1-ue`, not `bl-7-10-ue`.
fn with_prefix(names: Vec<String>, prefix: &str) -> Vec<String> {
    let mine = format!("{prefix}-");
    names.into_iter().filter(|n| n.starts_with(&mine)).collect()
}

fn pid_alive(pid: u32) -> bool {
    let rc = unsafe { libc::kill(pid as libc::pid_t, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The PID embedded in a name `{tag}-{pid}-...` made by [`unique_prefix`] with this `tag`.
fn owner_pid(name: &str, tag: &str) -> Option<u32> {
    let rest = name.strip_prefix(tag)?.strip_prefix('-')?;
    rest.split('-').next()?.parse().ok()
}

/// Deletes the namespaces named `{tag}-{pid}-...` whose PID is no longer running: leftovers of
/// runs that were killed before their guards could clean up. Processes still inside them are
/// killed first. Returns the names deleted; namespaces of live runs are left alone.
pub fn cleanup_stale(tag: &str) -> Result<Vec<String>, NetError> {
    let mut removed = Vec::new();
    for name in list_netns()? {
        if let Some(pid) = owner_pid(&name, tag) {
            if !pid_alive(pid) {
                remove(&name)?;
                removed.push(name);
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_pid_reads_the_pid_of_our_own_names_only() {
        assert_eq!(owner_pid("bl-1234-0-ue", "bl"), Some(1234));
        assert_eq!(owner_pid("blx-1234-0-ue", "bl"), None);
        assert_eq!(owner_pid("bl-abc-0-ue", "bl"), None);
        assert_eq!(owner_pid("other", "bl"), None);
    }

    #[test]
    fn unique_prefixes_differ_and_carry_our_pid() {
        let a = unique_prefix("bl");
        let b = unique_prefix("bl");
        assert_ne!(a, b);
        assert_eq!(owner_pid(&format!("{a}-srv"), "bl"), Some(std::process::id()));
    }

    #[test]
    fn names_are_checked() {
        assert!(check_ifname("p1-prx").is_ok());
        assert!(matches!(check_ifname("sixteen-chars-xx"), Err(NetError::BadName { .. })));
        assert!(matches!(check_ifname("a b"), Err(NetError::BadName { .. })));
        assert!(matches!(check_name("namespace", "", 64), Err(NetError::BadName { .. })));
        assert!(matches!(check_name("namespace", "-x", 64), Err(NetError::BadName { .. })));
    }

    #[test]
    fn a_prefix_owns_its_own_names_only() {
        let names = ["bl-7-1-ue", "bl-7-10-ue", "bl-7-1", "x-bl-7-1-ue", "bl-7-1-em0"];
        let names = names.iter().map(|n| n.to_string()).collect();
        assert_eq!(with_prefix(names, "bl-7-1"), vec!["bl-7-1-ue", "bl-7-1-em0"]);
    }

    #[test]
    fn our_own_pid_is_alive() {
        assert!(pid_alive(std::process::id()));
    }
}
