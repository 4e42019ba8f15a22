//! The observation of a bandwidth-estimation step (spec `peers-and-test-suites.md` §3.1: the
//! OpenNetLab gym hands its agent per-packet receive statistics every 60 ms; its example agent
//! reduces them to receive rate, delay, loss and the last estimate). Ours is the same
//! reduction over the packets whose transport feedback reached the sender during the step —
//! send and arrival times are exact, only the moment they become known is one feedback
//! interval and half an RTT late, as for any send-side estimator:
//!
//! | index | value | unit |
//! |---|---|---|
//! | 0 | receive rate: bytes that arrived in the step's reports / step length | bit/s |
//! | 1 | mean one-way delay above the smallest one-way delay seen so far | ms |
//! | 2 | 95th percentile of that delay | ms |
//! | 3 | the smallest one-way delay seen so far (the base) | ms |
//! | 4 | loss ratio: packets reported lost / packets reported | 0-1 |
//! | 5 | packets reported received | count |
//! | 6 | delay trend: this step's mean delay − the previous step's (0 without both) | ms |
//! | 7 | the estimate in force during the step | bit/s |
//! | 8 | send rate: bytes sent during the step / step length | bit/s |
//!
//! The MMSys'21 challenge's network score for one step (spec §3.3, `net_eval_method.py`):
//! `20·delay_score + 20·min(1, rate/4 Mbit/s) + 30·(1 − loss)` with `delay_score = (400 −
//! min(p95 one-way delay, 400)) / (400 − min one-way delay)`, delays in ms.

use crate::PacketResult;
use rtclab_core::{Time, TimeDelta};

/// Observation width.
pub const OBS_LEN: usize = 9;
pub const FEATURE_NAMES: [&str; OBS_LEN] = [
    "recv_rate_bps",
    "delay_mean_ms",
    "delay_p95_ms",
    "delay_base_ms",
    "loss_ratio",
    "packets",
    "delay_trend_ms",
    "estimate_bps",
    "send_rate_bps",
];

/// Accumulates one step's feedback.
#[derive(Clone, Debug, Default)]
pub struct BweObserver {
    owd_ms: Vec<f64>,
    bytes: u64,
    received: u64,
    lost: u64,
    sent_bytes: u64,
    base_ms: Option<f64>,
    prev_mean: Option<f64>,
    last_obs: [f64; OBS_LEN],
    last_p95_abs: f64,
}

impl BweObserver {
    pub fn on_sent(&mut self, size: u32) {
        self.sent_bytes += size as u64;
    }

    pub fn on_feedback(&mut self, packets: &[PacketResult]) {
        for p in packets {
            match p.arrival {
                Some(a) => {
                    let d = (a - p.send_time).as_secs_f64() * 1e3;
                    self.owd_ms.push(d);
                    self.bytes += p.size as u64;
                    self.received += 1;
                    self.base_ms = Some(self.base_ms.map_or(d, |b: f64| b.min(d)));
                }
                None => self.lost += 1,
            }
        }
    }

    /// Closes the step of length `step` under estimate `estimate_bps` and returns its
    /// observation (also kept for [`BweObserver::last`]).
    pub fn close(&mut self, step: TimeDelta, estimate_bps: f64) -> [f64; OBS_LEN] {
        let secs = step.as_secs_f64().max(1e-9);
        let base = self.base_ms.unwrap_or(0.0);
        let n = self.owd_ms.len();
        let (mean, p95, p95_abs) = if n == 0 {
            (0.0, 0.0, 0.0)
        } else {
            let mean_abs = self.owd_ms.iter().sum::<f64>() / n as f64;
            self.owd_ms.sort_by(f64::total_cmp);
            let k = ((0.95 * n as f64).ceil() as usize).clamp(1, n) - 1;
            (mean_abs - base, self.owd_ms[k] - base, self.owd_ms[k])
        };
        let trend = match (self.prev_mean, n > 0) {
            (Some(prev), true) => mean - prev,
            _ => 0.0,
        };
        if n > 0 {
            self.prev_mean = Some(mean);
        }
        let reported = self.received + self.lost;
        let obs = [
            self.bytes as f64 * 8.0 / secs,
            mean,
            p95,
            base,
            if reported == 0 { 0.0 } else { self.lost as f64 / reported as f64 },
            self.received as f64,
            trend,
            estimate_bps,
            self.sent_bytes as f64 * 8.0 / secs,
        ];
        self.last_p95_abs = p95_abs;
        self.owd_ms.clear();
        self.bytes = 0;
        self.received = 0;
        self.lost = 0;
        self.sent_bytes = 0;
        self.last_obs = obs;
        obs
    }

    pub fn last(&self) -> &[f64; OBS_LEN] {
        &self.last_obs
    }

    /// The challenge's network score of the last closed step (see the module doc); a step
    /// with no packet reported scores its loss term only.
    pub fn network_score(&self) -> f64 {
        let o = &self.last_obs;
        let loss = o[4];
        let rate_score = (o[0] / 8.0 / 1000.0 / 500.0).min(1.0); // bytes per ms / 500
        let delay_score = if o[5] > 0.0 {
            let base = o[3];
            ((400.0 - self.last_p95_abs.min(400.0)) / (400.0 - base).max(1e-9)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        20.0 * delay_score + 20.0 * rate_score + 30.0 * (1.0 - loss)
    }
}

/// The step boundaries: the first at `start + step`.
#[derive(Clone, Copy, Debug)]
pub struct StepClock {
    pub step: TimeDelta,
    pub next: Option<Time>,
}

impl StepClock {
    pub fn new(step: TimeDelta) -> Self {
        StepClock { step, next: None }
    }
    /// Arms the clock on the first call; true when `now` reached the boundary (then moves it).
    pub fn due(&mut self, now: Time) -> bool {
        match self.next {
            None => {
                self.next = Some(now + self.step);
                false
            }
            Some(t) if now >= t => {
                self.next = Some(t + self.step);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pr(seq: u64, sent_ms: i64, arr_ms: Option<i64>) -> PacketResult {
        PacketResult {
            seq,
            send_time: Time::ZERO + TimeDelta::from_millis(sent_ms),
            arrival: arr_ms.map(|a| Time::ZERO + TimeDelta::from_millis(a)),
            size: 1000,
            probe_cluster: None,
            ce: false,
        }
    }

    #[test]
    fn one_step_by_hand() {
        let mut o = BweObserver::default();
        o.on_sent(1000);
        o.on_sent(1000);
        // One-way delays 20, 30, 40 ms and one loss.
        o.on_feedback(&[
            pr(0, 0, Some(20)),
            pr(1, 10, Some(40)),
            pr(2, 20, Some(60)),
            pr(3, 30, None),
        ]);
        let v = o.close(TimeDelta::from_millis(60), 1e6);
        assert!((v[0] - 3000.0 * 8.0 / 0.06).abs() < 1e-6);
        assert!((v[1] - 10.0).abs() < 1e-9); // mean 30 − base 20
        assert!((v[2] - 20.0).abs() < 1e-9); // p95 = 40 − 20
        assert_eq!((v[3], v[4], v[5], v[7]), (20.0, 0.25, 3.0, 1e6));
        assert!((v[8] - 2000.0 * 8.0 / 0.06).abs() < 1e-6);
        // delay score (400 − 40)/(400 − 20); rate 400 kbit/s = 50 B/ms → 0.1; loss 0.25.
        let s = 20.0 * 360.0 / 380.0 + 20.0 * 0.1 + 30.0 * 0.75;
        assert!((o.network_score() - s).abs() < 1e-9, "{}", o.network_score());
        let v2 = o.close(TimeDelta::from_millis(60), 1e6);
        assert_eq!((v2[0], v2[5], v2[6]), (0.0, 0.0, 0.0));
    }
}
