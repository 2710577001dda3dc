//! SIGINT and SIGTERM, the signals that stop every long-running braid command (`braid tunnel`,
//! `braid linkem`, `braid lab`), handled one way: blocked in the calling thread, and so in
//! every thread it starts afterwards, and received from a signalfd. A blocked signal never
//! interrupts the process mid-write; each command takes it where it can stop cleanly:
//!
//! - a poll loop polls the descriptor ([`TerminationSignals::take`] once it is readable);
//! - a thread with nothing else to do waits for it ([`TerminationSignals::wait`]);
//! - code that checks a stop flag between bounded waits gets one
//!   ([`TerminationSignals::into_flag`]): the first signal sets it, a second one ends the
//!   process at once with status 130.
//!
//! Block before starting any thread (a thread started earlier keeps its own mask and could
//! take the signal's default action, ending the process). Child processes started with
//! `std::process::Command` begin with an empty mask, so they still stop on these signals.
//!
//! A leaf module: it imports nothing from the rest of braid-net.

use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

/// Exit status of a process ended by a second signal (128 + SIGINT, the shell convention).
pub const EXIT_SECOND_SIGNAL: i32 = 130;

/// The flag [`TerminationSignals::into_flag`] sets: one per process, as signals are.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Why the signals could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("{what}: {source}")]
pub struct SignalError {
    pub what: &'static str,
    pub source: io::Error,
}

/// SIGINT and SIGTERM, blocked and readable from a descriptor.
#[derive(Debug)]
pub struct TerminationSignals {
    fd: SignalFd,
}

impl TerminationSignals {
    /// Blocks SIGINT and SIGTERM in the calling thread (and every thread started after) and
    /// opens a non-blocking signalfd for them.
    pub fn block() -> Result<TerminationSignals, SignalError> {
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGINT);
        mask.add(Signal::SIGTERM);
        mask.thread_block()
            .map_err(|e| SignalError { what: "blocking SIGINT/SIGTERM", source: e.into() })?;
        let fd = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)
            .map_err(|e| SignalError { what: "creating the signalfd", source: e.into() })?;
        Ok(TerminationSignals { fd })
    }

    /// The number of a pending signal, taking it; `None` if none is pending.
    pub fn take(&self) -> Option<u32> {
        match self.fd.read_signal() {
            Ok(Some(info)) => Some(info.ssi_signo),
            _ => None,
        }
    }

    /// Waits up to `timeout` (`None`: for ever) for a signal and takes it.
    pub fn wait(&self, timeout: Option<Duration>) -> Option<u32> {
        let ms = match timeout {
            // Rounded up, so a short wait does not become a busy loop.
            Some(t) => t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as libc::c_int,
            None => -1,
        };
        let mut pfd = libc::pollfd { fd: self.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ready > 0 {
            self.take()
        } else {
            None
        }
    }

    /// Hands the signals to a thread that sets the returned flag on the first one and ends
    /// the process with [`EXIT_SECOND_SIGNAL`] on a second. For code that polls a stop flag
    /// between waits that are all bounded.
    pub fn into_flag(self) -> Result<&'static AtomicBool, SignalError> {
        thread::Builder::new()
            .name("signals".into())
            .spawn(move || loop {
                if self.wait(None).is_some() && INTERRUPTED.swap(true, Ordering::SeqCst) {
                    // SAFETY: ends the process without running anything else, as a second
                    // Ctrl-C should.
                    unsafe { libc::_exit(EXIT_SECOND_SIGNAL) };
                }
            })
            .map_err(|source| SignalError { what: "starting the signal thread", source })?;
        Ok(&INTERRUPTED)
    }
}

impl AsRawFd for TerminationSignals {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_fd().as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sends `sig` to this thread only: the test harness runs other tests in other threads,
    /// which must not see it.
    fn raise_here(sig: libc::c_int) {
        // SAFETY: signalling the calling thread.
        assert_eq!(unsafe { libc::pthread_kill(libc::pthread_self(), sig) }, 0);
    }

    #[test]
    fn a_blocked_signal_waits_in_the_descriptor_until_taken() {
        // Each test runs in its own thread, whose mask is its own.
        let signals = TerminationSignals::block().unwrap();
        assert_eq!(signals.take(), None);
        assert_eq!(signals.wait(Some(Duration::from_millis(5))), None);
        raise_here(libc::SIGTERM);
        assert_eq!(signals.wait(Some(Duration::from_secs(5))), Some(libc::SIGTERM as u32));
        raise_here(libc::SIGINT);
        assert_eq!(signals.take(), Some(libc::SIGINT as u32));
        assert_eq!(signals.take(), None);
    }
}
