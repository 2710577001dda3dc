//! One direction's thread: reads frames on one interface, passes them through the emulated
//! link, and sends each out of the other interface when it is due.
//!
//! # Loop
//! 1. Read the frames waiting (up to `RECV_BATCH`), each with the kernel's receive time,
//!    and hand them to the link.
//! 2. Send every frame whose due time has come: by now if the socket was emptied, else only by
//!    the arrival time of the last frame read. The link's events thus stay in time order: a
//!    frame still unread in the socket is never judged against a queue already advanced past
//!    its arrival (it would find a place freed after it came, or start its serialisation later
//!    than it reached an idle link).
//! 3. Wait for the next due time or the next frame: sleep (`ppoll` on the socket and the stop
//!    event) until the due time minus the learned wake-up lateness ([`WakeupLatency`]), then
//!    spin on the clock for the rest (docs/design.md section 7). The thread's timer slack is set to
//!    1 ns (`PR_SET_TIMERSLACK`), else the kernel may defer each wake-up by up to 50 us.
//!
//! # Why a thread per direction
//! The two directions share nothing (their own link, RNG, frames and statistics), so each
//! thread waits on one socket for one deadline and the code stays straight-line. On a machine
//! with two cores the directions also run in parallel: a burst of data frames does not delay
//! the ACKs coming the other way, which a single thread serving both deadlines would. The price
//! is a second thread that may spin; at most one frame's margin ([`WakeupLatency::margin_ns`])
//! per departure.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use braid_core::Instant;

use super::clock::Clock;
use super::config::Direction;
use super::link::{Admission, EmulatedLink};
use super::packet_socket::{PacketSocket, VNET_HDR_BYTES};
use super::pool::FramePool;
use super::stats::{DirectionStats, LatenessHistogram};
use super::wakeup::WakeupLatency;

/// Frames read per pass before the due departures are sent: frames due as soon as they come
/// (no rate, no delay) wait behind at most this many reads.
const RECV_BATCH: usize = 8;
/// Longest sleep without a due frame: the stop flag is looked at least this often even if the
/// stop event were missed.
const IDLE_POLL_MS: i64 = 200;
/// `prctl` option, include/uapi/linux/prctl.h.
const PR_SET_TIMERSLACK: libc::c_int = 29;

/// Asks the direction threads to finish: a flag, and an eventfd that wakes their sleeps.
#[derive(Debug)]
pub struct Stop {
    flag: AtomicBool,
    event_fd: std::os::fd::OwnedFd,
}

impl Stop {
    pub fn new() -> std::io::Result<Self> {
        use std::os::fd::FromRawFd;
        // SAFETY: plain eventfd(2); the descriptor is owned on success.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` is fresh and owned by nobody else.
        let event_fd = unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) };
        Ok(Stop { flag: AtomicBool::new(false), event_fd })
    }

    pub fn request(&self) {
        use std::os::fd::AsRawFd;
        self.flag.store(true, Ordering::SeqCst);
        // SAFETY: writes 8 bytes from a live u64 to our eventfd; the counter stays non-zero, so
        // every later poll sees it readable.
        unsafe { libc::eventfd_write(self.event_fd.as_raw_fd(), 1) };
    }

    pub fn requested(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }

    fn raw_fd(&self) -> libc::c_int {
        use std::os::fd::AsRawFd;
        self.event_fd.as_raw_fd()
    }
}

/// What a receive pass left in the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Backlog {
    /// Nothing: every frame that arrived is on the link.
    Empty,
    /// Frames may still wait; the link must not be advanced past the last arrival read.
    Unread { last_arrival: Instant },
}

/// What woke a wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Woken {
    Timer,
    Event,
}

/// One direction of the emulator.
pub struct Forwarder {
    direction: Direction,
    rx: Arc<PacketSocket>,
    tx: Arc<PacketSocket>,
    link: EmulatedLink,
    pool: FramePool,
    clock: Clock,
    wakeup: WakeupLatency,
    stats: DirectionStats,
    lateness: LatenessHistogram,
    stop: Arc<Stop>,
    warned_oversize: bool,
}

impl Forwarder {
    pub fn new(
        direction: Direction,
        rx: Arc<PacketSocket>,
        tx: Arc<PacketSocket>,
        link: EmulatedLink,
        pool: FramePool,
        clock: Clock,
        stop: Arc<Stop>,
    ) -> Self {
        Forwarder {
            direction,
            rx,
            tx,
            link,
            pool,
            clock,
            wakeup: WakeupLatency::default(),
            stats: DirectionStats::default(),
            lateness: LatenessHistogram::default(),
            stop,
            warned_oversize: false,
        }
    }

    /// Forwards until stopped; returns the direction's counters.
    pub fn run(mut self) -> DirectionStats {
        // SAFETY: prctl with an integer argument, affecting only this thread.
        unsafe { libc::prctl(PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        while !self.stop.requested() {
            match self.receive() {
                Backlog::Empty => {
                    self.transmit_due(self.clock.now());
                    self.wait();
                }
                Backlog::Unread { last_arrival } => self.transmit_due(last_arrival),
            }
        }
        self.finish()
    }

    /// Reads up to [`RECV_BATCH`] frames into the link.
    fn receive(&mut self) -> Backlog {
        let mut last_arrival = Instant::ZERO;
        for _ in 0..RECV_BATCH {
            let id = self.pool.alloc();
            let received = match self.rx.recv(self.pool.slot_mut(id)) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    self.pool.free(id);
                    return Backlog::Empty;
                }
                Err(_) => {
                    // The interface went down or away; the error is reported once per event.
                    self.stats.recv_errors += 1;
                    self.pool.free(id);
                    return Backlog::Empty;
                }
            };
            // The link and the counters see the Ethernet frame, not the virtio-net header.
            let frame_len = received.len.saturating_sub(VNET_HDR_BYTES);
            self.stats.frames += 1;
            self.stats.bytes += frame_len as u64;
            if received.truncated {
                self.stats.drops_oversize += 1;
                self.pool.free(id);
                self.warn_oversize(frame_len);
                continue;
            }
            self.pool.set_len(id, received.len);
            let now = self.clock.now();
            let arrival =
                received.realtime_ns.map_or(now, |ns| self.clock.from_realtime_ns(ns)).min(now);
            last_arrival = last_arrival.max(arrival);
            match self.link.handle_frame(arrival, id, frame_len as u32) {
                Admission::Accepted => {}
                Admission::DroppedBuffer => {
                    self.stats.drops_buffer += 1;
                    self.pool.free(id);
                }
                Admission::DroppedLoss => {
                    self.stats.drops_loss += 1;
                    self.pool.free(id);
                }
            }
        }
        Backlog::Unread { last_arrival }
    }

    fn warn_oversize(&mut self, len: usize) {
        if !self.warned_oversize {
            self.warned_oversize = true;
            eprintln!(
                "linkem: {}: dropping {len}-byte frames read on {} (larger than its MTU): turn \
                 segmentation offloads (tso, gso, tx-udp-segmentation) off on the device \
                 sending into it",
                self.direction,
                self.rx.ifname()
            );
        }
    }

    /// Sends every frame due by `horizon`.
    fn transmit_due(&mut self, horizon: Instant) {
        while let Some((id, due)) = self.link.poll_transmit(horizon) {
            let now = self.clock.now();
            let frame = self.pool.frame(id);
            match self.tx.send(frame) {
                Ok(()) => {
                    self.stats.sent_frames += 1;
                    self.stats.sent_bytes += (frame.len() - VNET_HDR_BYTES) as u64;
                }
                Err(_) => self.stats.send_errors += 1,
            }
            self.lateness.record(now.nanos_since(due));
            self.pool.free(id);
            self.free_codel_drops();
        }
        self.free_codel_drops();
    }

    fn free_codel_drops(&mut self) {
        while let Some(id) = self.link.poll_dropped() {
            self.stats.drops_codel += 1;
            self.pool.free(id);
        }
    }

    fn wait(&mut self) {
        let now = self.clock.now();
        let Some(due) = self.link.poll_timeout() else {
            self.sleep(None);
            return;
        };
        if due <= now {
            return;
        }
        let wake_at = Instant::from_nanos(due.as_nanos().saturating_sub(self.wakeup.margin_ns()));
        if wake_at > now {
            match self.sleep(Some(wake_at.nanos_since(now))) {
                Woken::Timer => {
                    let late_ns = self.clock.now().nanos_since(wake_at);
                    self.wakeup.on_timer_wakeup(late_ns);
                }
                // A frame arrived (or stop): read it first; the departure is still ahead.
                Woken::Event => return,
            }
        }
        while self.clock.now() < due {
            std::hint::spin_loop();
        }
    }

    /// Sleeps until a frame arrives, stop is requested or `timeout_ns` passes.
    fn sleep(&self, timeout_ns: Option<u64>) -> Woken {
        let mut fds = [
            libc::pollfd { fd: self.rx.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.stop.raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let ns = timeout_ns.unwrap_or(IDLE_POLL_MS as u64 * 1_000_000);
        let ts = libc::timespec {
            tv_sec: (ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: two valid pollfds and a valid timeout; no signal mask change.
        let n = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &ts, std::ptr::null()) };
        if n == 0 && timeout_ns.is_some() {
            Woken::Timer
        } else {
            Woken::Event
        }
    }

    fn finish(mut self) -> DirectionStats {
        self.free_codel_drops();
        self.stats.in_flight_at_exit = self.pool.in_use() as u64;
        self.stats.max_queue_pkts = self.link.stats().max_queue_pkts as u64;
        self.stats.lateness = self.lateness.summary();
        self.stats.wakeup_latency_us = self.wakeup.mean_ns() as f64 / 1e3;
        self.stats
    }
}
