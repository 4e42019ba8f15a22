//! NADA, Network-Assisted Dynamic Adaptation: RMCAT's unified congestion control for real-time
//! media, driven by per-packet feedback at the sender.
//!
//! Lineage: X. Zhu, R. Pan, M. Ramalho, S. Mena, P. Jones, J. Fu, S. D'Aronco, *NADA: A Unified
//! Congestion Control Scheme for Real-Time Media*, RFC 8698 (2020), §4 and Figure 3; its
//! reference implementation, cisco/ns3-rmcat's `NadaController` over `SenderBasedController`
//! (draft -05; Apache-2.0), whose sender-based form this follows: the receiver's calculations
//! (RFC 8698 §4.2) run at the sender on per-packet feedback (RFC 8888 / TWCC here).
//!
//! ```text
//! per reported packet (history: the last 500 ms of sends that arrived):
//!     owd = arrival − send,  rtt = now − send,  d_base = min owd (reset with the history)
//! every feedback at least DELTA (100 ms) after the last update:
//!     d_queue = min over the last 15 packets of (owd − d_base);  rtt = min of the last 15
//!     r_recv  = bytes received in the history / its arrival span
//!     p_loss  += ALPHA·(lost/sent in the history − p_loss);  p_mark likewise for CE
//!     x_curr  = d_queue, warped to QTH·exp(−LAMBDA·(d − QTH)/QTH) above QTH while losses are
//!               recent (current loss interval < MULTILOSS × TFRC average interval, blended back
//!               over one more interval), + DLOSS·(p_loss/PLRREF)² + DMARK·(p_mark/PMRREF)²,
//!               at most XMAX
//!     no loss and every owd − d_base ≤ QEPS in the history → accelerated ramp-up:
//!         γ = min(GAMMA_MAX, QBOUND/(rtt + DELTA + DFILT));  r_ref = max(r_ref, (1+γ)·r_recv)
//!     else gradual update (δ = time since the last update):
//!         x_offset = x_curr − PRIO·XREF·RMAX/r_ref;  x_diff = x_curr − x_prev
//!         r_ref −= KAPPA·(δ/TAU)·(x_offset/TAU)·r_ref + KAPPA·ETA·(x_diff/TAU)·r_ref
//!     r_ref clipped to [RMIN, RMAX]
//! ```
//!
//! Sender (RFC 8698 §5.2, eqs. 8-9), with L the bytes waiting in the sender's pacer queue (its
//! rate-shaping buffer), told by the media sender with each packet sent:
//!
//! ```text
//! encoder target r_vin  = max(RMIN, r_ref − BETA_V·8·L·FPS)
//! pacing rate    r_send = min(RMAX, r_ref + BETA_S·8·L·FPS)      (BETA_V = BETA_S = 0.1, FPS 30)
//! ```
//!
//! The CE-marking penalty (DMARK, PMRREF) is RFC 8698's; ns3-rmcat leaves ECN for later. RMIN,
//! RMAX and the initial rate are ns3-rmcat's defaults (150 kbit/s, 3 Mbit/s, 150 kbit/s; RFC
//! 8698's RMAX example is 1.5 Mbit/s); `[flows.params]` sets them.

use crate::factory::{BoxedController, ControllerArgs, Factory};
use crate::PacketResult;
use crate::{named, CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use rtclab_core::params::{param, Param};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

/// RFC 8698 Figure 3 / ns3-rmcat's constants (times in ms).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NadaConfig {
    pub prio: f64,
    pub xref_ms: f64,
    pub kappa: f64,
    pub eta: f64,
    pub tau_ms: f64,
    pub delta_ms: f64,
    pub qeps_ms: f64,
    pub dfilt_ms: f64,
    pub gamma_max: f64,
    pub qbound_ms: f64,
    pub multiloss: f64,
    pub qth_ms: f64,
    pub lambda: f64,
    pub dloss_ms: f64,
    pub plrref: f64,
    pub dmark_ms: f64,
    pub pmrref: f64,
    pub xmax_ms: f64,
    pub alpha: f64,
    pub rmin_bps: f64,
    pub rmax_bps: f64,
    pub rinit_bps: f64,
    pub beta_v: f64,
    pub beta_s: f64,
    pub fps: f64,
}

impl Default for NadaConfig {
    fn default() -> Self {
        NadaConfig {
            prio: 1.0,
            xref_ms: 10.0,
            kappa: 0.5,
            eta: 2.0,
            tau_ms: 500.0,
            delta_ms: 100.0,
            qeps_ms: 10.0,
            dfilt_ms: 120.0,
            gamma_max: 0.5,
            qbound_ms: 50.0,
            multiloss: 7.0,
            qth_ms: 50.0,
            lambda: 0.5,
            dloss_ms: 10.0,
            plrref: 0.01,
            dmark_ms: 2.0,
            pmrref: 0.01,
            xmax_ms: 500.0,
            alpha: 0.1,
            rmin_bps: 150_000.0,
            rmax_bps: 3_000_000.0,
            rinit_bps: 150_000.0,
            beta_v: 0.1,
            beta_s: 0.1,
            fps: 30.0,
        }
    }
}

/// Settings a flow's `[flows.params]` may give.
pub static NADA_PARAMS: &[Param<NadaConfig>] = &[
    param!(
        NadaConfig,
        "rmin_kbps",
        "lowest rate, kbit/s (150)",
        Real,
        1.0,
        1e7,
        |c| c.rmin_bps / 1e3,
        |c, v| c.rmin_bps = v * 1e3
    ),
    param!(
        NadaConfig,
        "rmax_kbps",
        "highest rate, kbit/s (3000, ns3-rmcat; RFC 8698's example 1500)",
        Real,
        1.0,
        1e7,
        |c| c.rmax_bps / 1e3,
        |c, v| c.rmax_bps = v * 1e3
    ),
    param!(
        NadaConfig,
        "rinit_kbps",
        "starting rate, kbit/s (150)",
        Real,
        1.0,
        1e7,
        |c| c.rinit_bps / 1e3,
        |c, v| c.rinit_bps = v * 1e3
    ),
    param!(
        NadaConfig,
        "prio",
        "priority weight PRIO (1)",
        Real,
        0.01,
        100.0,
        |c| c.prio,
        |c, v| c.prio = v
    ),
    param!(
        NadaConfig,
        "xref_ms",
        "reference congestion level XREF, ms (10)",
        Real,
        0.1,
        1000.0,
        |c| c.xref_ms,
        |c, v| c.xref_ms = v
    ),
    param!(
        NadaConfig,
        "kappa",
        "gradual-update scaling KAPPA (0.5)",
        Real,
        0.0,
        10.0,
        |c| c.kappa,
        |c, v| c.kappa = v
    ),
    param!(
        NadaConfig,
        "eta",
        "gradual-update scaling ETA (2)",
        Real,
        0.0,
        100.0,
        |c| c.eta,
        |c, v| c.eta = v
    ),
    param!(
        NadaConfig,
        "tau_ms",
        "RTT bound of the gradual update TAU, ms (500)",
        Real,
        1.0,
        10_000.0,
        |c| c.tau_ms,
        |c, v| c.tau_ms = v
    ),
    param!(
        NadaConfig,
        "delta_ms",
        "update interval DELTA, ms (100)",
        Real,
        1.0,
        10_000.0,
        |c| c.delta_ms,
        |c, v| c.delta_ms = v
    ),
    param!(
        NadaConfig,
        "qeps_ms",
        "queueing allowed in accelerated ramp-up QEPS, ms (10)",
        Real,
        0.0,
        1000.0,
        |c| c.qeps_ms,
        |c, v| c.qeps_ms = v
    ),
    param!(
        NadaConfig,
        "gamma_max",
        "largest ramp-up step GAMMA_MAX (0.5)",
        Real,
        0.0,
        10.0,
        |c| c.gamma_max,
        |c, v| c.gamma_max = v
    ),
    param!(
        NadaConfig,
        "qbound_ms",
        "self-inflicted queueing bound during ramp-up QBOUND, ms (50)",
        Real,
        0.0,
        10_000.0,
        |c| c.qbound_ms,
        |c, v| c.qbound_ms = v
    ),
    param!(
        NadaConfig,
        "dloss_ms",
        "delay penalty at PLRREF loss DLOSS, ms (10)",
        Real,
        0.0,
        10_000.0,
        |c| c.dloss_ms,
        |c, v| c.dloss_ms = v
    ),
    param!(
        NadaConfig,
        "dmark_ms",
        "delay penalty at PMRREF marking DMARK, ms (2)",
        Real,
        0.0,
        10_000.0,
        |c| c.dmark_ms,
        |c, v| c.dmark_ms = v
    ),
    param!(
        NadaConfig,
        "beta_v",
        "encoder rate shaping: r_vin = r_ref − beta_v·8·L·FPS (0.1, RFC 8698 §5.2; ns3-rmcat's test cases 0)",
        Real,
        0.0,
        10.0,
        |c| c.beta_v,
        |c, v| c.beta_v = v
    ),
    param!(
        NadaConfig,
        "beta_s",
        "pacer rate shaping: r_send = r_ref + beta_s·8·L·FPS (0.1, RFC 8698 §5.2; ns3-rmcat's test cases 0)",
        Real,
        0.0,
        10.0,
        |c| c.beta_s,
        |c, v| c.beta_s = v
    ),
];

/// ns3-rmcat `SenderBasedController`: history window, gap that clears it, filter taps, least
/// history for loss and rate.
const HISTORY: TimeDelta = TimeDelta::from_millis(500);
const MAX_INTER_PACKET: TimeDelta = TimeDelta::from_millis(500);
const TAPS: usize = 15;
const MIN_LOG: usize = 5;

#[derive(Clone, Copy, Debug)]
struct Record {
    seq: u64,
    tx: Time,
    size: u32,
    owd: TimeDelta,
    rtt: TimeDelta,
    ce: bool,
}

/// TFRC-style loss intervals (RFC 5348 §5.4), as ns3-rmcat keeps them.
#[derive(Clone, Debug)]
struct LossIntervals {
    /// Packets per interval, newest first (at most 9).
    intervals: VecDeque<u32>,
    expected: u64,
    initialized: bool,
}

impl LossIntervals {
    fn new(first: u64) -> Self {
        LossIntervals { intervals: VecDeque::from([0]), expected: first, initialized: false }
    }

    fn on_received(&mut self, seq: u64) {
        if seq == self.expected {
            self.intervals[0] += 1;
            self.expected += 1;
            return;
        }
        if seq < self.expected {
            return;
        }
        self.intervals.push_front(1);
        self.intervals.truncate(9);
        self.expected = seq + 1;
        self.initialized = true;
    }

    /// (average interval, current interval) once a loss was seen.
    fn info(&self) -> Option<(f64, f64)> {
        if !self.initialized {
            return None;
        }
        const W: [f64; 8] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];
        let k = self.intervals.len();
        let dot = |skip: usize| {
            self.intervals
                .iter()
                .skip(skip)
                .take(k - 1)
                .zip(W)
                .map(|(&i, w)| i as f64 * w)
                .sum::<f64>()
        };
        let wsum: f64 = W.iter().take(k - 1).sum();
        Some((dot(0).max(dot(1)) / wsum, self.intervals[0] as f64))
    }
}

#[derive(Clone, Debug)]
pub struct Nada {
    cfg: NadaConfig,
    history: VecDeque<Record>,
    base_delay: TimeDelta,
    losses: Option<LossIntervals>,
    last_calc: Option<Time>,
    r_ref: f64,
    r_recv: f64,
    qdelay_ms: f64,
    rtt_ms: f64,
    p_loss: f64,
    p_mark: f64,
    lost_now: u64,
    x_curr: f64,
    x_prev: f64,
    rmode: u8,
    warp: bool,
    /// The sender's queue after its last packet (RFC 8698's rate-shaping buffer), bytes.
    queued: u64,
}

impl Nada {
    pub fn new(cfg: NadaConfig) -> Self {
        Nada {
            cfg,
            history: VecDeque::new(),
            base_delay: TimeDelta::ZERO,
            losses: None,
            last_calc: None,
            r_ref: cfg.rinit_bps.clamp(cfg.rmin_bps, cfg.rmax_bps),
            r_recv: 0.0,
            qdelay_ms: 0.0,
            rtt_ms: 0.0,
            p_loss: 0.0,
            p_mark: 0.0,
            lost_now: 0,
            x_curr: 0.0,
            x_prev: 0.0,
            rmode: 0,
            warp: false,
            queued: 0,
        }
    }

    /// Built from a flow's `[flows.params]` (see [`NADA_PARAMS`]).
    pub fn from_args(a: &ControllerArgs) -> Result<Self, String> {
        let mut cfg = NadaConfig::default();
        rtclab_core::params::apply(NADA_PARAMS, &mut cfg, a.params)?;
        if cfg.rmin_bps > cfg.rmax_bps {
            return Err(format!(
                "`rmin_kbps` ({}) must not exceed `rmax_kbps` ({})",
                cfg.rmin_bps / 1e3,
                cfg.rmax_bps / 1e3
            ));
        }
        Ok(Nada::new(cfg))
    }

    /// The registry factory (its line in `capabilities::BUILTIN`).
    pub fn factory() -> Factory {
        std::sync::Arc::new(|a: &ControllerArgs| {
            Nada::from_args(a).map(|n| Box::new(n) as BoxedController)
        })
    }

    pub fn reference_rate_bps(&self) -> f64 {
        self.r_ref
    }
    pub fn x_curr_ms(&self) -> f64 {
        self.x_curr
    }

    /// ns3-rmcat `SenderBasedController::processFeedback` for one arrived packet.
    fn record(&mut self, now: Time, p: &PacketResult, arrival: Time) {
        if let Some(last) = self.history.back() {
            if p.send_time < last.tx {
                return; // out of order: ns3-rmcat refuses it
            }
            if p.send_time - last.tx > MAX_INTER_PACKET {
                self.history.clear();
            }
        }
        let owd = arrival - p.send_time;
        if self.history.is_empty() || owd < self.base_delay {
            self.base_delay = owd;
        }
        if self.history.is_empty() {
            self.losses = Some(LossIntervals::new(p.seq));
        }
        if let Some(l) = &mut self.losses {
            l.on_received(p.seq);
        }
        self.history.push_back(Record {
            seq: p.seq,
            tx: p.send_time,
            size: p.size,
            owd,
            rtt: now - p.send_time,
            ce: p.ce,
        });
        while let (Some(f), Some(b)) = (self.history.front(), self.history.back()) {
            if b.tx - f.tx < HISTORY {
                break;
            }
            self.history.pop_front();
        }
    }

    fn update_metrics(&mut self) {
        let last = || self.history.iter().rev().take(TAPS);
        let ms = |d: TimeDelta| d.as_secs_f64() * 1e3;
        let qdelay = last().map(|r| r.owd - self.base_delay).min();
        if let Some(q) = qdelay {
            self.qdelay_ms = ms(q);
        }
        if let Some(r) = last().map(|r| r.rtt).min() {
            self.rtt_ms = ms(r);
        }
        let n = self.history.len();
        if n >= MIN_LOG {
            let (f, b) = (self.history[0], self.history[n - 1]);
            let span = (b.tx + b.owd) - (f.tx + f.owd);
            if span > TimeDelta::ZERO {
                let bytes: u64 = self.history.iter().skip(1).map(|r| r.size as u64).sum();
                self.r_recv = bytes as f64 * 8.0 / span.as_secs_f64();
            }
            let seq_span = b.seq - f.seq + 1;
            self.lost_now = seq_span.saturating_sub(n as u64);
            let plr = self.lost_now as f64 / seq_span as f64;
            self.p_loss += self.cfg.alpha * (plr - self.p_loss);
            let pmr = self.history.iter().filter(|r| r.ce).count() as f64 / n as f64;
            self.p_mark += self.cfg.alpha * (pmr - self.p_mark);
        }
        self.x_prev = self.x_curr;
        if qdelay.is_some() {
            self.update_x_curr();
        }
    }

    /// RFC 8698 §4.2 eq. (1): the warped queueing delay.
    fn warped(&self) -> f64 {
        let (q, qth) = (self.qdelay_ms, self.cfg.qth_ms);
        if q > qth {
            qth * (-self.cfg.lambda * (q - qth) / qth).exp()
        } else {
            q
        }
    }

    /// ns3-rmcat `updateXcurr` plus RFC 8698's marking penalty.
    fn update_x_curr(&mut self) {
        let (xdel, xtilde) = (self.qdelay_ms, self.warped());
        let m = self.cfg.multiloss;
        self.x_curr = match self.losses.as_ref().and_then(LossIntervals::info) {
            Some((avg, cur)) if cur < m * avg => {
                self.warp = true;
                xtilde
            }
            Some((avg, cur)) if cur < (m + 1.0) * avg => {
                let a = (cur - m * avg) / avg;
                a * xdel + (1.0 - a) * xtilde
            }
            _ => {
                self.warp = false;
                xdel
            }
        };
        let pl = self.p_loss / self.cfg.plrref;
        let pm = self.p_mark / self.cfg.pmrref;
        self.x_curr += self.cfg.dloss_ms * pl * pl + self.cfg.dmark_ms * pm * pm;
        self.x_curr = self.x_curr.min(self.cfg.xmax_ms);
    }

    /// ns3-rmcat `getRampUpMode`.
    fn ramp_up_mode(&self) -> u8 {
        let qeps = TimeDelta::from_secs_f64(self.cfg.qeps_ms / 1e3);
        let queued = self.history.iter().any(|r| r.owd - self.base_delay > qeps);
        (self.lost_now > 0 || queued) as u8
    }

    fn update_rate(&mut self, delta_ms: f64) {
        let c = self.cfg;
        self.rmode = self.ramp_up_mode();
        if self.rmode == 0 {
            let gamma = (c.qbound_ms / (self.rtt_ms + c.delta_ms + c.dfilt_ms)).min(c.gamma_max);
            self.r_ref = self.r_ref.max((1.0 + gamma) * self.r_recv);
        } else {
            let x_offset = self.x_curr - c.prio * c.xref_ms * c.rmax_bps / self.r_ref;
            let x_diff = self.x_curr - self.x_prev;
            self.r_ref -= c.kappa * (delta_ms / c.tau_ms) * (x_offset / c.tau_ms) * self.r_ref
                + c.kappa * c.eta * (x_diff / c.tau_ms) * self.r_ref;
        }
        self.r_ref = self.r_ref.clamp(c.rmin_bps, c.rmax_bps);
    }
}

impl CongestionController for Nada {
    fn name(&self) -> &'static str {
        "nada"
    }

    fn on_transport_feedback(&mut self, now: Time, packets: &[PacketResult]) {
        let mut ordered: Vec<&PacketResult> = packets.iter().collect();
        ordered.sort_by_key(|p| p.seq);
        for p in ordered {
            if let Some(a) = p.arrival {
                self.record(now, p, a);
            }
        }
        let Some(last) = self.last_calc else {
            self.last_calc = Some(now);
            return;
        };
        let delta_ms = (now - last).as_secs_f64() * 1e3;
        if delta_ms >= self.cfg.delta_ms {
            self.update_metrics();
            self.update_rate(delta_ms);
            self.last_calc = Some(now);
        }
    }

    fn on_packet_sent(&mut self, _now: Time, pkt: &crate::SentPacket) {
        self.queued = pkt.queued_bytes;
    }

    fn on_feedback(&mut self, _now: Time, _fb: &FeedbackReport) {}
    fn on_congestion_event(&mut self, _now: Time, _ev: &CongestionEvent) {}

    fn target(&self) -> CcTarget {
        let c = &self.cfg;
        let shaping = 8.0 * self.queued as f64 * c.fps;
        let r_vin = (self.r_ref - c.beta_v * shaping).max(c.rmin_bps);
        let r_send = (self.r_ref + c.beta_s * shaping).min(c.rmax_bps).max(r_vin);
        CcTarget {
            target_rate: Some(Rate::from_bps(r_vin as u64)),
            pacing_rate: Some(Rate::from_bps(r_send as u64)),
            ..Default::default()
        }
    }

    fn metrics(&self) -> CcMetrics {
        CcMetrics {
            target_rate: Some(Rate::from_bps(self.r_ref as u64)),
            state: self.rmode,
            extra: named(&[
                Some(("nada_x_curr_ms", self.x_curr)),
                Some(("nada_queue_delay_ms", self.qdelay_ms)),
                Some(("nada_recv_rate_mbps", self.r_recv / 1e6)),
                Some(("nada_loss_ratio", self.p_loss)),
                Some(("nada_mark_ratio", self.p_mark)),
                Some(("nada_warp", self.warp as u8 as f64)),
                Some(("nada_shaping_buffer_bytes", self.queued as f64)),
            ]),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` packets of 1000 B sent every `gap_ms` from `t0`, each arriving after `owd(i)` ms
    /// (None: lost), reported at `now`.
    fn batch(
        first: u64,
        t0: f64,
        gap_ms: f64,
        n: u64,
        owd: impl Fn(u64) -> Option<f64>,
    ) -> Vec<PacketResult> {
        (0..n)
            .map(|i| {
                let send = Time::from_nanos(((t0 + i as f64 * gap_ms) * 1e6) as u64);
                PacketResult {
                    seq: first + i,
                    send_time: send,
                    arrival: owd(first + i).map(|d| send + TimeDelta::from_secs_f64(d / 1e3)),
                    size: 1000,
                    probe_cluster: None,
                    ce: false,
                }
            })
            .collect()
    }

    /// Drives NADA over a link of `cap_bps` with a 50 ms one-way delay: packets go at the
    /// controller's rate, arrive after the queue built at the link, feedback every 100 ms.
    fn run(cap_bps: f64, secs: f64) -> (Nada, f64) {
        let mut n = Nada::new(NadaConfig::default());
        let (mut seq, mut t, mut link_free) = (0u64, 0.0f64, 0.0f64);
        let mut max_q: f64 = 0.0;
        while t < secs * 1e3 {
            let rate = n.reference_rate_bps();
            let gap = 1000.0 * 8.0 / rate * 1e3; // ms per 1000 B packet
            let k = (100.0 / gap).floor().max(1.0) as u64;
            let pkts: Vec<PacketResult> = batch(seq, t, gap, k, |_| Some(0.0))
                .into_iter()
                .map(|mut p| {
                    let sent = p.send_time.as_nanos() as f64 / 1e6;
                    let start = link_free.max(sent);
                    link_free = start + 1000.0 * 8.0 / cap_bps * 1e3;
                    max_q = max_q.max(start - sent);
                    p.arrival = Some(Time::from_nanos(((link_free + 50.0) * 1e6) as u64));
                    p
                })
                .collect();
            seq += k;
            t += k as f64 * gap;
            let now = Time::from_nanos(((t + 100.0) * 1e6) as u64);
            n.on_transport_feedback(now, &pkts);
        }
        (n, max_q)
    }

    #[test]
    fn ramps_up_then_settles_below_capacity_with_a_small_queue() {
        let (n, _) = run(1_000_000.0, 60.0);
        let r = n.reference_rate_bps();
        // Equilibrium of the gradual update: x_curr = XREF·RMAX/r → a queue of ≈ 10·3/r_Mbps ms
        // at the rate the link carries.
        assert!((0.7e6..=1.05e6).contains(&r), "rate {r}");
        assert!(n.x_curr_ms() < 60.0, "x_curr {}", n.x_curr_ms());
    }

    #[test]
    fn loss_penalty_and_warping_follow_the_rfc() {
        let mut n = Nada::new(NadaConfig::default());
        n.qdelay_ms = 100.0;
        // No loss yet: x = d_queue.
        n.update_x_curr();
        assert_eq!(n.x_curr, 100.0);
        // 1 % loss → +DLOSS·1² = +10 ms; with recent losses the delay is warped:
        // 50·exp(−0.5·(100 − 50)/50) = 30.33 ms.
        n.p_loss = 0.01;
        let mut l = LossIntervals::new(0);
        for s in [0, 1, 2, 4, 5, 6, 7] {
            l.on_received(s);
        }
        n.losses = Some(l);
        n.update_x_curr();
        let want = 50.0 * (-0.5f64).exp() + 10.0;
        assert!((n.x_curr - want).abs() < 1e-9, "{} vs {want}", n.x_curr);
        // CE marking at PMRREF adds DMARK = 2 ms.
        n.p_mark = 0.01;
        n.update_x_curr();
        assert!((n.x_curr - want - 2.0).abs() < 1e-9);
    }

    #[test]
    fn gradual_update_by_hand() {
        let mut n = Nada::new(NadaConfig::default());
        n.r_ref = 1e6;
        n.x_curr = 40.0;
        n.x_prev = 30.0;
        n.lost_now = 1; // gradual mode
        n.update_rate(100.0);
        // x_offset = 40 − 10·3e6/1e6 = 10; r −= 0.5·0.2·0.02·r + 0.5·2·0.02·r = 0.022·r.
        assert!((n.r_ref - 0.978e6).abs() < 1e-6, "{}", n.r_ref);
    }

    #[test]
    fn accelerated_ramp_up_by_hand() {
        let mut n = Nada::new(NadaConfig::default());
        n.r_recv = 1e6;
        n.rtt_ms = 100.0;
        n.update_rate(100.0);
        // γ = min(0.5, 50/(100 + 100 + 120)) = 0.15625.
        assert!((n.r_ref - 1.15625e6).abs() < 1e-6, "{}", n.r_ref);
    }

    #[test]
    fn tfrc_intervals_weight_the_newest_eight() {
        let mut l = LossIntervals::new(0);
        assert!(l.info().is_none());
        // Received 0..10, lost 10, received 11..15: intervals [4+... ] newest first.
        for s in (0..10).chain(11..15) {
            l.on_received(s);
        }
        let (avg, cur) = l.info().unwrap();
        assert_eq!(cur, 4.0);
        // k = 2: max(4·1, 10·1) / 1.
        assert_eq!(avg, 10.0);
    }
}
