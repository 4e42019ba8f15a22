//! A video encoder model (rate-controlled, not pixel-accurate).
//!
//! Frames are produced every 1/fps. The encoder's output rate follows the target with a
//! first-order lag (time constant `rate_time_constant`, as real rate controllers need a few
//! frames to react), capped at `max_bitrate` (the papers' VP8 encoder is capped near 2 Mbit/s).
//! A frame's size is the output rate / fps, times (1 + `size_jitter`·u) with u uniform of unit
//! standard deviation; every `key_frame_interval` (and on a receiver's key-frame request) a key
//! frame is `key_frame_factor` times larger. The rate controller pays the key frame's extra
//! bytes back from the frames after it, at most half of each frame, so the output rate stays
//! the target (the virtual-buffer accounting of libvpx-style rate control; without it every
//! requested key frame would add to the load).
//! Frame sizes can instead be replayed from a trace (bytes per frame, looping): as recorded
//! (`absolute`, the encoder then ignores the target) or `scaled`, where the trace gives each
//! frame's size relative to the trace mean and the rate model gives the mean.
//!
//! Congestion-window pushback in libwebrtc's default `DropFrame` mode reaches the encoder as
//! a drop ratio: with `reduce = min(target × ratio, target − min)`, one frame in
//! `max(2, target / reduce)` is skipped and the target lowered by the same share
//! (`VideoStreamEncoder::UpdateTargetBitrate`).
//!
//! Two switches make it a real stack's encoder (issue 42, docs/algorithms/encoder.md):
//! `model = EncoderModel::LibvpxVp8` replaces the lagged rate by libvpx VP8's CBR buffer,
//! decimation and under-run drops over a frame-size floor (`libvpx_rate.rs`), and
//! `bitrate_adjuster` puts libwebrtc's `EncoderBitrateAdjuster` between the allocation and
//! the encoder (`bitrate_adjuster.rs`).
//!
//! With libvpx VP8's model, `degradation = Degradation::MaintainFramerate` adds libwebrtc's
//! resolution adaptation (the default of a Chromium camera track): the `QualityScaler`
//! (`quality_scaler.rs`) reads each frame's QP and the dropped frames and asks for a smaller or
//! larger picture, the source delivers the size `resolution.rs` picks, and, as
//! `VideoStreamEncoder` does, up to 4 first frames too large for the start rate are dropped
//! each with a step down (`DropDueToSize`: over 320x240 under 300 kbit/s, over 640x480 under
//! 500). A new size re-creates the encoder (a key frame, a fresh rate-control buffer and bitrate
//! adjuster) and caps the stream at libwebrtc's default maximum for it (600 kbit/s up to
//! 320x240, 1.7 Mbit/s up to 640x480).

use crate::bitrate_adjuster::BitrateAdjuster;
use crate::libvpx_rate::{Decision, Vp8RateControl};
use crate::quality_scaler::{QualityScaler, Verdict, VP8_QP_THRESHOLDS};
use crate::resolution::{default_max_bitrate, ResolutionAdapter};
use rtclab_core::{Rate, RngStream, Time, TimeDelta};

/// How frames are sized against the target.
#[derive(Clone, Debug, PartialEq)]
pub enum EncoderModel {
    /// The output rate follows the target with a first-order lag and always meets it.
    Ideal,
    /// libvpx VP8's one-pass CBR rate control (`libvpx_rate.rs`): frames no smaller than
    /// `min_bits_per_pixel` × pixels × `complexity`, frames dropped when the buffer runs down.
    LibvpxVp8 { min_bits_per_pixel: f64, complexity: f64 },
}

/// What the sender gives up first when the rate is too low for its picture (WebRTC's
/// `DegradationPreference`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Degradation {
    /// The picture size stays; quantizer and frame drops absorb the rate (rtclab's default, and
    /// what `rtclab realclient chromium` asks of Chromium).
    #[default]
    MaintainResolution,
    /// Resolution adaptation by the quality scaler (Chromium's default for a camera track).
    MaintainFramerate,
}

/// `kDefaultMaxFrameDropInterval` (WebRTC `LibvpxVp8Encoder`): a frame asked for this long
/// after the last one encoded is encoded with libvpx's frame dropping off.
pub const MAX_FRAME_DROP_INTERVAL: TimeDelta = TimeDelta::from_secs(2);

/// `kMaxInitialFramedrop`: at most this many first frames are dropped for their size.
pub const MAX_INITIAL_FRAME_DROPS: u32 = 4;

/// libvpx VP8's smallest delta frame at quantizer 56, bits per pixel, for the canvas content
/// Chromium sends in `rtclab realclient` (docs/algorithms/encoder.md says how it was measured).
pub const VP8_MIN_BITS_PER_PIXEL: f64 = 0.060;

/// libwebrtc's VP8 key-frame interval in frames (`GetDefaultVp8Settings`'s `keyFrameInterval`).
pub const LIBWEBRTC_KEY_FRAME_FRAMES: f64 = 3000.0;

#[derive(Clone, Debug, PartialEq)]
pub struct EncoderConfig {
    pub fps: f64,
    pub min_bitrate: Rate,
    pub max_bitrate: Rate,
    pub rate_time_constant: TimeDelta,
    pub size_jitter: f64,
    pub key_frame_interval: Option<TimeDelta>,
    pub key_frame_factor: f64,
    /// Replayed frame sizes in bytes (looping); overrides the rate model when non-empty.
    pub size_trace: Vec<u32>,
    /// Scale the trace to the current rate (its mean frame = output rate / fps).
    pub size_trace_scaled: bool,
    /// Time from capture to the encoded frame (the frame reaches the packetizer this long
    /// after its capture instant); zero by default.
    pub encode_time: TimeDelta,
    /// Picture size (for the quality proxy, `quality.rs`); 1280 × 720 by default.
    pub width: u32,
    pub height: u32,
    /// The share of the controller's target the encoder is given and produces (1 by default).
    /// A real sender gives its encoder less than the estimate: libwebrtc subtracts packet
    /// overhead and its protection reserve and scales by its bitrate adjuster (Chromium 156,
    /// measured through the emulator at 1 Mbit/s: 0.85 of the estimate).
    pub target_share: f64,
    /// How frames are sized (default `Ideal`).
    pub model: EncoderModel,
    /// libwebrtc's encoder bitrate adjuster between the allocation and the encoder (default
    /// off here; on in Chromium, whose field trial
    /// `WebRTC-VideoRateControl/bitrate_adjuster:false/` turns it off).
    pub bitrate_adjuster: bool,
    /// Whether the picture may shrink (libvpx VP8 model only; default: it keeps its size).
    pub degradation: Degradation,
    /// libvpx VP8 model: a frame asked for this long after the last one out is encoded with
    /// dropping off (libwebrtc's 2 s; `None` is `WebRTC-VP8-MaxFrameInterval/Disabled/`).
    pub max_frame_drop_interval: Option<TimeDelta>,
    /// libvpx VP8 model: the spread of the frame-size floor from frame to frame (the content's
    /// own variation at the highest quantizer; the same unit-variance draw as `size_jitter`):
    /// a frame at the floor is floor × (1 + `floor_jitter`·u). 0 by default (every floor frame
    /// the same size).
    pub floor_jitter: f64,
}

impl Default for EncoderConfig {
    fn default() -> Self {
        EncoderConfig {
            fps: 30.0,
            min_bitrate: Rate::from_kbps(30),
            max_bitrate: Rate::from_kbps(2_000),
            rate_time_constant: TimeDelta::from_millis(200),
            size_jitter: 0.1,
            key_frame_interval: Some(TimeDelta::from_secs(10)),
            key_frame_factor: 3.0,
            size_trace: Vec::new(),
            size_trace_scaled: true,
            encode_time: TimeDelta::ZERO,
            width: 1280,
            height: 720,
            target_share: 1.0,
            model: EncoderModel::Ideal,
            bitrate_adjuster: false,
            degradation: Degradation::MaintainResolution,
            max_frame_drop_interval: Some(MAX_FRAME_DROP_INTERVAL),
            floor_jitter: 0.0,
        }
    }
}

impl EncoderConfig {
    /// Chromium's VP8 sender at `fps` frames a second (a media flow's default, `media.sender =
    /// "libwebrtc"`): libvpx's rate control over the measured floor, libwebrtc's encoder
    /// bitrate adjuster, getUserMedia's 640x480, a key frame every
    /// [`LIBWEBRTC_KEY_FRAME_FRAMES`] frames. `Default` is the ideal encoder.
    pub fn libwebrtc_vp8(fps: f64) -> Self {
        EncoderConfig {
            fps,
            key_frame_interval: Some(TimeDelta::from_secs_f64(LIBWEBRTC_KEY_FRAME_FRAMES / fps)),
            width: 640,
            height: 480,
            model: EncoderModel::LibvpxVp8 {
                min_bits_per_pixel: VP8_MIN_BITS_PER_PIXEL,
                complexity: 1.0,
            },
            bitrate_adjuster: true,
            ..EncoderConfig::default()
        }
    }
}

/// Resolution adaptation's state (`Degradation::MaintainFramerate` with the libvpx model).
#[derive(Clone, Debug)]
struct Adaptation {
    adapter: ResolutionAdapter,
    /// Started with the encoder.
    scaler: Option<QualityScaler>,
    /// First frames dropped for their size so far (`MAX_INITIAL_FRAME_DROPS` once one passed).
    initial_drops: u32,
}

/// One encoded frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub id: u64,
    pub capture_time: Time,
    pub size: u32,
    pub key: bool,
    /// Capture → encoded.
    pub encode_time: TimeDelta,
}

#[derive(Clone, Debug)]
pub struct VideoEncoder {
    cfg: EncoderConfig,
    rng: RngStream,
    target: Rate,
    output_bps: f64,
    next_frame: Option<Time>,
    last_frame: Option<Time>,
    /// Start of the current run of frames and frames produced since: frame times are
    /// computed from the count, so 1/fps rounding never accumulates.
    epoch: (Time, u64),
    next_key: Option<Time>,
    /// A key-frame request (PLI) not yet served: the next frame is a key frame.
    key_requested: bool,
    pub key_frames: u64,
    /// Bytes of key frames beyond their delta-frame size not yet paid back.
    key_debt: f64,
    frame_id: u64,
    /// The frame rate in force (the configured one until a receiver asks for another), and
    /// whether encoding is paused (frames of paused slots are not made).
    fps: f64,
    paused: bool,
    pub frames_skipped: u64,
    trace_mean: f64,
    drop_interval: Option<u64>,
    drop_counter: u64,
    pub frames_dropped: u64,
    adjuster: Option<BitrateAdjuster>,
    vp8: Option<Vp8RateControl>,
    /// Frames the rate control dropped (decimation, buffer under-run).
    pub frames_dropped_by_rate_control: u64,
    adaptation: Option<Adaptation>,
    /// The last target and pushback drop ratio asked for (re-applied after a resize).
    asked: (Rate, f64),
    /// The rate the last frame was encoded to (after the bitrate adjuster).
    handed: Option<Rate>,
    /// First frames dropped as too large for the start rate.
    pub frames_dropped_for_size: u64,
    /// Picture size changes.
    pub resolution_changes: u64,
    /// When the libvpx model last put out a frame.
    last_output: Option<Time>,
}

impl VideoEncoder {
    pub fn new(cfg: EncoderConfig, start: Rate, rng: RngStream) -> Self {
        let adaptation = (matches!(cfg.model, EncoderModel::LibvpxVp8 { .. })
            && cfg.degradation == Degradation::MaintainFramerate)
            .then(|| Adaptation {
                adapter: ResolutionAdapter::new(cfg.width, cfg.height),
                scaler: None,
                initial_drops: 0,
            });
        let trace_mean = if cfg.size_trace.is_empty() {
            1.0
        } else {
            cfg.size_trace.iter().map(|&x| x as f64).sum::<f64>() / cfg.size_trace.len() as f64
        };
        let adjuster = cfg.bitrate_adjuster.then(|| BitrateAdjuster::new(cfg.min_bitrate));
        let vp8 = match cfg.model {
            EncoderModel::Ideal => None,
            EncoderModel::LibvpxVp8 { min_bits_per_pixel, complexity } => {
                Some(Vp8RateControl::new(min_bits_per_pixel, complexity))
            }
        };
        let mut e = VideoEncoder {
            adjuster,
            vp8,
            frames_dropped_by_rate_control: 0,
            adaptation,
            asked: (start, 0.0),
            handed: None,
            frames_dropped_for_size: 0,
            resolution_changes: 0,
            last_output: None,
            fps: cfg.fps,
            paused: false,
            frames_skipped: 0,
            trace_mean: trace_mean.max(1.0),
            drop_interval: None,
            drop_counter: 0,
            frames_dropped: 0,
            cfg,
            rng,
            target: start,
            output_bps: 0.0,
            next_frame: None,
            last_frame: None,
            epoch: (Time::ZERO, 0),
            next_key: None,
            key_requested: false,
            key_frames: 0,
            key_debt: 0.0,
            frame_id: 0,
        };
        let given = e.given(start);
        (e.target, e.output_bps) = (given, given.as_bps() as f64);
        e
    }

    /// The picture size frames are encoded at now.
    pub fn resolution(&self) -> (u32, u32) {
        self.adaptation.as_ref().map_or((self.cfg.width, self.cfg.height), |a| a.adapter.size())
    }

    /// The picture size, where resolution adaptation is on (`None` otherwise).
    pub fn adapted_resolution(&self) -> Option<(u32, u32)> {
        self.adaptation.as_ref().map(|a| a.adapter.size())
    }

    /// The libvpx VP8 model's stream target: the rate the last frame was encoded to — what
    /// the sender gave the encoder (after protection and headers, within the stream's minimum
    /// and maximum, less the congestion window's frame-drop share) as the bitrate adjuster
    /// left it; before the first frame, what the sender gave. This is the rate Chromium 156
    /// reports as `outbound-rtp.targetBitrate`: on a logged 4g call its every value was the
    /// adjuster's output ("Adjusting allocation ... to", docs/realclient.md). None for the
    /// ideal encoder.
    pub fn stream_target(&self) -> Option<Rate> {
        self.vp8.as_ref().map(|_| self.handed.unwrap_or_else(|| self.given(self.asked.0)))
    }

    /// The stream's maximum bitrate: the configured one, and with resolution adaptation never
    /// above libwebrtc's default for the picture size.
    fn max_bitrate(&self) -> Rate {
        match &self.adaptation {
            Some(a) => {
                let (w, h) = a.adapter.size();
                self.cfg.max_bitrate.min(default_max_bitrate(w, h))
            }
            None => self.cfg.max_bitrate,
        }
    }

    /// What the encoder works to for a controller's target: its share, within its range.
    fn given(&self, target: Rate) -> Rate {
        let max = self.max_bitrate().max(self.cfg.min_bitrate);
        Rate::from_bps((target.as_bps() as f64 * self.cfg.target_share) as u64)
            .clamp(self.cfg.min_bitrate, max)
    }

    pub fn start(&mut self, now: Time) {
        self.epoch = (now, 0);
        self.next_frame = Some(now);
        self.next_key = Some(now);
        if let Some(a) = self.adaptation.as_mut() {
            a.scaler = Some(QualityScaler::new(now, VP8_QP_THRESHOLDS));
        }
    }

    /// The quality scaler's checks due by `now`, each applied to the picture size.
    fn run_quality_checks(&mut self, now: Time) {
        let mut resized = false;
        if let Some(a) = self.adaptation.as_mut() {
            while let Some(q) = a.scaler.as_mut().filter(|q| q.next_check() <= now) {
                resized |= match q.check() {
                    Verdict::Down => a.adapter.down(),
                    Verdict::Up => a.adapter.up(),
                    Verdict::Keep => false,
                };
            }
        }
        if resized {
            self.on_resize();
        }
    }

    /// A new picture size: `VideoStreamEncoder` re-creates the encoder (its first frame a key
    /// frame, libvpx's buffer and the bitrate adjuster afresh) and the stream's maximum follows.
    fn on_resize(&mut self) {
        self.resolution_changes += 1;
        self.key_requested = true;
        if let EncoderModel::LibvpxVp8 { min_bits_per_pixel, complexity } = self.cfg.model {
            self.vp8 = Some(Vp8RateControl::new(min_bits_per_pixel, complexity));
        }
        if self.cfg.bitrate_adjuster {
            self.adjuster = Some(BitrateAdjuster::new(self.cfg.min_bitrate));
        }
        let (target, drop_ratio) = self.asked;
        self.set_target_with_drop(target, drop_ratio);
    }

    /// `VideoStreamEncoder::DropDueToSize` while the initial frame dropper is on.
    fn drop_for_size(&mut self) -> bool {
        let target = self.target.as_bps();
        let (w, h) = self.resolution();
        let pixels = u64::from(w) * u64::from(h);
        let Some(a) = self.adaptation.as_mut() else { return false };
        if a.initial_drops >= MAX_INITIAL_FRAME_DROPS {
            return false;
        }
        let too_large =
            (target < 300_000 && pixels > 320 * 240) || (target < 500_000 && pixels > 640 * 480);
        if !too_large {
            a.initial_drops = MAX_INITIAL_FRAME_DROPS;
            return false;
        }
        a.initial_drops += 1;
        self.frames_dropped_for_size += 1;
        if a.adapter.down() {
            self.on_resize();
        }
        true
    }

    fn scaler(&mut self) -> Option<&mut QualityScaler> {
        self.adaptation.as_mut().and_then(|a| a.scaler.as_mut())
    }
    pub fn stop(&mut self) {
        self.next_frame = None;
    }
    pub fn set_target(&mut self, target: Rate) {
        self.set_target_with_drop(target, 0.0);
    }
    /// The target and the pushback frame-drop ratio (0 = none).
    pub fn set_target_with_drop(&mut self, target: Rate, drop_ratio: f64) {
        self.asked = (target, drop_ratio);
        let mut target = self.given(target);
        self.drop_interval = None;
        let (t, min) = (target.as_bps() as f64, self.cfg.min_bitrate.as_bps() as f64);
        if drop_ratio > 0.0 && t > min {
            let reduce = (t * drop_ratio).min(t - min);
            if reduce > 0.0 {
                let interval = ((t / reduce) as u64).max(2);
                self.drop_interval = Some(interval);
                target = Rate::from_bps((t - t / interval as f64) as u64);
            }
        }
        self.target = target;
    }
    /// A receiver asked for a key frame (RTCP PLI): the next frame encoded is one; the
    /// periodic key-frame schedule restarts from it.
    pub fn request_key_frame(&mut self) {
        self.key_requested = true;
    }
    /// A receiver's frame-rate request (AFR): `fps` (at most the configured rate) from the next
    /// frame on, or 0 to pause encoding; the sizes follow, so the bitrate stays the target.
    pub fn set_frame_rate(&mut self, now: Time, fps: f64) {
        if fps.is_nan() || fps <= 0.0 {
            self.paused = true;
            return;
        }
        self.paused = false;
        let fps = fps.min(self.cfg.fps);
        if (fps - self.fps).abs() < 1e-9 {
            return;
        }
        self.fps = fps;
        if self.next_frame.is_some() {
            let period = TimeDelta::from_secs_f64(1.0 / fps);
            let next = self.last_frame.map_or(now, |t| t + period).max(now);
            self.epoch = (next, 0);
            self.next_frame = Some(next);
        }
    }

    /// The frame rate in force (fps).
    pub fn frame_rate(&self) -> f64 {
        self.fps
    }

    pub fn config(&self) -> &EncoderConfig {
        &self.cfg
    }
    pub fn output_rate(&self) -> Rate {
        Rate::from_bps(self.output_bps as u64)
    }
    pub fn poll_timeout(&self) -> Option<Time> {
        self.next_frame.map(|t| t + self.cfg.encode_time)
    }

    pub fn poll_frame(&mut self, now: Time) -> Option<Frame> {
        let due = self.next_frame?;
        if due + self.cfg.encode_time > now {
            return None;
        }
        let period = TimeDelta::from_secs_f64(1.0 / self.fps);
        self.epoch.1 += 1;
        self.next_frame =
            Some(self.epoch.0 + TimeDelta::from_secs_f64(self.epoch.1 as f64 / self.fps));
        let dt = self.last_frame.map_or(period, |t| due - t);
        self.last_frame = Some(due);
        self.run_quality_checks(due);
        let tau = self.cfg.rate_time_constant.as_secs_f64();
        let k = if tau > 0.0 { 1.0 - (-dt.as_secs_f64() / tau).exp() } else { 1.0 };
        let given = match self.adjuster.as_mut() {
            Some(a) => a.adjust(due, self.target, self.fps),
            None => self.target,
        };
        self.handed = Some(given);
        self.output_bps += (given.as_bps() as f64 - self.output_bps) * k;
        if self.paused {
            self.frames_skipped += 1;
            return None;
        }
        if self.drop_for_size() {
            return None;
        }
        if let Some(n) = self.drop_interval {
            let drop = self.drop_counter.is_multiple_of(n);
            self.drop_counter += 1;
            if drop {
                self.frames_dropped += 1;
                if let Some(q) = self.scaler() {
                    q.on_dropped();
                }
                return None;
            }
        }
        let key = self.key_requested || self.next_key.is_some_and(|t| due >= t);
        // libvpx's rate control may drop the frame (a key frame stays pending), unless the last
        // frame out is 2 s old (libwebrtc then turns dropping off for this one).
        let forced = match (self.last_output, self.cfg.max_frame_drop_interval) {
            (Some(t), Some(max)) => due - t >= max,
            _ => false,
        };
        let vp8 = match self.vp8.as_mut().filter(|_| self.cfg.size_trace.is_empty()) {
            Some(rc) => match rc.decide(given.as_bps() as f64, self.fps, key, !forced) {
                (Decision::Drop, _) => {
                    self.frames_dropped_by_rate_control += 1;
                    if let Some(q) = self.adaptation.as_mut().and_then(|a| a.scaler.as_mut()) {
                        q.on_dropped();
                    }
                    return None;
                }
                (Decision::Encode(budget), earned) => Some((budget, earned)),
            },
            None => None,
        };
        if key {
            self.key_requested = false;
            self.key_frames += 1;
            self.next_key = self.cfg.key_frame_interval.map(|i| due + i);
        }
        let (w, h) = self.resolution();
        let size = if let (Some((budget, earned)), Some(rc)) = (vp8, self.vp8.as_mut()) {
            // The budget missed by the rate control's error, never under the floor at the
            // highest quantizer; the buffer pays a key frame's extra bytes.
            let u = (self.rng.next_f64() * 2.0 - 1.0) * 3f64.sqrt();
            // A picture scaled from the source keeps more detail per pixel (libvpx_rate.rs).
            let pixels = crate::libvpx_rate::effective_pixels(
                f64::from(w) * f64::from(h),
                f64::from(self.cfg.width) * f64::from(self.cfg.height),
            );
            let ratio = if key { self.cfg.key_frame_factor } else { 1.0 };
            let floor = rc.floor_bytes(pixels, key, self.cfg.key_frame_factor)
                * (1.0 + self.cfg.floor_jitter * u).max(0.1);
            let size =
                (budget * ratio * (1.0 + self.cfg.size_jitter * u).max(0.1)).max(floor).max(1.0);
            rc.encoded(size, earned, given.as_bps() as f64);
            self.last_output = Some(due);
            if let Some(q) = self.adaptation.as_mut().and_then(|a| a.scaler.as_mut()) {
                q.on_encoded(due, rc.qp(size, pixels, key, self.cfg.key_frame_factor));
            }
            size
        } else if self.cfg.size_trace.is_empty() {
            let u = (self.rng.next_f64() * 2.0 - 1.0) * 3f64.sqrt();
            let base = self.output_bps / 8.0 / self.fps * (1.0 + self.cfg.size_jitter * u).max(0.1);
            if key {
                let size = base * self.cfg.key_frame_factor;
                self.key_debt += size - base;
                size.max(1.0)
            } else {
                let pay = self.key_debt.min(0.5 * base);
                self.key_debt -= pay;
                (base - pay).max(1.0)
            }
        } else {
            let n = self.cfg.size_trace.len() as u64;
            let raw =
                self.cfg.size_trace.get((self.frame_id % n) as usize).copied().unwrap_or(1) as f64;
            if self.cfg.size_trace_scaled {
                (raw / self.trace_mean * self.output_bps / 8.0 / self.fps).max(1.0)
            } else {
                raw
            }
        };
        let f = Frame {
            id: self.frame_id,
            capture_time: due,
            size: size.round() as u32,
            key,
            encode_time: self.cfg.encode_time,
        };
        self.frame_id += 1;
        if let Some(a) = self.adjuster.as_mut() {
            a.on_frame(due, f.size);
        }
        Some(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(enc: &mut VideoEncoder, from: Time, secs: u64) -> (u64, u64) {
        let mut bytes = 0;
        let mut frames = 0;
        let mut now = from;
        let end = from + TimeDelta::from_secs(secs as i64);
        while let Some(t) = enc.poll_timeout() {
            if t >= end {
                break;
            }
            now = now.max(t);
            while let Some(f) = enc.poll_frame(now) {
                bytes += f.size as u64;
                frames += 1;
            }
        }
        (bytes, frames)
    }

    #[test]
    fn produces_its_share_of_the_target() {
        let cfg =
            EncoderConfig { key_frame_interval: None, target_share: 0.85, ..Default::default() };
        let mut e = VideoEncoder::new(cfg, Rate::from_kbps(1_000), RngStream::from_seed(2));
        e.start(Time::ZERO);
        e.set_target(Rate::from_kbps(1_000));
        let (bytes, _) = run(&mut e, Time::ZERO, 20);
        let rate = bytes as f64 * 8.0 / 20.0;
        assert!((rate / 850_000.0 - 1.0).abs() < 0.02, "{rate}");
        // The maximum caps what the encoder is given, not the controller's target.
        e.set_target(Rate::from_kbps(3_000));
        run(&mut e, Time::from_secs(20), 5);
        let (bytes, _) = run(&mut e, Time::from_secs(25), 10);
        assert!((bytes as f64 * 8.0 / 10.0 / 2_000_000.0 - 1.0).abs() < 0.02);
    }

    #[test]
    fn follows_the_target_with_lag_and_cap() {
        let cfg = EncoderConfig { key_frame_interval: None, ..Default::default() };
        let mut e = VideoEncoder::new(cfg, Rate::from_kbps(500), RngStream::from_seed(1));
        e.start(Time::ZERO);
        let (bytes, frames) = run(&mut e, Time::ZERO, 10);
        assert_eq!(frames, 300);
        let rate = bytes as f64 * 8.0 / 10.0;
        assert!((rate / 500_000.0 - 1.0).abs() < 0.02, "{rate}");
        // A step to 1 Mbit/s: after 200 ms (one time constant) the output is ~63 % there.
        e.set_target(Rate::from_kbps(1_000));
        run(&mut e, Time::from_secs(10), 0);
        let mut now = Time::from_secs(10);
        while now < Time::from_millis(10_200) {
            now = e.poll_timeout().unwrap();
            e.poll_frame(now);
        }
        let r = e.output_rate().as_bps() as f64;
        assert!((r - 816_000.0).abs() < 40_000.0, "{r}");
        e.set_target(Rate::from_kbps(5_000));
        assert_eq!(e.target, Rate::from_kbps(2_000));
    }

    #[test]
    fn pushback_drops_one_frame_in_n() {
        let cfg = EncoderConfig { key_frame_interval: None, ..Default::default() };
        let mut e = VideoEncoder::new(cfg, Rate::from_kbps(1_000), RngStream::from_seed(3));
        // 25 % pushback: drop every 4th frame and aim 25 % lower.
        e.set_target_with_drop(Rate::from_kbps(1_000), 0.25);
        assert_eq!(e.target, Rate::from_kbps(750));
        e.start(Time::ZERO);
        let (_, frames) = run(&mut e, Time::ZERO, 10);
        assert_eq!(frames, 225);
        assert_eq!(e.frames_dropped, 75);
        // Frame ids stay consecutive (the receiver sees no gap in the stream).
        e.set_target(Rate::from_kbps(1_000));
        let f = e.poll_frame(Time::from_secs(20)).unwrap();
        assert_eq!(f.id, 225);
    }

    #[test]
    fn scaled_trace_keeps_its_shape_at_the_target_rate() {
        let cfg = EncoderConfig {
            key_frame_interval: None,
            size_trace: vec![1000, 3000],
            rate_time_constant: TimeDelta::ZERO,
            ..Default::default()
        };
        let mut e = VideoEncoder::new(cfg.clone(), Rate::from_kbps(480), RngStream::from_seed(4));
        e.start(Time::ZERO);
        let a = e.poll_frame(Time::ZERO).unwrap().size;
        let b = e.poll_frame(Time::from_millis(34)).unwrap().size;
        assert_eq!((a, b), (1000, 3000)); // mean 2000 B = 480 kbit/s / 30 fps
        let cfg = EncoderConfig { size_trace_scaled: false, ..cfg };
        let mut e = VideoEncoder::new(cfg, Rate::from_kbps(100), RngStream::from_seed(4));
        e.start(Time::ZERO);
        assert_eq!(e.poll_frame(Time::ZERO).unwrap().size, 1000);
    }

    #[test]
    fn a_key_frame_request_makes_the_next_frame_a_key_frame() {
        let cfg = EncoderConfig { key_frame_interval: None, ..Default::default() };
        let mut enc = VideoEncoder::new(cfg, Rate::from_kbps(1000), RngStream::from_seed(1));
        enc.start(Time::ZERO);
        let t = |ms: i64| Time::ZERO + TimeDelta::from_millis(ms);
        assert!(enc.poll_frame(t(0)).unwrap().key); // the first frame
        assert!(!enc.poll_frame(t(40)).unwrap().key);
        enc.request_key_frame();
        let k = enc.poll_frame(t(80)).unwrap();
        assert!(k.key);
        assert!(!enc.poll_frame(t(120)).unwrap().key);
        assert_eq!(enc.key_frames, 2);
    }

    /// Runs `e` until `end` and returns the picture sizes it went through, checking each new
    /// size starts with a key frame.
    fn sizes_until(e: &mut VideoEncoder, from: Time, end: Time) -> Vec<(u32, u32)> {
        let mut sizes = vec![e.resolution()];
        let mut now = from;
        while now < end {
            if let Some(f) = e.poll_frame(now) {
                if sizes.last() != Some(&e.resolution()) {
                    sizes.push(e.resolution());
                    assert!(f.key);
                }
            }
            now = e.poll_timeout().unwrap();
        }
        sizes
    }

    #[test]
    fn resolution_adaptation_starts_small_at_a_low_rate_and_grows_with_the_rate() {
        let vp8 = |complexity| EncoderConfig {
            width: 640,
            height: 480,
            key_frame_interval: None,
            model: EncoderModel::LibvpxVp8 {
                min_bits_per_pixel: VP8_MIN_BITS_PER_PIXEL,
                complexity,
            },
            bitrate_adjuster: true,
            degradation: Degradation::MaintainFramerate,
            ..Default::default()
        };
        let mut e = VideoEncoder::new(vp8(1.0), Rate::from_kbps(250), RngStream::from_seed(5));
        e.start(Time::ZERO);
        // Under 300 kbit/s a picture over 320x240 is dropped with a step down: 640x480 and
        // 480x360 go, 320x240 is encoded, as a key frame.
        let f = (0..3).find_map(|i| e.poll_frame(Time::from_millis(i * 34))).unwrap();
        assert!(f.key);
        assert_eq!((e.resolution(), e.frames_dropped_for_size), ((320, 240), 2));
        // The stream's maximum at 320x240 is 600 kbit/s, and there the canvas's QP (about 60)
        // never falls to 29: the picture stays small, as Chromium's does (docs/realclient.md).
        e.set_target(Rate::from_kbps(1_500));
        assert_eq!(e.target, Rate::from_kbps(600));
        assert_eq!(
            sizes_until(&mut e, Time::from_millis(100), Time::from_secs(30)),
            vec![(320, 240)]
        );
        // Simpler content at the same rates: QP low, a step up at a check, then the last step
        // back to 640x480 (each a key frame), where the stream may use 1.5 Mbit/s again.
        let mut e = VideoEncoder::new(vp8(0.3), Rate::from_kbps(250), RngStream::from_seed(5));
        e.start(Time::ZERO);
        assert_eq!(
            sizes_until(&mut e, Time::ZERO, Time::from_millis(100)),
            vec![(640, 480), (320, 240)]
        );
        e.set_target(Rate::from_kbps(1_500));
        let sizes = sizes_until(&mut e, Time::from_millis(100), Time::from_secs(30));
        assert_eq!(sizes, vec![(320, 240), (480, 360), (640, 480)]);
        assert_eq!((e.target, e.resolution_changes), (Rate::from_kbps(1_500), 4));
        // Without adaptation (the default) the picture keeps its size and nothing is dropped
        // for it.
        let keep = EncoderConfig { degradation: Degradation::MaintainResolution, ..vp8(1.0) };
        let mut e = VideoEncoder::new(keep, Rate::from_kbps(250), RngStream::from_seed(5));
        e.start(Time::ZERO);
        assert!(e.poll_frame(Time::ZERO).is_some());
        assert_eq!((e.resolution(), e.adapted_resolution()), ((640, 480), None));
    }

    /// The libvpx model at the canvas's 640x480 and the measured floor, no periodic key frames,
    /// no adjuster.
    fn canvas_vp8() -> EncoderConfig {
        EncoderConfig {
            key_frame_interval: None,
            bitrate_adjuster: false,
            ..EncoderConfig::libwebrtc_vp8(30.0)
        }
    }

    /// `outbound-rtp.targetBitrate` in Chromium 156 is the adjuster's output: at VP8's floor
    /// (640x480 at 200 kbit/s overshoots), the stream target falls below what the sender gave,
    /// by what the adjuster took; without the adjuster it is what the sender gave.
    #[test]
    fn the_stream_target_is_what_the_adjuster_hands_the_encoder() {
        let vp8 = |adjuster| EncoderConfig { bitrate_adjuster: adjuster, ..canvas_vp8() };
        for adjuster in [false, true] {
            let mut e =
                VideoEncoder::new(vp8(adjuster), Rate::from_kbps(200), RngStream::from_seed(5));
            e.start(Time::ZERO);
            assert_eq!(e.stream_target(), Some(Rate::from_kbps(200)), "before the first frame");
            let frames =
                (0..300).filter(|&i| e.poll_frame(Time::from_micros(i * 33_334)).is_some()).count();
            assert!(frames > 0);
            let t = e.stream_target().unwrap();
            if adjuster {
                assert!(t < Rate::from_kbps(190), "{t:?}");
                assert_eq!(Some(t), e.handed);
            } else {
                assert_eq!(t, Rate::from_kbps(200));
            }
        }
    }

    /// Far under the floor every frame the libvpx model makes is at it: all one size without
    /// `floor_jitter`, spread by about it with (a floor frame of Chromium's canvas varies by a
    /// robust 5.7 %, docs/algorithms/encoder.md).
    #[test]
    fn floor_frames_vary_by_the_floor_jitter() {
        let spread = |jitter: f64| {
            let cfg = EncoderConfig { floor_jitter: jitter, ..canvas_vp8() };
            let mut e = VideoEncoder::new(cfg, Rate::from_kbps(60), RngStream::from_seed(5));
            e.start(Time::ZERO);
            let sizes: Vec<f64> = (0..3000)
                .filter_map(|i| e.poll_frame(Time::from_micros(i * 33_334)))
                .filter(|f| !f.key)
                .map(|f| f64::from(f.size))
                .collect();
            assert!(sizes.len() > 100, "{}", sizes.len());
            let mean = sizes.iter().sum::<f64>() / sizes.len() as f64;
            let var = sizes.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / sizes.len() as f64;
            var.sqrt() / mean
        };
        assert!(spread(0.0) < 1e-3);
        let s = spread(0.057);
        assert!((0.045..0.07).contains(&s), "{s}");
    }

    #[test]
    fn key_frames_are_larger() {
        let mut e = VideoEncoder::new(
            EncoderConfig::default(),
            Rate::from_kbps(600),
            RngStream::from_seed(2),
        );
        e.start(Time::ZERO);
        let f0 = e.poll_frame(Time::ZERO).unwrap();
        let f1 = e.poll_frame(Time::from_millis(34)).unwrap();
        assert!(f0.key && !f1.key);
        assert!(f0.size as f64 > 2.0 * f1.size as f64);
    }
}
