//! When to probe and how hard: libwebrtc `ProbeController` (spec `gcc.md` §2.11, upstream
//! `goog_cc/probe_controller.cc`).
//!
//! - Initial exponential probing once the network is up: clusters at 3× and 6× the start rate.
//! - Further probing: while waiting for a result, an estimate above 0.7× the last probe rate
//!   asks for the next probe at 2× that estimate; a result that does not come within 1 s ends
//!   the probing.
//! - Periodic ALR probing (off by default for video, on for screenshare in libwebrtc): every
//!   5 s in ALR at 2× the estimate.
//! - Large-drop recovery: after the estimate falls below 0.66× and the delay detector recovers
//!   within 5 s while in ALR (or up to 3 s after it), one probe at 0.85× the pre-drop rate,
//!   at most every 5 s, unless 95 % of it is already reached.
//! - Caps: the max bitrate (5 Mbit/s when unset), 2× the max allocated bitrate; no probes
//!   while delay-limited by increasing delay, loss-limited-decreasing or RTT-backed-off;
//!   1.5× the estimate while loss-limited and increasing.
//! - Clusters: 15 ms and at least 5 packets.

use crate::ProbeCluster;
use rtclab_core::{Rate, Time, TimeDelta};

const MAX_WAITING_FOR_PROBE_RESULT: TimeDelta = TimeDelta::from_secs(1);
const BITRATE_DROP_THRESHOLD: f64 = 0.66;
const BITRATE_DROP_TIMEOUT: TimeDelta = TimeDelta::from_secs(5);
const PROBE_FRACTION_AFTER_DROP: f64 = 0.85;
const ALR_ENDED_TIMEOUT: TimeDelta = TimeDelta::from_secs(3);
const MIN_TIME_BETWEEN_ALR_PROBES: TimeDelta = TimeDelta::from_secs(5);
const PROBE_UNCERTAINTY: f64 = 0.05;
pub const DEFAULT_MAX_PROBING_BPS: f64 = 5_000_000.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeConfig {
    pub enabled: bool,
    pub first_exponential_scale: f64,
    pub second_exponential_scale: f64,
    pub further_scale: f64,
    pub further_probe_threshold: f64,
    pub periodic_alr_probing: bool,
    pub alr_interval: TimeDelta,
    pub alr_scale: f64,
    pub min_probe_packets: u32,
    pub min_probe_duration: TimeDelta,
    pub loss_limited_scale: f64,
}

impl Default for ProbeConfig {
    fn default() -> Self {
        ProbeConfig {
            enabled: true,
            first_exponential_scale: 3.0,
            second_exponential_scale: 6.0,
            further_scale: 2.0,
            further_probe_threshold: 0.7,
            periodic_alr_probing: false,
            alr_interval: TimeDelta::from_secs(5),
            alr_scale: 2.0,
            min_probe_packets: 5,
            min_probe_duration: TimeDelta::from_millis(15),
            loss_limited_scale: 1.5,
        }
    }
}

/// Why the estimate is where it is (libwebrtc `BandwidthLimitedCause`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LimitedCause {
    LossLimitedIncreasing,
    LossLimited,
    DelayLimitedDelayIncreased,
    #[default]
    DelayLimited,
    RttBackoff,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Init,
    WaitingForResult,
    Complete,
}

#[derive(Clone, Debug)]
pub struct ProbeController {
    cfg: ProbeConfig,
    state: State,
    start_bps: f64,
    max_bps: f64,
    max_allocated_bps: f64,
    estimate_bps: f64,
    cause: LimitedCause,
    min_bps_to_probe_further: f64,
    last_probing_initiated: Time,
    alr_start: Option<Time>,
    alr_end: Option<Time>,
    time_of_last_large_drop: Time,
    bitrate_before_last_large_drop: f64,
    last_drop_probe: Time,
    next_id: u32,
}

impl ProbeController {
    /// `max_allocated_bps`: the encoder's maximum (0 if none), which caps probes at twice it.
    pub fn new(cfg: ProbeConfig, start_bps: f64, max_bps: f64, max_allocated_bps: f64) -> Self {
        ProbeController {
            cfg,
            state: State::Init,
            start_bps,
            max_bps: if max_bps.is_finite() && max_bps > 0.0 {
                max_bps
            } else {
                DEFAULT_MAX_PROBING_BPS
            },
            max_allocated_bps,
            estimate_bps: start_bps,
            cause: LimitedCause::DelayLimited,
            min_bps_to_probe_further: f64::INFINITY,
            last_probing_initiated: Time::ZERO,
            alr_start: None,
            alr_end: None,
            time_of_last_large_drop: Time::ZERO,
            bitrate_before_last_large_drop: 0.0,
            last_drop_probe: Time::ZERO,
            next_id: 0,
        }
    }

    pub fn is_waiting(&self) -> bool {
        self.state == State::WaitingForResult
    }

    /// The network is up: the initial exponential probes.
    pub fn on_network_available(&mut self, now: Time) -> Vec<ProbeCluster> {
        if self.state != State::Init || !self.cfg.enabled || self.start_bps <= 0.0 {
            return Vec::new();
        }
        let mut rates = vec![self.cfg.first_exponential_scale * self.start_bps];
        if self.cfg.second_exponential_scale > 0.0 {
            rates.push(self.cfg.second_exponential_scale * self.start_bps);
        }
        self.initiate(now, &rates, true)
    }

    pub fn set_alr(&mut self, start: Option<Time>, ended: Option<Time>) {
        self.alr_start = start;
        if ended.is_some() {
            self.alr_end = ended;
        }
    }

    /// A new estimate; may ask for a further probe.
    pub fn set_estimate(&mut self, now: Time, bps: f64, cause: LimitedCause) -> Vec<ProbeCluster> {
        self.cause = cause;
        if bps < BITRATE_DROP_THRESHOLD * self.estimate_bps {
            self.time_of_last_large_drop = now;
            self.bitrate_before_last_large_drop = self.estimate_bps;
        }
        self.estimate_bps = bps;
        if self.state == State::WaitingForResult && bps > self.min_bps_to_probe_further {
            return self.initiate(now, &[self.cfg.further_scale * bps], true);
        }
        Vec::new()
    }

    /// The delay detector recovered from over-use (underuse → normal): probe back up after a
    /// large drop in ALR.
    pub fn request_probe(&mut self, now: Time) -> Vec<ProbeCluster> {
        let in_alr = self.alr_start.is_some();
        let alr_ended_recently = self.alr_end.is_some_and(|t| now - t < ALR_ENDED_TIMEOUT);
        if !(in_alr || alr_ended_recently) || self.state != State::Complete {
            return Vec::new();
        }
        let suggested = PROBE_FRACTION_AFTER_DROP * self.bitrate_before_last_large_drop;
        let min_expected = (1.0 - PROBE_UNCERTAINTY) * suggested;
        if min_expected > self.estimate_bps
            && now - self.time_of_last_large_drop < BITRATE_DROP_TIMEOUT
            && now - self.last_drop_probe > MIN_TIME_BETWEEN_ALR_PROBES
        {
            self.last_drop_probe = now;
            return self.initiate(now, &[suggested], false);
        }
        Vec::new()
    }

    /// Periodic work (libwebrtc runs it every 25 ms): result timeout, ALR probes.
    pub fn process(&mut self, now: Time) -> Vec<ProbeCluster> {
        if now - self.last_probing_initiated > MAX_WAITING_FOR_PROBE_RESULT
            && self.state == State::WaitingForResult
        {
            self.state = State::Complete;
            self.min_bps_to_probe_further = f64::INFINITY;
        }
        if self.estimate_bps <= 0.0 || self.state != State::Complete {
            return Vec::new();
        }
        if self.cfg.periodic_alr_probing {
            if let Some(start) = self.alr_start {
                let next = start.max(self.last_probing_initiated) + self.cfg.alr_interval;
                if now >= next {
                    return self.initiate(now, &[self.estimate_bps * self.cfg.alr_scale], true);
                }
            }
        }
        Vec::new()
    }

    fn initiate(&mut self, now: Time, rates: &[f64], mut probe_further: bool) -> Vec<ProbeCluster> {
        if !self.cfg.enabled {
            return Vec::new();
        }
        let mut max_probe = self.max_bps;
        if self.max_allocated_bps > 0.0 {
            max_probe = max_probe.min(2.0 * self.max_allocated_bps);
        }
        let cap = match self.cause {
            LimitedCause::RttBackoff
            | LimitedCause::DelayLimitedDelayIncreased
            | LimitedCause::LossLimited => return Vec::new(),
            LimitedCause::LossLimitedIncreasing => {
                max_probe.min(self.estimate_bps * self.cfg.loss_limited_scale)
            }
            LimitedCause::DelayLimited => f64::INFINITY,
        };
        let mut out = Vec::with_capacity(rates.len());
        for &r in rates {
            let mut r = r.min(cap);
            if r > max_probe {
                r = max_probe;
                probe_further = false;
            }
            let rate = Rate::from_bps(r.max(1.0) as u64);
            out.push(ProbeCluster {
                id: self.next_id,
                rate,
                min_bytes: (r * self.cfg.min_probe_duration.as_secs_f64() / 8.0) as u64,
                min_probes: self.cfg.min_probe_packets,
            });
            self.next_id += 1;
        }
        self.last_probing_initiated = now;
        if probe_further {
            self.state = State::WaitingForResult;
            let last = rates.last().copied().unwrap_or(0.0);
            self.min_bps_to_probe_further = cap.min(last) * self.cfg.further_probe_threshold;
        } else {
            self.state = State::Complete;
            self.min_bps_to_probe_further = f64::INFINITY;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rates(v: &[ProbeCluster]) -> Vec<u64> {
        v.iter().map(|c| c.rate.as_bps()).collect()
    }

    #[test]
    fn initial_exponential_then_further_probing() {
        let mut p = ProbeController::new(ProbeConfig::default(), 300_000.0, 5_000_000.0, 0.0);
        let t0 = Time::from_millis(100);
        let c = p.on_network_available(t0);
        assert_eq!(rates(&c), vec![900_000, 1_800_000]);
        assert_eq!(c[0].min_bytes, 1_687); // 900 kbit/s × 15 ms
        assert_eq!(c[1].id, 1);
        assert!(p.on_network_available(t0).is_empty(), "only once");
        // 1.1 Mbit/s is below 0.7 × 1.8 Mbit/s: no further probe.
        assert!(p.set_estimate(t0, 1_100_000.0, LimitedCause::DelayLimited).is_empty());
        // 1.5 Mbit/s is above: probe at 3 Mbit/s.
        let c = p.set_estimate(t0, 1_500_000.0, LimitedCause::DelayLimited);
        assert_eq!(rates(&c), vec![3_000_000]);
        // No result within 1 s: probing is complete.
        assert!(p.process(t0 + TimeDelta::from_millis(1_200)).is_empty());
        assert!(!p.is_waiting());
        assert!(p
            .set_estimate(t0 + TimeDelta::from_secs(2), 4_000_000.0, LimitedCause::DelayLimited)
            .is_empty());
    }

    #[test]
    fn caps_at_max_and_twice_the_allocation() {
        let mut p = ProbeController::new(ProbeConfig::default(), 300_000.0, 1_000_000.0, 0.0);
        let c = p.on_network_available(Time::ZERO);
        assert_eq!(rates(&c), vec![900_000, 1_000_000]);
        assert!(!p.is_waiting(), "capped at max: no further probing");
        let mut p = ProbeController::new(ProbeConfig::default(), 300_000.0, 5_000_000.0, 500_000.0);
        assert_eq!(rates(&p.on_network_available(Time::ZERO)), vec![900_000, 1_000_000]);
    }

    #[test]
    fn no_probe_while_delay_or_loss_limited() {
        let mut p = ProbeController::new(ProbeConfig::default(), 300_000.0, 5_000_000.0, 0.0);
        p.set_estimate(Time::ZERO, 300_000.0, LimitedCause::DelayLimitedDelayIncreased);
        assert!(p.on_network_available(Time::ZERO).is_empty());
    }

    #[test]
    fn periodic_alr_probes_every_five_seconds_when_enabled() {
        let cfg = ProbeConfig { periodic_alr_probing: true, ..ProbeConfig::default() };
        let mut p = ProbeController::new(cfg, 300_000.0, 5_000_000.0, 0.0);
        p.on_network_available(Time::ZERO);
        p.process(Time::from_secs(2)); // result timeout
        p.set_estimate(Time::from_secs(2), 500_000.0, LimitedCause::DelayLimited);
        p.set_alr(Some(Time::from_secs(3)), None);
        assert!(p.process(Time::from_millis(7_900)).is_empty());
        assert_eq!(rates(&p.process(Time::from_secs(8))), vec![1_000_000]);
    }

    #[test]
    fn recovers_from_a_large_drop_in_alr() {
        let mut p = ProbeController::new(ProbeConfig::default(), 300_000.0, 5_000_000.0, 0.0);
        p.on_network_available(Time::ZERO);
        p.process(Time::from_secs(2));
        p.set_estimate(Time::from_secs(10), 2_000_000.0, LimitedCause::DelayLimited);
        p.set_alr(Some(Time::from_secs(10)), None);
        p.set_estimate(Time::from_secs(11), 1_000_000.0, LimitedCause::DelayLimited);
        let c = p.request_probe(Time::from_secs(12));
        assert_eq!(rates(&c), vec![1_700_000]);
        assert!(p.request_probe(Time::from_secs(13)).is_empty(), "at most every 5 s");
    }
}
