//! libwebrtc's `QualityScaler`: from the encoder's QP and its dropped frames, when to ask for a
//! smaller picture (QP high or too many drops) or a larger one (QP low).
//!
//! Follows WebRTC `modules/video_coding/utility/quality_scaler.cc` with the defaults of
//! `rtc_base/experiments/quality_scaling_experiment.cc` (the `WebRTC-Video-QualityScaling`
//! experiment, on unless disabled: `"Enabled-29,95,149,205,24,37,26,36,0.9995,0.9999,1"`):
//!
//! - VP8 thresholds: QP low 29, high 95 (QP on libvpx's 0-127 scale, as `getStats` reports it).
//! - Two exponential smoothers of the QP, per millisecond: 0.9995 for the high check, 0.9999
//!   for the low one (`rtc::ExpFilter` with the time since the last sample as exponent).
//! - Frame drops: a moving average over the last 150 frames of 100 (dropped: by the encoder's
//!   rate control or by the sender's media optimisations, e.g. congestion-window pushback —
//!   `use_all_drop_reasons` is on) or 0 (encoded).
//! - A check every 2 s (`kMeasureMs`) until the first downscale ("fast ramp-up"), every 1 s while
//!   fewer than 60 frames (`kMinFramesNeededToScale`) were seen, otherwise every 5 s (2 s × 2.5,
//!   `kSamplePeriodScaleFactor`). A check: too few frames → nothing; drops ≥ 60 % → high; smoothed
//!   QP > high threshold → high; ≤ low threshold → low. Either verdict clears every sample.
//!
//! Sans-IO: the caller runs [`QualityScaler::check`] at [`QualityScaler::next_check`].

use rtclab_core::{Time, TimeDelta};

/// VP8's QP thresholds (low, high) from the experiment's default settings.
pub const VP8_QP_THRESHOLDS: (u32, u32) = (29, 95);
/// `kMeasureMs`: the check period until the first downscale.
pub const MEASURE: TimeDelta = TimeDelta::from_millis(2_000);
/// `kSamplePeriodScaleFactor`: the period after the first downscale is 2.5 × `MEASURE`.
pub const SAMPLE_PERIOD_SCALE_FACTOR: f64 = 2.5;
/// `kFramedropPercentThreshold`.
pub const FRAMEDROP_PERCENT_THRESHOLD: u32 = 60;
/// `kMinFramesNeededToScale`.
pub const MIN_FRAMES_NEEDED: usize = 60;
/// The moving averages' window, frames (5 s at 30 fps).
pub const WINDOW_FRAMES: usize = 150;
/// The QP smoothers' per-millisecond factors (high check, low check).
pub const ALPHA_HIGH: f64 = 0.9995;
pub const ALPHA_LOW: f64 = 0.9999;

/// What a check decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Not enough frames yet, or QP between the thresholds.
    Keep,
    /// QP high or too many drops: a smaller picture.
    Down,
    /// QP low: a larger picture.
    Up,
}

/// `rtc::ExpFilter` as the QP smoother uses it.
#[derive(Clone, Debug)]
struct Smoother {
    alpha: f64,
    value: Option<f64>,
    last_ms: i64,
}

impl Smoother {
    fn new(alpha: f64) -> Self {
        Smoother { alpha, value: None, last_ms: 0 }
    }
    fn add(&mut self, sample: f64, now_ms: i64) {
        let exp = (now_ms - self.last_ms) as f64;
        self.last_ms = now_ms;
        self.value = Some(match self.value {
            None => sample,
            Some(v) => {
                let a = self.alpha.powf(exp);
                a * v + (1.0 - a) * sample
            }
        });
    }
    /// The smoothed QP, truncated to a whole number as `QpSmoother::GetAvg`.
    fn average(&self) -> Option<i64> {
        self.value.map(|v| v as i64)
    }
    /// Forgets the value; the time of the last sample stays (as `ExpFilter::Reset`).
    fn reset(&mut self) {
        self.value = None;
    }
}

/// A moving average over the last `WINDOW_FRAMES` samples of 0 or 100.
#[derive(Clone, Debug, Default)]
struct DropAverage {
    samples: std::collections::VecDeque<u32>,
    sum: u32,
}

impl DropAverage {
    fn add(&mut self, dropped: bool) {
        let s = if dropped { 100 } else { 0 };
        self.samples.push_back(s);
        self.sum += s;
        if self.samples.len() > WINDOW_FRAMES {
            self.sum -= self.samples.pop_front().unwrap_or(0);
        }
    }
    fn len(&self) -> usize {
        self.samples.len()
    }
    /// Rounded down, as `MovingAverage::GetAverageRoundedDown`.
    fn percent(&self) -> Option<u32> {
        (!self.samples.is_empty()).then(|| self.sum / self.samples.len() as u32)
    }
    fn reset(&mut self) {
        self.samples.clear();
        self.sum = 0;
    }
}

#[derive(Clone, Debug)]
pub struct QualityScaler {
    thresholds: (u32, u32),
    high: Smoother,
    low: Smoother,
    drops: DropAverage,
    next_check: Time,
    fast_rampup: bool,
    observed_enough: bool,
    /// Checks that asked for a smaller / larger picture.
    pub downs: u64,
    pub ups: u64,
}

impl QualityScaler {
    /// A scaler started at `now` (its first check `MEASURE` later).
    pub fn new(now: Time, thresholds: (u32, u32)) -> Self {
        QualityScaler {
            thresholds,
            high: Smoother::new(ALPHA_HIGH),
            low: Smoother::new(ALPHA_LOW),
            drops: DropAverage::default(),
            next_check: now + MEASURE,
            fast_rampup: true,
            observed_enough: false,
            downs: 0,
            ups: 0,
        }
    }

    /// An encoded frame and its QP (`ReportQp`).
    pub fn on_encoded(&mut self, now: Time, qp: u32) {
        self.drops.add(false);
        let ms = now.as_millis() as i64;
        self.high.add(f64::from(qp), ms);
        self.low.add(f64::from(qp), ms);
    }

    /// A frame dropped by the encoder or the sender's media optimisations.
    pub fn on_dropped(&mut self) {
        self.drops.add(true);
    }

    /// When the next check is due.
    pub fn next_check(&self) -> Time {
        self.next_check
    }

    /// Runs the check due at `next_check` (`CheckQp`) and schedules the next one.
    pub fn check(&mut self) -> Verdict {
        let at = self.next_check;
        let verdict = self.verdict();
        match verdict {
            Verdict::Down => {
                self.fast_rampup = false;
                self.downs += 1;
                self.clear();
            }
            Verdict::Up => {
                self.ups += 1;
                self.clear();
            }
            Verdict::Keep => {}
        }
        let period = if self.fast_rampup {
            MEASURE
        } else if !self.observed_enough {
            MEASURE.mul_f64(0.5)
        } else {
            MEASURE.mul_f64(SAMPLE_PERIOD_SCALE_FACTOR)
        };
        self.next_check = at + period;
        verdict
    }

    fn verdict(&mut self) -> Verdict {
        if self.drops.len() < MIN_FRAMES_NEEDED {
            self.observed_enough = false;
            return Verdict::Keep;
        }
        self.observed_enough = true;
        if self.drops.percent().is_some_and(|p| p >= FRAMEDROP_PERCENT_THRESHOLD) {
            return Verdict::Down;
        }
        match (self.high.average(), self.low.average()) {
            (Some(h), _) if h > i64::from(self.thresholds.1) => Verdict::Down,
            (Some(_), Some(l)) if l <= i64::from(self.thresholds.0) => Verdict::Up,
            _ => Verdict::Keep,
        }
    }

    fn clear(&mut self) {
        self.drops.reset();
        self.high.reset();
        self.low.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(t: i64) -> Time {
        Time::from_millis(t as u64)
    }

    /// Feeds 30 fps of `qp` (or drops, one in `drop_every`) from `from` until the scaler's next
    /// check, runs it, and returns the verdict and when it ran.
    fn until_check(
        q: &mut QualityScaler,
        from: &mut i64,
        qp: u32,
        drop_every: u32,
    ) -> (Verdict, i64) {
        let at = q.next_check();
        let mut n = 0;
        while ms(*from) < at {
            n += 1;
            if drop_every > 0 && n % drop_every == 0 {
                q.on_dropped();
            } else {
                q.on_encoded(ms(*from), qp);
            }
            *from += 33;
        }
        (q.check(), at.as_millis() as i64)
    }

    #[test]
    fn waits_for_sixty_frames_then_checks_every_two_seconds_until_a_downscale() {
        let mut q = QualityScaler::new(Time::ZERO, VP8_QP_THRESHOLDS);
        let mut t = 0;
        // 2 s of 30 fps is 61 frames: enough at the first check; QP 60 is between the thresholds.
        assert_eq!(until_check(&mut q, &mut t, 60, 0), (Verdict::Keep, 2_000));
        assert_eq!(until_check(&mut q, &mut t, 60, 0), (Verdict::Keep, 4_000));
        // QP above 95 for long enough that the 2 s smoother passes 95.
        let mut v = Verdict::Keep;
        let mut when = 0;
        while v == Verdict::Keep {
            (v, when) = until_check(&mut q, &mut t, 110, 0);
        }
        assert_eq!(v, Verdict::Down);
        // After the first downscale (samples cleared, this check had seen enough): every 5 s.
        assert_eq!(until_check(&mut q, &mut t, 60, 0), (Verdict::Keep, when + 5_000));
        assert_eq!(q.downs, 1);
    }

    #[test]
    fn too_many_drops_ask_for_a_smaller_picture_whatever_the_qp() {
        let mut q = QualityScaler::new(Time::ZERO, VP8_QP_THRESHOLDS);
        let mut t = 0;
        // Every frame dropped from the start (drop_every 1): down at the first check.
        assert_eq!(until_check(&mut q, &mut t, 10, 1), (Verdict::Down, 2_000));
        let mut q = QualityScaler::new(Time::ZERO, VP8_QP_THRESHOLDS);
        let mut t = 0;
        // One in two dropped (50 %) with a middling QP: no verdict.
        for _ in 0..5 {
            assert_eq!(until_check(&mut q, &mut t, 60, 2).0, Verdict::Keep);
        }
    }

    #[test]
    fn a_low_qp_asks_for_a_larger_picture_once_the_slow_smoother_gets_there() {
        let mut q = QualityScaler::new(Time::ZERO, VP8_QP_THRESHOLDS);
        let mut t = 0;
        // The smoothers start at the first sample: QP 20 throughout is low at the first check.
        assert_eq!(until_check(&mut q, &mut t, 20, 0), (Verdict::Up, 2_000));
        // From 60 to 20: the 10 s smoother needs several seconds to fall under 29.
        let mut q = QualityScaler::new(Time::ZERO, VP8_QP_THRESHOLDS);
        let mut t = 0;
        until_check(&mut q, &mut t, 60, 0);
        let mut checks = 0;
        while until_check(&mut q, &mut t, 20, 0).0 != Verdict::Up {
            checks += 1;
        }
        assert!((2..=8).contains(&checks), "{checks}");
        assert_eq!(q.ups, 1);
    }
}
