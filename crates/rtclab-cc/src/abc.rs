//! ABC's sender: a window driven by the router's accelerate/brake marks.
//!
//! Lineage: P. Goyal, A. Agarwal, R. Netravali, M. Alizadeh, H. Balakrishnan, *ABC: A Simple
//! Explicit Congestion Controller for Wireless Networks*, NSDI 2020; as the Zhuge evaluation
//! ran it (spec `zhuge-metis.md` A.8; the released ns-3 sender transys-project/zhuge
//! `src/internet/model/tcp-abc.cc`, `TcpABC::CongControl`). The ABC router on the path
//! (`[[middleboxes]] kind = "abc"`, `rtclab_media::abc`) leaves each data packet marked
//! *accelerate* (ECT(1)) or turns it into a *brake* (ECT(0)); the receiver echoes the mark on
//! the packet's ACK (ABC receivers acknowledge every packet). Per echoed mark:
//!
//! - accelerate: `w ← w + 1` packet (the sender answers one ACK with two packets);
//! - brake: `w ← w − 1`, and `w ← 4` once `w` ≤ 5 (`kMinCwndSegment`);
//! - pacing at `2·w/RTT` over the latest RTT sample (1 Mbit/s before the first).
//!
//! So the next round's rate is 2·(accelerate fraction)·(the rate ACKs return at): the router
//! picks the fraction that makes it its target rate. As in the released sender, losses do not
//! cut the window (its `GetSsThresh` returns the window, the marks alone steer it) and a
//! retransmission timeout leaves one packet (ns-3's `ReTxTimeout`). The released code's extra
//! `+ MSS / cwnd` term is integer division of bytes by a larger byte count — zero — and is not
//! modelled. The ABC paper's fallback for paths without an ABC router (the window also capped
//! by a Cubic window) is not in the released sender either: without an `abc` middlebox every
//! packet stays an accelerate and the window only grows (`rtclab validate` warns).

use crate::{CcMetrics, CcTarget, CongestionController, CongestionEvent, FeedbackReport};
use rtclab_core::{Rate, Time, TimeDelta};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbcConfig {
    /// Bytes per packet, to express the window in bytes.
    pub packet_size: u32,
    /// Initial window in packets.
    pub initial_window: u32,
    /// The floor a brake resets the window to (`kMinCwndSegment`, 4).
    pub min_window: u32,
}

impl Default for AbcConfig {
    fn default() -> Self {
        AbcConfig { packet_size: 1500, initial_window: 10, min_window: 4 }
    }
}

#[derive(Clone, Debug)]
pub struct Abc {
    cfg: AbcConfig,
    /// Window in packets.
    cwnd: u64,
    last_rtt: Option<TimeDelta>,
    /// Share of accelerates among the recent marks (EWMA, gain 1/16 per mark), for the series.
    accel_share: f64,
}

impl Abc {
    pub fn new(cfg: AbcConfig) -> Self {
        Abc { cfg, cwnd: cfg.initial_window.max(1) as u64, last_rtt: None, accel_share: 0.5 }
    }

    pub fn cwnd_packets(&self) -> u64 {
        self.cwnd
    }

    fn pacing_rate(&self) -> Rate {
        match self.last_rtt {
            Some(rtt) if rtt > TimeDelta::ZERO => {
                let bits = 2.0 * (self.cwnd * self.cfg.packet_size as u64 * 8) as f64;
                Rate::from_bps((bits / rtt.as_secs_f64()) as u64)
            }
            _ => Rate::from_bps(1_000_000),
        }
    }
}

impl CongestionController for Abc {
    fn name(&self) -> &'static str {
        "abc"
    }

    fn on_feedback(&mut self, _now: Time, fb: &FeedbackReport) {
        if let Some(rtt) = fb.rtt {
            self.last_rtt = Some(rtt);
        }
        let min = self.cfg.min_window as u64;
        self.cwnd += fb.accelerates as u64;
        for _ in 0..fb.brakes {
            self.cwnd = if self.cwnd > min + 1 { self.cwnd - 1 } else { min };
        }
        for (n, x) in [(fb.accelerates, 1.0), (fb.brakes, 0.0)] {
            for _ in 0..n.min(64) {
                self.accel_share += (x - self.accel_share) / 16.0;
            }
        }
    }

    fn on_congestion_event(&mut self, _now: Time, ev: &CongestionEvent) {
        if let CongestionEvent::Timeout = ev {
            self.cwnd = 1;
        }
    }

    fn target(&self) -> CcTarget {
        CcTarget {
            cwnd_bytes: Some(self.cwnd * self.cfg.packet_size as u64),
            pacing_rate: Some(self.pacing_rate()),
            ..Default::default()
        }
    }

    fn metrics(&self) -> CcMetrics {
        let mut extra = [None; crate::EXTRA_METRICS];
        extra[0] = Some(("accelerate_share", self.accel_share));
        CcMetrics {
            cwnd_bytes: Some(self.cwnd * self.cfg.packet_size as u64),
            ssthresh_bytes: None,
            pacing_rate: Some(self.pacing_rate()),
            target_rate: None,
            state: 0,
            extra,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(a: u32, b: u32) -> FeedbackReport {
        FeedbackReport {
            acked_packets: a + b,
            rtt: Some(TimeDelta::from_millis(50)),
            accelerates: a,
            brakes: b,
            ..Default::default()
        }
    }

    #[test]
    fn each_accelerate_adds_a_packet_and_each_brake_takes_one_down_to_the_floor() {
        let mut c = Abc::new(AbcConfig::default());
        c.on_feedback(Time::ZERO, &marks(5, 0));
        assert_eq!(c.cwnd_packets(), 15);
        c.on_feedback(Time::ZERO, &marks(0, 3));
        assert_eq!(c.cwnd_packets(), 12);
        // Down to 5 one by one, then a brake at 5 sets the floor, 4, and stays there.
        c.on_feedback(Time::ZERO, &marks(0, 20));
        assert_eq!(c.cwnd_packets(), 4);
        // Half accelerates keeps the window: what the router's 0.5·target/current means.
        let mut c = Abc::new(AbcConfig { initial_window: 40, ..Default::default() });
        for _ in 0..100 {
            c.on_feedback(Time::ZERO, &marks(1, 1));
        }
        assert_eq!(c.cwnd_packets(), 40);
        assert!((c.metrics().extra[0].unwrap().1 - 0.5).abs() < 0.1);
    }

    #[test]
    fn paces_at_twice_the_window_per_rtt_and_ignores_losses() {
        let mut c = Abc::new(AbcConfig { initial_window: 20, ..Default::default() });
        assert_eq!(c.target().pacing_rate, Some(Rate::from_bps(1_000_000)));
        c.on_feedback(Time::ZERO, &marks(0, 0));
        // 2 · 20 · 1500 · 8 bits / 50 ms = 9.6 Mbit/s.
        assert_eq!(c.target().pacing_rate, Some(Rate::from_bps(9_600_000)));
        c.on_congestion_event(Time::ZERO, &CongestionEvent::Loss { bytes_in_flight: 30_000 });
        assert_eq!(c.cwnd_packets(), 20);
        c.on_congestion_event(Time::ZERO, &CongestionEvent::Timeout);
        assert_eq!(c.cwnd_packets(), 1);
    }
}
