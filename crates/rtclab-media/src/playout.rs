//! The receiver's stages after frame assembly: jitter buffer (playout) → decoder → display,
//! each with a hook later work plugs into (a playout policy, a decoder model), driven sans-IO
//! by the receiver (`on_frame`, `handle_timeout`, `poll_timeout`, `poll_event`).
//!
//! - **Jitter buffer**: a complete frame waits until its playout policy's release time
//!   (`Immediate`: at once, the default; `Fixed`: capture time + a fixed delay, as a fixed
//!   playout delay would; late frames go at once).
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

use rtclab_core::{EndpointEvent, LogHistogram, Time, TimeDelta};
use std::collections::VecDeque;

/// A frame the assembler completed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AssembledFrame {
    pub id: u64,
    pub capture: Time,
    pub complete_at: Time,
    pub key: bool,
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
}

impl PlayoutPolicy for Playout {
    fn release_at(&mut self, now: Time, f: &AssembledFrame) -> Time {
        match self {
            Playout::Immediate => now,
            Playout::Fixed(d) => (f.capture + *d).max(now),
        }
    }
}

/// Built-in decoder models.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DecodeTime {
    Zero,
    Fixed(TimeDelta),
    /// A device class's decode-time process (AFR chapter, `crate::afr::clients`).
    Device(crate::afr::clients::ClientCategory),
}

/// A constant decode time.
struct ConstantDecoder(TimeDelta);

impl DecoderModel for ConstantDecoder {
    fn decode_time(&mut self, _now: Time, _f: &AssembledFrame) -> TimeDelta {
        self.0
    }
}

impl DecodeTime {
    /// The decoder model (`rng`: the draws of a device class).
    pub fn model(self, rng: rtclab_core::RngStream) -> Box<dyn DecoderModel> {
        match self {
            DecodeTime::Zero => Box::new(ConstantDecoder(TimeDelta::ZERO)),
            DecodeTime::Fixed(d) => Box::new(ConstantDecoder(d)),
            DecodeTime::Device(c) => Box::new(crate::afr::clients::DeviceDecoder::new(c, rng)),
        }
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
}

impl Default for DisplayStats {
    fn default() -> Self {
        DisplayStats {
            displayed: 0,
            delay: LogHistogram::new(),
            freezes: 0,
            freeze_time: TimeDelta::ZERO,
            undecodable: 0,
            max_decode_queue: 0,
        }
    }
}

pub struct PlayoutPipeline {
    playout: Box<dyn PlayoutPolicy>,
    decoder: Box<dyn DecoderModel>,
    /// Waiting in the jitter buffer: (release time, frame), in release order.
    jitter: VecDeque<(Time, AssembledFrame)>,
    /// Released, waiting for the decoder.
    decode_queue: VecDeque<AssembledFrame>,
    /// The frame in the decoder and when it is done.
    decoding: Option<(Time, AssembledFrame)>,
    /// Id of the last frame decoded (the reference the next delta frame needs).
    last_decoded: Option<u64>,
    shown: VecDeque<Time>,
    /// When the display counts as frozen if no frame is shown before (the last frame shown
    /// plus the freeze threshold); cleared once `FreezeStart` is reported.
    freeze_at: Option<Time>,
    events: VecDeque<EndpointEvent>,
    /// A delta frame could not be decoded and no key frame has been decoded since.
    awaiting_key: bool,
    pub stats: DisplayStats,
}

impl PlayoutPipeline {
    pub fn new(playout: Box<dyn PlayoutPolicy>, decoder: Box<dyn DecoderModel>) -> Self {
        PlayoutPipeline {
            playout,
            decoder,
            jitter: VecDeque::new(),
            decode_queue: VecDeque::new(),
            decoding: None,
            last_decoded: None,
            shown: VecDeque::new(),
            freeze_at: None,
            events: VecDeque::new(),
            awaiting_key: false,
            stats: DisplayStats::default(),
        }
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
        let d = self.decoding.map(|(t, _)| t);
        [j, d, self.freeze_at].into_iter().flatten().min()
    }

    /// Moves frames along every stage whose time has come, in time order.
    pub fn handle_timeout(&mut self, now: Time) {
        self.advance(now);
        // Nothing shown by the freeze deadline (frames due by then have been shown above).
        if self.freeze_at.is_some_and(|t| t <= now) {
            self.freeze_at = None;
            self.events.push_back(EndpointEvent::FreezeStart);
        }
    }

    fn advance(&mut self, now: Time) {
        loop {
            let j = self.jitter.front().map(|(t, _)| *t).filter(|t| *t <= now);
            let d = self.decoding.map(|(t, _)| t).filter(|t| *t <= now);
            match (j, d) {
                (Some(tj), td) if td.is_none_or(|td| tj < td) => {
                    let (_, f) = self.jitter.pop_front().expect("front exists");
                    self.decode_queue.push_back(f);
                    self.stats.max_decode_queue =
                        self.stats.max_decode_queue.max(self.decode_queue.len());
                    self.start_decoding(tj);
                }
                (_, Some(td)) => {
                    let (_, f) = self.decoding.take().expect("decoding");
                    self.display(td, &f);
                    self.start_decoding(td);
                }
                _ => return,
            }
        }
    }

    fn start_decoding(&mut self, now: Time) {
        while self.decoding.is_none() {
            let Some(f) = self.decode_queue.pop_front() else { return };
            let decodable = f.key || self.last_decoded.is_some_and(|l| l + 1 == f.id);
            if !decodable {
                self.stats.undecodable += 1;
                self.awaiting_key = true;
                continue;
            }
            if f.key {
                self.awaiting_key = false;
            }
            self.last_decoded = Some(f.id);
            let done = now + self.decoder.decode_time(now, &f);
            if done <= now {
                self.display(now, &f);
            } else {
                self.decoding = Some((done, f));
            }
        }
    }

    fn display(&mut self, now: Time, f: &AssembledFrame) {
        let delay = now - f.capture;
        if self.freeze_at.is_some_and(|t| t < now) {
            // A freeze began before this frame and was not reported yet (the driver came
            // back only now): its start comes first.
            self.freeze_at = None;
            self.events.push_back(EndpointEvent::FreezeStart);
        }
        self.stats.displayed += 1;
        self.stats.delay.record(delay.as_nanos().max(0) as u64);
        self.events.push_back(EndpointEvent::FrameDisplayed { delay });
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

    fn frame(id: u64, key: bool, at_ms: u64) -> AssembledFrame {
        AssembledFrame {
            id,
            capture: Time::from_millis(id * 33),
            complete_at: Time::from_millis(at_ms),
            key,
        }
    }

    #[test]
    fn defaults_show_each_decodable_frame_when_it_completes() {
        let mut p = PlayoutPipeline::new(
            Box::new(Playout::Immediate),
            DecodeTime::Zero.model(rtclab_core::RngStream::from_seed(1)),
        );
        for id in 0..10 {
            let f = frame(id, id == 0, id * 33 + 40);
            p.on_frame(f.complete_at, f);
            assert_eq!(
                p.poll_event(),
                Some(EndpointEvent::FrameDisplayed { delay: TimeDelta::from_millis(40) })
            );
        }
        assert_eq!(p.stats.displayed, 10);
        // Only the freeze watch is left: the last frame (337 ms) + max(3 × 33, 33 + 150) ms.
        assert_eq!(p.poll_timeout(), Some(Time::from_millis(337 + 183)));
    }

    #[test]
    fn a_freeze_is_reported_when_it_starts_and_when_it_ends() {
        let mut p = PlayoutPipeline::new(
            Box::new(Playout::Immediate),
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
            Box::new(Playout::Immediate),
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
            Box::new(Playout::Immediate),
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
            Box::new(Playout::Fixed(TimeDelta::from_millis(100))),
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
