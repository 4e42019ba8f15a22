//! QLibra: self-congestion-aware rate control on top of NewReno (the fairness study, seed
//! `001_91b98b49efd2e704.txt` §4; spec `copa-qlibra-tcp.md` §2, canonical pseudo-code §2.4).
//!
//! Time is cut into slots. At each slot end the slot's loss rate `l0` (lost / (acked + lost),
//! at least `n_min` packets, else the slot is merged with the next) is compared with the
//! previous one `l1`; only a change above `threshold` runs Algorithm 1:
//!
//! ```text
//! literal rule: stay/enter NON_SELF if (SELF and l1 < l0) or (NON_SELF and (l2 − l1)(l1 − l0) < 0)
//! text rule:    the second term is "NON_SELF and not (l2 < l1 < l0)"
//! entering/staying NON_SELF: cwnd ×= min(speedup, speedup_max), speedup = l0/l1 (ratio),
//!                            max(1, l0/l1) (ratio_ge1) or (1 − l1)/(1 − l0) (goodput);
//! otherwise SELF.
//! ```
//! A loss in SELF is a normal NewReno decrease (×0.5, once per recovery period, which the
//! transport delimits); a loss in NON_SELF only ends slow start (ssthresh = min(ssthresh,
//! cwnd)). A retransmission timeout (persistent congestion) always resets to the minimum.
//! The initial state is NON_SELF (the algorithm's input `self_congested_{0} = false`). The
//! ambiguities the spec resolves (`while` → once per slot, rule, speedup direction and cap,
//! slot length, threshold) are all switches; defaults are the spec's.

use crate::{
    window_metrics, CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport,
    INFINITE_SSTHRESH,
};
use rtclab_core::{Time, TimeDelta};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QlibraRule {
    /// Algorithm 1 as listed (product of successive loss changes < 0).
    Literal,
    /// The prose: leave NON_SELF only after two consecutive rises.
    Text,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QlibraSpeedup {
    /// loss_i / loss_{i−1} (literal; can shrink the window on a falling loss rate).
    Ratio,
    /// max(1, loss_i / loss_{i−1}) (the prose's "increase proportionally").
    RatioAtLeastOne,
    /// (1 − loss_{i−1}) / (1 − loss_i): a non-faithful ablation.
    Goodput,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QlibraConfig {
    pub packet_size: u32,
    pub initial_window: u32,
    pub slot: TimeDelta,
    pub threshold: f64,
    pub n_min: u32,
    pub rule: QlibraRule,
    pub speedup: QlibraSpeedup,
    pub speedup_max: f64,
    /// Multiplicative decrease on a self-congested loss (RFC 9002 kLossReductionFactor).
    pub md: f64,
    pub min_cwnd: f64,
    pub max_cwnd: f64,
}

impl Default for QlibraConfig {
    fn default() -> Self {
        QlibraConfig {
            packet_size: 1500,
            initial_window: 10,
            slot: TimeDelta::from_secs(1),
            threshold: 0.02,
            n_min: 50,
            rule: QlibraRule::Literal,
            speedup: QlibraSpeedup::Ratio,
            speedup_max: 2.0,
            md: 0.5,
            min_cwnd: 2.0,
            max_cwnd: 100_000.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Qlibra {
    cfg: QlibraConfig,
    cwnd: f64,
    ssthresh: f64,
    self_congested: bool,
    /// loss_{i−2}, loss_{i−1}
    l2: f64,
    l1: f64,
    slot_start: Option<Time>,
    slot_acked: u64,
    slot_lost: u64,
    /// The last speedup before the cap (for the time series).
    last_speedup: f64,
    slots: u64,
}

impl Qlibra {
    pub fn new(cfg: QlibraConfig) -> Self {
        Qlibra {
            cwnd: cfg.initial_window.max(1) as f64,
            ssthresh: INFINITE_SSTHRESH as f64,
            self_congested: false,
            l2: 0.0,
            l1: 0.0,
            slot_start: None,
            slot_acked: 0,
            slot_lost: 0,
            last_speedup: 1.0,
            slots: 0,
            cfg,
        }
    }

    pub fn cwnd_packets(&self) -> f64 {
        self.cwnd
    }
    pub fn self_congested(&self) -> bool {
        self.self_congested
    }
    pub fn last_speedup(&self) -> f64 {
        self.last_speedup
    }

    /// Algorithm 1 for a slot whose loss rate is `l0` (one evaluation per slot).
    pub fn on_slot_loss(&mut self, l0: f64) {
        let (l2, l1) = (self.l2, self.l1);
        if (l1 - l0).abs() > self.cfg.threshold {
            let keep_non = !self.self_congested
                && match self.cfg.rule {
                    QlibraRule::Literal => (l2 - l1) * (l1 - l0) < 0.0,
                    QlibraRule::Text => !(l2 < l1 && l1 < l0),
                };
            if (self.self_congested && l1 < l0) || keep_non {
                self.self_congested = false;
                let mut s = if l1 == 0.0 { self.cfg.speedup_max } else { l0 / l1 };
                match self.cfg.speedup {
                    QlibraSpeedup::Ratio => {}
                    QlibraSpeedup::RatioAtLeastOne => s = s.max(1.0),
                    QlibraSpeedup::Goodput => s = (1.0 - l1) / (1.0 - l0).max(1e-9),
                }
                self.last_speedup = s;
                let s = s.min(self.cfg.speedup_max);
                self.cwnd = (self.cwnd * s).clamp(self.cfg.min_cwnd, self.cfg.max_cwnd);
            } else {
                self.self_congested = true;
            }
        }
        self.l2 = l1;
        self.l1 = l0;
        self.slots += 1;
    }

    fn account(&mut self, now: Time, acked: u64, lost: u64) {
        let start = *self.slot_start.get_or_insert(now);
        self.slot_acked += acked;
        self.slot_lost += lost;
        if now - start >= self.cfg.slot {
            let n = self.slot_acked + self.slot_lost;
            if n >= self.cfg.n_min as u64 {
                self.on_slot_loss(self.slot_lost as f64 / n as f64);
                self.slot_acked = 0;
                self.slot_lost = 0;
            }
            // Too few packets: the slot extends into the next one.
            self.slot_start = Some(now);
        }
    }
}

impl CongestionController for Qlibra {
    fn name(&self) -> &'static str {
        "qlibra"
    }

    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        self.account(now, fb.acked_packets as u64, fb.lost_packets as u64);
        if fb.in_recovery || fb.app_limited || fb.acked_packets == 0 {
            return;
        }
        let acked = fb.acked_packets as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd = (self.cwnd + acked).min(self.ssthresh.max(self.cwnd));
        } else {
            self.cwnd += acked / self.cwnd;
        }
        self.cwnd = self.cwnd.min(self.cfg.max_cwnd);
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        match ev {
            CongestionEvent::Loss { .. } => {
                if self.self_congested {
                    self.ssthresh = (self.cwnd * self.cfg.md).max(self.cfg.min_cwnd);
                    self.cwnd = self.ssthresh;
                } else {
                    self.ssthresh = self.ssthresh.min(self.cwnd);
                }
            }
            CongestionEvent::Timeout => {
                self.ssthresh = (self.cwnd * self.cfg.md).max(self.cfg.min_cwnd);
                self.cwnd = self.cfg.min_cwnd;
            }
        }
    }

    fn target(&self) -> CcTarget {
        CcTarget {
            cwnd_bytes: Some((self.cwnd * self.cfg.packet_size as f64) as u64),
            ..Default::default()
        }
    }

    fn metrics(&self) -> CcMetrics {
        let ss = if self.ssthresh >= INFINITE_SSTHRESH as f64 {
            INFINITE_SSTHRESH
        } else {
            self.ssthresh as u32
        };
        let mut m = window_metrics(self.cwnd.round() as u32, ss, self.cfg.packet_size);
        m.cwnd_bytes = Some((self.cwnd * self.cfg.packet_size as f64) as u64);
        m.state = if self.self_congested { 2 } else { 3 };
        m.extra = crate::named(&[
            Some(("self_congested", self.self_congested as u8 as f64)),
            Some(("slot_loss", self.l1)),
            Some(("speedup", self.last_speedup)),
        ]);
        m
    }
}

/// Every QLibra tunable by name (see [`crate::params`]).
pub static QLIBRA_PARAMS: &[crate::params::Param<QlibraConfig>] = {
    use crate::params::{ms, param};
    &[
        param!(
            QlibraConfig,
            "slot_ms",
            "slot length, ms (1000)",
            Real,
            1.0,
            600000.0,
            |c| c.slot.as_millis_f64(),
            |c, v| c.slot = ms(v)
        ),
        param!(
            QlibraConfig,
            "threshold",
            "loss-rate change that runs the classifier (0.02)",
            Real,
            0.0,
            1.0,
            |c| c.threshold,
            |c, v| c.threshold = v
        ),
        param!(
            QlibraConfig,
            "n_min",
            "packets a slot needs, else it is merged with the next (50)",
            Integer,
            1.0,
            1000000.0,
            |c| c.n_min as f64,
            |c, v| c.n_min = v as u32
        ),
        param!(
            QlibraConfig,
            "text_rule",
            "leave NON_SELF only after two rises (the prose) instead of the listing (false)",
            Bool,
            0.0,
            1.0,
            |c| (c.rule == QlibraRule::Text) as u8 as f64,
            |c, v| c.rule = if v != 0.0 { QlibraRule::Text } else { QlibraRule::Literal }
        ),
        param!(
            QlibraConfig,
            "speedup_at_least_one",
            "never shrink the window on a speedup (false)",
            Bool,
            0.0,
            1.0,
            |c| (c.speedup == QlibraSpeedup::RatioAtLeastOne) as u8 as f64,
            |c, v| c.speedup =
                if v != 0.0 { QlibraSpeedup::RatioAtLeastOne } else { QlibraSpeedup::Ratio }
        ),
        param!(
            QlibraConfig,
            "speedup_max",
            "cap on the speedup factor (2)",
            Real,
            1.0,
            100.0,
            |c| c.speedup_max,
            |c, v| c.speedup_max = v
        ),
        param!(
            QlibraConfig,
            "md",
            "multiplicative decrease on a self-congested loss (0.5)",
            Real,
            0.05,
            0.99,
            |c| c.md,
            |c, v| c.md = v
        ),
        param!(
            QlibraConfig,
            "min_cwnd",
            "smallest window, packets (2)",
            Real,
            1.0,
            1000.0,
            |c| c.min_cwnd,
            |c, v| c.min_cwnd = v
        ),
    ]
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_is_documented() {
        crate::params::assert_documented(QLIBRA_PARAMS);
    }

    /// The spec's unit-test vectors (§2.4): threshold 0.02, literal rule, ratio speedup capped
    /// at 2.
    #[test]
    fn algorithm_1_vectors() {
        let mut q = Qlibra::new(QlibraConfig::default());
        q.cwnd = 100.0;
        // 0, 0, 0.05 from the initial NON_SELF: product 0 → SELF.
        q.on_slot_loss(0.0);
        q.on_slot_loss(0.05);
        assert!(q.self_congested());
        assert_eq!(q.cwnd_packets(), 100.0);
        // 0.05 → 0.01 in SELF: falling, stay SELF.
        q.on_slot_loss(0.01);
        assert!(q.self_congested());
        // 0.01 → 0.11 in SELF: rising → NON_SELF, speedup 11 capped at 2.
        q.on_slot_loss(0.11);
        assert!(!q.self_congested());
        assert_eq!(q.cwnd_packets(), 200.0);
        assert!((q.last_speedup() - 11.0).abs() < 1e-9);
        // 0.11 → 0.115: |Δ| ≤ 0.02, nothing.
        q.on_slot_loss(0.115);
        assert!(!q.self_congested());
        assert_eq!(q.cwnd_packets(), 200.0);
        // 0.11, 0.115 → 0.20: product > 0 → SELF.
        q.on_slot_loss(0.20);
        assert!(q.self_congested());
    }

    #[test]
    fn v_and_lambda_shapes_keep_non_self() {
        let mut q = Qlibra::new(QlibraConfig::default());
        q.cwnd = 100.0;
        // 0.10, 0.05 → 0.12 (V): stay NON_SELF, speedup 2.4 → 2.
        q.l2 = 0.10;
        q.l1 = 0.05;
        q.on_slot_loss(0.12);
        assert!(!q.self_congested());
        assert_eq!(q.cwnd_packets(), 200.0);
        // 0.05, 0.12 → 0.06 (Λ): stay NON_SELF, literal speedup 0.5 shrinks the window…
        q.on_slot_loss(0.06);
        assert!(!q.self_congested());
        assert_eq!(q.cwnd_packets(), 100.0);
        // …unless speedup_at_least_one.
        let mut q = Qlibra::new(QlibraConfig {
            speedup: QlibraSpeedup::RatioAtLeastOne,
            ..Default::default()
        });
        q.cwnd = 100.0;
        q.l2 = 0.05;
        q.l1 = 0.12;
        q.on_slot_loss(0.06);
        assert_eq!(q.cwnd_packets(), 100.0);
    }

    #[test]
    fn text_rule_keeps_non_self_on_a_jump_from_flat() {
        let mut q = Qlibra::new(QlibraConfig { rule: QlibraRule::Text, ..Default::default() });
        q.cwnd = 10.0;
        q.on_slot_loss(0.0);
        q.on_slot_loss(0.05);
        assert!(!q.self_congested());
        assert_eq!(q.cwnd_packets(), 20.0, "speedup_max from a zero loss rate");
    }

    #[test]
    fn losses_halve_only_when_self_congested_and_slots_need_enough_packets() {
        let mut q = Qlibra::new(QlibraConfig::default());
        q.cwnd = 40.0;
        let loss = CongestionEvent::Loss { bytes_in_flight: 0 };
        q.on_congestion_event(Time::ZERO, &loss);
        assert_eq!(q.cwnd_packets(), 40.0, "NON_SELF: no decrease");
        q.self_congested = true;
        q.on_congestion_event(Time::ZERO, &loss);
        assert_eq!(q.cwnd_packets(), 20.0);
        // A slot of 30 packets is merged with the next; 30 + 30 = 60 ≥ 50 evaluates.
        let mut q = Qlibra::new(QlibraConfig::default());
        let fb = |acked, lost| FeedbackReport {
            acked_packets: acked,
            lost_packets: lost,
            app_limited: true,
            ..Default::default()
        };
        q.on_feedback(Time::ZERO, &fb(0, 0));
        q.on_feedback(Time::from_millis(1_000), &fb(27, 3));
        assert_eq!(q.slots, 0);
        q.on_feedback(Time::from_millis(2_000), &fb(27, 3));
        assert_eq!(q.slots, 1);
        assert!((q.l1 - 0.1).abs() < 1e-12);
    }
}
