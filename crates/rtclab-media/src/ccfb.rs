//! RFC 8888 congestion control feedback, both ends (spec `gcc.md` §2.15, §4.3; libwebrtc
//! `CongestionControlFeedbackGenerator` and `TransportFeedbackAdapter::
//! ProcessCongestionControlFeedback`).
//!
//! Receiver: a report goes out once a marker-bit packet (the end of a frame) has arrived, or
//! 25 ms after the first unreported arrival, but never sooner than the feedback budget allows:
//! the next report may leave `clamp(debt / 500 kbit/s, 25 ms, 500 ms)` after the previous one,
//! where `debt` is the feedback bytes not yet paid off at 500 kbit/s. A report covers every
//! sequence number from the first unreported one to the highest received, with each arrival
//! as an offset before the report timestamp in 1/1024 s.
//!
//! Sender: arrival = report timestamp − offset, so arrival times reach the estimator with
//! 1/1024 s (≈ 1 ms) resolution, four times coarser than TWCC's 250 µs.
//!
//! Each report also carries the two-bit ECN field the packet arrived with (RFC 8888 §3.1):
//! the sender learns of every CE mark, which is what an L4S media controller (SCReAM v2 in
//! L4S mode) and NADA's marking penalty (RFC 8698 §4.2) need.
//!
//! One media SSRC whose RTP sequence numbers are the transport-wide ones: this model sends
//! padding on the media SSRC, where libwebrtc would use RTX with its own sequence space.

use crate::feedback::PendingArrivals;
use crate::history::SendHistory;
use rtclab_core::{Ecn, Rate, Time, TimeDelta};
use rtclab_wire::rtcp::{CcfbBlock, CcfbReport, CongestionControlFeedback, RtcpPacket};
use rtclab_wire::WireError;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CcfbConfig {
    pub min_send_delta: TimeDelta,
    pub max_wait_for_marker: TimeDelta,
    pub max_send_delta: TimeDelta,
    pub max_feedback_rate: Rate,
    /// Also report once this many packets arrived since the last report (SCReAM's receiver).
    pub every_packets: Option<u32>,
    /// With `every_packets`: `max_wait_for_marker` counts from the last report, not from the
    /// first unreported arrival, and no feedback budget applies (SCReAM's receiver).
    pub scream: bool,
}

impl Default for CcfbConfig {
    fn default() -> Self {
        CcfbConfig {
            min_send_delta: TimeDelta::from_millis(25),
            max_wait_for_marker: TimeDelta::from_millis(25),
            max_send_delta: TimeDelta::from_millis(500),
            max_feedback_rate: Rate::from_kbps(500),
            every_packets: None,
            scream: false,
        }
    }
}

impl CcfbConfig {
    /// The cadence of SCReAM's receiver (EricssonResearch/scream `ScreamRx`): a report once
    /// 16 packets arrived since the last one, on a frame's last packet, or 40 ms after the
    /// last report, with no minimum spacing.
    pub fn scream() -> Self {
        CcfbConfig {
            min_send_delta: TimeDelta::ZERO,
            max_wait_for_marker: TimeDelta::from_millis(40),
            every_packets: Some(16),
            scream: true,
            ..CcfbConfig::default()
        }
    }
}

#[derive(Clone, Debug)]
pub struct CcfbGenerator {
    cfg: CcfbConfig,
    sender_ssrc: u32,
    media_ssrc: u32,
    pending: PendingArrivals,
    first_unreported: Option<Time>,
    /// Packets arrived since the last report.
    since_report: u32,
    marker_seen: bool,
    next_possible: Time,
    last_sent: Option<Time>,
    debt_bytes: f64,
}

/// Report timestamp in compact NTP (16.16 s) of the receiver's clock.
fn compact_ntp(t: Time) -> u32 {
    ((t.as_nanos() as u128 * 65_536 / 1_000_000_000) & 0xFFFF_FFFF) as u32
}

impl CcfbGenerator {
    pub fn new(cfg: CcfbConfig, sender_ssrc: u32, media_ssrc: u32) -> Self {
        CcfbGenerator {
            cfg,
            sender_ssrc,
            media_ssrc,
            pending: PendingArrivals::default(),
            first_unreported: None,
            since_report: 0,
            marker_seen: false,
            next_possible: Time::ZERO,
            last_sent: None,
            debt_bytes: 0.0,
        }
    }

    /// A packet arrived with sequence number `seq` and the ECN field `ecn`; `marker`: it ends
    /// a frame.
    pub fn on_packet(&mut self, now: Time, seq: u64, marker: bool, ecn: Ecn) {
        if self.pending.insert_with_ecn(seq, now, ecn) {
            self.first_unreported.get_or_insert(now);
            self.marker_seen |= marker;
            self.since_report += 1;
        }
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let first = self.first_unreported?;
        let enough = self.cfg.every_packets.is_some_and(|n| self.since_report >= n);
        Some(if self.marker_seen || enough {
            self.next_possible
        } else if self.cfg.scream {
            let last = self.last_sent.unwrap_or(first);
            self.next_possible.max(last + self.cfg.max_wait_for_marker).max(first)
        } else {
            self.next_possible.max(first + self.cfg.max_wait_for_marker)
        })
    }

    pub fn poll_feedback(
        &mut self,
        now: Time,
    ) -> Result<Option<CongestionControlFeedback>, WireError> {
        let Some(due) = self.poll_timeout() else { return Ok(None) };
        if now < due {
            return Ok(None);
        }
        let Some((base, arrivals)) = self.pending.take_with_ecn() else {
            self.first_unreported = None;
            return Ok(None);
        };
        let reports = arrivals
            .into_iter()
            .map(|a| match a {
                Some((t, ecn)) => CcfbReport::received((now - t).as_nanos() / 1_000, ecn.bits()),
                None => CcfbReport::default(),
            })
            .collect();
        let fb = CongestionControlFeedback {
            sender_ssrc: self.sender_ssrc,
            blocks: vec![CcfbBlock {
                media_ssrc: self.media_ssrc,
                begin_seq: base as u16,
                reports,
            }],
            report_timestamp: compact_ntp(now),
        };
        let mut bytes = Vec::new();
        RtcpPacket::CongestionControlFeedback(fb.clone()).write(&mut bytes)?;
        if self.cfg.scream {
            self.last_sent = Some(now);
            self.next_possible = now + self.cfg.min_send_delta;
        } else {
            self.account(now, bytes.len() as f64 + 28.0);
        }
        self.first_unreported = None;
        self.marker_seen = false;
        self.since_report = 0;
        Ok(Some(fb))
    }

    /// libwebrtc `CalculateNextPossibleSendTime`.
    fn account(&mut self, now: Time, size: f64) {
        let rate = self.cfg.max_feedback_rate.as_bps() as f64 / 8.0;
        if let Some(last) = self.last_sent {
            let paid = (now - last).as_secs_f64() * rate;
            self.debt_bytes = (self.debt_bytes - paid).max(0.0);
        }
        self.debt_bytes += size;
        self.last_sent = Some(now);
        let wait = if rate > 0.0 {
            TimeDelta::from_secs_f64(self.debt_bytes / rate)
        } else {
            self.cfg.max_send_delta
        };
        self.next_possible = now + wait.clamp(self.cfg.min_send_delta, self.cfg.max_send_delta);
    }
}

/// A reported arrival at the sender: when (the receiver's clock) and whether it came CE-marked.
pub type Arrival = (Time, bool);

/// When the receiver sent the report (its Report Timestamp), on the clock of [`arrivals`].
pub fn report_time(fb: &CongestionControlFeedback) -> Time {
    Time::from_nanos((fb.report_timestamp as u128 * 1_000_000_000 / 65_536) as u64)
}

/// Sender side: for each report block, the first unwrapped sequence number and the arrival
/// times (None: not received) on the receiver's clock, each with whether it arrived CE-marked.
/// Offsets that are over range or unavailable carry no usable time and end the block's run
/// there.
pub fn arrivals(
    fb: &CongestionControlFeedback,
    history: &SendHistory,
) -> Vec<(u64, Vec<Option<Arrival>>)> {
    let rts_ns = fb.report_timestamp as u128 * 1_000_000_000 / 65_536;
    fb.blocks
        .iter()
        .map(|b| {
            let base = history.unwrap(b.begin_seq);
            let times = b
                .reports
                .iter()
                .take_while(|r| {
                    !r.received || r.arrival_time_offset < rtclab_wire::rtcp::ccfb::ATO_OVER_RANGE
                })
                .map(|r| {
                    r.received.then(|| {
                        let ato_ns = r.arrival_time_offset as u128 * 1_000_000_000 / 1024;
                        let t = Time::from_nanos(rts_ns.saturating_sub(ato_ns) as u64);
                        (t, Ecn::from_bits(r.ecn) == Ecn::Ce)
                    })
                })
                .collect();
            (base, times)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_for_a_marker_or_25_ms_then_respects_the_budget() {
        let mut g = CcfbGenerator::new(CcfbConfig::default(), 1, 2);
        g.on_packet(Time::from_millis(100), 0, false, Ecn::NotEct);
        g.on_packet(Time::from_millis(101), 2, false, Ecn::NotEct);
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(125)), "no marker: 25 ms");
        g.on_packet(Time::from_millis(110), 3, true, Ecn::NotEct);
        assert_eq!(g.poll_timeout(), Some(Time::ZERO), "marker: now");
        let fb = g.poll_feedback(Time::from_millis(110)).unwrap().unwrap();
        let b = &fb.blocks[0];
        assert_eq!((b.begin_seq, b.reports.len()), (0, 4));
        assert!(!b.reports[1].received);
        // 10 ms before the report = 10.24 units, written as 10.
        assert_eq!(b.reports[0].arrival_time_offset, 10);
        // Next report no sooner than 25 ms later (a small report is far under 500 kbit/s).
        g.on_packet(Time::from_millis(111), 4, true, Ecn::NotEct);
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(135)));
        assert!(g.poll_feedback(Time::from_millis(120)).unwrap().is_none());
        assert!(g.poll_feedback(Time::from_millis(135)).unwrap().is_some());
    }

    #[test]
    fn scream_cadence_reports_every_16_packets_a_marker_or_40_ms() {
        let mut g = CcfbGenerator::new(CcfbConfig::scream(), 1, 2);
        for s in 0..15u64 {
            g.on_packet(Time::from_millis(100 + s), s, false, Ecn::Ect1);
        }
        // 15 packets, no marker: 40 ms after the first arrival (no report yet).
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(140)));
        g.on_packet(Time::from_millis(115), 15, false, Ecn::Ect1);
        assert_eq!(g.poll_timeout(), Some(Time::ZERO), "16 packets: now");
        assert!(g.poll_feedback(Time::from_millis(115)).unwrap().is_some());
        g.on_packet(Time::from_millis(116), 16, false, Ecn::Ect1);
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(155)), "40 ms after the last report");
        g.on_packet(Time::from_millis(117), 17, true, Ecn::Ect1);
        assert_eq!(g.poll_timeout(), Some(Time::from_millis(115)), "a marker: at once");
        assert!(g.poll_feedback(Time::from_millis(117)).unwrap().is_some());
    }

    #[test]
    fn sender_recovers_arrivals_to_a_millisecond() {
        let mut h = SendHistory::default();
        for i in 0..4u64 {
            h.on_sent(Time::from_millis(i), 1000, None);
        }
        let mut g = CcfbGenerator::new(CcfbConfig::default(), 1, 2);
        let arrivals = [(0u64, 20_300_000u64), (1, 21_700_000), (3, 29_100_000)];
        for (s, ns) in arrivals {
            let ecn = if s == 1 { Ecn::Ce } else { Ecn::Ect1 };
            g.on_packet(Time::from_nanos(ns), s, s == 3, ecn);
        }
        let fb = g.poll_feedback(Time::from_millis(40)).unwrap().unwrap();
        let blocks = super::arrivals(&fb, &h);
        assert_eq!(blocks.len(), 1);
        let (base, times) = &blocks[0];
        assert_eq!(*base, 0);
        assert_eq!(times.len(), 4);
        assert!(times[2].is_none());
        for (s, ns) in arrivals {
            let (t, ce) = times[s as usize].unwrap();
            let got = t.as_nanos() as i64;
            assert!((got - ns as i64).abs() < 1_000_000, "seq {s}: {got} vs {ns}");
            assert_eq!(ce, s == 1, "seq {s}: only the CE-marked arrival reads as CE");
        }
        let r = h.results(*base, times.iter().copied());
        assert_eq!(r.iter().map(|p| p.ce).collect::<Vec<_>>(), [false, true, false, false]);
    }
}
