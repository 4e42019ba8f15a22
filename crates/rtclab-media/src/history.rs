//! Send history: transport-wide sequence number → send time and size, so transport feedback
//! can be turned into per-packet results (libwebrtc `TransportFeedbackAdapter`, spec `gcc.md`
//! §2.1; history kept 60 s). Sequence numbers are 16 bits on the wire and unwrapped here.
//!
//! Data in flight as libwebrtc counts it (`RetrievePacketFeedback`): a report of sequence number
//! s takes every packet up to s out of flight, reported or not — a packet whose own report was
//! lost with its feedback does not stay in flight until it leaves the history.

use rtclab_cc::PacketResult;
use rtclab_core::{Time, TimeDelta};
use rtclab_wire::rtcp::TransportFeedback;
use std::collections::VecDeque;

const HISTORY: TimeDelta = TimeDelta::from_secs(60);

#[derive(Clone, Copy, Debug)]
struct Sent {
    seq: u64,
    time: Time,
    size: u32,
    probe_cluster: Option<u32>,
    /// Still counted in flight.
    in_flight: bool,
}

#[derive(Clone, Debug, Default)]
pub struct SendHistory {
    /// Seq increasing by one.
    sent: VecDeque<Sent>,
    next_seq: u64,
    /// Bytes sent after the newest sequence number any feedback reported (received or lost).
    in_flight: u64,
    /// The newest sequence number a feedback reported.
    acked_through: Option<u64>,
}

impl SendHistory {
    /// Records a packet; returns its unwrapped transport sequence number (put the low 16
    /// bits in the header extension).
    pub fn on_sent(&mut self, now: Time, size: u32, probe_cluster: Option<u32>) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.sent.push_back(Sent { seq, time: now, size, probe_cluster, in_flight: true });
        self.in_flight += size as u64;
        while let Some(old) = self.sent.front().copied().filter(|x| now - x.time > HISTORY) {
            if old.in_flight {
                self.in_flight -= old.size as u64;
            }
            self.sent.pop_front();
        }
        seq
    }

    /// Treats everything in flight as lost (a probe timeout): later feedback about those
    /// packets no longer counts them twice.
    pub fn abandon_in_flight(&mut self) {
        for e in self.sent.iter_mut() {
            e.in_flight = false;
        }
        self.in_flight = 0;
    }

    /// The next sequence number to be sent.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// Bytes sent and not yet covered by feedback (libwebrtc's data in flight).
    pub fn in_flight_bytes(&self) -> u64 {
        self.in_flight
    }

    /// A feedback reported `seq`: it and every packet before it leave the bytes in flight.
    fn ack_through(&mut self, seq: u64) {
        if self.acked_through.is_some_and(|a| seq <= a) {
            return;
        }
        let Some(first) = self.sent.front().map(|e| e.seq) else { return };
        let from = self.acked_through.map_or(first, |a| (a + 1).max(first));
        for s in from..=seq {
            let Some(e) = self.index(s).and_then(|i| self.sent.get_mut(i)) else { break };
            if e.in_flight {
                e.in_flight = false;
                self.in_flight -= e.size as u64;
            }
        }
        self.acked_through = Some(seq);
    }

    fn index(&self, seq: u64) -> Option<usize> {
        let first = self.sent.front()?.seq;
        let i = seq.checked_sub(first)? as usize;
        (i < self.sent.len()).then_some(i)
    }

    /// Unwraps a 16-bit sequence number to the sent packet nearest to the newest.
    pub fn unwrap(&self, seq16: u16) -> u64 {
        let newest = self.next_seq.saturating_sub(1);
        let base = newest & !0xFFFF;
        let candidates =
            [base.wrapping_sub(0x10000), base, base + 0x10000].map(|b| b | seq16 as u64);
        candidates.into_iter().filter(|&c| c <= newest).max().unwrap_or(seq16 as u64)
    }

    /// Per-packet results for consecutive sequence numbers from `base` with their arrival
    /// times and whether each arrived CE-marked (None: not received); packets the history no
    /// longer holds are skipped.
    pub fn results(
        &mut self,
        base: u64,
        arrivals: impl IntoIterator<Item = Option<(Time, bool)>>,
    ) -> Vec<PacketResult> {
        let mut out = Vec::new();
        for (i, a) in arrivals.into_iter().enumerate() {
            let (arrival, ce) = (a.map(|(t, _)| t), a.is_some_and(|(_, ce)| ce));
            let seq = base + i as u64;
            let Some(idx) = self.index(seq) else { continue };
            self.ack_through(seq);
            let Some(e) = self.sent.get(idx) else { continue };
            out.push(PacketResult {
                seq,
                send_time: e.time,
                arrival,
                size: e.size,
                probe_cluster: e.probe_cluster,
                ce,
            });
        }
        out
    }

    /// Per-packet results for a TWCC report (arrival times on the receiver's clock).
    pub fn on_transport_feedback(&mut self, fb: &TransportFeedback) -> Vec<PacketResult> {
        let base = self.unwrap(fb.base_seq);
        let arrivals = fb
            .arrivals()
            .into_iter()
            .map(|(_, a)| a.map(|us| (Time::from_micros(us.max(0) as u64), false)));
        self.results(base, arrivals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_across_16_bits() {
        let mut h = SendHistory::default();
        for i in 0..70_000u64 {
            h.on_sent(Time::from_micros(i * 10), 1000, None);
        }
        // 65_536 + 100 was sent as 100 on the wire.
        let arrivals: Vec<Option<i64>> = (0..5).map(|k| Some(1_000_000 + k * 500)).collect();
        let fb = TransportFeedback::from_arrivals(1, 2, 100, 0, &arrivals).unwrap();
        let r = h.on_transport_feedback(&fb);
        assert_eq!(r.len(), 5);
        assert_eq!(r[0].seq, 65_636);
        assert_eq!(r[0].send_time, Time::from_micros(656_360));
        assert_eq!(r[4].arrival, Some(Time::from_micros(1_002_000)));
    }

    #[test]
    fn in_flight_counts_unreported_bytes() {
        let mut h = SendHistory::default();
        for i in 0..10u64 {
            h.on_sent(Time::from_millis(i), 1000, (i < 5).then_some(7));
        }
        assert_eq!(h.in_flight_bytes(), 10_000);
        let at = |ms| Some((Time::from_millis(ms), false));
        let r = h.results(2, [at(50), None, at(52)]);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].probe_cluster, Some(7));
        // 2-4 reported: 0-4 are out of flight.
        assert_eq!(h.in_flight_bytes(), 5_000);
        // Reported twice: counted once.
        h.results(2, [at(50)]);
        assert_eq!(h.in_flight_bytes(), 5_000);
        // Packets leave the history after 60 s.
        h.on_sent(Time::from_secs(61), 500, None);
        assert_eq!(h.in_flight_bytes(), 500);
    }

    #[test]
    fn a_report_takes_every_earlier_packet_out_of_flight() {
        // The feedback covering packets 0-3 was lost; the next one reports 4-5: libwebrtc
        // counts 0-3 out of flight too (they are not reported, only no longer in flight).
        let mut h = SendHistory::default();
        for i in 0..8u64 {
            h.on_sent(Time::from_millis(i), 1000, None);
        }
        let at = |ms| Some((Time::from_millis(ms), false));
        let r = h.results(4, [at(40), None]);
        assert_eq!(r.iter().map(|r| r.seq).collect::<Vec<_>>(), vec![4, 5]);
        assert_eq!(h.in_flight_bytes(), 2_000);
        // A late report of packet 1 still gives its result, without counting it twice.
        let r = h.results(1, [at(41)]);
        assert_eq!(r.len(), 1);
        assert_eq!(h.in_flight_bytes(), 2_000);
        // Old entries leaving the history take nothing more out of flight.
        h.on_sent(Time::from_secs(61), 500, None);
        assert_eq!(h.in_flight_bytes(), 500);
    }
}
