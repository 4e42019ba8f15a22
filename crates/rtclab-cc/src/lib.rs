//! Congestion controllers behind one trait, sans-IO: no clock, no I/O, no ambient randomness.
//!
//! A transport (the TCP-like bulk sender today; the media sender later) owns loss detection
//! and recovery and tells its controller what happened: every acknowledgement
//! (`on_feedback`), every congestion signal (`on_congestion_event`), every packet sent. The
//! controller answers with a window and/or a rate (`target`). Window-based TCP controllers
//! (NewReno, CUBIC, BBR), rate-based media controllers (GCC) and hybrids (Copa) share it.

pub mod abc;
pub mod bbr;
pub mod capabilities;
pub mod copa;
pub mod cubic;
pub mod factory;
pub mod gcc;
pub mod learned;
pub mod nada;
pub mod params;
pub mod prague;
pub mod qlibra;
pub mod registry;
pub mod reno;
pub mod scream;
pub mod vegas;
pub mod zoom_like;

pub use abc::{Abc, AbcConfig};
pub use bbr::{Bbr, BbrConfig};
pub use copa::{Copa, CopaConfig};
pub use cubic::{Cubic, CubicConfig};
pub use qlibra::{Qlibra, QlibraConfig};
pub use reno::{Reno, RenoConfig};
pub use zoom_like::{ZoomLike, ZoomLikeConfig};

use rtclab_core::{Rate, Time, TimeDelta};

/// A packet the transport just put on the wire.
#[derive(Clone, Copy, Debug)]
pub struct SentPacket {
    pub seq: u64,
    pub size: u32,
    pub retransmit: bool,
    pub bytes_in_flight: u64,
    /// The probe cluster this packet belongs to (media senders, see [`ProbeCluster`]).
    pub probe_cluster: Option<u32>,
    /// Bytes still waiting in the sender's queue after this packet left (a media sender's
    /// pacer; 0 where the sender keeps no queue of its own): NADA's rate-shaping buffer.
    pub queued_bytes: u64,
}

/// A request to send a burst at `rate` so the estimate can be tested above the current
/// target (libwebrtc `ProbeClusterConfig`): at least `min_bytes` and `min_probes` packets,
/// media first, padding when there is no media to send.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeCluster {
    pub id: u32,
    pub rate: Rate,
    pub min_bytes: u64,
    pub min_probes: u32,
}

/// What one acknowledgement told the transport.
#[derive(Clone, Copy, Debug, Default)]
pub struct FeedbackReport {
    /// Bytes and packets newly acknowledged by this feedback.
    pub acked_bytes: u64,
    pub acked_packets: u32,
    /// RTT of the newest newly-acknowledged packet that was not retransmitted (Karn).
    pub rtt: Option<TimeDelta>,
    pub srtt: Option<TimeDelta>,
    pub min_rtt: Option<TimeDelta>,
    /// After processing this feedback.
    pub bytes_in_flight: u64,
    /// Cumulative acknowledgement (first unacknowledged sequence number) and next new
    /// sequence number to send, in packets: controllers use them to delimit round trips.
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// The transport is in loss recovery (window growth must not happen).
    pub in_recovery: bool,
    /// The sender had nothing to send (window growth must not happen).
    pub app_limited: bool,
    /// Sequence number of the most recently sent packet among those newly delivered
    /// (delivery-rate sampling, draft-cheng-iccrg-delivery-rate-estimation).
    pub newest_acked: Option<u64>,
    /// Packets newly declared lost by the transport since the previous report.
    pub lost_packets: u32,
    /// ABC: the ACKs since the previous report that echoed an accelerate / a brake mark
    /// (zero unless the transport runs ABC).
    pub accelerates: u32,
    pub brakes: u32,
    /// Accurate ECN (L4S controllers): data packets newly reported CE-marked by the receiver
    /// since the previous report (zero unless the transport runs AccECN).
    pub ce_packets: u32,
}

/// Per-packet transport feedback (TWCC / RFC 8888), as the sender reconstructs it from its
/// send history.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PacketResult {
    /// Transport-wide sequence number.
    pub seq: u64,
    pub send_time: Time,
    /// None: reported as not received.
    pub arrival: Option<Time>,
    pub size: u32,
    /// The probe cluster the packet was sent in.
    pub probe_cluster: Option<u32>,
    /// Reported CE-marked (RFC 8888's per-packet ECN field; false where the feedback format
    /// carries no ECN, as TWCC).
    pub ce: bool,
}

/// A congestion signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CongestionEvent {
    /// Loss detected by duplicate acknowledgements (fast retransmit): a new recovery episode.
    Loss { bytes_in_flight: u64 },
    /// The retransmission timer expired.
    Timeout,
}

/// What the controller asks of the transport.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcTarget {
    /// Congestion window in bytes (window-based controllers).
    pub cwnd_bytes: Option<u64>,
    /// Pacing rate (None: send as the window opens).
    pub pacing_rate: Option<Rate>,
    /// Target media rate (rate-based controllers).
    pub target_rate: Option<Rate>,
    /// Media senders: fraction of frames the encoder should drop because too much data is
    /// unacknowledged (libwebrtc congestion-window pushback in `DropFrame` mode), 0..1.
    pub frame_drop_ratio: f64,
    /// Media senders: forward-error-correction packets per media packet of a frame (0 = none);
    /// any `count` of a frame's media + FEC packets recover it (a systematic erasure code).
    pub fec_ratio: f64,
}

/// How many named values a controller may report in `CcMetrics::extra`.
pub const EXTRA_METRICS: usize = 12;

/// `CcMetrics::extra` from a list of named values (None entries are skipped).
pub fn named(
    values: &[Option<(&'static str, f64)>],
) -> [Option<(&'static str, f64)>; EXTRA_METRICS] {
    let mut out = [None; EXTRA_METRICS];
    for (slot, v) in out.iter_mut().zip(values.iter().flatten()) {
        *slot = Some(*v);
    }
    debug_assert!(values.iter().flatten().count() <= EXTRA_METRICS, "too many named metrics");
    out
}

/// Internal state for time series; never read by control logic.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CcMetrics {
    pub cwnd_bytes: Option<u64>,
    pub ssthresh_bytes: Option<u64>,
    pub pacing_rate: Option<Rate>,
    pub target_rate: Option<Rate>,
    /// A small state code (controller-specific; e.g. 0 = slow start, 1 = avoidance).
    pub state: u8,
    /// Controller-specific named values, units in the name (e.g. GCC's `delay_gradient`,
    /// Copa's `velocity`); each becomes a column of `flows.parquet`.
    pub extra: [Option<(&'static str, f64)>; EXTRA_METRICS],
}

pub trait CongestionController {
    fn name(&self) -> &'static str;
    fn on_packet_sent(&mut self, _now: Time, _pkt: &SentPacket) {}
    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport);
    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent);
    /// The sender resumes after an idle period (Linux `CA_EVENT_TX_START`).
    fn on_tx_start(&mut self, _now: Time, _idle: TimeDelta) {}
    /// Media senders: per-packet feedback (send-side estimators).
    fn on_transport_feedback(&mut self, _now: Time, _packets: &[PacketResult]) {}
    /// Media senders: the bytes still in flight once a feedback is taken in, told just before
    /// `on_transport_feedback` (libwebrtc's `TransportPacketsFeedback::data_in_flight`).
    fn on_data_in_flight(&mut self, _now: Time, _bytes: u64) {}
    /// Media senders: a receiver-side estimate (REMB), which caps the target.
    fn on_receiver_estimate(&mut self, _now: Time, _bitrate: Rate) {}
    /// Media senders: an RTCP receiver report (fraction lost in [0, 1], RTT if known).
    fn on_loss_report(&mut self, _now: Time, _fraction_lost: f64, _rtt: Option<TimeDelta>) {}
    /// Media senders: the encoder made a frame of `bytes` (its media packets, headers
    /// included), now queued; the oldest packet in the sender's queue has waited
    /// `queue_delay` and the queue holds `queued_bytes` (SCReAM's `newMediaFrame`).
    fn on_media_frame(&mut self, _now: Time, _bytes: u64, _queue_delay: TimeDelta, _queued: u64) {}
    /// Media senders: whether a packet of `size` bytes may leave now (a window-gated media
    /// controller such as SCReAM answers from its own bytes in flight); default yes. Asked
    /// before each packet the pacer would release; a no holds the pacer until feedback or the
    /// controller's timeout.
    fn may_send(&mut self, _now: Time, _size: u32) -> bool {
        true
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    /// Media senders: the next probe cluster to send, if the controller wants one now.
    fn poll_probe(&mut self, _now: Time) -> Option<ProbeCluster> {
        None
    }
    fn target(&self) -> CcTarget;
    fn metrics(&self) -> CcMetrics;
}

/// Built-in controllers (enum dispatch: no vtable on the hot path) plus a boxed slot.
pub enum AnyController {
    Reno(Reno),
    Cubic(Box<Cubic>),
    Copa(Box<Copa>),
    Bbr(Box<Bbr>),
    Qlibra(Box<Qlibra>),
    Abc(Box<Abc>),
    ZoomLike(Box<ZoomLike>),
    Gcc(Box<gcc::Gcc>),
    GccPaper(Box<gcc::GccPaper>),
    Custom(Box<dyn CongestionController + Send + Sync>),
}

impl AnyController {
    /// Whether the controller sets the window itself during loss recovery, so the transport
    /// must not apply PRR (Linux: controllers with their own `cong_control`, such as BBR,
    /// bypass `tcp_cwnd_reduction`; Copa runs over QUIC-style recovery, which has no PRR).
    /// ABC's marks alone steer its window (its released sender). Copa and BBR do not cut
    /// their window for a loss, and PRR's reduction bound would hold
    /// their sending near the delivery rate while their window keeps growing.
    /// Read from the controller's declared capabilities (`capabilities.rs`).
    pub fn owns_recovery_window(&self) -> bool {
        registry::capabilities(self.name()).is_some_and(|c| c.owns_recovery_window)
    }

    /// A copy of a built-in controller's whole state (for undoing a spurious timeout); None
    /// for a custom controller.
    pub fn snapshot(&self) -> Option<AnyController> {
        Some(match self {
            AnyController::Reno(c) => AnyController::Reno(c.clone()),
            AnyController::Cubic(c) => AnyController::Cubic(c.clone()),
            AnyController::Copa(c) => AnyController::Copa(c.clone()),
            AnyController::Bbr(c) => AnyController::Bbr(c.clone()),
            AnyController::Qlibra(c) => AnyController::Qlibra(c.clone()),
            AnyController::Abc(c) => AnyController::Abc(c.clone()),
            AnyController::ZoomLike(c) => AnyController::ZoomLike(c.clone()),
            AnyController::Gcc(c) => AnyController::Gcc(c.clone()),
            AnyController::GccPaper(c) => AnyController::GccPaper(c.clone()),
            AnyController::Custom(_) => return None,
        })
    }
}

macro_rules! dispatch {
    ($self:ident, $c:ident => $e:expr) => {
        match $self {
            AnyController::Reno($c) => $e,
            AnyController::Cubic($c) => $e,
            AnyController::Copa($c) => $e,
            AnyController::Bbr($c) => $e,
            AnyController::Qlibra($c) => $e,
            AnyController::Abc($c) => $e,
            AnyController::ZoomLike($c) => $e,
            AnyController::Gcc($c) => $e,
            AnyController::GccPaper($c) => $e,
            AnyController::Custom($c) => $e,
        }
    };
}

impl CongestionController for AnyController {
    fn name(&self) -> &'static str {
        dispatch!(self, c => c.name())
    }
    #[inline]
    fn on_packet_sent(&mut self, now: Time, pkt: &SentPacket) {
        dispatch!(self, c => c.on_packet_sent(now, pkt))
    }
    #[inline]
    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        dispatch!(self, c => c.on_feedback(now, fb))
    }
    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        dispatch!(self, c => c.on_congestion_event(now, ev))
    }
    fn on_tx_start(&mut self, now: Time, idle: TimeDelta) {
        dispatch!(self, c => c.on_tx_start(now, idle))
    }
    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        dispatch!(self, c => c.on_transport_feedback(now, packets))
    }
    fn on_data_in_flight(&mut self, now: Time, bytes: u64) {
        dispatch!(self, c => c.on_data_in_flight(now, bytes))
    }
    fn on_receiver_estimate(&mut self, now: Time, bitrate: Rate) {
        dispatch!(self, c => c.on_receiver_estimate(now, bitrate))
    }
    fn on_loss_report(&mut self, now: Time, fraction_lost: f64, rtt: Option<TimeDelta>) {
        dispatch!(self, c => c.on_loss_report(now, fraction_lost, rtt))
    }
    fn on_media_frame(&mut self, now: Time, bytes: u64, queue_delay: TimeDelta, queued: u64) {
        dispatch!(self, c => c.on_media_frame(now, bytes, queue_delay, queued))
    }
    #[inline]
    fn may_send(&mut self, now: Time, size: u32) -> bool {
        dispatch!(self, c => c.may_send(now, size))
    }
    fn handle_timeout(&mut self, now: Time) {
        dispatch!(self, c => c.handle_timeout(now))
    }
    fn poll_timeout(&self) -> Option<Time> {
        dispatch!(self, c => c.poll_timeout())
    }
    fn poll_probe(&mut self, now: Time) -> Option<ProbeCluster> {
        dispatch!(self, c => c.poll_probe(now))
    }
    #[inline]
    fn target(&self) -> CcTarget {
        dispatch!(self, c => c.target())
    }
    fn metrics(&self) -> CcMetrics {
        dispatch!(self, c => c.metrics())
    }
}

/// Linux's "infinite" initial slow-start threshold (`TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux `tcp_slow_start`: grow by the packets acked, not beyond ssthresh; returns the
/// acked packets left over for congestion avoidance.
pub(crate) fn slow_start(cwnd: &mut u32, ssthresh: u32, acked: u32) -> u32 {
    let grown = cwnd.saturating_add(acked).min(ssthresh);
    let left = acked - (grown - *cwnd).min(acked);
    *cwnd = grown.max(*cwnd);
    left
}

/// `target()` of a window-based controller whose window is `cwnd` packets.
pub(crate) fn window_target(cwnd: u32, packet_size: u32) -> CcTarget {
    CcTarget { cwnd_bytes: Some(cwnd as u64 * packet_size as u64), ..Default::default() }
}

/// `target()` of a rate-based controller: the target rate, paced at `pacing_factor` times it.
pub(crate) fn rate_target(target_bps: f64, pacing_factor: f64) -> CcTarget {
    CcTarget {
        cwnd_bytes: None,
        pacing_rate: Some(Rate::from_bps((target_bps * pacing_factor) as u64)),
        target_rate: Some(Rate::from_bps(target_bps as u64)),
        frame_drop_ratio: 0.0,
        fec_ratio: 0.0,
    }
}

/// `metrics()` of a window-based controller (state 0 = slow start, 1 = avoidance).
pub(crate) fn window_metrics(cwnd: u32, ssthresh: u32, packet_size: u32) -> CcMetrics {
    CcMetrics {
        cwnd_bytes: Some(cwnd as u64 * packet_size as u64),
        ssthresh_bytes: (ssthresh != INFINITE_SSTHRESH)
            .then_some(ssthresh as u64 * packet_size as u64),
        state: (cwnd >= ssthresh) as u8,
        ..Default::default()
    }
}

/// Linux `tcp_reno_cong_avoid` once the sender may grow: slow start below ssthresh, then one
/// packet per window of packets acked.
pub(crate) fn reno_cong_avoid(cwnd: &mut u32, cwnd_cnt: &mut u32, ssthresh: u32, acked: u32) {
    let mut acked = acked;
    if *cwnd < ssthresh {
        acked = slow_start(cwnd, ssthresh, acked);
        if acked == 0 {
            return;
        }
    }
    let w = *cwnd;
    cong_avoid_ai(cwnd, cwnd_cnt, w, acked);
}

/// Reno's response to a congestion event (`tcp_reno_ssthresh` = max(cwnd / 2, 2); the window
/// is then ssthresh after a loss, as the transport's recovery leaves it, or 1 after a timeout).
pub(crate) fn reno_congestion_event(
    cwnd: &mut u32,
    cwnd_cnt: &mut u32,
    ssthresh: &mut u32,
    ev: &CongestionEvent,
) {
    *ssthresh = (*cwnd >> 1).max(2);
    *cwnd_cnt = 0;
    *cwnd = match ev {
        CongestionEvent::Loss { .. } => *ssthresh,
        CongestionEvent::Timeout => 1,
    };
}

/// Linux `tcp_cong_avoid_ai`: one packet of growth per `w` packets acked.
pub(crate) fn cong_avoid_ai(cwnd: &mut u32, cwnd_cnt: &mut u32, w: u32, acked: u32) {
    let w = w.max(1);
    if *cwnd_cnt >= w {
        *cwnd_cnt = 0;
        *cwnd += 1;
    }
    *cwnd_cnt += acked;
    if *cwnd_cnt >= w {
        let delta = *cwnd_cnt / w;
        *cwnd_cnt -= delta * w;
        *cwnd += delta;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh() {
        let mut c = 10;
        assert_eq!(slow_start(&mut c, 12, 5), 3);
        assert_eq!(c, 12);
        let mut c = 10;
        assert_eq!(slow_start(&mut c, INFINITE_SSTHRESH, 5), 0);
        assert_eq!(c, 15);
    }

    #[test]
    fn additive_increase_is_one_packet_per_window() {
        let (mut c, mut cnt) = (10u32, 0u32);
        for _ in 0..10 {
            cong_avoid_ai(&mut c, &mut cnt, 10, 1);
        }
        assert_eq!(c, 11);
    }
}
