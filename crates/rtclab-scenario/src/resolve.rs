//! Validation and resolution of a parsed [`ScenarioConfig`] into a [`Scenario`].

use crate::config::*;
use crate::units::{QueueLimitValue, RateValue};
use crate::ConfigError;
use rtclab_cc::registry::Role;
use rtclab_cc::{CubicConfig, RenoConfig};
use rtclab_core::{Rate, Time, TimeDelta};
use rtclab_net::capacity::Piecewise;
use rtclab_net::{
    parse_bandwidth_trace, parse_mahimahi_trace, CapacityModel, LossModel, QueueLimit,
};
use std::path::Path;

/// The receiving endpoint's own send-side estimate that sets libwebrtc's TWCC cadence: in a
/// one-way call it never leaves libwebrtc's default start rate (`kDefaultStartBitrateBps`).
const RECEIVER_SEND_ESTIMATE_BPS: f64 = 300_000.0;

/// An engine-ready scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    pub duration: TimeDelta,
    pub seed: Option<u64>,
    /// The topology's links; the first is the one `summary.link` and `link.parquet` describe
    /// (with the `[link]` shorthand, the only one, named `bottleneck`).
    pub links: Vec<NamedLink>,
    pub flows: Vec<FlowSpec>,
    pub middleboxes: Vec<MiddleboxSpec>,
    pub metrics: MetricsSpec,
}

impl Scenario {
    /// The link `summary.link` describes: the first one.
    pub fn main_link(&self) -> &NamedLink {
        &self.links[0]
    }
    /// Index of a link by name.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }
}

/// One hop: a forward bottleneck, an optional reverse one, and the propagation delay.
#[derive(Clone, Debug)]
pub struct NamedLink {
    pub name: String,
    /// Stable label for random streams and messages: "link" / "reverse_link" for the
    /// shorthand (as before named links existed), `links.<name>` otherwise.
    pub label: String,
    pub reverse_label: String,
    /// One-way propagation delay, each direction.
    pub delay: TimeDelta,
    pub forward: LinkSpec,
    pub reverse: Option<LinkSpec>,
    /// Delay (both directions) and forward loss replayed from a trace (`conditions`).
    pub conditions: Option<std::sync::Arc<rtclab_net::PathTrace>>,
}

/// A middlebox attached at a hop (`at` = index into `Scenario::links`).
#[derive(Clone, Debug)]
pub struct MiddleboxSpec {
    pub kind: String,
    pub at: usize,
    pub params: Vec<(String, rtclab_core::params::Value)>,
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub capacity: CapacityModel,
    /// Human-readable description of the capacity ("100Mbps", "trace foo.up").
    pub capacity_desc: String,
    pub queue_limit: QueueLimit,
    /// The queue discipline's registry name and parameters (already checked by `resolve`).
    pub queue_kind: String,
    pub queue_params: Vec<(String, rtclab_core::params::Value)>,
    /// Largest data packet of any flow, bytes (CoDel's "one MTU queued" rule).
    pub mtu: u32,
    pub loss: Option<LossModel>,
    /// A wireless access point's MAC in place of the serializer (checked by `resolve`).
    pub wifi: Option<rtclab_net::WifiConfig>,
}

impl LinkSpec {
    fn qdisc_args(&self, seed: u64) -> rtclab_net::queues::QdiscArgs<'_> {
        rtclab_net::queues::QdiscArgs {
            limit: self.queue_limit,
            params: &self.queue_params,
            mtu: self.mtu,
            seed,
        }
    }
    /// A fresh queue discipline as the scenario describes it; `seed` seeds its random stream.
    pub fn build_qdisc(&self, seed: u64) -> rtclab_net::AnyQdisc {
        rtclab_net::queues::build(&self.queue_kind, &self.qdisc_args(seed))
            .expect("queue checked when the scenario was resolved")
    }
    /// A fresh link (queue discipline + serializer, or + wireless MAC) as the scenario
    /// describes it; `seed` seeds the discipline's stream, `wifi_seed` the MAC's backoffs.
    pub fn build_link(&self, seed: u64, wifi_seed: u64) -> rtclab_net::Link {
        let q = self.build_qdisc(seed);
        match &self.wifi {
            None => rtclab_net::Link::new(self.capacity.clone(), q),
            Some(c) => {
                let mac = rtclab_net::WifiMac::new(
                    c.clone(),
                    rtclab_core::RngStream::from_seed(wifi_seed),
                );
                rtclab_net::Link::wifi(self.capacity.clone(), q, mac)
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub id: u32,
    pub name: String,
    pub kind: FlowKindSpec,
    /// The flow's own access round trip (half each way, jitter on the forward half).
    pub rtt: TimeDelta,
    /// The whole propagation round trip: `rtt` plus the delays of the links on both paths.
    pub base_rtt: TimeDelta,
    /// Forward hops (indices into `Scenario::links`), in order.
    pub path: Vec<usize>,
    /// Reverse hops, in order (by default the forward path mirrored).
    pub reverse_path: Vec<usize>,
    pub start: Time,
    pub stop: Time,
    /// The sender pauses at the first time and resumes at the second, in order.
    pub pauses: Vec<(Time, Time)>,
    /// Data crosses the reverse direction of the path's links, feedback the forward one.
    pub reversed: bool,
    pub jitter: TimeDelta,
}

/// Which loss-recovery mechanisms a simulated TCP sender runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpRecoverySpec {
    pub rack: bool,
    pub tlp: bool,
    pub frto: bool,
}

#[derive(Clone, Debug)]
pub enum FlowKindSpec {
    /// A kind from the flow-kind registry, with its checked parameters.
    Registered {
        kind: &'static rtclab_transport::flows::FlowKindEntry,
        params: Vec<(String, rtclab_core::params::Value)>,
        packet_size: u32,
    },
    /// `app_rate`: the application's data rate (a live stream over TCP); None = bulk.
    Tcp {
        cc: CcSpec,
        packet_size: u32,
        ack_every: u32,
        app_rate: Option<Rate>,
        /// ECN-capable (RFC 3168): ECT(0) data, CE echoed, a window reduction per echo.
        ecn: bool,
        /// A finite transfer of this many bytes on the wire; None = no end.
        size: Option<u64>,
        /// RACK, tail loss probes, F-RTO (simulated sender).
        recovery: TcpRecoverySpec,
        /// Video over TCP: the application is an encoder writing frames (`tcp_video.rs`).
        video: Option<rtclab_transport::TcpVideoConfig>,
    },
    Cbr {
        rate: Rate,
        packet_size: u32,
    },
    Media(Box<MediaSpec>),
}

#[derive(Clone, Debug)]
pub struct MediaSpec {
    pub cc: MediaCcSpec,
    pub sender: rtclab_media::sender::MediaSenderConfig,
    pub feedback: rtclab_media::receiver::FeedbackMode,
    /// Receiver stages after assembly.
    pub playout: rtclab_media::playout::Playout,
    pub decode: rtclab_media::decoder::DecodeTime,
    /// The receiver asks for a key frame (RTCP PLI) when it cannot decode (default on).
    pub key_frame_requests: bool,
    /// Frame-rate control at the receiver (AFR or a baseline, by name; checked).
    pub frame_rate_control: Option<String>,
}

#[derive(Clone, Debug)]
pub enum MediaCcSpec {
    Gcc(Box<rtclab_cc::gcc::GccConfig>),
    GccPaper(rtclab_cc::gcc::GccPaperConfig),
    /// A window-based controller on a media flow (encoder follows cwnd/srtt).
    Window(CcSpec),
    /// The fairness study's Zoom-like application model.
    ZoomLike(rtclab_cc::ZoomLikeConfig),
    /// A Metis regression tree over the bandwidth-estimation observation.
    Tree(rtclab_cc::learned::tree::TreeCcConfig),
}

#[derive(Clone, Debug)]
pub enum CcSpec {
    Reno(RenoConfig),
    Cubic(CubicConfig),
    Copa(rtclab_cc::CopaConfig),
    Bbr(rtclab_cc::BbrConfig),
    Qlibra(rtclab_cc::QlibraConfig),
    Abc(rtclab_cc::AbcConfig),
    /// A controller from `rtclab_cc::registry`, checked by building one with these settings.
    Registered(RegisteredCc),
}

/// A registered controller as a flow uses it.
#[derive(Clone, Debug)]
pub struct RegisteredCc {
    pub name: &'static str,
    pub role: rtclab_cc::registry::Role,
    pub params: Vec<(String, rtclab_core::params::Value)>,
    pub packet_size: u32,
    pub initial_window: u32,
}

impl CcSpec {
    pub fn name(&self) -> &'static str {
        match self {
            CcSpec::Reno(_) => "reno",
            CcSpec::Cubic(_) => "cubic",
            CcSpec::Copa(_) => "copa",
            CcSpec::Bbr(_) => "bbr",
            CcSpec::Qlibra(_) => "qlibra",
            CcSpec::Abc(_) => "abc",
            CcSpec::Registered(r) => r.name,
        }
    }
}

impl FlowKindSpec {
    pub fn kind_name(&self) -> &'static str {
        match self {
            FlowKindSpec::Tcp { .. } => "tcp",
            FlowKindSpec::Cbr { .. } => "cbr",
            FlowKindSpec::Registered { kind, .. } => kind.name,
            FlowKindSpec::Media(_) => "media",
        }
    }
    /// Bytes on the wire per (full) data packet.
    pub fn packet_size(&self) -> u32 {
        match self {
            FlowKindSpec::Tcp { packet_size, .. }
            | FlowKindSpec::Cbr { packet_size, .. }
            | FlowKindSpec::Registered { packet_size, .. } => *packet_size,
            FlowKindSpec::Media(m) => {
                m.sender.packetizer.max_payload + m.sender.packetizer.overhead
            }
        }
    }
    pub fn cc_name(&self) -> &'static str {
        match self {
            FlowKindSpec::Tcp { cc, .. } => cc.name(),
            FlowKindSpec::Cbr { .. } | FlowKindSpec::Registered { .. } => "none",
            FlowKindSpec::Media(m) => match &m.cc {
                MediaCcSpec::Gcc(_) => "gcc",
                MediaCcSpec::GccPaper(_) => "gcc_paper",
                MediaCcSpec::Window(c) => c.name(),
                MediaCcSpec::ZoomLike(_) => "zoom_like",
                MediaCcSpec::Tree(_) => "tree",
            },
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct MetricsSpec {
    pub bin: TimeDelta,
    pub warmup: TimeDelta,
    pub fairness_window: TimeDelta,
}

pub const MAX_FLOWS: usize = 10_000;
const MIN_PACKET: u64 = 64;
const MAX_PACKET: u64 = 65_535;

pub(crate) fn resolve(cfg: ScenarioConfig, base_dir: &Path) -> Result<Scenario, ConfigError> {
    let duration = cfg.duration.0;
    if duration <= TimeDelta::ZERO {
        return Err(ConfigError::new("duration", "must be positive (e.g. \"60s\")"));
    }
    let end = Time::ZERO + duration;
    if cfg.flows.is_empty() {
        return Err(ConfigError::new("flows", "at least one flow is needed ([[flows]] tables)"));
    }

    let topo = topology(&cfg)?;
    let mut flows = Vec::new();
    for (i, f) in cfg.flows.iter().enumerate() {
        let at = |field: &str| format!("flows[{i}].{field}");
        if f.count == 0 {
            return Err(ConfigError::new(at("count"), "must be at least 1"));
        }
        // Before a single flow is built: `count = 1000000` must not allocate its flows first.
        if flows.len() + f.count as usize > MAX_FLOWS {
            return Err(ConfigError::new(
                at("count"),
                format!(
                    "{} flows in all ({} before this entry), above the limit of {MAX_FLOWS}",
                    flows.len() + f.count as usize,
                    flows.len()
                ),
            ));
        }
        let (path, reverse_path) = flow_paths(f, &topo, &at)?;
        let access_rtt = match (f.rtt, topo.shorthand) {
            (None, true) => {
                return Err(ConfigError::new(at("rtt"), "required (e.g. rtt = \"40ms\")"))
            }
            (None, false) => TimeDelta::ZERO,
            (Some(r), _) => r.0,
        };
        if access_rtt < TimeDelta::ZERO || (topo.shorthand && access_rtt == TimeDelta::ZERO) {
            return Err(ConfigError::new(at("rtt"), "must be positive (e.g. \"40ms\")"));
        }
        let delays =
            |p: &[usize]| p.iter().map(|&l| topo.links[l].1).fold(TimeDelta::ZERO, |a, b| a + b);
        let base_rtt = access_rtt + delays(&path) + delays(&reverse_path);
        if base_rtt <= TimeDelta::ZERO {
            return Err(ConfigError::new(
                at("rtt"),
                "the path has no propagation delay: give the links a `delay` or the flow an `rtt`",
            ));
        }
        let start = Time::ZERO + f.start.map_or(TimeDelta::ZERO, |d| d.0);
        let stop = f.stop.map_or(end, |d| Time::ZERO + d.0);
        if start >= end {
            return Err(ConfigError::new(
                at("start"),
                format!("starts at {} but the scenario ends at {}", start, end),
            ));
        }
        if stop <= start {
            return Err(ConfigError::new(
                at("stop"),
                format!("{stop} is not after the start ({start})"),
            ));
        }
        if stop > end {
            return Err(ConfigError::new(
                at("stop"),
                format!(
                    "{stop} is after the end of the scenario ({end}); omit it to run to the end"
                ),
            ));
        }
        let packet_size = match f.packet_size {
            None => 1500,
            Some(s) if (MIN_PACKET..=MAX_PACKET).contains(&s.0) => s.0 as u32,
            Some(s) => {
                return Err(ConfigError::new(
                    at("packet_size"),
                    format!("{} B is out of range: accepted {MIN_PACKET}..={MAX_PACKET} B", s.0),
                ))
            }
        };
        if f.media.is_some() && f.kind != FlowKind::Media {
            return Err(ConfigError::new(
                at("media"),
                "media parameters apply to kind = \"media\" flows only",
            ));
        }
        if f.params.is_some()
            && !matches!(f.kind, FlowKind::Registered(_))
            && !matches!(f.cc, Some(CcName::Registered(_)))
        {
            return Err(ConfigError::new(
                at("params"),
                "`params` apply to registered flow kinds and registered controllers only; tcp, cbr and media have named keys",
            ));
        }
        if f.recovery.is_some() && f.kind != FlowKind::Tcp {
            return Err(ConfigError::new(
                at("recovery"),
                "recovery (rack/tlp/frto) applies to tcp flows only",
            ));
        }
        if f.video.is_some() && f.kind != FlowKind::Tcp {
            return Err(ConfigError::new(
                at("video"),
                "video applies to tcp flows only (video over TCP); media flows take `media`",
            ));
        }
        if f.ecn.is_some() && f.kind != FlowKind::Tcp {
            return Err(ConfigError::new(
                at("ecn"),
                "ecn applies to tcp flows only (media, cbr and registered senders are not ECN-capable)",
            ));
        }
        let kind = match &f.kind {
            FlowKind::Registered(name) => registered_flow(f, name, packet_size, &at)?,
            FlowKind::Media => media_spec(f, &at, base_dir)?,
            FlowKind::Tcp => {
                if f.rate.is_some_and(|r| r.0 == Rate::ZERO) {
                    return Err(ConfigError::new(
                        at("rate"),
                        "must be positive (leave `rate` out for an unbounded bulk transfer)",
                    ));
                }
                let iw = f.initial_window.unwrap_or(10);
                if iw == 0 || iw > 1000 {
                    return Err(ConfigError::new(
                        at("initial_window"),
                        format!("{iw} is out of range: accepted 1..=1000 packets"),
                    ));
                }
                let name = f.cc.unwrap_or(CcName::Cubic);
                let caps = name.caps();
                if !caps.tcp {
                    return Err(ConfigError::new(
                        at("cc"),
                        format!(
                            "{:?} is a media controller; tcp flows accept {} (or use kind = \"media\")",
                            name.as_str(),
                            crate::config::tcp_controller_names()
                        ),
                    ));
                }
                let cc = window_cc_spec(f, name, packet_size, iw, Role::Window, &at)?;
                if caps.ecn_feedback && f.delayed_ack == Some(true) {
                    return Err(ConfigError::new(
                        at("delayed_ack"),
                        format!("{:?} carries its feedback in the ECN field: its receiver acknowledges every packet (each ACK echoes one packet's mark); leave `delayed_ack` out or set it to false", name.as_str()),
                    ));
                }
                if caps.ecn_feedback && f.ecn == Some(true) {
                    return Err(ConfigError::new(
                        at("ecn"),
                        format!("{:?} uses the ECN field for its own marks (ABC: ECT(1) accelerate, ECT(0) brake); leave `ecn` out", name.as_str()),
                    ));
                }
                let video = match &f.video {
                    None => None,
                    Some(v) => Some(tcp_video(f, v, packet_size, &at)?),
                };
                FlowKindSpec::Tcp {
                    video,
                    cc,
                    packet_size,
                    ack_every: if !caps.ecn_feedback && f.delayed_ack.unwrap_or(true) {
                        2
                    } else {
                        1
                    },
                    app_rate: f.rate.map(|r| r.0),
                    ecn: f.ecn.unwrap_or(false),
                    recovery: {
                        let r = f.recovery.unwrap_or_default();
                        TcpRecoverySpec {
                            rack: r.rack.unwrap_or(true),
                            tlp: r.tlp.unwrap_or(true),
                            frto: r.frto.unwrap_or(true),
                        }
                    },
                    size: match f.size {
                        None => None,
                        Some(s) if s.0 == 0 => {
                            return Err(ConfigError::new(at("size"), "must be at least one byte"))
                        }
                        Some(s) => Some(s.0),
                    },
                }
            }
            FlowKind::Cbr => {
                if f.cc.is_some() {
                    return Err(ConfigError::new(
                        at("cc"),
                        "cbr flows have no congestion control; remove `cc`",
                    ));
                }
                if f.cubic.is_some()
                    || f.copa.is_some()
                    || f.qlibra.is_some()
                    || f.initial_window.is_some()
                    || f.delayed_ack.is_some()
                    || f.size.is_some()
                {
                    return Err(ConfigError::new(
                        at("kind"),
                        "cubic/copa/initial_window/delayed_ack/size apply to tcp flows only",
                    ));
                }
                let Some(rate) = f.rate else {
                    return Err(ConfigError::new(
                        at("rate"),
                        "a cbr flow needs a rate (e.g. rate = \"5Mbps\")",
                    ));
                };
                if rate.0 == Rate::ZERO {
                    return Err(ConfigError::new(at("rate"), "must be positive"));
                }
                FlowKindSpec::Cbr { rate: rate.0, packet_size }
            }
        };
        let reversed = match f.direction.as_deref() {
            None | Some("forward") => false,
            Some("reverse") => true,
            Some(other) => {
                return Err(ConfigError::new(
                    at("direction"),
                    format!("unknown direction {other:?} (accepted: \"forward\", \"reverse\")"),
                ))
            }
        };
        let mut pauses = Vec::new();
        for (i, p) in f.pauses.iter().flatten().enumerate() {
            let at_i = |k: &str| at(&format!("pauses[{i}].{k}"));
            if !matches!(kind, FlowKindSpec::Media(_) | FlowKindSpec::Cbr { .. }) {
                return Err(ConfigError::new(
                    at("pauses"),
                    format!(
                        "pauses apply to media and cbr flows (this is a {} flow)",
                        kind.cc_name()
                    ),
                ));
            }
            let (a, u) = (Time::ZERO + p.at.0, Time::ZERO + p.until.0);
            let after = pauses.last().map_or(start, |&(_, u): &(Time, Time)| u);
            if a <= after {
                return Err(ConfigError::new(
                    at_i("at"),
                    format!("{a} is not after the flow's start or the previous resume ({after})"),
                ));
            }
            if u <= a || u >= stop {
                return Err(ConfigError::new(
                    at_i("until"),
                    format!("{u} must be after the pause ({a}) and before the flow stops ({stop})"),
                ));
            }
            pauses.push((a, u));
        }
        for k in 0..f.count {
            let id = flows.len() as u32;
            let name = match (&f.name, f.count) {
                (Some(n), 1) => n.clone(),
                (Some(n), _) => format!("{n}-{k}"),
                (None, _) => format!("{}{}", kind.cc_name(), id),
            };
            flows.push(FlowSpec {
                id,
                name,
                kind: kind.clone(),
                rtt: access_rtt,
                base_rtt,
                path: path.clone(),
                reverse_path: reverse_path.clone(),
                start,
                stop,
                pauses: pauses.clone(),
                reversed,
                jitter: f.jitter.map_or(TimeDelta::ZERO, |d| d.0),
            });
        }
    }

    let mtu = flows.iter().map(|f| f.kind.packet_size()).max().unwrap_or(1500);
    let mut links = Vec::new();
    for (li, (name, delay, parts, rev)) in topo.links.iter().enumerate() {
        // "bdp" limits use the largest base RTT among the flows crossing the link.
        let max_rtt = flows
            .iter()
            .filter(|f| f.path.contains(&li) || f.reverse_path.contains(&li))
            .map(|f| f.base_rtt)
            .max()
            .unwrap_or(TimeDelta::ZERO);
        let (at, rev_at, label, reverse_label) = if topo.shorthand {
            (
                "link".to_string(),
                "reverse_link".to_string(),
                "link".to_string(),
                "reverse_link".to_string(),
            )
        } else {
            (
                format!("links[{li}]"),
                format!("links[{li}].reverse"),
                format!("links.{name}"),
                format!("links.{name}.reverse"),
            )
        };
        if rev.is_some_and(|r| r.conditions.is_some()) {
            return Err(ConfigError::new(
                format!("{rev_at}.conditions"),
                "goes on the forward link: it sets the delay of both directions and the loss of the forward one",
            ));
        }
        let conditions = match parts.conditions {
            Some(c) => Some(conditions_spec(c, &at, base_dir)?),
            None => None,
        };
        // A replayed RTT adds to the flows' own for "bdp" limits (its largest value).
        let max_rtt = max_rtt
            + conditions
                .as_ref()
                .and_then(|t| t.samples.iter().map(|x| x.rtt).max())
                .unwrap_or(TimeDelta::ZERO);
        let forward = link_spec(*parts, &at, base_dir, duration, max_rtt, mtu)?;
        let uplink = forward.wifi.as_ref().filter(|w| w.uplink).map(|w| w.station_queue);
        let reverse =
            match (rev, uplink) {
                (Some(_), Some(_)) => return Err(ConfigError::new(
                    rev_at,
                    "goes with a wifi link only without `uplink`: with `wifi.uplink = true` the \
                     reverse direction is the clients' stations on the same channel",
                )),
                (Some(r), None) => Some(link_spec(*r, &rev_at, base_dir, duration, max_rtt, mtu)?),
                // The uplink stations on the channel: the summary's reverse direction (the
                // network builds no link of its own for it: the forward MAC carries it).
                (None, Some(q)) => Some(LinkSpec {
                    queue_limit: QueueLimit::Packets(q),
                    queue_kind: "droptail".into(),
                    queue_params: Vec::new(),
                    loss: None,
                    wifi: None,
                    ..forward.clone()
                }),
                (None, None) => None,
            };
        links.push(NamedLink {
            name: name.clone(),
            label,
            reverse_label,
            delay: *delay,
            forward,
            reverse,
            conditions,
        });
    }
    let middleboxes = middlebox_specs(&cfg, &links)?;

    let m = &cfg.metrics;
    if m.bin.0 < TimeDelta::from_millis(1) {
        return Err(ConfigError::new("metrics.bin", "must be at least 1ms"));
    }
    if m.warmup.0 >= duration {
        return Err(ConfigError::new("metrics.warmup", "must be shorter than the duration"));
    }
    if duration - m.warmup.0 < m.bin.0 {
        // Not one time-series bin would complete: there is nothing to measure.
        let at = if m.warmup.0 > TimeDelta::ZERO { "metrics.warmup" } else { "duration" };
        return Err(ConfigError::new(
            at,
            format!(
                "leaves a measurement window of {} s, shorter than one time-series bin \
                 (metrics.bin = {} s): no result can be measured; lengthen the run or shorten the bin",
                (duration - m.warmup.0).as_secs_f64(),
                m.bin.0.as_secs_f64()
            ),
        ));
    }
    if m.fairness_window.0 < m.bin.0 || m.fairness_window.0.as_nanos() % m.bin.0.as_nanos() != 0 {
        return Err(ConfigError::new(
            "metrics.fairness_window",
            "must be a whole multiple of metrics.bin",
        ));
    }

    feedback_paths(&middleboxes, &flows, &links)?;

    Ok(Scenario {
        name: cfg.name.clone().unwrap_or_else(|| "scenario".into()),
        description: cfg.description.clone(),
        duration,
        seed: cfg.seed,
        links,
        flows,
        middleboxes,
        metrics: MetricsSpec {
            bin: m.bin.0,
            warmup: m.warmup.0,
            fairness_window: m.fairness_window.0,
        },
    })
}

/// The largest input file (trace, frame sizes) a scenario may read: 256 MiB (the largest of
/// the papers' traces is a few MB).
pub const MAX_INPUT_FILE_BYTES: u64 = 256 << 20;

/// Reads a trace or frame-size file: a regular file (not a device or a pipe, which may never
/// end) no larger than [`MAX_INPUT_FILE_BYTES`], as UTF-8 text.
fn read_input_file(full: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(full).map_err(|e| format!("cannot read it: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file (a device, pipe or directory cannot be a trace)".into());
    }
    if meta.len() > MAX_INPUT_FILE_BYTES {
        return Err(format!(
            "{} MiB, above the {} MiB limit for input files",
            meta.len() >> 20,
            MAX_INPUT_FILE_BYTES >> 20
        ));
    }
    std::fs::read_to_string(full).map_err(|e| format!("cannot read it: {e}"))
}

/// Reads a frame-size file: one size in bytes per line; blank lines and `#` comments skipped.
fn read_frame_sizes(base_dir: &Path, path: &str, at: &str) -> Result<Vec<u32>, ConfigError> {
    let full = base_dir.join(path);
    let text = read_input_file(&full)
        .map_err(|e| ConfigError::new(at, format!("frame-size file {}: {e}", full.display())))?;
    let mut sizes = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let l = line.split('#').next().unwrap_or("").trim();
        if l.is_empty() {
            continue;
        }
        match l.parse::<u32>() {
            Ok(v) if v > 0 && v <= 10_000_000 => sizes.push(v),
            _ => {
                return Err(ConfigError::new(
                    at,
                    format!(
                        "{path}:{}: expected a frame size in bytes (1..=10000000), got {l:?}",
                        i + 1
                    ),
                ))
            }
        }
    }
    if sizes.is_empty() {
        return Err(ConfigError::new(at, format!("{path} holds no frame sizes")));
    }
    Ok(sizes)
}

fn apply_params<C>(
    table: &[rtclab_cc::params::Param<C>],
    cfg: &mut C,
    given: Option<&std::collections::BTreeMap<String, crate::config::ParamValue>>,
    prefix: &str,
    at: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    use rtclab_cc::params::{set, Value};
    for (name, v) in given.into_iter().flatten() {
        let v = match v {
            crate::config::ParamValue::Bool(b) => Value::Bool(*b),
            crate::config::ParamValue::Num(x) => Value::Num(*x),
            crate::config::ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    at(&format!("{prefix}.{name}")),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        set(table, cfg, name, v)
            .map_err(|e| ConfigError::new(at(&format!("{prefix}.{name}")), e))?;
    }
    Ok(())
}

fn media_spec(
    f: &FlowConfig,
    at: &dyn Fn(&str) -> String,
    base_dir: &Path,
) -> Result<FlowKindSpec, ConfigError> {
    use rtclab_cc::gcc::detector::DetectorConfig;
    use rtclab_cc::gcc::{GccConfig, GccPaperConfig};
    use rtclab_media::encoder::EncoderConfig;
    use rtclab_media::packetizer::PacketizerConfig;
    use rtclab_media::receiver::FeedbackMode;
    use rtclab_media::sender::MediaSenderConfig;
    if f.rate.is_some() || f.delayed_ack.is_some() || f.size.is_some() {
        return Err(ConfigError::new(
            at("kind"),
            "rate/delayed_ack/size do not apply to media flows",
        ));
    }
    let p = f.media.as_ref();
    let cc = f.cc.unwrap_or(CcName::Gcc);
    let is_gcc = matches!(cc, CcName::Gcc | CcName::GccPaper | CcName::ZoomLike | CcName::Tree);
    if is_gcc
        && (f.cubic.is_some()
            || f.copa.is_some()
            || f.qlibra.is_some()
            || f.initial_window.is_some())
    {
        return Err(ConfigError::new(
            at("kind"),
            "cubic/copa/qlibra/initial_window apply to window controllers, not GCC",
        ));
    }
    let rate = |v: Option<RateValue>, default: Rate, field: &str| -> Result<Rate, ConfigError> {
        let r = v.map_or(default, |r| r.0);
        if r == Rate::ZERO {
            return Err(ConfigError::new(at(&format!("media.{field}")), "must be positive"));
        }
        Ok(r)
    };
    let start = rate(p.and_then(|p| p.start_bitrate), Rate::from_kbps(300), "start_bitrate")?;
    let min = rate(p.and_then(|p| p.min_bitrate), Rate::from_kbps(30), "min_bitrate")?;
    let max = rate(p.and_then(|p| p.max_bitrate), Rate::from_kbps(2_000), "max_bitrate")?;
    if min > max || start < min || start > max {
        return Err(ConfigError::new(
            at("media"),
            format!("need min_bitrate <= start_bitrate <= max_bitrate, got {min}, {start}, {max}"),
        ));
    }
    let fps = p.and_then(|p| p.fps).unwrap_or(30.0);
    if !(fps > 0.0 && fps <= 240.0) {
        return Err(ConfigError::new(
            at("media.fps"),
            format!("{fps} is out of range: accepted (0, 240]"),
        ));
    }
    let threshold = p.and_then(|p| p.threshold);
    if let Some(t) = threshold {
        // gcc_paper's default statistic (the paper's m) runs on thresholds below libwebrtc's 6.
        if !(t > 0.0 && t <= 600.0) {
            return Err(ConfigError::new(
                at("media.threshold"),
                format!("{t} is out of range: accepted (0, 600] (ms-equivalents of the detector's statistic)"),
            ));
        }
    }
    let adaptive = p.and_then(|p| p.adaptive_threshold).unwrap_or(true);
    let tune = |d: DetectorConfig| DetectorConfig {
        adaptive,
        initial_threshold: threshold.unwrap_or(d.initial_threshold),
        ..d
    };
    let feedback_name = p.and_then(|p| p.feedback);
    let (ccspec, feedback) = match (cc, feedback_name) {
        (CcName::Gcc, None | Some(FeedbackName::Twcc) | Some(FeedbackName::Ccfb)) => {
            let mut g = GccConfig {
                start_bitrate_bps: start.as_bps() as f64,
                min_bitrate_bps: min.as_bps() as f64,
                max_bitrate_bps: max.as_bps() as f64,
                ..GccConfig::default()
            };
            g.trendline.detector = tune(g.trendline.detector);
            if p.and_then(|p| p.tfrc_floor).is_some() {
                return Err(ConfigError::new(at("media.tfrc_floor"), "applies to cc = \"gcc_paper\" only (the 2013 loss rule)"));
            }
            if p.and_then(|p| p.rtcp_2013).is_some() {
                return Err(ConfigError::new(at("media.rtcp_2013"), "applies to cc = \"gcc_paper\" only (its receiver sends the receiver reports)"));
            }
            apply_params(rtclab_cc::gcc::params::GCC_PARAMS, &mut g, p.and_then(|p| p.gcc.as_ref()), "media.gcc", at)?;
            if g.loss.low_loss > g.loss.high_loss {
                return Err(ConfigError::new(at("media.gcc"), format!("need loss_low <= loss_high, got {} > {}", g.loss.low_loss, g.loss.high_loss)));
            }
            if g.trendline.detector.min_threshold > g.trendline.detector.max_threshold {
                return Err(ConfigError::new(at("media.gcc"), "need min_threshold <= max_threshold"));
            }
            let feedback = if feedback_name == Some(FeedbackName::Ccfb) {
                if p.and_then(|p| p.feedback_interval).is_some() {
                    return Err(ConfigError::new(at("media.feedback_interval"), "applies to twcc feedback only (RFC 8888 feedback follows frames and its 500 kbit/s budget)"));
                }
                FeedbackMode::Ccfb(rtclab_media::ccfb::CcfbConfig::default())
            } else {
                // libwebrtc's cadence for a receiver whose own send-side estimate is its start
                // rate (a one-way call: the receiving endpoint sends no media): 50 ms.
                let interval = p.and_then(|p| p.feedback_interval).map_or_else(
                    || rtclab_media::feedback::libwebrtc_twcc_interval(RECEIVER_SEND_ESTIMATE_BPS),
                    |d| d.0,
                );
                if interval <= rtclab_core::TimeDelta::ZERO {
                    return Err(ConfigError::new(at("media.feedback_interval"), "must be positive"));
                }
                FeedbackMode::Twcc { interval }
            };
            (MediaCcSpec::Gcc(Box::new(g)), feedback)
        }
        (CcName::GccPaper, None | Some(FeedbackName::Remb)) => {
            if p.and_then(|p| p.feedback_interval).is_some() {
                return Err(ConfigError::new(at("media.feedback_interval"), "applies to twcc feedback only"));
            }
            // The statistic picks the detector's defaults (bounds in its units), so it is read
            // before the other parameters, which may then override them.
            let remb_path = matches!(
                p.and_then(|p| p.gcc.as_ref()).and_then(|g| g.get("remb_statistic")),
                Some(crate::config::ParamValue::Bool(true))
            );
            let base = if remb_path { GccPaperConfig::remb_path() } else { GccPaperConfig::default() };
            let mut g = GccPaperConfig {
                start_bitrate_bps: start.as_bps() as f64,
                min_bitrate_bps: min.as_bps() as f64,
                max_bitrate_bps: max.as_bps() as f64,
                ..base
            };
            g.detector = tune(g.detector);
            g.loss.tfrc_floor = p.and_then(|p| p.tfrc_floor).unwrap_or(false);
            apply_params(rtclab_cc::gcc::params::GCC_PAPER_PARAMS, &mut g, p.and_then(|p| p.gcc.as_ref()), "media.gcc", at)?;
            if g.loss.low_loss > g.loss.high_loss {
                return Err(ConfigError::new(at("media.gcc"), format!("need loss_low <= loss_high, got {} > {}", g.loss.low_loss, g.loss.high_loss)));
            }
            let rr_randomized = p.and_then(|p| p.rtcp_2013).unwrap_or(false);
            (MediaCcSpec::GccPaper(g), FeedbackMode::RembAndRr {
                estimator: Box::new(g),
                rr_interval: rtclab_core::TimeDelta::from_secs(1),
                rr_randomized,
            })
        }
        (CcName::Gcc, Some(FeedbackName::Remb)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"remb\" cannot drive cc = \"gcc\", which estimates at the sender from per-packet feedback; use feedback = \"twcc\" (or cc = \"gcc_paper\")",
            ))
        }
        (CcName::GccPaper, Some(FeedbackName::Twcc)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"twcc\" cannot drive cc = \"gcc_paper\", whose estimator runs at the receiver and reports REMB; use feedback = \"remb\" (or cc = \"gcc\")",
            ))
        }
        (CcName::GccPaper, Some(FeedbackName::Ccfb)) => {
            return Err(ConfigError::new(
                at("media.feedback"),
                "\"rfc8888\" cannot drive cc = \"gcc_paper\", whose estimator runs at the receiver and reports REMB; use feedback = \"remb\" (or cc = \"gcc\")",
            ))
        }
        (CcName::ZoomLike, fb) => {
            let feedback = per_packet_feedback(p, fb, "zoom_like", 100, at)?;
            let mut z = rtclab_cc::ZoomLikeConfig {
                max_media_bps: max.as_bps() as f64,
                min_media_bps: min.as_bps() as f64,
                start_media_bps: start.as_bps() as f64,
                ..Default::default()
            };
            apply_params(
                rtclab_cc::zoom_like::ZOOM_LIKE_PARAMS,
                &mut z,
                p.and_then(|p| p.zoom_like.as_ref()),
                "media.zoom_like",
                at,
            )?;
            (MediaCcSpec::ZoomLike(z), feedback)
        }
        (CcName::Tree, fb) => {
            let feedback = per_packet_feedback(p, fb, "tree", 50, at)?;
            (MediaCcSpec::Tree(tree_spec(p, min, max, start, base_dir, at)?), feedback)
        }
        (c, fb) if !matches!(c, CcName::Gcc | CcName::GccPaper) => {
            let name = match c {
                CcName::Registered(n) => n.to_string(),
                c => format!("{c:?}").to_lowercase(),
            };
            // Acknowledgement cadence of a QUIC receiver (max_ack_delay 25 ms).
            let feedback = per_packet_feedback(p, fb, &name, 25, at)?;
            let iw = f.initial_window.unwrap_or(10);
            if iw == 0 || iw > 1000 {
                return Err(ConfigError::new(
                    at("initial_window"),
                    format!("{iw} is out of range: accepted 1..=1000 packets"),
                ));
            }
            let packet = f.packet_size.map_or(1248, |s| s.0.min(65_535) as u32);
            (MediaCcSpec::Window(window_cc_spec(f, c, packet, iw, Role::Media, at)?), feedback)
        }
        _ => unreachable!("every controller is covered above"),
    };
    let key = p.and_then(|p| p.key_frame_interval).map(|d| d.0);
    let encoder = EncoderConfig {
        fps,
        min_bitrate: min,
        max_bitrate: max,
        key_frame_interval: match key {
            Some(d) if d == rtclab_core::TimeDelta::ZERO => None,
            Some(d) => Some(d),
            None => EncoderConfig::default().key_frame_interval,
        },
        ..EncoderConfig::default()
    };
    let mut encoder = encoder;
    // A duration key within 0..=`max_s` seconds, a number key within `lo..=hi`.
    let seconds = |d: Option<&crate::units::Duration>, max_s: i64, key: &str| match d {
        Some(d) if d.0 < TimeDelta::ZERO || d.0 > TimeDelta::from_secs(max_s) => {
            Err(ConfigError::new(at(key), format!("must be within 0..={max_s} s")))
        }
        d => Ok(d.map(|d| d.0)),
    };
    let number = |v: Option<f64>, lo: f64, hi: f64, key: &str, meaning: &str| match v {
        Some(v) if !(lo..=hi).contains(&v) => Err(ConfigError::new(
            at(key),
            format!("{v} is out of range: accepted {lo}..={hi} ({meaning})"),
        )),
        v => Ok(v),
    };
    if let Some(d) = seconds(p.and_then(|p| p.encode_time.as_ref()), 1, "media.encode_time")? {
        encoder.encode_time = d;
    }
    if let Some(d) = seconds(p.and_then(|p| p.encoder_lag.as_ref()), 10, "media.encoder_lag")? {
        encoder.rate_time_constant = d;
    }
    let jitter = p.and_then(|p| p.frame_size_jitter);
    if let Some(j) = number(
        jitter,
        0.0,
        0.5,
        "media.frame_size_jitter",
        "the spread of frame sizes around the rate",
    )? {
        encoder.size_jitter = j;
    }
    let key_size = p.and_then(|p| p.key_frame_size);
    if let Some(k) =
        number(key_size, 1.0, 20.0, "media.key_frame_size", "a key frame's size in normal frames")?
    {
        encoder.key_frame_factor = k;
    }
    let share = p.and_then(|p| p.encoder_target_share);
    if let Some(s) = number(
        share,
        0.1,
        1.0,
        "media.encoder_target_share",
        "the share of the controller's target the encoder is given",
    )? {
        encoder.target_share = s;
    }
    if let Some(r) = p.and_then(|p| p.resolution.as_deref()) {
        let parsed = r.split_once(['x', 'X']).and_then(|(w, h)| {
            Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?))
        });
        match parsed {
            Some((w, h)) if (16..=16_384).contains(&w) && (16..=16_384).contains(&h) => {
                (encoder.width, encoder.height) = (w, h);
            }
            _ => {
                return Err(ConfigError::new(
                    at("media.resolution"),
                    format!(
                    "{r:?} is not WIDTHxHEIGHT with each side in 16..=16384 (e.g. \"1920x1080\")"
                ),
                ))
            }
        }
    }
    if let Some(path) = p.and_then(|p| p.frame_sizes.as_deref()) {
        encoder.size_trace = read_frame_sizes(base_dir, path, &at("media.frame_sizes"))?;
        encoder.size_trace_scaled = p.and_then(|p| p.frame_sizes_scaled).unwrap_or(true);
    } else if p.and_then(|p| p.frame_sizes_scaled).is_some() {
        return Err(ConfigError::new(at("media.frame_sizes_scaled"), "needs media.frame_sizes"));
    }
    // The 2017 paper's pacer sends 5 ms bursts; today's libwebrtc paces smoothly.
    let default_burst = match cc {
        CcName::GccPaper => Some(rtclab_core::TimeDelta::from_millis(5)),
        _ => None,
    };
    let pacer_burst = p
        .and_then(|p| p.pacer_burst)
        .map_or(default_burst, |d| Some(d.0))
        .filter(|d| *d > rtclab_core::TimeDelta::ZERO);
    if pacer_burst.is_some_and(|d| d > rtclab_core::TimeDelta::from_secs(1)) {
        return Err(ConfigError::new(
            at("media.pacer_burst"),
            "is out of range: accepted 0s..=1s (the paper uses 5ms)",
        ));
    }
    // packet_size is the largest packet on the wire (the MTU the packetizer fills).
    let mut packetizer = PacketizerConfig::default();
    if let Some(size) = f.packet_size {
        let min = packetizer.overhead as u64 + 52;
        if size.0 < min || size.0 > 65_535 {
            return Err(ConfigError::new(
                at("packet_size"),
                format!("{} B is out of range for media: accepted {min}..=65535 B (48 B of headers + payload)", size.0),
            ));
        }
        packetizer.max_payload = size.0 as u32 - packetizer.overhead;
    }
    if p.is_some_and(|p| p.zoom_like.is_some()) && !matches!(ccspec, MediaCcSpec::ZoomLike(_)) {
        return Err(ConfigError::new(
            at("media.zoom_like"),
            format!("Zoom-like parameters given but cc is {:?}", format!("{cc:?}").to_lowercase()),
        ));
    }
    if p.is_some_and(|p| p.tree.is_some()) && !matches!(ccspec, MediaCcSpec::Tree(_)) {
        return Err(ConfigError::new(
            at("media.tree"),
            format!(
                "a tree is given but cc is {:?} (use cc = \"tree\")",
                format!("{cc:?}").to_lowercase()
            ),
        ));
    }
    let protection = protection_spec(p.and_then(|p| p.protection.as_ref()), &ccspec, at)?;
    let sender =
        MediaSenderConfig { encoder, packetizer, start_bitrate: start, pacer_burst, protection };
    use rtclab_media::decoder::DecodeTime;
    use rtclab_media::playout::Playout;
    let positive =
        |d: Option<crate::units::Duration>, key: &str| -> Result<Option<TimeDelta>, ConfigError> {
            match d {
                Some(d) if d.0 <= TimeDelta::ZERO || d.0 > TimeDelta::from_secs(10) => {
                    Err(ConfigError::new(
                        at(key),
                        "must be positive and at most 10 s (leave it out for none)",
                    ))
                }
                d => Ok(d.map(|d| d.0)),
            }
        };
    let delay = positive(p.and_then(|p| p.playout_delay), "media.playout_delay")?;
    let playout = match p.and_then(|p| p.jitter_buffer.as_deref()) {
        None => delay.map_or(Playout::Immediate, Playout::Fixed),
        Some("adaptive") => Playout::Adaptive { min: delay.unwrap_or(TimeDelta::ZERO) },
        Some(other) => {
            return Err(ConfigError::new(
                at("media.jitter_buffer"),
                format!("unknown jitter buffer {other:?} (accepted: \"adaptive\"; leave it out for a fixed or no playout delay)"),
            ))
        }
    };
    let mut decode = positive(p.and_then(|p| p.decode_time), "media.decode_time")?
        .map_or(DecodeTime::Zero, DecodeTime::Fixed);
    if let Some(name) = p.and_then(|p| p.decoder.as_deref()) {
        if decode != DecodeTime::Zero {
            return Err(ConfigError::new(
                at("media.decoder"),
                "give either decode_time (a constant) or decoder (a device class), not both",
            ));
        }
        let Some(c) = rtclab_media::afr::clients::category(name) else {
            let names: Vec<String> = rtclab_media::afr::clients::CATEGORIES
                .iter()
                .map(|c| format!("{:?}", c.name))
                .collect();
            return Err(ConfigError::new(
                at("media.decoder"),
                format!("unknown device class {name:?} (accepted: {})", names.join(", ")),
            ));
        };
        decode = DecodeTime::Device(c);
    }
    let key_frame_requests = p.and_then(|p| p.key_frame_requests).unwrap_or(true);
    let frame_rate_control = p.and_then(|p| p.frame_rate_control.clone());
    if let Some(name) = &frame_rate_control {
        rtclab_media::afr::controller::FrameRatePolicy::by_name(name, 2.0, 0.95, false)
            .map_err(|e| ConfigError::new(at("media.frame_rate_control"), e))?;
    }
    Ok(FlowKindSpec::Media(Box::new(MediaSpec {
        cc: ccspec,
        sender,
        feedback,
        playout,
        decode,
        key_frame_requests,
        frame_rate_control,
    })))
}

/// `media.protection`. `auto` is the application model's own protection: retransmission
/// (NACK + RTX) and loss-adaptive FEC belong to the Zoom-like model only.
fn protection_spec(
    p: Option<&crate::config::ProtectionConfig>,
    cc: &MediaCcSpec,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_media::protection::ProtectionSpec, ConfigError> {
    use crate::config::ProtectionKind;
    use rtclab_media::protection::ProtectionSpec;
    use rtclab_media::rtx::RtxConfig;
    let kind = p.map_or(ProtectionKind::Auto, |p| p.kind);
    let max_rtt = match p.and_then(|p| p.rtx_max_rtt) {
        Some(d) if d.0 <= TimeDelta::ZERO => {
            return Err(ConfigError::new(at("media.protection.rtx_max_rtt"), "must be positive"))
        }
        d => d.map(|d| d.0),
    };
    for (k, given, kinds) in [
        ("fec", p.and_then(|p| p.fec).is_some(), &[ProtectionKind::Fixed][..]),
        ("code", p.and_then(|p| p.code.as_ref()).is_some(), &[ProtectionKind::Fixed]),
        ("rtx", p.and_then(|p| p.rtx).is_some(), &[ProtectionKind::Fixed, ProtectionKind::Webrtc]),
        ("lambda_exp", p.and_then(|p| p.lambda_exp).is_some(), &[ProtectionKind::Hairpin]),
        ("deadline", p.and_then(|p| p.deadline).is_some(), &[ProtectionKind::Hairpin]),
    ] {
        if given && !kinds.contains(&kind) {
            let names: Vec<String> = kinds
                .iter()
                .map(|k| format!("kind = \"{}\"", format!("{k:?}").to_lowercase()))
                .collect();
            return Err(ConfigError::new(
                at(&format!("media.protection.{k}")),
                format!(
                    "applies to {} only (kind = \"{}\" decides it)",
                    names.join(" or "),
                    format!("{kind:?}").to_lowercase()
                ),
            ));
        }
    }
    Ok(match kind {
        ProtectionKind::None => ProtectionSpec::None,
        ProtectionKind::Auto => {
            let rtx = match cc {
                MediaCcSpec::ZoomLike(z) if z.rtx_max_rtt > TimeDelta::ZERO => Some(RtxConfig {
                    max_rtt: max_rtt.unwrap_or(z.rtx_max_rtt),
                    ..Default::default()
                }),
                _ => None,
            };
            ProtectionSpec::Auto { rtx }
        }
        ProtectionKind::Fixed => {
            let fec = p.and_then(|p| p.fec).unwrap_or(0.0);
            if !(0.0..=1.0).contains(&fec) {
                return Err(ConfigError::new(
                    at("media.protection.fec"),
                    format!("{fec} is out of range: accepted 0..=1 FEC packets per media packet"),
                ));
            }
            let rtx = p.and_then(|p| p.rtx).unwrap_or(false).then(|| RtxConfig {
                max_rtt: max_rtt.unwrap_or(RtxConfig::default().max_rtt),
                ..Default::default()
            });
            use rtclab_media::packetizer::FecCode;
            let code = match p.and_then(|p| p.code.as_deref()) {
                None | Some("rs") => FecCode::ReedSolomon,
                Some("xor") => FecCode::Xor,
                Some(other) => {
                    return Err(ConfigError::new(
                        at("media.protection.code"),
                        format!("unknown FEC code {other:?} (accepted: \"rs\", \"xor\")"),
                    ))
                }
            };
            ProtectionSpec::Fixed { fec_ratio: fec, rtx, code }
        }
        ProtectionKind::Webrtc => {
            let rtx = p.and_then(|p| p.rtx).unwrap_or(false).then(|| RtxConfig {
                max_rtt: max_rtt.unwrap_or(RtxConfig::default().max_rtt),
                ..Default::default()
            });
            ProtectionSpec::WebRtc { rtx }
        }
        ProtectionKind::Hairpin => {
            let lambda_exp = p.and_then(|p| p.lambda_exp).unwrap_or(4.0);
            if !(-1.0..=12.0).contains(&lambda_exp) {
                return Err(ConfigError::new(
                    at("media.protection.lambda_exp"),
                    format!("{lambda_exp} is out of range: accepted -1..=12 (λ = 10^-lambda_exp)"),
                ));
            }
            let deadline = p.and_then(|p| p.deadline).map_or(TimeDelta::from_millis(100), |d| d.0);
            if deadline <= TimeDelta::ZERO {
                return Err(ConfigError::new(at("media.protection.deadline"), "must be positive"));
            }
            let rtx = RtxConfig {
                max_rtt: max_rtt.unwrap_or(RtxConfig::default().max_rtt),
                ..Default::default()
            };
            ProtectionSpec::Hairpin { lambda_exp, deadline, rtx }
        }
    })
}

/// Feedback for a media controller that is not GCC (it needs per-packet reports): TWCC at
/// `default_ms` or RFC 8888; GCC-only parameters and REMB are rejected.
fn per_packet_feedback(
    p: Option<&crate::config::MediaParams>,
    fb: Option<FeedbackName>,
    cc: &str,
    default_ms: i64,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_media::receiver::FeedbackMode, ConfigError> {
    use rtclab_media::receiver::FeedbackMode;
    if fb == Some(FeedbackName::Remb) {
        return Err(ConfigError::new(
            at("media.feedback"),
            format!("\"remb\" cannot drive cc = {cc:?}, which needs per-packet feedback; use feedback = \"twcc\" or \"rfc8888\""),
        ));
    }
    if p.is_some_and(|p| {
        p.threshold.is_some()
            || p.adaptive_threshold.is_some()
            || p.tfrc_floor.is_some()
            || p.rtcp_2013.is_some()
            || p.gcc.is_some()
    }) {
        return Err(ConfigError::new(
            at("media"),
            "threshold/adaptive_threshold/tfrc_floor/rtcp_2013/gcc apply to GCC only",
        ));
    }
    if fb == Some(FeedbackName::Ccfb) {
        return Ok(FeedbackMode::Ccfb(rtclab_media::ccfb::CcfbConfig::default()));
    }
    let interval = p
        .and_then(|p| p.feedback_interval)
        .map_or(rtclab_core::TimeDelta::from_millis(default_ms), |d| d.0);
    if interval <= rtclab_core::TimeDelta::ZERO {
        return Err(ConfigError::new(at("media.feedback_interval"), "must be positive"));
    }
    Ok(FeedbackMode::Twcc { interval })
}

/// cc = "tree": reads and checks the tree file (relative to the scenario file).
fn tree_spec(
    p: Option<&crate::config::MediaParams>,
    min: Rate,
    max: Rate,
    start: Rate,
    base_dir: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_cc::learned::tree::TreeCcConfig, ConfigError> {
    let Some(t) = p.and_then(|p| p.tree.as_ref()) else {
        return Err(ConfigError::new(
            at("media.tree"),
            "cc = \"tree\" needs media.tree = { file = \"tree.json\" } (a tree from `rtclab metis`)",
        ));
    };
    let path = base_dir.join(&t.file);
    let text = read_input_file(&path)
        .map_err(|e| ConfigError::new(at("media.tree.file"), format!("{}: {e}", path.display())))?;
    let tree = rtclab_learn::tree::FlatTree::from_json(&path.display().to_string(), &text)
        .map_err(|e| ConfigError::new(at("media.tree.file"), e))?;
    let step = t.step.map_or(rtclab_core::TimeDelta::from_millis(60), |d| d.0);
    let cfg = rtclab_cc::learned::tree::TreeCcConfig {
        tree: std::sync::Arc::new(tree),
        step,
        start_bps: start.as_bps() as f64,
        min_bps: min.as_bps() as f64,
        max_bps: max.as_bps() as f64,
    };
    cfg.check().map_err(|e| {
        let key = if e.contains("step") { "media.tree.step" } else { "media.tree.file" };
        ConfigError::new(at(key), format!("{}: {e}", path.display()))
    })?;
    Ok(cfg)
}

/// A registered controller: its settings come from `[flows.params]`; one instance is built
/// with them now, so a bad name or value is reported here, at the key that holds it.
fn registered_cc(
    f: &FlowConfig,
    name: &'static str,
    packet_size: u32,
    iw: u32,
    role: Role,
    at: &dyn Fn(&str) -> String,
) -> Result<CcSpec, ConfigError> {
    if f.cubic.is_some() || f.copa.is_some() || f.qlibra.is_some() {
        return Err(ConfigError::new(
            at("cc"),
            format!("{name:?} takes its settings in `params` (cubic, copa, qlibra do not apply)"),
        ));
    }
    let Some(entry) = rtclab_cc::registry::find(name) else {
        return Err(ConfigError::new(
            at("cc"),
            format!("controller {name:?} is no longer registered"),
        ));
    };
    let empty = std::collections::BTreeMap::new();
    let params = param_values(f.params.as_ref().unwrap_or(&empty), &at("params"))?;
    let args = rtclab_cc::registry::ControllerArgs {
        flow: 0,
        role,
        packet_size,
        initial_window: iw,
        params: &params,
        seed: 0,
    };
    if let Err(e) = entry.build(&args) {
        // Name the parameter at fault where the factory says which.
        let key = params
            .iter()
            .find(|(k, _)| e.contains(&format!("`{k}`")) || e.contains(&format!("\"{k}\"")))
            .map_or_else(|| at("cc"), |(k, _)| at(&format!("params.{k}")));
        return Err(ConfigError::new(key, e));
    }
    Ok(CcSpec::Registered(RegisteredCc { name, role, params, packet_size, initial_window: iw }))
}

/// A controller without CUBIC or Copa settings refuses them.
fn no_cubic_or_copa(
    f: &FlowConfig,
    cc: &str,
    at: &dyn Fn(&str) -> String,
) -> Result<(), ConfigError> {
    if f.cubic.is_some() || f.copa.is_some() {
        return Err(ConfigError::new(
            at("cc"),
            format!("cubic/copa parameters given but cc is {cc:?}"),
        ));
    }
    Ok(())
}

/// A window-based controller (tcp flows, or media flows driven by one) with its parameters.
fn window_cc_spec(
    f: &FlowConfig,
    name: CcName,
    packet_size: u32,
    iw: u32,
    role: Role,
    at: &dyn Fn(&str) -> String,
) -> Result<CcSpec, ConfigError> {
    if role == Role::Media && !name.caps().media && !matches!(name, CcName::Registered(_)) {
        return Err(ConfigError::new(
            at("cc"),
            format!(
                "controller {:?} does not serve media flows: it serves {} only",
                name.as_str(),
                name.caps().roles()
            ),
        ));
    }
    let cc = match name {
        CcName::Registered(name) => registered_cc(f, name, packet_size, iw, role, at)?,
        CcName::Gcc | CcName::GccPaper | CcName::ZoomLike | CcName::Tree => {
            unreachable!("media controllers are resolved by media_spec")
        }
        CcName::Reno => {
            if f.cubic.is_some() {
                return Err(ConfigError::new(
                    at("cubic"),
                    "CUBIC parameters given but cc is \"reno\"",
                ));
            }
            CcSpec::Reno(RenoConfig { packet_size, initial_window: iw })
        }
        CcName::Abc => {
            no_cubic_or_copa(f, "abc", at)?;
            CcSpec::Abc(rtclab_cc::AbcConfig {
                packet_size,
                initial_window: iw,
                ..Default::default()
            })
        }
        CcName::Qlibra => {
            let mut q =
                rtclab_cc::QlibraConfig { packet_size, initial_window: iw, ..Default::default() };
            apply_params(
                rtclab_cc::qlibra::QLIBRA_PARAMS,
                &mut q,
                f.qlibra.as_ref(),
                "qlibra",
                &at,
            )?;
            CcSpec::Qlibra(q)
        }
        CcName::Bbr => {
            no_cubic_or_copa(f, "bbr", at)?;
            CcSpec::Bbr(rtclab_cc::BbrConfig {
                packet_size,
                initial_window: iw,
                ..Default::default()
            })
        }
        CcName::Copa => {
            if f.cubic.is_some() {
                return Err(ConfigError::new(
                    at("cubic"),
                    "CUBIC parameters given but cc is \"copa\"",
                ));
            }
            CcSpec::Copa(copa_config(f.copa.as_ref(), packet_size, iw, &at)?)
        }
        CcName::Cubic => {
            CcSpec::Cubic(cubic_config(f.cubic.as_ref(), packet_size, iw, &at("cubic"))?)
        }
    };
    if f.qlibra.is_some() && !matches!(cc, CcSpec::Qlibra(_)) {
        return Err(ConfigError::new(
            at("qlibra"),
            format!("QLibra parameters given but cc is {:?}", cc.name()),
        ));
    }
    if f.copa.is_some() && !matches!(cc, CcSpec::Copa(_)) {
        return Err(ConfigError::new(
            at("copa"),
            format!("Copa parameters given but cc is {:?}", cc.name()),
        ));
    }
    Ok(cc)
}

fn copa_config(
    given: Option<&std::collections::BTreeMap<String, crate::config::ParamValue>>,
    packet_size: u32,
    iw: u32,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_cc::CopaConfig, ConfigError> {
    use crate::config::ParamValue;
    use rtclab_cc::copa::COPA_PARAMS;
    use rtclab_cc::params::{set, Value};
    use rtclab_cc::CopaConfig;
    let mut c = match given.and_then(|g| g.get("variant")) {
        None => CopaConfig::paper(),
        Some(ParamValue::Str(v)) => match v.as_str() {
            "paper" => CopaConfig::paper(),
            "genericcc" => CopaConfig::genericcc(),
            "mvfst" => CopaConfig::mvfst(),
            other => {
                return Err(ConfigError::new(
                    at("copa.variant"),
                    format!(
                        "unknown variant {other:?}; accepted: \"paper\", \"genericcc\", \"mvfst\""
                    ),
                ))
            }
        },
        Some(_) => {
            return Err(ConfigError::new(
                at("copa.variant"),
                "takes a string: \"paper\", \"genericcc\" or \"mvfst\"",
            ))
        }
    };
    c.packet_size = packet_size;
    c.initial_window = iw;
    for (name, v) in given.into_iter().flatten() {
        if name == "variant" {
            continue;
        }
        let v = match v {
            ParamValue::Bool(b) => Value::Bool(*b),
            ParamValue::Num(x) => Value::Num(*x),
            ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    at(&format!("copa.{name}")),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        set(COPA_PARAMS, &mut c, name, v)
            .map_err(|e| ConfigError::new(at(&format!("copa.{name}")), e))?;
    }
    if c.delta > c.delta_cap && c.mode_switch {
        return Err(ConfigError::new(
            at("copa"),
            format!("need delta <= delta_cap with mode_switch, got {} > {}", c.delta, c.delta_cap),
        ));
    }
    Ok(c)
}

fn cubic_config(
    p: Option<&CubicParams>,
    packet_size: u32,
    iw: u32,
    at: &str,
) -> Result<CubicConfig, ConfigError> {
    let mut c = CubicConfig { packet_size, initial_window: iw, ..Default::default() };
    let Some(p) = p else { return Ok(c) };
    if let Some(b) = p.beta {
        if !(b > 0.0 && b < 1.0) {
            return Err(ConfigError::new(
                format!("{at}.beta"),
                format!("{b} is out of range: accepted (0, 1), Linux 0.7"),
            ));
        }
        c.beta = (b * 1024.0).round() as u32;
    }
    if let Some(cc) = p.c {
        if !(cc > 0.0 && cc <= 100.0) {
            return Err(ConfigError::new(
                format!("{at}.c"),
                format!("{cc} is out of range: accepted (0, 100], Linux 0.4"),
            ));
        }
        // C = bic_scale * 10 / 1024
        c.bic_scale = ((cc * 1024.0 / 10.0).round() as u32).max(1);
    }
    if let Some(v) = p.fast_convergence {
        c.fast_convergence = v;
    }
    if let Some(v) = p.tcp_friendliness {
        c.tcp_friendliness = v;
    }
    if let Some(v) = p.hystart {
        c.hystart = v;
    }
    Ok(c)
}

/// The parts of a link direction a scenario describes.
#[derive(Clone, Copy)]
struct LinkParts<'a> {
    capacity: &'a CapacityConfig,
    queue: &'a QueueConfig,
    loss: Option<&'a LossConfig>,
    wifi: Option<&'a std::collections::BTreeMap<String, ParamValue>>,
    conditions: Option<&'a crate::config::ConditionsConfig>,
}

impl<'a> From<&'a LinkConfig> for LinkParts<'a> {
    fn from(l: &'a LinkConfig) -> Self {
        LinkParts {
            capacity: &l.capacity,
            queue: &l.queue,
            loss: l.loss.as_ref(),
            wifi: l.wifi.as_ref(),
            conditions: l.conditions.as_ref(),
        }
    }
}

/// A `conditions` table: the trace read and parsed (errors name the file and line).
fn conditions_spec(
    c: &crate::config::ConditionsConfig,
    at: &str,
    base_dir: &Path,
) -> Result<std::sync::Arc<rtclab_net::PathTrace>, ConfigError> {
    let interval = c.interval.map_or(TimeDelta::from_millis(16), |d| d.0);
    if interval <= TimeDelta::ZERO {
        return Err(ConfigError::new(format!("{at}.conditions.interval"), "must be positive"));
    }
    let full = base_dir.join(&c.trace);
    let shown = full.display().to_string();
    let text = read_input_file(&full).map_err(|e| {
        ConfigError::new(format!("{at}.conditions.trace"), format!("trace file {shown}: {e}"))
    })?;
    let t = match c.format {
        crate::config::ConditionsFormat::Hairpin => {
            rtclab_net::PathTrace::parse_hairpin(&shown, &text, interval)
        }
    }
    .map_err(|e| ConfigError::new(format!("{at}.conditions.trace"), e.to_string()))?;
    Ok(std::sync::Arc::new(t))
}

/// A topology before its links are resolved: (name, delay, forward, reverse) per link.
struct Topology<'a> {
    links: Vec<(String, TimeDelta, LinkParts<'a>, Option<LinkParts<'a>>)>,
    /// `[link]` (+ `[reverse_link]`) rather than `[[links]]`.
    shorthand: bool,
}

const SHORTHAND_LINK: &str = "bottleneck";

fn topology(cfg: &ScenarioConfig) -> Result<Topology<'_>, ConfigError> {
    match (&cfg.link, &cfg.links) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            "links",
            "give either [link] (one link crossed by every flow) or [[links]], not both",
        )),
        (None, None) => Err(ConfigError::new(
            "link",
            "missing: give [link] (one link crossed by every flow) or [[links]] with flow paths",
        )),
        (Some(l), None) => Ok(Topology {
            links: vec![(
                SHORTHAND_LINK.to_string(),
                TimeDelta::ZERO,
                l.into(),
                cfg.reverse_link.as_ref().map(Into::into),
            )],
            shorthand: true,
        }),
        (None, Some(ls)) => {
            if cfg.reverse_link.is_some() {
                return Err(ConfigError::new(
                    "reverse_link",
                    "goes with [link]; with [[links]] give each link's `reverse` instead",
                ));
            }
            if ls.is_empty() {
                return Err(ConfigError::new("links", "at least one link is needed"));
            }
            let mut out = Vec::new();
            for (i, l) in ls.iter().enumerate() {
                let ok = !l.name.is_empty()
                    && l.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if !ok {
                    return Err(ConfigError::new(
                        format!("links[{i}].name"),
                        format!("{:?}: use letters, digits, '_' and '-'", l.name),
                    ));
                }
                if ls[..i].iter().any(|o| o.name == l.name) {
                    return Err(ConfigError::new(
                        format!("links[{i}].name"),
                        format!("{:?} is used by an earlier link", l.name),
                    ));
                }
                let delay = l.delay.map_or(TimeDelta::ZERO, |d| d.0);
                if delay < TimeDelta::ZERO {
                    return Err(ConfigError::new(
                        format!("links[{i}].delay"),
                        "must not be negative",
                    ));
                }
                let parts = LinkParts {
                    capacity: &l.capacity,
                    queue: &l.queue,
                    loss: l.loss.as_ref(),
                    wifi: l.wifi.as_ref(),
                    conditions: l.conditions.as_ref(),
                };
                out.push((l.name.clone(), delay, parts, l.reverse.as_ref().map(Into::into)));
            }
            Ok(Topology { links: out, shorthand: false })
        }
    }
}

fn flow_paths(
    f: &FlowConfig,
    topo: &Topology,
    at: &dyn Fn(&str) -> String,
) -> Result<(Vec<usize>, Vec<usize>), ConfigError> {
    let names = || topo.links.iter().map(|l| format!("{:?}", l.0)).collect::<Vec<_>>().join(", ");
    let lookup = |hops: &[String], field: &str| -> Result<Vec<usize>, ConfigError> {
        if hops.is_empty() {
            return Err(ConfigError::new(at(field), "must name at least one link"));
        }
        let mut out = Vec::new();
        for (k, h) in hops.iter().enumerate() {
            let Some(i) = topo.links.iter().position(|l| &l.0 == h) else {
                return Err(ConfigError::new(
                    format!("{}[{k}]", at(field)),
                    format!("no link named {h:?}; links: {}", names()),
                ));
            };
            if out.contains(&i) {
                return Err(ConfigError::new(
                    format!("{}[{k}]", at(field)),
                    format!("{h:?} appears twice on the path"),
                ));
            }
            out.push(i);
        }
        Ok(out)
    };
    let path = match &f.path {
        Some(p) => lookup(p, "path")?,
        None if topo.links.len() == 1 => vec![0],
        None => {
            return Err(ConfigError::new(
                at("path"),
                format!("needed when the scenario has several links ({})", names()),
            ))
        }
    };
    let reverse_path = match &f.reverse_path {
        Some(p) => lookup(p, "reverse_path")?,
        None => path.iter().rev().copied().collect(),
    };
    Ok((path, reverse_path))
}

/// A tcp flow's `video` table, checked (defaults: the Zhuge simulator's video over TCP).
fn tcp_video(
    f: &FlowConfig,
    v: &TcpVideoParams,
    packet_size: u32,
    at: &dyn Fn(&str) -> String,
) -> Result<rtclab_transport::TcpVideoConfig, ConfigError> {
    let d = rtclab_transport::TcpVideoConfig::default();
    if f.rate.is_some() || f.size.is_some() {
        return Err(ConfigError::new(
            at("video"),
            "`video` is the flow's application; leave `rate` and `size` out (they describe other applications)",
        ));
    }
    let fps = v.fps.unwrap_or(d.fps);
    if !(fps.is_finite() && fps > 0.0 && fps <= 240.0) {
        return Err(ConfigError::new(
            at("video.fps"),
            format!("{fps} is out of range: accepted (0, 240] frames per second"),
        ));
    }
    let min = v.min_bitrate.map_or(d.min_bitrate, |r| r.0);
    let max = v.max_bitrate.map_or(d.max_bitrate, |r| r.0);
    if min == Rate::ZERO || min > max {
        return Err(ConfigError::new(
            at("video.min_bitrate"),
            format!("must be positive and at most max_bitrate ({} bit/s)", max.as_bps()),
        ));
    }
    let send_buffer_bytes = v.send_buffer.map_or(d.send_buffer_bytes, |s| s.0);
    if send_buffer_bytes < packet_size as u64 {
        return Err(ConfigError::new(
            at("video.send_buffer"),
            format!("{send_buffer_bytes} B is smaller than one packet ({packet_size} B)"),
        ));
    }
    let interval = v.interval.map_or(d.interval, |i| i.0);
    if interval < TimeDelta::from_millis(1) || interval > TimeDelta::from_secs(10) {
        return Err(ConfigError::new(at("video.interval"), "out of range: accepted 1 ms to 10 s"));
    }
    Ok(rtclab_transport::TcpVideoConfig {
        fps,
        min_bitrate: min,
        max_bitrate: max,
        send_buffer_bytes,
        interval,
    })
}

/// A registered flow kind with its parameters checked (built once with a throw-away stream).
fn registered_flow(
    f: &FlowConfig,
    name: &str,
    packet_size: u32,
    at: &dyn Fn(&str) -> String,
) -> Result<FlowKindSpec, ConfigError> {
    use rtclab_transport::flows;
    let Some(kind) = flows::find(name) else {
        let mut accepted = vec!["tcp", "cbr", "media"];
        accepted.extend(flows::names());
        let list: Vec<String> = accepted.iter().map(|k| format!("`{k}`")).collect();
        return Err(ConfigError::new(
            at("kind"),
            format!("unknown value `{name}`, expected one of {}", list.join(", ")),
        ));
    };
    if f.cc.is_some()
        || f.rate.is_some()
        || f.cubic.is_some()
        || f.copa.is_some()
        || f.qlibra.is_some()
        || f.initial_window.is_some()
        || f.delayed_ack.is_some()
        || f.size.is_some()
    {
        return Err(ConfigError::new(
            at("kind"),
            format!("a {name:?} flow takes its settings in `params` (cc, rate, cubic, copa, qlibra, initial_window, delayed_ack, size do not apply)"),
        ));
    }
    let empty = std::collections::BTreeMap::new();
    let params = param_values(f.params.as_ref().unwrap_or(&empty), &at("params"))?;
    let build = |params: &[(String, rtclab_core::params::Value)]| {
        let rng = rtclab_core::SeedTree::new(0).stream("validate");
        let args = flows::FlowArgs { flow: rtclab_core::FlowId(0), packet_size, params, rng };
        (kind.build)(args).map(|_| ())
    };
    build(&[]).map_err(|e| ConfigError::new(at("kind"), e))?;
    for p in &params {
        build(std::slice::from_ref(p))
            .map_err(|e| ConfigError::new(at(&format!("params.{}", p.0)), e))?;
    }
    // Constraints between parameters (each alone was accepted above).
    build(&params).map_err(|e| ConfigError::new(at("params"), e))?;
    Ok(FlowKindSpec::Registered { kind, params, packet_size })
}

fn middlebox_specs(
    cfg: &ScenarioConfig,
    links: &[NamedLink],
) -> Result<Vec<MiddleboxSpec>, ConfigError> {
    let mut out = Vec::new();
    for (i, m) in cfg.middleboxes.iter().enumerate() {
        let Some(at) = links.iter().position(|l| l.name == m.at) else {
            let names: Vec<String> = links.iter().map(|l| format!("{:?}", l.name)).collect();
            return Err(ConfigError::new(
                format!("middleboxes[{i}].at"),
                format!("no link named {:?}; links: {}", m.at, names.join(", ")),
            ));
        };
        let params = param_values(&m.params, &format!("middleboxes[{i}]"))?;
        let spec = MiddleboxSpec { kind: m.kind.clone(), at, params };
        let build = |params: &[(String, rtclab_core::params::Value)]| {
            rtclab_media::middleboxes::build(&spec.kind, params).map(|_| ())
        };
        build(&[]).map_err(|e| ConfigError::new(format!("middleboxes[{i}].kind"), e))?;
        for p in &spec.params {
            build(std::slice::from_ref(p))
                .map_err(|e| ConfigError::new(format!("middleboxes[{i}].{}", p.0), e))?;
        }
        out.push(spec);
    }
    Ok(out)
}

/// Middleboxes that act on feedback (Zhuge, FastAck) must sit where some flow's data and
/// feedback both pass: a hop on its forward path and on its reverse path.
fn feedback_paths(
    middleboxes: &[MiddleboxSpec],
    flows: &[FlowSpec],
    links: &[NamedLink],
) -> Result<(), ConfigError> {
    for (i, m) in middleboxes.iter().enumerate() {
        if !matches!(m.kind.as_str(), "zhuge" | "fast_ack") {
            continue;
        }
        let sees_both =
            flows.iter().any(|f| f.path.contains(&m.at) && f.reverse_path.contains(&m.at));
        if !sees_both {
            let name = &links[m.at].name;
            return Err(ConfigError::new(
                format!("middleboxes[{i}].at"),
                format!(
                    "a {} middlebox at {name:?} sees no feedback path: no flow crosses {name:?} \
                     both ways, so the ACKs or RTCP it must delay, rewrite or answer would \
                     bypass it; place it at a link on the flows' forward and reverse paths",
                    m.kind
                ),
            ));
        }
    }
    Ok(())
}

/// Named numeric/boolean parameters in file order; a string value is an error at `at.<name>`.
fn param_values(
    given: &std::collections::BTreeMap<String, ParamValue>,
    at: &str,
) -> Result<Vec<(String, rtclab_core::params::Value)>, ConfigError> {
    param_values_of(given, at, None)
}

/// `param_values` for a table whose accepted keys are known (`known`: the element's parameters
/// and the table's own keys): a misspelt key with a string value is named as unknown, so
/// `queue = { limt = "100pkt" }` says "unknown key `limt`", not that it takes a number.
fn param_values_of(
    given: &std::collections::BTreeMap<String, ParamValue>,
    at: &str,
    known: Option<&[&str]>,
) -> Result<Vec<(String, rtclab_core::params::Value)>, ConfigError> {
    let mut out = Vec::new();
    for (name, v) in given {
        // Numbers and flags reach the element's own check ("unknown parameter ...; known: ...",
        // "takes none"); a string under an unknown name is named as unknown here, not as a
        // value of the wrong type.
        if let (ParamValue::Str(_), Some(known)) = (v, known) {
            if !known.contains(&name.as_str()) {
                return Err(ConfigError::new(
                    format!("{at}.{name}"),
                    format!("unknown key `{name}`; accepted: {}", known.join(", ")),
                ));
            }
        }
        let v = match v {
            ParamValue::Bool(b) => rtclab_core::params::Value::Bool(*b),
            ParamValue::Num(x) => rtclab_core::params::Value::Num(*x),
            ParamValue::Str(s) => {
                return Err(ConfigError::new(
                    format!("{at}.{name}"),
                    format!("takes a number or true/false, got {s:?}"),
                ))
            }
        };
        out.push((name.clone(), v));
    }
    Ok(out)
}

fn link_spec(
    l: LinkParts,
    at: &str,
    base_dir: &Path,
    duration: TimeDelta,
    max_rtt: TimeDelta,
    mtu: u32,
) -> Result<LinkSpec, ConfigError> {
    let cap_at = format!("{at}.capacity");
    let (capacity, capacity_desc) = match l.capacity {
        CapacityConfig::Constant(r) => {
            if r.0 == Rate::ZERO {
                return Err(ConfigError::new(cap_at, "must be positive (e.g. \"10Mbps\")"));
            }
            (CapacityModel::Constant(r.0), format!("{}", r.0))
        }
        CapacityConfig::Schedule(steps) => {
            let s: Vec<(Time, Rate)> =
                steps.iter().map(|s| (Time::ZERO + s.at.0, s.rate.0)).collect();
            if s.iter().all(|x| x.1 == Rate::ZERO) {
                return Err(ConfigError::new(cap_at, "the schedule is zero throughout"));
            }
            let p = Piecewise::new(&s, None)
                .map_err(|e| ConfigError::new(format!("{cap_at}.schedule"), e.0))?;
            (CapacityModel::Piecewise(p), format!("schedule of {} steps", s.len()))
        }
        CapacityConfig::Trace { path, format } => {
            let full = base_dir.join(path);
            let shown = full.display().to_string();
            let text = read_input_file(&full).map_err(|e| {
                ConfigError::new(format!("{cap_at}.trace"), format!("trace file {shown}: {e}"))
            })?;
            let m = match format {
                TraceFormat::Mahimahi => parse_mahimahi_trace(&shown, &text),
                TraceFormat::Bandwidth => parse_bandwidth_trace(&shown, &text),
            }
            .map_err(|e| ConfigError::new(format!("{cap_at}.trace"), e.to_string()))?;
            (m, format!("trace {path}"))
        }
    };
    let mean = capacity.mean_rate(Time::ZERO, Time::ZERO + duration);
    let q = l.queue;
    let bdp_rtt = q.bdp_rtt.map_or(max_rtt, |d| d.0);
    let queue_limit = match q.limit {
        QueueLimitValue::Packets(n) => QueueLimit::Packets(n),
        QueueLimitValue::Bytes(b) => QueueLimit::Bytes(b),
        QueueLimitValue::Time(t) => QueueLimit::Bytes(mean.bytes_in(t)),
        QueueLimitValue::Bdp(k) => {
            QueueLimit::Bytes((mean.bytes_in(bdp_rtt) as f64 * k).round() as u64)
        }
    };
    if let QueueLimit::Bytes(b) = queue_limit {
        if b < 1500 && !q.limit_given {
            // The user wrote no limit: say that the default is what does not fit, and what to write.
            return Err(ConfigError::new(
                format!("{at}.queue"),
                format!(
                    "the default queue limit (1 BDP: {b} bytes at the link's mean capacity {mean} and \
                     RTT {bdp_rtt}) is smaller than one packet; set a limit, e.g. \
                     queue = {{ limit = \"20pkt\" }} or {{ limit = \"100ms\" }}"
                ),
            ));
        }
        if b < 1500 {
            return Err(ConfigError::new(
                format!("{at}.queue.limit"),
                format!("resolves to {b} bytes at the link's mean capacity {mean}: smaller than one packet"),
            ));
        }
    }
    let loss = match l.loss {
        None => None,
        Some(LossConfig::Iid { rate }) => {
            check_prob(*rate, &format!("{at}.loss.rate"))?;
            Some(LossModel::Iid { rate: *rate })
        }
        Some(LossConfig::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        }) => {
            check_prob(*p_good_to_bad, &format!("{at}.loss.p_good_to_bad"))?;
            check_prob(*p_bad_to_good, &format!("{at}.loss.p_bad_to_good"))?;
            check_prob(*loss_in_good, &format!("{at}.loss.loss_in_good"))?;
            check_prob(*loss_in_bad, &format!("{at}.loss.loss_in_bad"))?;
            Some(LossModel::GilbertElliott {
                p_good_to_bad: *p_good_to_bad,
                p_bad_to_good: *p_bad_to_good,
                loss_in_good: *loss_in_good,
                loss_in_bad: *loss_in_bad,
            })
        }
    };
    let queue_known: Option<Vec<&str>> = rtclab_net::queues::params_of(&q.kind).map(|ps| {
        ["kind", "limit", "bdp_rtt"].into_iter().chain(ps.iter().map(|p| p.name)).collect()
    });
    let queue_params = param_values_of(&q.params, &format!("{at}.queue"), queue_known.as_deref())?;
    let wifi = match l.wifi {
        None => None,
        Some(given) => {
            if matches!(capacity, CapacityModel::Opportunities(_)) {
                return Err(ConfigError::new(
                    format!("{at}.wifi"),
                    "a wireless link's capacity is its PHY rate: give a rate, a schedule or a \
                     bandwidth trace, not mahimahi delivery opportunities",
                ));
            }
            let infos = rtclab_net::wifi::params();
            let known: Vec<&str> = infos.iter().map(|p| p.name).collect();
            let params = param_values_of(given, &format!("{at}.wifi"), Some(&known))?;
            for (name, value) in &params {
                rtclab_core::params::check(&infos, name, *value)
                    .map_err(|e| ConfigError::new(format!("{at}.wifi.{name}"), e))?;
            }
            let c = rtclab_net::wifi::config(&params)
                .map_err(|e| ConfigError::new(format!("{at}.wifi"), e))?;
            Some(c)
        }
    };
    let spec = LinkSpec {
        capacity,
        capacity_desc,
        queue_limit,
        queue_kind: q.kind.clone(),
        queue_params,
        mtu,
        loss,
        wifi,
    };
    let build = |params: &[(String, rtclab_core::params::Value)]| {
        let args = rtclab_net::queues::QdiscArgs { params, ..spec.qdisc_args(0) };
        rtclab_net::queues::build(&spec.queue_kind, &args).map(|_| ())
    };
    build(&[]).map_err(|e| ConfigError::new(format!("{at}.queue.kind"), e))?;
    // Each parameter's name, kind and range, then all of them together (a discipline may
    // relate them, as Confucius' ordered targets): an error is put at the parameter, or at
    // the queue when only the combination is wrong.
    let infos = rtclab_net::queues::params_of(&spec.queue_kind).unwrap_or_default();
    for (name, value) in &spec.queue_params {
        let checked = if infos.is_empty() {
            build(&[(name.clone(), *value)]) // the kind's own "takes none"
        } else {
            rtclab_core::params::check(&infos, name, *value).map_err(String::from)
        };
        checked.map_err(|e| ConfigError::new(format!("{at}.queue.{name}"), e))?;
    }
    build(&spec.queue_params).map_err(|e| ConfigError::new(format!("{at}.queue"), e))?;
    Ok(spec)
}

fn check_prob(p: f64, at: &str) -> Result<(), ConfigError> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        Err(ConfigError::new(at, format!("{p} is not a probability: accepted 0.0..=1.0")))
    }
}
