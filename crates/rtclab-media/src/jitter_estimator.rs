//! WebRTC's receive-side jitter estimate and the adaptive playout delay built on it
//! (libwebrtc `modules/video_coding/timing/`: `JitterEstimator`,
//! `FrameDelayVariationKalmanFilter`, `VCMTiming`), our own code after reading theirs.
//!
//! Each complete frame gives a *frame delay variation* d = (arrival − previous arrival) −
//! (capture − previous capture). A two-state Kalman filter models d = θ₀·ΔL + θ₁ + noise (ΔL:
//! frame size minus the previous one; θ₀ ≥ 1e-6 ms/byte the inverse of the channel rate, θ₁ a
//! queueing offset), with observation noise (300·e^(−|ΔL|/L_max) + 1)·σ. The residual's
//! variance σ² is an EWMA whose weight α = (n−1)/n ramps up to 399/400 and is scaled by the
//! frame rate (α^(30/fps)). Samples are clamped to ±3.5σ; residuals beyond 15σ count as 15σ
//! for the noise and do not update the filter (unless the frame is a size outlier beyond
//! 3 standard deviations); frames shrinking by more than a quarter of the largest frame
//! (congestion) update neither the filter nor the noise. Frame size average and variance use
//! φ = 0.97, the largest frame ψ = 0.9999.
//!
//! Estimate = θ₀·(L_max − L_avg) + max(2.33·σ − 30 ms, 1 ms) + 10 ms (operating system
//! jitter), at least the value after the 30-frame start-up, scaled down below 10 fps and zero
//! below 5 fps. The playout delay follows the estimate by at most 100 ms per second of media
//! time (`VCMTiming::UpdateCurrentDelay`), above an optional minimum.
//!
//! Frames delayed by retransmission (a packet resent, or a wait for an earlier frame's
//! resend) update neither the estimate nor the arrival mapping, as in libwebrtc's frame
//! buffer. Where we differ: libwebrtc maps capture timestamps to local time with a drift-tracking
//! least-squares fit (`TimestampExtrapolator`); with one clock in the engine the drift is 1,
//! so we keep its offset only, as the mean frame delay of the last 300 frames (the fit
//! averages all frames between its alarms). The estimate's RTT term for streams that saw
//! three NACKed frames in 60 s is left out (the receiver has no RTT in our RTCP subset), as is
//! the decode-time estimate (it cancels: a frame is released `jitter delay` after its
//! expected arrival, and the decoder model then takes what it takes).

use crate::playout::{AssembledFrame, PlayoutPolicy};
use rtclab_core::{Time, TimeDelta};

const PHI: f64 = 0.97;
const PSI: f64 = 0.9999;
const STARTUP_FRAMES: u32 = 30;
const FRAMES_UNTIL_SIZE_FILTERING: u32 = 5;
const INITIAL_FRAME_SIZE: f64 = 500.0;
const CLAMP_SIGMAS: f64 = 3.5;
const OUTLIER_SIGMAS: f64 = 15.0;
const SIZE_OUTLIER_SIGMAS: f64 = 3.0;
const CONGESTION_REJECTION: f64 = -0.25;
const ALPHA_COUNT_MAX: u32 = 400;
const NOISE_STD_DEVS: f64 = 2.33;
const NOISE_STD_DEV_OFFSET_MS: f64 = 30.0;
const MIN_ESTIMATE_MS: f64 = 1.0;
const MAX_ESTIMATE_MS: f64 = 10_000.0;
const OS_JITTER_MS: f64 = 10.0;
const MAX_BANDWIDTH: f64 = 1e-6; // the floor of θ₀, ms per byte
/// The playout delay moves by at most this much per second of media time.
const MAX_DELAY_CHANGE_MS_PER_S: f64 = 100.0;
/// Frames the capture → arrival offset is averaged over.
const OFFSET_FRAMES: f64 = 300.0;

/// θ = [ms per byte, ms] and its covariance.
#[derive(Clone, Debug)]
struct DelayKalman {
    theta: [f64; 2],
    cov: [[f64; 2]; 2],
}

impl DelayKalman {
    fn new() -> Self {
        DelayKalman { theta: [1.0 / (512e3 / 8.0), 0.0], cov: [[1e-4, 0.0], [0.0, 1e2]] }
    }
    fn total(&self, dl: f64) -> f64 {
        self.theta[0] * dl + self.theta[1]
    }
    fn update(&mut self, d_ms: f64, dl: f64, max_size: f64, var_noise: f64) {
        if max_size < 1.0 || var_noise <= 0.0 {
            return;
        }
        self.cov[0][0] += 2.5e-10;
        self.cov[1][1] += 1e-10;
        let innovation = d_ms - self.total(dl);
        let ph = [self.cov[0][0] * dl + self.cov[0][1], self.cov[1][0] * dl + self.cov[1][1]];
        let r = ((300.0 * (-dl.abs() / max_size).exp() + 1.0) * var_noise.sqrt()).max(1.0);
        let s = dl * ph[0] + ph[1] + r;
        if s.abs() < 1e-9 {
            return;
        }
        let k = [ph[0] / s, ph[1] / s];
        self.theta[0] = (self.theta[0] + k[0] * innovation).max(MAX_BANDWIDTH);
        self.theta[1] += k[1] * innovation;
        let (t00, t01) = (self.cov[0][0], self.cov[0][1]);
        self.cov[0][0] = (1.0 - k[0] * dl) * t00 - k[0] * self.cov[1][0];
        self.cov[0][1] = (1.0 - k[0] * dl) * t01 - k[0] * self.cov[1][1];
        self.cov[1][0] = self.cov[1][0] * (1.0 - k[1]) - k[1] * dl * t00;
        self.cov[1][1] = self.cov[1][1] * (1.0 - k[1]) - k[1] * dl * t01;
    }
}

/// The jitter estimate (ms) from complete frames.
#[derive(Clone, Debug)]
pub struct JitterEstimator {
    kalman: DelayKalman,
    avg_size: f64,
    var_size: f64,
    max_size: f64,
    startup_sizes: (f64, u32),
    prev_size: Option<f64>,
    avg_noise: f64,
    var_noise: f64,
    alpha_count: u32,
    startup: u32,
    filtered: f64,
    prev_estimate: Option<f64>,
    /// Mean frame interval (ms) over the last 30 updates, for the frame rate.
    intervals: std::collections::VecDeque<f64>,
    last_update: Option<Time>,
}

impl Default for JitterEstimator {
    fn default() -> Self {
        JitterEstimator {
            kalman: DelayKalman::new(),
            avg_size: INITIAL_FRAME_SIZE,
            var_size: 100.0,
            max_size: INITIAL_FRAME_SIZE,
            startup_sizes: (0.0, 0),
            prev_size: None,
            avg_noise: 0.0,
            var_noise: 4.0,
            alpha_count: 1,
            startup: 0,
            filtered: 0.0,
            prev_estimate: None,
            intervals: std::collections::VecDeque::new(),
            last_update: None,
        }
    }
}

impl JitterEstimator {
    /// A complete frame: its delay variation against the previous one (ms) and its size.
    pub fn update(&mut self, now: Time, d_ms: f64, size: f64) {
        if size <= 0.0 {
            return;
        }
        let dl = size - self.prev_size.unwrap_or(0.0);
        if self.startup_sizes.1 < FRAMES_UNTIL_SIZE_FILTERING {
            self.startup_sizes.0 += size;
            self.startup_sizes.1 += 1;
        } else if self.startup_sizes.1 == FRAMES_UNTIL_SIZE_FILTERING {
            self.avg_size = self.startup_sizes.0 / self.startup_sizes.1 as f64;
            self.startup_sizes.1 += 1;
        }
        let avg = PHI * self.avg_size + (1.0 - PHI) * size;
        if size < self.avg_size + 2.0 * self.var_size.sqrt() {
            self.avg_size = avg; // large frames (key frames) do not move the average
        }
        let delta = size - avg;
        self.var_size = (PHI * self.var_size + (1.0 - PHI) * delta * delta).max(1.0);
        self.max_size = (PSI * self.max_size).max(size);
        if self.prev_size.replace(size).is_none() {
            return;
        }
        let clamp = CLAMP_SIGMAS * self.var_noise.sqrt() + 0.5;
        let d = d_ms.clamp(-clamp, clamp);
        let deviation = d - self.kalman.total(dl);
        let sigma = self.var_noise.sqrt();
        let not_outlier = deviation.abs() < OUTLIER_SIGMAS * sigma;
        let size_outlier = size > self.avg_size + SIZE_OUTLIER_SIGMAS * self.var_size.sqrt();
        if not_outlier || size_outlier {
            if dl > CONGESTION_REJECTION * self.max_size {
                self.random_jitter(now, deviation);
                self.kalman.update(d, dl, self.max_size, self.var_noise);
            }
        } else {
            self.random_jitter(now, deviation.signum() * OUTLIER_SIGMAS * sigma);
        }
        if self.startup >= STARTUP_FRAMES {
            self.filtered = self.calculate();
        } else {
            self.startup += 1;
        }
    }

    fn fps(&self) -> f64 {
        if self.intervals.is_empty() {
            return 0.0;
        }
        let mean = self.intervals.iter().sum::<f64>() / self.intervals.len() as f64;
        if mean <= 0.0 {
            0.0
        } else {
            (1000.0 / mean).min(200.0)
        }
    }

    fn random_jitter(&mut self, now: Time, x: f64) {
        if let Some(t) = self.last_update {
            self.intervals.push_back((now - t).as_millis_f64());
            if self.intervals.len() > 30 {
                self.intervals.pop_front();
            }
        }
        self.last_update = Some(now);
        let mut alpha = (self.alpha_count - 1) as f64 / self.alpha_count as f64;
        self.alpha_count = (self.alpha_count + 1).min(ALPHA_COUNT_MAX);
        let fps = self.fps();
        if fps > 0.0 {
            let mut scale = 30.0 / fps;
            if self.alpha_count < STARTUP_FRAMES {
                let n = self.alpha_count as f64;
                scale = (n * scale + (STARTUP_FRAMES as f64 - n)) / STARTUP_FRAMES as f64;
            }
            alpha = alpha.powf(scale);
        }
        let avg = alpha * self.avg_noise + (1.0 - alpha) * x;
        let var =
            alpha * self.var_noise + (1.0 - alpha) * (x - self.avg_noise) * (x - self.avg_noise);
        self.avg_noise = avg;
        self.var_noise = var.max(1.0);
    }

    fn calculate(&mut self) -> f64 {
        let noise = (NOISE_STD_DEVS * self.var_noise.sqrt() - NOISE_STD_DEV_OFFSET_MS).max(1.0);
        let mut est = self.kalman.theta[0] * (self.max_size - self.avg_size) + noise;
        if est < MIN_ESTIMATE_MS {
            est = self.prev_estimate.unwrap_or(MIN_ESTIMATE_MS);
        } else if est > MAX_ESTIMATE_MS {
            est = MAX_ESTIMATE_MS;
        }
        self.prev_estimate = Some(est);
        est
    }

    /// The jitter delay (ms) the playout should hold frames for.
    pub fn estimate_ms(&mut self) -> f64 {
        let jitter = (self.calculate() + OS_JITTER_MS).max(self.filtered);
        let fps = self.fps();
        if fps == 0.0 {
            jitter.max(0.0)
        } else if fps < 5.0 {
            0.0
        } else if fps < 10.0 {
            (fps - 5.0) / 5.0 * jitter
        } else {
            jitter.max(0.0)
        }
    }
}

/// The adaptive playout policy: a frame leaves the jitter buffer at its expected arrival
/// (capture + the mean frame delay) + the current jitter delay, which follows the estimate at
/// ≤ 100 ms per second of media time, and never before it arrived.
#[derive(Clone, Debug)]
pub struct AdaptivePlayout {
    estimator: JitterEstimator,
    min_delay: TimeDelta,
    /// The previous complete frame's capture and arrival.
    prev: Option<(Time, Time)>,
    offset_ms: Option<f64>,
    current_ms: Option<f64>,
    /// Capture time of the frame the current delay last moved for.
    last_capture: Option<Time>,
}

impl AdaptivePlayout {
    pub fn new(min_delay: TimeDelta) -> Self {
        AdaptivePlayout {
            estimator: JitterEstimator::default(),
            min_delay,
            prev: None,
            offset_ms: None,
            current_ms: None,
            last_capture: None,
        }
    }
    /// The current jitter delay (ms), once a frame has been seen.
    pub fn current_delay_ms(&self) -> Option<f64> {
        self.current_ms
    }
}

impl PlayoutPolicy for AdaptivePlayout {
    fn release_at(&mut self, now: Time, f: &AssembledFrame) -> Time {
        let delay_ms = (now - f.capture).as_millis_f64();
        if f.delayed_by_retransmission() {
            // As libwebrtc's frame buffer: no estimate update from a resent frame; it keeps
            // the schedule of the others (and goes at once when that has passed).
            let off = self.offset_ms.unwrap_or(delay_ms);
            return release(f, off, self.current_ms.unwrap_or(0.0), now);
        }
        // Frames reach the jitter buffer in frame order (the frame buffer releases them so),
        // so the variation is taken against the previous one.
        if let Some((pc, pa)) = self.prev {
            if f.capture > pc {
                let d = (now - pa).as_millis_f64() - (f.capture - pc).as_millis_f64();
                self.estimator.update(now, d, f.bytes as f64);
            }
        } else {
            self.estimator.update(now, 0.0, f.bytes as f64);
        }
        self.prev = Some((f.capture, now));
        let off = match self.offset_ms {
            None => delay_ms,
            Some(o) => o + (delay_ms - o) / OFFSET_FRAMES,
        };
        self.offset_ms = Some(off);
        let target = self.estimator.estimate_ms().max(self.min_delay.as_millis_f64());
        let cur = match (self.current_ms, self.last_capture) {
            (Some(c), Some(lc)) if f.capture > lc => {
                let max = MAX_DELAY_CHANGE_MS_PER_S * (f.capture - lc).as_secs_f64();
                c + (target - c).clamp(-max, max)
            }
            (Some(c), _) => c,
            (None, _) => target,
        };
        self.current_ms = Some(cur);
        self.last_capture = Some(f.capture);
        release(f, off, cur, now)
    }
}

/// Capture + the expected frame delay (`off_ms`) + the jitter delay (`cur_ms`), never before
/// `now` (the frame is there already).
fn release(f: &AssembledFrame, off_ms: f64, cur_ms: f64, now: Time) -> Time {
    (f.capture + TimeDelta::from_secs_f64((off_ms + cur_ms).max(0.0) / 1e3)).max(now)
}

/// Built here, beside the adaptive policy, so that `playout.rs` (the pipeline and the static
/// policies) does not import it.
impl crate::playout::Playout {
    pub fn build(self) -> Box<dyn PlayoutPolicy> {
        use crate::playout::{Playout, StaticPlayout};
        match self {
            Playout::Immediate => Box::new(StaticPlayout(None)),
            Playout::Fixed(d) => Box::new(StaticPlayout(Some(d))),
            Playout::Adaptive { min } => Box::new(AdaptivePlayout::new(min)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::RngStream;

    fn run(jitter_ms: f64, seed: u64) -> f64 {
        let mut p = AdaptivePlayout::new(TimeDelta::ZERO);
        let mut rng = RngStream::from_seed(seed);
        let mut last_arrival = Time::ZERO;
        for id in 0..600u64 {
            let capture = Time::from_millis(id * 33);
            // 40 ms path + uniform jitter, in order.
            let arrival = (capture
                + TimeDelta::from_secs_f64((40.0 + rng.next_f64() * jitter_ms) / 1e3))
            .max(last_arrival);
            last_arrival = arrival;
            let f = AssembledFrame {
                bytes: 5_000,
                ..AssembledFrame::at(id, capture, arrival, id == 0)
            };
            assert!(p.release_at(arrival, &f) >= arrival);
        }
        p.current_delay_ms().unwrap()
    }

    #[test]
    fn the_delay_grows_with_the_network_jitter() {
        let smooth = run(2.0, 1);
        let rough = run(60.0, 1);
        // A smooth path needs only the floor (1 ms noise threshold + 10 ms OS jitter).
        assert!((10.0..13.0).contains(&smooth), "{smooth}");
        // 2.33 σ − 30 ms for a U[0, 60] jitter (σ of differences ≈ 24.5 ms) ≈ 27 ms + 10 ms.
        assert!(rough > smooth + 15.0, "{rough} vs {smooth}");
        assert!(rough < 80.0, "{rough}");
    }

    #[test]
    fn the_kalman_filter_learns_the_per_byte_delay() {
        // Frames alternate 2 kB / 12 kB over a 1 Mbit/s channel: 80 ms more for the big ones.
        let mut k = DelayKalman::new();
        for i in 0..2000 {
            let dl = if i % 2 == 0 { 10_000.0 } else { -10_000.0 };
            k.update(dl * 0.008, dl, 12_000.0, 4.0);
        }
        let ms_per_byte = 8.0 / 1e3; // 1 Mbit/s = 125 bytes per ms
        assert!((k.theta[0] / ms_per_byte - 1.0).abs() < 0.05, "{}", k.theta[0]);
    }
}
