//! Probe result estimation: libwebrtc `ProbeBitrateEstimator` (spec `gcc.md` §2.11).
//!
//! For each probe cluster, the received probe packets give a send rate (bytes minus the
//! last-sent packet over the send span) and a receive rate (bytes minus the first-received
//! packet over the receive span). A cluster is usable once at least 80 % of its packets and
//! bytes have arrived and both spans are in (0, 1 s]. The result is the smaller of the two
//! rates; when the receive rate is under 90 % of the send rate the link was saturated and the
//! result is 95 % of the receive rate. A receive/send ratio above 2 is rejected as bogus.
//! Clusters are forgotten 1 s after their last arrival.

use crate::{PacketResult, ProbeCluster};
use rtclab_core::{Time, TimeDelta};
use std::collections::BTreeMap;

const MIN_RECEIVED_PROBES_RATIO: f64 = 0.80;
const MIN_RECEIVED_BYTES_RATIO: f64 = 0.80;
const MAX_PROBE_INTERVAL: TimeDelta = TimeDelta::from_secs(1);
const MAX_VALID_RATIO: f64 = 2.0;
const MIN_RATIO_FOR_UNSATURATED_LINK: f64 = 0.9;
const TARGET_UTILIZATION_FRACTION: f64 = 0.95;
const MAX_CLUSTER_HISTORY: TimeDelta = TimeDelta::from_secs(1);

#[derive(Clone, Copy, Debug)]
struct Aggregate {
    min_probes: u32,
    min_bytes: u64,
    first_send: Time,
    last_send: Time,
    first_receive: Time,
    last_receive: Time,
    size_last_send: u32,
    size_first_receive: u32,
    size_total: u64,
    num_probes: u32,
}

#[derive(Clone, Debug, Default)]
pub struct ProbeBitrateEstimator {
    /// Clusters this sender created (id → (min probes, min bytes)).
    configs: BTreeMap<u32, (u32, u64)>,
    clusters: BTreeMap<u32, Aggregate>,
    estimate_bps: Option<f64>,
}

impl ProbeBitrateEstimator {
    /// Remembers a cluster's size requirements (the pacer tags packets with its id only).
    pub fn on_cluster_created(&mut self, c: &ProbeCluster) {
        self.configs.insert(c.id, (c.min_probes, c.min_bytes));
        while self.configs.len() > 64 {
            self.configs.pop_first();
        }
    }

    /// One received probe packet; returns the cluster's estimate if it is now valid.
    pub fn on_probe_packet(&mut self, p: &PacketResult) -> Option<f64> {
        let id = p.probe_cluster?;
        let arrival = p.arrival?;
        let &(min_probes, min_bytes) = self.configs.get(&id)?;
        self.clusters.retain(|_, c| arrival - c.last_receive <= MAX_CLUSTER_HISTORY);
        let c = self.clusters.entry(id).or_insert(Aggregate {
            min_probes,
            min_bytes,
            first_send: p.send_time,
            last_send: p.send_time,
            first_receive: arrival,
            last_receive: arrival,
            size_last_send: p.size,
            size_first_receive: p.size,
            size_total: 0,
            num_probes: 0,
        });
        if p.send_time < c.first_send {
            c.first_send = p.send_time;
        }
        if p.send_time >= c.last_send {
            c.last_send = p.send_time;
            c.size_last_send = p.size;
        }
        if arrival < c.first_receive {
            c.first_receive = arrival;
            c.size_first_receive = p.size;
        }
        if arrival > c.last_receive {
            c.last_receive = arrival;
        }
        c.size_total += p.size as u64;
        c.num_probes += 1;

        if (c.num_probes as f64) < MIN_RECEIVED_PROBES_RATIO * c.min_probes as f64
            || (c.size_total as f64) < MIN_RECEIVED_BYTES_RATIO * c.min_bytes as f64
        {
            return None;
        }
        let send_interval = c.last_send - c.first_send;
        let receive_interval = c.last_receive - c.first_receive;
        if send_interval <= TimeDelta::ZERO
            || send_interval > MAX_PROBE_INTERVAL
            || receive_interval <= TimeDelta::ZERO
            || receive_interval > MAX_PROBE_INTERVAL
        {
            return None;
        }
        let send_size = c.size_total - c.size_last_send as u64;
        let send_bps = send_size as f64 * 8.0 / send_interval.as_secs_f64();
        let receive_size = c.size_total - c.size_first_receive as u64;
        let receive_bps = receive_size as f64 * 8.0 / receive_interval.as_secs_f64();
        if receive_bps / send_bps > MAX_VALID_RATIO {
            return None;
        }
        let mut res = send_bps.min(receive_bps);
        if receive_bps < MIN_RATIO_FOR_UNSATURATED_LINK * send_bps {
            res = TARGET_UTILIZATION_FRACTION * receive_bps;
        }
        self.estimate_bps = Some(res);
        Some(res)
    }

    /// The newest valid probe estimate, once.
    pub fn take_estimate(&mut self) -> Option<f64> {
        self.estimate_bps.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::Rate;

    fn cluster(id: u32) -> ProbeCluster {
        ProbeCluster { id, rate: Rate::from_kbps(1_000), min_bytes: 1_875, min_probes: 5 }
    }
    fn pkt(id: u32, send_ms: u64, recv_ms: u64, size: u32) -> PacketResult {
        PacketResult {
            seq: 0,
            send_time: Time::from_millis(send_ms),
            arrival: Some(Time::from_millis(recv_ms)),
            size,
            probe_cluster: Some(id),
            ce: false,
        }
    }

    #[test]
    fn estimates_once_enough_probes_arrive() {
        // libwebrtc ProbeBitrateEstimatorTest.OneCluster: 4 × 1000 B, sent 10 ms apart,
        // received 10 ms apart → 800 kbit/s.
        let mut e = ProbeBitrateEstimator::default();
        e.on_cluster_created(&cluster(0));
        assert_eq!(e.on_probe_packet(&pkt(0, 0, 10, 1000)), None);
        assert_eq!(e.on_probe_packet(&pkt(0, 10, 20, 1000)), None);
        assert_eq!(e.on_probe_packet(&pkt(0, 20, 30, 1000)), None);
        let r = e.on_probe_packet(&pkt(0, 30, 40, 1000)).unwrap();
        assert!((r - 800_000.0).abs() < 10.0, "{r}");
        assert_eq!(e.take_estimate(), Some(r));
        assert_eq!(e.take_estimate(), None);
    }

    #[test]
    fn saturated_link_gives_95_percent_of_receive_rate() {
        // Sent at 800 kbit/s, received at 400 kbit/s (libwebrtc FastReceive/SlowReceive).
        let mut e = ProbeBitrateEstimator::default();
        e.on_cluster_created(&cluster(1));
        let mut r = None;
        for i in 0..4 {
            r = e.on_probe_packet(&pkt(1, i * 10, 10 + i * 20, 1000));
        }
        let r = r.unwrap();
        assert!((r - 0.95 * 400_000.0).abs() < 10.0, "{r}");
    }

    #[test]
    fn too_few_packets_or_unknown_clusters_give_nothing() {
        let mut e = ProbeBitrateEstimator::default();
        e.on_cluster_created(&cluster(2));
        assert_eq!(e.on_probe_packet(&pkt(2, 0, 10, 1000)), None);
        assert_eq!(e.on_probe_packet(&pkt(2, 10, 20, 1000)), None);
        assert_eq!(e.on_probe_packet(&pkt(2, 20, 30, 1000)), None);
        assert_eq!(e.on_probe_packet(&pkt(9, 0, 10, 1000)), None);
        // Receive faster than 2x send: rejected.
        let mut e = ProbeBitrateEstimator::default();
        e.on_cluster_created(&cluster(3));
        let mut r = None;
        for i in 0..5 {
            r = e.on_probe_packet(&pkt(3, i * 30, 100 + i * 10, 1000));
        }
        assert_eq!(r, None);
    }
}
