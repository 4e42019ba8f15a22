//! The receiver's stages after frame assembly: jitter buffer (playout) → decoder → display,
//! each with a hook later work plugs into (a playout policy, a decoder model), driven sans-IO
//! by the receiver (`on_frame`, `handle_timeout`, `poll_timeout`, `poll_event`).
//!
//! - **Jitter buffer**: a complete frame waits until its playout policy's release time
//!   (`Immediate`: at once, the default; `Fixed`: capture time + a fixed delay, as a fixed
//!   playout delay would; late frames go at once; `Adaptive`: WebRTC's jitter estimate,
//!   `jitter_estimator.rs`).
//! - **Decoder**: frames decode one at a time in order, each taking the decoder model's time
//!   (`Zero` by default; `Fixed` per frame) — where decoder queuing builds up (AFR's subject,
//!   dissertation ch. 4). A delta frame needs the frame before it decoded (an IPPP chain);
//!   after a gap every delta frame is undecodable until the next key frame, which the
//!   receiver asks for (RTCP PLI, `receiver.rs`) while [`PlayoutPipeline::awaiting_key_frame`].
//! - **Display**: a decoded frame is shown at once (no vsync); a freeze is a gap between
//!   shown frames longer than max(3 × mean gap, mean gap + 150 ms) over the last second (the
//!   WebRTC freeze definition, spec `copa-qlibra-tcp.md` §4.4).
//!
//! With the defaults every decodable frame is shown the moment it completes, so the
//! assembly-stage QoE the summary has always reported is unchanged; the display stage adds
//! what a viewer sees (frames shown, display delay, freezes, undecodable frames).
//!
//! **Frame-rate control** (AFR, dissertation ch. 6; `afr/controller.rs`): optionally, each
//! frame's arrival at the decoder queue is an observation for a frame-rate policy (AFR or a
//! baseline) — the interarrival time, the decode times finished since the previous arrival,
//! the queue length and the head-of-queue wait — whose answer the receiver sends to the
//! encoder as a frame-rate request ([`PlayoutPipeline::take_frame_rate_request`]); the
//! decoder queue then holds at most the policy's capacity (16 frames, WebRTC's frame buffer),
//! a frame arriving at a full queue being dropped (its successors are then undecodable until
//! a key frame).
//!
//! **Latency breakdown**: every shown frame carries [`FrameStages`] — encode, pacing,
//! retransmission, queue, propagation (from the packet that completed the frame), jitter
//! buffer, decoder queue, decode — built from consecutive instants, so they sum to its
//! capture → display delay exactly. **Staleness**: the time the picture on screen is older than
//! 190 ms (ITU-T G.1070's stall threshold, the Confucius chapter's stall metric): the frame
//! shown at t_i (captured at c_i) stays until t_(i+1) and counts for
//! max(0, t_(i+1) − max(t_i, c_i + 190 ms)).

use rtclab_core::{EndpointEvent, FrameStages, LogHistogram, Time, TimeDelta};
use std::collections::VecDeque;

/// A frame the assembler completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssembledFrame {
    pub id: u64,
    pub capture: Time,
    pub complete_at: Time,
    pub key: bool,
    /// The frame's bytes on the wire (its media packets).
    pub bytes: u32,
    /// The frame left the encoder.
    pub encoded: Time,
    /// The packet that completed the frame: its content's first transmission, this copy's
    /// transmission, and its time in network queues.
    pub first_sent: Time,
    pub sent: Time,
    pub queued: TimeDelta,
    /// The frame buffer let it go (in frame order; later than `complete_at` when it waited
    /// for an earlier frame).
    pub in_order: Time,
}

impl AssembledFrame {
    /// A packet of it was resent, or it waited for an earlier frame's resend (libwebrtc's
    /// `delayed_by_retransmission`: such frames do not feed the jitter estimate).
    pub fn delayed_by_retransmission(&self) -> bool {
        self.sent > self.first_sent || self.in_order > self.complete_at
    }

    /// A frame with no sender-side detail (every sender-side stage folds into propagation).
    pub fn at(id: u64, capture: Time, complete_at: Time, key: bool) -> Self {
        AssembledFrame {
            id,
            capture,
            complete_at,
            key,
            bytes: 0,
            encoded: capture,
            first_sent: capture,
            sent: capture,
            queued: TimeDelta::ZERO,
            in_order: complete_at,
        }
    }
}

/// When a complete frame leaves the jitter buffer.
pub trait PlayoutPolicy: Send + Sync {
    fn release_at(&mut self, now: Time, f: &AssembledFrame) -> Time;
}

/// How long the decoder takes for a frame.
pub trait DecoderModel: Send + Sync {
    fn decode_time(&mut self, now: Time, f: &AssembledFrame) -> TimeDelta;
}

/// Built-in playout policies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Playout {
    Immediate,
    /// Release at capture time + this delay (at once if later).
    Fixed(TimeDelta),
    /// WebRTC's adaptive jitter buffer (`jitter_estimator.rs`), holding at least `min`.
    Adaptive {
        min: TimeDelta,
    },
}

/// `Immediate` and `Fixed`.
pub(crate) struct StaticPlayout(pub(crate) Option<TimeDelta>);

impl PlayoutPolicy for StaticPlayout {
    fn release_at(&mut self, now: Time, f: &AssembledFrame) -> Time {
        self.0.map_or(now, |d| (f.capture + d).max(now))
    }
}

/// What the viewer saw.
#[derive(Clone, Debug)]
pub struct DisplayStats {
    pub displayed: u64,
    /// Capture → display (ns).
    pub delay: LogHistogram,
    pub freezes: u64,
    pub freeze_time: TimeDelta,
    /// Complete frames the decoder could not decode (their reference was missing).
    pub undecodable: u64,
    /// Longest decoder queue seen (frames waiting, the one in the decoder excluded).
    pub max_decode_queue: usize,
    /// Frames dropped at a full decoder queue (with frame-rate control).
    pub decoder_drops: u64,
    /// Frame-rate requests sent to the encoder.
    pub frame_rate_requests: u64,
    /// Time the picture on screen was older than [`STALE_AFTER`] (see the module doc).
    pub stale_time: TimeDelta,
}

/// ITU-T G.1070's stall threshold for frame delay (the Confucius chapter's stall metric).
pub const STALE_AFTER: TimeDelta = TimeDelta::from_millis(190);

impl Default for DisplayStats {
    fn default() -> Self {
        DisplayStats {
            displayed: 0,
            delay: LogHistogram::new(),
            freezes: 0,
            freeze_time: TimeDelta::ZERO,
            undecodable: 0,
            max_decode_queue: 0,
            decoder_drops: 0,
            frame_rate_requests: 0,
            stale_time: TimeDelta::ZERO,
        }
    }
}

pub struct PlayoutPipeline {
    playout: Box<dyn PlayoutPolicy>,
    decoder: Box<dyn DecoderModel>,
    /// Waiting in the jitter buffer: (release time, frame), in release order.
    jitter: VecDeque<(Time, AssembledFrame)>,
    /// Released (when), waiting for the decoder.
    decode_queue: VecDeque<(Time, AssembledFrame)>,
    /// The frame in the decoder: when it is done, the frame, when it was released and when
    /// its decoding began.
    decoding: Option<(Time, AssembledFrame, Time, Time)>,
    /// The frame on screen: when it was shown and captured.
    on_screen: Option<(Time, Time)>,
    /// Id of the last frame decoded (the reference the next delta frame needs).
    last_decoded: Option<u64>,
    shown: VecDeque<Time>,
    /// When the display counts as frozen if no frame is shown before (the last frame shown
    /// plus the freeze threshold); cleared once `FreezeStart` is reported.
    freeze_at: Option<Time>,
    events: VecDeque<EndpointEvent>,
    /// A delta frame could not be decoded and no key frame has been decoded since.
    awaiting_key: bool,
    frame_rate: Option<Box<FrameRateControl>>,
    pub stats: DisplayStats,
}

/// The receiver end of AFR: a policy fed at each decoder-queue arrival.
struct FrameRateControl {
    policy: crate::afr::controller::FrameRatePolicy,
    capacity: Option<usize>,
    max_fps: f64,
    last_arrival: Option<Time>,
    /// Decode times (s) finished since the last arrival, and the longest decoder-queue wait
    /// (s) of a frame that entered the decoder since.
    decoded: Vec<f64>,
    max_wait: f64,
    requested: Option<f64>,
    pending: Option<f64>,
    /// The pause baselines are also asked every frame slot (1 / max fps): a paused encoder
    /// sends nothing, so without it the receiver could never tell it to resume.
    next_tick: Option<Time>,
}

impl PlayoutPipeline {
    pub fn new(playout: Box<dyn PlayoutPolicy>, decoder: Box<dyn DecoderModel>) -> Self {
        PlayoutPipeline {
            playout,
            decoder,
            jitter: VecDeque::new(),
            decode_queue: VecDeque::new(),
            decoding: None,
            on_screen: None,
            last_decoded: None,
            shown: VecDeque::new(),
            freeze_at: None,
            events: VecDeque::new(),
            awaiting_key: false,
            frame_rate: None,
            stats: DisplayStats::default(),
        }
    }

    /// Frame-rate control by `policy` (AFR or a baseline) with its decoder-queue `capacity`,
    /// for an encoder running at most `max_fps`.
    pub fn with_frame_rate_control(
        mut self,
        policy: crate::afr::controller::FrameRatePolicy,
        capacity: Option<usize>,
        max_fps: f64,
    ) -> Self {
        self.frame_rate = Some(Box::new(FrameRateControl {
            policy,
            capacity,
            max_fps,
            last_arrival: None,
            decoded: Vec::new(),
            max_wait: 0.0,
            requested: None,
            pending: None,
            next_tick: None,
        }));
        self
    }

    /// How long the decoder queue's head has waited at `t` (s; 0 when the queue is empty).
    fn head_wait(&self, t: Time) -> f64 {
        self.decode_queue.front().map_or(0.0, |(released, _)| (t - *released).as_secs_f64())
    }

    /// The pause baselines' periodic re-evaluation (see `FrameRateControl::next_tick`).
    fn frame_rate_tick(&mut self, now: Time) {
        while let Some(t) = self.frame_rate.as_ref().and_then(|c| c.next_tick).filter(|t| *t <= now)
        {
            let qwait = self.head_wait(t);
            let qlen = self.decode_queue.len();
            let c = self.frame_rate.as_deref_mut().expect("a tick belongs to frame-rate control");
            let slot = TimeDelta::from_secs_f64(1.0 / c.max_fps);
            c.next_tick = Some(t + slot);
            let o = crate::afr::controller::Observation {
                now: t.as_secs_f64(),
                interarrival: slot.as_secs_f64(),
                decoded: Vec::new(),
                qlen,
                qwait,
                rtt: 0.0,
            };
            let target = c.policy.on_arrival(&o);
            Self::note_target(c, target, &mut self.stats);
        }
    }

    /// Turns the policy's answer into a frame rate and queues a request when it changed.
    fn note_target(
        c: &mut FrameRateControl,
        target: crate::afr::controller::Target,
        stats: &mut DisplayStats,
    ) {
        use crate::afr::controller::Target;
        let fps = match target {
            Target::Interval(t) if t > 0.0 => (1.0 / t).min(c.max_fps),
            Target::Interval(_) | Target::Pause(false) => c.max_fps,
            Target::Pause(true) => 0.0,
        };
        if c.requested.is_none_or(|r| (r - fps).abs() > 1e-9) {
            c.requested = Some(fps);
            c.pending = Some(fps);
            stats.frame_rate_requests += 1;
        }
    }

    /// A frame rate (fps; 0 = pause) the encoder should switch to, once per change.
    pub fn take_frame_rate_request(&mut self) -> Option<f64> {
        self.frame_rate.as_mut().and_then(|c| c.pending.take())
    }

    /// A frame leaves the jitter buffer for the decoder queue at `now`: the frame-rate policy
    /// observes the arrival, and a full queue drops the frame. Returns whether it joins.
    fn decoder_arrival(&mut self, now: Time) -> bool {
        let (head_wait, qlen) = (self.head_wait(now), self.decode_queue.len());
        let Some(c) = self.frame_rate.as_deref_mut() else { return true };
        let o = crate::afr::controller::Observation {
            now: now.as_secs_f64(),
            interarrival: c.last_arrival.map_or(0.0, |t| (now - t).as_secs_f64()),
            decoded: std::mem::take(&mut c.decoded),
            qlen,
            qwait: c.max_wait.max(head_wait),
            // No RTT at the receiver in our RTCP subset: the ≤ 100 ms branch of the rules.
            rtt: 0.0,
        };
        c.last_arrival = Some(now);
        c.max_wait = 0.0;
        if c.next_tick.is_none()
            && matches!(c.policy, crate::afr::controller::FrameRatePolicy::Skip { .. })
        {
            c.next_tick = Some(now + TimeDelta::from_secs_f64(1.0 / c.max_fps));
        }
        let target = c.policy.on_arrival(&o);
        Self::note_target(c, target, &mut self.stats);
        if c.capacity.is_some_and(|cap| qlen >= cap) {
            self.stats.decoder_drops += 1;
            return false;
        }
        true
    }

    /// Whether the decoder is stuck until a key frame arrives (the receiver then asks for
    /// one).
    pub fn awaiting_key_frame(&self) -> bool {
        self.awaiting_key
    }

    /// A frame completed at `now`.
    pub fn on_frame(&mut self, now: Time, f: AssembledFrame) {
        let at = self.playout.release_at(now, &f);
        let pos = self.jitter.iter().position(|(t, _)| *t > at).unwrap_or(self.jitter.len());
        self.jitter.insert(pos, (at, f));
        self.handle_timeout(now);
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let j = self.jitter.front().map(|(t, _)| *t);
        let d = self.decoding.map(|(t, ..)| t);
        let tick = self.frame_rate.as_ref().and_then(|c| c.next_tick);
        rtclab_core::earliest([j, d, self.freeze_at, tick])
    }

    /// Moves frames along every stage whose time has come, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        self.frame_rate_tick(now);
        // Nothing shown by the freeze deadline (frames due by then have been shown above).
        if self.freeze_at.is_some_and(|t| t <= now) {
            self.freeze_at = None;
            self.events.push_back(EndpointEvent::FreezeStart);
        }
    }

    fn advance(&mut self, now: Time) {
        loop {
            let j = self.jitter.front().map(|(t, _)| *t).filter(|t| *t <= now);
            let d = self.decoding.map(|(t, ..)| t).filter(|t| *t <= now);
            match (j, d) {
                (Some(tj), td) if td.is_none_or(|td| tj < td) => {
                    let (_, f) = self.jitter.pop_front().expect("front exists");
                    if self.decoder_arrival(tj) {
                        self.decode_queue.push_back((tj, f));
                    }
                    self.stats.max_decode_queue =
                        self.stats.max_decode_queue.max(self.decode_queue.len());
                    self.start_decoding(tj);
                }
                (_, Some(td)) => {
                    let (_, f, released, start) = self.decoding.take().expect("decoding");
                    self.display(td, &f, released, start);
                    self.start_decoding(td);
                }
                _ => return,
            }
        }
    }

    fn start_decoding(&mut self, now: Time) {
        while self.decoding.is_none() {
            let Some((released, f)) = self.decode_queue.pop_front() else { return };
            let decodable = f.key || self.last_decoded.is_some_and(|l| l + 1 == f.id);
            if !decodable {
                self.stats.undecodable += 1;
                self.awaiting_key = true;
                continue;
            }
            if f.key {
                self.awaiting_key = false;
            }
            if let Some(c) = self.frame_rate.as_deref_mut() {
                c.max_wait = c.max_wait.max((now - released).as_secs_f64());
            }
            self.last_decoded = Some(f.id);
            let done = now + self.decoder.decode_time(now, &f);
            if done <= now {
                self.display(now, &f, released, now);
            } else {
                self.decoding = Some((done, f, released, now));
            }
        }
    }

    fn display(&mut self, now: Time, f: &AssembledFrame, released: Time, decode_start: Time) {
        let delay = now - f.capture;
        let stages = FrameStages::from_instants([
            f.capture,
            f.encoded,
            f.first_sent,
            f.sent,
            f.sent + f.queued,
            f.complete_at,
            f.in_order,
            released,
            decode_start,
            now,
        ]);
        if let Some((shown, captured)) = self.on_screen {
            let from = shown.max(captured + STALE_AFTER);
            if now > from {
                self.stats.stale_time += now - from;
            }
        }
        self.on_screen = Some((now, f.capture));
        if let Some(c) = self.frame_rate.as_deref_mut() {
            c.decoded.push((now - decode_start).as_secs_f64());
        }
        if self.freeze_at.is_some_and(|t| t < now) {
            // A freeze began before this frame and was not reported yet (the driver came
            // back only now): its start comes first.
            self.freeze_at = None;
            self.events.push_back(EndpointEvent::FreezeStart);
        }
        self.stats.displayed += 1;
        self.stats.delay.record(delay.as_nanos().max(0) as u64);
        self.events.push_back(EndpointEvent::FrameDisplayed { delay, stages });
        if let Some(&prev) = self.shown.back() {
            let gap = now - prev;
            let n = self.shown.len() as i64;
            let mean = if n >= 2 {
                TimeDelta::from_nanos((prev - self.shown[0]).as_nanos() / (n - 1))
            } else {
                gap
            };
            let threshold =
                TimeDelta::from_nanos((3 * mean.as_nanos()).max(mean.as_nanos() + 150_000_000));
            if gap > threshold {
                self.stats.freezes += 1;
                self.stats.freeze_time += gap;
                self.events.push_back(EndpointEvent::Freeze { duration: gap });
            }
        }
        self.shown.push_back(now);
        while self.shown.front().is_some_and(|&t| now - t > TimeDelta::from_secs(1)) {
            self.shown.pop_front();
        }
        // The next gap that would be a freeze (the same threshold as above, computed from
        // what has been shown so far; none until two frames give a mean).
        let n = self.shown.len() as i64;
        self.freeze_at = (n >= 2).then(|| {
            let mean = (now - self.shown[0]).as_nanos() / (n - 1);
            now + TimeDelta::from_nanos((3 * mean).max(mean + 150_000_000))
        });
    }

    pub fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoder::DecodeTime;

    fn frame(id: u64, key: bool, at_ms: u64) -> AssembledFrame {
        AssembledFrame::at(id, Time::from_millis(id * 33), Time::from_millis(at_ms), key)
    }

    #[test]
    fn defaults_show_each_decodable_frame_when_it_completes() {
        let mut p = PlayoutPipeline::new(
            Playout::Immediate.build(),
            DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(1)),
        );
        for id in 0..10 {
            let f = frame(id, id == 0, id * 33 + 40);
            p.on_frame(f.complete_at, f);
            assert_eq!(
                p.poll_event(),
                Some(EndpointEvent::FrameDisplayed {
                    delay: TimeDelta::from_millis(40),
                    stages: FrameStages([
                        TimeDelta::ZERO,
                        TimeDelta::ZERO,
                        TimeDelta::ZERO,
                        TimeDelta::ZERO,
                        TimeDelta::from_millis(40),
                        TimeDelta::ZERO,
                        TimeDelta::ZERO,
                        TimeDelta::ZERO
                    ])
                })
            );
        }
        assert_eq!(p.stats.displayed, 10);
        // Only the freeze watch is left: the last frame (337 ms) + max(3 × 33, 33 + 150) ms.
        assert_eq!(p.poll_timeout(), Some(Time::from_millis(337 + 183)));
    }

    #[test]
    fn a_freeze_is_reported_when_it_starts_and_when_it_ends() {
        let mut p = PlayoutPipeline::new(
            Playout::Immediate.build(),
            DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(1)),
        );
        let show = |p: &mut PlayoutPipeline, id: u64, at: u64| {
            let f = frame(id, id == 0, at);
            p.on_frame(f.complete_at, f);
        };
        for id in 0..4 {
            show(&mut p, id, id * 33 + 40); // 40, 73, 106, 139 ms
        }
        while p.poll_event().is_some() {}
        // Nothing more: the display freezes at 139 + max(3 × 33, 33 + 150) = 322 ms.
        let at = p.poll_timeout().unwrap();
        assert_eq!(at, Time::from_millis(322));
        p.handle_timeout(at);
        assert_eq!(p.poll_event(), Some(EndpointEvent::FreezeStart));
        assert_eq!(p.poll_timeout(), None, "reported once");
        // A frame at 500 ms ends it: 361 ms without a new picture.
        show(&mut p, 4, 500);
        assert!(matches!(p.poll_event(), Some(EndpointEvent::FrameDisplayed { .. })));
        assert_eq!(
            p.poll_event(),
            Some(EndpointEvent::Freeze { duration: TimeDelta::from_millis(361) })
        );
        // A driver that comes back late still gets the start before the end.
        show(&mut p, 5, 533);
        while p.poll_event().is_some() {}
        show(&mut p, 6, 2000);
        let evs: Vec<_> = std::iter::from_fn(|| p.poll_event()).collect();
        assert!(
            matches!(
                evs[..],
                [
                    EndpointEvent::FreezeStart,
                    EndpointEvent::FrameDisplayed { .. },
                    EndpointEvent::Freeze { .. }
                ]
            ),
            "{evs:?}"
        );
    }

    #[test]
    fn a_missing_reference_makes_delta_frames_undecodable_until_the_next_key_frame() {
        let mut p = PlayoutPipeline::new(
            Playout::Immediate.build(),
            DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(1)),
        );
        for id in [0, 1, 2, 4, 5, 6, 7, 8, 9, 10] {
            // Frame 3 never completed; frame 9 is the next key frame.
            let f = frame(id, id == 0 || id == 9, id * 33 + 40);
            p.on_frame(f.complete_at, f);
        }
        assert_eq!(p.stats.undecodable, 5); // 4..=8
        assert_eq!(p.stats.displayed, 5); // 0, 1, 2, 9, 10
                                          // 2 shown at 106 ms, 9 at 337 ms: 231 ms > max(3 x 33, 33 + 150) ms is a freeze.
        assert_eq!(p.stats.freezes, 1);
        assert_eq!(p.stats.freeze_time, TimeDelta::from_millis(231));
    }

    #[test]
    fn a_slow_decoder_queues_frames_and_delays_display() {
        // 30 fps in, 50 ms per frame out: the queue grows by one frame every ~100 ms.
        let mut p = PlayoutPipeline::new(
            Playout::Immediate.build(),
            DecodeTime::Fixed(TimeDelta::from_millis(50))
                .model(rtclab_core::RngStream::from_seed(1)),
        );
        for id in 0..30 {
            let f = frame(id, id == 0, id * 33 + 40);
            p.handle_timeout(f.complete_at);
            p.on_frame(f.complete_at, f);
        }
        while let Some(t) = p.poll_timeout() {
            p.handle_timeout(t);
        }
        assert_eq!(p.stats.displayed, 30);
        // The last frame waited for 29 frames × (50 − 33) ms ≈ 0.5 s of backlog.
        let max = p.stats.delay.quantile(1.0).unwrap() as f64 / 1e6;
        assert!((520.0..600.0).contains(&max), "{max}");
        assert!(p.stats.max_decode_queue >= 8, "{}", p.stats.max_decode_queue);
    }

    #[test]
    fn a_fixed_playout_delay_holds_early_frames() {
        let mut p = PlayoutPipeline::new(
            Playout::Fixed(TimeDelta::from_millis(100)).build(),
            DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(1)),
        );
        let f = frame(0, true, 40);
        p.on_frame(f.complete_at, f);
        assert_eq!(p.stats.displayed, 0);
        assert_eq!(p.poll_timeout(), Some(Time::from_millis(100)));
        p.handle_timeout(Time::from_millis(100));
        assert_eq!(p.stats.displayed, 1);
        assert_eq!(p.stats.delay.quantile(0.5).map(|d| d / 1_000_000), Some(100));
    }
}
