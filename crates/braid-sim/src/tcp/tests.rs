//! End-to-end tests of the TCP model: a sender and a receiver joined by a tiny deterministic
//! network (one bottleneck of fixed rate with a drop-tail buffer and a fixed one-way delay
//! forward, the same delay without a bottleneck for ACKs), driven by an ordered event list.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use braid_core::cc::{AckEvent, CcAlgorithm, CcMetrics, CcPhase, CongestionEvent, Controller};
use braid_core::time::{transmission_time, Instant};

use super::*;

const MSS: u64 = 1448;
const MBPS_50_BYTES_PER_S: u64 = 50_000_000 / 8;

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn at_ms(v: u64) -> Instant {
    Instant::ZERO + ms(v)
}

/// What the test controller was told.
#[derive(Debug, Default)]
struct CcLog {
    congestion_events: Vec<CongestionEvent>,
    rtos: u64,
    acks: u64,
    last_ack: Option<AckEvent>,
    /// `on_spurious_congestion` calls.
    spurious: u64,
    /// For [`Recording`]: the window before each congestion event and after each undo.
    cwnd_before_congestion: Vec<u64>,
    cwnd_after_undo: Vec<u64>,
    /// `delivered_bytes` of the first ACK that reported an app-limited sample.
    first_app_limited_delivered: Option<u64>,
    /// Sums of `on_sent`'s bytes and of the ACKs' newly acknowledged bytes.
    sent_bytes: u64,
    acked_bytes: u64,
}

/// A test-only controller with a constant window and an optional constant pacing rate.
#[derive(Debug)]
struct FixedWindow {
    cwnd_bytes: u64,
    pacing: Option<u64>,
    log: Arc<Mutex<CcLog>>,
}

fn fixed(cwnd_pkts: u64, pacing: Option<u64>) -> (Box<dyn Controller>, Arc<Mutex<CcLog>>) {
    let log = Arc::new(Mutex::new(CcLog::default()));
    let cc = FixedWindow { cwnd_bytes: cwnd_pkts * MSS, pacing, log: log.clone() };
    (Box::new(cc), log)
}

impl Controller for FixedWindow {
    fn on_sent(&mut self, _now: Instant, bytes: u64, _in_flight_bytes: u64) {
        self.log.lock().unwrap().sent_bytes += bytes;
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        let mut log = self.log.lock().unwrap();
        log.acks += 1;
        log.acked_bytes += ack.newly_acked_bytes;
        log.last_ack = Some(*ack);
        if ack.app_limited && log.first_app_limited_delivered.is_none() {
            log.first_app_limited_delivered = Some(ack.delivered_bytes);
        }
    }
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        self.log.lock().unwrap().congestion_events.push(*event);
    }
    fn on_rto(&mut self, _now: Instant) {
        self.log.lock().unwrap().rtos += 1;
    }
    fn on_spurious_congestion(&mut self, _now: Instant) {
        self.log.lock().unwrap().spurious += 1;
    }
    fn cwnd_bytes(&self) -> u64 {
        self.cwnd_bytes
    }
    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        self.pacing
    }
    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            cwnd_bytes: self.cwnd_bytes,
            ssthresh_bytes: None,
            pacing_rate_bytes_per_s: self.pacing,
            bw_estimate_bytes_per_s: None,
            min_rtt: None,
            phase: CcPhase::CongestionAvoidance,
        }
    }
    fn name(&self) -> &'static str {
        "fixed"
    }
}

/// A real controller whose congestion events and undos are logged.
#[derive(Debug)]
struct Recording {
    inner: Box<dyn Controller>,
    log: Arc<Mutex<CcLog>>,
}

fn recording(alg: CcAlgorithm) -> (Box<dyn Controller>, Arc<Mutex<CcLog>>) {
    let log = Arc::new(Mutex::new(CcLog::default()));
    let inner = alg.build(TcpConfig::default().cc_params());
    (Box::new(Recording { inner, log: log.clone() }), log)
}

impl Controller for Recording {
    fn on_sent(&mut self, now: Instant, bytes: u64, in_flight_bytes: u64) {
        self.inner.on_sent(now, bytes, in_flight_bytes);
    }
    fn on_ack(&mut self, ack: &AckEvent) {
        self.inner.on_ack(ack);
    }
    fn on_congestion_event(&mut self, event: &CongestionEvent) {
        let mut log = self.log.lock().unwrap();
        log.congestion_events.push(*event);
        log.cwnd_before_congestion.push(self.inner.cwnd_bytes());
        self.inner.on_congestion_event(event);
    }
    fn on_rto(&mut self, now: Instant) {
        self.log.lock().unwrap().rtos += 1;
        self.inner.on_rto(now);
    }
    fn on_spurious_congestion(&mut self, now: Instant) {
        self.inner.on_spurious_congestion(now);
        let mut log = self.log.lock().unwrap();
        log.spurious += 1;
        log.cwnd_after_undo.push(self.inner.cwnd_bytes());
    }
    fn cwnd_bytes(&self) -> u64 {
        self.inner.cwnd_bytes()
    }
    fn pacing_rate_bytes_per_s(&self) -> Option<u64> {
        self.inner.pacing_rate_bytes_per_s()
    }
    fn metrics(&self) -> CcMetrics {
        self.inner.metrics()
    }
    fn name(&self) -> &'static str {
        self.inner.name()
    }
}

/// The network between the two ends.
#[derive(Clone, Copy, Debug)]
struct Path {
    rate_bytes_per_s: u64,
    one_way: Duration,
    buffer_pkts: usize,
}

impl Path {
    /// 50 Mbit/s, 40 ms RTT, 500-packet buffer: one path of the reference experiment.
    fn reference() -> Self {
        Path { rate_bytes_per_s: MBPS_50_BYTES_PER_S, one_way: ms(20), buffer_pkts: 500 }
    }
}

#[derive(Debug)]
enum Event {
    /// The bottleneck finished serialising its head packet.
    LinkDone,
    DataArrives(Segment),
    AckArrives(Ack),
    /// The application writes this many bytes into a stream.
    Write(u64),
}

type DropRule = Box<dyn FnMut(Instant, &Segment) -> bool>;
type DelayRule = Box<dyn FnMut(&Segment) -> Duration>;

/// Sender + network + receiver, run in time order. Ties: network events first (in scheduling
/// order), then the sender's timer, then the receiver's.
struct Harness {
    now: Instant,
    sender: TcpSender,
    receiver: TcpReceiver,
    path: Path,
    events: BTreeMap<(Instant, u64), Event>,
    next_event_id: u64,
    /// Bottleneck buffer with each packet's extra delay; the head is being serialised.
    queue: VecDeque<(Segment, Duration)>,
    /// Injected losses, applied before the bottleneck.
    drop: DropRule,
    /// Extra propagation delay per segment after the bottleneck (reordering).
    delay: DelayRule,
    /// Recount the scoreboard after every event (O(window)): for small runs.
    check_invariants: bool,
    sends: Vec<(Instant, Segment)>,
    arrivals: Vec<(Instant, Segment)>,
    /// ACKs as the receiver emitted them, with the segment whose arrival triggered them.
    acks: Vec<(Instant, Ack, Option<Segment>)>,
    rto_times: Vec<Instant>,
    delivered_bytes: u64,
    queue_drops: u64,
    injected_drops: u64,
    max_outstanding_bytes: u64,
    max_in_flight_bytes: u64,
}

impl Harness {
    fn new(config: TcpConfig, cc: Box<dyn Controller>, path: Path) -> Self {
        Harness::with_ends(TcpSender::new(config, cc), TcpReceiver::new(config), path)
    }

    fn with_ends(sender: TcpSender, receiver: TcpReceiver, path: Path) -> Self {
        Harness {
            now: Instant::ZERO,
            sender,
            receiver,
            path,
            events: BTreeMap::new(),
            next_event_id: 0,
            queue: VecDeque::new(),
            drop: Box::new(|_, _| false),
            delay: Box::new(|_| Duration::ZERO),
            check_invariants: false,
            sends: Vec::new(),
            arrivals: Vec::new(),
            acks: Vec::new(),
            rto_times: Vec::new(),
            delivered_bytes: 0,
            queue_drops: 0,
            injected_drops: 0,
            max_outstanding_bytes: 0,
            max_in_flight_bytes: 0,
        }
    }

    /// A stream between the two ends; `writes` are (time, bytes) the application writes.
    fn stream(
        config: TcpConfig,
        cc: Box<dyn Controller>,
        path: Path,
        writes: impl IntoIterator<Item = (Instant, u64)>,
    ) -> Self {
        let mut h =
            Harness::with_ends(TcpSender::stream(config, cc), TcpReceiver::stream(config), path);
        for (at, bytes) in writes {
            h.schedule(at, Event::Write(bytes));
        }
        h
    }

    fn with_drop(mut self, rule: impl FnMut(Instant, &Segment) -> bool + 'static) -> Self {
        self.drop = Box::new(rule);
        self
    }

    fn with_delay(mut self, rule: impl FnMut(&Segment) -> Duration + 'static) -> Self {
        self.delay = Box::new(rule);
        self
    }

    fn schedule(&mut self, at: Instant, event: Event) {
        self.events.insert((at, self.next_event_id), event);
        self.next_event_id += 1;
    }

    fn serialisation(&self, seg: &Segment) -> Duration {
        transmission_time(u64::from(seg.wire_len()), self.path.rate_bytes_per_s)
    }

    fn enqueue(&mut self, seg: Segment) {
        if (self.drop)(self.now, &seg) {
            self.injected_drops += 1;
            return;
        }
        if self.queue.len() >= self.path.buffer_pkts {
            self.queue_drops += 1;
            return;
        }
        let extra = (self.delay)(&seg);
        self.queue.push_back((seg, extra));
        if self.queue.len() == 1 {
            let done = self.now + self.serialisation(&seg);
            self.schedule(done, Event::LinkDone);
        }
    }

    /// Collects everything both ends want to send now.
    fn drain(&mut self, trigger: Option<Segment>) {
        while let Some(seg) = self.sender.poll_transmit(self.now) {
            self.sends.push((self.now, seg));
            self.enqueue(seg);
        }
        while let Some(ack) = self.receiver.poll_ack(self.now) {
            self.acks.push((self.now, ack, trigger));
            let at = self.now + self.path.one_way;
            self.schedule(at, Event::AckArrives(ack));
        }
        let m = self.sender.metrics();
        self.max_outstanding_bytes = self.max_outstanding_bytes.max(m.outstanding_bytes);
        self.max_in_flight_bytes = self.max_in_flight_bytes.max(m.in_flight_bytes);
        if self.check_invariants {
            self.sender.check_invariants();
        }
    }

    /// Runs until both ends are complete; returns the completion time. Panics on a stall.
    fn run(&mut self, limit: Instant) -> Instant {
        self.drain(None);
        while !(self.sender.is_complete() && self.receiver.is_complete()) {
            self.step(limit);
        }
        self.now
    }

    /// Processes the earliest pending thing.
    fn step(&mut self, limit: Instant) {
        let next_event = self.events.first_key_value().map(|(k, _)| k.0);
        let sender_timer = self.sender.poll_timeout();
        let receiver_timer = self.receiver.poll_timeout();
        let t = [next_event, sender_timer, receiver_timer]
            .into_iter()
            .flatten()
            .min()
            .expect("deadlock: nothing scheduled and the transfer is not complete");
        assert!(t >= self.now, "time went backwards: {t:?} < {:?}", self.now);
        assert!(t <= limit, "not complete by {limit:?}: {:?}", self.sender.metrics());
        self.now = t;
        let mut trigger = None;
        if next_event == Some(t) {
            let (_, event) = self.events.pop_first().unwrap();
            match event {
                Event::LinkDone => {
                    let (seg, extra) = self.queue.pop_front().unwrap();
                    let at = self.now + self.path.one_way + extra;
                    self.schedule(at, Event::DataArrives(seg));
                    if let Some((next, _)) = self.queue.front().copied() {
                        let done = self.now + self.serialisation(&next);
                        self.schedule(done, Event::LinkDone);
                    }
                }
                Event::DataArrives(seg) => {
                    self.arrivals.push((self.now, seg));
                    self.delivered_bytes += self.receiver.handle_segment(self.now, &seg);
                    trigger = Some(seg);
                }
                Event::AckArrives(ack) => self.sender.handle_ack(self.now, &ack),
                Event::Write(bytes) => self.sender.write(bytes),
            }
        } else if sender_timer == Some(t) {
            let rtos = self.sender.metrics().rto_count;
            self.sender.handle_timeout(t);
            if self.sender.metrics().rto_count > rtos {
                self.rto_times.push(t);
            }
        } else {
            self.receiver.handle_timeout(t);
        }
        self.drain(trigger);
    }

    /// Checks the end state every test expects: all bytes delivered exactly once, in order.
    fn assert_delivered_exactly_once(&self, config: &TcpConfig) {
        assert!(self.sender.is_complete());
        assert!(self.receiver.is_complete());
        assert_eq!(self.delivered_bytes, config.total_bytes);
        assert_eq!(self.receiver.bytes_delivered(), config.total_bytes);
        assert_eq!(self.sender.metrics().bytes_acked, config.total_bytes);
        assert_eq!(self.sender.metrics().in_flight_bytes, 0);
        assert_eq!(self.sender.poll_timeout(), None, "no timer left once complete");
    }
}

fn config_segments(segments: u64) -> TcpConfig {
    TcpConfig { total_bytes: segments * MSS, ..TcpConfig::default() }
}

/// A deterministic pseudo-random drop rule (64-bit LCG), dropping about `per_mille` / 1000.
fn random_drops(seed: u64, per_mille: u64) -> impl FnMut(Instant, &Segment) -> bool {
    let mut state = seed;
    move |_, _| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) % 1000 < per_mille
    }
}

/// Drops the first transmission of each listed segment.
fn drop_first_transmission_of(seqs: &'static [u64]) -> impl FnMut(Instant, &Segment) -> bool {
    move |_, seg| !seg.retransmission && seqs.contains(&seg.seq)
}

const ALGORITHMS: [CcAlgorithm; 3] = [CcAlgorithm::NewReno, CcAlgorithm::Cubic, CcAlgorithm::Bbr];

#[test]
fn first_flight_is_the_initial_window() {
    for alg in ALGORITHMS {
        let config = config_segments(1000);
        let mut h = Harness::new(config, alg.build(config.cc_params()), Path::reference());
        h.drain(None);
        while !h.events.values().any(|e| matches!(e, Event::AckArrives(_))) {
            h.step(at_ms(1000));
        }
        let first_ack = h.events.iter().find(|(_, e)| matches!(e, Event::AckArrives(_))).unwrap();
        let first_ack_time = first_ack.0 .0;
        let first_flight = h.sends.iter().filter(|(t, _)| *t < first_ack_time).count();
        assert_eq!(first_flight, 10, "{}", alg.as_str());
        assert!(h.sends.iter().take(10).all(|(_, s)| !s.retransmission));
    }
}

#[test]
fn every_byte_is_delivered_once_in_order_without_loss() {
    let config = TcpConfig { total_bytes: 5_000_000 + 123, ..TcpConfig::default() };
    let (cc, log) = fixed(100, None);
    let mut h = Harness::new(config, cc, Path::reference());
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.retransmissions, m.lost_segments, m.rto_count), (0, 0, 0));
    assert_eq!(h.receiver.metrics().duplicate_segments, 0);
    assert!(log.lock().unwrap().congestion_events.is_empty());
    // The last segment is short and was delivered.
    assert_eq!(h.arrivals.last().unwrap().1.len_bytes, (config.total_bytes % MSS) as u32);
}

#[test]
fn every_byte_is_delivered_once_under_heavy_loss() {
    // The fixed window (1000 segments) overflows BDP + buffer (172 + 100 segments) every round,
    // and 2% of the remaining segments are dropped at random on top.
    let config = TcpConfig { total_bytes: 3_000_000, ..TcpConfig::default() };
    let (cc, _log) = fixed(1000, None);
    let path = Path { buffer_pkts: 100, ..Path::reference() };
    let mut h = Harness::new(config, cc, path).with_drop(random_drops(7, 20));
    h.check_invariants = true;
    h.run(at_ms(120_000));
    h.assert_delivered_exactly_once(&config);
    assert!(h.queue_drops > 100 && h.injected_drops > 10);
    assert!(h.sender.metrics().retransmissions >= h.queue_drops + h.injected_drops - 50);
}

#[test]
fn every_algorithm_completes_a_lossy_download() {
    for alg in ALGORITHMS {
        let config = TcpConfig { total_bytes: 2_000_000, ..TcpConfig::default() };
        let path = Path { buffer_pkts: 50, ..Path::reference() };
        let mut h = Harness::new(config, alg.build(config.cc_params()), path)
            .with_drop(random_drops(11, 10));
        h.check_invariants = true;
        h.run(at_ms(600_000));
        h.assert_delivered_exactly_once(&config);
    }
}

/// RFC 6937 section 3 (Linux `tcp_cwnd_reduction`): a Reno sender that detects a loss with a
/// full window in flight keeps sending in proportion to what is delivered (about ssthresh /
/// prior_cwnd, a half, of each ACK's segments) from the first ACK of the recovery on. Without
/// PRR the window drops to ssthresh at once and nothing new leaves until the flight has fallen
/// below it, more than 40 ms later here (the slow start's queue has lengthened the round trip).
#[test]
fn prr_spreads_the_reduction_over_the_recovery_where_the_plain_reduction_pauses() {
    let run = |prr: bool| {
        // Linux's RTO: the slow start's queue has pushed the RTT well above the smoothed one,
        // and RFC 6298's RTO (the smoothed RTT plus a variance that has decayed) would expire
        // before the forced first retransmission is acknowledged.
        let config = TcpConfig { linux_rto: true, ..config_segments(3000) };
        let (cc, log) = recording(CcAlgorithm::NewReno);
        // A buffer the slow start never fills: the one drop is the only loss.
        let path = Path { buffer_pkts: 5000, ..Path::reference() };
        let mut h = Harness::new(config, cc, path).with_drop(drop_first_transmission_of(&[1200]));
        h.sender = h.sender.with_prr(prr);
        h.check_invariants = true;
        h.run(at_ms(60_000));
        h.assert_delivered_exactly_once(&config);
        assert_eq!(h.sender.metrics().congestion_events, 1, "one loss, one episode");
        let start = log.lock().unwrap().congestion_events[0].now;
        let new_sends: Vec<Instant> = h
            .sends
            .iter()
            .filter(|(t, s)| !s.retransmission && *t >= start)
            .map(|(t, _)| *t)
            .collect();
        let within =
            |ms: u64| new_sends.iter().filter(|&&t| t < start + Duration::from_millis(ms)).count();
        (within(10), new_sends[0].saturating_since(start), h.sender.metrics().rto_count)
    };
    let (prr_10, prr_first, prr_rtos) = run(true);
    let (plain_10, plain_first, plain_rtos) = run(false);
    assert_eq!((prr_rtos, plain_rtos), (0, 0));
    assert_eq!(plain_10, 0, "the plain reduction sends nothing new at first");
    // 50 Mbit/s delivers about 41 segments in 10 ms; PRR sends about half of them again.
    assert!((12..30).contains(&prr_10), "PRR keeps sending from the start: {prr_10} in 10 ms");
    assert!(prr_first < Duration::from_millis(2), "PRR's first new segment: {prr_first:?}");
    assert!(
        plain_first > Duration::from_millis(40),
        "the plain reduction waits for the flight to fall below ssthresh: {plain_first:?}"
    );
}

#[test]
fn a_single_drop_is_repaired_by_rack_without_rto() {
    let config = config_segments(2000);
    let (cc, log) = fixed(40, None);
    let mut h =
        Harness::new(config, cc, Path::reference()).with_drop(drop_first_transmission_of(&[100]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!(m.rto_count, 0);
    assert_eq!(m.tlp_count, 0);
    assert_eq!((m.retransmissions, m.lost_segments), (1, 1));
    assert_eq!(m.congestion_events, 1);
    assert_eq!(m.spurious_recoveries, 0);
    let log = log.lock().unwrap();
    assert_eq!(log.congestion_events.len(), 1);
    assert_eq!(log.congestion_events[0].lost_bytes, MSS);
    assert_eq!((log.rtos, log.spurious), (0, 0));
    // The retransmission left about one RTT after the original (3 SACKs: reo_wnd = 0).
    let sent = |retx: bool| h.sends.iter().find(|(_, s)| s.seq == 100 && s.retransmission == retx);
    let delay = sent(true).unwrap().0.saturating_since(sent(false).unwrap().0);
    assert!(delay > ms(40) && delay < ms(60), "{delay:?}");
}

#[test]
fn losses_within_one_window_make_one_recovery_episode() {
    // 100 and 110 are lost from the same window: RACK finds them on different ACKs, so the
    // controller hears two loss batches, but they form a single recovery episode.
    let config = config_segments(2000);
    let (cc, log) = fixed(40, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_drop(drop_first_transmission_of(&[100, 110]));
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.congestion_events, m.lost_segments, m.rto_count), (1, 2, 0));
    assert!(!m.in_recovery);
    let log = log.lock().unwrap();
    assert_eq!(log.congestion_events.len(), 2);
    let (first, second) = (log.congestion_events[0], log.congestion_events[1]);
    assert!(second.now > first.now);
    assert!(second.largest_lost_sent_time > first.largest_lost_sent_time);
}

#[test]
fn a_tail_loss_is_repaired_by_a_loss_probe() {
    let config = config_segments(200);
    let (cc, log) = fixed(40, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_drop(drop_first_transmission_of(&[197, 198, 199]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!(m.rto_count, 0, "{m:?}");
    assert_eq!(m.tlp_count, 1);
    // The probe retransmitted the last segment (no new data left); its SACK exposed 197-198.
    let probe = h.sends.iter().find(|(_, s)| s.retransmission).unwrap().1;
    assert_eq!(probe.seq, 199);
    assert_eq!(m.retransmissions, 3);
    assert_eq!(log.lock().unwrap().congestion_events.len(), 1);
}

#[test]
fn a_blackout_longer_than_the_rto_backs_off_exponentially() {
    let config = TcpConfig { total_bytes: 3_000_000, ..TcpConfig::default() };
    let (cc, log) = fixed(20, None);
    let blackout = at_ms(300)..at_ms(3_300);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_drop(move |now, _| blackout.contains(&now));
    h.check_invariants = true;
    h.run(at_ms(60_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert!(m.rto_count >= 3, "{m:?}");
    assert_eq!(log.lock().unwrap().rtos, m.rto_count);
    let t = &h.rto_times;
    let (d1, d2) = (t[1].saturating_since(t[0]), t[2].saturating_since(t[1]));
    assert!(d1 >= ms(400), "first backoff doubles an RTO of at least 200 ms: {d1:?}");
    assert_eq!(d2, d1 * 2, "RFC 6298 5.5: the timer doubles: {t:?}");
    // After the blackout the backoff is gone: RTO back to its computed value.
    assert!(m.rto < ms(1000), "{m:?}");
}

#[test]
fn an_ack_of_retransmitted_data_takes_its_rtt_sample_from_the_timestamp() {
    // Linux `tcp_ack_update_rtt`: Karn's rule leaves no sample when everything newly acked was
    // retransmitted, but an ACK that advances snd_una then measures now - TSecr (RFC 7323
    // section 4). Three segments leave at 0 and are never acknowledged; the timers (a loss
    // probe, then the RTO) retransmit them, the last retransmission at time R; an ACK of all
    // three at R + 50 ms echoing TSval R is a 50 ms sample, for the estimator (its first: SRTT
    // 50 ms, RFC 6298 2.2) and for the controller.
    let config = config_segments(3);
    let (cc, log) = fixed(10, None);
    let mut s = TcpSender::new(config, cc);
    let first: Vec<Segment> = std::iter::from_fn(|| s.poll_transmit(Instant::ZERO)).collect();
    assert_eq!(first.len(), 3);
    let mut last_retransmission = Instant::ZERO;
    while s.metrics().rto_count == 0 {
        let t = s.poll_timeout().expect("a timer is armed while data is outstanding");
        s.handle_timeout(t);
        while let Some(seg) = s.poll_transmit(t) {
            assert!(seg.retransmission);
            last_retransmission = seg.ts_val;
        }
    }
    assert!(last_retransmission > Instant::ZERO);
    let now = last_retransmission + ms(50);
    s.handle_ack(now, &Ack { cum_ack: 3, ts_ecr: last_retransmission, ..Ack::default() });
    assert_eq!(log.lock().unwrap().last_ack.unwrap().rtt, Some(ms(50)));
    assert_eq!(s.metrics().srtt, Some(ms(50)));
}

#[test]
fn a_sack_of_retransmitted_data_alone_has_no_rtt_sample() {
    // `tcp_ack_update_rtt` takes TSecr only for an ACK that advances snd_una (FLAG_ACKED): a
    // SACK of a retransmission leaves the ACK without a sample. Segment 0 is never
    // acknowledged; segments 1 and 2 leave at 0 too, so the loss probe retransmits segment 2
    // (the last sent, RFC 8985 section 7.3) at P; an ACK at P + 50 ms still expecting segment
    // 0 SACKs segment 2.
    let config = config_segments(3);
    let (cc, log) = fixed(10, None);
    let mut s = TcpSender::new(config, cc);
    while s.poll_transmit(Instant::ZERO).is_some() {}
    let p = s.poll_timeout().unwrap();
    s.handle_timeout(p);
    let probe = s.poll_transmit(p).expect("the loss probe");
    assert_eq!((probe.seq, probe.retransmission), (2, true));
    let mut ack = Ack { cum_ack: 0, ts_ecr: p, ..Ack::default() };
    ack.sack[0] = SackBlock { start: 2, end: 3 };
    ack.sack_count = 1;
    s.handle_ack(p + ms(50), &ack);
    assert_eq!(log.lock().unwrap().last_ack.unwrap().rtt, None);
    assert_eq!(s.metrics().srtt, None);
}

const HALF_MS: Duration = Duration::from_micros(500);
const THREE_MS: Duration = Duration::from_millis(3);

/// Delays the first transmission of `seq` by `extra` after the bottleneck.
fn delay_first_transmission_of(
    list: &'static [(u64, Duration)],
) -> impl FnMut(&Segment) -> Duration {
    move |seg| {
        let hit = list.iter().find(|(s, _)| *s == seg.seq && !seg.retransmission);
        hit.map_or(Duration::ZERO, |(_, d)| *d)
    }
}

#[test]
fn reordering_beyond_three_segments_is_taken_for_loss_then_undone_by_the_timestamp() {
    // Segment 1000 arrives 3 ms late: about 12 later segments overtake it. With no reordering
    // seen yet, three SACKs make reo_wnd zero and RACK retransmits it (spuriously: the fixed
    // window leaves room). The late original fills the hole before the retransmission
    // arrives, so the ACK echoes the original's TSval, older than the retransmission: Linux's
    // `tcp_packet_delayed` proves the recovery spurious and undoes it, and RACK has now seen
    // reordering.
    let config = config_segments(3000);
    let (cc, log) = fixed(100, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_delay(delay_first_transmission_of(&[(1000, THREE_MS)]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.retransmissions, m.congestion_events), (1, 1), "{m:?}");
    assert_eq!(m.spurious_recoveries, 1, "{m:?}");
    assert!(m.reordering_seen);
    assert_eq!(log.lock().unwrap().spurious, 1);
}

#[test]
fn a_hole_filled_by_the_retransmission_is_not_undone_even_if_the_original_arrives_later() {
    // Segment 1000's original is 300 ms late: its retransmission fills the hole first, so the
    // ACK echoes the retransmission's TSval and the reduction stands (Linux would need DSACK).
    let config = config_segments(3000);
    let (cc, log) = fixed(100, None);
    let late = Duration::from_millis(300);
    let mut h = Harness::new(config, cc, Path::reference()).with_delay(move |seg: &Segment| {
        if seg.seq == 1000 && !seg.retransmission {
            late
        } else {
            Duration::ZERO
        }
    });
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.retransmissions, m.congestion_events, m.rto_count), (1, 1, 0), "{m:?}");
    assert_eq!(m.spurious_recoveries, 0, "{m:?}");
    assert_eq!(log.lock().unwrap().spurious, 0);
}

#[test]
fn a_late_original_arriving_before_its_retransmission_undoes_the_reduction() {
    // Segment 300 arrives 3 ms late, overtaken by some 12 segments before any reordering was
    // seen: RACK declares it lost and CUBIC cuts its window to 0.7x. The pipe then exceeds the
    // window, so the retransmission waits, and the original arrives first: nothing was
    // retransmitted and the only "lost" segment was delivered, so the episode was spurious.
    let config = config_segments(3000);
    let (cc, log) = recording(CcAlgorithm::Cubic);
    // A buffer slow start cannot overflow, so the only "loss" is the late segment.
    let path = Path { buffer_pkts: 10_000, ..Path::reference() };
    let mut h =
        Harness::new(config, cc, path).with_delay(delay_first_transmission_of(&[(300, THREE_MS)]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.congestion_events, m.lost_segments, m.retransmissions), (1, 1, 0), "{m:?}");
    assert_eq!(m.spurious_recoveries, 1);
    assert!(m.reordering_seen, "the late original proves reordering");
    let log = log.lock().unwrap();
    assert_eq!(log.spurious, 1);
    assert_eq!(log.congestion_events.len(), 1);
    assert!(
        log.cwnd_after_undo[0] >= log.cwnd_before_congestion[0],
        "undo restores the window: {:?} before, {:?} after",
        log.cwnd_before_congestion,
        log.cwnd_after_undo
    );
}

#[test]
fn a_drop_repaired_by_retransmission_is_not_undone() {
    let config = config_segments(3000);
    let (cc, log) = recording(CcAlgorithm::Cubic);
    let path = Path { buffer_pkts: 10_000, ..Path::reference() };
    let mut h = Harness::new(config, cc, path).with_drop(drop_first_transmission_of(&[300]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert_eq!((m.congestion_events, m.retransmissions, m.rto_count), (1, 1, 0), "{m:?}");
    assert_eq!(m.spurious_recoveries, 0);
    let log = log.lock().unwrap();
    assert_eq!(log.spurious, 0);
    assert!(log.cwnd_after_undo.is_empty());
}

#[test]
fn once_reordering_was_seen_the_reordering_window_absorbs_it() {
    // Segment 500 is overtaken by two segments only: it arrives while RACK still waits
    // (fewer than three SACKed, reo_wnd = min_rtt / 4), so it proves reordering. Afterwards
    // reo_wnd stays min_rtt / 4 = 10 ms and the 3 ms late segment 1000 is not retransmitted.
    let config = config_segments(3000);
    let (cc, _) = fixed(100, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_delay(delay_first_transmission_of(&[(500, HALF_MS), (1000, THREE_MS)]));
    h.check_invariants = true;
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let m = h.sender.metrics();
    assert!(m.reordering_seen);
    assert_eq!((m.retransmissions, m.congestion_events, m.rto_count), (0, 0, 0));
}

#[test]
fn delayed_acks_acknowledge_every_second_segment() {
    let config = config_segments(100);
    let (cc, _) = fixed(10, None);
    let mut h = Harness::new(config, cc, Path::reference());
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    // Quick-ACK mode first (one ACK per segment), then one ACK per two segments.
    let quick = receiver::QUICKACK_SEGMENTS as usize;
    assert!(h.acks[..quick].iter().enumerate().all(|(i, (_, a, _))| a.cum_ack == i as u64 + 1));
    assert_eq!(h.acks.len() - quick, (100 - quick) / 2);
    assert!(h.acks.iter().all(|(_, a, _)| a.cum_ack % 2 == 0 || a.cum_ack <= quick as u64));
    assert!(h.acks.iter().all(|(_, a, _)| a.sack_count == 0));
}

#[test]
fn an_odd_last_segment_is_acknowledged_by_the_delayed_ack_timer() {
    let quick = u64::from(receiver::QUICKACK_SEGMENTS);
    let config = config_segments(quick + 5);
    let (cc, _) = fixed(10, None);
    let mut h = Harness::new(config, cc, Path::reference());
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    assert_eq!(h.acks.len() as u64, quick + 3);
    let arrival = h.arrivals.iter().find(|(_, s)| s.seq == quick + 4).unwrap().0;
    let (ack_time, ack, _) = h.acks.last().unwrap();
    assert_eq!(ack.cum_ack, quick + 5);
    assert_eq!(ack_time.saturating_since(arrival), ms(40));
}

#[test]
fn without_delayed_acks_every_segment_is_acknowledged() {
    let config = TcpConfig { delayed_ack: false, ..config_segments(100) };
    let (cc, _) = fixed(10, None);
    let mut h = Harness::new(config, cc, Path::reference());
    h.run(at_ms(10_000));
    assert_eq!(h.acks.len(), 100);
}

#[test]
fn sack_blocks_lead_with_the_segment_that_triggered_them() {
    let config = config_segments(500);
    let (cc, _) = fixed(60, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_drop(drop_first_transmission_of(&[100, 105, 110, 115, 300]));
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let mut out_of_order_acks = 0;
    for (_, ack, trigger) in &h.acks {
        let Some(seg) = trigger else { continue };
        if seg.seq > ack.cum_ack {
            out_of_order_acks += 1;
            assert!(ack.sack[0].contains(seg.seq), "{ack:?} after {seg:?}");
        }
    }
    assert!(out_of_order_acks > 10);
    // Up to 3 blocks were reported while the four holes were open.
    assert!(h.acks.iter().any(|(_, a, _)| a.sack_count == 3));
    assert!(h.acks.iter().all(|(_, a, _)| {
        let b = a.sack_blocks();
        b.iter().all(|x| x.start > a.cum_ack && !x.is_empty())
    }));
    assert_eq!(h.sender.metrics().rto_count, 0);
}

#[test]
fn the_receive_window_caps_the_data_outstanding() {
    let config = TcpConfig { total_bytes: 20_000_000, ..TcpConfig::default() };
    let (cc, _) = fixed(100_000, None);
    let path = Path { buffer_pkts: 10_000, ..Path::reference() };
    let mut h = Harness::new(config, cc, path);
    h.run(at_ms(60_000));
    h.assert_delivered_exactly_once(&config);
    assert!(h.max_outstanding_bytes <= config.rwnd_bytes);
    assert!(h.max_outstanding_bytes > config.rwnd_bytes - MSS, "{}", h.max_outstanding_bytes);
    assert_eq!(h.sender.metrics().retransmissions, 0);
}

#[test]
fn pacing_spaces_departures_at_the_controllers_rate() {
    let config = config_segments(200);
    let rate = 1_000_000; // bytes per second, well below the bottleneck
    let (cc, _) = fixed(1000, Some(rate));
    let mut h = Harness::new(config, cc, Path::reference());
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    // Linux does not pace the first 10 segments.
    assert!(h.sends[..10].iter().all(|(t, _)| *t == Instant::ZERO));
    let gap = transmission_time(MSS, rate);
    assert_eq!(gap, Duration::from_micros(1448));
    for w in h.sends[9..].windows(2) {
        assert_eq!(w[1].0.saturating_since(w[0].0), gap, "{:?}", w);
    }
}

#[test]
fn goodput_reaches_95_percent_of_a_50_mbps_bottleneck() {
    let config = TcpConfig { total_bytes: 20_000_000, ..TcpConfig::default() };
    // 400 segments: above the BDP (173 full frames at 40 ms) and below BDP + buffer.
    let (cc, _) = fixed(400, None);
    let mut h = Harness::new(config, cc, Path::reference());
    let done = h.run(at_ms(60_000));
    h.assert_delivered_exactly_once(&config);
    let goodput_bps = config.total_bytes as f64 * 8.0 / done.as_secs_f64();
    let ceiling_bps = 50e6 * MSS as f64 / 1500.0;
    assert!(goodput_bps >= 0.95 * ceiling_bps, "{:.2} Mbit/s", goodput_bps / 1e6);
    assert_eq!(h.queue_drops, 0);
    // The controller saw RTT samples and rate samples.
    let m = h.sender.metrics();
    assert!(m.min_rtt.unwrap() >= ms(40) && m.srtt.unwrap() < ms(150));
}

#[test]
fn the_controller_hears_about_every_delivered_byte() {
    let config = config_segments(300);
    let (cc, log) = fixed(30, None);
    let mut h = Harness::new(config, cc, Path::reference())
        .with_drop(drop_first_transmission_of(&[50, 51, 200]));
    h.run(at_ms(10_000));
    h.assert_delivered_exactly_once(&config);
    let log = log.lock().unwrap();
    let last = log.last_ack.unwrap();
    assert_eq!(last.delivered_bytes, config.total_bytes);
    assert_eq!(last.in_flight_bytes, 0);
    assert!(log.acks as usize == h.acks.len());
    // Two separate episodes: 50-51 together, 200 later.
    assert_eq!(log.congestion_events.len(), 2);
    assert_eq!(log.congestion_events[0].lost_bytes, 2 * MSS);
}

#[test]
fn a_full_receive_window_is_not_application_limited() {
    // rwnd of 20 segments under a 40-segment window: the sender is receive-window-limited with
    // data waiting the whole time, and a lost segment keeps snd_una (and the window) pinned for
    // a recovery. Linux marks a sample app-limited only when the write queue is empty; marking
    // rwnd-limited ones would stop the controller's growth. Only the tail (everything sent)
    // may be app-limited.
    let total = 2000;
    let config = TcpConfig { rwnd_bytes: 20 * MSS, ..config_segments(total) };
    let (cc, log) = fixed(40, None);
    let mut h =
        Harness::new(config, cc, Path::reference()).with_drop(drop_first_transmission_of(&[100]));
    h.run(at_ms(60_000));
    h.assert_delivered_exactly_once(&config);
    let first = log.lock().unwrap().first_app_limited_delivered;
    assert!(first.is_none_or(|d| d >= (total - 20) * MSS), "app-limited at {first:?} bytes");
}

// ---------------------------------------------------------------- streams

/// Runs a stream harness until `bytes` are delivered in order.
fn run_stream_until_delivered(h: &mut Harness, bytes: u64, limit: Instant) {
    h.drain(None);
    while h.receiver.bytes_delivered() < bytes {
        h.step(limit);
    }
}

#[test]
fn a_stream_delivers_every_written_byte_once_in_order_despite_loss() {
    // 2000 frames of 1534 bytes written at once (a burst from the tunnel's queue), 1% loss.
    let config = TcpConfig::default();
    let total = 2000 * 1534;
    let (cc, _) = fixed(40, None);
    let mut h = Harness::stream(config, cc, Path::reference(), [(Instant::ZERO, total)])
        .with_drop(random_drops(7, 10));
    run_stream_until_delivered(&mut h, total, at_ms(60_000));
    assert_eq!(h.receiver.bytes_delivered(), total);
    assert!(h.injected_drops > 0);
    // Everything was written before the first segment left: every new segment but the last is
    // one full MSS, and a retransmission repeats its original's length.
    let new: Vec<u32> =
        h.sends.iter().filter(|(_, s)| !s.retransmission).map(|(_, s)| s.len_bytes).collect();
    assert_eq!(new.iter().map(|&l| u64::from(l)).sum::<u64>(), total);
    assert!(new[..new.len() - 1].iter().all(|&l| u64::from(l) == MSS));
    assert!(!h.sender.is_complete(), "a stream never completes");
    // Let the last ACKs arrive: then nothing is unacknowledged and nothing waits.
    while let Some(t) = h.events.first_key_value().map(|(k, _)| k.0) {
        h.step(t);
    }
    assert_eq!((h.sender.unacked_bytes(), h.sender.notsent_bytes()), (0, 0));
    assert_eq!(h.sender.acked_bytes(), total);
}

#[test]
fn a_stream_sends_short_writes_at_once_and_coalesces_what_waits_for_the_window() {
    // 300-byte writes every millisecond for 2 s. With room in the window, each leaves alone
    // as a 300-byte segment (TCP_NODELAY, no Nagle); behind a 2-segment window over a 40 ms RTT
    // (72 kB/s against 300 kB/s written), writes pile up and leave as full segments.
    let writes = || (0..2000).map(|i| (at_ms(i), 300));
    let total = 2000 * 300;
    let (cc, _) = fixed(100, None);
    let mut open = Harness::stream(TcpConfig::default(), cc, Path::reference(), writes());
    run_stream_until_delivered(&mut open, total, at_ms(10_000));
    assert!(open.sends.iter().all(|(_, s)| s.len_bytes == 300), "one segment per write");

    let (cc, _) = fixed(2, None);
    let mut tight = Harness::stream(TcpConfig::default(), cc, Path::reference(), writes());
    run_stream_until_delivered(&mut tight, total, at_ms(60_000));
    let full = tight.sends.iter().filter(|(_, s)| u64::from(s.len_bytes) == MSS).count();
    assert!(full * 10 >= tight.sends.len() * 9, "{full} of {} segments full", tight.sends.len());
    assert!(tight.sends.iter().all(|(_, s)| u64::from(s.len_bytes) <= MSS));
    assert_eq!(tight.receiver.bytes_delivered(), total);
}

/// A stream counts packets as Linux does: with a window of 4 segments, 300-byte writes that
/// each leave alone put at most 4 segments in flight (byte counting would let 19 of them into
/// 4 MSS), every one of them counts one MSS in the pipe, and the controller hears of one MSS
/// per segment sent and acknowledged.
#[test]
fn a_stream_counts_each_segment_as_one_mss_whatever_its_length() {
    let writes = (0..400).map(|i| (Instant::from_nanos(i * 2_500_000), 300));
    let total = 400 * 300;
    let (cc, log) = fixed(4, None);
    let mut h = Harness::stream(TcpConfig::default(), cc, Path::reference(), writes);
    let mut most_in_flight = 0;
    while h.receiver.bytes_delivered() < total {
        h.step(at_ms(60_000));
        let m = h.sender.metrics();
        assert_eq!(m.outstanding_bytes % MSS, 0, "whole segments: {}", m.outstanding_bytes);
        assert!(m.in_flight_bytes <= 4 * MSS, "pipe {} over 4 segments", m.in_flight_bytes);
        most_in_flight = most_in_flight.max(m.outstanding_bytes / MSS);
    }
    assert_eq!(most_in_flight, 4, "the window of 4 packets is used");
    assert!(h.sends.iter().any(|(_, s)| s.len_bytes == 300), "short segments leave alone");
    while h.sender.unacked_bytes() > 0 {
        h.step(at_ms(60_000));
    }
    let log = log.lock().unwrap();
    assert_eq!(log.sent_bytes, h.sends.len() as u64 * MSS, "one MSS per segment sent");
    let acked_segments = h.sends.iter().filter(|(_, s)| !s.retransmission).count() as u64;
    assert_eq!(log.acked_bytes, acked_segments * MSS, "one MSS per segment acknowledged");
}

#[test]
fn a_stream_receiver_counts_out_of_order_segments_of_any_length() {
    // Segments of 300 bytes, the second delayed past the third: the third waits, then both
    // are delivered with their own lengths.
    let config = TcpConfig { delayed_ack: false, ..TcpConfig::default() };
    let mut rx = TcpReceiver::stream(config);
    let seg =
        |seq, len_bytes| Segment { seq, len_bytes, retransmission: false, ts_val: Instant::ZERO };
    assert_eq!(rx.handle_segment(at_ms(0), &seg(0, 300)), 300);
    assert_eq!(rx.handle_segment(at_ms(1), &seg(2, 700)), 0);
    assert_eq!(rx.handle_segment(at_ms(2), &seg(1, 100)), 800);
    assert_eq!((rx.rcv_nxt(), rx.bytes_delivered()), (3, 1100));
    assert!(!rx.is_complete());
}

/// A modelled Linux TCP's BBR provisions its cwnd for the kernel's TSO bursts
/// (`bbr_tso_segs_goal`), Braid's tunnels' BBR for one packet; everything else is the kernel's
/// default and the phase seed passes through.
#[test]
fn linux_bbr_provisions_for_tso_bursts_with_the_kernel_parameters() {
    use braid_core::cc::bbr::{BbrConfig, SendQuantum};
    let linux = LinuxCc::bbr(Some(7));
    assert_eq!(linux.send_quantum, SendQuantum::LinuxTso);
    assert_eq!(linux.cycle_seed, 7);
    let plain = BbrConfig { cycle_seed: 7, send_quantum: SendQuantum::OnePacket, ..linux };
    assert_eq!(plain, BbrConfig { cycle_seed: 7, ..BbrConfig::default() });
    assert_eq!(LinuxCc::bbr(None).cycle_seed, 0);
    assert_eq!(BbrConfig::default().send_quantum, SendQuantum::OnePacket);
}

/// Delays the first transmissions of the segments in `range` by `extra` after the bottleneck.
fn delay_first_transmissions_in(
    range: std::ops::Range<u64>,
    extra: Duration,
) -> impl FnMut(&Segment) -> Duration {
    move |seg| {
        if range.contains(&seg.seq) && !seg.retransmission {
            extra
        } else {
            Duration::ZERO
        }
    }
}

#[test]
fn a_held_run_of_segments_is_undone_once_the_originals_overtake_the_retransmissions() {
    // A reorder buffer releasing a held stream late: segments 1000..1100 arrive 30 ms late,
    // overtaken by the following ones. At the first SACKs RACK marks the whole run lost and
    // the sender starts retransmitting it from 1000. The late originals then arrive in order,
    // each cumulative ACK echoing its original's TSval, older than the first retransmission.
    // As soon as no retransmission is in flight (the cumulative ACK passed them all), Linux's
    // partial undo (`tcp_try_undo_partial`, `tcp_undo_cwnd_reduction` with `unmark_loss`)
    // clears the lost marks: the rest of the run is never retransmitted. The sender paces at
    // half the bottleneck's rate, so the originals' ACKs come faster than its retransmissions
    // (as in the lab, where BBR's pacing held Linux to 6-18 of some 440 marked lost).
    let run = |linux_undo: bool| {
        let config = TcpConfig { linux_undo, ..config_segments(3000) };
        let (cc, log) = fixed(200, Some(MBPS_50_BYTES_PER_S / 2));
        let path = Path { buffer_pkts: 10_000, ..Path::reference() };
        let mut h = Harness::new(config, cc, path)
            .with_delay(delay_first_transmissions_in(1000..1100, Duration::from_millis(30)));
        h.check_invariants = true;
        h.run(at_ms(10_000));
        h.assert_delivered_exactly_once(&config);
        let spurious = log.lock().unwrap().spurious;
        (h.sender.metrics(), spurious)
    };
    let (m, spurious) = run(true);
    assert_eq!((m.congestion_events, m.spurious_recoveries, m.rto_count), (1, 1, 0), "{m:?}");
    assert!(m.lost_segments >= 50, "the run looked lost at once: {m:?}");
    assert!(
        m.retransmissions * 4 < m.lost_segments,
        "the undo stopped the retransmissions early: {m:?}"
    );
    assert_eq!(spurious, 1);
    // The model before (`e2e.linux_undo = false`) undoes only once nothing is marked lost, so
    // it retransmits every segment of the run it marked.
    let (old, _) = run(false);
    assert_eq!(old.retransmissions, old.lost_segments, "{old:?}");
    assert!(old.retransmissions >= 4 * m.retransmissions, "{old:?} against {m:?}");
}
