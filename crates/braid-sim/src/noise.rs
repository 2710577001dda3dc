//! The noise model's moving parts (docs/design.md section 10): the random streams derived
//! from a scenario's seed, the per-packet host delay and the FIFO each host keeps, and the
//! transfer's random start. [`crate::scenario::NoiseConfig`] is its configuration;
//! [`crate::topology`] wires it in.
//!
//! Why: the simulator is deterministic, so without this the repetitions of a cell are copies,
//! while the lab's runs of one configuration differ (docs/validation.md, "Repetitions: the
//! noise model"). Real hosts delay each packet by a few tens of microseconds of softirq and
//! scheduling latency, with a tail; that is enough to move a cell that sits on a tipping point
//! from one mode to the other, as the lab's runs move.
//!
//! Every purpose draws from its own generator, seeded by [`stream_seed`] from the scenario's
//! seed and the purpose's number, so enabling one part leaves the draws of the others (and
//! the links' loss draws, which use the scenario seed itself) unchanged.

use std::collections::VecDeque;
use std::time::Duration;

use braid_core::Instant;
use rand::{Rng, RngExt, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// The purposes that draw random numbers, each its own stream. The numbers are part of what a
/// seed means: changing one changes every noisy run.
pub mod stream {
    /// The transfer's start offset.
    pub const START_OFFSET: u64 = 1;
    /// The tunnel's path controllers, downlink (proxy) sender.
    pub const CC_DOWNLINK: u64 = 2;
    /// The tunnel's path controllers, uplink (UE) sender.
    pub const CC_UPLINK: u64 = 3;
    /// The end-to-end TCP sender's controller.
    pub const CC_E2E: u64 = 4;
    /// Host `h`'s packet delays ([`super::Host`]): `HOST_JITTER + h`.
    pub const HOST_JITTER: u64 = 16;
    /// Host `h`'s stalls ([`super::Stalls`]): `HOST_STALL + h`.
    pub const HOST_STALL: u64 = 32;
}

/// The seed of stream `stream` under scenario seed `seed`: a SplitMix64 output (Steele et al.,
/// "Fast splittable pseudorandom number generators", OOPSLA 2014) of both, so that nearby
/// seeds and nearby streams give unrelated generators.
pub fn stream_seed(seed: u64, stream: u64) -> u64 {
    braid_core::cc::path_seed(seed, stream)
}

/// A host that forwards or terminates packets; each keeps its own FIFO and its own stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// The server: end-to-end data out, ACKs in.
    Server = 0,
    /// The tunnel proxy: tunnel data and feedback towards the UE, ACKs towards the server.
    Proxy = 1,
    /// The user device: ACKs and feedback out through the tunnel, data in.
    Ue = 2,
}

/// The three hosts, by their index.
pub const HOSTS: [Host; 3] = [Host::Server, Host::Proxy, Host::Ue];

/// The distribution of one packet's extra delay at a host: exponential with mean `mean`, cut at
/// `max` (a draw above it is `max`). An exponential is the simplest law with a tail and one
/// parameter; the cut keeps a rare huge draw from standing for a VM stall, which it does not
/// model. The mean of the cut law is `mean * (1 - exp(-max / mean))`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Jitter {
    mean_ns: f64,
    max_ns: u64,
}

impl Jitter {
    /// `mean` above zero, `max` at least `mean` (validated as `sim.noise.*`).
    pub fn new(mean: Duration, max: Duration) -> Self {
        Jitter { mean_ns: mean.as_nanos() as f64, max_ns: max.as_nanos() as u64 }
    }

    /// One delay, by inverting the exponential's distribution function, in whole nanoseconds.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Duration {
        let u: f64 = rng.random::<f64>();
        let ns = -self.mean_ns * (1.0 - u).ln();
        Duration::from_nanos((ns.round() as u64).min(self.max_ns))
    }

    /// The mean of [`Jitter::draw`] (of the cut law), ns.
    pub fn mean_ns(&self) -> f64 {
        if self.mean_ns == 0.0 {
            return 0.0;
        }
        self.mean_ns * (1.0 - (-(self.max_ns as f64) / self.mean_ns).exp())
    }
}

/// Host stalls: a host stops handling packets at random instants and resumes a while later,
/// as a process or softirq does when the scheduler runs something else on its CPU. Stalls start
/// as a Poisson process of `rate_per_s` (from the end of the previous one) and last an
/// exponential time of mean `mean` cut at `max`; a packet the host takes in during a stall is
/// handled when it ends, so everything that arrived meanwhile leaves in one burst. The lab's
/// link emulator shows such stalls in its own send lateness (docs/validation.md, "Repetitions:
/// the noise model"). Per host, independent of the traffic: the schedule depends only on the
/// seed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stalls {
    /// The time from one stall's end to the next one's start: exponential, uncut.
    gap: Jitter,
    /// A stall's length: exponential, cut at the maximum.
    length: Jitter,
}

impl Stalls {
    /// `rate_per_s` and `mean` above zero, `max` at least `mean` (validated as `sim.noise.*`).
    pub fn new(rate_per_s: f64, mean: Duration, max: Duration) -> Self {
        Stalls {
            gap: Jitter { mean_ns: 1e9 / rate_per_s, max_ns: u64::MAX },
            length: Jitter::new(mean, max),
        }
    }
}

/// One host's stall schedule, drawn lazily as time passes.
#[derive(Debug)]
struct StallClock {
    law: Stalls,
    rng: Pcg64Mcg,
    /// The current or next stall, `[start, end)`.
    start: Instant,
    end: Instant,
}

impl StallClock {
    fn new(law: Stalls, seed: u64) -> Self {
        let mut c = StallClock {
            law,
            rng: Pcg64Mcg::seed_from_u64(seed),
            start: Instant::ZERO,
            end: Instant::ZERO,
        };
        c.advance();
        c
    }

    /// The stall after the current one: an exponential gap, then an exponential length cut at
    /// the maximum.
    fn advance(&mut self) {
        let gap = self.law.gap.draw(&mut self.rng).as_nanos() as u64;
        let len = self.law.length.draw(&mut self.rng).as_nanos() as u64;
        self.start = self.end.add_nanos(gap.max(1));
        self.end = self.start.add_nanos(len);
    }

    /// When the host handles a packet taken in at `now` (calls in non-decreasing `now`): the
    /// end of the stall covering `now`, else `now`.
    fn resume_at(&mut self, now: Instant) -> Instant {
        while self.end <= now {
            self.advance();
        }
        if now >= self.start {
            self.end
        } else {
            now
        }
    }
}

/// The packets a host has processed but not yet put on their links, in the order they
/// arrived. A packet handed in at `now` leaves at max(the previous packet's departure,
/// `now` + a [`Jitter`] draw): a host delays packets but never reorders them, as one softirq
/// or one event loop handles them in order. Only the head's departure needs an event
/// (docs/design.md section 8: the heap grows with components, not packets).
#[derive(Debug)]
pub struct HostQueue<T> {
    jitter: Jitter,
    rng: Pcg64Mcg,
    stalls: Option<StallClock>,
    last_departure: Instant,
    queue: VecDeque<(Instant, T)>,
}

impl<T: Copy> HostQueue<T> {
    /// A host delaying each packet by a `jitter` draw (from a generator seeded by `seed`),
    /// and, with `stalls`, stalling as they say (seeded by `stall_seed`).
    pub fn new(jitter: Jitter, seed: u64, stalls: Option<(Stalls, u64)>) -> Self {
        HostQueue {
            jitter,
            rng: Pcg64Mcg::seed_from_u64(seed),
            stalls: stalls.map(|(law, stall_seed)| StallClock::new(law, stall_seed)),
            last_departure: Instant::ZERO,
            queue: VecDeque::with_capacity(64),
        }
    }

    /// Takes in `item` at `now` (non-decreasing) and returns when it leaves: once the host
    /// handles it (after any stall) plus its jitter draw. Departures never decrease.
    pub fn admit(&mut self, now: Instant, item: T) -> Instant {
        let handled = self.stalls.as_mut().map_or(now, |s| s.resume_at(now));
        let at = (handled + self.jitter.draw(&mut self.rng)).max(self.last_departure);
        self.last_departure = at;
        self.queue.push_back((at, item));
        at
    }

    /// Takes in `item` right behind the packet taken in last, leaving with it: no stall or
    /// jitter of its own, as a datagram the host writes in the same batch as the one before
    /// (the daemon's time-sync frame behind its packet).
    pub fn admit_behind(&mut self, item: T) -> Instant {
        let at = self.last_departure;
        self.queue.push_back((at, item));
        at
    }

    /// When the head leaves, if anything waits.
    pub fn next_departure(&self) -> Option<Instant> {
        self.queue.front().map(|&(at, _)| at)
    }

    /// The head, if it is due at `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<T> {
        match self.queue.front() {
            Some(&(at, item)) if at <= now => {
                self.queue.pop_front();
                Some(item)
            }
            _ => None,
        }
    }

    /// Everything waiting, head first (for the accounting walk).
    pub fn items(&self) -> impl Iterator<Item = T> + '_ {
        self.queue.iter().map(|&(_, item)| item)
    }
}

/// The transfer's start: uniform in [0, `max`) at nanosecond resolution, from its own stream.
pub fn start_offset(seed: u64, max: Duration) -> Duration {
    let max_ns = max.as_nanos() as u64;
    if max_ns == 0 {
        return Duration::ZERO;
    }
    let mut rng = Pcg64Mcg::seed_from_u64(stream_seed(seed, stream::START_OFFSET));
    Duration::from_nanos(rng.random_range(0..max_ns))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn us(v: u64) -> Duration {
        Duration::from_micros(v)
    }

    /// Over many draws the sample mean is the cut law's mean within 1% (the standard error of
    /// 200 000 exponential draws is 0.22% of the mean), every draw is within [0, max], and the
    /// cut is reached as often as exp(-max / mean) says.
    #[test]
    fn draws_follow_the_configured_distribution() {
        for (mean, max) in [(20, 1000), (20, 40), (100, 100)] {
            let j = Jitter::new(us(mean), us(max));
            let mut rng = Pcg64Mcg::seed_from_u64(11);
            let n = 200_000;
            let draws: Vec<u64> = (0..n).map(|_| j.draw(&mut rng).as_nanos() as u64).collect();
            assert!(draws.iter().all(|&d| d <= max * 1000));
            let sample_mean = draws.iter().sum::<u64>() as f64 / n as f64;
            let want = j.mean_ns();
            assert!((sample_mean / want - 1.0).abs() < 0.01, "{mean}/{max}: {sample_mean} {want}");
            let at_cut = draws.iter().filter(|&&d| d == max * 1000).count() as f64 / n as f64;
            let p_cut = (-(max as f64) / mean as f64).exp();
            assert!((at_cut - p_cut).abs() < 0.005, "{mean}/{max}: {at_cut} {p_cut}");
        }
        // The median of an exponential is mean x ln 2.
        let j = Jitter::new(us(20), us(1000));
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let mut draws: Vec<Duration> = (0..100_001).map(|_| j.draw(&mut rng)).collect();
        draws.sort();
        let median = draws[50_000].as_nanos() as f64;
        assert!((median / (20_000.0 * std::f64::consts::LN_2) - 1.0).abs() < 0.02, "{median}");
    }

    /// A host never lets a packet overtake an earlier one: departures are in admission order
    /// A datagram admitted behind a packet leaves with it and leaves the draws of the packets
    /// after it as they were without it.
    #[test]
    fn a_datagram_admitted_behind_leaves_with_its_packet_and_draws_nothing() {
        let jitter = Jitter::new(us(50), us(1000));
        let (mut with, mut without) =
            (HostQueue::new(jitter, 5, None), HostQueue::new(jitter, 5, None));
        let t = Instant::ZERO + us(10);
        let first = with.admit(t, 1u32);
        assert_eq!(without.admit(t, 1), first);
        assert_eq!(with.admit_behind(2), first);
        assert_eq!(with.admit(t, 3), without.admit(t, 3));
        assert_eq!(with.pop_due(first), Some(1));
        assert_eq!(with.pop_due(first), Some(2));
    }

    /// and never before admission, and a packet admitted behind a long draw waits for it.
    #[test]
    fn a_host_keeps_fifo_order() {
        let mut q = HostQueue::new(Jitter::new(us(50), us(1000)), 3, None);
        let mut admitted = Vec::new();
        let mut t = Instant::ZERO;
        for i in 0..10_000u32 {
            // Bursts of packets at one instant, then gaps shorter and longer than the jitter.
            if i % 7 == 0 {
                t += us(u64::from(i % 5) * 20);
            }
            let at = q.admit(t, i);
            assert!(at >= t);
            admitted.push((t, at));
        }
        let departures: Vec<Instant> = admitted.iter().map(|&(_, at)| at).collect();
        assert!(departures.windows(2).all(|w| w[0] <= w[1]), "departures never decrease");
        assert!(admitted.iter().any(|&(t, at)| at > t + us(50)), "some packets wait");
        // Drain at the departure times: items come out in admission order, each when due.
        let mut out = Vec::new();
        while let Some(at) = q.next_departure() {
            assert!(q.pop_due(at - Duration::from_nanos(1)).is_none(), "not before it is due");
            while let Some(i) = q.pop_due(at) {
                out.push(i);
            }
        }
        assert_eq!(out, (0..10_000).collect::<Vec<_>>());
    }

    /// Stalls follow their law: as a renewal process (an exponential gap after each stall, then
    /// an exponential stall cut at the maximum), a host is stalled a fraction E[s] / (E[gap] +
    /// E[s]) of the time; a packet taken in during a stall leaves at its end, so the packets a
    /// stall catches leave together; none waits longer than the longest stall.
    #[test]
    fn stalls_hold_packets_to_their_end_as_often_as_their_law_says() {
        let law = Stalls::new(100.0, us(1000), us(6000));
        let zero = Jitter::new(Duration::ZERO, Duration::ZERO);
        let mut q = HostQueue::new(zero, 1, Some((law, 2)));
        let (n, step) = (200_000u64, us(50));
        let mut delayed = 0;
        let mut bursts = BTreeMap::new();
        for i in 0..n {
            let now = Instant::ZERO + step * i as u32;
            let at = q.admit(now, i);
            while q.pop_due(at).is_some() {}
            assert!(at >= now && at <= now + us(6000), "{now:?} -> {at:?}");
            if at > now {
                delayed += 1;
                *bursts.entry(at).or_insert(0) += 1;
            }
        }
        // E[s] = 1 ms x (1 - e^-6), E[gap] = 10 ms: stalled 9.07% of the time.
        let expected = 0.9975 / (10.0 + 0.9975);
        let seen = delayed as f64 / n as f64;
        assert!((seen / expected - 1.0).abs() < 0.1, "{seen} vs {expected}");
        // About 100 stalls a second over 10 s, each releasing ~20 packets (1 ms / 50 us) at once.
        assert!((800..1200).contains(&bursts.len()), "{} stalls", bursts.len());
        let mean_burst = delayed as f64 / bursts.len() as f64;
        assert!((15.0..25.0).contains(&mean_burst), "{mean_burst}");
    }

    /// Stalls draw from their own stream: with them the jitter draws are the same sequence,
    /// and the schedule depends on the seed only.
    #[test]
    fn stalls_keep_the_jitter_stream_and_replay_with_their_seed() {
        let law = Stalls::new(50.0, us(500), us(2000));
        let run = |stalls: Option<(Stalls, u64)>| {
            let mut q = HostQueue::new(Jitter::new(us(20), us(1000)), 9, stalls);
            (0..20_000u32).map(|i| q.admit(Instant::ZERO + us(100) * i, i)).collect::<Vec<_>>()
        };
        let (plain, stalled) = (run(None), run(Some((law, 4))));
        assert_eq!(stalled, run(Some((law, 4))));
        assert_ne!(stalled, run(Some((law, 5))));
        // Outside stalls a packet leaves exactly as without them (same jitter draw).
        let same = plain.iter().zip(&stalled).filter(|(a, b)| a == b).count();
        assert!(same > 18_000 && same < 20_000, "{same}");
    }

    #[test]
    fn same_seed_same_draws_other_streams_other_draws() {
        let draws = |seed| {
            let mut q = HostQueue::new(Jitter::new(us(20), us(1000)), seed, None);
            (0..100).map(|i| q.admit(Instant::ZERO + us(i * 100), i)).collect::<Vec<_>>()
        };
        assert_eq!(draws(1), draws(1));
        assert_ne!(draws(1), draws(2));
        assert_ne!(stream_seed(1, stream::CC_DOWNLINK), stream_seed(1, stream::CC_UPLINK));
        assert_ne!(stream_seed(1, stream::START_OFFSET), stream_seed(2, stream::START_OFFSET));
    }

    #[test]
    fn start_offsets_are_uniform_below_the_bound() {
        assert_eq!(start_offset(1, Duration::ZERO), Duration::ZERO);
        let max = Duration::from_millis(1000);
        let offsets: Vec<Duration> = (0..2000).map(|s| start_offset(s, max)).collect();
        assert!(offsets.iter().all(|&o| o < max));
        let mean = offsets.iter().map(Duration::as_secs_f64).sum::<f64>() / 2000.0;
        // Uniform on [0, 1 s): mean 0.5 s, standard error 0.29 / sqrt(2000) = 6.5 ms.
        assert!((mean - 0.5).abs() < 0.03, "{mean}");
        assert_eq!(start_offset(9, max), start_offset(9, max));
    }
}
