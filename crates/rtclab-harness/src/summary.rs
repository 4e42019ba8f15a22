//! The run summary (`summary.json`): one serde type, filled by both engines, so a scenario run
//! on the simulator and on the emulator yields the same keys (a value one engine cannot
//! measure is `null`, never missing). All statistics cover the measurement window
//! `[warmup, end)` unless named otherwise.
//!
//! Shape (stable; fields may be added): `scenario`, `description`, `rtclab_version`, `seed`,
//! `engine`, `duration_s`, `warmup_s`, `wall_time_s` (the front end, which owns the wall
//! clock, fills it in), `measurement_window_s`; `link` (the first link's forward direction,
//! with the per-packet queuing delay of all flows); `reverse_link`; `links` (every link
//! direction with a bottleneck); `fairness`; `flows`; `engine_stats`; `emulator` (emulator
//! only: forwarding timing and health).

use crate::endpoints::AnyEndpoint;
use crate::link_meter::LinkMeter;
use rtclab_core::{LogHistogram, Time, TimeDelta};
use rtclab_net::{DropReason, QueueLimit};
use rtclab_scenario::{LinkSpec, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;

pub use crate::measure::{percentiles_ms, Percentiles};

/// Drop counts by reason (`queue_overflow`, `random_loss`, `burst_loss`, `aqm`, ...).
pub type Drops = BTreeMap<&'static str, u64>;

pub fn drops(d: &[u64]) -> Drops {
    DropReason::ALL.iter().map(|r| (r.as_str(), d[r.index()])).collect()
}

/// A queue's limit: `{"packets": n}` or `{"bytes": n}`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum QueueLimitSummary {
    Packets(u64),
    Bytes(u64),
}

impl From<QueueLimit> for QueueLimitSummary {
    fn from(q: QueueLimit) -> Self {
        match q {
            QueueLimit::Packets(n) => QueueLimitSummary::Packets(n as u64),
            QueueLimit::Bytes(b) => QueueLimitSummary::Bytes(b),
        }
    }
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct Summary {
    pub scenario: String,
    pub description: String,
    pub rtclab_version: &'static str,
    pub seed: u64,
    /// `"sim"` or `"emu"`.
    pub engine: &'static str,
    pub duration_s: f64,
    pub warmup_s: f64,
    pub wall_time_s: Option<f64>,
    pub measurement_window_s: [f64; 2],
    pub link: LinkSummary,
    pub reverse_link: Option<ReverseLinkSummary>,
    pub links: Vec<HopSummary>,
    pub fairness: FairnessSummary,
    /// RFC 8868's fairness ratios at 1, 5 and 20 s (`rfc8868.rs`).
    pub rfc8868: crate::rfc8868::Rfc8868Summary,
    pub flows: Vec<FlowSummary>,
    pub engine_stats: EngineCounters,
    pub emulator: Option<EmulatorSummary>,
    /// The scenario's middleboxes with the figures they report (Zhuge: prediction accuracy).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub middleboxes: Vec<MiddleboxSummary>,
    /// Filled by the front end, which owns them (null from the engines): where the scenario
    /// came from (a file, a built-in name), the command that ran it, and its text.
    pub scenario_source: Option<String>,
    pub command_line: Option<String>,
    pub scenario_text: Option<String>,
}

/// One `[[middleboxes]]` entry and its own figures (`NetElement::metrics`, whole run).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct MiddleboxSummary {
    pub kind: String,
    /// The link it sits at.
    pub at: String,
    pub metrics: std::collections::BTreeMap<String, f64>,
}

impl MiddleboxSummary {
    /// `summary.middleboxes`: `metrics(i)` gives middlebox `i`'s figures (None: not held by
    /// this engine's elements).
    pub fn all(
        s: &Scenario,
        metrics: impl Fn(usize) -> Option<Vec<(&'static str, f64)>>,
    ) -> Vec<MiddleboxSummary> {
        s.middleboxes
            .iter()
            .enumerate()
            .map(|(i, m)| MiddleboxSummary {
                kind: m.kind.clone(),
                at: s.links[m.at].name.clone(),
                metrics: metrics(i)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
            })
            .collect()
    }
}

impl Summary {
    /// The JSON document (keys sorted; non-finite numbers become null).
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a summary always serializes")
    }
}

/// The first link's forward direction, with every flow's per-packet queuing delay.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct LinkSummary {
    pub name: String,
    pub capacity: String,
    pub mean_capacity_mbps: f64,
    pub queue_limit: QueueLimitSummary,
    pub queue_kind: String,
    pub utilization: f64,
    pub delivered_mbps: f64,
    pub delivered_packets_per_second: f64,
    pub loss_ratio: f64,
    pub drops: Drops,
    pub ecn_marks: u64,
    /// Per packet, over every flow's packets (what the flows met).
    pub queuing_delay_ms: Percentiles,
    /// Sampled every 10 ms (what a periodic probe would meet).
    pub queuing_delay_sampled_ms: Percentiles,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ReverseLinkSummary {
    pub capacity: String,
    pub delivered_mbps: f64,
    pub drops: Drops,
}

/// One direction of one link.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct HopSummary {
    pub name: String,
    /// `"forward"` or `"reverse"`.
    pub direction: &'static str,
    pub delay_ms: f64,
    pub capacity: String,
    pub queue_kind: String,
    pub queue_limit: QueueLimitSummary,
    pub utilization: f64,
    pub delivered_mbps: f64,
    pub loss_ratio: f64,
    pub drops: Drops,
    pub ecn_marks: u64,
    pub queuing_delay_sampled_ms: Percentiles,
    /// A wireless access point's MAC counters over the whole run (both engines).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wifi: Option<WifiSummary>,
}

/// What a `wifi` link's MAC did (`rtclab_net::WifiStats`, whole run).
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct WifiSummary {
    /// PPDUs the AP sent successfully and their mean number of packets.
    pub ap_txops: u64,
    pub mean_aggregate_packets: f64,
    /// Successful PPDUs of the other stations.
    pub other_txops: u64,
    /// Collisions, and their share of all transmission attempts.
    pub collisions: u64,
    pub collision_ratio: f64,
    /// Packets dropped after the retry limit.
    pub retry_drops: u64,
    /// Share of the run's time the channel carried the AP's PPDUs (with their ACKs).
    pub ap_airtime_share: f64,
    /// Uplink stations (`uplink = true`): how many sent, their successful PPDUs and the mean
    /// packets in one.
    pub uplink_stations: u64,
    pub uplink_txops: u64,
    pub uplink_mean_aggregate_packets: f64,
}

impl WifiSummary {
    pub fn new(st: &rtclab_net::WifiStats, run: rtclab_core::TimeDelta) -> Self {
        let attempts = st.ap_txops + st.other_txops + st.uplink_txops + st.collisions;
        WifiSummary {
            ap_txops: st.ap_txops,
            mean_aggregate_packets: ratio(st.ap_packets as f64, st.ap_txops as f64),
            other_txops: st.other_txops,
            collisions: st.collisions,
            collision_ratio: ratio(st.collisions as f64, attempts as f64),
            retry_drops: st.retry_drops,
            ap_airtime_share: ratio(st.ap_airtime_ns as f64, run.as_nanos() as f64),
            uplink_stations: st.uplink_stations,
            uplink_txops: st.uplink_txops,
            uplink_mean_aggregate_packets: ratio(st.uplink_packets as f64, st.uplink_txops as f64),
        }
    }
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct FairnessSummary {
    /// Jain's index of the flows' throughputs over the window.
    pub jain: Option<f64>,
    pub window_s: f64,
    pub jain_windows_mean: Option<f64>,
    pub jain_windows_min: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct FlowSummary {
    pub id: u32,
    pub name: String,
    pub kind: String,
    pub cc: String,
    /// Base round-trip time: propagation over the whole path, no queuing.
    pub rtt_ms: f64,
    pub start_s: f64,
    pub stop_s: f64,
    /// Seconds of the measurement window the flow was active.
    pub active_s: f64,
    pub throughput_mbps: f64,
    pub goodput_mbps: f64,
    pub sending_rate_mbps: f64,
    pub loss_ratio: f64,
    /// Share of the first link's forward departures.
    pub share: f64,
    pub queuing_delay_ms: Percentiles,
    pub one_way_delay_ms: Percentiles,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub drops: Drops,
    pub ecn_marks: u64,
    pub ack_drops: u64,
    pub retransmits: Option<u64>,
    pub fast_retransmits: Option<u64>,
    pub timeouts: Option<u64>,
    pub app_delay_ms: Option<AppDelay>,
    /// tcp flows with a `size`: seconds from the flow's start until its last byte was
    /// acknowledged (flow completion time); null if it did not complete.
    pub completion_time_s: Option<f64>,
    pub media: Option<MediaQoe>,
    /// Emulator, kernel TCP: the socket's last `TCP_INFO`.
    pub kernel_tcp: Option<KernelTcp>,
    /// Whether the flow's endpoints reached each other (always true in the simulator).
    pub connected: bool,
    /// RFC 8868's stability figures: steady rate, convergence time, oscillations.
    pub rfc8868: crate::rfc8868::FlowRfc8868,
    /// The endpoints' own figures for the whole run (`Endpoint::metrics`, sender's then
    /// receiver's), for kinds that report some (e.g. the edge-stream kinds' `dmr`, `bwc`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
}

#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct AppDelay {
    pub mean: f64,
    pub max: f64,
}

#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct KernelTcp {
    pub total_retrans: u64,
    pub final_cwnd_packets: u64,
    pub final_srtt_ms: f64,
    pub mss: u64,
}

/// A media flow's quality of experience.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct MediaQoe {
    pub frame_delay_ms: Percentiles,
    pub frames: u64,
    pub frame_rate: f64,
    pub incomplete_frames: u64,
    pub stalls: u64,
    pub stall_time_s: f64,
    pub frames_dropped_by_sender: u64,
    pub padding_bytes: u64,
    pub probe_clusters: u64,
    pub composition: Composition,
    /// What the viewer saw, after jitter buffer and decoder (`rtclab_media::playout`).
    pub frames_displayed: u64,
    pub display_delay_ms: Percentiles,
    pub freezes: u64,
    pub freeze_time_s: f64,
    /// Complete frames the decoder could not use (their reference frame was lost).
    pub undecodable_frames: u64,
    /// Displayed frames later than 100 ms after capture (the chapters' deadline), and their
    /// share of the frames displayed (the AFR chapter's session stall ratio).
    pub deadline_misses: u64,
    pub stall_ratio: Option<f64>,
    /// Whole run: time the picture on screen was older than 190 ms (ITU-T G.1070's stall
    /// threshold; the Confucius chapter's stall duration).
    pub stale_time_s: f64,
    /// Where the displayed frames' delay went: per stage (`rtclab_core::FRAME_STAGES`),
    /// percentiles and mean in ms; the stage means sum to the display delay's mean.
    pub breakdown_ms: std::collections::BTreeMap<&'static str, Percentiles>,
    /// Picture-quality proxy in [0, 100] from the media bitrate sent and the resolution
    /// (`rtclab_media::quality`).
    pub quality: Option<f64>,
    /// Key-frame requests (RTCP PLI) the receiver sent, and key frames the encoder made.
    pub key_frame_requests: u64,
    pub key_frames: u64,
    pub max_decode_queue: u64,
    /// Frame-rate control: frames dropped at the full decoder queue, frame-rate requests the
    /// receiver sent, frames the paused encoder skipped, the encoder's final frame rate.
    pub decoder_drops: u64,
    pub frame_rate_requests: u64,
    pub frames_skipped: u64,
    pub final_fps: f64,
    /// Emulator: packets the receiver could not parse as RTP/RTCP.
    pub undecodable_packets: Option<u64>,
}

/// What a flow's meters counted of its frames in the measurement window (both engines feed
/// these from the receiver's `FrameComplete` / `FrameDisplayed` events).
pub struct FrameCounts<'a> {
    pub frames: u64,
    pub frame_delay: &'a LogHistogram,
    pub display: &'a crate::media_meter::DisplayMeter,
}

/// Fills what a flow's endpoints know of themselves at the end — a TCP sender's recovery
/// counters, a media flow's QoE — the same way for both engines.
pub fn endpoint_fields(
    out: &mut FlowSummary,
    snd: &AnyEndpoint,
    rcv: &AnyEndpoint,
    frames: FrameCounts,
    undecodable_packets: Option<u64>,
) {
    use rtclab_core::Endpoint;
    for (k, v) in snd.metrics().into_iter().chain(rcv.metrics()) {
        out.metrics.insert(k.to_string(), v);
    }
    if let AnyEndpoint::TcpSender(sender) = snd {
        let st = sender.stats;
        out.retransmits = Some(st.retransmits);
        out.fast_retransmits = Some(st.fast_retransmits);
        out.timeouts = Some(st.timeouts);
        out.completion_time_s = st.completed_at.map(|t| t.as_secs_f64() - out.start_s);
        out.app_delay_ms = (st.app_packets > 0).then(|| AppDelay {
            mean: st.app_delay_sum.as_millis_f64() / st.app_packets as f64,
            max: st.app_delay_max.as_millis_f64(),
        });
        if let Some(v) = sender.video() {
            // Video over TCP: the encoder's counts and the frames the receiver timed.
            let active = out.active_s;
            let mut put = |k: &str, x: f64| {
                out.metrics.insert(k.to_string(), x);
            };
            put("video_frames_encoded", v.frames_encoded as f64);
            put("video_frames_blocked", v.frames_blocked as f64);
            put("video_frames", frames.frames as f64);
            put("video_frame_rate", if active > 0.0 { frames.frames as f64 / active } else { 0.0 });
            for (k, q) in [("video_frame_delay_ms_p50", 0.5), ("video_frame_delay_ms_p95", 0.95)] {
                if let Some(ns) = frames.frame_delay.quantile(q) {
                    put(k, ns as f64 / 1e6);
                }
            }
        }
    }
    if let (AnyEndpoint::MediaSender(sender), AnyEndpoint::MediaReceiver(receiver)) = (snd, rcv) {
        let (fs, ps, ss) = (&receiver.frames.stats, &receiver.playout.stats, &sender.stats);
        let active = out.active_s;
        out.media = Some(MediaQoe {
            frame_delay_ms: percentiles_ms(frames.frame_delay),
            frames: frames.frames,
            frame_rate: if active > 0.0 { frames.frames as f64 / active } else { 0.0 },
            incomplete_frames: fs.incomplete,
            stalls: fs.stalls,
            stall_time_s: fs.stall_time.as_secs_f64(),
            frames_dropped_by_sender: sender.frames_dropped(),
            padding_bytes: ss.padding_bytes,
            probe_clusters: ss.probe_clusters,
            composition: Composition::of(
                ss.bytes_sent,
                ss.fec_bytes,
                ss.rtx_bytes,
                ss.padding_bytes,
            ),
            frames_displayed: frames.display.displayed,
            display_delay_ms: percentiles_ms(&frames.display.delay),
            deadline_misses: frames.display.deadline_misses,
            stall_ratio: (frames.display.displayed > 0)
                .then(|| frames.display.deadline_misses as f64 / frames.display.displayed as f64),
            stale_time_s: ps.stale_time.as_secs_f64(),
            breakdown_ms: rtclab_core::FRAME_STAGES
                .iter()
                .zip(&frames.display.stages)
                .map(|(n, h)| (*n, percentiles_ms(h)))
                .collect(),
            quality: {
                let enc = sender.encoder_config();
                let media =
                    ss.bytes_sent.saturating_sub(ss.fec_bytes + ss.rtx_bytes + ss.padding_bytes);
                let secs = out.active_s;
                (secs > 0.0).then(|| media as f64 * 8.0 / secs).and_then(|bps| {
                    rtclab_media::quality::quality_proxy(bps, enc.width, enc.height, enc.fps)
                })
            },
            freezes: ps.freezes,
            freeze_time_s: ps.freeze_time.as_secs_f64(),
            undecodable_frames: ps.undecodable,
            key_frame_requests: receiver.key_frame_requests,
            key_frames: sender.key_frames(),
            max_decode_queue: ps.max_decode_queue as u64,
            decoder_drops: ps.decoder_drops,
            frame_rate_requests: ps.frame_rate_requests,
            frames_skipped: sender.frames_skipped(),
            final_fps: sender.frame_rate(),
            undecodable_packets,
        });
    }
}

/// Shares of the bytes a media sender put on the wire.
#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct Composition {
    pub media: f64,
    pub fec: f64,
    pub rtx: f64,
    pub padding: f64,
}

impl Composition {
    pub fn of(bytes_sent: u64, fec: u64, rtx: u64, padding: u64) -> Self {
        let total = bytes_sent.max(1) as f64;
        let media = bytes_sent.saturating_sub(fec + rtx + padding);
        Composition {
            media: media as f64 / total,
            fec: fec as f64 / total,
            rtx: rtx as f64 / total,
            padding: padding as f64 / total,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct EngineCounters {
    /// Simulator: events processed.
    pub events: Option<u64>,
    /// Data packets and feedback/ACK packets that reached an endpoint (whole run).
    pub delivered_packets: u64,
    pub delivered_acks: u64,
}

#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct EmulatorSummary {
    pub release_error_us: ReleaseError,
    pub packets_forwarded: u64,
    pub unclassified_packets: u64,
    pub device_write_drops: u64,
    pub realtime_forwarder: bool,
    /// Every UDP endpoint thread got SCHED_FIFO (true when the run has none).
    pub realtime_endpoints: bool,
    /// Share of the machine's CPU time the hypervisor took (/proc/stat steal) while the
    /// emulation ran, %: timing that no priority here can protect (None: not measurable).
    pub host_steal_percent: Option<f64>,
    pub non_ip_packets: u64,
    /// `emu shell`: the kernel TCP congestion control the user's programs ran with (the front
    /// end fills it; null for a scenario run).
    pub shell_tcp_cc: Option<String>,
    /// Whether the TUN devices were read and written with offloads (vnet headers, TCP
    /// super-packets cut into MTU packets on the way in and coalesced on the way out);
    /// off with `RTCLAB_EMU_OFFLOAD=0` or where the kernel refuses them.
    pub tun_offload: bool,
    /// The devices' system calls per direction: [forward (sender host's packets), reverse].
    pub device_io: [DeviceIo; 2],
}

/// One direction's device reads and writes in the emulator: how many MTU packets each
/// system call carried.
#[derive(Clone, Copy, Debug, Default, Serialize, schemars::JsonSchema)]
pub struct DeviceIo {
    /// Reads that brought a packet.
    pub reads: u64,
    /// Of them, TCP super-packets (with offloads).
    pub super_packets: u64,
    /// Writes that carried packets.
    pub writes: u64,
    /// MTU packets taken in per read.
    pub packets_per_read: Option<f64>,
    /// MTU packets delivered per write.
    pub packets_per_write: Option<f64>,
}

#[derive(Clone, Copy, Debug, Serialize, schemars::JsonSchema)]
pub struct ReleaseError {
    pub p50: Option<f64>,
    pub p99: Option<f64>,
    pub max: Option<f64>,
}

/// The measurement window of a run that ran for `ran` (the emulator may stop early).
pub fn window(s: &Scenario, ran: TimeDelta) -> (Time, Time) {
    (Time::ZERO + s.metrics.warmup, Time::ZERO + s.duration.min(ran))
}

/// Seconds of [start, stop) that fall inside [w0, w1).
pub fn overlap_secs(start: Time, stop: Time, w0: Time, w1: Time) -> f64 {
    let a = start.max(w0);
    let b = stop.min(w1);
    if b > a {
        (b - a).as_secs_f64()
    } else {
        0.0
    }
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        f64::NAN
    }
}

/// One direction of link `li`, from its meter.
pub fn hop_summary(
    s: &Scenario,
    li: usize,
    spec: &LinkSpec,
    reverse: bool,
    m: &LinkMeter,
    (w0, w1): (Time, Time),
) -> HopSummary {
    let l = &s.links[li];
    let secs = (w1 - w0).as_secs_f64().max(1e-9);
    let cap_bits = spec.capacity.bits_between(w0, w1);
    let dropped: u64 = m.drops.iter().sum();
    HopSummary {
        name: l.name.clone(),
        direction: if reverse { "reverse" } else { "forward" },
        delay_ms: l.delay.as_millis_f64(),
        capacity: spec.capacity_desc.clone(),
        queue_kind: spec.queue_kind.clone(),
        queue_limit: spec.queue_limit.into(),
        utilization: ratio(m.departed_bytes as f64 * 8.0, cap_bits),
        delivered_mbps: m.departed_bytes as f64 * 8.0 / secs / 1e6,
        loss_ratio: if m.offered_packets > 0 {
            dropped as f64 / m.offered_packets as f64
        } else {
            0.0
        },
        drops: drops(&m.drops),
        ecn_marks: m.ecn_marks,
        queuing_delay_sampled_ms: m.sampled_queue_ms(s.metrics.bin, w0, w1),
        wifi: None,
    }
}

/// Fills `links[].wifi` of the wireless link directions: `stats(h)` gives hop `h`'s MAC
/// counters (`HopRef::index`: link * 2 + reverse), `run` the time they cover.
pub fn attach_wifi(
    hops: &mut [HopSummary],
    s: &Scenario,
    run: TimeDelta,
    stats: impl Fn(usize) -> Option<rtclab_net::WifiStats>,
) {
    for hop in hops {
        let li = s.links.iter().position(|l| l.name == hop.name);
        let h = li.map(|li| li * 2 + (hop.direction == "reverse") as usize);
        if let Some(st) = h.and_then(&stats) {
            hop.wifi = Some(WifiSummary::new(&st, run));
        }
    }
}

/// `summary.links`: every link direction with a bottleneck. `hops[2 * link + dir]`.
pub fn links(s: &Scenario, hops: &[LinkMeter], w: (Time, Time)) -> Vec<HopSummary> {
    let mut out = Vec::new();
    for (li, l) in s.links.iter().enumerate() {
        for (rev, spec) in [(false, Some(&l.forward)), (true, l.reverse.as_ref())] {
            if let (Some(spec), Some(m)) = (spec, hops.get(2 * li + rev as usize)) {
                out.push(hop_summary(s, li, spec, rev, m, w));
            }
        }
    }
    out
}

/// `summary.link` (the first link forward, `fwd`) and `summary.reverse_link` (`rev`).
/// `all_q`: every flow's per-packet queuing delay.
pub fn main_link(
    s: &Scenario,
    fwd: &LinkMeter,
    rev: &LinkMeter,
    all_q: &LogHistogram,
    w: (Time, Time),
) -> (LinkSummary, Option<ReverseLinkSummary>) {
    let main = s.main_link();
    let h = hop_summary(s, 0, &main.forward, false, fwd, w);
    let secs = (w.1 - w.0).as_secs_f64().max(1e-9);
    let link = LinkSummary {
        name: h.name,
        capacity: h.capacity,
        mean_capacity_mbps: main.forward.capacity.bits_between(w.0, w.1) / secs / 1e6,
        queue_limit: h.queue_limit,
        queue_kind: h.queue_kind,
        utilization: h.utilization,
        delivered_mbps: h.delivered_mbps,
        delivered_packets_per_second: fwd.departed_packets as f64 / secs,
        loss_ratio: h.loss_ratio,
        drops: h.drops,
        ecn_marks: h.ecn_marks,
        queuing_delay_ms: percentiles_ms(all_q),
        queuing_delay_sampled_ms: h.queuing_delay_sampled_ms,
    };
    let reverse = main.reverse.as_ref().map(|r| ReverseLinkSummary {
        capacity: r.capacity_desc.clone(),
        delivered_mbps: rev.departed_bytes as f64 * 8.0 / secs / 1e6,
        drops: drops(&rev.drops),
    });
    (link, reverse)
}

/// `summary.fairness` from the flows' window throughputs and the per-window Jain column.
pub fn fairness(s: &Scenario, rates: &[f64], jain_windows: &[f64]) -> FairnessSummary {
    let jw: Vec<f64> = jain_windows.iter().copied().filter(|x| x.is_finite()).collect();
    FairnessSummary {
        jain: crate::measure::jain(rates),
        window_s: s.metrics.fairness_window.as_secs_f64(),
        jain_windows_mean: (!jw.is_empty()).then(|| jw.iter().sum::<f64>() / jw.len() as f64),
        jain_windows_min: jw.iter().copied().reduce(f64::min),
    }
}

/// The header fields of a summary; the engine fills in the rest.
pub fn flow_base(f: &rtclab_scenario::FlowSpec, w: (Time, Time)) -> FlowSummary {
    FlowSummary {
        id: f.id,
        name: f.name.clone(),
        kind: f.kind.kind_name().to_string(),
        cc: f.kind.cc_name().to_string(),
        rtt_ms: f.base_rtt.as_millis_f64(),
        start_s: f.start.as_secs_f64(),
        stop_s: f.stop.as_secs_f64(),
        active_s: overlap_secs(f.start, f.stop, w.0, w.1),
        drops: drops(&[0; DropReason::ALL.len()]),
        connected: true,
        ..Default::default()
    }
}

/// The JSON Schema of `summary.json` (draft 2020-12), as published in
/// `docs/summary.schema.json`: generated from [`Summary`], so it cannot drift from what the
/// engines write.
pub fn json_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(Summary)).expect("a schema is JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_and_missing_values_serialize_as_null() {
        let p = percentiles_ms(&LogHistogram::new());
        let v = serde_json::to_value(p).unwrap();
        assert!(v["p50"].is_null() && v["mean"].is_null());
        let c = Composition::of(0, 0, 0, 0);
        assert_eq!(serde_json::to_value(c).unwrap()["media"], 0.0);
        assert!(serde_json::to_value(f64::NAN).unwrap().is_null());
        let q: QueueLimitSummary = QueueLimit::Packets(7).into();
        assert_eq!(serde_json::to_value(q).unwrap(), serde_json::json!({"packets": 7}));
    }
}
