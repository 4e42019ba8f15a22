//! TCP Prague: the scalable congestion control of L4S.
//!
//! Lineage: RFC 9331 §4 (the "Prague L4S requirements": ECT(1), accurate ECN feedback, a
//! scalable response, RTT independence); Linux `net/ipv4/tcp_prague.c` (L4S team, Nokia Bell
//! Labs; version 0.7), which this follows in its default fractional-window mode; DCTCP
//! (RFC 8257) for the marking-fraction EWMA it evolved from.
//!
//! Per acknowledgement (Linux `prague_cong_control`; the transport feeds the CE-marked packets
//! the receiver reported through AccECN in `FeedbackReport::ce_packets`):
//!
//! ```text
//! CE reported, not in CWR or recovery  → CWR until snd_una passes snd_nxt:
//!                                         frac_cwnd −= α·frac_cwnd/2       (prague_enter_cwr;
//!                                         once per 25 ms once RTT-independent)
//! first CE ever                         → frac_cwnd /= 2                    (alpha_mode 0)
//! acked −= CE packets; if acked > 0, not in loss, window-limited:
//!     slow start (cwnd < ssthresh)      → cwnd += acked (Linux tcp_slow_start), frac = cwnd
//!     else                              → frac_cwnd += acked · ai / frac_cwnd
//! cwnd steps by one packet per ACK towards max(2, ⌈frac_cwnd⌉); a step down sets ssthresh
//! end of a round (snd_una ≥ snd_nxt noted at its start; once RTT-independent also ≥ 25 ms
//! since the last update), after the first CE:
//!     α += g·(F − α)     F = CE packets / delivered packets in the round, g = 1/16
//! pacing rate = mtu · max(⌊frac_cwnd⌋, in flight) / srtt, doubled while cwnd < ssthresh/2
//! ```
//!
//! RTT independence: after slow start and `rtt_transition` (4) rounds, a flow whose smoothed RTT
//! is below the target (25 ms) grows as if its RTT were the target: `ai = (srtt/target)²`
//! packets per window instead of 1. A loss (recovery) halves `frac_cwnd` and stops growth
//! until recovery ends; a timeout sets cwnd to 1 as well (Linux `tcp_enter_loss` with
//! `prague_enter_loss`); `ssthresh` is left as it is (`prague_ssthresh`).
//!
//! Not modelled: the rate-based mode Linux switches to below 4 packets of window
//! (`prague_cwnd_mode` 2), its ±3 % pacing wobble, and segment-size reduction at low rates;
//! TSO burst sizing (rtclab sends one packet at a time).

use crate::factory::{BoxedController, ControllerArgs, Factory};
use crate::{
    named, slow_start, window_metrics, CcMetrics, CcTarget, CongestionController, CongestionEvent,
    FeedbackReport, INFINITE_SSTHRESH,
};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Rate, Time, TimeDelta};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueConfig {
    pub packet_size: u32,
    pub initial_window: u32,
    /// RTT independence on (Linux: always, after `rtt_transition` rounds).
    pub rtt_independence: bool,
    /// The RTT a shorter-RTT flow behaves as if it had (Linux `prague_rtt_target`, 25 ms).
    pub rtt_target: TimeDelta,
    /// Rounds after slow start before RTT independence starts (`prague_rtt_transition`, 4).
    pub rtt_transition: u32,
    /// EWMA gain of the marking fraction (1/16).
    pub g: f64,
    /// Pace packets at the rate above (Linux: always, through the fq qdisc).
    pub pacing: bool,
}

impl Default for PragueConfig {
    fn default() -> Self {
        PragueConfig {
            packet_size: 1500,
            initial_window: 10,
            rtt_independence: true,
            rtt_target: TimeDelta::from_millis(25),
            rtt_transition: 4,
            g: 1.0 / 16.0,
            pacing: true,
        }
    }
}

/// Settings a flow's `[flows.params]` may give.
pub static PRAGUE_PARAMS: &[Param<PragueConfig>] = &[
    param!(PragueConfig, "rtt_independence", "grow as if the RTT were rtt_target_ms when it is shorter (true)", flag rtt_independence),
    param!(
        PragueConfig,
        "rtt_target_ms",
        "RTT-independence target, ms (25)",
        Real,
        0.1,
        10_000.0,
        |c| c.rtt_target.as_millis_f64(),
        |c, v| c.rtt_target = ms(v)
    ),
    param!(
        PragueConfig,
        "rtt_transition",
        "rounds after slow start before RTT independence (4)",
        Integer,
        0.0,
        1_000_000.0,
        |c| c.rtt_transition as f64,
        |c, v| c.rtt_transition = v as u32
    ),
    param!(
        PragueConfig,
        "g",
        "EWMA gain of the CE fraction alpha (0.0625)",
        Real,
        0.0001,
        1.0,
        |c| c.g,
        |c, v| c.g = v
    ),
    param!(PragueConfig, "pacing", "pace at mtu·cwnd/srtt (true)", flag pacing),
];

/// Linux `MINIMUM_RATE`: 100 kbit/s.
const MINIMUM_RATE_BYTES: u64 = 12_500;
/// Linux `MAX_SCALED_RTT`: no RTT scaling above 100 ms.
const MAX_SCALED_RTT: TimeDelta = TimeDelta::from_millis(100);

#[derive(Clone, Debug)]
pub struct Prague {
    cfg: PragueConfig,
    /// The window the transport uses (packets) and Prague's fractional one.
    cwnd: u32,
    frac_cwnd: f64,
    ssthresh: u32,
    /// The CE fraction EWMA.
    alpha: f64,
    saw_ce: bool,
    /// Rounds since slow start ended (counts only outside slow start).
    round: u32,
    /// The round ends when snd_una reaches this.
    next_seq: u64,
    delivered: u64,
    delivered_ce: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    alpha_stamp: Time,
    /// CWR: until snd_una reaches `cwr_end`; the last CWR entry.
    in_cwr: bool,
    cwr_end: u64,
    cwr_stamp: Option<Time>,
    in_loss: bool,
    srtt: Option<TimeDelta>,
    pacing_rate: Option<Rate>,
    /// CWR entries that reduced the window (for the series).
    reductions: u64,
}

impl Prague {
    pub fn new(cfg: PragueConfig) -> Self {
        let iw = cfg.initial_window.max(2);
        Prague {
            cfg,
            cwnd: iw,
            frac_cwnd: iw as f64,
            ssthresh: INFINITE_SSTHRESH,
            alpha: 0.0,
            saw_ce: false,
            round: 0,
            next_seq: 0,
            delivered: 0,
            delivered_ce: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            alpha_stamp: Time::ZERO,
            in_cwr: false,
            cwr_end: 0,
            cwr_stamp: None,
            in_loss: false,
            srtt: None,
            pacing_rate: None,
            reductions: 0,
        }
    }

    /// Built from a flow's `[flows.params]` (see [`PRAGUE_PARAMS`]).
    pub fn from_args(a: &ControllerArgs) -> Result<Self, String> {
        let mut cfg = PragueConfig {
            packet_size: a.packet_size,
            initial_window: a.initial_window,
            ..Default::default()
        };
        rtclab_core::params::apply(PRAGUE_PARAMS, &mut cfg, a.params)?;
        Ok(Prague::new(cfg))
    }

    /// The registry factory (its line in `capabilities::BUILTIN`).
    pub fn factory() -> Factory {
        std::sync::Arc::new(|a: &ControllerArgs| {
            Prague::from_args(a).map(|p| Box::new(p) as BoxedController)
        })
    }

    pub fn cwnd_packets(&self) -> u32 {
        self.cwnd
    }
    pub fn alpha(&self) -> f64 {
        self.alpha
    }
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `prague_is_rtt_indep`.
    fn rtt_indep(&self) -> bool {
        self.cfg.rtt_independence && !self.in_slow_start() && self.round >= self.cfg.rtt_transition
    }

    /// Packets added per window of non-marked ACKs (Linux `prague_ai_ack_increase`).
    fn ai(&self) -> f64 {
        match self.srtt {
            Some(rtt)
                if self.cfg.rtt_independence
                    && self.round >= self.cfg.rtt_transition
                    && rtt > TimeDelta::ZERO
                    && rtt <= MAX_SCALED_RTT
                    && rtt < self.cfg.rtt_target =>
            {
                let r = rtt.as_secs_f64() / self.cfg.rtt_target.as_secs_f64();
                r * r
            }
            _ => 1.0,
        }
    }

    /// Linux `prague_enter_cwr`.
    fn enter_cwr(&mut self, now: Time) {
        if self.rtt_indep() && self.cwr_stamp.is_some_and(|t| now - t < self.cfg.rtt_target) {
            return;
        }
        self.cwr_stamp = Some(now);
        self.reductions += 1;
        self.frac_cwnd -= self.alpha * self.frac_cwnd / 2.0;
    }

    /// Linux `prague_update_cwnd`.
    fn update_cwnd(&mut self, fb: &FeedbackReport) {
        let mut acked = fb.acked_packets as i64;
        if fb.ce_packets > 0 {
            if !self.saw_ce {
                self.frac_cwnd /= 2.0;
            }
            self.saw_ce = true;
            acked -= fb.ce_packets as i64;
        }
        if acked > 0 && !self.in_loss && !fb.app_limited {
            let mut acked = acked as u32;
            if self.in_slow_start() {
                acked = slow_start(&mut self.cwnd, self.ssthresh, acked);
                self.frac_cwnd = self.cwnd as f64;
                if acked == 0 {
                    return;
                }
            }
            if self.frac_cwnd > 0.0 {
                self.frac_cwnd += acked as f64 * self.ai() / self.frac_cwnd;
            }
        }
        // Step-wise towards the fractional window (rounded up, at least 2).
        let target = (self.frac_cwnd.ceil() as u32).max(2);
        if self.cwnd > target {
            self.cwnd -= 1;
            self.ssthresh = self.cwnd;
        } else if self.cwnd < target {
            self.cwnd += 1;
        }
    }

    /// Linux `prague_update_alpha` and `prague_new_round`.
    fn end_round(&mut self, now: Time, snd_nxt: u64) {
        if self.saw_ce {
            let acked = (self.delivered - self.old_delivered).max(1);
            let f = (self.delivered_ce - self.old_delivered_ce) as f64 / acked as f64;
            self.alpha = (self.alpha + self.cfg.g * (f - self.alpha)).clamp(0.0, 1.0);
            self.alpha_stamp = now;
        }
        self.next_seq = snd_nxt;
        self.old_delivered = self.delivered;
        self.old_delivered_ce = self.delivered_ce;
        if !self.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
    }

    /// Linux `prague_update_pacing_rate` (fractional-window mode).
    fn update_pacing(&mut self, in_flight: u64) {
        let Some(srtt) = self.srtt.filter(|r| *r > TimeDelta::ZERO) else { return };
        let pkts = (self.frac_cwnd.floor() as u64).max(in_flight);
        let bytes = pkts * self.cfg.packet_size as u64;
        let mut rate =
            Rate::from_bytes_per(bytes, srtt).max(Rate::from_bps(MINIMUM_RATE_BYTES * 8));
        if self.cwnd < self.ssthresh / 2 {
            rate = Rate::from_bps(rate.as_bps().saturating_mul(2));
        }
        self.pacing_rate = Some(rate);
    }
}

impl CongestionController for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        if fb.srtt.is_some() {
            self.srtt = fb.srtt;
        }
        self.delivered += fb.acked_packets as u64;
        self.delivered_ce += fb.ce_packets as u64;
        // State changes first, as Linux's tcp_fastretrans_alert runs before cong_control.
        if self.in_cwr && fb.snd_una >= self.cwr_end {
            self.in_cwr = false;
        }
        if !fb.in_recovery {
            self.in_loss = false;
        }
        if fb.ce_packets > 0 && !self.in_cwr && !fb.in_recovery {
            self.enter_cwr(now);
            self.in_cwr = true;
            self.cwr_end = fb.snd_nxt;
        }
        self.update_cwnd(fb);
        let target_elapsed = now - self.alpha_stamp >= self.cfg.rtt_target;
        if fb.snd_una >= self.next_seq && (!self.rtt_indep() || target_elapsed) {
            self.end_round(now, fb.snd_nxt);
        }
        self.update_pacing(fb.bytes_in_flight / self.cfg.packet_size.max(1) as u64);
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        // prague_enter_loss: halve the fractional window; no growth until recovery ends.
        self.frac_cwnd -= self.frac_cwnd / 2.0;
        self.in_loss = true;
        if let CongestionEvent::Timeout = ev {
            // tcp_enter_loss: one packet, then a step per ACK towards the fractional window.
            self.cwnd = 1;
        }
    }

    fn target(&self) -> CcTarget {
        CcTarget {
            cwnd_bytes: Some(self.cwnd as u64 * self.cfg.packet_size as u64),
            pacing_rate: if self.cfg.pacing { self.pacing_rate } else { None },
            ..Default::default()
        }
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            pacing_rate: self.pacing_rate,
            extra: named(&[
                Some(("prague_alpha", self.alpha)),
                Some(("prague_frac_cwnd_packets", self.frac_cwnd)),
                Some(("prague_rounds", self.round as f64)),
                Some(("prague_rtt_independent", self.rtt_indep() as u8 as f64)),
                Some(("prague_ai_packets", self.ai())),
                Some(("prague_cwr_reductions", self.reductions as f64)),
            ]),
            ..window_metrics(self.cwnd, self.ssthresh, self.cfg.packet_size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round of ACKs, one per packet, the first `marked` of them reporting CE.
    fn round(p: &mut Prague, snd_una: &mut u64, marked: u32, rtt_ms: i64, t: &mut Time) {
        round_with(p, snd_una, rtt_ms, t, |i| i < marked)
    }

    /// One round of ACKs, one per packet; `ce(i)`: the i-th reports CE.
    fn round_with(
        p: &mut Prague,
        snd_una: &mut u64,
        rtt_ms: i64,
        t: &mut Time,
        mut ce: impl FnMut(u32) -> bool,
    ) {
        let n = p.cwnd_packets();
        for i in 0..n {
            *snd_una += 1;
            // A window stays in flight: the next new packet is a window ahead.
            let snd_nxt = *snd_una + n as u64;
            *t += TimeDelta::from_micros(rtt_ms * 1000 / n as i64);
            let fb = FeedbackReport {
                acked_packets: 1,
                acked_bytes: 1500,
                rtt: Some(TimeDelta::from_millis(rtt_ms)),
                srtt: Some(TimeDelta::from_millis(rtt_ms)),
                snd_una: *snd_una,
                snd_nxt,
                ce_packets: ce(i) as u32,
                bytes_in_flight: (n as u64) * 1500,
                ..Default::default()
            };
            p.on_feedback(*t, &fb);
        }
    }

    #[test]
    fn first_mark_halves_and_ends_slow_start() {
        let mut p = Prague::new(PragueConfig::default());
        let (mut una, mut t) = (0, Time::ZERO);
        round(&mut p, &mut una, 0, 40, &mut t);
        assert_eq!(p.cwnd_packets(), 20, "slow start doubles");
        round(&mut p, &mut una, 1, 40, &mut t);
        // The first CE halves the fractional window; the window steps down towards it.
        assert!(p.frac_cwnd() < 25.0, "{}", p.frac_cwnd());
        assert!(p.ssthresh < INFINITE_SSTHRESH, "slow start is over");
    }

    /// DCTCP's law: with a steady marking fraction F the window reduction per round is
    /// α/2 with α → F, and the additive increase is one packet per round.
    #[test]
    fn alpha_converges_to_the_marking_fraction() {
        let mut p = Prague::new(PragueConfig { rtt_independence: false, ..Default::default() });
        let (mut una, mut t) = (0, Time::ZERO);
        round(&mut p, &mut una, 1, 40, &mut t);
        // Every fourth packet CE-marked, across rounds.
        let mut k = 0u64;
        for _ in 0..300 {
            round_with(&mut p, &mut una, 40, &mut t, |_| {
                k += 1;
                k.is_multiple_of(4)
            });
        }
        assert!((p.alpha() - 0.25).abs() < 0.05, "alpha {}", p.alpha());
        // Equilibrium: growth (1 − F)·1 per round balances α/2·W once per round → W ≈ 6.
        let w = p.frac_cwnd();
        assert!((3.0..=12.0).contains(&w), "window {w}");
    }

    #[test]
    fn short_rtt_flows_grow_as_if_at_the_target_rtt() {
        let mut a = Prague::new(PragueConfig::default());
        let mut b = Prague::new(PragueConfig { rtt_independence: false, ..Default::default() });
        for p in [&mut a, &mut b] {
            let (mut una, mut t) = (0, Time::ZERO);
            round(p, &mut una, 1, 5, &mut t);
            for _ in 0..10 {
                round(p, &mut una, 0, 5, &mut t);
            }
        }
        // After the transition a 5 ms flow adds (5/25)² = 0.04 packet per round, not 1.
        assert!(a.frac_cwnd() < b.frac_cwnd() - 3.0, "{} vs {}", a.frac_cwnd(), b.frac_cwnd());
    }

    #[test]
    fn loss_halves_and_timeout_restarts_from_one() {
        let mut p = Prague::new(PragueConfig::default());
        let (mut una, mut t) = (0, Time::ZERO);
        round(&mut p, &mut una, 0, 40, &mut t);
        let before = p.frac_cwnd();
        p.on_congestion_event(t, &CongestionEvent::Loss { bytes_in_flight: 0 });
        assert_eq!(p.frac_cwnd(), before / 2.0);
        p.on_congestion_event(t, &CongestionEvent::Timeout);
        assert_eq!(p.cwnd_packets(), 1);
    }

    #[test]
    fn params_are_checked() {
        let bad = [("rtt_target_ms".to_string(), rtclab_core::params::Value::Num(-1.0))];
        let args = ControllerArgs {
            flow: 0,
            role: crate::factory::Role::Window,
            packet_size: 1500,
            initial_window: 10,
            params: &bad,
            seed: 0,
            media: None,
        };
        let e = Prague::from_args(&args).unwrap_err();
        assert!(e.contains("rtt_target_ms"), "{e}");
    }
}
