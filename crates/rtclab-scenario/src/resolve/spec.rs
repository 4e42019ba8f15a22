//! The resolved scenario the engines run: every value checked, every default filled, every
//! name replaced by what it names.

use rtclab_cc::{CubicConfig, RenoConfig};
use rtclab_core::{Rate, Time, TimeDelta};
use rtclab_net::{CapacityModel, LossModel, QueueLimit};

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
    /// Its registry entry, found once when the scenario was read: the engines build from it
    /// and read what it declares (`acts_on_feedback`, `simulator_only`).
    pub entry: &'static rtclab_net::middleboxes::MiddleboxKind,
    pub at: usize,
    pub params: Vec<(String, rtclab_core::params::Value)>,
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub capacity: CapacityModel,
    /// Human-readable description of the capacity ("100Mbps", "trace foo.up").
    pub capacity_desc: String,
    pub queue_limit: QueueLimit,
    /// The queue discipline's registry name and parameters, as given (for the summary and
    /// reports)...
    pub queue_kind: String,
    pub queue_params: Vec<(String, rtclab_core::params::Value)>,
    /// ...and the discipline they describe, checked once by `resolve`: the engines make a
    /// fresh one per run from it, without parsing again.
    pub queue: rtclab_net::queues::QdiscMaker,
    /// Largest data packet of any flow, bytes (CoDel's "one MTU queued" rule).
    pub mtu: u32,
    pub loss: Option<LossModel>,
    /// A wireless access point's MAC in place of the serializer (checked by `resolve`).
    pub wifi: Option<rtclab_net::WifiConfig>,
}

impl LinkSpec {
    /// A fresh queue discipline as the scenario describes it; `seed` seeds its random stream.
    pub fn build_qdisc(&self, seed: u64) -> rtclab_net::AnyQdisc {
        self.queue.make(seed)
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
    /// How long complete frames wait behind a missing one (`media.frame_wait`); None: the
    /// default (`rtclab_media::frames::GIVE_UP` when the sender retransmits, else zero).
    pub frame_wait: Option<rtclab_core::TimeDelta>,
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
    Registered(Box<RegisteredCc>),
}

/// A registered controller as a flow uses it: its registry entry (found once, when the
/// scenario was read) and its checked settings.
#[derive(Clone)]
pub struct RegisteredCc {
    pub entry: rtclab_cc::registry::Entry,
    pub role: rtclab_cc::registry::Role,
    pub params: Vec<(String, rtclab_core::params::Value)>,
    pub packet_size: u32,
    pub initial_window: u32,
    /// A media flow's rates and ECN setting, for the controller (None on tcp flows).
    pub media: Option<rtclab_cc::registry::MediaArgs>,
}

impl std::fmt::Debug for RegisteredCc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RegisteredCc")
            .field("name", &self.entry.name)
            .field("role", &self.role)
            .field("params", &self.params)
            .field("packet_size", &self.packet_size)
            .field("initial_window", &self.initial_window)
            .finish()
    }
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
            CcSpec::Registered(r) => r.entry.name,
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
