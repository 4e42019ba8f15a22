//! Retransmission of media packets the receiver did not get: the effect of RTCP generic NACK
//! (RFC 4585 §6.2.1) answered on an RTX stream (RFC 4588), driven here by the per-packet
//! transport feedback the sender already has (a packet the feedback reports as not received is
//! NACKed), so at the feedback cadence rather than on the receiver's first gap.
//!
//! A packet is resent only while it can still be useful, in one of two ways (`RtxKeep`):
//!
//! - `FrameAge` (the application models' default): when the round-trip time is below `max_rtt`
//!   (the fairness study saw Zoom trade retransmission for FEC when the RTT grows, spec
//!   `copa-qlibra-tcp.md` §2.7-2.8) and the packet's frame was captured less than `max_age` ago.
//! - `SentHistory` (`RtxConfig::libwebrtc`, the `webrtc` protection's): as libwebrtc's
//!   `RtpPacketHistory` keeps a sent packet for `max(kMinPacketDuration = 1 s,
//!   kMinPacketDurationRtt = 3 × RTT)` after it was sent and `RTPSender::ReSendPacket` resends
//!   what is still there, at any RTT — the hybrid NACK/FEC method never turns NACK off
//!   (`VCMLossProtectionLogic` creates `VCMNackFecMethod(kLowRttNackMs, -1)`: no high-RTT
//!   threshold).
//!
//! Each sent copy may be resent once; a lost retransmission is itself eligible while young
//! enough.
//!
//! RTT: now − send time of the newest packet a feedback reports as received, smoothed with
//! gain 1/8 (RFC 6298); the feedback's own delay (at most one packet interval for the newest
//! packet) is included.

use crate::packetizer::MediaPacket;
use rtclab_cc::PacketResult;
use rtclab_core::{Time, TimeDelta};
use std::collections::VecDeque;

/// How long a sent packet stays resendable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RtxKeep {
    /// Until its frame is `max_age` old (counted from capture).
    FrameAge,
    /// For max(`max_age`, 3 × the smoothed RTT) after it was sent (libwebrtc's
    /// `RtpPacketHistory`).
    SentHistory,
}

/// libwebrtc's `RtpPacketHistory::kMinPacketDurationRtt`.
const HISTORY_RTT_FACTOR: u32 = 3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtxConfig {
    /// No retransmission while the smoothed RTT is at or above this (None: at any RTT).
    pub max_rtt: Option<TimeDelta>,
    /// The shortest time a packet stays resendable (`keep` says from when).
    pub max_age: TimeDelta,
    pub keep: RtxKeep,
}

impl Default for RtxConfig {
    fn default() -> Self {
        RtxConfig {
            max_rtt: Some(TimeDelta::from_millis(400)),
            max_age: TimeDelta::from_secs(1),
            keep: RtxKeep::FrameAge,
        }
    }
}

impl RtxConfig {
    /// libwebrtc's NACK/RTX: no RTT threshold, a sent packet kept max(1 s, 3 × RTT).
    pub fn libwebrtc() -> Self {
        RtxConfig { max_rtt: None, max_age: TimeDelta::from_secs(1), keep: RtxKeep::SentHistory }
    }
}

#[derive(Clone, Debug)]
pub struct Retransmitter {
    cfg: RtxConfig,
    /// (transport seq, when sent, media packet), seq increasing; only media packets are kept.
    store: VecDeque<(u64, Time, MediaPacket)>,
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
        let p = MediaPacket { first_sent: p.first_sent.or(Some(now)), ..p };
        self.store.push_back((seq, now, p));
        while self.store.front().is_some_and(|&(_, sent, f)| !self.resendable(now, sent, &f)) {
            self.store.pop_front();
        }
    }

    /// Whether a packet sent at `sent` may still be resent at `now`.
    fn resendable(&self, now: Time, sent: Time, p: &MediaPacket) -> bool {
        match self.cfg.keep {
            RtxKeep::FrameAge => now - p.capture_time <= self.cfg.max_age,
            RtxKeep::SentHistory => {
                let rtt =
                    self.srtt.unwrap_or(TimeDelta::ZERO).mul_f64(f64::from(HISTORY_RTT_FACTOR));
                now - sent <= self.cfg.max_age.max(rtt)
            }
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
        let rtt_ok = match self.cfg.max_rtt {
            Some(max) => self.srtt.is_some_and(|s| s < max),
            None => true,
        };
        let mut out = Vec::new();
        for r in results.iter().filter(|r| r.arrival.is_none()) {
            let Ok(i) = self.store.binary_search_by_key(&r.seq, |e| e.0) else { continue };
            let (_, sent, p) = self.store.remove(i).expect("index from the search");
            if rtt_ok && self.resendable(now, sent, &p) {
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
    #[test]
    fn libwebrtc_history_resends_at_any_rtt_while_the_packet_is_young() {
        // An 800 ms RTT (past the application models' 400 ms limit): still resent.
        let mut r = Retransmitter::new(RtxConfig::libwebrtc());
        r.on_sent(Time::ZERO, 0, mp(0, 0));
        r.on_sent(Time::ZERO, 1, mp(1, 0));
        let out = r.on_results(Time::from_millis(800), &[res(0, 0, Some(400)), res(1, 0, None)]);
        assert_eq!(out.len(), 1);
        assert_eq!(r.srtt(), Some(TimeDelta::from_millis(800)));
        // Kept max(1 s, 3 × RTT) = 2.4 s after it was sent, whatever its frame's age: a packet
        // sent at 1.5 s for a frame captured at 0 is resent at 3.8 s, not at 4.0 s.
        r.on_sent(Time::from_millis(1_500), 2, mp(2, 0));
        r.on_sent(Time::from_millis(1_500), 3, mp(3, 0));
        let at = |ms| Time::from_millis(ms);
        assert_eq!(r.on_results(at(3_800), &[res(2, 1_500, None)]).len(), 1);
        assert!(r.on_results(at(4_000), &[res(3, 1_500, None)]).is_empty());
        // With a limit set, the RTT stops it as before.
        let mut r = Retransmitter::new(RtxConfig {
            max_rtt: Some(TimeDelta::from_millis(400)),
            ..RtxConfig::libwebrtc()
        });
        r.on_sent(Time::ZERO, 0, mp(0, 0));
        r.on_sent(Time::ZERO, 1, mp(1, 0));
        assert!(r.on_results(at(800), &[res(0, 0, Some(400)), res(1, 0, None)]).is_empty());
    }
}
