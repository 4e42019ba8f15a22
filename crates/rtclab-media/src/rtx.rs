//! Retransmission of media packets the receiver did not get: the effect of RTCP generic NACK
//! (RFC 4585 §6.2.1) answered on an RTX stream (RFC 4588), driven here by the per-packet
//! transport feedback the sender already has (a packet the feedback reports as not received is
//! NACKed), so at the feedback cadence rather than on the receiver's first gap.
//!
//! As in libwebrtc's `RtpPacketHistory`/`RTPSender::ReSendPacket`, a packet is resent only
//! while it can still be useful: when the round-trip time is below `max_rtt` (the fairness
//! study saw Zoom trade retransmission for FEC when the RTT grows, spec `copa-qlibra-tcp.md`
//! §2.7-2.8) and the packet's frame was captured less than `max_age` ago. Each sent copy may be
//! resent once; a lost retransmission is itself eligible while young enough.
//!
//! RTT: now − send time of the newest packet a feedback reports as received, smoothed with
//! gain 1/8 (RFC 6298); the feedback's own delay (at most one packet interval for the newest
//! packet) is included.

use crate::packetizer::MediaPacket;
use rtclab_cc::PacketResult;
use rtclab_core::{Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtxConfig {
    /// No retransmission while the smoothed RTT is at or above this.
    pub max_rtt: TimeDelta,
    /// No retransmission of a packet whose frame is older than this.
    pub max_age: TimeDelta,
}

impl Default for RtxConfig {
    fn default() -> Self {
        RtxConfig { max_rtt: TimeDelta::from_millis(400), max_age: TimeDelta::from_secs(1) }
    }
}

#[derive(Clone, Debug)]
pub struct Retransmitter {
    cfg: RtxConfig,
    /// (transport seq, media packet), seq increasing; only media packets are kept.
    store: VecDeque<(u64, MediaPacket)>,
    srtt: Option<TimeDelta>,
}

impl Retransmitter {
    pub fn new(cfg: RtxConfig) -> Self {
        Retransmitter { cfg, store: VecDeque::new(), srtt: None }
    }

    pub fn srtt(&self) -> Option<TimeDelta> {
        self.srtt
    }

    /// A media packet left with transport sequence number `seq`.
    pub fn on_sent(&mut self, now: Time, seq: u64, p: MediaPacket) {
        // A retransmission keeps its content's first send time.
        self.store.push_back((seq, MediaPacket { first_sent: p.first_sent.or(Some(now)), ..p }));
        while self.store.front().is_some_and(|(_, f)| now - f.capture_time > self.cfg.max_age) {
            self.store.pop_front();
        }
    }

    /// Feedback results in; the packets to resend out (marked `rtx`).
    pub fn on_results(&mut self, now: Time, results: &[PacketResult]) -> Vec<MediaPacket> {
        if let Some(newest) = results.iter().filter(|r| r.arrival.is_some()).max_by_key(|r| r.seq) {
            let sample = now - newest.send_time;
            self.srtt = Some(match self.srtt {
                None => sample,
                Some(s) => s + (sample - s).mul_f64(0.125),
            });
        }
        let rtt_ok = self.srtt.is_some_and(|s| s < self.cfg.max_rtt);
        let mut out = Vec::new();
        for r in results.iter().filter(|r| r.arrival.is_none()) {
            let Ok(i) = self.store.binary_search_by_key(&r.seq, |e| e.0) else { continue };
            let (_, p) = self.store.remove(i).expect("index from the search");
            if rtt_ok && now - p.capture_time <= self.cfg.max_age {
                out.push(MediaPacket { rtx: true, ..p });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mp(frame: u64, capture_ms: u64) -> MediaPacket {
        MediaPacket {
            frame_id: frame,
            capture_time: Time::from_millis(capture_ms),
            index: 0,
            count: 1,
            size: 1000,
            rtx: false,
            key: false,
            encode_ns: 0,
            xor_groups: 0,
            first_sent: None,
        }
    }

    fn res(seq: u64, sent_ms: u64, arrived: Option<u64>) -> PacketResult {
        PacketResult {
            seq,
            send_time: Time::from_millis(sent_ms),
            arrival: arrived.map(Time::from_millis),
            size: 1000,
            probe_cluster: None,
            ce: false,
        }
    }

    #[test]
    fn resends_lost_packets_once_while_the_rtt_is_short() {
        let mut r = Retransmitter::new(RtxConfig::default());
        for s in 0..4 {
            r.on_sent(Time::from_millis(s), s, mp(s, s));
        }
        let out = r.on_results(
            Time::from_millis(60),
            &[res(0, 0, Some(25)), res(1, 1, None), res(2, 2, Some(30))],
        );
        assert_eq!(r.srtt(), Some(TimeDelta::from_millis(58)));
        assert_eq!(out.len(), 1);
        assert!(out[0].rtx && out[0].frame_id == 1);
        // Reported lost again (overlapping feedback): not resent twice.
        assert!(r.on_results(Time::from_millis(70), &[res(1, 1, None)]).is_empty());
    }

    #[test]
    fn no_retransmission_at_high_rtt_or_for_old_frames() {
        let mut r = Retransmitter::new(RtxConfig::default());
        r.on_sent(Time::ZERO, 0, mp(0, 0));
        r.on_sent(Time::ZERO, 1, mp(1, 0));
        // RTT 500 ms ≥ 400 ms.
        assert!(r
            .on_results(Time::from_millis(500), &[res(0, 0, Some(250)), res(1, 0, None)])
            .is_empty());
        let mut r = Retransmitter::new(RtxConfig::default());
        r.on_sent(Time::ZERO, 0, mp(0, 0));
        r.on_sent(Time::ZERO, 1, mp(1, 0));
        r.on_sent(Time::from_millis(1_100), 2, mp(2, 1_100));
        // Frame 1 was captured 1.1 s ago: dropped from the store.
        assert!(r
            .on_results(Time::from_millis(1_150), &[res(1, 0, None), res(2, 1_100, Some(1_120))])
            .is_empty());
    }
}
