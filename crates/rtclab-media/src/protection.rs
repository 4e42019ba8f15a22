//! Loss protection as its own component of the media sender, chosen in the scenario
//! (`media.protection`), not an output of congestion control: how much forward error
//! correction each frame carries, and which lost packets are retransmitted.
//!
//! - `auto` (default): what the flow's application model prescribes — the fairness study's
//!   Zoom-like model asks for loss-adaptive FEC (through `CcTarget::fec_ratio`, because its
//!   rate accounts for it) and NACK/RTX below its RTT limit; every other controller asks for
//!   neither.
//! - `none`: no FEC, no retransmission.
//! - `fixed`: a constant FEC ratio and, optionally, NACK/RTX (`rtx.rs`).
//! - `webrtc`, `hairpin`: the per-frame FEC of WebRTC's protection tables or Hairpin's solved
//!   table, with NACK/RTX (`table_protection.rs`).
//!
//! Other policies implement [`ProtectionPolicy`] and plug in through
//! `MediaSender::with_protection`.

use crate::packetizer::{FecCode, MediaPacket};
use crate::rtx::{Retransmitter, RtxConfig};
use rtclab_cc::PacketResult;
use rtclab_core::Time;

/// A sender's loss protection. Called by the media sender: once per encoded frame for its
/// FEC ratio, once per media packet sent, once per feedback with the per-packet results.
pub trait ProtectionPolicy: Send + Sync {
    fn name(&self) -> &'static str;
    /// FEC packets per media packet for the frame being packetized; `requested` is what the
    /// controller's application model asks for (0 for plain congestion controllers).
    fn fec_ratio(&mut self, now: Time, requested: f64) -> f64;
    /// Policies that decide per frame: the FEC packets for a frame of `packets` media packets
    /// and `bytes` bytes (None: `fec_ratio` decides).
    fn fec_packets(&mut self, _now: Time, _packets: u32, _bytes: u64) -> Option<u32> {
        None
    }
    /// A media packet left with transport sequence number `seq`.
    fn on_sent(&mut self, now: Time, seq: u64, p: MediaPacket);
    /// Feedback results in; the media packets to resend out (marked `rtx`).
    fn on_results(&mut self, now: Time, results: &[PacketResult]) -> Vec<MediaPacket>;
    /// The share of the controller's target the encoder gets, the rest paying for the
    /// protection this policy adds on its own (libwebrtc's `ProtectionBitrateCalculator`
    /// takes FEC out of the target the same way). 1 when the controller's application model
    /// already counts it (`auto`).
    fn media_share(&self) -> f64 {
        1.0
    }
    /// The erasure code of the FEC packets (Reed-Solomon unless the policy says otherwise).
    fn fec_code(&self) -> FecCode {
        FecCode::ReedSolomon
    }
}

/// The built-in policies, as the scenario names them.
#[derive(Clone, Debug, PartialEq)]
pub enum ProtectionSpec {
    /// FEC as the controller's model asks; RTX as the scenario layer derived from the model
    /// (`rtx`, None = off).
    Auto {
        rtx: Option<RtxConfig>,
    },
    None,
    Fixed {
        fec_ratio: f64,
        rtx: Option<RtxConfig>,
        code: FecCode,
    },
    /// WebRTC's table FEC; with `rtx`, the hybrid NACK/FEC method.
    WebRtc {
        rtx: Option<RtxConfig>,
    },
    /// Hairpin's table for first transmissions (λ = 10^−`lambda_exp`), NACK/RTX after.
    Hairpin {
        lambda_exp: f64,
        deadline: rtclab_core::TimeDelta,
        rtx: RtxConfig,
    },
}

impl Default for ProtectionSpec {
    fn default() -> Self {
        ProtectionSpec::Auto { rtx: None }
    }
}

impl ProtectionSpec {
    /// Whether the sender resends lost packets (the receiver then waits for them).
    pub fn retransmits(&self) -> bool {
        match self {
            ProtectionSpec::Auto { rtx }
            | ProtectionSpec::Fixed { rtx, .. }
            | ProtectionSpec::WebRtc { rtx } => rtx.is_some(),
            ProtectionSpec::Hairpin { .. } => true,
            ProtectionSpec::None => false,
        }
    }

    /// The built-in policy (`webrtc`/`hairpin` through [`Self::try_build`]).
    pub fn build(&self) -> Box<dyn ProtectionPolicy> {
        match self {
            ProtectionSpec::WebRtc { .. } | ProtectionSpec::Hairpin { .. } => {
                self.try_build().expect("Hairpin's table solves for a validated lambda_exp")
            }
            ProtectionSpec::Auto { rtx } => Box::new(Builtin {
                name: "auto",
                fec: None,
                rtx: rtx.map(Retransmitter::new),
                code: FecCode::ReedSolomon,
            }),
            ProtectionSpec::None => Box::new(Builtin {
                name: "none",
                fec: Some(0.0),
                rtx: None,
                code: FecCode::ReedSolomon,
            }),
            ProtectionSpec::Fixed { fec_ratio, rtx, code } => Box::new(Builtin {
                name: "fixed",
                fec: Some(*fec_ratio),
                rtx: rtx.map(Retransmitter::new),
                code: *code,
            }),
        }
    }
}

/// `auto`, `none` and `fixed`: a FEC ratio (None = as requested) and an optional
/// retransmitter.
struct Builtin {
    name: &'static str,
    fec: Option<f64>,
    rtx: Option<Retransmitter>,
    code: FecCode,
}

impl ProtectionPolicy for Builtin {
    fn name(&self) -> &'static str {
        self.name
    }
    fn fec_ratio(&mut self, _now: Time, requested: f64) -> f64 {
        self.fec.unwrap_or(requested)
    }
    fn media_share(&self) -> f64 {
        1.0 / (1.0 + self.fec.unwrap_or(0.0))
    }
    fn fec_code(&self) -> FecCode {
        self.code
    }
    fn on_sent(&mut self, now: Time, seq: u64, p: MediaPacket) {
        if let Some(r) = &mut self.rtx {
            r.on_sent(now, seq, p);
        }
    }
    fn on_results(&mut self, now: Time, results: &[PacketResult]) -> Vec<MediaPacket> {
        match &mut self.rtx {
            Some(r) => r.on_results(now, results),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::TimeDelta;

    fn mp() -> MediaPacket {
        MediaPacket {
            frame_id: 1,
            capture_time: Time::from_millis(0),
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

    fn lost(seq: u64) -> PacketResult {
        PacketResult {
            seq,
            send_time: Time::from_millis(1),
            arrival: None,
            size: 1000,
            probe_cluster: None,
            ce: false,
        }
    }

    fn got(seq: u64) -> PacketResult {
        PacketResult { arrival: Some(Time::from_millis(20)), ..lost(seq) }
    }

    #[test]
    fn each_policy_decides_fec_and_retransmission() {
        let rtx =
            Some(RtxConfig { max_rtt: Some(TimeDelta::from_millis(400)), ..Default::default() });
        let now = Time::from_millis(40);
        let mut auto = ProtectionSpec::Auto { rtx: None }.build();
        assert_eq!(auto.fec_ratio(now, 0.3), 0.3);
        let mut none = ProtectionSpec::None.build();
        assert_eq!(none.fec_ratio(now, 0.3), 0.0);
        let mut fixed =
            ProtectionSpec::Fixed { fec_ratio: 0.25, rtx, code: FecCode::ReedSolomon }.build();
        assert_eq!(fixed.fec_ratio(now, 0.0), 0.25);
        for p in [&mut auto, &mut none, &mut fixed] {
            p.on_sent(Time::from_millis(1), 7, mp());
            p.on_sent(Time::from_millis(1), 8, mp());
        }
        let fb = [lost(7), got(8)];
        assert!(auto.on_results(now, &fb).is_empty());
        assert!(none.on_results(now, &fb).is_empty());
        let again = fixed.on_results(now, &fb);
        assert_eq!(again.len(), 1);
        assert!(again[0].rtx);
    }
}
