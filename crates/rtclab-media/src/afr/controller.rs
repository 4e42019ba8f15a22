//! AFR's controller and the baselines it is compared with (spec `afr-hairpin-confucius.md`
//! §2.3-2.5, §2.7; dissertation ch. 6 Alg. 6.1; the released simulator's `sim/algorithm.py`
//! of transys-project/afr, whose details the spec records).
//!
//! Called by the receiver once per frame arriving at the pre-decoder queue, with what it
//! observed since the previous arrival; answers the frame interval the encoder should use
//! (or, for the skip baselines, whether it should pause).
//!
//! AFR = stationary × transient:
//! - running statistics: EWMA/EWMV of the inter-arrival time (ξ = 0.033, samples capped at
//!   50 ms) and of the decode time (ξ = 0.25, outliers excluded: a jump of more than 50 ms over
//!   the previous decode time — the dissertation's rule — or, as the released code, any
//!   decode time ≥ 50 ms);
//! - stationary (Kingman, G/G/1 heavy traffic): T0 = μs·(1 + μs/W0·(ca² + cs²)/2), c² = 0
//!   for a mean below 1 ms, clamped to [1/60, 1/24] s;
//! - transient: α(τQ) = 1 up to Q1, α_min = 24/60 from Q2, linear between; τQ = the longest
//!   sojourn of a frame dequeued since the last arrival or the head's wait now; Q1 = 16 ms and
//!   Q2 = 64 ms if RTT ≤ 100 ms else 14 ms (code) or Q1 = 14 ms, Q2 = max(Q1, 100 ms − RTT −
//!   μs) (dissertation);
//! - f = α·f0, bounded to [24, 60], moved in 5 fps levels only when it differs by more than 5,
//!   and a rate increase takes effect only after one mean frame interval of hold-off.

/// Seconds.
type Secs = f64;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutlierRule {
    /// Exclude a decode time more than this above the previous one (dissertation).
    Jump(Secs),
    /// Exclude any decode time at or above this (released code).
    Absolute(Secs),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TransientRule {
    /// Q1 = `q1`; Q2 = `q2_low` when RTT ≤ 100 ms, else Q1 (released code: 16 / 64 ms).
    Binned { q1: Secs, q2_low: Secs },
    /// Q1 = `q1`; Q2 = max(Q1, deadline − RTT − μs) (dissertation: 14 ms, 100 ms).
    Deadline { q1: Secs, deadline: Secs },
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AfrConfig {
    pub w0: Secs,
    pub xi_arrival: f64,
    pub xi_service: f64,
    pub arrival_cap: Secs,
    pub outlier: OutlierRule,
    pub transient: TransientRule,
    pub fps_min: f64,
    pub fps_max: f64,
    pub fps_step: f64,
    /// Hold-off before an increase, in mean frame intervals.
    pub increase_delay: f64,
}

impl Default for AfrConfig {
    fn default() -> Self {
        AfrConfig {
            w0: 0.002,
            xi_arrival: 0.033,
            xi_service: 0.25,
            arrival_cap: 0.050,
            outlier: OutlierRule::Jump(0.050),
            transient: TransientRule::Binned { q1: 0.016, q2_low: 0.064 },
            fps_min: 24.0,
            fps_max: 60.0,
            fps_step: 5.0,
            increase_delay: 1.0,
        }
    }
}

/// EWMA and EWMV with one weight (the variance uses the freshly updated mean).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ewm {
    pub mean: f64,
    pub var: f64,
    xi: f64,
}

impl Ewm {
    pub fn new(mean: f64, xi: f64) -> Self {
        Ewm { mean, var: 0.0, xi }
    }
    pub fn update(&mut self, x: f64) {
        self.mean = self.xi * x + (1.0 - self.xi) * self.mean;
        self.var = self.xi * (x - self.mean).powi(2) + (1.0 - self.xi) * self.var;
    }
}

/// Kingman's target interval for a queueing-delay target `w0` (all in seconds), before
/// clamping: μs·(1 + μs/W0·(ca² + cs²)/2), a squared coefficient taken as 0 below 1 ms means.
pub fn kingman_interval(mu_s: f64, sd_s: f64, mu_a: f64, sd_a: f64, w0: f64) -> f64 {
    let c2 = |mu: f64, sd: f64| if mu < 0.001 { 0.0 } else { (sd / mu).powi(2) };
    mu_s * (1.0 + mu_s / w0 * (c2(mu_a, sd_a) + c2(mu_s, sd_s)) / 2.0)
}

/// The transient multiplier α for head-of-queue sojourn `qwait` (s).
pub fn transient_alpha(qwait: f64, q1: f64, q2: f64, alpha_min: f64) -> f64 {
    if qwait <= q1 {
        1.0
    } else if qwait >= q2 || q2 <= q1 {
        alpha_min
    } else {
        ((qwait - q1) * alpha_min + (q2 - qwait)) / (q2 - q1)
    }
}

/// What the receiver saw since the previous arrival, at the arrival of a frame.
#[derive(Clone, Debug, Default)]
pub struct Observation {
    pub now: Secs,
    /// Time since the previous frame arrived.
    pub interarrival: Secs,
    /// Decode times of the frames whose decoding finished since the previous arrival.
    pub decoded: Vec<Secs>,
    /// Frames waiting for the decoder (before this one joins).
    pub qlen: usize,
    /// Head-of-queue sojourn: the longest wait of a frame that entered the decoder since the
    /// previous arrival, or how long the head has waited now.
    pub qwait: Secs,
    pub rtt: Secs,
}

/// The encoder instruction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    Interval(Secs),
    /// Skip encoding (the pause baselines) while true.
    Pause(bool),
}

/// AFR and its baselines (spec §2.7).
#[derive(Clone, Debug)]
pub enum FrameRatePolicy {
    /// A constant frame rate.
    Constant { fps: f64 },
    /// QLen-S / QWait-S: pause encoding while the queue length (frames) or head wait (s) is at
    /// or above `pause_at`, resume below `resume_below`.
    Skip { by_wait: bool, pause_at: f64, resume_below: f64, paused: bool },
    /// AFR-QLen: qlen 0 → 60 fps, ≥ 1 → 24 fps.
    QLenMap,
    /// AFR-QWait: head wait in 4 ms bins → 60, 48, 36, 24 fps.
    QWaitMap,
    /// AFR-TX: interval = μs / ρ.
    Tx { rho: f64, afr: Box<Afr> },
    /// AFR-Kingman (stationary only) or AFR (`transient`).
    Afr { afr: Box<Afr>, transient: bool },
}

/// The policies by name, as `rtclab repro afr` and `media.frame_rate_control` accept them.
pub const POLICY_NAMES: &str =
    "droptail, 60fps, qlen-s, qwait-s, afr-qlen, afr-qwait, afr-tx, afr-kingman, afr";

impl FrameRatePolicy {
    /// A policy by name with its §2.7 parameters, and its decoder-queue capacity (16 frames,
    /// the WebRTC frame buffer's, except `60fps`'s infinite queue). `w0_ms`: Kingman's queueing
    /// target; `rho`: AFR-TX's utilisation; `dissertation`: the dissertation's outlier and
    /// transient rules instead of the released code's.
    pub fn by_name(
        name: &str,
        w0_ms: f64,
        rho: f64,
        dissertation: bool,
    ) -> Result<(FrameRatePolicy, Option<usize>), String> {
        if !(w0_ms.is_finite() && w0_ms > 0.0) {
            return Err(format!("w0_ms must be a number > 0, got {w0_ms}"));
        }
        if !(rho.is_finite() && rho > 0.0 && rho <= 1.0) {
            return Err(format!("rho must be in (0, 1], got {rho}"));
        }
        let mut cfg = AfrConfig { w0: w0_ms / 1e3, ..AfrConfig::default() };
        if dissertation {
            cfg.outlier = OutlierRule::Jump(0.050);
            cfg.transient = TransientRule::Deadline { q1: 0.014, deadline: 0.100 };
        } else {
            cfg.outlier = OutlierRule::Absolute(0.050);
        }
        let afr = || Box::new(Afr::new(cfg));
        let skip = |by_wait, pause_at, resume_below| FrameRatePolicy::Skip {
            by_wait,
            pause_at,
            resume_below,
            paused: false,
        };
        let cap = Some(16);
        Ok(match name {
            "droptail" => (FrameRatePolicy::Constant { fps: 60.0 }, cap),
            "60fps" => (FrameRatePolicy::Constant { fps: 60.0 }, None),
            "qlen-s" => (skip(false, 1.0, 1.0), cap),
            "qwait-s" => (skip(true, 0.032, 0.004), cap),
            "afr-qlen" => (FrameRatePolicy::QLenMap, cap),
            "afr-qwait" => (FrameRatePolicy::QWaitMap, cap),
            "afr-tx" => (FrameRatePolicy::Tx { rho, afr: afr() }, cap),
            "afr-kingman" => (FrameRatePolicy::Afr { afr: afr(), transient: false }, cap),
            "afr" => (FrameRatePolicy::Afr { afr: afr(), transient: true }, cap),
            other => {
                return Err(format!("unknown AFR policy {other:?} (accepted: {POLICY_NAMES})"))
            }
        })
    }

    pub fn name(&self) -> &'static str {
        match self {
            FrameRatePolicy::Constant { .. } => "constant",
            FrameRatePolicy::Skip { by_wait: false, .. } => "QLen-S",
            FrameRatePolicy::Skip { by_wait: true, .. } => "QWait-S",
            FrameRatePolicy::QLenMap => "AFR-QLen",
            FrameRatePolicy::QWaitMap => "AFR-QWait",
            FrameRatePolicy::Tx { .. } => "AFR-TX",
            FrameRatePolicy::Afr { transient: false, .. } => "AFR-Kingman",
            FrameRatePolicy::Afr { transient: true, .. } => "AFR",
        }
    }

    pub fn on_arrival(&mut self, o: &Observation) -> Target {
        match self {
            FrameRatePolicy::Constant { fps } => Target::Interval(1.0 / *fps),
            FrameRatePolicy::Skip { by_wait, pause_at, resume_below, paused } => {
                let x = if *by_wait { o.qwait } else { o.qlen as f64 };
                if x >= *pause_at {
                    *paused = true;
                } else if x < *resume_below {
                    *paused = false;
                }
                Target::Pause(*paused)
            }
            FrameRatePolicy::QLenMap => {
                Target::Interval(if o.qlen == 0 { 1.0 / 60.0 } else { 1.0 / 24.0 })
            }
            FrameRatePolicy::QWaitMap => {
                let fps = [60.0, 48.0, 36.0, 24.0][((o.qwait / 0.004) as usize).min(3)];
                Target::Interval(1.0 / fps)
            }
            FrameRatePolicy::Tx { rho, afr } => {
                afr.observe(o);
                let t = afr.clamp(afr.service.mean / *rho);
                Target::Interval(afr.compose(o.now, t))
            }
            FrameRatePolicy::Afr { afr, transient } => Target::Interval(afr.decide(o, *transient)),
        }
    }
}

/// AFR's state (spec §2.3).
#[derive(Clone, Debug)]
pub struct Afr {
    pub cfg: AfrConfig,
    pub arrival: Ewm,
    pub service: Ewm,
    last_service: Option<f64>,
    last_fps: f64,
    /// The interval in force, and a pending (longer-waiting) increase with the time it was asked.
    effective: f64,
    pending: Option<(f64, f64)>,
}

impl Afr {
    pub fn new(cfg: AfrConfig) -> Self {
        Afr {
            arrival: Ewm::new(1.0 / cfg.fps_max, cfg.xi_arrival),
            service: Ewm::new(0.0, cfg.xi_service),
            last_service: None,
            last_fps: cfg.fps_max,
            effective: 1.0 / cfg.fps_max,
            pending: None,
            cfg,
        }
    }

    fn clamp(&self, t: f64) -> f64 {
        t.clamp(1.0 / self.cfg.fps_max, 1.0 / self.cfg.fps_min)
    }

    /// Step 1-2: the running statistics, with the outlier filter on decode times.
    pub fn observe(&mut self, o: &Observation) {
        self.arrival.update(o.interarrival.min(self.cfg.arrival_cap));
        for &s in &o.decoded {
            let outlier = match self.cfg.outlier {
                OutlierRule::Jump(j) => self.last_service.is_some_and(|p| s - p > j),
                OutlierRule::Absolute(a) => s >= a,
            };
            self.last_service = Some(s);
            if !outlier {
                self.service.update(s);
            }
        }
    }

    /// Stationary target interval (Kingman), clamped.
    pub fn stationary(&self) -> f64 {
        let t = kingman_interval(
            self.service.mean,
            self.service.var.sqrt(),
            self.arrival.mean,
            self.arrival.var.sqrt(),
            self.cfg.w0,
        );
        self.clamp(t)
    }

    pub fn alpha(&self, o: &Observation) -> f64 {
        let amin = self.cfg.fps_min / self.cfg.fps_max;
        let (q1, q2) = match self.cfg.transient {
            TransientRule::Binned { q1, q2_low } => (q1, if o.rtt <= 0.100 { q2_low } else { q1 }),
            TransientRule::Deadline { q1, deadline } => {
                (q1, q1.max(deadline - o.rtt - self.service.mean))
            }
        };
        transient_alpha(o.qwait, q1, q2, amin)
    }

    /// Steps 5-6: bounds, 5 fps levels, hold-off of increases.
    fn compose(&mut self, now: f64, t: f64) -> f64 {
        let fps = 1.0 / self.clamp(t);
        if (self.last_fps - fps).abs() > self.cfg.fps_step {
            self.last_fps = ((fps / self.cfg.fps_step).round() * self.cfg.fps_step)
                .clamp(self.cfg.fps_min, self.cfg.fps_max);
        }
        let want = 1.0 / self.last_fps;
        if want >= self.effective {
            self.effective = want; // a decrease of the rate: at once
            self.pending = None;
        } else {
            // An increase: after one mean interval; of several, the smaller first.
            let (iv, since) = match self.pending {
                Some((p, since)) => (p.max(want), since),
                None => (want, now),
            };
            if now - since >= self.cfg.increase_delay * self.arrival.mean {
                self.effective = iv;
                self.pending = (want < iv).then_some((want, now));
            } else {
                self.pending = Some((iv, since));
            }
        }
        self.effective
    }

    /// One AFR (or AFR-Kingman) decision at a frame arrival: the interval to encode at.
    pub fn decide(&mut self, o: &Observation, transient: bool) -> f64 {
        self.observe(o);
        let t0 = self.stationary();
        let a = if transient { self.alpha(o) } else { 1.0 };
        self.compose(o.now, t0 / a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kingman_vectors_of_the_spec() {
        // (μs, σs, μa, σa) ms, W0 = 2 ms → T0 (spec §2.11).
        for ((ms, ss, ma, sa), t0) in [
            ((10.0, 2.0, 16.7, 3.0), 11.81),
            ((14.0, 3.0, 16.7, 4.0), 19.06),
            ((10.0, 5.0, 16.7, 8.0), 21.99),
        ] {
            let t = kingman_interval(ms / 1e3, ss / 1e3, ma / 1e3, sa / 1e3, 0.002) * 1e3;
            assert!((t - t0).abs() < 0.01, "{t} vs {t0}");
        }
    }

    #[test]
    fn transient_vectors_of_the_spec() {
        for (q, a) in
            [(16.0, 1.0), (20.0, 0.95), (30.0, 0.825), (40.0, 0.70), (64.0, 0.4), (90.0, 0.4)]
        {
            let x = transient_alpha(q / 1e3, 0.016, 0.064, 0.4);
            assert!((x - a).abs() < 1e-9, "τQ {q}: {x} vs {a}");
        }
    }

    fn obs(now: f64, ia: f64, decoded: &[f64], qlen: usize, qwait: f64) -> Observation {
        Observation { now, interarrival: ia, decoded: decoded.to_vec(), qlen, qwait, rtt: 0.015 }
    }

    fn settled() -> (Afr, f64) {
        let mut a = Afr::new(AfrConfig::default());
        let mut t = 0.0;
        for _ in 0..300 {
            t += 1.0 / 60.0;
            a.decide(&obs(t, 1.0 / 60.0, &[0.003], 0, 0.0), true);
        }
        (a, t)
    }

    #[test]
    fn a_network_burst_does_not_lower_the_rate() {
        let (mut a, mut t) = settled();
        // Five frames within 4 ms after a 70 ms gap: long queue, short head wait.
        let first = a.decide(&obs(t + 0.07, 0.07, &[0.003], 0, 0.0), true);
        t += 0.07;
        let mut last = first;
        for i in 1..5 {
            last = a.decide(&obs(t + i as f64 * 0.001, 0.001, &[], i, 0.003), true);
        }
        assert!((last - 1.0 / 60.0).abs() < 1e-9, "{last}");
    }

    #[test]
    fn a_single_decode_spike_does_not_move_the_mean() {
        let (mut a, t) = settled();
        let before = a.service.mean;
        a.decide(&obs(t + 1.0 / 60.0, 1.0 / 60.0, &[0.082], 0, 0.0), true);
        assert_eq!(a.service.mean, before);
        // The released code's absolute rule drops it too.
        let mut b =
            Afr::new(AfrConfig { outlier: OutlierRule::Absolute(0.05), ..Default::default() });
        b.decide(&obs(0.1, 1.0 / 60.0, &[0.003, 0.082], 0, 0.0), true);
        assert!((b.service.mean - 0.25 * 0.003).abs() < 1e-12);
    }

    #[test]
    fn a_sustained_slower_decoder_lowers_the_rate_before_the_queue_builds() {
        // Arrivals with a network's jitter (±1.7 ms around 16.7 ms): decode time 14 ms
        // settles, then 18 ms (> 16.7 ms interval) from now on. (With perfectly periodic
        // arrivals Kingman's target tends to 18 ms = 55.6 fps, inside the 5 fps dead band: the
        // transient controller then acts once the head waits > 16 ms.)
        let (mut a, mut t) = settled();
        let ia = |i: usize| if i.is_multiple_of(2) { 0.015 } else { 0.0184 };
        for i in 0..120 {
            t += ia(i);
            a.decide(&obs(t, ia(i), &[0.014], 0, 0.0), true);
        }
        // At 18 ms per frame against 16.7 ms the backlog grows 1.3 ms a frame: a whole frame
        // waits after 13 frames.
        let mut lowered_at = None;
        for i in 0..13 {
            t += ia(i);
            let iv = a.decide(&obs(t, ia(i), &[0.018], 0, 0.0), true);
            if iv > 1.0 / 60.0 + 1e-9 && lowered_at.is_none() {
                lowered_at = Some(i);
            }
        }
        assert!(lowered_at.is_some_and(|i| i < 12), "{lowered_at:?}");
    }

    #[test]
    fn increases_wait_one_mean_interval_and_levels_are_5_fps() {
        let mut a = Afr::new(AfrConfig::default());
        let d = a.compose(0.0, 1.0 / 30.0);
        assert!((d - 1.0 / 30.0).abs() < 1e-12);
        // Asked for 60 fps again: not yet, then after a mean interval.
        assert!((a.compose(0.001, 1.0 / 60.0) - 1.0 / 30.0).abs() < 1e-12);
        assert!((a.compose(0.001 + 1.0 / 59.0, 1.0 / 60.0) - 1.0 / 60.0).abs() < 1e-12);
        // A change of at most 5 fps is not made.
        assert!((a.compose(1.0, 1.0 / 56.0) - 1.0 / 60.0).abs() < 1e-12);
    }

    #[test]
    fn baselines_map_queue_state() {
        let o = |qlen, qwait| obs(1.0, 1.0 / 60.0, &[], qlen, qwait);
        assert_eq!(FrameRatePolicy::QLenMap.on_arrival(&o(1, 0.0)), Target::Interval(1.0 / 24.0));
        assert_eq!(
            FrameRatePolicy::QWaitMap.on_arrival(&o(0, 0.009)),
            Target::Interval(1.0 / 36.0)
        );
        let mut s = FrameRatePolicy::Skip {
            by_wait: true,
            pause_at: 0.032,
            resume_below: 0.004,
            paused: false,
        };
        assert_eq!(s.on_arrival(&o(3, 0.040)), Target::Pause(true));
        assert_eq!(s.on_arrival(&o(3, 0.010)), Target::Pause(true));
        assert_eq!(s.on_arrival(&o(0, 0.001)), Target::Pause(false));
    }
}
