//! The media sender endpoint: encoder → packetizer → pacer → network, with the congestion
//! controller setting the encoder target and the pacing rate after every feedback.
//! Shape: `start`/`stop`, `handle_feedback(now, feedback)`, `poll_transmit(now)`,
//! `poll_timeout()`.

use crate::encoder::{EncoderConfig, VideoEncoder};
use crate::history::SendHistory;
use crate::pacer::{Paced, Pacer};
use crate::packetizer::{packetize, PacketizerConfig};
use crate::protection::{ProtectionPolicy, ProtectionSpec};
use crate::window::WindowAdapter;
use rtclab_cc::{AnyController, CongestionController, SentPacket};
use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, Packet, PacketInfo, Payload, Rate, RngStream, Time, Transmit,
};
use rtclab_wire::rtcp::{CongestionControlFeedback, TransportFeedback};

/// What a media receiver tells its sender.
#[derive(Clone, Debug, PartialEq)]
pub enum MediaFeedback {
    /// Transport-wide feedback (send-side estimation).
    Twcc(TransportFeedback),
    /// Receiver-estimated maximum bitrate, bit/s.
    Remb(u64),
    /// RFC 8888 congestion control feedback (send-side estimation).
    Ccfb(CongestionControlFeedback),
    /// Receiver report: fraction of packets lost since the previous report.
    ReceiverReport { fraction_lost: f64 },
    /// A key-frame request (RTCP PLI): the receiver cannot decode until the next key frame.
    KeyFrameRequest,
    /// A frame-rate request (AFR): encode at `fps` from now on (0 = pause encoding).
    FrameRate { fps: f64 },
}

/// The sender acts on at most one key-frame request per 300 ms (libwebrtc
/// `EncoderRtcpFeedback`, `kMinKeyframeSendIntervalMs`).
pub const MIN_KEY_FRAME_INTERVAL: rtclab_core::TimeDelta = rtclab_core::TimeDelta::from_millis(300);

#[derive(Clone, Debug, PartialEq)]
pub struct MediaSenderConfig {
    pub encoder: EncoderConfig,
    pub packetizer: PacketizerConfig,
    pub start_bitrate: Rate,
    /// Pacer bursts (the 2017 paper's 5 ms pacer); None = smooth pacing.
    pub pacer_burst: Option<rtclab_core::TimeDelta>,
    /// Loss protection: FEC amount and retransmission (NACK + RTX).
    pub protection: ProtectionSpec,
    /// The ECN field every packet leaves with (Not-ECT, ECT(0) or ECT(1)).
    pub ecn: rtclab_core::Ecn,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct MediaSenderStats {
    pub frames: u64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub feedbacks: u64,
    pub padding_packets: u64,
    pub fec_packets: u64,
    /// Probe timeouts (window controllers only).
    pub ptos: u64,
    pub padding_bytes: u64,
    pub probe_clusters: u64,
    pub fec_bytes: u64,
    pub rtx_packets: u64,
    pub rtx_bytes: u64,
    /// Key-frame requests (PLI) received.
    pub key_frame_requests: u64,
    /// Frame-rate requests (AFR) received.
    pub frame_rate_requests: u64,
}

pub struct MediaSender {
    flow: FlowId,
    cfg: MediaSenderConfig,
    encoder: VideoEncoder,
    pacer: Pacer,
    history: SendHistory,
    cc: AnyController,
    /// Set for window-based controllers (see [`crate::window`]).
    window: Option<WindowAdapter>,
    window_blocked: bool,
    /// Probe timeout for window controllers (RFC 9002 §6.2): fires when feedback stops while
    /// data is in flight.
    pto_at: Option<Time>,
    pto_count: u32,
    protection: Box<dyn ProtectionPolicy>,
    /// Fractional FEC packets carried from frame to frame.
    fec_credit: f64,
    /// The encoder's target last applied, and a change not yet polled as an event (only the
    /// latest is kept, so a driver that never polls holds nothing).
    last_target: Option<Rate>,
    /// When the encoder last acted on a key-frame request (requests within
    /// [`MIN_KEY_FRAME_INTERVAL`] of it are ignored).
    last_key_request: Option<Time>,
    target_event: Option<Rate>,
    pub stats: MediaSenderStats,
}

impl MediaSender {
    pub fn new(flow: FlowId, cfg: MediaSenderConfig, cc: AnyController, rng: RngStream) -> Self {
        let encoder = VideoEncoder::new(cfg.encoder.clone(), cfg.start_bitrate, rng);
        let pacer = Pacer::new(Rate::ZERO)
            .with_bursts(cfg.pacer_burst)
            .with_max_padding(cfg.packetizer.max_payload + cfg.packetizer.overhead);
        let t = cc.target();
        let window =
            (t.cwnd_bytes.is_some() && t.target_rate.is_none()).then(WindowAdapter::default);
        let protection = cfg.protection.build();
        let mut s = MediaSender {
            flow,
            cfg,
            encoder,
            pacer,
            history: SendHistory::default(),
            cc,
            window,
            window_blocked: false,
            pto_at: None,
            pto_count: 0,
            protection,
            fec_credit: 0.0,
            last_target: None,
            last_key_request: None,
            target_event: None,
            stats: MediaSenderStats::default(),
        };
        s.apply_target();
        s
    }

    /// Replaces the loss protection policy (a policy from outside the built-ins).
    pub fn with_protection(mut self, p: Box<dyn ProtectionPolicy>) -> Self {
        self.protection = p;
        self
    }

    pub fn protection(&self) -> &dyn ProtectionPolicy {
        self.protection.as_ref()
    }

    pub fn controller(&self) -> &AnyController {
        &self.cc
    }
    /// The encoder's current target (a window controller's is derived from its window).
    pub fn encoder_target(&self) -> Option<Rate> {
        self.last_target
    }
    /// A window controller's smoothed RTT as the media flow measures it (None for rate
    /// controllers).
    pub fn window_srtt(&self) -> Option<rtclab_core::TimeDelta> {
        self.window.as_ref().and_then(|w| w.srtt())
    }
    pub fn encoder_config(&self) -> &EncoderConfig {
        self.encoder.config()
    }
    pub fn encoder_rate(&self) -> Rate {
        self.encoder.output_rate()
    }
    pub fn pacer_queue_bytes(&self) -> u64 {
        self.pacer.queued_bytes()
    }

    pub fn start(&mut self, now: Time) {
        self.encoder.start(now);
    }
    pub fn stop(&mut self) {
        self.encoder.stop();
    }
    /// The encoder's picture size where it adapts it (`media.degradation = "maintain_framerate"`).
    pub fn adapted_resolution(&self) -> Option<(u32, u32)> {
        self.encoder.adapted_resolution()
    }
    /// The libvpx VP8 model's stream target (`VideoEncoder::stream_target`).
    pub fn encoder_stream_target(&self) -> Option<Rate> {
        self.encoder.stream_target()
    }
    /// Key frames the encoder made (periodic and requested).
    pub fn key_frames(&self) -> u64 {
        self.encoder.key_frames
    }

    /// Frames the encoder skipped while paused by the receiver.
    pub fn frames_skipped(&self) -> u64 {
        self.encoder.frames_skipped
    }

    /// Frames the encoder dropped: pushback's share, and libvpx's rate control (decimation,
    /// buffer under-run) with `EncoderModel::LibvpxVp8`, and first frames too large for the
    /// start rate under resolution adaptation.
    pub fn frames_dropped(&self) -> u64 {
        self.encoder.frames_dropped
            + self.encoder.frames_dropped_by_rate_control
            + self.encoder.frames_dropped_for_size
    }

    fn apply_target(&mut self) {
        let t = self.cc.target();
        if let (Some(w), Some(cwnd)) = (&self.window, t.cwnd_bytes) {
            // Window controllers: the encoder follows 0.9 × cwnd / occupancy (the time a
            // packet holds its place in the window: the RTT plus the wait for its report),
            // paced at the controller's rate or 1.25 × cwnd / occupancy.
            let held =
                w.occupancy().or(w.srtt()).unwrap_or(rtclab_core::TimeDelta::from_millis(100));
            let per_rtt = Rate::from_bytes_per(cwnd, held);
            let share = self.protection.media_share();
            let target = Rate::from_bps((per_rtt.as_bps() as f64 * 0.9 * share) as u64);
            self.note_target(target.min(self.cfg.encoder.max_bitrate));
            self.encoder.set_target(target.min(self.cfg.encoder.max_bitrate));
            let pacing =
                t.pacing_rate.unwrap_or(Rate::from_bps((per_rtt.as_bps() as f64 * 1.25) as u64));
            self.pacer.set_rate(pacing.max(Rate::from_kbps(1)));
            return;
        }
        let target = t.target_rate.unwrap_or(self.cfg.start_bitrate);
        self.note_target(target);
        // A fixed FEC amount is paid for out of the target (the pacer still paces the whole).
        let share = self.protection.media_share();
        let media = Rate::from_bps((target.as_bps() as f64 * share) as u64);
        self.encoder.set_target_with_drop(media, t.frame_drop_ratio);
        self.pacer.set_rate(t.pacing_rate.unwrap_or(target));
    }

    fn note_target(&mut self, target: Rate) {
        if self.last_target != Some(target) {
            self.last_target = Some(target);
            self.target_event = Some(target);
        }
    }

    /// Hands the controller's probe clusters to the pacer.
    fn take_probes(&mut self, now: Time) {
        while let Some(c) = self.cc.poll_probe(now) {
            self.stats.probe_clusters += 1;
            self.pacer.add_probe_cluster(now, c);
        }
    }

    pub fn handle_feedback(&mut self, now: Time, fb: &MediaFeedback) {
        self.stats.feedbacks += 1;
        match fb {
            MediaFeedback::Twcc(t) => {
                let results = self.history.on_transport_feedback(t);
                self.on_results(now, &results, None);
            }
            MediaFeedback::Ccfb(c) => {
                let mut results = Vec::new();
                for (base, arrivals) in crate::ccfb::arrivals(c, &self.history) {
                    results.extend(self.history.results(base, arrivals));
                }
                self.on_results(now, &results, Some(crate::ccfb::report_time(c)));
            }
            MediaFeedback::Remb(bps) => self.cc.on_receiver_estimate(now, Rate::from_bps(*bps)),
            MediaFeedback::ReceiverReport { fraction_lost } => {
                self.cc.on_loss_report(now, *fraction_lost, None)
            }
            MediaFeedback::FrameRate { fps } => {
                self.stats.frame_rate_requests += 1;
                self.encoder.set_frame_rate(now, *fps);
            }
            MediaFeedback::KeyFrameRequest => {
                self.stats.key_frame_requests += 1;
                if self.last_key_request.is_none_or(|t| now >= t + MIN_KEY_FRAME_INTERVAL) {
                    self.last_key_request = Some(now);
                    self.encoder.request_key_frame();
                }
            }
        }
        self.apply_target();
        self.take_probes(now);
    }

    /// The encoder's frame rate in force (fps).
    pub fn frame_rate(&self) -> f64 {
        self.encoder.frame_rate()
    }

    fn on_results(
        &mut self,
        now: Time,
        results: &[rtclab_cc::PacketResult],
        report_time: Option<Time>,
    ) {
        for p in self.protection.on_results(now, results) {
            self.pacer.enqueue_retransmission(now, p);
        }
        match &mut self.window {
            Some(w) => {
                let (in_flight, next) = (self.history.in_flight_bytes(), self.history.next_seq());
                w.on_results(now, results, report_time, in_flight, next, &mut self.cc);
                self.window_blocked = false;
                self.pto_count = 0;
                self.arm_pto(now);
            }
            None => {
                self.cc.on_data_in_flight(now, self.history.in_flight_bytes());
                self.cc.on_transport_feedback(now, results);
                self.window_blocked = false;
            }
        }
    }

    /// PTO = 2 × srtt + 25 ms (max_ack_delay), at least 100 ms, doubled per consecutive
    /// expiry; armed while anything is in flight.
    fn arm_pto(&mut self, now: Time) {
        let Some(w) = &self.window else { return };
        if self.history.in_flight_bytes() == 0 {
            self.pto_at = None;
            return;
        }
        let srtt = w.srtt().unwrap_or(rtclab_core::TimeDelta::from_millis(333));
        let base = (srtt.mul_f64(2.0) + rtclab_core::TimeDelta::from_millis(25))
            .max(rtclab_core::TimeDelta::from_millis(100));
        self.pto_at = Some(now + base.mul_f64(f64::from(1u32 << self.pto_count.min(6))));
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.pto_at.is_some_and(|t| now >= t) {
            // No feedback for a PTO: what is in flight is presumed lost (persistent
            // congestion), the window restarts from the controller's minimum.
            self.history.abandon_in_flight();
            self.cc.on_congestion_event(now, &rtclab_cc::CongestionEvent::Timeout);
            self.window_blocked = false;
            self.pto_count += 1;
            self.pto_at = None;
            self.stats.ptos += 1;
        }
        self.cc.handle_timeout(now);
        if self.window.is_none() {
            self.window_blocked = false; // a media controller's gate is asked again
        }
        self.apply_target();
        self.take_probes(now);
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        while let Some(frame) = self.encoder.poll_frame(now) {
            self.stats.frames += 1;
            let mut packets = packetize(&frame, self.cfg.packetizer);
            let n = packets.len();
            let code = self.protection.fec_code();
            let fec = match self.protection.fec_packets(now, n as u32, frame.size as u64) {
                // An exact count: k + ½ packets' worth over a fresh credit floors to k.
                Some(k) => {
                    let ratio = (k as f64 + 0.5) / n.max(1) as f64;
                    crate::packetizer::add_fec(&mut packets, ratio, &mut 0.0, code)
                }
                None => {
                    let ratio = self.protection.fec_ratio(now, self.cc.target().fec_ratio);
                    crate::packetizer::add_fec(&mut packets, ratio, &mut self.fec_credit, code)
                }
            };
            self.stats.fec_packets += fec as u64;
            self.stats.fec_bytes += packets[n..].iter().map(|p| p.size as u64).sum::<u64>();
            let media_bytes: u64 = packets[..n].iter().map(|p| p.size as u64).sum();
            for p in packets {
                self.pacer.enqueue(now, p);
            }
            let waited = self.pacer.head_delay(now);
            self.cc.on_media_frame(now, media_bytes, waited, self.pacer.queued_bytes());
        }
        self.take_probes(now);
        if self.window.is_some() {
            let cwnd = self.cc.target().cwnd_bytes.unwrap_or(u64::MAX);
            self.window_blocked = self.history.in_flight_bytes() >= cwnd;
        } else if let Some(size) = self.pacer.next_size() {
            // A media controller with a send gate of its own (SCReAM) is asked about the
            // packet at the head of the pacer's queue (whether the pacer's clock, or a burst
            // interval, would release it now or not).
            self.window_blocked = !self.cc.may_send(now, size);
        }
        if self.window_blocked {
            return None; // wait for feedback (or the controller's timeout) to open it
        }
        let Paced { media, size, probe_cluster } = self.pacer.poll_transmit(now)?;
        let seq = self.history.on_sent(now, size, probe_cluster);
        if self.window.is_some() && self.pto_at.is_none() {
            self.arm_pto(now);
        }
        self.cc.on_packet_sent(
            now,
            &SentPacket {
                seq,
                size,
                retransmit: media.is_some_and(|m| m.rtx),
                bytes_in_flight: self.history.in_flight_bytes(),
                probe_cluster,
                queued_bytes: self.pacer.queued_bytes(),
            },
        );
        let mut p = Packet::data(self.flow, seq, size, now);
        p.set_ecn(self.cfg.ecn);
        match media {
            Some(mp) => {
                self.protection.on_sent(now, seq, mp);
                if mp.rtx {
                    p.set_retransmit(true);
                    self.stats.rtx_packets += 1;
                    self.stats.rtx_bytes += size as u64;
                }
                p.echo = mp.capture_time;
                let rtx_wait = mp.first_sent.map_or(0, |t| (now - t).as_nanos());
                p.info = PacketInfo::Media {
                    frame_id: mp.frame_id as u32,
                    index: mp.index.min(u16::MAX as u32) as u16,
                    count: mp.count.min(u16::MAX as u32) as u16,
                    key: mp.key,
                    xor_groups: mp.xor_groups,
                    encode_ns: mp.encode_ns,
                    rtx_wait_ns: rtx_wait.clamp(0, u32::MAX as i64) as u32,
                };
            }
            None => {
                p.info = PacketInfo::Padding;
                self.stats.padding_packets += 1;
                self.stats.padding_bytes += size as u64;
            }
        }
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += size as u64;
        Some(p)
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let pacer = if self.window_blocked { None } else { self.pacer.poll_timeout() };
        rtclab_core::earliest([
            self.encoder.poll_timeout(),
            pacer,
            self.cc.poll_timeout(),
            self.pto_at,
        ])
    }
}

/// The sender takes feedback as a structured `MediaFeedback` payload (the simulator) and
/// ignores packets without one.
impl Endpoint for MediaSender {
    fn start(&mut self, now: Time) {
        MediaSender::start(self, now)
    }
    fn stop(&mut self) {
        MediaSender::stop(self)
    }
    fn handle_packet(&mut self, now: Time, _pkt: &Packet, payload: Option<Payload>) {
        if let Some(fb) = payload.as_ref().and_then(|p| p.downcast_ref::<MediaFeedback>()) {
            self.handle_feedback(now, fb);
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        MediaSender::handle_timeout(self, now)
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        MediaSender::poll_transmit(self, now).map(Transmit::from)
    }
    fn poll_timeout(&self) -> Option<Time> {
        MediaSender::poll_timeout(self)
    }
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.target_event.take().map(|r| EndpointEvent::TargetRate { bps: r.as_bps() })
    }
}
