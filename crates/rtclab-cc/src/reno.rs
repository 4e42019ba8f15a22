//! NewReno congestion control (window arithmetic).
//!
//! Lineage: RFC 5681 (slow start, congestion avoidance), RFC 6582 (NewReno recovery, done by
//! the transport), Linux `net/ipv4/tcp_cong.c` (`tcp_reno_cong_avoid`, `tcp_slow_start`,
//! `tcp_cong_avoid_ai`, `tcp_reno_ssthresh` = max(cwnd >> 1, 2)). Units are packets, as in
//! Linux; the trait speaks bytes through `packet_size`.

use crate::{
    reno_cong_avoid, reno_congestion_event, window_metrics, window_target, CcMetrics, CcTarget,
    CongestionController, CongestionEvent, FeedbackReport, INFINITE_SSTHRESH,
};
use rtclab_core::Time;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RenoConfig {
    /// Bytes per packet used to express the window in bytes.
    pub packet_size: u32,
    /// Initial window in packets (Linux IW10, RFC 6928).
    pub initial_window: u32,
}

impl Default for RenoConfig {
    fn default() -> Self {
        RenoConfig { packet_size: 1500, initial_window: 10 }
    }
}

#[derive(Clone, Debug)]
pub struct Reno {
    cfg: RenoConfig,
    cwnd: u32,
    cwnd_cnt: u32,
    ssthresh: u32,
}

impl Reno {
    pub fn new(cfg: RenoConfig) -> Self {
        Reno { cfg, cwnd: cfg.initial_window.max(1), cwnd_cnt: 0, ssthresh: INFINITE_SSTHRESH }
    }
    pub fn cwnd_packets(&self) -> u32 {
        self.cwnd
    }
    pub fn ssthresh_packets(&self) -> u32 {
        self.ssthresh
    }
}

impl CongestionController for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn on_feedback(&mut self, _now: Time, fb: &FeedbackReport) {
        if fb.in_recovery || fb.app_limited || fb.acked_packets == 0 {
            return;
        }
        reno_cong_avoid(&mut self.cwnd, &mut self.cwnd_cnt, self.ssthresh, fb.acked_packets);
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        reno_congestion_event(&mut self.cwnd, &mut self.cwnd_cnt, &mut self.ssthresh, ev);
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

    fn ack(n: u32) -> FeedbackReport {
        FeedbackReport { acked_packets: n, acked_bytes: n as u64 * 1500, ..Default::default() }
    }

    /// The sawtooth against its formula: halving on loss, +1 packet per window of ACKs.
    #[test]
    fn sawtooth_follows_aimd_formula() {
        let mut r = Reno::new(RenoConfig::default());
        // Slow start doubles per round: 10 -> 20 -> 40 -> 80.
        for _ in 0..3 {
            let w = r.cwnd_packets();
            for _ in 0..w {
                r.on_feedback(Time::ZERO, &ack(1));
            }
        }
        assert_eq!(r.cwnd_packets(), 80);
        r.on_congestion_event(Time::ZERO, &CongestionEvent::Loss { bytes_in_flight: 0 });
        assert_eq!((r.cwnd_packets(), r.ssthresh_packets()), (40, 40));
        // Each round of cwnd ACKs adds exactly one packet: after k rounds, 40 + k.
        for k in 1..=20 {
            let w = r.cwnd_packets();
            for _ in 0..w {
                r.on_feedback(Time::ZERO, &ack(1));
            }
            assert_eq!(r.cwnd_packets(), 40 + k);
        }
        r.on_congestion_event(Time::ZERO, &CongestionEvent::Timeout);
        assert_eq!((r.cwnd_packets(), r.ssthresh_packets()), (1, 30));
    }
}
