//! TCP Vegas: a delay-based window that keeps between `alpha` and `beta` packets queued.
//!
//! Lineage: L. Brakmo, L. Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
//! Internet", IEEE JSAC 13(8), 1995; the constants and per-round rule of Linux
//! `net/ipv4/tcp_vegas.c` (alpha = 2, beta = 4, gamma = 1 packet; RTTs in µs, +1 so a zero
//! sample still counts). Once per round trip (when the cumulative ACK passes the `snd_nxt`
//! noted at the round's start) and only with at least three RTT samples in the round:
//!
//! ```text
//! rtt    = smallest RTT sample of the round      base = smallest RTT ever
//! diff   = cwnd · (rtt − base) / base            packets this flow keeps queued
//! slow start:  diff > gamma → cwnd = min(cwnd, cwnd·base/rtt + 1), ssthresh = min(ssthresh, cwnd)
//!              else         → slow start (Reno)
//! avoidance:   diff > beta  → cwnd − 1, ssthresh = min(ssthresh, cwnd)
//!              diff < alpha → cwnd + 1
//! then cwnd ≥ 2 and ssthresh = max(ssthresh, ¾ cwnd)   (tcp_current_ssthresh)
//! ```
//!
//! Fewer than three samples in a round, and every ACK while the sender is not in the Open
//! state (loss recovery), follow Reno. A loss halves the window as Reno does
//! (`tcp_reno_ssthresh`); resuming after idle (`CA_EVENT_TX_START`) forgets the base RTT.
//! Vegas is built like a registered controller: its settings come from `[flows.params]`
//! (`alpha`, `beta`, `gamma`, in packets).

use crate::factory::{BoxedController, ControllerArgs, Factory};
use crate::{
    named, reno_cong_avoid, reno_congestion_event, slow_start, window_metrics, window_target,
    CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport, INFINITE_SSTHRESH,
};
use rtclab_core::params::Value;
use rtclab_core::{Time, TimeDelta};

/// Linux's module parameters, in packets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasConfig {
    pub packet_size: u32,
    pub initial_window: u32,
    pub alpha: u32,
    pub beta: u32,
    pub gamma: u32,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { packet_size: 1500, initial_window: 10, alpha: 2, beta: 4, gamma: 1 }
    }
}

/// No RTT sample yet (Linux `0x7fffffff`).
const NO_RTT: u32 = 0x7fff_ffff;

#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    cwnd: u32,
    cwnd_cnt: u32,
    ssthresh: u32,
    /// Off while the sender is not in the Open state (Linux `vegas_state`).
    doing_vegas_now: bool,
    /// The round ends when the cumulative ACK passes this sequence number.
    beg_snd_nxt: u64,
    /// µs (+1): the smallest RTT ever and the smallest of this round, and the round's samples.
    base_rtt: u32,
    min_rtt: u32,
    cnt_rtt: u32,
    /// The last round's estimate of the packets this flow keeps queued (for the series).
    diff: f64,
}

impl Vegas {
    pub fn new(cfg: VegasConfig) -> Self {
        Vegas {
            cfg,
            cwnd: cfg.initial_window.max(2),
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            doing_vegas_now: true,
            beg_snd_nxt: 0,
            base_rtt: NO_RTT,
            min_rtt: NO_RTT,
            cnt_rtt: 0,
            diff: f64::NAN,
        }
    }

    /// Built from a flow's `[flows.params]` (`alpha`, `beta`, `gamma`: whole packets).
    pub fn from_args(a: &ControllerArgs) -> Result<Self, String> {
        let mut cfg = VegasConfig {
            packet_size: a.packet_size,
            initial_window: a.initial_window,
            ..Default::default()
        };
        for (k, v) in a.params {
            let slot = match k.as_str() {
                "alpha" => &mut cfg.alpha,
                "beta" => &mut cfg.beta,
                "gamma" => &mut cfg.gamma,
                _ => return Err(format!("unknown parameter `{k}`: accepted alpha, beta, gamma")),
            };
            match v {
                Value::Num(x) if x.fract() == 0.0 && (0.0..=1000.0).contains(x) => {
                    *slot = *x as u32
                }
                _ => return Err(format!("`{k}` must be a whole number of packets in 0..=1000")),
            }
        }
        if cfg.alpha > cfg.beta {
            return Err(format!(
                "`alpha` ({}) must not exceed `beta` ({}): Vegas grows below alpha and shrinks above beta",
                cfg.alpha, cfg.beta
            ));
        }
        Ok(Vegas::new(cfg))
    }

    /// The registry factory (its line in `capabilities::BUILTIN`).
    pub fn factory() -> Factory {
        std::sync::Arc::new(|a: &ControllerArgs| {
            Vegas::from_args(a).map(|v| Box::new(v) as BoxedController)
        })
    }

    pub fn cwnd_packets(&self) -> u32 {
        self.cwnd
    }

    fn enable(&mut self, snd_nxt: u64) {
        self.doing_vegas_now = true;
        self.beg_snd_nxt = snd_nxt;
        self.cnt_rtt = 0;
        self.min_rtt = NO_RTT;
    }

    /// Linux `tcp_vegas_ssthresh`.
    fn vegas_ssthresh(&self) -> u32 {
        self.ssthresh.min(self.cwnd)
    }

    /// Once a round: the rule in the module documentation.
    fn end_of_round(&mut self, acked: u32) {
        let (rtt, base) = (self.min_rtt as u64, self.base_rtt as u64);
        let cwnd = self.cwnd as u64;
        let target = cwnd * base / rtt;
        let diff = cwnd * (rtt - base) / base;
        self.diff = cwnd as f64 * (rtt - base) as f64 / base as f64;
        let in_slow_start = self.cwnd < self.ssthresh;
        if diff > self.cfg.gamma as u64 && in_slow_start {
            self.cwnd = self.cwnd.min(target as u32 + 1);
            self.ssthresh = self.vegas_ssthresh();
        } else if in_slow_start {
            slow_start(&mut self.cwnd, self.ssthresh, acked);
        } else if diff > self.cfg.beta as u64 {
            self.cwnd -= 1;
            self.ssthresh = self.vegas_ssthresh();
        } else if diff < self.cfg.alpha as u64 {
            self.cwnd += 1;
        }
        self.cwnd = self.cwnd.max(2);
        // tcp_current_ssthresh outside a window reduction.
        self.ssthresh = self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2));
    }
}

impl CongestionController for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }

    fn on_feedback(&mut self, _now: Time, fb: &FeedbackReport) {
        // tcp_vegas_pkts_acked: every RTT sample.
        if let Some(rtt) = fb.rtt.filter(|r| *r >= TimeDelta::ZERO) {
            let vrtt = (rtt.as_nanos() / 1000).min(NO_RTT as i64 - 1) as u32 + 1;
            self.base_rtt = self.base_rtt.min(vrtt);
            self.min_rtt = self.min_rtt.min(vrtt);
            self.cnt_rtt += 1;
        }
        // tcp_vegas_state: Vegas runs in the Open state only.
        if fb.in_recovery {
            self.doing_vegas_now = false;
            return;
        }
        if !self.doing_vegas_now {
            self.enable(fb.snd_nxt);
        }
        // tcp_cong_avoid runs for a window-limited sender only.
        if fb.app_limited || fb.acked_packets == 0 {
            return;
        }
        if fb.snd_una > self.beg_snd_nxt {
            self.beg_snd_nxt = fb.snd_nxt;
            if self.cnt_rtt <= 2 {
                reno_cong_avoid(
                    &mut self.cwnd,
                    &mut self.cwnd_cnt,
                    self.ssthresh,
                    fb.acked_packets,
                );
            } else {
                self.end_of_round(fb.acked_packets);
            }
            self.cnt_rtt = 0;
            self.min_rtt = NO_RTT;
        } else if self.cwnd < self.ssthresh {
            slow_start(&mut self.cwnd, self.ssthresh, fb.acked_packets);
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        // tcp_reno_ssthresh, then the transport's recovery (cwnd = ssthresh) or a timeout.
        reno_congestion_event(&mut self.cwnd, &mut self.cwnd_cnt, &mut self.ssthresh, ev);
        self.doing_vegas_now = false;
    }

    fn on_tx_start(&mut self, _now: Time, _idle: TimeDelta) {
        // CA_EVENT_TX_START: tcp_vegas_init.
        self.base_rtt = NO_RTT;
        let at = self.beg_snd_nxt;
        self.enable(at);
    }

    fn target(&self) -> CcTarget {
        window_target(self.cwnd, self.cfg.packet_size)
    }

    fn metrics(&self) -> CcMetrics {
        let base_ms = (self.base_rtt != NO_RTT).then(|| self.base_rtt as f64 / 1000.0);
        CcMetrics {
            extra: named(&[
                Some(("vegas_diff_packets", self.diff)),
                base_ms.map(|b| ("vegas_base_rtt_ms", b)),
            ]),
            ..window_metrics(self.cwnd, self.ssthresh, self.cfg.packet_size)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One round trip of ACKs, one per packet, each with `rtt`; the round ends when the
    /// cumulative ACK passes the `snd_nxt` noted at its start.
    fn round(v: &mut Vegas, snd_una: &mut u64, rtt_ms: i64) {
        let n = v.cwnd_packets() as u64;
        for _ in 0..n {
            *snd_una += 1;
            let fb = FeedbackReport {
                acked_packets: 1,
                acked_bytes: 1500,
                rtt: Some(TimeDelta::from_millis(rtt_ms)),
                snd_una: *snd_una,
                snd_nxt: *snd_una + n,
                ..Default::default()
            };
            v.on_feedback(Time::ZERO, &fb);
        }
    }

    /// In avoidance the window settles where alpha..beta packets are queued: with a 100 ms
    /// base RTT and the queue's delay growing by 1 ms per packet above a 50-packet pipe, the
    /// queued estimate ends in [alpha, beta] and the window stops moving.
    #[test]
    fn the_window_settles_with_alpha_to_beta_packets_queued() {
        let mut v = Vegas::new(VegasConfig { initial_window: 40, ..Default::default() });
        v.ssthresh = 10; // start in avoidance, below the 50-packet pipe
        let mut una = 0;
        let mut last = Vec::new();
        for _ in 0..200 {
            let queued = v.cwnd_packets().saturating_sub(50) as i64;
            round(&mut v, &mut una, 100 + queued * 2);
            last.push(v.cwnd_packets());
        }
        let tail = &last[150..];
        assert!(tail.iter().all(|&w| w == tail[0]), "still moving: {tail:?}");
        // Integer diff in [alpha, beta] = [2, 4] holds 52, 53 or 54 packets (2-4 queued).
        assert!((52..=54).contains(&tail[0]), "cwnd {}", tail[0]);
        assert!((2.0..=4.0).contains(&v.diff), "queued estimate {}", v.diff);
    }

    /// Slow start leaves once more than gamma packets are queued — here no loss ever comes,
    /// so Reno would double forever — to the window the base RTT would carry (+1) at the
    /// round's RTT (one round late here: the RTTs a round sees are its start's).
    #[test]
    fn slow_start_ends_on_delay_not_on_loss() {
        let mut v = Vegas::new(VegasConfig::default());
        let mut una = 0;
        for _ in 0..20 {
            let queued = v.cwnd_packets().saturating_sub(40) as i64;
            round(&mut v, &mut una, 50 + queued);
            if v.cwnd_packets() < v.ssthresh {
                continue;
            }
            break;
        }
        assert!(v.ssthresh != INFINITE_SSTHRESH, "never left slow start");
        assert!((40..=100).contains(&v.cwnd_packets()), "cwnd {}", v.cwnd_packets());
    }

    #[test]
    fn losses_halve_like_reno_and_settings_are_checked() {
        let mut v = Vegas::new(VegasConfig { initial_window: 40, ..Default::default() });
        v.on_congestion_event(Time::ZERO, &CongestionEvent::Loss { bytes_in_flight: 0 });
        assert_eq!((v.cwnd_packets(), v.ssthresh), (20, 20));
        let args = |p: &[(String, Value)]| {
            let a = ControllerArgs {
                flow: 0,
                role: crate::factory::Role::Window,
                packet_size: 1500,
                initial_window: 10,
                params: p,
                seed: 0,
                media: None,
            };
            Vegas::from_args(&a).map(|v| v.cfg)
        };
        let p = |k: &str, x: f64| vec![(k.to_string(), Value::Num(x))];
        assert_eq!(args(&p("alpha", 3.0)).unwrap().alpha, 3);
        assert!(args(&p("alpha", 9.0)).unwrap_err().contains("must not exceed"));
        assert!(args(&p("alpha", 1.5)).unwrap_err().contains("whole number"));
        assert!(args(&p("delta", 1.0)).unwrap_err().contains("accepted alpha, beta, gamma"));
    }
}
