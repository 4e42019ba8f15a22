//! Table-driven loss protection for media flows (`media.protection.kind = "webrtc"` or
//! `"hairpin"`): the per-frame FEC amount of the Hairpin chapter's policies, applied to a
//! congestion-controlled media flow, with NACK/RTX for what FEC does not recover.
//!
//! - `webrtc`: libwebrtc's media protection (`media_opt_util.cc`): FEC from `kFecRateTable` by
//!   the frame's bitrate and the filtered loss (maximum of 1-second means over 10 s); with
//!   retransmission on, the hybrid NACK/FEC method (`VCMNackFecMethod`, Holmer et al. 2013)
//!   scales it by the RTT sigmoid, as libwebrtc does when NACK is negotiated. The amounts are
//!   the edge-stream WebRTC_NOW/WebRTC14 code (`rtclab_transport::flows::edge_stream::webrtc`).
//! - `hairpin`: the parity of a frame's first transmission from Hairpin's solved table
//!   (λ = 10^−`lambda_exp`) for the frame's packets, the loss, the RTT and the rounds left
//!   before `deadline` (released `GetFecCnt`); retransmissions are the media sender's NACK/RTX
//!   without FEC (it resends packets, not FEC blocks), so the table's later rounds are
//!   planned but served by plain retransmission — the edge-stream kinds run Hairpin's whole
//!   loop.
//!
//! Loss is measured from the transport feedback: packets reported lost over packets reported,
//! over the last second (`webrtc`, as an RTCP receiver report's fraction lost feeds libwebrtc)
//! or the last 500 ms (`hairpin`; the released estimator counts retransmissions over two
//! frames, which this sender's feedback-paced NACK would undercount, and a shorter window
//! swings a small frame's parity between none and several packets). RTT: the retransmitter's
//! smoothed feedback RTT. FEC packets are not retransmitted (libwebrtc's FlexFEC/ULPFEC are
//! not NACKed). The FEC share of recent frames and the retransmission share of recent packets
//! are taken out of the controller's target (libwebrtc's `ProtectionBitrateCalculator`
//! subtracts the FEC and NACK rates the same way), so media + FEC + resends stay within it.
//! `webrtc` caps what protection may take at half the rate, as libwebrtc's
//! `FecControllerDefault::UpdateFecRates` does (`kProtectionOverheadRateThreshold` = 0.5,
//! field trial `WebRTC-ProtectionOverheadRateThreshold`): past it the encoder keeps half and
//! FEC + resends go over the target.

use crate::packetizer::MediaPacket;
use crate::protection::{ProtectionPolicy, ProtectionSpec};
use crate::rtx::{Retransmitter, RtxConfig};
use rtclab_cc::PacketResult;
use rtclab_core::{Time, TimeDelta};
use rtclab_transport::flows::edge_stream::policy::{BatchContext, RecoveryPolicy};
use std::collections::VecDeque;

/// Before the first RTT sample.
const DEFAULT_RTT: TimeDelta = TimeDelta::from_millis(100);
/// Gain of the retransmission-share average taken out of the target.
const SHARE_GAIN: f64 = 0.1;
/// The FEC share is measured over this many recent frames, in bytes on the wire.
const SHARE_FRAMES: usize = 30;
/// Headers per media packet (IPv4 + UDP + RTP + extensions, as the packetizer counts).
const PACKET_OVERHEAD: f64 = 48.0;

pub struct TableProtection {
    name: &'static str,
    policy: RecoveryPolicy,
    rtx: Option<Retransmitter>,
    /// The RTT estimate when retransmission is off (from the same feedback).
    rtt_only: Retransmitter,
    deadline: TimeDelta,
    loss_window: TimeDelta,
    /// (feedback time, lost, reported).
    reports: VecDeque<(Time, u32, u32)>,
    /// Recent frames' (payload, headers, parity) bytes; headers and parity over payload.
    frames: VecDeque<(f64, f64, f64)>,
    header_share: f64,
    fec_share: f64,
    /// Most of the wire rate protection (parity + resends) may take from the encoder.
    overhead_cap: Option<f64>,
    /// Media packets sent since the last feedback, and the resent share (average).
    sent_since: u32,
    rtx_share: f64,
}

impl TableProtection {
    /// `policy`: an edge-stream policy that decides per batch (`WebRtc` or `Hairpin`).
    pub fn new(
        name: &'static str,
        policy: RecoveryPolicy,
        rtx: Option<RtxConfig>,
        deadline: TimeDelta,
        loss_window: TimeDelta,
    ) -> Self {
        TableProtection {
            name,
            policy,
            rtx: rtx.map(Retransmitter::new),
            rtt_only: Retransmitter::new(RtxConfig {
                max_rtt: Some(TimeDelta::ZERO),
                ..Default::default()
            }),
            deadline,
            loss_window,
            reports: VecDeque::new(),
            frames: VecDeque::new(),
            header_share: 0.0,
            fec_share: 0.0,
            overhead_cap: None,
            sent_since: 0,
            rtx_share: 0.0,
        }
    }

    /// Protection (parity + resends) may take at most `cap` of the wire rate from the
    /// encoder (libwebrtc: 0.5).
    pub fn with_overhead_cap(mut self, cap: f64) -> Self {
        self.overhead_cap = Some(cap);
        self
    }

    fn loss(&mut self, now: Time) -> f64 {
        while self.reports.front().is_some_and(|(t, _, _)| now - *t > self.loss_window) {
            self.reports.pop_front();
        }
        let (lost, n) = self.reports.iter().fold((0, 0), |(l, n), r| (l + r.1, n + r.2));
        if n == 0 {
            0.0
        } else {
            lost as f64 / n as f64
        }
    }

    fn srtt(&self) -> TimeDelta {
        self.rtx
            .as_ref()
            .and_then(Retransmitter::srtt)
            .or(self.rtt_only.srtt())
            .unwrap_or(DEFAULT_RTT)
    }
}

impl ProtectionPolicy for TableProtection {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fec_ratio(&mut self, _now: Time, _requested: f64) -> f64 {
        0.0 // decided per frame in `fec_packets`
    }
    fn fec_packets(&mut self, now: Time, packets: u32, bytes: u64) -> Option<u32> {
        let loss = self.loss(now);
        let rtt = self.srtt();
        let c = BatchContext {
            loss,
            frame_packets: packets,
            batch_packets: packets,
            ddl_left_ms: self.deadline.as_nanos() / 1_000_000,
            rtt_ms: (rtt.as_nanos().max(0) as u64).div_ceil(1_000_000) as u32,
            retransmission: false,
            now_ms: (now.as_nanos() / 1_000_000) as i64,
            frame_kbits: bytes as f64 * 8.0 / 1e3,
        };
        let k = self.policy.parity(&c);
        // What the frame adds on the wire beyond its payload: the media packets' headers and
        // the parity packets, each as large as the frame's largest media packet (≈ bytes /
        // packets + headers). Relative to the payload, so the encoder's share is exact.
        let per = bytes as f64 / packets.max(1) as f64 + PACKET_OVERHEAD;
        self.frames.push_back((bytes as f64, packets as f64 * PACKET_OVERHEAD, k as f64 * per));
        if self.frames.len() > SHARE_FRAMES {
            self.frames.pop_front();
        }
        let (m, h, f) =
            self.frames.iter().fold((0.0, 0.0, 0.0), |(m, h, f), x| (m + x.0, h + x.1, f + x.2));
        (self.header_share, self.fec_share) = if m > 0.0 { (h / m, f / m) } else { (0.0, 0.0) };
        Some(k)
    }
    fn media_share(&self) -> f64 {
        let protection = self.fec_share + self.rtx_share;
        let wire = 1.0 + self.header_share + protection;
        match self.overhead_cap {
            // Past the cap the encoder keeps 1 − cap of the rate after headers.
            Some(cap) if protection / wire > cap => (1.0 - cap) / (1.0 + self.header_share),
            _ => 1.0 / wire,
        }
    }
    fn on_sent(&mut self, now: Time, seq: u64, p: MediaPacket) {
        self.sent_since += 1;
        if let Some(r) = self.rtx.as_mut().filter(|_| p.index < p.count) {
            r.on_sent(now, seq, p);
        }
    }
    fn on_results(&mut self, now: Time, results: &[PacketResult]) -> Vec<MediaPacket> {
        let lost = results.iter().filter(|r| r.arrival.is_none()).count() as u32;
        self.reports.push_back((now, lost, results.len() as u32));
        let resent = match &mut self.rtx {
            Some(r) => r.on_results(now, results),
            None => {
                self.rtt_only.on_results(now, results);
                Vec::new()
            }
        };
        if self.sent_since > 0 {
            let share = resent.len() as f64 / self.sent_since as f64;
            self.rtx_share += SHARE_GAIN * (share - self.rtx_share);
            self.sent_since = 0;
        }
        resent
    }
}

/// Built here, where the table-driven policies live, so that `protection.rs` (the trait and
/// the simple policies) does not import them.
impl ProtectionSpec {
    /// The policy. Fails only where Hairpin's table cannot be solved for `lambda_exp`.
    pub fn try_build(&self) -> Result<Box<dyn ProtectionPolicy>, String> {
        use rtclab_core::TimeDelta;
        use rtclab_transport::flows::edge_stream::{hairpin_table, policy::RecoveryPolicy};
        Ok(match self {
            ProtectionSpec::WebRtc { rtx } => Box::new(
                TableProtection::new(
                    if rtx.is_some() { "webrtc-nack-fec" } else { "webrtc-fec" },
                    RecoveryPolicy::WebRtc { hybrid: rtx.is_some(), filter: Default::default() },
                    *rtx,
                    TimeDelta::from_millis(100),
                    TimeDelta::from_secs(1),
                )
                .with_overhead_cap(0.5),
            ),
            ProtectionSpec::Hairpin { lambda_exp, deadline, rtx } => {
                Box::new(TableProtection::new(
                    "hairpin",
                    RecoveryPolicy::Hairpin {
                        table: hairpin_table(10f64.powf(-lambda_exp))?,
                        one_layer: false,
                    },
                    Some(*rtx),
                    *deadline,
                    TimeDelta::from_millis(500),
                ))
            }
            other => other.build(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_transport::flows::edge_stream::hairpin_table;

    fn results(at: Time, lost: u32, n: u32) -> Vec<PacketResult> {
        (0..n)
            .map(|i| PacketResult {
                seq: i as u64,
                send_time: at - TimeDelta::from_millis(30),
                arrival: (i >= lost).then_some(at - TimeDelta::from_millis(10)),
                size: 1200,
                probe_cluster: None,
                ce: false,
            })
            .collect()
    }

    #[test]
    fn webrtc_protection_follows_the_loss_and_pays_from_the_target() {
        let policy = RecoveryPolicy::WebRtc { hybrid: false, filter: Default::default() };
        let mut p = TableProtection::new(
            "webrtc",
            policy,
            None,
            TimeDelta::from_millis(100),
            TimeDelta::from_secs(1),
        );
        let t = Time::from_secs(1);
        // No loss reported: no FEC.
        p.on_results(t, &results(t, 0, 50));
        assert_eq!(p.fec_packets(t, 10, 12_000), Some(0));
        // 10 % loss: WebRTC's table (at least its 20 % floor) protects a 10-packet frame.
        p.on_results(t, &results(t, 5, 50));
        let k = p.fec_packets(t, 10, 12_000).unwrap();
        assert!((2..=10).contains(&k), "{k}");
        assert!(p.media_share() < 1.0);
    }

    #[test]
    fn webrtc_protection_takes_at_most_half_of_the_rate_from_the_encoder() {
        let policy = || RecoveryPolicy::WebRtc { hybrid: true, filter: Default::default() };
        let build = || {
            TableProtection::new(
                "webrtc",
                policy(),
                Some(RtxConfig::default()),
                TimeDelta::from_millis(100),
                TimeDelta::from_secs(1),
            )
        };
        let (mut capped, mut free) = (build().with_overhead_cap(0.5), build());
        for p in [&mut capped, &mut free] {
            let t = Time::from_secs(1);
            p.on_results(t, &results(t, 0, 50));
            p.fec_packets(t, 10, 12_000);
            // Resends worth three payloads: protection would take 3 / 4.04 of the wire.
            p.rtx_share = 3.0;
        }
        let h = capped.header_share;
        assert!(h > 0.0 && capped.fec_share == 0.0);
        assert!((free.media_share() - 1.0 / (4.0 + h)).abs() < 1e-12);
        assert!((capped.media_share() - 0.5 / (1.0 + h)).abs() < 1e-12);
        // Below the cap both give the same share.
        capped.rtx_share = 0.2;
        free.rtx_share = 0.2;
        assert_eq!(capped.media_share(), free.media_share());
    }

    #[test]
    fn hairpin_protection_reads_its_table_for_the_frame() {
        let table = hairpin_table(1e-4).unwrap();
        let policy = RecoveryPolicy::Hairpin { table, one_layer: false };
        let mut p = TableProtection::new(
            "hairpin",
            policy,
            Some(RtxConfig::default()),
            TimeDelta::from_millis(100),
            TimeDelta::from_millis(100),
        );
        let t = Time::from_secs(1);
        p.on_results(t, &results(t, 0, 50));
        assert_eq!(p.fec_packets(t, 25, 30_000), Some(0));
        // 20 % loss, RTT ≈ 20 ms: the table asks for parity.
        p.on_results(t, &results(t, 10, 50));
        let k = p.fec_packets(t, 25, 30_000).unwrap();
        assert!(k > 0, "{k}");
    }
}
