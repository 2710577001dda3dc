//! Ctrl-C and SIGTERM during a lab run: the first one sets a flag that the run polls (every
//! blocking wait in the test bed has a time limit of at most [`crate::transfer::POLL_INTERVAL`]),
//! so the run returns an error and its guards remove namespaces and processes. A second signal
//! exits at once (status 130); [`crate::netns::cleanup_stale`] removes what that leaves.
//!
//! The handler is installed without `SA_RESTART`, so a blocked system call returns `EINTR`,
//! which the loops treat like a timeout and then see the flag.

use std::sync::atomic::{AtomicBool, Ordering};

use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Exit status of a process ended by a second SIGINT (128 + 2, the shell convention).
const EXIT_SECOND_SIGNAL: i32 = 130;

extern "C" fn on_signal(_: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap and _exit.
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        unsafe { libc::_exit(EXIT_SECOND_SIGNAL) };
    }
}

/// Installs the handler for SIGINT and SIGTERM and returns the flag it sets.
pub fn install() -> nix::Result<&'static AtomicBool> {
    let action = SigAction::new(SigHandler::Handler(on_signal), SaFlags::empty(), SigSet::empty());
    for sig in [Signal::SIGINT, Signal::SIGTERM] {
        // SAFETY: the handler only touches an atomic and calls _exit.
        unsafe { sigaction(sig, &action) }?;
    }
    Ok(&INTERRUPTED)
}

/// The flag, whether or not the handler is installed (for callers that pass it on).
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}
