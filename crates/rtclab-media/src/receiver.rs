//! The media receiver endpoint, a pipeline of stages: packet buffer (feedback bookkeeping,
//! loss accounting) → frame assembly (`frames.rs`, with FEC recovery) → jitter buffer →
//! decoder → display (`playout.rs`, with a playout policy and a decoder model as hooks) —
//! and the feedback its controller pairing needs — transport-wide feedback (for `gcc`), or REMB from the paper's
//! receiver-side estimator plus receiver reports (for `gcc_paper`).
//! abs-send-time is modelled as on the wire: 6.18 fixed point, wrapping every 64 s, unwrapped
//! here.

use crate::ccfb::{CcfbConfig, CcfbGenerator};
use crate::decoder::DecodeTime;
use crate::feedback::TwccGenerator;
use crate::frames::FrameAssembler;
use crate::playout::{AssembledFrame, Playout, PlayoutPipeline};
use crate::sender::MediaFeedback;
use rtclab_cc::gcc::{GccPaperConfig, GccPaperReceiver};
use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, Packet, PacketInfo, Payload, Time, TimeDelta, Transmit,
};
use rtclab_wire::extensions::{abs_send_time_from_nanos, abs_send_time_to_nanos};
use std::collections::VecDeque;

/// Which feedback the receiver produces.
#[derive(Clone, Debug, PartialEq)]
pub enum FeedbackMode {
    Twcc {
        interval: TimeDelta,
    },
    Ccfb(CcfbConfig),
    /// `rr_randomized`: each report interval drawn as 2012-2013 webrtc's `RTCPSender` did for
    /// a video module that sends no media: interval/2 + interval × U{0..999}/1000 (whoever
    /// builds the endpoint hands it a seeded stream with `with_rr_draws`).
    RembAndRr {
        estimator: Box<GccPaperConfig>,
        rr_interval: TimeDelta,
        rr_randomized: bool,
    },
}

const ABS_SEND_TIME_WRAP_NS: i64 = 64_000_000_000;

pub struct MediaReceiver {
    flow: FlowId,
    /// Events for the meters, in order (through `Endpoint::poll_event`).
    events: VecDeque<EndpointEvent>,
    twcc: Option<TwccGenerator>,
    ccfb: Option<CcfbGenerator>,
    remb: Option<GccPaperReceiver>,
    rr_interval: TimeDelta,
    /// Draws for randomized report intervals (None: every `rr_interval`).
    rr_rng: Option<rtclab_core::RngStream>,
    next_rr: Option<Time>,
    pending: VecDeque<MediaFeedback>,
    pub frames: FrameAssembler,
    /// Jitter buffer → decoder → display.
    pub playout: PlayoutPipeline,
    abs_last: Option<(i64, i64)>,
    /// The latest media frame's capture time (ns): a non-media packet's group when the
    /// estimator groups by frame.
    last_capture_ns: i64,
    // receiver-report loss accounting
    highest_seq: Option<u64>,
    received_in_interval: u64,
    expected_base: u64,
    pub packets_received: u64,
    pub bytes_received: u64,
    /// Key-frame requests: the repeat interval while the decoder waits for a key frame
    /// (None: never ask), when the last one went out, how many did.
    key_request_interval: Option<TimeDelta>,
    last_key_request: Option<Time>,
    pub key_frame_requests: u64,
}

/// libwebrtc's receiver asks again for a key frame every 200 ms while it waits for one
/// (`VideoReceiveStream2`, `max_wait_for_keyframe`).
pub const KEY_FRAME_REQUEST_INTERVAL: TimeDelta = TimeDelta::from_millis(200);

impl MediaReceiver {
    pub fn new(flow: FlowId, mode: FeedbackMode, stall_threshold: Option<TimeDelta>) -> Self {
        let (mut twcc, mut ccfb, mut remb, mut rr_interval) = (None, None, None, TimeDelta::ZERO);
        match mode {
            FeedbackMode::Twcc { interval } => twcc = Some(TwccGenerator::new(interval, 0, 1)),
            FeedbackMode::Ccfb(cfg) => ccfb = Some(CcfbGenerator::new(cfg, 0, 1)),
            FeedbackMode::RembAndRr { estimator, rr_interval: rr, .. } => {
                remb = Some(GccPaperReceiver::new(*estimator));
                rr_interval = rr;
            }
        }
        MediaReceiver {
            flow,
            events: VecDeque::new(),
            twcc,
            ccfb,
            remb,
            rr_interval,
            rr_rng: None,
            next_rr: None,
            pending: VecDeque::new(),
            frames: FrameAssembler::new(stall_threshold),
            playout: PlayoutPipeline::new(
                Playout::Immediate.build(),
                DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(0)),
            ),
            abs_last: None,
            last_capture_ns: 0,
            highest_seq: None,
            received_in_interval: 0,
            expected_base: 0,
            packets_received: 0,
            bytes_received: 0,
            key_request_interval: Some(KEY_FRAME_REQUEST_INTERVAL),
            last_key_request: None,
            key_frame_requests: 0,
        }
    }

    /// How long complete frames wait for a missing earlier frame's retransmission
    /// (`frames::GIVE_UP` when the sender retransmits; zero by default).
    pub fn with_frame_wait(mut self, wait: TimeDelta) -> Self {
        self.frames.set_wait(wait);
        self
    }

    /// Randomized receiver-report intervals (`FeedbackMode::RembAndRr { rr_randomized }`),
    /// drawn from `rng`.
    pub fn with_rr_draws(mut self, rng: rtclab_core::RngStream) -> Self {
        self.rr_rng = Some(rng);
        self
    }

    /// The time to the next receiver report: `rr_interval`, or with draws 2012-2013 webrtc's
    /// `RTCPSender` schedule, interval/2 + interval × (rand() % 1000)/1000 in whole ms.
    fn next_rr_interval(&mut self) -> TimeDelta {
        let iv = self.rr_interval;
        match &mut self.rr_rng {
            None => iv,
            Some(rng) => {
                let ms = iv.as_millis_f64() as i64;
                TimeDelta::from_millis(ms / 2 + ms * rng.below(1000) as i64 / 1000)
            }
        }
    }

    /// Whether (and how often) the receiver asks for a key frame when it cannot decode
    /// (RTCP PLI); on by default, every 200 ms while waiting.
    pub fn with_key_frame_requests(mut self, interval: Option<TimeDelta>) -> Self {
        self.key_request_interval = interval;
        self
    }

    fn request_key_frame_if_needed(&mut self, now: Time) {
        let Some(iv) = self.key_request_interval else { return };
        if !self.playout.awaiting_key_frame() {
            self.last_key_request = None;
            return;
        }
        if self.last_key_request.is_none_or(|t| now >= t + iv) {
            self.last_key_request = Some(now);
            self.key_frame_requests += 1;
            self.pending.push_back(MediaFeedback::KeyFrameRequest);
        }
    }

    /// The stages after assembly, built by the caller: a playout policy and a decoder model
    /// (built-in ones in `playout.rs`, or any implementation of the traits), frame-rate
    /// control.
    pub fn with_pipeline(mut self, p: PlayoutPipeline) -> Self {
        self.playout = p;
        self
    }

    /// Send time as the receiver sees it: the 24-bit abs-send-time, unwrapped.
    fn unwrap_abs_send_time(&mut self, sent: Time) -> i64 {
        let wire = abs_send_time_to_nanos(abs_send_time_from_nanos(sent.as_nanos())) as i64;
        let t = match self.abs_last {
            None => wire,
            Some((prev_wire, prev_unwrapped)) => {
                let mut d = wire - prev_wire;
                if d > ABS_SEND_TIME_WRAP_NS / 2 {
                    d -= ABS_SEND_TIME_WRAP_NS;
                } else if d < -ABS_SEND_TIME_WRAP_NS / 2 {
                    d += ABS_SEND_TIME_WRAP_NS;
                }
                prev_unwrapped + d
            }
        };
        self.abs_last = Some((wire, t));
        t
    }

    /// A media packet arrived. Returns the frame delay if it completed a frame.
    pub fn handle_data(&mut self, now: Time, pkt: &Packet) -> Option<TimeDelta> {
        self.packets_received += 1;
        self.bytes_received += pkt.size as u64;
        if let Some(g) = &mut self.twcc {
            g.on_packet(now, pkt.seq);
        }
        if let Some(g) = &mut self.ccfb {
            let marker =
                matches!(pkt.info, PacketInfo::Media { index, count, .. } if index + 1 == count);
            g.on_packet(now, pkt.seq, marker, pkt.ecn());
        }
        if let Some(r) = &self.remb {
            // 2013's estimator grouped by RTP timestamp (the frame's capture time); later ones
            // by abs-send-time.
            let send_ns = if r.groups_by_frame() {
                if matches!(pkt.info, PacketInfo::Media { .. }) {
                    self.last_capture_ns = pkt.echo.as_nanos() as i64;
                }
                self.last_capture_ns
            } else {
                self.unwrap_abs_send_time(pkt.sent_at)
            };
            if let Some(r) = &mut self.remb {
                if let Some(bps) = r.on_packet(now, send_ns, pkt.size, None) {
                    self.pending.push_back(MediaFeedback::Remb(bps as u64));
                }
            }
            if self.next_rr.is_none() {
                self.next_rr = Some(now + self.next_rr_interval());
            }
            if self.highest_seq.is_none() {
                self.expected_base = pkt.seq;
            }
            self.highest_seq = Some(self.highest_seq.map_or(pkt.seq, |h| h.max(pkt.seq)));
            self.received_in_interval += 1;
        }
        match pkt.info {
            PacketInfo::Media {
                frame_id,
                index,
                count,
                key,
                xor_groups,
                encode_ns,
                rtx_wait_ns,
                ..
            } => {
                let f = AssembledFrame {
                    encoded: pkt.echo + TimeDelta::from_nanos(encode_ns as i64),
                    first_sent: pkt.sent_at - TimeDelta::from_nanos(rtx_wait_ns as i64),
                    sent: pkt.sent_at,
                    queued: pkt.queue_delay,
                    ..AssembledFrame::at(frame_id as u64, pkt.echo, now, key)
                };
                let delay =
                    self.frames.on_packet(now, f, count as u32, pkt.size, index as u32, xor_groups);
                self.frames_to_playout(now);
                delay
            }
            _ => None,
        }
    }

    /// Frames the frame buffer let go, into the jitter buffer.
    fn frames_to_playout(&mut self, now: Time) {
        let mut any = false;
        while let Some(f) = self.frames.poll_frame() {
            self.playout.on_frame(now, f);
            any = true;
        }
        if any {
            self.request_key_frame_if_needed(now);
        }
        self.request_frame_rate();
    }

    /// A frame-rate change the playout's frame-rate control decided, to the sender.
    fn request_frame_rate(&mut self) {
        if let Some(fps) = self.playout.take_frame_rate_request() {
            self.pending.push_back(MediaFeedback::FrameRate { fps });
        }
    }

    /// The next event of the display stages (frame shown, freeze).
    pub fn poll_display_event(&mut self) -> Option<EndpointEvent> {
        self.playout.poll_event()
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.frames.poll_timeout().is_some_and(|t| t <= now) {
            self.frames.handle_timeout(now);
            self.frames_to_playout(now);
        }
        if self.playout.poll_timeout().is_some_and(|t| t <= now) {
            self.playout.handle_timeout(now);
            self.request_frame_rate();
        }
        self.request_key_frame_if_needed(now);
        if let Some(t) = self.next_rr {
            if now >= t {
                let expected = self.highest_seq.map_or(0, |h| h + 1 - self.expected_base);
                let lost = expected.saturating_sub(self.received_in_interval);
                let fraction = if expected > 0 { lost as f64 / expected as f64 } else { 0.0 };
                self.pending.push_back(MediaFeedback::ReceiverReport { fraction_lost: fraction });
                if let Some(h) = self.highest_seq {
                    self.expected_base = h + 1;
                }
                self.received_in_interval = 0;
                self.next_rr = Some(t + self.next_rr_interval());
            }
        }
    }

    /// The next feedback to send.
    pub fn poll_feedback(&mut self, now: Time) -> Option<MediaFeedback> {
        if let Some(g) = &mut self.twcc {
            if let Ok(Some(fb)) = g.poll_feedback(now) {
                self.pending.push_back(MediaFeedback::Twcc(fb));
            }
        }
        if let Some(g) = &mut self.ccfb {
            if let Ok(Some(fb)) = g.poll_feedback(now) {
                self.pending.push_back(MediaFeedback::Ccfb(fb));
            }
        }
        self.pending.pop_front()
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        rtclab_core::earliest([
            self.twcc.as_ref().and_then(|g| g.poll_timeout()),
            self.ccfb.as_ref().and_then(|g| g.poll_timeout()),
            self.next_rr,
            self.frames.poll_timeout(),
            self.playout.poll_timeout(),
            // The next repeat of a key-frame request while the decoder still waits.
            match (self.key_request_interval, self.last_key_request) {
                (Some(iv), Some(t)) if self.playout.awaiting_key_frame() => Some(t + iv),
                _ => None,
            },
        ])
    }

    /// The paper receiver's estimator (for time series).
    pub fn remb_estimator(&self) -> Option<&GccPaperReceiver> {
        self.remb.as_ref()
    }
}

/// Feedback leaves as a packet carrying the `MediaFeedback` as a structured payload (the
/// emulator encodes it into RTCP bytes instead, `rtp_codec`).
impl Endpoint for MediaReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet, _payload: Option<Payload>) {
        let frame = self.handle_data(now, pkt);
        self.events.push_back(EndpointEvent::Delivered { goodput_bytes: pkt.size as u64 });
        if let Some(delay) = frame {
            self.events.push_back(EndpointEvent::FrameComplete { delay });
            if let Some(duration) = self.frames.take_stall() {
                self.events.push_back(EndpointEvent::Stall { duration });
            }
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        MediaReceiver::handle_timeout(self, now)
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        let fb = self.poll_feedback(now)?;
        let pkt = Packet::ack(self.flow, 0, now, feedback_wire_size(&fb), now);
        Some(Transmit { pkt, payload: Some(Payload::structured(fb)) })
    }
    fn poll_timeout(&self) -> Option<Time> {
        MediaReceiver::poll_timeout(self)
    }
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.events.pop_front().or_else(|| self.playout.poll_event())
    }
}

/// Bytes on the wire for a feedback packet (IPv4 + UDP + RTCP).
pub fn feedback_wire_size(fb: &MediaFeedback) -> u32 {
    use rtclab_wire::rtcp::{Remb, RtcpPacket};
    let rtcp = match fb {
        MediaFeedback::Twcc(t) => RtcpPacket::TransportFeedback(t.clone()),
        MediaFeedback::Ccfb(c) => RtcpPacket::CongestionControlFeedback(c.clone()),
        MediaFeedback::Remb(bps) => {
            RtcpPacket::Remb(Remb { sender_ssrc: 0, bitrate_bps: *bps, ssrcs: vec![1] })
        }
        MediaFeedback::ReceiverReport { .. } => {
            return 28 + 32; // RR with one report block
        }
        MediaFeedback::KeyFrameRequest => return 28 + 12, // PLI: header + two SSRCs
        MediaFeedback::FrameRate { .. } => return 28 + 16, // APP: header, SSRC, name, value
    };
    let mut bytes = Vec::new();
    let _ = rtcp.write(&mut bytes);
    28 + bytes.len() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn remb_receiver(randomized: bool) -> MediaReceiver {
        let mode = FeedbackMode::RembAndRr {
            estimator: Box::new(GccPaperConfig::default()),
            rr_interval: TimeDelta::from_secs(1),
            rr_randomized: randomized,
        };
        MediaReceiver::new(FlowId(0), mode, None)
    }

    #[test]
    fn the_2013_report_interval_is_drawn_between_half_and_one_and_a_half_intervals() {
        let mut r = remb_receiver(true).with_rr_draws(rtclab_core::RngStream::from_seed(7));
        let ms: Vec<i64> = (0..2000).map(|_| r.next_rr_interval().as_millis_f64() as i64).collect();
        assert!(ms.iter().all(|m| (500..=1499).contains(m)), "{:?}", &ms[..10]);
        let mean = ms.iter().sum::<i64>() as f64 / ms.len() as f64;
        assert!((mean - 1000.0).abs() < 25.0, "mean {mean}");
        assert!(ms.iter().any(|m| *m < 600) && ms.iter().any(|m| *m > 1400));
        // Without draws: every second.
        let mut r = remb_receiver(false);
        assert!((0..10).all(|_| r.next_rr_interval() == TimeDelta::from_secs(1)));
    }
}
