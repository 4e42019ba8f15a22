//! Acknowledged (delivered) bitrate: libwebrtc `RobustThroughputEstimator` (spec `gcc.md` §2.6).
//!
//! Keeps received packets in arrival order: the smallest window with at least 20 packets and
//! 1 s, never more than 500 packets or 5 s; an estimate needs 10 packets.
//! `rate = min(send_size/send_duration, recv_size/recv_duration)` where the receive duration
//! discounts the largest gap (and adds back the second largest), and each side leaves out the
//! packet at its window edge. `prior_unacked_data` is not tracked (libwebrtc weights it 1.0;
//! without it, idle periods before a packet are not credited).

use crate::PacketResult;
use rtclab_core::{Time, TimeDelta};
use std::collections::VecDeque;

const REQUIRED_PACKETS: usize = 20;
const MIN_PACKETS: usize = 10;
const MAX_PACKETS: usize = 500;
const MIN_WINDOW: TimeDelta = TimeDelta::from_secs(1);
const MAX_WINDOW: TimeDelta = TimeDelta::from_secs(5);

#[derive(Clone, Debug, Default)]
pub struct AckedBitrateEstimator {
    /// (send time, arrival, size) in arrival order.
    window: VecDeque<(Time, Time, u32)>,
}

impl AckedBitrateEstimator {
    /// Adds the received packets of one feedback (any order).
    pub fn on_feedback(&mut self, packets: &[PacketResult]) {
        let mut received: Vec<(Time, Time, u32)> =
            packets.iter().filter_map(|p| p.arrival.map(|a| (p.send_time, a, p.size))).collect();
        received.sort_by_key(|x| x.1);
        for r in received {
            if self.window.back().is_some_and(|b| r.1 + TimeDelta::from_secs(1) < b.1) {
                self.window.clear(); // reordered by more than a second: start again
            }
            self.window.push_back(r);
        }
        let newest = match self.window.back() {
            Some(b) => b.1,
            None => return,
        };
        while self.window.len() > MAX_PACKETS
            || self.window.front().is_some_and(|f| newest - f.1 > MAX_WINDOW)
            || (self.window.len() > REQUIRED_PACKETS
                && self.window.get(1).is_some_and(|second| newest - second.1 >= MIN_WINDOW))
        {
            self.window.pop_front();
        }
    }

    pub fn bitrate_bps(&self) -> Option<f64> {
        if self.window.len() < MIN_PACKETS {
            return None;
        }
        let first = self.window.front()?;
        let last = self.window.back()?;
        let total: u64 = self.window.iter().map(|x| x.2 as u64).sum();
        // Receive side: exclude the first packet; discount the largest idle gap.
        let (mut g1, mut g2) = (TimeDelta::ZERO, TimeDelta::ZERO);
        for w in self.window.iter().zip(self.window.iter().skip(1)) {
            let gap = w.1 .1 - w.0 .1;
            if gap > g1 {
                g2 = g1;
                g1 = gap;
            } else if gap > g2 {
                g2 = gap;
            }
        }
        let recv_duration = ((last.1 - first.1) - g1 + g2).max(TimeDelta::from_millis(1));
        let recv_size = total - first.2 as u64;
        // Send side: exclude the last-sent packet.
        let first_send = self.window.iter().map(|x| x.0).min()?;
        let (last_send, last_send_size) =
            self.window.iter().map(|x| (x.0, x.2)).max_by_key(|x| x.0)?;
        let send_duration = (last_send - first_send).max(TimeDelta::from_millis(1));
        let send_size = total - last_send_size as u64;
        let recv_rate = recv_size as f64 * 8.0 / recv_duration.as_secs_f64();
        let send_rate = send_size as f64 * 8.0 / send_duration.as_secs_f64();
        Some(recv_rate.min(send_rate))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(i: u64, send_ms: u64, arrival_ms: u64) -> PacketResult {
        PacketResult {
            seq: i,
            send_time: Time::from_millis(send_ms),
            arrival: Some(Time::from_millis(arrival_ms)),
            size: 1000,
            probe_cluster: None,
            ce: false,
        }
    }

    #[test]
    fn steady_stream_rate() {
        let mut e = AckedBitrateEstimator::default();
        // 1000 B every 10 ms = 800 kbit/s, over 3 s, fed in 100 ms feedbacks.
        for f in 0..30u64 {
            let batch: Vec<_> = (0..10)
                .map(|k| {
                    let i = f * 10 + k;
                    pkt(i, i * 10, 50 + i * 10)
                })
                .collect();
            e.on_feedback(&batch);
        }
        let r = e.bitrate_bps().unwrap();
        assert!((r - 800_000.0).abs() < 1_000.0, "{r}");
        assert!(e.window.len() >= 100 && e.window.len() <= 102);
    }

    #[test]
    fn limited_by_the_slower_side() {
        let mut e = AckedBitrateEstimator::default();
        // Sent every 5 ms, received every 10 ms (a 800 kbit/s bottleneck): the receive rate wins.
        let batch: Vec<_> = (0..200u64).map(|i| pkt(i, i * 5, 20 + i * 10)).collect();
        e.on_feedback(&batch);
        let r = e.bitrate_bps().unwrap();
        assert!((r - 800_000.0).abs() < 10_000.0, "{r}");
        assert!(AckedBitrateEstimator::default().bitrate_bps().is_none());
    }
}
