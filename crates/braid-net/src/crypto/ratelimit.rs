//! Limits on a responder's handshake work: when it counts as under load, how many handshakes
//! one source address may cost it, and how many it does in all.
//!
//! After wireguard-go (`device/ratelimiter.go`, `device/receive.go`): a token bucket per source
//! IP address of 20 initiations per second with a burst of 5, applied to initiations that carry
//! a valid cookie while the responder is under load, with idle entries dropped after a second.
//! wireguard-go calls itself under load when its handshake queue is an eighth full and stays so
//! for a second after; this daemon has one thread and no queue, so load is a rate instead: more
//! than [`LOAD_RATE`] initiations per second that passed `mac1` (sustained past a burst of
//! [`LOAD_BURST`]), and again a second after the last such excess. A global bucket
//! ([`DH_RATE`]) bounds the Diffie-Hellman work whatever the sources: at about 100 us per
//! handshake, 1 000 a second is a tenth of the thread that also forwards every packet.
//!
//! Cookie replies are limited too, which WireGuard does not do (its kernel module answers with
//! many cores): a reply costs a system call that delivers it, 5-15 us on this daemon's one
//! thread, so the same per-source buckets bound what one address can make the responder send
//! (a client needs one cookie per path per try), and a global bucket ([`COOKIE_RATE`]) bounds
//! what spoofed addresses can: measured with `braid bench flood`, 50 000 unlimited replies a
//! second took 0.8 of a core and 10% of a download's goodput.
//!
//! The table of sources is bounded ([`MAX_SOURCES`]); a full table of live sources refuses a
//! new one rather than grow.

use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

use braid_core::Instant;

/// Initiations per second one source address may cost under load (wireguard-go
/// `packetsPerSecond`).
pub const PER_SOURCE_RATE: u64 = 20;
/// Initiations one source may send at once under load (wireguard-go `packetsBurstable`).
pub const PER_SOURCE_BURST: u64 = 5;
/// Initiations per second (that passed `mac1`) above which the responder is under load.
pub const LOAD_RATE: u64 = 64;
/// Initiations allowed at once before the rate counts.
pub const LOAD_BURST: u64 = 16;
/// How long the responder stays under load after the last excess (wireguard-go
/// `UnderLoadAfterTime`).
pub const UNDER_LOAD_HOLD: Duration = Duration::from_secs(1);
/// Handshakes (Diffie-Hellman work) per second in all.
pub const DH_RATE: u64 = 1_000;
/// Handshakes at once in all.
pub const DH_BURST: u64 = 100;
/// Cookie replies per second in all.
pub const COOKIE_RATE: u64 = 5_000;
/// Cookie replies at once in all.
pub const COOKIE_BURST: u64 = 500;
/// Source addresses tracked at most.
pub const MAX_SOURCES: usize = 8_192;
/// An entry idle this long has refilled its bucket and is dropped (wireguard-go's
/// garbage collection interval).
const SOURCE_IDLE: Duration = Duration::from_secs(1);

const NS_PER_S: u64 = 1_000_000_000;

/// A token bucket counted in nanoseconds of credit: each event costs `1 s / rate`.
#[derive(Clone, Copy, Debug)]
struct Bucket {
    credit_ns: u64,
    last: Instant,
}

impl Bucket {
    fn full(now: Instant, rate: u64, burst: u64) -> Self {
        Bucket { credit_ns: capacity_ns(rate, burst), last: now }
    }

    /// Takes one event's cost if the bucket holds it.
    fn take(&mut self, now: Instant, rate: u64, burst: u64) -> bool {
        let capacity = capacity_ns(rate, burst);
        let elapsed = now.nanos_since(self.last.min(now));
        self.credit_ns = self.credit_ns.saturating_add(elapsed).min(capacity);
        self.last = self.last.max(now);
        let cost = NS_PER_S / rate;
        if self.credit_ns >= cost {
            self.credit_ns -= cost;
            true
        } else {
            false
        }
    }
}

fn capacity_ns(rate: u64, burst: u64) -> u64 {
    NS_PER_S / rate * burst
}

/// Per-source-address token buckets.
#[derive(Debug)]
pub struct SourceLimiter {
    buckets: HashMap<IpAddr, Bucket>,
    last_sweep: Instant,
}

impl Default for SourceLimiter {
    fn default() -> Self {
        SourceLimiter { buckets: HashMap::new(), last_sweep: Instant::ZERO }
    }
}

impl SourceLimiter {
    /// Whether `source` may cost one more handshake now.
    pub fn allow(&mut self, now: Instant, source: IpAddr) -> bool {
        if let Some(b) = self.buckets.get_mut(&source) {
            return b.take(now, PER_SOURCE_RATE, PER_SOURCE_BURST);
        }
        if self.buckets.len() >= MAX_SOURCES {
            self.sweep(now);
            if self.buckets.len() >= MAX_SOURCES {
                return false;
            }
        } else if now.saturating_since(self.last_sweep) >= SOURCE_IDLE {
            self.sweep(now);
        }
        let mut b = Bucket::full(now, PER_SOURCE_RATE, PER_SOURCE_BURST);
        let allowed = b.take(now, PER_SOURCE_RATE, PER_SOURCE_BURST);
        self.buckets.insert(source, b);
        allowed
    }

    /// Sources tracked now.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buckets.is_empty()
    }

    /// Drops the entries idle for [`SOURCE_IDLE`]: their buckets are full again, so forgetting
    /// them changes nothing.
    fn sweep(&mut self, now: Instant) {
        self.buckets.retain(|_, b| now.saturating_since(b.last) < SOURCE_IDLE);
        self.last_sweep = now;
    }
}

/// Whether the responder is under load, from the initiations that passed `mac1`, and the
/// global budget of handshakes.
#[derive(Debug)]
pub struct HandshakeLoad {
    arrivals: Bucket,
    under_load_until: Option<Instant>,
    handshakes: Bucket,
    cookies: Bucket,
}

impl HandshakeLoad {
    pub fn new(now: Instant) -> Self {
        HandshakeLoad {
            arrivals: Bucket::full(now, LOAD_RATE, LOAD_BURST),
            under_load_until: None,
            handshakes: Bucket::full(now, DH_RATE, DH_BURST),
            cookies: Bucket::full(now, COOKIE_RATE, COOKIE_BURST),
        }
    }

    /// Counts one initiation that passed `mac1`; returns whether the responder is under load
    /// now (this initiation included).
    pub fn on_initiation(&mut self, now: Instant) -> bool {
        if !self.arrivals.take(now, LOAD_RATE, LOAD_BURST) {
            self.under_load_until = Some(now + UNDER_LOAD_HOLD);
        }
        self.is_under_load(now)
    }

    pub fn is_under_load(&self, now: Instant) -> bool {
        self.under_load_until.is_some_and(|t| now < t)
    }

    /// Whether one more handshake fits the global budget; takes it if so.
    pub fn take_handshake(&mut self, now: Instant) -> bool {
        self.handshakes.take(now, DH_RATE, DH_BURST)
    }

    /// Whether one more cookie reply fits the global budget; takes it if so.
    pub fn take_cookie_reply(&mut self, now: Instant) -> bool {
        self.cookies.take(now, COOKIE_RATE, COOKIE_BURST)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Instant {
        Instant::from_nanos(n * 1_000_000)
    }

    #[test]
    fn a_source_gets_its_burst_then_its_rate() {
        let mut l = SourceLimiter::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let burst = (0..10).filter(|_| l.allow(ms(1000), ip)).count() as u64;
        assert_eq!(burst, PER_SOURCE_BURST);
        // Another address is not affected.
        assert!(l.allow(ms(1000), other));
        // One more every 1/20 s: 50 ms later exactly one passes.
        assert!(l.allow(ms(1050), ip));
        assert!(!l.allow(ms(1050), ip));
        // Over ten seconds of trying every millisecond, about 20 per second pass.
        let passed = (1051..11_051).filter(|&t| l.allow(ms(t), ip)).count() as u64;
        assert!((199..=201).contains(&passed), "{passed}");
    }

    #[test]
    fn the_table_stays_bounded_and_forgets_idle_sources() {
        let mut l = SourceLimiter::default();
        let addr = |i: usize| IpAddr::from([10, (i >> 16) as u8, (i >> 8) as u8, i as u8]);
        for i in 0..MAX_SOURCES {
            assert!(l.allow(ms(1000), addr(i)));
        }
        assert_eq!(l.len(), MAX_SOURCES);
        // Full of live sources: a new one is refused, the table does not grow.
        assert!(!l.allow(ms(1001), addr(MAX_SOURCES)));
        assert_eq!(l.len(), MAX_SOURCES);
        // A second later they are idle: the new one gets in and the old ones are gone.
        assert!(l.allow(ms(2001), addr(MAX_SOURCES)));
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn load_starts_past_the_burst_at_the_rate_and_holds_a_second() {
        let mut load = HandshakeLoad::new(ms(0));
        // A client's handshake on a few paths, every 5 s, never counts as load.
        for k in 0..20 {
            for _ in 0..8 {
                assert!(!load.on_initiation(ms(5000 * k)));
            }
        }
        // A flood: past the burst, load.
        let mut t = 200_000;
        let mut first_loaded = None;
        for i in 0..100 {
            if load.on_initiation(ms(t)) && first_loaded.is_none() {
                first_loaded = Some(i);
            }
            t += 1;
        }
        let first = first_loaded.expect("a flood of 1000/s is load");
        assert!(first as u64 <= LOAD_BURST + 2, "{first}");
        // It holds for a second after the last excess, then ends.
        assert!(load.is_under_load(ms(t + 900)));
        assert!(!load.is_under_load(ms(t + 1100)));
    }

    #[test]
    fn the_global_budgets_bound_handshakes_and_cookie_replies_per_second() {
        let mut load = HandshakeLoad::new(ms(0));
        let done = (0..10_000).filter(|i| load.take_handshake(ms(1000 + i / 10))).count() as u64;
        // One second of arrivals at 10 000/s: the burst plus one second at DH_RATE.
        assert!(done <= DH_BURST + DH_RATE + 1, "{done}");
        assert!(done >= DH_RATE, "{done}");
        // One second at 50 000/s: the burst plus one second at COOKIE_RATE.
        let sent = (0..50_000).filter(|i| load.take_cookie_reply(ms(1000 + i / 50))).count() as u64;
        assert!(sent <= COOKIE_BURST + COOKIE_RATE + 1, "{sent}");
        assert!(sent >= COOKIE_RATE, "{sent}");
    }
}
