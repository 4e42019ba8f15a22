//! LossBasedBweV2: libwebrtc's default loss-based controller since December 2022 (spec
//! `gcc.md` §2.7c; upstream `modules/congestion_controller/goog_cc/loss_based_bwe_v2.cc`,
//! defaults of 2025-05-20).
//!
//! A maximum-likelihood estimate of a two-parameter channel: inherent (random) loss ε and a
//! loss-limited bandwidth B. An observation sent at rate r is expected to lose
//!
//! ```text
//! p(r) = ε + (1 − ε)·max(0, (r − B)/r)            clamped to [1e-6, 1 − 1e-6]
//! ```
//!
//! ```text
//! transport feedback ──► partial observation (packets, lost, bytes, lost bytes)
//!                          │ send-time span ≥ 250 ms
//!                          ▼
//!                  ring of 15 observations, weight 0.9^age
//!                          │
//! candidates B·{1.02, 1, 0.95}, acked rate, delay-based estimate (if higher)
//!   each: one Newton step on ε, ε ∈ [1e-3, min(1, 0.05 + 100 kbit/s / B)]
//!   objective J = Σ w·[lost_kB·ln p + (kB − lost_kB)·ln(1 − p)] + Σ w·bias(B)·kB
//!                          │ best J (ties: larger B)
//!                          ▼
//! bounds: no increase while average loss > ε; when loss-limited at most 1.3·B per 300 ms
//!         and 1.5 × acked (1.2 × while acked < 1.3 × the HOLD rate);
//!         estimate = max(acked, min(B, 100 kbit/s / (L̄ − 0.05) if L̄ > 5 %, delay-based))
//! state:  DelayBased ─(estimate below delay-based)─► Decreasing (HOLD the rate for 300 ms,
//!         ×2 each time, ≤ 60 s) ─(rising)─► Increasing (with padding for 2 s) ─► …
//! ```
//!
//! Not modelled: the pacer's padding while `IncreaseUsingPadding` (our media senders do not pad;
//! the state is reported), rampup acceleration (off upstream).

use crate::PacketResult;
use rtclab_core::{Time, TimeDelta};

/// `kCongestionControllerMinBitrate`.
const MIN_BITRATE_BPS: f64 = 5_000.0;
const INIT_HOLD: TimeDelta = TimeDelta::from_millis(300);
const MAX_HOLD: TimeDelta = TimeDelta::from_secs(60);

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossBasedV2Config {
    /// `Enabled` (true upstream since December 2022).
    pub enabled: bool,
    /// `CandidateFactors`.
    pub candidate_factors: [f64; 3],
    /// `HigherBwBiasFactor`, `HigherLogBwBiasFactor`.
    pub higher_bw_bias: f64,
    pub higher_log_bw_bias: f64,
    /// `InherentLossLowerBound`.
    pub inherent_loss_lower: f64,
    /// `LossThresholdOfHighBandwidthPreference`, `BandwidthPreferenceSmoothingFactor`.
    pub high_bw_preference_loss: f64,
    pub bw_preference_smoothing: f64,
    /// ε ≤ offset + balance / B (`InherentLossUpperBoundOffset`, `…BwBalance`).
    pub inherent_loss_upper_offset: f64,
    pub inherent_loss_upper_balance_bps: f64,
    pub initial_inherent_loss: f64,
    pub newton_iterations: u32,
    pub newton_step: f64,
    /// `AckedRateCandidate`, `DelayBasedCandidate`.
    pub acked_candidate: bool,
    pub delay_based_candidate: bool,
    /// `ObservationDurationLowerBound`, `ObservationWindowSize`.
    pub observation_min: TimeDelta,
    pub window: usize,
    /// `TemporalWeightFactor`, `InstantUpperBoundTemporalWeightFactor`.
    pub temporal_weight: f64,
    pub instant_upper_weight: f64,
    /// Instant upper bound = balance / (L̄ − offset) while L̄ > offset.
    pub instant_upper_balance_bps: f64,
    pub instant_upper_offset: f64,
    /// `MaxIncreaseFactor`, `DelayedIncreaseWindow`.
    pub max_increase_factor: f64,
    pub delayed_increase_window: TimeDelta,
    /// `NotIncreaseIfInherentLossLessThanAverageLoss`.
    pub not_increase_if_inherent_below_average: bool,
    /// `NotUseAckedRateInAlr`.
    pub not_use_acked_in_alr: bool,
    /// `UseInStartPhase`, `MinNumObservations`.
    pub use_in_start_phase: bool,
    pub min_observations: u32,
    /// `LowerBoundByAckedRateFactor`.
    pub lower_bound_by_acked: f64,
    /// `HoldDurationFactor` (0 = no HOLD state).
    pub hold_factor: f64,
    /// `UseByteLossRate`.
    pub byte_loss: bool,
    /// `PaddingDuration`.
    pub padding_duration: TimeDelta,
    /// `BoundBestCandidate`.
    pub bound_best_candidate: bool,
    /// `BwRampupUpperBoundFactor`, `BwRampupUpperBoundInHoldFactor`,
    /// `BwRampupUpperBoundHoldThreshold`.
    pub rampup_factor: f64,
    pub rampup_factor_in_hold: f64,
    pub rampup_hold_threshold: f64,
    /// Average-loss spike filter (drop the lowest- and highest-loss observations unless the
    /// highest was sent at ≥ 2 × the median rate).
    pub spike_filter: bool,
}

impl Default for LossBasedV2Config {
    /// libwebrtc's defaults (spec `gcc.md` §2.7c).
    fn default() -> Self {
        LossBasedV2Config {
            enabled: true,
            candidate_factors: [1.02, 1.0, 0.95],
            higher_bw_bias: 0.0002,
            higher_log_bw_bias: 0.02,
            inherent_loss_lower: 1e-3,
            high_bw_preference_loss: 0.2,
            bw_preference_smoothing: 0.002,
            inherent_loss_upper_offset: 0.05,
            inherent_loss_upper_balance_bps: 100_000.0,
            initial_inherent_loss: 0.01,
            newton_iterations: 1,
            newton_step: 0.75,
            acked_candidate: true,
            delay_based_candidate: true,
            observation_min: TimeDelta::from_millis(250),
            window: 15,
            temporal_weight: 0.9,
            instant_upper_weight: 0.9,
            instant_upper_balance_bps: 100_000.0,
            instant_upper_offset: 0.05,
            max_increase_factor: 1.3,
            delayed_increase_window: TimeDelta::from_millis(300),
            not_increase_if_inherent_below_average: true,
            not_use_acked_in_alr: true,
            use_in_start_phase: true,
            min_observations: 3,
            lower_bound_by_acked: 1.0,
            hold_factor: 2.0,
            byte_loss: true,
            padding_duration: TimeDelta::from_secs(2),
            bound_best_candidate: true,
            rampup_factor: 1.5,
            rampup_factor_in_hold: 1.2,
            rampup_hold_threshold: 1.3,
            spike_filter: true,
        }
    }
}

/// libwebrtc `LossBasedState`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LossBasedState {
    DelayBasedEstimate,
    Increasing,
    IncreaseUsingPadding,
    Decreasing,
}

impl LossBasedState {
    /// 0 delay-based, 1 increasing, 2 increasing with padding, 3 decreasing (time series).
    pub fn code(self) -> f64 {
        match self {
            LossBasedState::DelayBasedEstimate => 0.0,
            LossBasedState::Increasing => 1.0,
            LossBasedState::IncreaseUsingPadding => 2.0,
            LossBasedState::Decreasing => 3.0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Channel {
    inherent_loss: f64,
    /// Loss-limited bandwidth, bit/s (NaN = not yet known).
    bandwidth: f64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Observation {
    packets: u64,
    lost: u64,
    bytes: f64,
    lost_bytes: f64,
    sending_rate_bps: f64,
    id: u64,
}

impl Observation {
    fn total(&self, byte_loss: bool) -> f64 {
        if byte_loss {
            self.bytes / 1000.0
        } else {
            self.packets as f64
        }
    }
    fn lost_amount(&self, byte_loss: bool) -> f64 {
        if byte_loss {
            self.lost_bytes / 1000.0
        } else {
            self.lost as f64
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Hold {
    until: Option<Time>,
    duration: TimeDelta,
    rate_bps: f64,
}

impl Hold {
    fn reset() -> Self {
        Hold { until: None, duration: INIT_HOLD, rate_bps: f64::INFINITY }
    }
}

#[derive(Clone, Debug)]
pub struct LossBasedBweV2 {
    cfg: LossBasedV2Config,
    current: Channel,
    observations: Vec<Option<Observation>>,
    num_observations: u64,
    partial: Observation,
    last_observation_send: Option<Time>,
    acked_bps: Option<f64>,
    delay_based_bps: f64,
    min_bitrate_bps: f64,
    max_bitrate_bps: f64,
    state: LossBasedState,
    result_bps: f64,
    recovering_since: Option<Time>,
    limit_in_window_bps: f64,
    hold: Hold,
    padding: Option<(Time, f64)>,
    instant_upper_bps: Option<f64>,
    /// L̄, recomputed when an observation closes (it depends on nothing else).
    average_loss: f64,
}

impl LossBasedBweV2 {
    pub fn new(cfg: LossBasedV2Config, min_bitrate_bps: f64, max_bitrate_bps: f64) -> Self {
        LossBasedBweV2 {
            current: Channel { inherent_loss: cfg.initial_inherent_loss, bandwidth: f64::NAN },
            observations: vec![None; cfg.window.max(2)],
            num_observations: 0,
            partial: Observation::default(),
            last_observation_send: None,
            acked_bps: None,
            delay_based_bps: f64::INFINITY,
            min_bitrate_bps,
            max_bitrate_bps,
            state: LossBasedState::DelayBasedEstimate,
            result_bps: f64::NAN,
            recovering_since: None,
            limit_in_window_bps: f64::INFINITY,
            hold: Hold::reset(),
            padding: None,
            instant_upper_bps: None,
            average_loss: 0.0,
            cfg,
        }
    }

    pub fn is_ready(&self) -> bool {
        self.current.bandwidth.is_finite()
            && self.num_observations >= self.cfg.min_observations as u64
    }
    pub fn ready_to_use_in_start_phase(&self) -> bool {
        self.is_ready() && self.cfg.use_in_start_phase
    }
    pub fn state(&self) -> LossBasedState {
        if self.is_ready() {
            self.state
        } else {
            LossBasedState::DelayBasedEstimate
        }
    }
    /// The estimate (the delay-based one until ready).
    pub fn estimate_bps(&self) -> f64 {
        if self.is_ready() {
            self.result_bps
        } else {
            self.delay_based_bps
        }
    }
    /// The current inherent-loss estimate ε.
    pub fn inherent_loss(&self) -> f64 {
        self.current.inherent_loss
    }

    pub fn set_acknowledged_bitrate(&mut self, bps: f64) {
        if bps.is_finite() {
            self.acked_bps = Some(bps);
        }
    }
    /// `SetBandwidthEstimate` (a probe result or `SetSendBitrate`).
    pub fn set_bandwidth_estimate(&mut self, bps: f64) {
        if bps.is_finite() {
            self.current.bandwidth = bps;
            self.result_bps = bps;
            self.state = LossBasedState::DelayBasedEstimate;
        }
    }

    fn instant_lower_bps(&self) -> f64 {
        let acked = match self.acked_bps {
            Some(a) if self.cfg.lower_bound_by_acked > 0.0 => self.cfg.lower_bound_by_acked * a,
            _ => 0.0,
        };
        acked.max(self.min_bitrate_bps)
    }
    fn instant_upper_bps(&self) -> f64 {
        self.instant_upper_bps.unwrap_or(self.max_bitrate_bps)
    }
    fn loss_limited(&self) -> bool {
        self.state != LossBasedState::DelayBasedEstimate
    }

    fn observations(&self) -> impl Iterator<Item = &Observation> {
        self.observations.iter().flatten()
    }
    fn weight(&self, factor: f64, o: &Observation) -> f64 {
        factor.powi((self.num_observations - 1 - o.id) as i32)
    }

    /// L̄: the weighted (0.9^age) byte- or packet-loss ratio, without the lowest- and
    /// highest-loss observations unless the highest was sent at ≥ 2 × the median rate.
    pub fn average_reported_loss(&self) -> f64 {
        self.average_loss
    }

    fn compute_average_loss(&self) -> f64 {
        let obs: Vec<&Observation> = self.observations().collect();
        if obs.is_empty() {
            return 0.0;
        }
        let ratio = |o: &Observation| {
            let t = o.total(self.cfg.byte_loss);
            if t > 0.0 {
                o.lost_amount(self.cfg.byte_loss) / t
            } else {
                0.0
            }
        };
        let mut skip: [Option<u64>; 2] = [None, None];
        if self.cfg.spike_filter && obs.len() >= 3 {
            let min = obs.iter().min_by(|a, b| ratio(a).total_cmp(&ratio(b))).unwrap();
            let max = obs.iter().max_by(|a, b| ratio(a).total_cmp(&ratio(b))).unwrap();
            let mut rates: Vec<f64> = obs.iter().map(|o| o.sending_rate_bps).collect();
            rates.sort_by(f64::total_cmp);
            let median = rates[rates.len() / 2];
            if median * 2.0 > max.sending_rate_bps && min.id != max.id {
                skip = [Some(min.id), Some(max.id)];
            }
        }
        let (mut total, mut lost) = (0.0, 0.0);
        for o in obs.iter().filter(|o| !skip.contains(&Some(o.id))) {
            let w = self.weight(self.cfg.instant_upper_weight, o);
            total += w * o.total(self.cfg.byte_loss);
            lost += w * o.lost_amount(self.cfg.byte_loss);
        }
        if total > 0.0 {
            lost / total
        } else {
            0.0
        }
    }

    fn loss_probability(inherent: f64, bandwidth: f64, rate: f64) -> f64 {
        let e = inherent.clamp(0.0, 1.0);
        let mut p = e;
        if rate.is_finite() && bandwidth.is_finite() && rate > bandwidth {
            p += (1.0 - e) * (rate - bandwidth) / rate;
        }
        p.clamp(1e-6, 1.0 - 1e-6)
    }

    fn inherent_loss_upper(&self, bandwidth: f64) -> f64 {
        if bandwidth <= 0.0 {
            return 1.0;
        }
        (self.cfg.inherent_loss_upper_offset + self.cfg.inherent_loss_upper_balance_bps / bandwidth)
            .min(1.0)
    }
    fn feasible_inherent_loss(&self, c: &Channel) -> f64 {
        c.inherent_loss.max(self.cfg.inherent_loss_lower).min(self.inherent_loss_upper(c.bandwidth))
    }

    fn adjust_bias(&self, loss: f64, factor: f64) -> f64 {
        let d = self.cfg.high_bw_preference_loss - loss;
        factor * d / (self.cfg.bw_preference_smoothing + d.abs())
    }
    fn high_bandwidth_bias(&self, bandwidth: f64) -> f64 {
        if !bandwidth.is_finite() {
            return 0.0;
        }
        let l = self.average_reported_loss();
        let kbps = bandwidth / 1000.0;
        self.adjust_bias(l, self.cfg.higher_bw_bias) * kbps
            + self.adjust_bias(l, self.cfg.higher_log_bw_bias) * (1.0 + kbps).ln()
    }

    fn objective(&self, c: &Channel) -> f64 {
        let bias = self.high_bandwidth_bias(c.bandwidth);
        let byte = self.cfg.byte_loss;
        self.observations()
            .map(|o| {
                let p = Self::loss_probability(c.inherent_loss, c.bandwidth, o.sending_rate_bps);
                let w = self.weight(self.cfg.temporal_weight, o);
                let (lost, total) = (o.lost_amount(byte), o.total(byte));
                w * (lost * p.ln() + (total - lost) * (1.0 - p).ln()) + w * bias * total
            })
            .sum()
    }

    fn newton_update(&self, c: &mut Channel) {
        if self.num_observations == 0 {
            return;
        }
        let byte = self.cfg.byte_loss;
        for _ in 0..self.cfg.newton_iterations {
            let (mut first, mut second) = (0.0, 0.0);
            for o in self.observations() {
                let p = Self::loss_probability(c.inherent_loss, c.bandwidth, o.sending_rate_bps);
                let w = self.weight(self.cfg.temporal_weight, o);
                let (lost, got) = (o.lost_amount(byte), o.total(byte) - o.lost_amount(byte));
                first += w * (lost / p - got / (1.0 - p));
                second -= w * (lost / (p * p) + got / ((1.0 - p) * (1.0 - p)));
            }
            if second >= 0.0 {
                second = -1e-6;
            }
            c.inherent_loss -= self.cfg.newton_step * first / second;
            c.inherent_loss = self.feasible_inherent_loss(c);
        }
    }

    fn candidate_upper_bps(&self) -> f64 {
        if self.loss_limited() && self.limit_in_window_bps.is_finite() {
            self.limit_in_window_bps
        } else {
            self.max_bitrate_bps
        }
    }

    fn candidates(&self, in_alr: bool) -> Vec<Channel> {
        let best = self.current;
        let mut bws: Vec<f64> =
            self.cfg.candidate_factors.iter().map(|f| f * best.bandwidth).collect();
        if let Some(acked) = self.acked_bps {
            let padding_active = self.cfg.padding_duration > TimeDelta::ZERO
                && match (self.padding, self.last_observation_send) {
                    (Some((t, _)), Some(last)) => t + self.cfg.padding_duration >= last,
                    _ => false,
                };
            if self.cfg.acked_candidate
                && (!(self.cfg.not_use_acked_in_alr && in_alr) || padding_active)
            {
                bws.push(acked);
            }
        }
        if self.cfg.delay_based_candidate
            && self.delay_based_bps.is_finite()
            && self.delay_based_bps > best.bandwidth
        {
            bws.push(self.delay_based_bps);
        }
        let upper = self.candidate_upper_bps();
        bws.into_iter()
            .map(|b| {
                let mut c = best;
                c.bandwidth = b.min(best.bandwidth.max(upper));
                c.inherent_loss = self.feasible_inherent_loss(&c);
                c
            })
            .collect()
    }

    fn push_observation(&mut self, packets: &[PacketResult]) -> bool {
        let (mut first, mut last): (Option<Time>, Option<Time>) = (None, None);
        for p in packets {
            self.partial.packets += 1;
            self.partial.bytes += p.size as f64;
            if p.arrival.is_none() {
                self.partial.lost += 1;
                self.partial.lost_bytes += p.size as f64;
            }
            first = Some(first.map_or(p.send_time, |f: Time| f.min(p.send_time)));
            last = Some(last.map_or(p.send_time, |l: Time| l.max(p.send_time)));
        }
        let (Some(first), Some(last)) = (first, last) else { return false };
        let start = *self.last_observation_send.get_or_insert(first);
        let span = last - start;
        if span <= TimeDelta::ZERO || span < self.cfg.observation_min {
            return false;
        }
        self.last_observation_send = Some(last);
        let mut o = std::mem::take(&mut self.partial);
        o.sending_rate_bps = o.bytes * 8.0 / span.as_secs_f64();
        o.id = self.num_observations;
        let slot = (o.id % self.observations.len() as u64) as usize;
        self.observations[slot] = Some(o);
        self.num_observations += 1;
        self.average_loss = self.compute_average_loss();
        let l = self.average_loss;
        self.instant_upper_bps = Some(if l > self.cfg.instant_upper_offset {
            self.cfg.instant_upper_balance_bps / (l - self.cfg.instant_upper_offset)
        } else {
            self.max_bitrate_bps
        });
        true
    }

    fn increasing_when_loss_limited(&self, old: f64, new: f64) -> bool {
        (old < new
            || (old == new
                && matches!(
                    self.state,
                    LossBasedState::Increasing | LossBasedState::IncreaseUsingPadding
                )))
            && self.loss_limited()
    }

    fn can_keep_increasing(&self, estimate: f64) -> bool {
        if self.cfg.padding_duration == TimeDelta::ZERO
            || self.state != LossBasedState::IncreaseUsingPadding
        {
            return true;
        }
        match (self.padding, self.last_observation_send) {
            (Some((t, rate)), Some(last)) => {
                t + self.cfg.padding_duration >= last || rate < estimate
            }
            _ => true,
        }
    }

    /// `UpdateBandwidthEstimate`: one transport feedback's packets.
    pub fn update(&mut self, packets: &[PacketResult], delay_based_bps: f64, in_alr: bool) {
        self.delay_based_bps = delay_based_bps;
        if packets.is_empty() || !self.push_observation(packets) {
            return;
        }
        let Some(last_obs) = self.last_observation_send else { return };
        if !self.current.bandwidth.is_finite() {
            if !delay_based_bps.is_finite() {
                return;
            }
            self.current.bandwidth = delay_based_bps;
            self.result_bps = delay_based_bps;
            self.state = LossBasedState::DelayBasedEstimate;
        }
        let mut best = self.current;
        let mut best_j = f64::NEG_INFINITY;
        for mut c in self.candidates(in_alr) {
            self.newton_update(&mut c);
            let j = self.objective(&c);
            if j > best_j || (j == best_j && c.bandwidth > best.bandwidth) {
                best_j = j;
                best = c;
            }
        }
        if self.cfg.not_increase_if_inherent_below_average
            && self.average_reported_loss() > best.inherent_loss
            && self.current.bandwidth < best.bandwidth
        {
            best.bandwidth = self.current.bandwidth;
        }
        if self.loss_limited() {
            if self
                .recovering_since
                .is_some_and(|t| t + self.cfg.delayed_increase_window > last_obs)
                && best.bandwidth > self.limit_in_window_bps
            {
                best.bandwidth = self.limit_in_window_bps;
            }
            if self.increasing_when_loss_limited(self.current.bandwidth, best.bandwidth) {
                if let Some(acked) = self.acked_bps {
                    let factor = if self.hold.rate_bps.is_finite()
                        && acked < self.cfg.rampup_hold_threshold * self.hold.rate_bps
                    {
                        self.cfg.rampup_factor_in_hold
                    } else {
                        self.cfg.rampup_factor
                    };
                    best.bandwidth = self.current.bandwidth.max(best.bandwidth.min(factor * acked));
                    if self.state == LossBasedState::Decreasing
                        && best.bandwidth == self.current.bandwidth
                    {
                        best.bandwidth = self.current.bandwidth + 1.0;
                    }
                }
            }
        }
        let bounded = self
            .instant_lower_bps()
            .max(best.bandwidth.min(self.instant_upper_bps()).min(self.delay_based_bps));
        if self.cfg.bound_best_candidate && bounded < best.bandwidth {
            self.current.bandwidth = bounded;
            self.current.inherent_loss = 0.0;
        } else {
            self.current = best;
            if self.cfg.lower_bound_by_acked > 0.0 {
                self.current.bandwidth = self.current.bandwidth.max(self.instant_lower_bps());
            }
        }
        if self.state == LossBasedState::Decreasing
            && self.hold.until.is_some_and(|t| t > last_obs)
            && bounded < self.delay_based_bps
        {
            if self.cfg.lower_bound_by_acked > 0.0 {
                self.hold.rate_bps = self.hold.rate_bps.max(self.instant_lower_bps());
            }
            self.result_bps = self.hold.rate_bps.min(bounded);
            return;
        }
        let below = bounded < self.delay_based_bps && bounded < self.max_bitrate_bps;
        if self.increasing_when_loss_limited(self.result_bps, bounded)
            && self.can_keep_increasing(bounded)
            && below
        {
            if self.cfg.padding_duration > TimeDelta::ZERO
                && bounded > self.padding.map_or(0.0, |(_, r)| r)
            {
                self.padding = Some((last_obs, bounded));
            }
            self.state = if self.cfg.padding_duration > TimeDelta::ZERO {
                LossBasedState::IncreaseUsingPadding
            } else {
                LossBasedState::Increasing
            };
        } else if below {
            if self.state != LossBasedState::Decreasing && self.cfg.hold_factor > 0.0 {
                self.hold = Hold {
                    until: Some(last_obs + self.hold.duration),
                    duration: MAX_HOLD.min(self.hold.duration.mul_f64(self.cfg.hold_factor)),
                    rate_bps: bounded,
                };
            }
            self.padding = None;
            self.state = LossBasedState::Decreasing;
        } else {
            self.hold = Hold::reset();
            self.padding = None;
            self.state = LossBasedState::DelayBasedEstimate;
        }
        self.result_bps = bounded;
        if self.loss_limited()
            && self.recovering_since.is_none_or(|t| t + self.cfg.delayed_increase_window < last_obs)
        {
            self.limit_in_window_bps =
                MIN_BITRATE_BPS.max(self.current.bandwidth * self.cfg.max_increase_factor);
            self.recovering_since = Some(last_obs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` packets of 1000 B sent evenly over `span_ms` from `t0_ms`, every `lose_every`-th
    /// one lost counting from `t0_ms` at the same rate (0: none).
    fn batch(t0_ms: u64, span_ms: u64, n: u64, lose_every: u64) -> Vec<PacketResult> {
        let first = t0_ms * n / span_ms;
        (0..n)
            .map(|i| {
                let send = Time::from_millis(t0_ms + i * span_ms / n);
                let lost = lose_every > 0 && (first + i).is_multiple_of(lose_every);
                PacketResult {
                    seq: i,
                    send_time: send,
                    arrival: (!lost).then(|| send + TimeDelta::from_millis(20)),
                    size: 1000,
                    probe_cluster: None,
                    ce: false,
                }
            })
            .collect()
    }

    /// Feeds 250 ms observations at `rate_bps` with the given loss period; returns the last
    /// estimate.
    fn feed(l: &mut LossBasedBweV2, from_ms: u64, n_obs: u64, rate_bps: f64, lose_every: u64) {
        let per_obs = (rate_bps * 0.25 / 8000.0).round() as u64;
        for k in 0..n_obs {
            let t = from_ms + k * 250;
            l.set_acknowledged_bitrate(
                rate_bps * (1.0 - if lose_every > 0 { 1.0 / lose_every as f64 } else { 0.0 }),
            );
            l.update(&batch(t, 250, per_obs, lose_every), 2_000_000.0, false);
        }
    }

    #[test]
    fn loss_probability_follows_the_channel_model() {
        // No overshoot: the inherent loss; 2 Mbit/s over a 1 Mbit/s channel: ε + (1 − ε)/2.
        assert!((LossBasedBweV2::loss_probability(0.01, 1e6, 5e5) - 0.01).abs() < 1e-12);
        let p = LossBasedBweV2::loss_probability(0.01, 1e6, 2e6);
        assert!((p - (0.01 + 0.99 * 0.5)).abs() < 1e-12, "{p}");
        assert_eq!(LossBasedBweV2::loss_probability(0.0, 1e6, 1e5), 1e-6);
    }

    #[test]
    fn an_observation_closes_after_250_ms_of_send_time() {
        let mut l = LossBasedBweV2::new(LossBasedV2Config::default(), 5e3, 1e8);
        assert!(!l.push_observation(&batch(0, 200, 20, 0)));
        assert!(l.push_observation(&batch(200, 100, 10, 0)));
        assert_eq!(l.num_observations, 1);
        let o = l.observations().next().unwrap();
        assert_eq!(o.packets, 30);
        // 30 kB over the span from the first to the last send time of the observation.
        let span = (200 + 90) as f64 / 1000.0;
        assert!((o.sending_rate_bps - 30_000.0 * 8.0 / span).abs() < 1.0);
    }

    #[test]
    fn ready_after_three_observations_and_keeps_the_delay_based_rate_without_loss() {
        let mut l = LossBasedBweV2::new(LossBasedV2Config::default(), 5e3, 1e8);
        feed(&mut l, 0, 2, 1e6, 0);
        assert!(!l.is_ready());
        feed(&mut l, 500, 10, 1e6, 0);
        assert!(l.is_ready());
        assert_eq!(l.state(), LossBasedState::DelayBasedEstimate);
        assert_eq!(l.estimate_bps(), 2_000_000.0);
    }

    #[test]
    fn heavy_loss_caps_the_estimate_at_the_instant_upper_bound() {
        let mut l = LossBasedBweV2::new(LossBasedV2Config::default(), 5e3, 1e8);
        feed(&mut l, 0, 4, 1e6, 0);
        // 20 % loss: L̄ → 0.2, instant upper bound 100 kbit/s / 0.15 ≈ 667 kbit/s (spec).
        feed(&mut l, 1000, 15, 1e6, 5);
        let l_avg = l.average_reported_loss();
        assert!((l_avg - 0.2).abs() < 0.01, "{l_avg}");
        // ... but never below what gets through (the acked rate, 0.8 Mbit/s, is the lower
        // bound).
        let upper = 100_000.0 / (l_avg - 0.05);
        assert!(upper < 800_000.0);
        assert_eq!(l.estimate_bps(), 800_000.0);
        assert_eq!(l.state(), LossBasedState::Decreasing);
    }

    #[test]
    fn random_loss_below_five_percent_is_learned_as_inherent() {
        let mut l = LossBasedBweV2::new(LossBasedV2Config::default(), 5e3, 1e8);
        // 2 % loss at a steady 1 Mbit/s: ε converges towards 0.02 and the estimate stays at
        // the delay-based one (the loss is explained as inherent, not as overshoot).
        feed(&mut l, 0, 40, 1e6, 50);
        assert!((l.inherent_loss() - 0.02).abs() < 0.01, "{}", l.inherent_loss());
        assert!(l.estimate_bps() >= 1e6, "{}", l.estimate_bps());
    }

    #[test]
    fn hold_then_recovery_after_the_loss_ends() {
        let mut l = LossBasedBweV2::new(LossBasedV2Config::default(), 5e3, 1e8);
        feed(&mut l, 0, 4, 1e6, 0);
        feed(&mut l, 1000, 8, 1e6, 4); // 25 % loss
        assert_eq!(l.state(), LossBasedState::Decreasing);
        let low = l.estimate_bps();
        assert!(low < 1e6, "{low}");
        // The loss stops and the sender follows the estimate: it climbs again (at most
        // 1.5 × acked per step and 1.3 × per 300 ms), back to the delay-based estimate.
        for k in 0..60 {
            let rate = l.estimate_bps();
            feed(&mut l, 3000 + 250 * k, 1, rate, 0);
        }
        assert!(l.estimate_bps() > low, "{} vs {low}", l.estimate_bps());
        assert_eq!(l.estimate_bps(), 2_000_000.0);
        assert_eq!(l.state(), LossBasedState::DelayBasedEstimate);
    }
}
