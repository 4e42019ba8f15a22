//! The scenario file, as typed serde structs (the single source of truth for its shape).
//!
//! Unknown keys are errors everywhere (`deny_unknown_fields`). Values carry units in their
//! type (`Duration`, `RateValue`, `Size`, `QueueLimitValue`). See `docs/scenario.md`.

use crate::units::{Duration, QueueLimitValue, RateValue};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use std::fmt;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioConfig {
    pub name: Option<String>,
    #[serde(default)]
    pub description: String,
    /// Simulated time to run.
    pub duration: Duration,
    /// Root seed when none is given on the command line.
    pub seed: Option<u64>,
    /// Shorthand for a one-link topology: the forward (data-direction) bottleneck, named
    /// `bottleneck`, crossed by every flow.
    pub link: Option<LinkConfig>,
    /// The shorthand link's reverse (feedback-direction) bottleneck; absent = unconstrained.
    pub reverse_link: Option<LinkConfig>,
    /// Named links (instead of `link`); flows pick theirs with `path`.
    pub links: Option<Vec<NamedLinkConfig>>,
    pub flows: Vec<FlowConfig>,
    /// Middleboxes attached by name at a hop, seeing both directions of the flows crossing it.
    #[serde(default)]
    pub middleboxes: Vec<MiddleboxConfig>,
    #[serde(default)]
    pub metrics: MetricsConfig,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub capacity: CapacityConfig,
    #[serde(default)]
    pub queue: QueueConfig,
    pub loss: Option<LossConfig>,
    /// A wireless access point's transmitter (MAC queue, A-MPDU, contention) with its named
    /// parameters; the capacity is then the PHY rate. `wifi = {}` takes the defaults.
    pub wifi: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// Delay and loss replayed from a trace (forward links only).
    pub conditions: Option<ConditionsConfig>,
}

/// `conditions = { trace = "session.tr", format = "hairpin", interval = "16ms" }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionsConfig {
    pub trace: String,
    pub format: ConditionsFormat,
    pub interval: Option<Duration>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConditionsFormat {
    /// `<bw>Mbps <rtt>ms <loss>` per interval (the Hairpin chapter's session traces).
    Hairpin,
}

/// One hop of a topology: a forward bottleneck (as `[link]`), its one-way propagation delay,
/// and optionally a bottleneck in the reverse direction.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedLinkConfig {
    pub name: String,
    pub capacity: CapacityConfig,
    #[serde(default)]
    pub queue: QueueConfig,
    pub loss: Option<LossConfig>,
    /// A wireless access point's transmitter for the forward direction (see `LinkConfig`).
    pub wifi: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// Delay and loss replayed from a trace (see `LinkConfig`).
    pub conditions: Option<ConditionsConfig>,
    /// One-way propagation delay of this hop, both directions (default 0).
    pub delay: Option<Duration>,
    /// The reverse direction's bottleneck; absent = only the propagation delay.
    pub reverse: Option<LinkConfig>,
}

/// `{ kind = "...", at = "link name", <parameters> }`.
#[derive(Debug)]
pub struct MiddleboxConfig {
    pub kind: String,
    pub at: String,
    pub params: std::collections::BTreeMap<String, ParamValue>,
}

impl<'de> Deserialize<'de> for MiddleboxConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = MiddleboxConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table such as { kind = \"policer\", at = \"bottleneck\" }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MiddleboxConfig, A::Error> {
                let (mut kind, mut at) = (None, None);
                let mut params = std::collections::BTreeMap::new();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" => kind = Some(map.next_value()?),
                        "at" => at = Some(map.next_value()?),
                        _ => {
                            let v: ParamValue = map.next_value()?;
                            if params.insert(key.clone(), v).is_some() {
                                return Err(de::Error::custom(format!("duplicate key `{key}`")));
                            }
                        }
                    }
                }
                let kind = kind.ok_or_else(|| de::Error::missing_field("kind"))?;
                let at = at.ok_or_else(|| de::Error::missing_field("at"))?;
                Ok(MiddleboxConfig { kind, at, params })
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug)]
pub enum CapacityConfig {
    Constant(RateValue),
    Schedule(Vec<StepConfig>),
    Trace { path: String, format: TraceFormat },
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    pub at: Duration,
    pub rate: RateValue,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// mahimahi packet-delivery opportunities (one millisecond timestamp per line).
    Mahimahi,
    /// `<time s> <bandwidth Mbit/s>` per line.
    Bandwidth,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CapacityTable {
    schedule: Option<Vec<StepConfig>>,
    trace: Option<String>,
    format: Option<TraceFormat>,
}

impl<'de> Deserialize<'de> for CapacityConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CapacityConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a rate such as \"100Mbps\", { schedule = [{ at = \"0s\", rate = \"10Mbps\" }, ...] } or { trace = \"file\", format = \"mahimahi\" | \"bandwidth\" }")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CapacityConfig, E> {
                crate::units::parse_rate(s)
                    .map(|r| CapacityConfig::Constant(RateValue(r)))
                    .map_err(E::custom)
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<CapacityConfig, A::Error> {
                let t = CapacityTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match (t.schedule, t.trace, t.format) {
                    (Some(s), None, None) => Ok(CapacityConfig::Schedule(s)),
                    (None, Some(path), Some(format)) => Ok(CapacityConfig::Trace { path, format }),
                    (None, Some(_), None) => Err(de::Error::custom(
                        "a trace needs its format: format = \"mahimahi\" or \"bandwidth\"",
                    )),
                    _ => Err(de::Error::custom(
                        "give either `schedule` or `trace` (with `format`), not both or neither",
                    )),
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<CapacityConfig, E> {
                Err(E::custom(format!("{v} has no unit: expected a rate such as \"100Mbps\"")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<CapacityConfig, E> {
                Err(E::custom(format!("{v} has no unit: expected a rate such as \"100Mbps\"")))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<CapacityConfig, E> {
                Err(E::custom(format!("{v} has no unit: expected a rate such as \"100Mbps\"")))
            }
        }
        d.deserialize_any(V)
    }
}

/// `queue = { kind = "codel", limit = "1000pkt", target_ms = 5 }`: the discipline's own
/// parameters sit next to `kind`, `limit` and `bdp_rtt` and are checked against its table.
#[derive(Debug)]
pub struct QueueConfig {
    /// A name from the queue registry (`rtclab_net::queues`); default "droptail".
    pub kind: String,
    pub limit: QueueLimitValue,
    /// Whether the scenario wrote `limit` (else the default, 1 BDP, applies): error messages
    /// about a limit the user never wrote say so.
    pub limit_given: bool,
    /// RTT used to turn a "bdp" limit into bytes; default: the largest flow RTT.
    pub bdp_rtt: Option<Duration>,
    /// Every other key: the discipline's parameters by name.
    pub params: std::collections::BTreeMap<String, ParamValue>,
}

fn default_queue_limit() -> QueueLimitValue {
    QueueLimitValue::Bdp(1.0)
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            kind: "droptail".into(),
            limit: default_queue_limit(),
            limit_given: false,
            bdp_rtt: None,
            params: Default::default(),
        }
    }
}

impl<'de> Deserialize<'de> for QueueConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a table such as { kind = \"droptail\", limit = \"1bdp\" }")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<QueueConfig, A::Error> {
                let mut q = QueueConfig::default();
                while let Some(key) = map.next_key::<String>()? {
                    match key.as_str() {
                        "kind" => q.kind = map.next_value()?,
                        "limit" => {
                            q.limit = map.next_value()?;
                            q.limit_given = true;
                        }
                        "bdp_rtt" => q.bdp_rtt = Some(map.next_value()?),
                        _ => {
                            let v: ParamValue = map.next_value()?;
                            if q.params.insert(key.clone(), v).is_some() {
                                return Err(de::Error::custom(format!("duplicate key `{key}`")));
                            }
                        }
                    }
                }
                Ok(q)
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Debug, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig {
    Iid {
        rate: f64,
    },
    GilbertElliott {
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        #[serde(default)]
        loss_in_good: f64,
        #[serde(default = "one")]
        loss_in_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowKind {
    /// Reliable bulk transfer with a window-based congestion controller.
    Tcp,
    /// Constant-bitrate UDP, no congestion control.
    Cbr,
    /// Real-time video over RTP with a media congestion controller.
    Media,
    /// A kind from the flow-kind registry (`rtclab_transport::flows`), checked by `resolve`.
    Registered(String),
}

impl<'de> Deserialize<'de> for FlowKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "tcp" => FlowKind::Tcp,
            "cbr" => FlowKind::Cbr,
            "media" => FlowKind::Media,
            _ => FlowKind::Registered(s),
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcName {
    Reno,
    Cubic,
    /// Copa (NSDI'18), delay-based with a competitive mode.
    Copa,
    /// BBR v1 (Linux tcp_bbr.c).
    Bbr,
    /// QLibra: NewReno that ignores losses it did not cause.
    Qlibra,
    /// ABC's sender (NSDI'20): the window follows an ABC router's accelerate/brake marks.
    Abc,
    /// The fairness study's "Zoom-like" conferencing model (media flows).
    ZoomLike,
    /// Today's send-side GCC (media flows).
    Gcc,
    /// The 2017 paper's receiver-side GCC (media flows).
    GccPaper,
    /// A Metis decision tree over the bandwidth-estimation observation (media flows).
    Tree,
    /// A controller from the run-time registry (`rtclab_cc::registry`).
    Registered(&'static str),
}

impl CcName {
    const BUILTIN: [(&'static str, CcName); 11] = [
        ("reno", CcName::Reno),
        ("newreno", CcName::Reno),
        ("cubic", CcName::Cubic),
        ("copa", CcName::Copa),
        ("bbr", CcName::Bbr),
        ("qlibra", CcName::Qlibra),
        ("abc", CcName::Abc),
        ("zoom_like", CcName::ZoomLike),
        ("gcc", CcName::Gcc),
        ("gcc_paper", CcName::GccPaper),
        ("tree", CcName::Tree),
    ];
}

impl CcName {
    /// The name scenarios use (aliases give their main name).
    pub fn as_str(&self) -> &'static str {
        match self {
            CcName::Registered(n) => n,
            c => CcName::BUILTIN.iter().find(|(_, x)| x == c).map_or("?", |(n, _)| n),
        }
    }
    /// What the controller serves and needs (its line in `rtclab_cc::capabilities`, or its
    /// registry entry's).
    pub fn caps(&self) -> rtclab_cc::capabilities::Capabilities {
        rtclab_cc::registry::capabilities(self.as_str())
            .unwrap_or(rtclab_cc::capabilities::Capabilities::TCP)
    }
}

/// The controllers that serve tcp flows (built-in, then registered), quoted, for messages.
pub fn tcp_controller_names() -> String {
    let mut names: Vec<&str> = rtclab_cc::capabilities::builtin_names();
    names.extend(rtclab_cc::registry::names());
    let quoted: Vec<String> = names
        .into_iter()
        .filter(|n| rtclab_cc::registry::capabilities(n).is_some_and(|c| c.tcp))
        .map(|n| format!("\"{n}\""))
        .collect();
    quoted.join(", ")
}

impl<'de> Deserialize<'de> for CcName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        if let Some((_, c)) = CcName::BUILTIN.iter().find(|(n, _)| *n == name) {
            return Ok(*c);
        }
        if let Some(e) = rtclab_cc::registry::find(&name) {
            return Ok(CcName::Registered(e.name));
        }
        let mut accepted: Vec<String> =
            rtclab_cc::capabilities::builtin_names().iter().map(|n| format!("`{n}`")).collect();
        let registered = rtclab_cc::registry::names();
        let extra = if registered.is_empty() {
            " (or a controller registered with rtclab.register_controller)".to_string()
        } else {
            accepted.extend(registered.iter().map(|n| format!("`{n}`")));
            String::new()
        };
        Err(serde::de::Error::custom(format!(
            "unknown variant `{name}`, expected one of {}{extra}",
            accepted.join(", ")
        )))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackName {
    /// Transport-wide congestion control feedback (per packet).
    Twcc,
    /// REMB from the receiver's estimator, plus receiver reports.
    Remb,
    /// RFC 8888 congestion control feedback (per packet, 1/1024 s arrival times).
    #[serde(rename = "rfc8888", alias = "ccfb")]
    Ccfb,
}

/// When an RFC 8888 receiver sends its reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FeedbackCadence {
    /// libwebrtc's `CongestionControlFeedbackGenerator`.
    Libwebrtc,
    /// EricssonResearch/scream's `ScreamRx`.
    Scream,
}

/// What a media flow writes in its packets' ECN field.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MediaEcn {
    /// Not ECN-capable (the default).
    Off,
    /// ECT(0): classic ECN; an AQM marks instead of dropping (RFC 3168).
    Ect0,
    /// ECT(1): L4S; DualPI2 queues it in its low-latency queue (RFC 9331).
    Ect1,
}

/// A controller parameter value in `[flows.media.gcc]`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Num(f64),
    Str(String),
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TreeParams {
    /// Path to the tree JSON, relative to the scenario file.
    pub file: String,
    /// Decision interval (default 60 ms, the OpenNetLab gym's).
    pub step: Option<Duration>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MediaParams {
    pub fps: Option<f64>,
    pub start_bitrate: Option<RateValue>,
    pub min_bitrate: Option<RateValue>,
    pub max_bitrate: Option<RateValue>,
    /// Interval between key frames ("0s" = none; default 3000 frames with the libwebrtc
    /// sender, libwebrtc's `GetDefaultVp8Settings`, 10 s with the ideal one).
    pub key_frame_interval: Option<Duration>,
    pub feedback: Option<FeedbackName>,
    /// The ECN field of the media packets: "ect0" (classic ECN, RFC 3168) or "ect1" (L4S,
    /// RFC 9331); default none (Not-ECT). Needs feedback = "rfc8888", which reports it back.
    pub ecn: Option<MediaEcn>,
    /// When an RFC 8888 receiver reports: "libwebrtc" (default: a frame's last packet or
    /// 25 ms, within a 500 kbit/s budget) or "scream" (SCReAM's receiver: 16 packets, a
    /// frame's last packet, or 40 ms after the last report).
    pub feedback_cadence: Option<FeedbackCadence>,
    /// TWCC feedback interval.
    pub feedback_interval: Option<Duration>,
    /// Over-use detector: adaptive threshold (default) or a static one.
    pub adaptive_threshold: Option<bool>,
    /// Initial (or static) detector threshold, ms-equivalents (default 12.5).
    pub threshold: Option<f64>,
    /// gcc_paper: floor the loss-based decrease at the TFRC rate (the 2013 implementation).
    pub tfrc_floor: Option<bool>,
    /// gcc_paper: receiver reports every 0.5-1.5 s at random, as 2012-2013 webrtc's
    /// `RTCPSender` scheduled them for a video module that sends no media (default: every 1 s).
    pub rtcp_2013: Option<bool>,
    /// Pacer bursts: "5ms" (default for gcc_paper, the 2017 paper's pacer) or "0s" for smooth
    /// pacing (default for gcc, as libwebrtc today).
    pub pacer_burst: Option<Duration>,
    /// Frame sizes replayed from a file: one size in bytes per line, looping.
    pub frame_sizes: Option<String>,
    /// true (default): the file gives the frame-size pattern, scaled to the target rate;
    /// false: sizes are sent as recorded whatever the target.
    pub frame_sizes_scaled: Option<bool>,
    /// Any controller parameter by name (see docs/scenario.md for the list and ranges).
    pub gcc: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// cc = "zoom_like": any Zoom-like model parameter by name.
    pub zoom_like: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// cc = "tree": the tree file (rtclab tree JSON from `rtclab.metis`) and the step.
    pub tree: Option<TreeParams>,
    /// The receiver asks for a key frame (RTCP PLI) when a frame cannot be decoded, every
    /// 200 ms until one arrives (default true, as WebRTC receivers do).
    pub key_frame_requests: Option<bool>,
    /// Receiver: how long complete frames wait behind a missing one (for its retransmission)
    /// before it is given up and a key frame asked for; default 200 ms when the sender
    /// retransmits, 0 when it does not. libwebrtc with NACK: 3 s (`kMaxWaitForFrame`).
    pub frame_wait: Option<Duration>,
    /// Loss protection (FEC, retransmission), separate from congestion control.
    pub protection: Option<ProtectionConfig>,
    /// Receiver: hold each frame until capture time + this (a fixed playout delay); default
    /// none (shown as soon as decoded). With `jitter_buffer = "adaptive"`: the least delay.
    pub playout_delay: Option<Duration>,
    /// Receiver: "adaptive" for WebRTC's jitter-estimate playout delay; default none.
    pub jitter_buffer: Option<String>,
    /// Sender: capture → encoded frame time (default 0).
    pub encode_time: Option<Duration>,
    /// Encoder: frame-size spread, the standard deviation of a frame's size relative to the
    /// rate (default 0.1).
    pub frame_size_jitter: Option<f64>,
    /// Encoder: time constant of its rate control following the target (default 200 ms).
    pub encoder_lag: Option<Duration>,
    /// Encoder: a key frame's size in normal frames (default 3).
    pub key_frame_size: Option<f64>,
    /// libvpx VP8 model: the frame-size floor's spread from frame to frame (default 0).
    pub floor_jitter: Option<f64>,
    /// Encoder: the share of the controller's target it is given and produces (default 1).
    pub encoder_target_share: Option<f64>,
    /// The sender whose defaults the encoder keys take: "libwebrtc" (default except for
    /// cc = "zoom_like": Chromium's VP8 sender — libvpx's rate control, the encoder bitrate
    /// adjuster, 640x480, a key frame every 3000 frames) or "ideal" (an encoder that meets its
    /// target: 1280x720, no adjuster, a key frame every 10 s). Each key given by name wins.
    pub sender: Option<String>,
    /// Encoder: "libvpx_vp8" (libvpx VP8's CBR rate control over a frame-size floor: overshoot
    /// and dropped frames at low rates; the libwebrtc sender's default) or "ideal" (meets its
    /// target; the ideal sender's, and the one that replays `frame_sizes`).
    pub encoder_model: Option<String>,
    /// Encoder: content complexity, scaling the libvpx_vp8 frame-size floor (default 1).
    pub content_complexity: Option<f64>,
    /// libwebrtc's encoder bitrate adjuster between the allocation and the encoder (default on
    /// with the libwebrtc sender, as in Chromium, where `WebRTC-VideoRateControl/
    /// bitrate_adjuster:false/` turns it off; off with the ideal sender).
    pub bitrate_adjuster: Option<bool>,
    /// Encoder, libvpx_vp8 only: "maintain_resolution" (default: the picture keeps its size)
    /// or "maintain_framerate" (libwebrtc's quality scaler shrinks and regrows it, Chromium's
    /// default for a camera track).
    pub degradation: Option<String>,
    /// Encoder, libvpx_vp8 only: a frame asked for this long after the last one encoded is
    /// encoded with frame dropping off (libwebrtc's `kDefaultMaxFrameDropInterval`, 2 s; "0s"
    /// turns it off as `WebRTC-VP8-MaxFrameInterval/Disabled/`).
    pub max_frame_drop_interval: Option<Duration>,
    /// Picture size "WIDTHxHEIGHT" (default "640x480", getUserMedia's, with the libwebrtc
    /// sender; "1280x720" with the ideal sender).
    pub resolution: Option<String>,
    /// Receiver-driven frame-rate control against decoder queuing: "afr" or a baseline of the
    /// AFR chapter ("droptail", "qlen-s", "qwait-s", "afr-qlen", "afr-qwait", "afr-tx",
    /// "afr-kingman", "60fps"); default none.
    pub frame_rate_control: Option<String>,
    /// Receiver: decoder time per frame (frames queue behind a slow decoder); default 0.
    pub decode_time: Option<Duration>,
    /// Receiver: a device class's decode-time process instead (AFR chapter's categories).
    pub decoder: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProtectionConfig {
    /// "auto" (the application model's own: Zoom-like FEC and RTX), "none", "fixed",
    /// "webrtc" (WebRTC's protection tables), "hairpin" (Hairpin's table + NACK/RTX).
    pub kind: ProtectionKind,
    /// kind = "fixed": FEC packets per media packet (0..=1).
    pub fec: Option<f64>,
    /// kind = "fixed" or "webrtc": retransmit packets the feedback reports lost (NACK + RTX).
    pub rtx: Option<bool>,
    /// kind = "fixed": the FEC code, "rs" (Reed-Solomon, default) or "xor" (FlexFEC-style).
    pub code: Option<String>,
    /// No retransmission at or above this smoothed RTT (default 400 ms).
    pub rtx_max_rtt: Option<Duration>,
    /// kind = "hairpin": λ = 10^−lambda_exp (default 4) and the frame deadline (100 ms).
    pub lambda_exp: Option<f64>,
    pub deadline: Option<Duration>,
}

/// `recovery = { rack = true, tlp = true, frto = true }` on a tcp flow: which of Linux's
/// default loss-recovery mechanisms the simulated sender runs (all on by default).
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpRecoveryConfig {
    pub rack: Option<bool>,
    pub tlp: Option<bool>,
    pub frto: Option<bool>,
}

/// `video = { fps = 25, min_bitrate = "100kbps", max_bitrate = "100Mbps", send_buffer = "5MiB",
/// interval = "40ms" }` on a tcp flow: video over TCP (defaults: the Zhuge simulator's).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpVideoParams {
    pub fps: Option<f64>,
    pub min_bitrate: Option<RateValue>,
    pub max_bitrate: Option<RateValue>,
    pub send_buffer: Option<crate::units::Size>,
    pub interval: Option<Duration>,
}

/// `{ at = "40s", until = "60s" }`: a sender pause.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PauseConfig {
    pub at: Duration,
    pub until: Duration,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProtectionKind {
    Auto,
    None,
    Fixed,
    Webrtc,
    Hairpin,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub name: Option<String>,
    pub kind: FlowKind,
    /// Congestion control (tcp flows): "cubic" (default), "reno"/"newreno".
    pub cc: Option<CcName>,
    /// Base round-trip time of the flow's own access (split evenly between the two
    /// directions), on top of the propagation delay of the links on its path. Required with
    /// the `[link]` shorthand; default 0 on a `path`.
    pub rtt: Option<Duration>,
    /// Forward hops by link name, in order (default: the only link).
    pub path: Option<Vec<String>>,
    /// Reverse hops by link name, in order (default: the forward path, mirrored).
    pub reverse_path: Option<Vec<String>>,
    /// "forward" (default) or "reverse": the flow's data crosses its links' reverse
    /// direction and its feedback their forward direction (media from the far end).
    pub direction: Option<String>,
    pub start: Option<Duration>,
    pub stop: Option<Duration>,
    /// Media and cbr flows: the sender pauses at `at` and resumes at `until` (RFC 8867 §5.8).
    pub pauses: Option<Vec<PauseConfig>>,
    /// Identical copies of this flow.
    #[serde(default = "one_u32")]
    pub count: u32,
    /// Per-packet extra delay, uniform in [0, jitter], never reordering.
    pub jitter: Option<Duration>,
    /// Bytes on the wire per data packet.
    pub packet_size: Option<crate::units::Size>,
    /// tcp: acknowledge every second segment with a 40 ms delayed-ACK timer (default true, as
    /// Linux and ns-3 do); false acknowledges every segment.
    pub delayed_ack: Option<bool>,
    /// tcp: ECN-capable transport (RFC 3168): data packets are ECT(0), a marking queue's CE
    /// is echoed and answered with a window reduction (default false).
    pub ecn: Option<bool>,
    /// tcp: initial window in packets (default 10).
    pub initial_window: Option<u32>,
    /// tcp: RACK-TLP and F-RTO on or off (simulator; the emulator's kernel TCP has its own).
    pub recovery: Option<TcpRecoveryConfig>,
    /// tcp + cubic: CUBIC parameters.
    pub cubic: Option<CubicParams>,
    /// tcp + copa: `variant` ("paper", "genericcc", "mvfst") and any Copa parameter by name.
    pub copa: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// tcp + qlibra: any QLibra parameter by name.
    pub qlibra: Option<std::collections::BTreeMap<String, ParamValue>>,
    /// cbr: sending rate; tcp: the application's data rate (a live stream pushed over TCP),
    /// absent = unbounded bulk transfer.
    pub rate: Option<RateValue>,
    /// tcp: a finite transfer of this many bytes on the wire (a web object); absent = no end.
    pub size: Option<crate::units::Size>,
    /// tcp: video over TCP (the Zhuge TCP experiments' sender): an encoder writes frames into
    /// the socket and adapts its bitrate to the socket's backlog.
    pub video: Option<TcpVideoParams>,
    /// media: encoder and controller parameters.
    pub media: Option<MediaParams>,
    /// A registered kind's parameters by name.
    pub params: Option<std::collections::BTreeMap<String, ParamValue>>,
}

fn one_u32() -> u32 {
    1
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicParams {
    /// Multiplicative decrease factor (0, 1); Linux 717/1024.
    pub beta: Option<f64>,
    /// Cubic scaling constant C (packets/s^3); Linux 410/1024.
    pub c: Option<f64>,
    pub fast_convergence: Option<bool>,
    pub tcp_friendliness: Option<bool>,
    pub hystart: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsConfig {
    /// Time-series bin (RFC 8868 uses 200 ms).
    #[serde(default = "default_bin")]
    pub bin: Duration,
    /// Summary statistics exclude [0, warmup).
    #[serde(default = "default_warmup")]
    pub warmup: Duration,
    /// Window for the per-window Jain index.
    #[serde(default = "default_fairness_window")]
    pub fairness_window: Duration,
}

fn default_bin() -> Duration {
    Duration(rtclab_core::TimeDelta::from_millis(200))
}
fn default_warmup() -> Duration {
    Duration(rtclab_core::TimeDelta::ZERO)
}
fn default_fairness_window() -> Duration {
    Duration(rtclab_core::TimeDelta::from_secs(1))
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            bin: default_bin(),
            warmup: default_warmup(),
            fairness_window: default_fairness_window(),
        }
    }
}
