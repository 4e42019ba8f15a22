//! Edge interactive streaming (cloud gaming) with a choice of loss recovery: the set-up of
//! the Hairpin chapter (dissertation ch. 7; Meng et al., NSDI 2024; spec
//! `afr-hairpin-confucius.md` §3.5, §3.8; released simulator hkust-spark/hairpin).
//!
//! A server sends frames of `bitrate_mbps / 8 / fps` bytes (at least 200) at `fps`, each at
//! once (no pacing, no congestion control), as FEC blocks over packets of the flow's
//! `packet_size`; the client acknowledges every packet. Lost data is resent as new FEC blocks
//! until the frame's deadline (`sender.rs`); the client recovers, assembles and scores
//! frames against the deadline (`receiver.rs`). The kinds differ only in the recovery policy
//! (`policy.rs`):
//!
//! - `edge_hairpin`: Hairpin's table, solved by our own solver (`crate::hairpin`) for
//!   λ = 10^−`lambda_exp`, once per process and λ;
//! - `edge_hairpinone`: the same table always read for one remaining round (no planning);
//! - `edge_rtx`: retransmission only;
//! - `edge_fixed`: a fixed redundancy `beta` on first transmissions;
//! - `edge_fixedrtx`: a fixed redundancy `beta` on retransmissions only;
//! - `edge_bolot`, `edge_usf`: the adaptive-FEC baselines of spec §3.7 (Bolot, USF);
//! - `edge_webrtc`, `edge_awebrtc`: WebRTC_NOW and WebRTC14, WebRTC's table-driven FEC
//!   (`webrtc.rs`);
//! - `edge_lin`: Hairpin-lin, the chapter's naive scheme (eq. 7.2): WebRTC's redundancy scaled
//!   by k · RTT / time left, on first transmissions and retransmissions.
//!
//! Every kind takes `gcc = true`: the chapter's GCC integration (§7.4.5.4, Fig 7.16), where
//! send-side GCC sets the encoder's rate to half its target and the rest caps parity and
//! retransmissions (`rate.rs`).
//!
//! The flow's summary carries the figures the chapter reports in `flows[].metrics`:
//! `dmr` (deadline miss rate), `bwc` (bandwidth cost: parity + retransmitted data over first
//! transmitted data), frame delays, packet counts.

pub mod policy;
pub mod rate;
pub mod receiver;
pub mod sender;
pub mod webrtc;
pub mod wire;

use crate::flows::{FlowArgs, FlowKindEntry};
use crate::hairpin::Table;
use policy::RecoveryPolicy;
use receiver::EdgeStreamReceiver;
use rtclab_cc::gcc::GccConfig;
use rtclab_core::params::{apply, describe, param, Param};
use rtclab_core::TimeDelta;
use sender::{EdgeStreamSender, OVERHEAD};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EdgeStreamConfig {
    pub bitrate_mbps: f64,
    /// Data packets per frame; 0 = from the bitrate.
    pub frame_packets: u32,
    pub fps: f64,
    pub deadline_ms: f64,
    pub window_ms: f64,
    pub pto: bool,
    pub default_rtt_ms: f64,
    pub lambda_exp: f64,
    pub beta: f64,
    /// Hairpin-lin's coefficient k (eq. 7.2).
    pub k: f64,
    /// Send-side GCC sets the encoder's rate (`rate.rs`), from `gcc_start_mbps` up to
    /// `gcc_max_mbps`.
    pub gcc: bool,
    pub gcc_start_mbps: f64,
    pub gcc_max_mbps: f64,
    /// libwebrtc's periodic probing in application-limited periods (its screenshare
    /// setting): this sender is application-limited by design.
    pub gcc_alr_probing: bool,
}

/// Data packets per frame at most (the wire format's one-byte count).
pub const MAX_FRAME_PACKETS: u32 = 255;

/// Data packets that carry `bytes` of frame in packets of `packet_size` (at least one).
pub fn packets_for(bytes: u32, packet_size: u32) -> u32 {
    bytes.div_ceil(packet_size - OVERHEAD).max(1)
}

impl Default for EdgeStreamConfig {
    fn default() -> Self {
        EdgeStreamConfig {
            bitrate_mbps: 30.0,
            frame_packets: 0,
            fps: 60.0,
            deadline_ms: 100.0,
            window_ms: 34.0,
            pto: false,
            default_rtt_ms: 20.0,
            lambda_exp: 4.0,
            beta: 0.2,
            k: 1.0,
            gcc: false,
            gcc_start_mbps: 0.3,
            gcc_max_mbps: 30.0,
            gcc_alr_probing: true,
        }
    }
}

impl EdgeStreamConfig {
    /// Frame size in bytes of payload.
    pub fn frame_bytes(&self, packet_size: u32) -> u32 {
        if self.frame_packets > 0 {
            return self.frame_packets * (packet_size - OVERHEAD);
        }
        ((self.bitrate_mbps * 1e6 / 8.0 / self.fps) as u32).max(200)
    }

    pub fn frame_packets(&self, packet_size: u32) -> u32 {
        packets_for(self.frame_bytes(packet_size), packet_size)
    }

    /// The controller of `gcc = true`: libwebrtc's defaults but the start and maximum rates
    /// (the maximum also bounds probes, as a transport's configured maximum does) and
    /// periodic ALR probing.
    pub fn gcc_config(&self) -> GccConfig {
        let d = GccConfig::default();
        GccConfig {
            start_bitrate_bps: self.gcc_start_mbps * 1e6,
            max_bitrate_bps: self.gcc_max_mbps * 1e6,
            max_probe_bitrate_bps: self.gcc_max_mbps * 1e6,
            probe: rtclab_cc::gcc::probe_controller::ProbeConfig {
                periodic_alr_probing: self.gcc_alr_probing,
                ..d.probe
            },
            ..d
        }
    }

    fn check(&self, packet_size: u32) -> Result<(), String> {
        if packet_size <= OVERHEAD {
            return Err(format!(
                "packet_size {packet_size} leaves no payload after {OVERHEAD} header bytes"
            ));
        }
        let interval_ms = 1e3 / self.fps;
        if self.deadline_ms < interval_ms {
            return Err(format!(
                "deadline_ms {} is shorter than one frame interval ({interval_ms:.2} ms at {} fps)",
                self.deadline_ms, self.fps
            ));
        }
        if self.gcc && self.gcc_start_mbps > self.gcc_max_mbps {
            return Err(format!(
                "gcc_start_mbps {} is above gcc_max_mbps {}",
                self.gcc_start_mbps, self.gcc_max_mbps
            ));
        }
        let f = self.frame_packets(packet_size);
        if !self.gcc && f > MAX_FRAME_PACKETS {
            return Err(format!(
                "{f} data packets per frame: at most 255 (raise packet_size or lower bitrate_mbps)"
            ));
        }
        Ok(())
    }
}

macro_rules! common_params {
    ($($extra:expr),* $(,)?) => {
        &[
            param!(EdgeStreamConfig, "bitrate_mbps", "encoder bitrate; frames of bitrate/8/fps bytes, at least 200 (30)", Real, 0.01, 1000.0, |c| c.bitrate_mbps, |c, v| c.bitrate_mbps = v),
            param!(EdgeStreamConfig, "frame_packets", "data packets per frame, overriding bitrate_mbps; 0 = from the bitrate (0)", Integer, 0.0, 255.0, |c| c.frame_packets as f64, |c, v| c.frame_packets = v as u32),
            param!(EdgeStreamConfig, "fps", "frame rate (60)", Real, 1.0, 1000.0, |c| c.fps, |c, v| c.fps = v),
            param!(EdgeStreamConfig, "deadline_ms", "frame deadline after encoding, ms (100)", Real, 1.0, 10_000.0, |c| c.deadline_ms, |c, v| c.deadline_ms = v),
            param!(EdgeStreamConfig, "window_ms", "loss estimator window, ms (34: two frames at 60 fps)", Real, 1.0, 10_000.0, |c| c.window_ms, |c, v| c.window_ms = v),
            param!(EdgeStreamConfig, "pto", "retransmit on a probe timeout max(srtt+4 rttvar, 2 srtt) besides ACK holes; false = holes with a 1 s backstop (false)", Bool, 0.0, 1.0, |c| c.pto as u8 as f64, |c, v| c.pto = v != 0.0),
            param!(EdgeStreamConfig, "default_rtt_ms", "RTT assumed before the first sample, ms (20)", Real, 0.1, 10_000.0, |c| c.default_rtt_ms, |c, v| c.default_rtt_ms = v),
            param!(EdgeStreamConfig, "gcc", "send-side GCC sets the encoder's rate to half its target, the rest caps parity (the chapter's GCC integration); bitrate_mbps and frame_packets are then unused (false)", Bool, 0.0, 1.0, |c| c.gcc as u8 as f64, |c, v| c.gcc = v != 0.0),
            param!(EdgeStreamConfig, "gcc_start_mbps", "GCC's start rate, Mbit/s (0.3, libwebrtc's)", Real, 0.01, 1000.0, |c| c.gcc_start_mbps, |c, v| c.gcc_start_mbps = v),
            param!(EdgeStreamConfig, "gcc_max_mbps", "GCC's maximum rate and probe rate, Mbit/s (30: the chapter's 2-30 Mbit/s)", Real, 0.05, 1000.0, |c| c.gcc_max_mbps, |c, v| c.gcc_max_mbps = v),
            param!(EdgeStreamConfig, "gcc_alr_probing", "GCC probes every 5 s at 2× its estimate while application-limited (libwebrtc's screenshare setting; this sender leaves half the target unused by design) (true)", Bool, 0.0, 1.0, |c| c.gcc_alr_probing as u8 as f64, |c, v| c.gcc_alr_probing = v != 0.0),
            $($extra),*
        ]
    };
}

static RTX_PARAMS: &[Param<EdgeStreamConfig>] = common_params!();
static HAIRPIN_PARAMS: &[Param<EdgeStreamConfig>] = common_params!(
    param!(EdgeStreamConfig, "lambda_exp", "Hairpin's bandwidth weight λ = 10^-lambda_exp (4: λ = 1e-4, the dissertation's; 7: the released scripts')", Real, -1.0, 12.0, |c| c.lambda_exp, |c, v| c.lambda_exp = v),
);
static FIXED_PARAMS: &[Param<EdgeStreamConfig>] = common_params!(param!(
    EdgeStreamConfig,
    "beta",
    "parity packets per data packet on first transmissions (0.2)",
    Real,
    0.0,
    5.0,
    |c| c.beta,
    |c, v| c.beta = v
),);

static LIN_PARAMS: &[Param<EdgeStreamConfig>] = common_params!(param!(
    EdgeStreamConfig,
    "k",
    "Hairpin-lin's coefficient: redundancy k · RTT / time left × WebRTC's (1)",
    Real,
    0.01,
    100.0,
    |c| c.k,
    |c, v| c.k = v
),);

/// Hairpin tables solved in this process, by λ (solving takes about a second).
pub fn hairpin_table(lambda: f64) -> Result<Arc<Table>, String> {
    static TABLES: OnceLock<Mutex<BTreeMap<u64, Arc<Table>>>> = OnceLock::new();
    let mut tables = TABLES.get_or_init(Default::default).lock().map_err(|e| e.to_string())?;
    if let Some(t) = tables.get(&lambda.to_bits()) {
        return Ok(t.clone());
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let t = Arc::new(Table::solve(lambda, threads).map_err(|e| e.to_string())?);
    tables.insert(lambda.to_bits(), t.clone());
    Ok(t)
}

fn build(
    a: FlowArgs,
    table: &'static [Param<EdgeStreamConfig>],
    policy: fn(&EdgeStreamConfig) -> Result<RecoveryPolicy, String>,
) -> Result<(crate::flows::BoxedEndpoint, crate::flows::BoxedEndpoint), String> {
    let mut c = EdgeStreamConfig::default();
    apply(table, &mut c, a.params)?;
    c.check(a.packet_size)?;
    let p = policy(&c)?;
    let deadline = TimeDelta::from_secs_f64(c.deadline_ms / 1e3);
    Ok((
        Box::new(EdgeStreamSender::new(a.flow, a.packet_size, c, p)),
        Box::new(EdgeStreamReceiver::new(a.flow, deadline)),
    ))
}

fn hairpin_policy(c: &EdgeStreamConfig, one_layer: bool) -> Result<RecoveryPolicy, String> {
    Ok(RecoveryPolicy::Hairpin { table: hairpin_table(10f64.powf(-c.lambda_exp))?, one_layer })
}

pub static HAIRPIN: FlowKindEntry = FlowKindEntry {
    name: "edge_hairpin",
    help: "edge game streaming with Hairpin's joint FEC + retransmission (NSDI'24)",
    params: || describe(HAIRPIN_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, HAIRPIN_PARAMS, |c| hairpin_policy(c, false)),
};

pub static HAIRPIN_ONE: FlowKindEntry = FlowKindEntry {
    name: "edge_hairpinone",
    help: "edge game streaming with Hairpin's table read for one remaining round (no planning)",
    params: || describe(HAIRPIN_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, HAIRPIN_PARAMS, |c| hairpin_policy(c, true)),
};

pub static RTX: FlowKindEntry = FlowKindEntry {
    name: "edge_rtx",
    help: "edge game streaming with retransmission only",
    params: || describe(RTX_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, RTX_PARAMS, |_| Ok(RecoveryPolicy::Rtx)),
};

pub static FIXED_RTX: FlowKindEntry = FlowKindEntry {
    name: "edge_fixedrtx",
    help: "edge game streaming with a fixed FEC redundancy on retransmissions only",
    params: || describe(FIXED_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, FIXED_PARAMS, |c| Ok(RecoveryPolicy::FixedRtx { beta: c.beta })),
};

pub static BOLOT: FlowKindEntry = FlowKindEntry {
    name: "edge_bolot",
    help: "edge game streaming with Bolot et al.'s adaptive FEC (INFOCOM'99), average-rate form",
    params: || describe(RTX_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, RTX_PARAMS, |_| Ok(RecoveryPolicy::Bolot { comb: 0 })),
};

pub static USF: FlowKindEntry = FlowKindEntry {
    name: "edge_usf",
    help:
        "edge game streaming with Padhye et al.'s USF adaptive FEC (INFOCOM'00), average-rate form",
    params: || describe(RTX_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, RTX_PARAMS, |_| Ok(RecoveryPolicy::Usf { comb: 0, previous: 0.0 })),
};

pub static FIXED: FlowKindEntry = FlowKindEntry {
    name: "edge_fixed",
    help: "edge game streaming with a fixed FEC redundancy on first transmissions, then retransmission",
    params: || describe(FIXED_PARAMS, &EdgeStreamConfig::default()),
    build: |a| build(a, FIXED_PARAMS, |c| Ok(RecoveryPolicy::Fixed { beta: c.beta })),
};

pub static WEBRTC: FlowKindEntry = FlowKindEntry {
    name: "edge_webrtc",
    help: "edge game streaming with WebRTC's table-driven FEC (WebRTC_NOW, Chromium m88)",
    params: || describe(RTX_PARAMS, &EdgeStreamConfig::default()),
    build: |a| {
        build(a, RTX_PARAMS, |_| {
            Ok(RecoveryPolicy::WebRtc { hybrid: false, filter: Default::default() })
        })
    },
};

pub static AWEBRTC: FlowKindEntry = FlowKindEntry {
    name: "edge_awebrtc",
    help:
        "edge game streaming with WebRTC's FEC scaled by the hybrid NACK/FEC RTT sigmoid (WebRTC14)",
    params: || describe(RTX_PARAMS, &EdgeStreamConfig::default()),
    build: |a| {
        build(a, RTX_PARAMS, |_| {
            Ok(RecoveryPolicy::WebRtc { hybrid: true, filter: Default::default() })
        })
    },
};

pub static LIN: FlowKindEntry = FlowKindEntry {
    name: "edge_lin",
    help: "edge game streaming with Hairpin-lin: WebRTC's FEC scaled by k · RTT / time left, on every round",
    params: || describe(LIN_PARAMS, &EdgeStreamConfig::default()),
    build: |a| {
        build(a, LIN_PARAMS, |c| Ok(RecoveryPolicy::Linear { k: c.k, filter: Default::default() }))
    },
};
