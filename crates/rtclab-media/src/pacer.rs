//! Pacer: sends queued packets at the pacing rate, first in, first out, and runs probe
//! clusters (libwebrtc `PacingController` + `BitrateProber`, spec `gcc.md` §2.11, §2.13).
//!
//! - Pacing: a leaky bucket with no credit for idle time. Like libwebrtc's
//!   `drain_large_queues`, the rate is raised when needed so that the queue drains within
//!   `max_queue_time` (2 s, `kMaxExpectedQueueLength`) less its packets' average time in the
//!   queue (`MaybeUpdateMediaRateDueToLongQueue`: queue size / max(1 ms, limit − average queue
//!   time), `PrioritizedPacketQueue::AverageQueueTime`).
//! - Bursts (optional, the 2017 paper's pacer): the pacer wakes every `burst_interval`
//!   (5 ms) and sends that interval's worth of data at once.
//! - Probing: a cluster becomes active once a media packet of at least
//!   min(200 B, rate × 4 ms) has been queued (`OnIncomingPacket`). Each probe is at least
//!   `rate × 2 × 2 ms` bytes, sent at `start + sent_bytes / rate` regardless of the pacing
//!   rate: queued media first, padding when the queue is empty. A cluster ends after
//!   `min_bytes` and `min_probes`; one not finished within 5 s is dropped. Media sent in a
//!   probe still counts against the pacing budget; padding does not.
//!
//! Priorities follow libwebrtc's (retransmission > video > padding): retransmissions are
//! queued ahead of video (`enqueue_retransmission`); there is no audio stream.

use crate::packetizer::MediaPacket;
use rtclab_cc::ProbeCluster;
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

pub const MAX_QUEUE_TIME: TimeDelta = TimeDelta::from_secs(2);
const MIN_PROBE_DELTA: TimeDelta = TimeDelta::from_millis(2);
const MIN_PROBE_PACKET_SIZE: u64 = 200;
const PROBE_CLUSTER_TIMEOUT: TimeDelta = TimeDelta::from_secs(5);
const MAX_PENDING_CLUSTERS: usize = 5;

/// What the pacer releases: a media packet, or padding of `size` bytes; either may belong to
/// a probe cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Paced {
    pub media: Option<MediaPacket>,
    pub size: u32,
    pub probe_cluster: Option<u32>,
}

#[derive(Clone, Copy, Debug)]
struct ActiveCluster {
    cfg: ProbeCluster,
    requested_at: Time,
    started_at: Option<Time>,
    sent_bytes: u64,
    sent_probes: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// (enqueue time, packet)
    queue: VecDeque<(Time, MediaPacket)>,
    queued_bytes: u64,
    /// The queued packets' enqueue times summed (µs): their average time in the queue is now
    /// less this over their count.
    enqueued_sum_us: u128,
    rate: Rate,
    next_send: Time,
    burst_interval: Option<TimeDelta>,
    clusters: VecDeque<ActiveCluster>,
    probing_active: bool,
    next_probe: Option<Time>,
    /// Bytes of the probe in progress (a probe may take several packets).
    probe_bytes: u64,
    max_padding: u32,
    pub padding_bytes: u64,
    pub probe_clusters_done: u32,
}

impl Pacer {
    pub fn new(rate: Rate) -> Self {
        Pacer { rate, max_padding: 1248, ..Default::default() }
    }

    /// Send in bursts every `interval` (the 2017 paper's 5 ms pacer) instead of smoothly.
    pub fn with_bursts(mut self, interval: Option<TimeDelta>) -> Self {
        self.burst_interval = interval.filter(|i| *i > TimeDelta::ZERO);
        self
    }
    /// The largest padding packet (one full media packet by default).
    pub fn with_max_padding(mut self, bytes: u32) -> Self {
        self.max_padding = bytes.max(MIN_PROBE_PACKET_SIZE as u32);
        self
    }

    /// The configured rate, raised to send the queue within 2 s less its packets' average
    /// time in it.
    fn effective_rate(&self, now: Time) -> Rate {
        let n = self.queue.len() as u128;
        if n == 0 {
            return self.rate;
        }
        let avg_enqueued = Time::from_micros((self.enqueued_sum_us / n) as u64);
        let left = (MAX_QUEUE_TIME - (now - avg_enqueued)).max(TimeDelta::from_millis(1));
        self.rate.max(Rate::from_bytes_per(self.queued_bytes, left))
    }
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }
    pub fn enqueue(&mut self, now: Time, p: MediaPacket) {
        self.queued_bytes += p.size as u64;
        self.enqueued_sum_us += u128::from(now.as_micros());
        self.queue.push_back((now, p));
        // BitrateProber::OnIncomingPacket: a large enough packet starts probing.
        if !self.probing_active {
            if let Some(c) = self.clusters.front() {
                let min = MIN_PROBE_PACKET_SIZE.min(Self::recommended_probe_size(c));
                if p.size as u64 >= min {
                    self.probing_active = true;
                    self.next_probe = Some(now);
                }
            }
        }
    }
    /// A retransmission goes ahead of queued video.
    pub fn enqueue_retransmission(&mut self, now: Time, p: MediaPacket) {
        self.queued_bytes += p.size as u64;
        self.enqueued_sum_us += u128::from(now.as_micros());
        self.queue.push_front((now, p));
    }
    pub fn add_probe_cluster(&mut self, now: Time, c: ProbeCluster) {
        self.clusters.push_back(ActiveCluster {
            cfg: c,
            requested_at: now,
            started_at: None,
            sent_bytes: 0,
            sent_probes: 0,
        });
        while self.clusters.len() > MAX_PENDING_CLUSTERS {
            self.clusters.pop_front();
        }
    }
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    /// How long the packet at the head of the queue has waited (zero when empty).
    pub fn head_delay(&self, now: Time) -> rtclab_core::TimeDelta {
        self.queue.front().map_or(rtclab_core::TimeDelta::ZERO, |(t, _)| now - *t)
    }
    /// The size of the packet the queue releases next, if any.
    pub fn next_size(&self) -> Option<u32> {
        self.queue.front().map(|(_, p)| p.size)
    }
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    pub fn is_probing(&self) -> bool {
        self.probing_active && !self.clusters.is_empty()
    }

    fn recommended_probe_size(c: &ActiveCluster) -> u64 {
        (c.cfg.rate.as_bps() as f64 * 2.0 * MIN_PROBE_DELTA.as_secs_f64() / 8.0) as u64
    }

    /// The active cluster, dropping clusters that waited too long.
    fn current_cluster(&mut self, now: Time) -> Option<ActiveCluster> {
        while let Some(c) = self.clusters.front() {
            if c.started_at.is_none() && now - c.requested_at > PROBE_CLUSTER_TIMEOUT {
                self.clusters.pop_front();
                continue;
            }
            return Some(*c);
        }
        self.probing_active = false;
        None
    }

    fn probe_sent(&mut self, now: Time, size: u64) {
        let Some(c) = self.clusters.front_mut() else { return };
        let started = *c.started_at.get_or_insert(now);
        c.sent_bytes += size;
        self.probe_bytes += size;
        if self.probe_bytes < Self::recommended_probe_size(c) {
            return; // this probe goes on with the next packet, now
        }
        self.probe_bytes = 0;
        c.sent_probes += 1;
        let rate = c.cfg.rate.max(Rate::from_bps(1));
        self.next_probe = Some(started + rate.tx_time(c.sent_bytes));
        if c.sent_bytes >= c.cfg.min_bytes && c.sent_probes >= c.cfg.min_probes {
            self.clusters.pop_front();
            self.probe_clusters_done += 1;
            if let Some(n) = self.clusters.front_mut() {
                n.requested_at = n.requested_at.max(now);
            } else {
                self.probing_active = false; // suspended until a new cluster and packet
            }
        }
    }

    fn pop_media(&mut self, now: Time) -> Option<MediaPacket> {
        let rate = self.effective_rate(now);
        let (at, p) = self.queue.pop_front()?;
        self.queued_bytes -= p.size as u64;
        self.enqueued_sum_us -= u128::from(at.as_micros());
        // Media debt: the next paced packet may leave one serialization time after this one.
        self.next_send = self.next_send.max(now) + rate.tx_time(p.size as u64);
        Some(p)
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Paced> {
        if self.probing_active && self.next_probe.is_some_and(|t| t <= now) {
            if let Some(c) = self.current_cluster(now) {
                let id = Some(c.cfg.id);
                let (media, size) = match self.pop_media(now) {
                    Some(p) => (Some(p), p.size),
                    None => {
                        let want =
                            Self::recommended_probe_size(&c).saturating_sub(self.probe_bytes);
                        let size = want.clamp(MIN_PROBE_PACKET_SIZE, self.max_padding as u64);
                        self.padding_bytes += size;
                        (None, size as u32)
                    }
                };
                self.probe_sent(now, size as u64);
                return Some(Paced { media, size, probe_cluster: id });
            }
        }
        if self.queue.is_empty() || self.rate == Rate::ZERO {
            return None;
        }
        let allowed = match self.burst_interval {
            None => now >= self.next_send,
            // Everything due before the end of this burst interval goes now.
            Some(i) => self.next_send < now + i,
        };
        if !allowed {
            return None;
        }
        let p = self.pop_media(now)?;
        Some(Paced { media: Some(p), size: p.size, probe_cluster: None })
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let probe = if self.is_probing() { self.next_probe } else { None };
        let media = (!self.queue.is_empty()).then(|| match self.burst_interval {
            None => self.next_send,
            // Wake on the burst grid at or after the time the budget allows.
            Some(i) => {
                let k = i.as_nanos().max(1);
                let t0 = self.next_send.as_nanos() as i64 - k;
                Time::from_nanos(if t0 < 0 { 0 } else { (t0 / k + 1) * k } as u64)
            }
        });
        rtclab_core::earliest([probe, media])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::TimeDelta;

    fn p(size: u32) -> MediaPacket {
        MediaPacket {
            frame_id: 0,
            capture_time: Time::ZERO,
            index: 0,
            count: 1,
            size,
            rtx: false,
            key: false,
            encode_ns: 0,
            xor_groups: 0,
            first_sent: None,
        }
    }

    #[test]
    fn spaces_packets_at_the_rate() {
        let mut pacer = Pacer::new(Rate::from_kbps(1_000));
        for _ in 0..3 {
            pacer.enqueue(Time::from_millis(5), p(1250)); // 10 ms each at 1 Mbit/s
        }
        let mut times = Vec::new();
        let mut now = Time::from_millis(5);
        while let Some(t) = pacer.poll_timeout() {
            now = now.max(t);
            if pacer.poll_transmit(now).is_some_and(|x| x.media.is_some()) {
                times.push(now);
            }
        }
        assert_eq!(times, vec![Time::from_millis(5), Time::from_millis(15), Time::from_millis(25)]);
        // Idle time is not banked.
        pacer.enqueue(Time::from_secs(1), p(1250));
        pacer.enqueue(Time::from_secs(1), p(1250));
        let t = Time::from_secs(1);
        assert!(pacer.poll_transmit(t).is_some());
        assert!(pacer.poll_transmit(t).is_none());
        assert_eq!(pacer.poll_timeout(), Some(t + TimeDelta::from_millis(10)));
    }

    #[test]
    fn large_queues_drain_within_two_seconds() {
        let mut pacer = Pacer::new(Rate::from_kbps(100));
        for _ in 0..100 {
            pacer.enqueue(Time::ZERO, p(1250)); // 1 Mbit queued: 10 s at 100 kbit/s
        }
        let mut now = Time::ZERO;
        while let Some(t) = pacer.poll_timeout() {
            now = now.max(t);
            pacer.poll_transmit(now);
        }
        assert!(now <= Time::from_millis(2_010), "drained at {now}");
    }

    /// libwebrtc raises the rate by the packets' average time in the queue, not the oldest's:
    /// 20 kB queued, half of it 1 s old and half new, must leave within 2 − 0.5 s.
    #[test]
    fn the_drain_rate_reads_the_average_time_in_the_queue() {
        let mut pacer = Pacer::new(Rate::from_kbps(10));
        for _ in 0..10 {
            pacer.enqueue(Time::ZERO, p(1000));
        }
        let now = Time::from_secs(1);
        for _ in 0..10 {
            pacer.enqueue(now, p(1000));
        }
        let want = Rate::from_bytes_per(20_000, TimeDelta::from_millis(1_500));
        assert_eq!(pacer.effective_rate(now), want);
        // what leaves is taken out of the average: ten new packets alone are 0 s old
        for _ in 0..10 {
            pacer.pop_media(now).unwrap();
        }
        assert_eq!(
            pacer.effective_rate(now),
            Rate::from_bytes_per(10_000, TimeDelta::from_secs(2))
        );
    }

    fn drain(pacer: &mut Pacer, from: Time, until: Time) -> Vec<(Time, Paced)> {
        let mut out = Vec::new();
        let mut now = from;
        while let Some(t) = pacer.poll_timeout() {
            now = now.max(t);
            if now > until {
                break;
            }
            match pacer.poll_transmit(now) {
                Some(x) => out.push((now, x)),
                None => now += TimeDelta::from_nanos(1),
            }
        }
        out
    }

    #[test]
    fn probe_cluster_runs_at_its_rate_with_padding() {
        let mut pacer = Pacer::new(Rate::from_kbps(300));
        let c =
            ProbeCluster { id: 4, rate: Rate::from_kbps(1_800), min_bytes: 3_375, min_probes: 5 };
        pacer.add_probe_cluster(Time::ZERO, c);
        assert!(!pacer.is_probing(), "waits for a media packet");
        pacer.enqueue(Time::ZERO, p(1000));
        assert!(pacer.is_probing());
        let sent = drain(&mut pacer, Time::ZERO, Time::from_millis(100));
        let probe: Vec<_> = sent.iter().filter(|x| x.1.probe_cluster == Some(4)).collect();
        assert!(probe[0].1.media.is_some(), "media first");
        assert!(probe[1..].iter().all(|x| x.1.media.is_none()), "then padding");
        let bytes: u64 = probe.iter().map(|x| x.1.size as u64).sum();
        assert!(bytes >= 3_375 && probe.len() >= 5, "{bytes} B in {} probes", probe.len());
        // Sent at the probe rate: (bytes before the last) / span ≈ 1.8 Mbit/s.
        let span = (probe.last().unwrap().0 - probe[0].0).as_secs_f64();
        let rate = (bytes - probe.last().unwrap().1.size as u64) as f64 * 8.0 / span;
        assert!((rate / 1_800_000.0 - 1.0).abs() < 0.05, "{rate}");
        assert_eq!(pacer.probe_clusters_done, 1);
        assert!(!pacer.is_probing());
    }

    #[test]
    fn stale_clusters_are_dropped() {
        let mut pacer = Pacer::new(Rate::from_kbps(300));
        let c = ProbeCluster { id: 1, rate: Rate::from_kbps(900), min_bytes: 1_000, min_probes: 5 };
        pacer.add_probe_cluster(Time::ZERO, c);
        pacer.enqueue(Time::from_secs(6), p(1000));
        let sent = drain(&mut pacer, Time::from_secs(6), Time::from_secs(7));
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].1.probe_cluster, None);
    }

    #[test]
    fn bursts_release_five_ms_of_data_at_once() {
        let mut pacer =
            Pacer::new(Rate::from_kbps(2_000)).with_bursts(Some(TimeDelta::from_millis(5)));
        for _ in 0..8 {
            pacer.enqueue(Time::ZERO, p(625)); // 2.5 ms each at 2 Mbit/s
        }
        let sent = drain(&mut pacer, Time::ZERO, Time::from_secs(1));
        let times: Vec<u64> = sent.iter().map(|x| x.0.as_nanos() / 1_000_000).collect();
        assert_eq!(times, vec![0, 0, 5, 5, 10, 10, 15, 15]);
    }
}
