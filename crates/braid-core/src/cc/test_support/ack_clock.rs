//! A test driver: one flow over a path with a fixed RTT and no queue, ACK-clocked (every ACK
//! releases what the window allows) and acknowledging each packet separately.

use std::collections::VecDeque;
use std::time::Duration;

use crate::cc::{AckEvent, CongestionEvent, Controller};
use crate::path::CwndUsage;
use crate::time::Instant;

pub(crate) const MSS: u64 = 1000;

#[derive(Clone, Copy, Debug)]
struct Sent {
    time: Instant,
    app_limited: bool,
}

pub(crate) struct AckClock<C: Controller> {
    pub cc: C,
    pub now: Instant,
    pub rtt: Duration,
    /// When set, the application keeps at most this many packets in flight.
    app_limit_pkts: Option<usize>,
    flight: VecDeque<Sent>,
    /// Sequence number of the next packet; the oldest in flight is `next_seq - flight.len()`.
    next_seq: u64,
    usage: CwndUsage,
}

/// An ACK of `acked_bytes` for a packet sent at `sent`, with defaults for the rest.
pub(crate) fn ack(now: Instant, sent: Instant, acked_bytes: u64) -> AckEvent {
    AckEvent {
        now,
        newly_acked_bytes: acked_bytes,
        newly_lost_bytes: 0,
        largest_acked_sent_time: sent,
        rtt: Some(now.saturating_since(sent)),
        min_rtt: Some(now.saturating_since(sent)),
        prior_in_flight_bytes: acked_bytes,
        in_flight_bytes: 0,
        delivered_bytes: 0,
        rate: None,
        app_limited: false,
        cwnd_limited: true,
        max_in_flight_bytes: 0,
    }
}

pub(crate) fn ms(v: u64) -> Instant {
    Instant::from_nanos(v * 1_000_000)
}

impl<C: Controller> AckClock<C> {
    /// Starts the flow at time zero with a full initial window in flight.
    pub(crate) fn new(cc: C, rtt: Duration) -> Self {
        Self::start(cc, rtt, None)
    }

    /// Starts a flow whose application keeps at most `cap_pkts` packets in flight.
    pub(crate) fn new_app_limited(cc: C, rtt: Duration, cap_pkts: usize) -> Self {
        Self::start(cc, rtt, Some(cap_pkts))
    }

    fn start(cc: C, rtt: Duration, app_limit_pkts: Option<usize>) -> Self {
        let flight = VecDeque::new();
        let usage = CwndUsage::new();
        let mut clock =
            AckClock { cc, now: Instant::ZERO, rtt, app_limit_pkts, flight, next_seq: 0, usage };
        clock.fill();
        clock
    }

    pub(crate) fn in_flight_bytes(&self) -> u64 {
        self.flight.len() as u64 * MSS
    }

    pub(crate) fn cwnd_pkts(&self) -> f64 {
        self.cc.cwnd_bytes() as f64 / MSS as f64
    }

    /// Sends while the window (and the application) allows.
    pub(crate) fn fill(&mut self) {
        loop {
            let cwnd = self.cc.cwnd_bytes();
            let app_room = self.app_limit_pkts.is_none_or(|cap| self.flight.len() < cap);
            if !app_room || self.in_flight_bytes() + MSS > cwnd {
                return;
            }
            // App-limited: the application, not the window, bounds the flight.
            let app_limited = self.app_limit_pkts.is_some_and(|cap| (cap as u64) * MSS < cwnd);
            self.flight.push_back(Sent { time: self.now, app_limited });
            self.next_seq += 1;
            let oldest = self.next_seq - self.flight.len() as u64;
            self.usage.on_sent(self.in_flight_bytes(), cwnd, MSS, oldest, self.next_seq);
            self.cc.on_sent(self.now, MSS, self.in_flight_bytes());
        }
    }

    /// When the oldest packet in flight will be acknowledged.
    pub(crate) fn next_ack_time(&self) -> Option<Instant> {
        self.flight.front().map(|p| p.time + self.rtt)
    }

    /// Acknowledges the oldest packet in flight at its arrival time, then refills.
    pub(crate) fn ack_one(&mut self) {
        let p = self.flight.pop_front().expect("a packet in flight");
        self.now = self.now.max(p.time + self.rtt);
        let mut ev = ack(self.now, p.time, MSS);
        ev.rtt = Some(self.rtt);
        ev.min_rtt = Some(self.rtt);
        ev.prior_in_flight_bytes = self.in_flight_bytes() + MSS;
        ev.in_flight_bytes = self.in_flight_bytes();
        ev.app_limited = p.app_limited;
        ev.cwnd_limited = self.usage.is_cwnd_limited();
        ev.max_in_flight_bytes = self.usage.max_in_flight_bytes();
        self.cc.on_ack(&ev);
        self.fill();
    }

    /// Declares the oldest packet in flight lost, detected when its ACK would have arrived.
    pub(crate) fn lose_one(&mut self) {
        let p = self.flight.pop_front().expect("a packet in flight");
        self.now = self.now.max(p.time + self.rtt);
        self.cc.on_congestion_event(&CongestionEvent {
            now: self.now,
            largest_lost_sent_time: p.time,
            lost_bytes: MSS,
            in_flight_bytes: self.in_flight_bytes(),
        });
    }

    /// The retransmission timer fires `after` from now: the whole flight is lost.
    pub(crate) fn timeout(&mut self, after: Duration) {
        self.now += after;
        self.flight.clear();
        self.cc.on_rto(self.now);
        self.fill();
    }

    /// Acknowledges everything now in flight: one round trip.
    pub(crate) fn round(&mut self) {
        for _ in 0..self.flight.len() {
            self.ack_one();
        }
    }

    /// Processes every ACK due by `end`, then moves the clock to `end`.
    pub(crate) fn run_until(&mut self, end: Instant) {
        while self.next_ack_time().is_some_and(|t| t <= end) {
            self.ack_one();
        }
        self.now = self.now.max(end);
        self.fill();
    }

    /// Runs until a packet sent at or after `since` has been acknowledged (recovery is over).
    pub(crate) fn run_past(&mut self, since: Instant) {
        loop {
            let sent = self.flight.front().expect("a packet in flight").time;
            self.ack_one();
            if sent >= since {
                return;
            }
        }
    }
}
