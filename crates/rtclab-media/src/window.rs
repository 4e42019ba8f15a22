//! Window-based controllers (NewReno, CUBIC, Copa, BBR, QLibra) on a media flow: the transport
//! half they expect from TCP, rebuilt from per-packet feedback (TWCC or RFC 8888), in the
//! manner of a QUIC sender (RFC 9002).
//!
//! - Each feedback becomes one acknowledgement report: packets newly reported received, an RTT
//!   sample from the newest of them (feedback time − send time − the time it waited at the
//!   receiver for the report: until the report's timestamp with RFC 8888, which carries one,
//!   like QUIC's ACK Delay; with TWCC, which does not, only until the report's latest arrival,
//!   so the wait for the report's departure stays in the sample), bytes in flight, and the
//!   newest delivered packet.
//! - Packets reported lost are a congestion event, once per recovery period: a loss of a packet
//!   sent before the current recovery started does not count again (RFC 9002 §7.3.2); packets
//!   sent before the recovery started do not grow the window when they are acknowledged.
//! - The media sender couples the encoder to the window: target = min(max bitrate,
//!   0.9 × cwnd / occupancy) (spec `copa-qlibra-tcp.md` §2.5 item 9, with srtt read as the
//!   time a packet holds its place in the window), paced at the controller's rate or 1.25 ×
//!   cwnd / occupancy (RFC 9002 §7.7), never more than cwnd bytes in flight. The occupancy is
//!   a smoothed (1/8) mean, per report, of the time from each newly reported packet's sending
//!   to the report: the RTT *plus* the wait for the receiver's report. Transport-wide feedback
//!   comes every 25 ms here by default (50-250 ms at libwebrtc's cadence), so a window empties
//!   at cwnd / (srtt + about half the interval); an encoder run at cwnd / srtt overfills it and frames queue at the
//!   sender without bound (measured before this rule: Copa video on a constant 20 Mbit/s link
//!   reached 5 s of frame delay, 5 s of it in the pacer, at 11-13 Mbit/s).
//! - Reports are never marked application-limited: the encoder follows the window, so it is
//!   always just below it.
//! - The sender arms a probe timeout (2 × srtt + 25 ms, ≥ 100 ms, doubling) while data is in
//!   flight; if it fires, what is in flight is presumed lost and the controller sees a
//!   retransmission timeout (persistent congestion).

use rtclab_cc::{CongestionController, CongestionEvent, FeedbackReport, PacketResult};
use rtclab_core::{Time, TimeDelta};
use rtclab_transport::RttEstimator;

#[derive(Clone, Debug)]
pub struct WindowAdapter {
    rtt: RttEstimator,
    /// Smoothed time a packet stays in the window (sending to its report).
    occupancy: Option<TimeDelta>,
    recovery_start: Option<Time>,
    /// Lowest sequence number not yet reported (cumulative point) and next to send.
    snd_una: u64,
}

impl Default for WindowAdapter {
    fn default() -> Self {
        WindowAdapter {
            // RFC 9002's initial RTT and no RTO clamping (the sender's probe timeout is its own).
            rtt: RttEstimator::new(
                TimeDelta::from_millis(333),
                TimeDelta::ZERO,
                TimeDelta::from_secs(60),
            ),
            recovery_start: None,
            snd_una: 0,
            occupancy: None,
        }
    }
}

impl WindowAdapter {
    pub fn srtt(&self) -> Option<TimeDelta> {
        self.rtt.srtt()
    }

    /// How long a packet holds its place in the window: from its sending to the report that
    /// frees it, smoothed; the throughput a window allows is cwnd / this (Little's law).
    pub fn occupancy(&self) -> Option<TimeDelta> {
        self.occupancy
    }

    /// Feeds one feedback's per-packet results to `cc`. `report_time`: when the receiver sent
    /// the report, on the clock of the arrival times (RFC 8888's Report Timestamp; None for
    /// TWCC, which carries none).
    pub fn on_results(
        &mut self,
        now: Time,
        results: &[PacketResult],
        report_time: Option<Time>,
        in_flight: u64,
        snd_nxt: u64,
        cc: &mut impl CongestionController,
    ) {
        let received: Vec<&PacketResult> = results.iter().filter(|p| p.arrival.is_some()).collect();
        let max_arrival = received.iter().filter_map(|p| p.arrival).max();
        let newest = received.iter().max_by_key(|p| p.send_time);
        let rtt = match (newest, report_time.or(max_arrival)) {
            (Some(p), Some(max_a)) => {
                // The time the newest packet waited at the receiver: until the report left
                // when the report says when (RFC 8888), else at least until the latest arrival.
                let waited = (max_a - p.arrival.unwrap_or(max_a)).max(TimeDelta::ZERO);
                Some((now - p.send_time - waited).max(TimeDelta::from_micros(1)))
            }
            _ => None,
        };
        if let Some(r) = rtt {
            self.rtt.on_sample(r);
        }
        if !received.is_empty() {
            let held: i64 = received.iter().map(|p| (now - p.send_time).as_nanos()).sum();
            let sample = TimeDelta::from_nanos(held / received.len() as i64);
            self.occupancy = Some(match self.occupancy {
                None => sample,
                Some(o) => TimeDelta::from_nanos(o.as_nanos() + (sample - o).as_nanos() / 8),
            });
        }
        let lost: Vec<&PacketResult> = results.iter().filter(|p| p.arrival.is_none()).collect();
        let new_loss = lost.iter().any(|p| self.recovery_start.is_none_or(|r| p.send_time > r));
        if new_loss {
            self.recovery_start = Some(now);
            cc.on_congestion_event(now, &CongestionEvent::Loss { bytes_in_flight: in_flight });
        }
        if let Some(top) = results.iter().map(|p| p.seq).max() {
            self.snd_una = self.snd_una.max(top + 1);
        }
        if received.is_empty() && lost.is_empty() {
            return;
        }
        let in_recovery =
            newest.is_some_and(|p| self.recovery_start.is_some_and(|r| p.send_time <= r));
        let fb = FeedbackReport {
            acked_bytes: received.iter().map(|p| p.size as u64).sum(),
            acked_packets: received.len() as u32,
            rtt,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            bytes_in_flight: in_flight,
            snd_una: self.snd_una,
            snd_nxt,
            in_recovery,
            app_limited: false,
            newest_acked: newest.map(|p| p.seq),
            lost_packets: lost.len() as u32,
            ..Default::default()
        };
        if fb.acked_packets > 0 || fb.lost_packets > 0 {
            cc.on_feedback(now, &fb);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_cc::{Reno, RenoConfig};

    fn res(seq: u64, sent_ms: u64, arrival_ms: Option<u64>) -> PacketResult {
        PacketResult {
            seq,
            send_time: Time::from_millis(sent_ms),
            arrival: arrival_ms.map(Time::from_millis),
            size: 1200,
            probe_cluster: None,
            ce: false,
        }
    }

    #[test]
    fn acks_grow_the_window_and_one_loss_per_recovery_period() {
        let mut a = WindowAdapter::default();
        let mut cc = Reno::new(RenoConfig { packet_size: 1200, initial_window: 10 });
        // 10 packets acked: slow start 10 → 20. RTT = 100 − 0 − (29 − 29) ... newest sent at 9.
        let r: Vec<_> = (0..10).map(|i| res(i, i, Some(20 + i))).collect();
        a.on_results(Time::from_millis(60), &r, None, 0, 10, &mut cc);
        assert_eq!(cc.cwnd_packets(), 20);
        assert_eq!(a.srtt(), Some(TimeDelta::from_millis(51)));
        // Two feedbacks reporting losses of packets sent before the first reaction: one halving.
        let r = vec![res(10, 61, None), res(11, 62, Some(90))];
        a.on_results(Time::from_millis(120), &r, None, 0, 20, &mut cc);
        assert_eq!(cc.cwnd_packets(), 10);
        let r = vec![res(12, 63, None), res(13, 64, Some(95))];
        a.on_results(Time::from_millis(125), &r, None, 0, 20, &mut cc);
        assert_eq!(cc.cwnd_packets(), 10, "same recovery period");
        // A loss of a packet sent after the recovery started is a new congestion event.
        let r = vec![res(14, 130, None)];
        a.on_results(Time::from_millis(200), &r, None, 0, 20, &mut cc);
        assert_eq!(cc.cwnd_packets(), 5);
    }
}
