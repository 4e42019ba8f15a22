//! Send history: transport-wide sequence number → send time and size, so transport feedback
//! can be turned into per-packet results (libwebrtc `TransportFeedbackAdapter`, spec `gcc.md`
//! §2.1; history kept 60 s). Sequence numbers are 16 bits on the wire and unwrapped here.

use rtclab_cc::PacketResult;
use rtclab_core::{Time, TimeDelta};
use rtclab_wire::rtcp::TransportFeedback;
use std::collections::VecDeque;

const HISTORY: TimeDelta = TimeDelta::from_secs(60);

#[derive(Clone, Debug, Default)]
pub struct SendHistory {
    /// (unwrapped seq, send time, size), seq increasing by one.
    sent: VecDeque<(u64, Time, u32)>,
    next_seq: u64,
}

impl SendHistory {
    /// Records a packet; returns its unwrapped transport sequence number (put the low 16
    /// bits in the header extension).
    pub fn on_sent(&mut self, now: Time, size: u32) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.sent.push_back((seq, now, size));
        while self.sent.front().is_some_and(|x| now - x.1 > HISTORY) {
            self.sent.pop_front();
        }
        seq
    }

    fn lookup(&self, seq: u64) -> Option<(Time, u32)> {
        let first = self.sent.front()?.0;
        let i = seq.checked_sub(first)? as usize;
        self.sent.get(i).map(|x| (x.1, x.2))
    }

    /// Unwraps a 16-bit sequence number to the sent packet nearest to the newest.
    fn unwrap(&self, seq16: u16) -> u64 {
        let newest = self.next_seq.saturating_sub(1);
        let base = newest & !0xFFFF;
        let candidates =
            [base.wrapping_sub(0x10000), base, base + 0x10000].map(|b| b | seq16 as u64);
        candidates.into_iter().filter(|&c| c <= newest).max().unwrap_or(seq16 as u64)
    }

    /// Per-packet results for a TWCC report (arrival times on the receiver's clock).
    /// Packets the history no longer holds are skipped.
    pub fn on_transport_feedback(&self, fb: &TransportFeedback) -> Vec<PacketResult> {
        let base = self.unwrap(fb.base_seq);
        let mut out = Vec::with_capacity(fb.packets.len());
        for (i, (_, arrival_us)) in fb.arrivals().into_iter().enumerate() {
            let seq = base + i as u64;
            if let Some((send_time, size)) = self.lookup(seq) {
                out.push(PacketResult {
                    seq,
                    send_time,
                    arrival: arrival_us.map(|us| Time::from_micros(us.max(0) as u64)),
                    size,
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_across_16_bits() {
        let mut h = SendHistory::default();
        for i in 0..70_000u64 {
            h.on_sent(Time::from_micros(i * 10), 1000);
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
}
