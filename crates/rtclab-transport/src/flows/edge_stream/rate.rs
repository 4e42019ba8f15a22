//! A congestion controller in front of the edge-stream encoder: the Hairpin chapter's GCC
//! integration (dissertation §7.4.5.4, Fig 7.16; spec `afr-hairpin-confucius.md` §3.5, §3.8;
//! released `GameServer::UpdateBitrate` and `CreatePacketBatch` of hkust-spark/hairpin).
//!
//! Once per frame the controller's target rate R sets a per-frame packet quota
//! Q = ⌊R / 8 / fps / payload⌋; above 50 packets R is scaled down to Q = 50. The encoder gets
//! half of R (the released `goodput_ratio` 0.5), so the other half is left for parity and
//! retransmissions. Every data packet sent (first or repeated) spends quota; a batch's parity
//! is min(policy's count, max(1, quota left)) and spends it too. Quota may go negative, so a
//! batch always may carry one parity packet when the policy asks for any.
//!
//! The controller is our send-side GCC (`rtclab_cc::gcc::Gcc`, libwebrtc's goog_cc), fed from
//! the receiver's per-packet acknowledgements, which carry the arrival time: every 50 ms
//! (libwebrtc's shortest transport-feedback interval, the one it uses at these rates) the
//! acknowledged packets and those below the highest acknowledged one that never were
//! (lost: this path does not reorder) go to the controller as transport feedback. GCC's probe
//! clusters go out as padding packets spaced at the probe rate (the frames themselves are sent
//! at once, unpaced, as in the released sender). Where the released code used the RMCAT ns-3
//! GCC (the 2016 REMB-era estimator, no probing), ours is today's send-side GCC: documented
//! as a difference, not tuned away.

use super::wire;
use rtclab_cc::gcc::{Gcc, GccConfig};
use rtclab_cc::{CongestionController, PacketResult, ProbeCluster, SentPacket};
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::{BTreeMap, VecDeque};

/// Transport feedback goes to the controller this often.
pub const FEEDBACK_INTERVAL: TimeDelta = TimeDelta::from_millis(50);
/// The per-frame quota is capped at this many packets (released `UpdateBitrate`).
pub const MAX_QUOTA_PACKETS: f64 = 50.0;
/// Share of the controller's rate given to the encoder (released `goodput_ratio`).
pub const ENCODER_SHARE: f64 = 0.5;

/// A probe cluster being sent as padding.
#[derive(Clone, Copy, Debug)]
struct Probe {
    cluster: ProbeCluster,
    started: Time,
    bytes: u64,
    packets: u32,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct RateStats {
    pub padding_packets: u64,
    pub feedback_reports: u64,
    /// Sum over frames of the encoder bitrate (bit/s), for the mean.
    pub encoder_bps_sum: f64,
    pub frames: u64,
    /// Parity packets the quota took away from what the policy asked for.
    pub parity_capped: u64,
}

pub struct RateControl {
    gcc: Box<Gcc>,
    packet_size: u32,
    /// Sent packets not yet reported to the controller: seq → (send time, size, cluster).
    pending: BTreeMap<u64, (Time, u32, Option<u32>)>,
    /// Acknowledged since the last report: seq → arrival.
    acked: BTreeMap<u64, Time>,
    in_flight: u64,
    next_feedback: Option<Time>,
    probes: VecDeque<ProbeCluster>,
    probe: Option<Probe>,
    quota: i64,
    encoder_bps: f64,
    pub stats: RateStats,
}

impl RateControl {
    pub fn new(packet_size: u32, cfg: GccConfig) -> Self {
        RateControl {
            gcc: Box::new(Gcc::new(cfg)),
            packet_size,
            pending: BTreeMap::new(),
            acked: BTreeMap::new(),
            in_flight: 0,
            next_feedback: None,
            probes: VecDeque::new(),
            probe: None,
            quota: 0,
            encoder_bps: 0.0,
            stats: RateStats::default(),
        }
    }

    pub fn controller(&self) -> &Gcc {
        &self.gcc
    }

    /// The transport is up: the controller's initial probes.
    pub fn start(&mut self, now: Time) {
        self.take_probes(now);
    }

    fn take_probes(&mut self, now: Time) {
        while let Some(c) = self.gcc.poll_probe(now) {
            self.probes.push_back(c);
        }
    }

    /// The encoder's frame size in bytes for the frame encoded now, and the frame's quota.
    pub fn frame_bytes(&mut self, fps: f64, payload: u32) -> u32 {
        let mut bps = self.gcc.target().target_rate.map_or(0, Rate::as_bps) as f64;
        let quota = bps / 8.0 / fps / payload as f64;
        if quota > MAX_QUOTA_PACKETS {
            bps *= MAX_QUOTA_PACKETS / quota;
        }
        self.quota = quota.min(MAX_QUOTA_PACKETS) as i64;
        self.encoder_bps = bps * ENCODER_SHARE;
        self.stats.encoder_bps_sum += self.encoder_bps;
        self.stats.frames += 1;
        ((self.encoder_bps / 8.0 / fps) as u32).max(200)
    }

    /// Parity for a batch of `data` packets when the policy asks for `parity`; spends the
    /// batch's packets from the frame's quota.
    pub fn cap_parity(&mut self, data: u32, parity: u32) -> u32 {
        self.quota -= data as i64;
        let k = (parity as i64).min(self.quota.max(1)) as u32;
        self.stats.parity_capped += (parity - k) as u64;
        self.quota -= k as i64;
        k
    }

    pub fn on_sent(&mut self, now: Time, seq: u64, size: u32, cluster: Option<u32>) {
        self.pending.insert(seq, (now, size, cluster));
        self.in_flight += size as u64;
        let p = SentPacket {
            seq,
            size,
            retransmit: false,
            bytes_in_flight: self.in_flight,
            probe_cluster: cluster,
            queued_bytes: 0,
        };
        self.gcc.on_packet_sent(now, &p);
        if self.next_feedback.is_none() {
            self.next_feedback = Some(now + FEEDBACK_INTERVAL);
        }
    }

    pub fn on_ack(&mut self, seq: u64, arrival: Time) {
        if self.pending.contains_key(&seq) {
            self.acked.insert(seq, arrival);
        }
    }

    /// One transport-feedback report: every acknowledged packet, and every packet below the
    /// highest acknowledged one that was not, as lost.
    fn report(&mut self, now: Time) {
        let Some((&high, _)) = self.acked.last_key_value() else { return };
        let mut results = Vec::new();
        while let Some(e) = self.pending.first_entry() {
            if *e.key() > high {
                break;
            }
            let (seq, (send_time, size, cluster)) = e.remove_entry();
            self.in_flight -= size as u64;
            results.push(PacketResult {
                seq,
                send_time,
                arrival: self.acked.remove(&seq),
                size,
                probe_cluster: cluster,
                ce: false,
            });
        }
        self.acked.clear();
        self.stats.feedback_reports += 1;
        self.gcc.on_transport_feedback(now, &results);
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if self.next_feedback.is_some_and(|t| t <= now) {
            self.report(now);
            self.next_feedback = (!self.pending.is_empty()).then_some(now + FEEDBACK_INTERVAL);
        }
        if self.gcc.poll_timeout().is_some_and(|t| t <= now) {
            self.gcc.handle_timeout(now);
        }
        self.take_probes(now);
    }

    /// When the next probe padding packet is due.
    fn next_padding(&self) -> Option<Time> {
        match &self.probe {
            Some(p) => Some(p.started + p.cluster.rate.tx_time(p.bytes)),
            None => self.probes.front().map(|_| Time::ZERO),
        }
    }

    /// A padding packet to send now, with its probe cluster, if one is due.
    pub fn poll_padding(&mut self, now: Time) -> Option<(u32, Vec<u8>)> {
        if self.next_padding().is_none_or(|t| t > now) {
            return None;
        }
        let p = match &mut self.probe {
            Some(p) => p,
            None => {
                let cluster = self.probes.pop_front()?;
                self.probe.insert(Probe { cluster, started: now, bytes: 0, packets: 0 })
            }
        };
        p.bytes += self.packet_size as u64;
        p.packets += 1;
        let id = p.cluster.id;
        if p.bytes >= p.cluster.min_bytes && p.packets >= p.cluster.min_probes {
            self.probe = None;
        }
        self.stats.padding_packets += 1;
        Some((id, wire::padding()))
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        [self.next_feedback, self.gcc.poll_timeout(), self.next_padding()]
            .into_iter()
            .flatten()
            .min()
    }

    pub fn metrics(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        vec![
            ("cc_target_mbps", self.gcc.target_bps() / 1e6),
            ("encoder_mbps_mean", s.encoder_bps_sum / s.frames.max(1) as f64 / 1e6),
            ("padding_packets", s.padding_packets as f64),
            ("parity_capped_by_quota", s.parity_capped as f64),
            ("feedback_reports", s.feedback_reports as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_caps_parity_and_the_encoder_gets_half_the_rate() {
        let cfg = GccConfig { start_bitrate_bps: 6_000_000.0, ..Default::default() };
        let mut r = RateControl::new(1248, cfg);
        // 6 Mbit/s at 60 fps and 1200 B payload: quota ⌊10.4⌋ = 10 packets per frame; the
        // encoder gets 3 Mbit/s: 6,250 B per frame.
        assert_eq!(r.frame_bytes(60.0, 1200), 6_250);
        assert_eq!(r.quota, 10);
        // 6 data packets leave 4 for parity: a policy asking 10 gets 4.
        assert_eq!(r.cap_parity(6, 10), 4);
        // Quota spent: a retransmission of 3 may still carry one parity packet, not two.
        assert_eq!(r.cap_parity(3, 2), 1);
        assert_eq!(r.cap_parity(3, 0), 0);
        assert_eq!(r.stats.parity_capped, 7);
    }

    #[test]
    fn a_high_rate_is_scaled_to_fifty_packets_per_frame() {
        let cfg = GccConfig {
            start_bitrate_bps: 60_000_000.0,
            max_bitrate_bps: 100e6,
            ..Default::default()
        };
        let mut r = RateControl::new(1248, cfg);
        // 60 Mbit/s would be 104.2 packets per frame: scaled to 50 (28.8 Mbit/s), the
        // encoder gets 14.4 Mbit/s: 30,000 B per frame.
        assert_eq!(r.frame_bytes(60.0, 1200), 30_000);
        assert_eq!(r.quota, 50);
    }

    #[test]
    fn feedback_reports_acknowledged_and_lost_packets_and_probes_are_paced() {
        let mut r = RateControl::new(1000, GccConfig::default());
        let t0 = Time::from_millis(1);
        r.start(t0);
        // The initial probes (3× and 6× the 300 kbit/s start) go out as padding, spaced at
        // the probe rate.
        let mut sent = Vec::new();
        let mut t = t0;
        while sent.len() < 200 {
            let Some(next) = r.poll_timeout() else { break };
            t = t.max(next);
            r.handle_timeout(t);
            while let Some((id, bytes)) = r.poll_padding(t) {
                assert!(wire::is_padding(&bytes));
                let seq = sent.len() as u64;
                r.on_sent(t, seq, 1000, Some(id));
                sent.push((t, id));
            }
            if r.probes.is_empty() && r.probe.is_none() {
                break;
            }
        }
        let first: Vec<Time> = sent.iter().filter(|s| s.1 == sent[0].1).map(|s| s.0).collect();
        assert!(first.len() >= 5, "{}", first.len());
        // 900 kbit/s: 1000 B every 8.9 ms.
        let gap = first[1] - first[0];
        assert!((gap.as_secs_f64() - 8e3 / 900e3).abs() < 1e-4, "{gap:?}");
        // Packets 0..n: all acknowledged but #1; the report marks #1 lost, none in flight.
        for (i, (at, _)) in sent.iter().enumerate() {
            if i != 1 {
                r.on_ack(i as u64, *at + TimeDelta::from_millis(10));
            }
        }
        let now = t + FEEDBACK_INTERVAL;
        r.report(now);
        assert!(r.pending.is_empty() && r.acked.is_empty());
        assert_eq!(r.in_flight, 0);
        assert_eq!(r.stats.feedback_reports, 1);
    }
}
