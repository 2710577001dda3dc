//! Test drivers shared by the BBRv1 and the BBRv2/v3 test suites: a one-bottleneck network on
//! a virtual clock, and hand-cranked ACKs for exact scenarios. Both are generic over the
//! [`Controller`], so each suite drives its own algorithm through the same network.
//!
//! [`Network`] is a sender with a bulk or periodic application, an optional token-bucket
//! policer, a FIFO bottleneck of fixed rate and buffer, and a fixed propagation RTT. It keeps
//! the bookkeeping a real path keeps (delivery-rate sampling with [`DeliveryRateEstimator`],
//! losses declared when a later packet is acknowledged) and reports to the controller as the
//! trait documents. Packets have `wire_bytes` on the link and are charged per `counting`, so a
//! packet-counted path can be compared with a byte-counted one.
//!
//! [`Driver`] hands the controller synthetic ACKs, one per call, with a rate sample that
//! covers a whole round trip at a chosen bandwidth.

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::{AckEvent, CcParams, CongestionEvent, Controller, Counting, RateSample};
use crate::path::rate::{DeliveryRateEstimator, PacketRateInfo};
use crate::time::{bytes_in, transmission_time, Instant};

pub(crate) const MSS: u64 = 1000;

pub(crate) fn params() -> CcParams {
    CcParams { mss_bytes: MSS, initial_window_pkts: 10 }
}

pub(crate) const fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// What the application offers the sender.
#[derive(Clone, Copy, Debug)]
pub(crate) enum App {
    /// Always has data.
    Bulk,
    /// One packet becomes available every period.
    Periodic(Duration),
}

/// A token-bucket policer in front of the bottleneck.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Policer {
    pub rate_bytes_per_s: u64,
    pub depth_bytes: u64,
    tokens_bytes: u64,
    last: Instant,
}

impl Policer {
    pub fn new(rate_bytes_per_s: u64, depth_bytes: u64) -> Self {
        Policer { rate_bytes_per_s, depth_bytes, tokens_bytes: depth_bytes, last: Instant::ZERO }
    }

    fn admit(&mut self, now: Instant, bytes: u64) -> bool {
        let refill = bytes_in(self.rate_bytes_per_s, now.saturating_since(self.last));
        self.tokens_bytes = (self.tokens_bytes + refill).min(self.depth_bytes);
        self.last = now;
        if self.tokens_bytes >= bytes {
            self.tokens_bytes -= bytes;
            true
        } else {
            false
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    sent: Instant,
    charge: u64,
    info: PacketRateInfo,
    /// When its ACK arrives; `None` if the policer or the bottleneck dropped it.
    ack_at: Option<Instant>,
}

/// A sender, a bottleneck and a return path, on a virtual clock.
#[derive(Debug)]
pub(crate) struct Network<C> {
    pub bbr: C,
    pub now: Instant,
    pub rate_bytes_per_s: u64,
    /// Two-way propagation delay; a test may raise it mid-run to model a route change.
    pub rtt: Duration,
    pub buffer_pkts: u64,
    pub app: App,
    pub policer: Option<Policer>,
    /// Size of every packet on the link.
    pub wire_bytes: u64,
    pub counting: Counting,
    link_free_at: Instant,
    est: DeliveryRateEstimator,
    flight: VecDeque<Sent>,
    in_flight_bytes: u64,
    next_send_at: Instant,
    min_rtt: Option<Duration>,
    app_backlog_pkts: u64,
    app_next_at: Instant,
    /// Charged bytes delivered and lost.
    pub delivered_bytes: u64,
    pub lost_bytes: u64,
}

impl<C: Controller> Network<C> {
    /// A bulk sender of MSS-sized, byte-counted packets through a `rate` bottleneck with a
    /// `buffer_pkts` buffer and `rtt`, without a policer.
    pub fn new(bbr: C, rate_bytes_per_s: u64, rtt: Duration, buffer_pkts: u64) -> Self {
        Network {
            bbr,
            now: Instant::ZERO,
            rate_bytes_per_s,
            rtt,
            buffer_pkts,
            app: App::Bulk,
            policer: None,
            wire_bytes: MSS,
            counting: Counting::Bytes,
            link_free_at: Instant::ZERO,
            est: DeliveryRateEstimator::new(),
            flight: VecDeque::new(),
            in_flight_bytes: 0,
            next_send_at: Instant::ZERO,
            min_rtt: None,
            app_backlog_pkts: 0,
            app_next_at: Instant::ZERO,
            delivered_bytes: 0,
            lost_bytes: 0,
        }
    }

    fn charge(&self) -> u64 {
        self.counting.charge(self.wire_bytes, MSS)
    }

    /// Wire bytes waiting in the bottleneck queue now.
    pub fn queue_bytes(&self) -> u64 {
        bytes_in(self.rate_bytes_per_s, self.link_free_at.saturating_since(self.now))
    }

    /// Runs for `d`, calling `observe` after every ACK the controller processed.
    pub fn run_for(&mut self, d: Duration, mut observe: impl FnMut(&Self, &AckEvent)) {
        let end = self.now + d;
        loop {
            let next_ack = self.flight.iter().find_map(|p| p.ack_at);
            let has_data = match self.app {
                App::Bulk => true,
                App::Periodic(_) => self.app_backlog_pkts > 0,
            };
            let window_open = self.in_flight_bytes + self.charge() <= self.bbr.cwnd_bytes();
            if window_open && !has_data && !self.est.is_app_limited() {
                self.est.on_app_limited(self.in_flight_bytes);
            }
            let next_send = (has_data && window_open).then(|| self.next_send_at.max(self.now));
            let next_data = match self.app {
                App::Periodic(_) if self.app_backlog_pkts == 0 => Some(self.app_next_at),
                _ => None,
            };
            let Some(t) = [next_ack, next_data, next_send].into_iter().flatten().min() else {
                self.now = end;
                return;
            };
            if t > end {
                self.now = end;
                return;
            }
            self.now = t;
            if next_ack == Some(t) {
                let ack = self.deliver_next_ack();
                observe(self, &ack);
            } else if next_data == Some(t) {
                if let App::Periodic(period) = self.app {
                    self.app_backlog_pkts += 1;
                    self.app_next_at = t + period;
                }
            } else {
                self.send();
            }
        }
    }

    fn send(&mut self) {
        let (now, charge, wire) = (self.now, self.charge(), self.wire_bytes);
        let info = self.est.on_sent(now, self.in_flight_bytes, self.in_flight_bytes + charge);
        self.in_flight_bytes += charge;
        self.bbr.on_sent(now, charge, self.in_flight_bytes);
        let admitted = self.policer.as_mut().is_none_or(|p| p.admit(now, wire));
        let fits = admitted && self.queue_bytes() + wire <= self.buffer_pkts * wire;
        let ack_at = fits.then(|| {
            let depart =
                self.link_free_at.max(now) + transmission_time(wire, self.rate_bytes_per_s);
            self.link_free_at = depart;
            depart + self.rtt
        });
        self.flight.push_back(Sent { sent: now, charge, info, ack_at });
        if let Some(rate) = self.bbr.pacing_rate_bytes_per_s() {
            self.next_send_at = now + transmission_time(charge, rate);
        }
        self.app_backlog_pkts = self.app_backlog_pkts.saturating_sub(1);
    }

    fn deliver_next_ack(&mut self) -> AckEvent {
        let now = self.now;
        let prior_in_flight_bytes = self.in_flight_bytes;
        // Packets sent before the acknowledged one and never acknowledged are lost.
        let (mut lost, mut largest_lost_sent_time) = (0, Instant::ZERO);
        while self.flight.front().is_some_and(|p| p.ack_at.is_none()) {
            let p = self.flight.pop_front().unwrap();
            lost += p.charge;
            largest_lost_sent_time = p.sent;
        }
        self.in_flight_bytes -= lost;
        self.lost_bytes += lost;
        self.est.on_lost(lost);
        if lost > 0 {
            self.bbr.on_congestion_event(&CongestionEvent {
                now,
                largest_lost_sent_time,
                lost_bytes: lost,
                in_flight_bytes: self.in_flight_bytes,
            });
        }
        let p = self.flight.pop_front().expect("an ACK is due");
        self.in_flight_bytes -= p.charge;
        self.delivered_bytes += p.charge;
        self.est.on_delivered(now, p.charge, &p.info);
        let rtt = now.saturating_since(p.sent);
        let min_rtt = self.min_rtt.map_or(rtt, |m| m.min(rtt));
        self.min_rtt = Some(min_rtt);
        let ack = AckEvent {
            now,
            newly_acked_bytes: p.charge,
            newly_lost_bytes: lost,
            largest_acked_sent_time: p.sent,
            rtt: Some(rtt),
            min_rtt: Some(min_rtt),
            prior_in_flight_bytes,
            in_flight_bytes: self.in_flight_bytes,
            delivered_bytes: self.est.delivered(),
            rate: self.est.take_sample(Some(min_rtt)),
            app_limited: p.info.is_app_limited,
            cwnd_limited: true,
            max_in_flight_bytes: 0,
        };
        self.bbr.on_ack(&ack);
        ack
    }
}

/// One synthetic ACK for [`Driver::ack`]; `..Ack::default()` fills in the rest.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ack {
    /// Time since the previous ACK.
    pub after: Duration,
    pub acked: u64,
    /// Bytes this ACK declared lost (`newly_lost_bytes`).
    pub lost: u64,
    pub rtt: Duration,
    /// Bandwidth the rate sample measures, if the ACK carries one.
    pub bw: Option<u64>,
    pub app_limited: bool,
    /// Whether the sample's packet was sent after the current round began.
    pub ends_round: bool,
    pub in_flight: u64,
    /// Send time of the acknowledged packet; default `now - rtt`.
    pub sent_at: Option<Instant>,
    /// The sample's delivered bytes; default `bw * rtt`.
    pub delivered: Option<u64>,
    /// The sample's flight; default `in_flight` plus one packet.
    pub tx_in_flight: Option<u64>,
    /// Bytes lost during the sample's flight.
    pub rs_lost: u64,
}

impl Default for Ack {
    fn default() -> Self {
        Ack {
            after: ms(1),
            acked: MSS,
            lost: 0,
            rtt: ms(100),
            bw: None,
            app_limited: false,
            ends_round: false,
            in_flight: 100 * MSS,
            sent_at: None,
            delivered: None,
            tx_in_flight: None,
            rs_lost: 0,
        }
    }
}

/// Hand-cranked ACKs: [`Driver::ack`] feeds one, [`Driver::round`] a round trip's worth at
/// once, [`Driver::clocked`] a steady ACK clock, [`Driver::loss`] a loss.
#[derive(Debug)]
pub(crate) struct Driver<C> {
    pub bbr: C,
    pub now: Instant,
    pub delivered_bytes: u64,
    /// `prior_delivered_bytes` of the last round-ending sample: samples that do not end a
    /// round reuse it, which puts their packets before the current round's start.
    last_round_prior: u64,
}

impl<C: Controller> Driver<C> {
    /// A driver whose clock starts at 1 s, after one packet was sent.
    pub fn new(bbr: C) -> Self {
        let now = Instant::from_nanos(1_000_000_000);
        let mut d = Driver { bbr, now, delivered_bytes: 0, last_round_prior: 0 };
        d.bbr.on_sent(now, MSS, MSS);
        d
    }

    /// Feeds one ACK to the controller and returns the event.
    pub fn ack(&mut self, a: Ack) -> AckEvent {
        self.now += a.after;
        // A round-ending sample comes from a packet sent after everything delivered so far.
        let prior_delivered_bytes =
            if a.ends_round { self.delivered_bytes } else { self.last_round_prior };
        if a.ends_round {
            self.last_round_prior = prior_delivered_bytes;
        }
        self.delivered_bytes += a.acked;
        let rate = a.bw.map(|bw| RateSample {
            delivered_bytes: a.delivered.unwrap_or(bytes_in(bw, a.rtt)),
            interval: a.rtt,
            prior_delivered_bytes,
            is_app_limited: a.app_limited,
            tx_in_flight_bytes: a.tx_in_flight.unwrap_or(a.in_flight + MSS),
            lost_bytes: a.rs_lost,
        });
        let ack = AckEvent {
            now: self.now,
            newly_acked_bytes: a.acked,
            newly_lost_bytes: a.lost,
            largest_acked_sent_time: a.sent_at.unwrap_or(self.now - a.rtt),
            rtt: Some(a.rtt),
            min_rtt: Some(a.rtt),
            prior_in_flight_bytes: a.in_flight + a.acked + a.lost,
            in_flight_bytes: a.in_flight,
            delivered_bytes: self.delivered_bytes,
            rate,
            app_limited: a.app_limited,
            cwnd_limited: true,
            max_in_flight_bytes: 0,
        };
        self.bbr.on_ack(&ack);
        ack
    }

    /// One round trip of `rtt` at `bw`: one ACK of a round's worth of data whose sample
    /// starts a new round.
    pub fn round(&mut self, bw: u64, rtt: Duration, in_flight: u64, app_limited: bool) -> AckEvent {
        self.ack(Ack {
            after: rtt,
            acked: bytes_in(bw, rtt).max(MSS),
            rtt,
            bw: Some(bw),
            app_limited,
            ends_round: true,
            in_flight,
            ..Ack::default()
        })
    }

    /// A steady ACK clock for `d`: one MSS acknowledged every MSS/`bw`, each with a sample of
    /// `bw`, a round ending every `rtt`, and `in_flight` bytes in flight.
    pub fn clocked(&mut self, bw: u64, rtt: Duration, in_flight: u64, d: Duration) {
        let gap = transmission_time(MSS, bw);
        let end = self.now + d;
        let mut round_end = self.now + rtt;
        while self.now + gap <= end {
            let ends_round = self.now + gap >= round_end;
            if ends_round {
                round_end += rtt;
            }
            self.ack(Ack {
                after: gap,
                rtt,
                bw: Some(bw),
                ends_round,
                in_flight,
                ..Ack::default()
            });
        }
    }

    /// Declares `bytes` lost now, from packets sent just before now.
    pub fn loss(&mut self, bytes: u64) {
        self.congestion(self.now, bytes, 100 * MSS);
    }

    /// Declares `lost_bytes` lost now, the last of them sent at `sent`, leaving
    /// `in_flight_bytes` in flight.
    pub fn congestion(&mut self, sent: Instant, lost_bytes: u64, in_flight_bytes: u64) {
        self.bbr.on_congestion_event(&CongestionEvent {
            now: self.now,
            largest_lost_sent_time: sent,
            lost_bytes,
            in_flight_bytes,
        });
    }
}
