//! libwebrtc's encoder bitrate adjuster: the rate the encoder is given is the allocation
//! divided by how much the encoder has been overshooting it.
//!
//! Follows `video/encoder_overshoot_detector.cc` and `video/encoder_bitrate_adjuster.cc`
//! (WebRTC, BSD licence; read at the 2023-2024 revisions, single spatial and temporal layer):
//!
//! - The overshoot detector keeps a leaky bucket of the encoded bits, drained at the target
//!   rate. Each frame's *network utilization factor* is 1 + (the part of the bucket's
//!   earlier content that the frame pushes past one ideal frame) / (the ideal frame size =
//!   target / input frame rate); the first frame of a window counts max(1, size / ideal).
//!   The factor is the mean over the frames of the last `WINDOW` (3 s). Since the ideal frame
//!   is measured at the *input* frame rate, an encoder that drops frames and makes the ones it
//!   keeps larger reads as overshooting by far more than its average rate does.
//! - The adjuster trusts the detector after `MIN_FRAMES` (30) frames since the layer layout
//!   changed (before: 1.2, `kDefaultUtilizationFactor`), clamps the factor to 1..=2, never
//!   lets it bring the rate under the codec's minimum bitrate, and gives the encoder
//!   allocation / factor. The detector is told the adjusted rate, and libwebrtc re-applies
//!   the adjustment on every input frame (`VideoStreamEncoder::MaybeEncodeVideoFrame`).
//! - Headroom use (`BitrateAdjusterCanUseNetworkHeadroom`, on by default in current libwebrtc:
//!   `VideoRateControlConfig::adjuster_use_headroom`) lets a layer that overshoots use the link
//!   allocation above its encoder target, `bandwidth_allocation − bitrate`. Not modelled: that
//!   is zero unless the codec's maximum bitrate caps the encoder target, since
//!   `VideoSendStreamImpl::OnBitrateUpdated` passes a link allocation of max(encoder target,
//!   payload rate − protection rate), and the payload rate is the uncapped encoder target
//!   (Chromium 156's log on a 4g call shows the two equal, docs/realclient.md).
//! - libwebrtc's own frame dropper (`FrameDropper`, `kMediaOptimization` drops) is off for
//!   libvpx VP8, whose rate controller is trusted by default (`trust_vp8`), so it is not
//!   modelled either: VP8's drops are libvpx's (`libvpx_rate.rs`).
//!
//! Chromium turns it off with the field trial `WebRTC-VideoRateControl/bitrate_adjuster:false/`;
//! here `media.bitrate_adjuster = false` (docs/scenario.md).

use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

/// Sliding window of the utilization factors (`kWindowSize`).
pub const WINDOW: TimeDelta = TimeDelta::from_millis(3_000);
/// Frames since a layout change before the detector is trusted (`kMinFramesSinceLayoutChange`).
pub const MIN_FRAMES: u64 = 30;
/// The factor used until then (`kDefaultUtilizationFactor`): 20 % overshoot assumed.
pub const DEFAULT_FACTOR: f64 = 1.2;
/// The highest factor the adjuster applies.
pub const MAX_FACTOR: f64 = 2.0;

/// `EncoderOvershootDetector`'s network-rate half (the media-rate half only matters when
/// headroom may be used).
#[derive(Clone, Debug, Default)]
pub struct OvershootDetector {
    target_bps: f64,
    fps: f64,
    last_update: Option<Time>,
    buffer_bits: f64,
    factors: VecDeque<(Time, f64)>,
    sum: f64,
}

impl OvershootDetector {
    pub fn set_target(&mut self, now: Time, target: Rate, fps: f64) {
        if self.target_bps > 0.0 {
            self.leak(now);
        } else if target.as_bps() > 0 {
            // The first rate after none: start afresh.
            self.last_update = Some(now);
            self.factors.clear();
            self.sum = 0.0;
            self.buffer_bits = 0.0;
        }
        self.target_bps = target.as_bps() as f64;
        self.fps = fps;
    }

    fn ideal_frame_bits(&self) -> f64 {
        if self.fps <= 0.0 || self.target_bps <= 0.0 {
            return 0.0;
        }
        ((self.target_bps + self.fps / 2.0) / self.fps).floor()
    }

    fn leak(&mut self, now: Time) {
        if let Some(last) = self.last_update {
            if self.target_bps > 0.0 {
                let ms = (now - last).as_millis_f64().floor();
                let leaked = (self.target_bps * ms / 1000.0).floor();
                self.buffer_bits = (self.buffer_bits - leaked).max(0.0);
            }
        }
        self.last_update = Some(now);
    }

    pub fn on_frame(&mut self, now: Time, bytes: u32) {
        self.leak(now);
        let ideal = self.ideal_frame_bits();
        if ideal <= 0.0 {
            return;
        }
        let bits = f64::from(bytes) * 8.0;
        let sum = bits + self.buffer_bits;
        let overshoot = if sum > ideal { self.buffer_bits.min(sum - ideal) } else { 0.0 };
        let factor =
            if self.factors.is_empty() { (bits / ideal).max(1.0) } else { 1.0 + overshoot / ideal };
        self.buffer_bits += bits - overshoot;
        self.sum += factor;
        self.factors.push_back((now, factor));
    }

    /// The mean factor over the window, or None without a frame in it.
    pub fn factor(&mut self, now: Time) -> Option<f64> {
        while let Some(&(t, f)) = self.factors.front() {
            if now - t <= WINDOW {
                break;
            }
            self.sum = (self.sum - f).max(0.0);
            self.factors.pop_front();
        }
        (!self.factors.is_empty()).then(|| self.sum / self.factors.len() as f64)
    }
}

/// `EncoderBitrateAdjuster` for one layer.
#[derive(Clone, Debug)]
pub struct BitrateAdjuster {
    detector: OvershootDetector,
    frames: u64,
    min_bitrate: Rate,
    /// The factor last applied (for the logs and tests).
    pub last_factor: f64,
}

impl BitrateAdjuster {
    pub fn new(min_bitrate: Rate) -> Self {
        BitrateAdjuster {
            detector: OvershootDetector::default(),
            frames: 0,
            min_bitrate,
            last_factor: DEFAULT_FACTOR,
        }
    }

    /// The rate to give the encoder for `allocation` at the input frame rate `fps`.
    pub fn adjust(&mut self, now: Time, allocation: Rate, fps: f64) -> Rate {
        let target = allocation.as_bps() as f64;
        let mut factor = if self.frames < MIN_FRAMES {
            DEFAULT_FACTOR
        } else {
            self.detector.factor(now).unwrap_or(DEFAULT_FACTOR)
        };
        factor = factor.clamp(1.0, MAX_FACTOR);
        let min = self.min_bitrate.as_bps() as f64;
        if min > 0.0 && target > min {
            factor = factor.min(target / min);
        }
        let mut adjusted = ((target / factor + 0.5).floor()).min(target);
        if target > 0.0 && adjusted < min {
            adjusted = min;
        }
        self.last_factor = factor;
        let adjusted = Rate::from_bps(adjusted as u64);
        self.detector.set_target(now, adjusted, fps);
        adjusted
    }

    pub fn on_frame(&mut self, now: Time, bytes: u32) {
        self.frames += 1;
        self.detector.on_frame(now, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: i64) -> Time {
        Time::ZERO + TimeDelta::from_millis(x)
    }

    #[test]
    fn an_encoder_that_meets_its_target_is_left_alone() {
        let mut a = BitrateAdjuster::new(Rate::from_kbps(30));
        let alloc = Rate::from_kbps(600);
        for i in 0..120 {
            let now = ms(i * 33);
            let given = a.adjust(now, alloc, 30.0);
            a.on_frame(now, (given.as_bps() / 8 / 30) as u32);
        }
        assert!((a.last_factor - 1.0).abs() < 0.05, "{}", a.last_factor);
    }

    #[test]
    fn the_default_factor_holds_for_the_first_thirty_frames() {
        let mut a = BitrateAdjuster::new(Rate::from_kbps(30));
        let given = a.adjust(ms(0), Rate::from_kbps(600), 30.0);
        assert_eq!(given.as_bps(), 500_000);
    }

    #[test]
    fn dropping_frames_and_sending_larger_ones_reads_as_overshoot() {
        // Every sixth input frame is sent, six ideal frames large plus 15 %: the average rate
        // is 15 % over the rate given, the factor far more (the ideal frame is an input frame's).
        let mut a = BitrateAdjuster::new(Rate::from_kbps(30));
        let alloc = Rate::from_kbps(150);
        let mut given = alloc;
        for i in 0..600 {
            let now = ms(i * 37);
            given = a.adjust(now, alloc, 27.0);
            if i % 6 == 0 {
                a.on_frame(now, (given.as_bps() as f64 / 8.0 / 27.0 * 6.0 * 1.15) as u32);
            }
        }
        // 1 + 0.15 × 6 input frames per sent frame = 1.9, where the average rate says 1.15.
        assert!((a.last_factor - 1.9).abs() < 0.03, "{}", a.last_factor);
        let expect = 150_000.0 / a.last_factor;
        assert!((given.as_bps() as f64 - expect).abs() < 2.0, "{given:?}");
    }

    #[test]
    fn the_factor_never_takes_the_rate_under_the_codec_minimum() {
        let mut a = BitrateAdjuster::new(Rate::from_kbps(30));
        let alloc = Rate::from_kbps(40);
        let mut given = alloc;
        for i in 0..300 {
            let now = ms(i * 33);
            given = a.adjust(now, alloc, 30.0);
            a.on_frame(now, 4_000);
        }
        assert_eq!(given.as_bps(), 30_000);
    }
}
