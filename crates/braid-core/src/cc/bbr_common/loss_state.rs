//! The sender's loss state as both BBR generations track it: recovery episodes, the RTO's
//! loss state, and the undo of a spurious reduction.
//!
//! The kernel learns these from `icsk_ca_state` (`TCP_CA_Open`, `TCP_CA_Recovery`,
//! `TCP_CA_Loss`), which TCP's loss detection sets. Here the caller reports losses through
//! the [`crate::cc::Controller`] trait, so the controller keeps the state itself:
//!
//! - a loss starts a recovery episode if the lost packet was sent after the current episode
//!   began, and the episode ends once a packet sent after it began is acknowledged
//!   (RFC 9002 section 7.3.2; the kernel ends recovery when `snd_una` passes `high_seq`,
//!   which has the same effect on BBR);
//! - an RTO puts the sender in the loss state, which ends the same way;
//! - a reduction that begins from the open state arms an undo (Linux `tcp_init_undo`); if
//!   the losses prove spurious, the undo returns to open and forgets the episode's start
//!   (`tcp_undo_cwnd_reduction`), so a genuine loss from the same flight starts recovery
//!   again.
//!
//! What each generation does to its cwnd and model on these transitions stays in its own
//! module.

use crate::cc::{AckEvent, CcPhase};
use crate::time::Instant;

/// The part of the kernel's `icsk_ca_state` BBR looks at, ordered as the kernel's
/// (`TCP_CA_Open` < `TCP_CA_Recovery` < `TCP_CA_Loss`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum CaState {
    #[default]
    Open,
    Recovery,
    Loss,
}

/// Loss state, recovery episodes and the undo marker.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LossState {
    pub ca_state: CaState,
    /// The state as of the last ACK that set the cwnd (`prev_ca_state`).
    pub prev_ca_state: CaState,
    /// When the current recovery episode (or RTO) began.
    pub recovery_start: Option<Instant>,
    /// Set when recovery (or an RTO) begins from the open state, until undone: the episode
    /// start to go back to (the kernel's `undo_marker`).
    undo_prior_recovery_start: Option<Option<Instant>>,
}

impl LossState {
    /// Whether losing a packet sent at `largest_lost_sent_time` is news: it was sent after
    /// the current episode began, or there is none.
    pub fn is_new_episode(&self, largest_lost_sent_time: Instant) -> bool {
        self.recovery_start.is_none_or(|start| largest_lost_sent_time > start)
    }

    /// Arms the undo when a reduction begins from the open state (`tcp_init_undo`).
    pub fn arm_undo(&mut self) {
        if self.ca_state == CaState::Open {
            self.undo_prior_recovery_start = Some(self.recovery_start);
        }
    }

    /// A recovery episode begins at `now`. Losses during an RTO's loss state belong to it
    /// (the kernel stays in `TCP_CA_Loss`).
    pub fn start_recovery(&mut self, now: Instant) {
        self.recovery_start = Some(now);
        if self.ca_state != CaState::Loss {
            self.ca_state = CaState::Recovery;
        }
    }

    /// The retransmission timer fired at `now`: the whole flight is lost (`tcp_enter_loss`).
    pub fn enter_loss(&mut self, now: Instant) {
        self.ca_state = CaState::Loss;
        self.prev_ca_state = CaState::Loss;
        self.recovery_start = Some(now);
    }

    /// Ends a recovery episode (or the loss state) once `ack` covers a packet sent after it
    /// began; returns whether it ended.
    pub fn end_episode_if_acked(&mut self, ack: &AckEvent) -> bool {
        let ends = self.ca_state != CaState::Open
            && self.recovery_start.is_some_and(|start| ack.largest_acked_sent_time > start);
        if ends {
            self.ca_state = CaState::Open;
        }
        ends
    }

    /// The losses behind the latest reduction were spurious: back to open, with the undone
    /// episode's start forgotten. Returns false, changing nothing, if no undo is armed.
    pub fn undo(&mut self) -> bool {
        let Some(prior_recovery_start) = self.undo_prior_recovery_start.take() else {
            return false;
        };
        self.ca_state = CaState::Open;
        self.recovery_start = prior_recovery_start;
        true
    }

    /// The phase to report for a controller whose mode is `mode_phase`: ProbeRTT whenever BBR
    /// is in it (schedulers avoid a path whose cwnd is cut for it), else the loss state if
    /// not open, else the mode.
    pub fn phase(&self, mode_phase: CcPhase) -> CcPhase {
        match (mode_phase, self.ca_state) {
            (CcPhase::ProbeRtt, _) => CcPhase::ProbeRtt,
            (_, CaState::Loss) => CcPhase::Loss,
            (_, CaState::Recovery) => CcPhase::Recovery,
            (phase, CaState::Open) => phase,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    fn ack_of_packet_sent_at(sent: Instant) -> AckEvent {
        AckEvent {
            now: sent,
            newly_acked_bytes: 1000,
            newly_lost_bytes: 0,
            largest_acked_sent_time: sent,
            rtt: None,
            min_rtt: None,
            prior_in_flight_bytes: 0,
            in_flight_bytes: 0,
            delivered_bytes: 0,
            rate: None,
            app_limited: false,
            cwnd_limited: true,
            max_in_flight_bytes: 0,
        }
    }

    #[test]
    fn an_episode_ends_with_the_ack_of_a_packet_sent_after_it_began() {
        // RFC 9002 7.3.2: recovery starts at 10 ms; losses of packets sent up to 10 ms are
        // the same episode, an ACK of a packet sent at 10 ms does not end it, one sent at
        // 11 ms does.
        let mut s = LossState::default();
        assert!(s.is_new_episode(at(5)));
        s.start_recovery(at(10));
        assert_eq!(s.ca_state, CaState::Recovery);
        assert!(!s.is_new_episode(at(10)));
        assert!(s.is_new_episode(at(11)));
        assert!(!s.end_episode_if_acked(&ack_of_packet_sent_at(at(10))));
        assert!(s.end_episode_if_acked(&ack_of_packet_sent_at(at(11))));
        assert_eq!(s.ca_state, CaState::Open);
    }

    #[test]
    fn losses_during_the_rto_loss_state_belong_to_it() {
        let mut s = LossState::default();
        s.enter_loss(at(10));
        assert_eq!((s.ca_state, s.prev_ca_state), (CaState::Loss, CaState::Loss));
        s.start_recovery(at(12));
        assert_eq!(s.ca_state, CaState::Loss, "the kernel stays in TCP_CA_Loss");
        assert_eq!(s.recovery_start, Some(at(12)));
    }

    #[test]
    fn undo_is_armed_only_from_open_and_works_once() {
        let mut s = LossState::default();
        assert!(!s.undo(), "nothing armed");
        s.arm_undo();
        s.start_recovery(at(10));
        s.arm_undo(); // already in recovery: keeps the first marker
        s.start_recovery(at(20));
        assert!(s.undo());
        assert_eq!((s.ca_state, s.recovery_start), (CaState::Open, None));
        assert!(!s.undo(), "a second undo without a new episode changes nothing");
    }

    #[test]
    fn probe_rtt_is_reported_over_loss_states_and_those_over_the_mode() {
        let mut s = LossState::default();
        assert_eq!(s.phase(CcPhase::ProbeBw), CcPhase::ProbeBw);
        s.start_recovery(at(1));
        assert_eq!(s.phase(CcPhase::ProbeBw), CcPhase::Recovery);
        s.enter_loss(at(2));
        assert_eq!(s.phase(CcPhase::Startup), CcPhase::Loss);
        assert_eq!(s.phase(CcPhase::ProbeRtt), CcPhase::ProbeRtt);
    }
}
