//! CUBIC congestion control as Linux implements it, with HyStart.
//!
//! Lineage: RFC 9438 (CUBIC), and torvalds/linux `net/ipv4/tcp_cubic.c` (CUBIC v2.3, the
//! HyStart rewrite of Linux 5.8+), whose integer arithmetic this file follows:
//! beta = 717/1024, C = bic_scale 41 * 10 / 1024 = 0.4004, fast convergence, the
//! Reno-friendly region (`tcp_friendliness`, beta_scale = 15, alpha ~ 0.53, never switched to 1
//! as RFC 9438 does), `cnt` recomputed at most every HZ/32 when cwnd is unchanged, the
//! no-loss-yet clamp (cnt <= 20), delay_min ignoring samples within 1 s of an epoch start,
//! HyStart ACK-train and delay detection with `hystart_low_window` 16,
//! `hystart_ack_delta_us` 2000, 8 samples, threshold clamp(delay_min/8, 4 ms, 16 ms).
//! Time base: jiffies at HZ = 1000 (milliseconds), as a CONFIG_HZ=1000 kernel.
//!
//! The window is in packets; `packet_size` converts for the byte-based trait.

use crate::{
    cong_avoid_ai, slow_start, window_metrics, window_target, CcMetrics, CcTarget,
    CongestionController, CongestionEvent, FeedbackReport, INFINITE_SSTHRESH,
};
use rtclab_core::{Time, TimeDelta};

/// BICTCP_BETA_SCALE.
const BETA_SCALE: u32 = 1024;
/// BICTCP_HZ: time is kept in units of 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// HZ (jiffies per second).
const HZ: u64 = 1000;
const HYSTART_MIN_SAMPLES: u32 = 8;
const HYSTART_DELAY_MIN_US: u64 = 4000;
const HYSTART_DELAY_MAX_US: u64 = 16000;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicConfig {
    pub packet_size: u32,
    pub initial_window: u32,
    /// Multiplicative decrease, in 1/1024 (Linux `beta` = 717).
    pub beta: u32,
    /// Linux `bic_scale` (41): C = bic_scale * 10 / 1024.
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_ack_train: bool,
    pub hystart_delay: bool,
    pub hystart_low_window: u32,
    pub hystart_ack_delta_us: u64,
    /// The flow is paced (Linux `sk_pacing_status != SK_PACING_NONE`): ACK-train threshold
    /// is not halved.
    pub paced: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            packet_size: 1500,
            initial_window: 10,
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            paced: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    cwnd: u32,
    cwnd_cnt: u32,
    ssthresh: u32,
    // struct bictcp
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64, // jiffies
    bic_origin_point: u32,
    bic_k: u64, // 2^-10 s
    delay_min_us: u64,
    epoch_start: u64, // jiffies; 0 = no epoch
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart
    found: bool,
    round_start_us: u64,
    end_seq: u64,
    last_ack_us: u64,
    curr_rtt_us: u64,
    sample_cnt: u32,
    cube_factor: u64,
    beta_scale: u32,
}

fn jiffies(now: Time) -> u64 {
    // Jiffies start at 1 so that 0 can mean "no epoch", as Linux's wrapping counter rarely is 0.
    now.as_millis() * HZ / 1000 + 1
}

impl Cubic {
    pub fn new(cfg: CubicConfig) -> Self {
        // cube_factor = 2^(10+3*BICTCP_HZ) / (bic_scale * 10)
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / (cfg.bic_scale as u64 * 10);
        // beta_scale = 8*(BETA_SCALE+beta) / 3 / (BETA_SCALE - beta)
        let beta_scale = 8 * (BETA_SCALE + cfg.beta) / 3 / (BETA_SCALE - cfg.beta);
        let mut c = Cubic {
            cfg,
            cwnd: cfg.initial_window.max(1),
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min_us: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round_start_us: 0,
            end_seq: 0,
            last_ack_us: 0,
            curr_rtt_us: u64::MAX,
            sample_cnt: 0,
            cube_factor,
            beta_scale,
        };
        c.reset();
        c
    }

    pub fn cwnd_packets(&self) -> u32 {
        self.cwnd
    }
    pub fn ssthresh_packets(&self) -> u32 {
        self.ssthresh
    }
    /// K in seconds for the current epoch.
    pub fn k_seconds(&self) -> f64 {
        self.bic_k as f64 / 1024.0
    }
    pub fn w_max_packets(&self) -> u32 {
        self.last_max_cwnd
    }
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.bic_origin_point = 0;
        self.bic_k = 0;
        self.delay_min_us = 0;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    fn hystart_reset(&mut self, now: Time, snd_nxt: u64) {
        self.round_start_us = now.as_micros();
        self.last_ack_us = self.round_start_us;
        self.end_seq = snd_nxt;
        self.curr_rtt_us = u64::MAX;
        self.sample_cnt = 0;
    }

    /// bictcp_update: computes `cnt`, the packets to ACK per packet of growth.
    fn update(&mut self, now: Time, acked: u32) {
        let cwnd = self.cwnd;
        let jif = jiffies(now);
        self.ack_cnt = self.ack_cnt.saturating_add(acked);
        if self.last_cwnd == cwnd && jif.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        if !(self.epoch_start != 0 && jif == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = jif;
            if self.epoch_start == 0 {
                self.epoch_start = jif;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.bic_k = 0;
                    self.bic_origin_point = cwnd;
                } else {
                    let d = self.cube_factor as f64 * (self.last_max_cwnd - cwnd) as f64;
                    self.bic_k = d.cbrt() as u64;
                    self.bic_origin_point = self.last_max_cwnd;
                }
            }
            // t = elapsed jiffies + delay_min, in 2^-10 s units
            let mut t = jif - self.epoch_start + self.delay_min_us.div_ceil(1_000_000 / HZ);
            t = (t << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.bic_k) as u128;
            let delta = ((self.cfg.bic_scale as u128 * 10 * offs * offs * offs)
                >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.bic_k {
                (self.bic_origin_point as u64).saturating_sub(delta)
            } else {
                self.bic_origin_point as u64 + delta
            };
            self.cnt = if target > cwnd as u64 {
                (cwnd as u64 / (target - cwnd as u64)) as u32
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        // tcp_friendliness
        if self.cfg.tcp_friendliness {
            let delta = (cwnd * self.beta_scale) >> 3;
            if delta > 0 {
                while self.ack_cnt > delta {
                    self.ack_cnt -= delta;
                    self.tcp_cwnd += 1;
                }
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                if self.cnt > max_cnt {
                    self.cnt = max_cnt;
                }
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// bictcp_acked + hystart_update.
    fn pkts_acked(&mut self, now: Time, rtt: TimeDelta, fb: &FeedbackReport) {
        if rtt.is_negative() {
            return;
        }
        let jif = jiffies(now);
        if self.epoch_start != 0 && jif.saturating_sub(self.epoch_start) < HZ {
            return;
        }
        let delay = (rtt.as_micros() as u64).max(1);
        if self.delay_min_us == 0 || self.delay_min_us > delay {
            self.delay_min_us = delay;
        }
        if !self.found
            && self.cwnd < self.ssthresh
            && self.cfg.hystart
            && self.cwnd >= self.cfg.hystart_low_window
        {
            self.hystart_update(now, delay, fb);
        }
    }

    fn hystart_update(&mut self, now: Time, delay: u64, fb: &FeedbackReport) {
        if fb.snd_una > self.end_seq {
            self.hystart_reset(now, fb.snd_nxt);
        }
        if self.cfg.hystart_ack_train {
            let now_us = now.as_micros();
            if now_us.saturating_sub(self.last_ack_us) <= self.cfg.hystart_ack_delta_us {
                self.last_ack_us = now_us;
                let mut threshold = self.delay_min_us; // + hystart_ack_delay: 0 when unpaced
                if !self.cfg.paced {
                    threshold >>= 1;
                }
                if now_us.saturating_sub(self.round_start_us) > threshold {
                    self.found = true;
                    self.ssthresh = self.cwnd;
                }
            }
        }
        if self.cfg.hystart_delay {
            self.curr_rtt_us = self.curr_rtt_us.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh =
                    (self.delay_min_us >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt_us > self.delay_min_us + thresh {
                    self.found = true;
                    self.ssthresh = self.cwnd;
                }
            }
        }
    }

    /// bictcp_recalc_ssthresh.
    fn recalc_ssthresh(&mut self) -> u32 {
        self.epoch_start = 0;
        if self.cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            self.last_max_cwnd = (self.cwnd * (BETA_SCALE + self.cfg.beta)) / (2 * BETA_SCALE);
        } else {
            self.last_max_cwnd = self.cwnd;
        }
        ((self.cwnd * self.cfg.beta) / BETA_SCALE).max(2)
    }
}

impl CongestionController for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn on_feedback(&mut self, now: Time, fb: &FeedbackReport) {
        if fb.acked_packets == 0 {
            return;
        }
        if let Some(rtt) = fb.rtt {
            self.pkts_acked(now, rtt, fb);
        }
        // bictcp_cong_avoid (only called outside recovery, when cwnd-limited)
        if fb.in_recovery || fb.app_limited {
            return;
        }
        let mut acked = fb.acked_packets;
        if self.cwnd < self.ssthresh {
            if self.cfg.hystart && fb.snd_una > self.end_seq {
                self.hystart_reset(now, fb.snd_nxt);
            }
            acked = slow_start(&mut self.cwnd, self.ssthresh, acked);
            if acked == 0 {
                return;
            }
        }
        self.update(now, acked);
        cong_avoid_ai(&mut self.cwnd, &mut self.cwnd_cnt, self.cnt, acked);
    }

    fn on_congestion_event(&mut self, now: Time, ev: &CongestionEvent) {
        match ev {
            CongestionEvent::Loss { .. } => {
                self.ssthresh = self.recalc_ssthresh();
                self.cwnd = self.ssthresh;
            }
            CongestionEvent::Timeout => {
                // tcp_enter_loss: ssthresh from the current window, then TCP_CA_Loss resets
                // CUBIC and HyStart state (bictcp_state).
                self.ssthresh = self.recalc_ssthresh();
                self.reset();
                self.hystart_reset(now, 0);
                self.cwnd = 1;
            }
        }
        self.cwnd_cnt = 0;
    }

    fn on_tx_start(&mut self, now: Time, idle: TimeDelta) {
        // CA_EVENT_TX_START: shift the epoch by the idle time so the curve does not jump.
        if self.epoch_start != 0 && idle > TimeDelta::ZERO {
            let jif = jiffies(now);
            self.epoch_start = (self.epoch_start + (idle.as_nanos() as u64 / 1_000_000)).min(jif);
        }
    }

    fn target(&self) -> CcTarget {
        window_target(self.cwnd, self.cfg.packet_size)
    }

    fn metrics(&self) -> CcMetrics {
        window_metrics(self.cwnd, self.ssthresh, self.cfg.packet_size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fb(rtt_ms: i64) -> FeedbackReport {
        FeedbackReport {
            acked_packets: 1,
            acked_bytes: 1500,
            rtt: Some(TimeDelta::from_millis(rtt_ms)),
            snd_una: 0,
            snd_nxt: 0,
            ..Default::default()
        }
    }

    /// Oracle from the spec: W_max = 100 -> K = cbrt(100 * 0.3 / 0.4) = 4.217 s
    /// (Linux: beta 717/1024, C 410/1024 -> cbrt(100 * 307/1024 * 1024/410) ~ 4.217 s).
    #[test]
    fn k_matches_the_formula() {
        let mut c = Cubic::new(CubicConfig { hystart: false, ..Default::default() });
        c.cwnd = 100;
        c.ssthresh = 100;
        c.on_congestion_event(Time::ZERO, &CongestionEvent::Loss { bytes_in_flight: 0 });
        assert_eq!(c.cwnd_packets(), 70);
        assert_eq!(c.w_max_packets(), 100);
        c.on_feedback(Time::from_secs(2), &fb(100));
        let k = c.k_seconds();
        let want = (30.0f64 / (410.0 / 1024.0)).cbrt();
        assert!((k - want).abs() < 0.002, "K = {k}, want {want}");
        assert!((k - 4.217).abs() < 0.01);
    }

    /// After a loss, the window follows W(t) = C (t - K)^3 + W_max when the flow is driven by
    /// an ACK clock of cwnd ACKs per RTT (the cubic curve, concave then convex).
    #[test]
    fn window_tracks_the_cubic_curve() {
        let cfg = CubicConfig { hystart: false, tcp_friendliness: false, ..Default::default() };
        let mut c = Cubic::new(cfg);
        c.cwnd = 200;
        c.ssthresh = 200;
        let rtt_ms = 20u64;
        let t0 = Time::from_secs(10);
        c.on_congestion_event(t0, &CongestionEvent::Loss { bytes_in_flight: 0 });
        let w_max: f64 = 200.0;
        let cc: f64 = 410.0 / 1024.0;
        let k = (w_max * (1.0 - 717.0 / 1024.0) / cc).cbrt();
        let mut now = t0;
        let mut checked = 0;
        // ~ 2K seconds of round trips.
        for round in 0..((2.0 * k * 1000.0) as u64 / rtt_ms) {
            let w = c.cwnd_packets();
            for i in 0..w {
                let at =
                    now + TimeDelta::from_nanos((rtt_ms * 1_000_000 * i as u64 / w as u64) as i64);
                c.on_feedback(at, &fb(rtt_ms as i64));
            }
            now += TimeDelta::from_millis(rtt_ms as i64);
            let t = (now - t0).as_secs_f64();
            // Linux targets W(t + delay_min); its cnt lets cwnd lag the target by < 1 RTT.
            let lo = cc * (t - rtt_ms as f64 / 1000.0 - k).powi(3) + w_max;
            let hi = cc * (t + rtt_ms as f64 / 1000.0 - k).powi(3) + w_max;
            if round > 5 {
                let w = c.cwnd_packets() as f64;
                assert!(
                    w >= lo.min(hi) - 3.0 && w <= hi.max(lo) + 3.0,
                    "t={t:.2} w={w} expected in [{lo:.1}, {hi:.1}]"
                );
                checked += 1;
            }
        }
        assert!(checked > 300);
        // Plateau near W_max around t = K, convex growth beyond.
        assert!(c.cwnd_packets() as f64 > w_max * 1.1);
    }

    #[test]
    fn timeout_resets_to_one_packet() {
        let mut c = Cubic::new(CubicConfig::default());
        c.cwnd = 50;
        c.on_congestion_event(Time::ZERO, &CongestionEvent::Timeout);
        assert_eq!(c.cwnd_packets(), 1);
        assert_eq!(c.ssthresh_packets(), 50 * 717 / 1024);
    }

    #[test]
    fn hystart_delay_exit_sets_ssthresh() {
        let mut c = Cubic::new(CubicConfig { hystart_ack_train: false, ..Default::default() });
        c.cwnd = 32;
        let mut now = Time::from_secs(1);
        // A round at the base RTT of 20 ms establishes delay_min.
        let mut f = fb(20);
        f.snd_una = 1;
        f.snd_nxt = 40;
        for _ in 0..10 {
            c.on_feedback(now, &f);
            now += TimeDelta::from_millis(1);
        }
        assert!(!c.hystart_found());
        // Next round: RTT grows by more than clamp(20/8, 4, 16) = 4 ms.
        f.snd_una = 41;
        f.snd_nxt = 100;
        f.rtt = Some(TimeDelta::from_millis(25));
        for _ in 0..10 {
            c.on_feedback(now, &f);
            now += TimeDelta::from_millis(1);
        }
        assert!(c.hystart_found());
        assert!(c.ssthresh_packets() < INFINITE_SSTHRESH);
    }
}

#[cfg(test)]
mod hystart_train_tests {
    use super::*;

    /// ACKs arriving back to back at the bottleneck rate: the ACK train of one round lasts
    /// longer than delay_min/2 once cwnd exceeds about half the BDP, and HyStart exits.
    #[test]
    fn ack_train_exits_slow_start_near_half_bdp() {
        let mut c = Cubic::new(CubicConfig { hystart_delay: false, ..Default::default() });
        let spacing = TimeDelta::from_micros(120); // 1500 B at 100 Mbit/s
        let rtt = TimeDelta::from_millis(20);
        let mut now = Time::ZERO + rtt;
        let mut una = 0u64;
        let mut nxt = 10u64;
        while !c.hystart_found() && c.cwnd_packets() < 1000 {
            let round_end = nxt;
            let round_start = now;
            while una < round_end {
                una += 1;
                nxt = una + c.cwnd_packets() as u64;
                let f = FeedbackReport {
                    acked_packets: 1,
                    acked_bytes: 1500,
                    rtt: Some(rtt + (now - round_start).mul_f64(0.0)),
                    snd_una: una,
                    snd_nxt: nxt,
                    ..Default::default()
                };
                c.on_feedback(now, &f);
                now += spacing;
            }
            now = round_start + rtt;
        }
        // BDP = 100 Mbit/s * 20 ms / 1500 B = 167 packets; exit once the train exceeds 10 ms.
        let w = c.cwnd_packets();
        assert!(c.hystart_found());
        assert!((83..=2 * 167).contains(&w), "exit at cwnd {w}");
        assert!((w - 5..=w).contains(&c.ssthresh_packets()));
    }
}
