//! 2013 Chrome's receive-side rate controller (libwebrtc `RemoteRateControl`, 2012-2014, in
//! `modules/remote_bitrate_estimator/remote_rate_control.cc`; the controller behind the
//! Chrome that De Cicco, Carlucci and Mascolo measured in "Experimental Investigation of the
//! Google Congestion Control for Real-Time Flows", FhMN 2013). Read from the public source of
//! that era and written anew here.
//!
//! Unlike today's `AimdRateControl` ([`super::aimd`]), it has **no additive increase**: every
//! increase is multiplicative, so two flows that see the same over-use signals keep the ratio of
//! their rates (multiplicative increase, multiplicative decrease: Chiu and Jain 1989).
//!
//! ```text
//! region:   MaxUnknown (β 0.9) ──decrease──▶ NearMax (β 0.95) ──rate > avg_max + 2.5σ──▶ AboveMax (β 0.9)
//!                 ▲                                          └──rate > avg_max + 3σ────▶ MaxUnknown
//! increase: A ← A·α^(Δt/1 s) + 1 kbit/s,  α = 1.005 + 0.0407 / (1 + e^(0.0025·(0.85·T_r − (c1·σ²_v + 800))))
//!           clamped to [1.005, 1.3] before the power; NearMax: α − (α−1)/2; MaxUnknown: α + 2(α−1)
//!           T_r = avg change period + RTT + 300 ms, c1 = −6700/33², σ²_v the filter's noise variance
//!           after a hold: A ← β·(largest rate seen in the hold) when that is higher ("recovery")
//! decrease: A ← β·R̂ (never above A; outside MaxUnknown at most β·avg_max), then region NearMax
//! guard:    unless recovering, an A above 1.5·R̂ (R̂ > 100 kbit/s or A > 150 kbit/s) keeps the old A
//! ```
//!
//! `avg_max` / `σ²`: EWMA (α = 0.05) of the received rate at each decrease and of its squared
//! deviation normalised by avg_max (clamped to [0.4, 2.5]): today's link-capacity estimator
//! ([`LinkCapacityEstimator`], which descends from it) keeps them. The controller never clamps to a configured maximum (the sender does); a
//! decrease below the configured minimum gives the minimum.

use super::link_capacity::LinkCapacityEstimator;
use super::BandwidthUsage;

/// Where the rate stands against the rates at which earlier decreases happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    NearMax,
    AboveMax,
    MaxUnknown,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Hold,
    Increase,
    Decrease,
}

/// 2013 Chrome's `RemoteRateControl`. Rates in bit/s, times in ms.
#[derive(Clone, Debug)]
pub struct RemoteRateControl2013 {
    min_bps: f64,
    current_bps: f64,
    max_hold_bps: f64,
    /// avg_max and its deviation (no estimate: unknown).
    max: LinkCapacityEstimator,
    state: State,
    region: Region,
    last_bitrate_change_ms: Option<f64>,
    first_incoming_ms: Option<f64>,
    initialized: bool,
    avg_change_period_ms: f64,
    last_change_ms: Option<f64>,
    beta: f64,
    rtt_ms: f64,
}

impl RemoteRateControl2013 {
    /// Starts, as upstream, at a placeholder rate (30 Mbit/s) that is not a valid estimate:
    /// the first is the received rate measured more than 500 ms after the first one. `rtt_ms`:
    /// the RTT used until one is set (upstream `kDefaultRttMs` = 200).
    pub fn new(min_bps: f64, rtt_ms: f64) -> Self {
        RemoteRateControl2013 {
            min_bps,
            current_bps: 30e6,
            max_hold_bps: 0.0,
            max: LinkCapacityEstimator::default(),
            state: State::Hold,
            region: Region::MaxUnknown,
            last_bitrate_change_ms: None,
            first_incoming_ms: None,
            initialized: false,
            avg_change_period_ms: 1000.0,
            last_change_ms: None,
            beta: 0.9,
            rtt_ms,
        }
    }

    pub fn valid_estimate(&self) -> bool {
        self.initialized
    }
    pub fn estimate_bps(&self) -> f64 {
        self.current_bps
    }
    pub fn region(&self) -> Region {
        self.region
    }
    pub fn set_rtt_ms(&mut self, rtt_ms: f64) {
        self.rtt_ms = rtt_ms;
    }

    /// Upstream `TimeToReduceFurther`: a decrease at most once per clamp(RTT, 10, 200 ms),
    /// unless the estimate is more than 2.05× the received rate.
    pub fn time_to_reduce_further(&self, now_ms: f64, incoming_bps: f64) -> bool {
        let interval = self.rtt_ms.clamp(10.0, 200.0);
        if self.last_bitrate_change_ms.is_none_or(|t| now_ms - t >= interval) {
            return true;
        }
        self.initialized && self.current_bps - incoming_bps > 1.05 * incoming_bps
    }

    /// The per-second increase factor before the region's adjustment (upstream
    /// `RateIncreaseFactor`'s sigmoid in the response time and the noise variance).
    pub fn base_increase_factor(response_time_ms: f64, noise_var: f64) -> f64 {
        const B: f64 = 0.0407;
        const B_SLOPE: f64 = 0.0025;
        const C1: f64 = -6700.0 / (33.0 * 33.0);
        const C2: f64 = 800.0;
        const D: f64 = 0.85;
        let a =
            1.005 + B / (1.0 + (B_SLOPE * (D * response_time_ms - (C1 * noise_var + C2))).exp());
        a.clamp(1.005, 1.3)
    }

    fn increase_factor(&self, now_ms: f64, response_time_ms: f64, noise_var: f64) -> f64 {
        let mut a = Self::base_increase_factor(response_time_ms, noise_var);
        if let Some(last) = self.last_bitrate_change_ms {
            a = a.powf((now_ms - last) / 1000.0);
        }
        match self.region {
            Region::NearMax => a - (a - 1.0) / 2.0,
            Region::MaxUnknown => a + (a - 1.0) * 2.0,
            Region::AboveMax => a,
        }
    }

    fn set_region(&mut self, region: Region) {
        self.region = region;
        self.beta = if region == Region::NearMax { 0.95 } else { 0.9 };
    }

    /// One estimate update (upstream `Update` + `UpdateBandwidthEstimate`): the detector's
    /// signal, the received rate R̂ (None while not yet measured) and the filter's noise
    /// variance. Returns the estimate.
    pub fn update(
        &mut self,
        signal: BandwidthUsage,
        incoming_bps: Option<f64>,
        noise_var: f64,
        now_ms: f64,
    ) -> f64 {
        let incoming = incoming_bps.unwrap_or(0.0);
        if !self.initialized && incoming > 0.0 {
            match self.first_incoming_ms {
                None => self.first_incoming_ms = Some(now_ms),
                Some(t0) if now_ms - t0 > 500.0 => {
                    self.current_bps = incoming;
                    self.initialized = true;
                }
                Some(_) => {}
            }
        }
        // The mean time between updates feeds the response time.
        let period = self.last_change_ms.map_or(0.0, |t| now_ms - t);
        self.last_change_ms = Some(now_ms);
        self.avg_change_period_ms = 0.9 * self.avg_change_period_ms + 0.1 * period;
        self.state = match (signal, self.state) {
            (BandwidthUsage::Normal, State::Hold) => {
                self.last_bitrate_change_ms = Some(now_ms);
                State::Increase
            }
            (BandwidthUsage::Normal, s) => s,
            (BandwidthUsage::Overusing, _) => State::Decrease,
            (BandwidthUsage::Underusing, _) => State::Hold,
        };
        let old = self.current_bps;
        let mut new = old;
        let mut recovery = false;
        match self.state {
            State::Hold => self.max_hold_bps = self.max_hold_bps.max(incoming),
            State::Increase => {
                if self.max.has_estimate() {
                    if incoming > self.max.upper_bound_bps() {
                        self.set_region(Region::MaxUnknown);
                        self.max.reset();
                    } else if incoming > self.max.upper_bound_at_bps(2.5) {
                        self.set_region(Region::AboveMax);
                    }
                }
                let response_ms = (self.avg_change_period_ms + 0.5).floor() + self.rtt_ms + 300.0;
                let alpha = self.increase_factor(now_ms, response_ms, noise_var);
                new = (old * alpha).floor() + 1000.0;
                if self.max_hold_bps > 0.0 && self.beta * self.max_hold_bps > new {
                    new = self.beta * self.max_hold_bps;
                    self.max.set_estimate_bps(self.beta * self.max_hold_bps);
                    self.set_region(Region::NearMax);
                    recovery = true;
                }
                self.max_hold_bps = 0.0;
                self.last_bitrate_change_ms = Some(now_ms);
            }
            State::Decrease => {
                if incoming < self.min_bps {
                    new = self.min_bps;
                } else {
                    new = (self.beta * incoming + 0.5).floor();
                    if new > old {
                        // Outside MaxUnknown a maximum is known (the region is set with it).
                        let known =
                            self.max.estimate_bps().filter(|_| self.region != Region::MaxUnknown);
                        if let Some(m) = known {
                            new = (self.beta * m + 0.5).floor();
                        }
                        new = new.min(old);
                    }
                    self.set_region(Region::NearMax);
                    if incoming < self.max.lower_bound_bps() {
                        self.max.reset();
                    }
                    self.max.on_overuse_detected(incoming);
                }
                self.state = State::Hold;
                self.last_bitrate_change_ms = Some(now_ms);
            }
        }
        if !recovery && (incoming > 100_000.0 || new > 150_000.0) && new > 1.5 * incoming {
            // Never ask for more than 1.5× what arrives: keep the old estimate.
            new = old;
            self.last_bitrate_change_ms = Some(now_ms);
        }
        self.current_bps = new;
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(rate: f64) -> RemoteRateControl2013 {
        let mut r = RemoteRateControl2013::new(50_000.0, 200.0);
        r.set_rtt_ms(50.0);
        r.update(BandwidthUsage::Normal, Some(rate), 1.0, 0.0);
        r.update(BandwidthUsage::Normal, Some(rate), 1.0, 1000.0);
        assert!(r.valid_estimate());
        r
    }

    #[test]
    fn increase_factor_follows_the_sigmoid_and_its_clamp() {
        // T_r = 1 s + 50 ms + 300 ms, σ² = 1: 1.005 + 0.0407 / (1 + e^(0.0025·(1147.5 + 6.15 − 800))).
        let a = RemoteRateControl2013::base_increase_factor(1350.0, 1.0);
        let expect =
            1.005 + 0.0407 / (1.0 + (0.0025f64 * (0.85 * 1350.0 + 6700.0 / 1089.0 - 800.0)).exp());
        assert!((a - expect).abs() < 1e-12 && (1.016..1.018).contains(&a), "{a}");
        // Short response times approach 1.005 + 0.0407; long ones 1.005.
        assert!(RemoteRateControl2013::base_increase_factor(0.0, 0.0) > 1.04);
        assert!((RemoteRateControl2013::base_increase_factor(1e5, 0.0) - 1.005).abs() < 1e-9);
    }

    #[test]
    fn first_estimate_is_the_received_rate_after_half_a_second() {
        let mut r = RemoteRateControl2013::new(50_000.0, 200.0);
        r.update(BandwidthUsage::Normal, Some(400_000.0), 1.0, 0.0);
        assert!(!r.valid_estimate());
        r.update(BandwidthUsage::Normal, Some(400_000.0), 1.0, 400.0);
        assert!(!r.valid_estimate());
        r.update(BandwidthUsage::Normal, Some(420_000.0), 1.0, 600.0);
        assert!(r.valid_estimate());
    }

    #[test]
    fn decreases_use_beta_0_9_then_0_95_near_the_max() {
        let mut r = started(1_000_000.0);
        let a = r.update(BandwidthUsage::Overusing, Some(1_000_000.0), 1.0, 2000.0);
        assert_eq!(a, 900_000.0);
        assert_eq!(r.region(), Region::NearMax);
        let b = r.update(BandwidthUsage::Overusing, Some(800_000.0), 1.0, 2300.0);
        assert_eq!(b, 760_000.0);
        // A decrease never raises the estimate.
        let c = r.update(BandwidthUsage::Overusing, Some(1_000_000.0), 1.0, 2600.0);
        assert!(c <= 760_000.0, "{c}");
    }

    /// Two flows on a fluid bottleneck of 1.2 Mbit/s: each second both update; when their
    /// sum passes the capacity both see over-use and receive their share of it.
    fn shared_bottleneck(
        mut step: impl FnMut(usize, BandwidthUsage, f64, f64) -> f64,
        start: [f64; 2],
    ) -> f64 {
        let cap = 1_200_000.0;
        let mut rates = start;
        let mut t = 1000.0;
        for _ in 0..300 {
            t += 1000.0;
            let sum = rates[0] + rates[1];
            let (signal, scale) = if sum > cap {
                (BandwidthUsage::Overusing, cap / sum)
            } else {
                (BandwidthUsage::Normal, 1.0)
            };
            for (i, r) in rates.iter_mut().enumerate() {
                *r = step(i, signal, *r * scale, t);
            }
        }
        rates[0] / rates[1]
    }

    #[test]
    fn increases_are_multiplicative_so_two_flows_keep_their_ratio() {
        // 2013: no additive increase (1 kbit/s per update only), so a 3:1 split stays unequal.
        let mut c = [started(750_000.0), started(250_000.0)];
        let ratio = shared_bottleneck(
            |i, s, incoming, t| c[i].update(s, Some(incoming), 1.0, t),
            [750_000.0, 250_000.0],
        );
        assert!(ratio > 1.5, "2013 controller: {ratio}"); // 1.95 after 300 s
                                                          // Today's AIMD (additive increase near the link capacity) on the same loop converges.
        let mut d = [750_000.0, 250_000.0].map(|r| {
            let mut a = crate::gcc::aimd::AimdRateControl::new(crate::gcc::aimd::AimdConfig {
                paper_decrease: true,
                ..Default::default()
            });
            a.set_rtt_ms(50.0);
            a.set_estimate(r, 1000.0);
            a
        });
        let ratio = shared_bottleneck(
            |i, s, incoming, t| d[i].update(s, Some(incoming), t),
            [750_000.0, 250_000.0],
        );
        assert!(ratio < 1.1, "AIMD: {ratio}"); // 1.01
    }

    #[test]
    fn guard_keeps_the_estimate_within_1_5x_of_what_arrives() {
        let mut r = started(1_000_000.0);
        let before = r.estimate_bps();
        // Only 400 kbit/s arrive: every increase would pass 1.5× of that, so none is taken.
        let mut t = 1000.0;
        for _ in 0..20 {
            t += 1000.0;
            r.update(BandwidthUsage::Normal, Some(400_000.0), 1.0, t);
        }
        assert_eq!(r.estimate_bps(), before);
    }

    #[test]
    fn after_a_hold_the_rate_recovers_to_beta_times_the_held_maximum() {
        let mut r = started(1_000_000.0);
        r.update(BandwidthUsage::Overusing, Some(500_000.0), 1.0, 2000.0);
        assert_eq!(r.estimate_bps(), 450_000.0);
        r.update(BandwidthUsage::Underusing, Some(900_000.0), 1.0, 2500.0);
        let e = r.update(BandwidthUsage::Normal, Some(505_000.0), 1.0, 3500.0);
        assert!((e - 855_000.0).abs() < 1e-6, "{e}");
    }

    #[test]
    fn a_decrease_below_the_minimum_gives_the_minimum() {
        let mut r = started(1_000_000.0);
        assert_eq!(r.update(BandwidthUsage::Overusing, Some(20_000.0), 1.0, 2000.0), 50_000.0);
    }
}
