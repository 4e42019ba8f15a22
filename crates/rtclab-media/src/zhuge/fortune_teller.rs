//! Zhuge's Fortune Teller: a per-packet prediction, at the moment a packet reaches the access
//! point, of the time it will take to reach the client (`totalDelay = qLong + qShort + tx`).
//!
//! Lineage: Meng et al., *Achieving Consistent Low Latency for Wireless Real-Time
//! Communications with the Shortest Control Loop* (SIGCOMM 2022), dissertation §4.4 (Eq. 4.1,
//! 4.2); the estimators' exact forms follow the released ns-3 code
//! (transys-project/zhuge `network-queue-zhuge.cc`) as the spec (`zhuge-metis.md` A.3) lays
//! them out, on exact dequeue timestamps instead of a 1 ms poller:
//! - `txRate` = bytes dequeued in the last `w_rate` / the 1 ms slots of `w_rate` that were not
//!   idle (an application-limited flow does not look like a slow link), at least 512 kbit/s;
//! - `tx` = the non-idle slots / the slots in which something was dequeued, in ms (the mean
//!   interval between dequeue bursts; the whole window if nothing left);
//! - `qShort` = how long the head-of-line packet has waited (0 with an empty queue);
//! - `qLong(p)` = 8 · max(bytes ahead of p − the largest 1 ms burst of dequeues, 0) / txRate.
//!
//! - on a link that sends A-MPDUs (its dequeue records carry aggregate numbers: a `wifi`
//!   link) the released code's Wi-Fi rule replaces Eq. 4.1: `qLong` = 8 · bytes ahead / txRate,
//!   but 0 when the bytes ahead fit in `ampdu_wait` (5 ms) at txRate and have not shrunk since
//!   the previous prediction (the packet will likely ride in the head's aggregate, whose wait
//!   `qShort` and `tx` already hold).
//!
//! What the queue looks like is learnt from what passes the middlebox (every packet entering
//! the link behind it) and the link's dequeue records (each with the discipline's backlog
//! after it): bytes ahead of an arrival = the backlog at the last dequeue + the bytes that
//! arrived since. The statistics are those of the whole queue, which is exact for a FIFO; for
//! per-flow queues (FQ-CoDel) the dissertation uses the flow's own queue, not done here.

use rtclab_core::{FlowId, Packet, PacketKind, Time, TimeDelta};
use rtclab_net::element::DequeueRecord;
use std::collections::VecDeque;

/// The slot within which dequeues count as one burst (and one "dequeue interval"), and the
/// granularity of idle time (the released code's 1 ms sampler).
const SLOT: TimeDelta = TimeDelta::from_millis(1);

fn slot_of(t: Time) -> u64 {
    t.as_nanos() / SLOT.as_nanos() as u64
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FortuneTellerConfig {
    /// Window of the dequeue-rate and dequeue-interval estimates (dissertation: 40 ms; the
    /// released code: 200 ms).
    pub w_rate: TimeDelta,
    /// Floor of the rate estimate, bit/s (512 kbit/s).
    pub min_tx_rate_bps: f64,
    /// Include the head-of-line waiting time (the code turns it off in its wired mode).
    pub qshort: bool,
    /// A-MPDU rule (aggregating links only): bytes ahead worth less than this at txRate
    /// count as riding in the head's aggregate (`kAmpduMaxWaitMs`, 5 ms).
    pub ampdu_wait: TimeDelta,
}

impl Default for FortuneTellerConfig {
    fn default() -> Self {
        FortuneTellerConfig {
            w_rate: TimeDelta::from_millis(40),
            min_tx_rate_bps: 512_000.0,
            qshort: true,
            ampdu_wait: TimeDelta::from_millis(5),
        }
    }
}

/// One prediction and its parts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Prediction {
    pub q_long: TimeDelta,
    pub q_short: TimeDelta,
    pub tx: TimeDelta,
    /// Bytes in the queue ahead of the packet.
    pub bytes_ahead: u64,
}

impl Prediction {
    pub fn total(&self) -> TimeDelta {
        self.q_long + self.q_short + self.tx
    }
}

#[derive(Debug)]
pub struct FortuneTeller {
    cfg: FortuneTellerConfig,
    /// (time, bytes) of dequeues within the window.
    dequeues: VecDeque<(Time, u32)>,
    /// Their bytes, kept as they enter and leave the window (both rates read it per packet).
    dequeued_bytes: u64,
    /// Closed intervals with an empty queue, within the window.
    idle: VecDeque<(Time, Time)>,
    /// Since when the queue has been empty (None: it holds packets).
    idle_since: Option<Time>,
    /// Backlog after the last dequeue, plus what arrived since.
    backlog_bytes: u64,
    /// Packets that went into the link and have not been seen leaving, oldest first.
    shadow: VecDeque<(Time, FlowId, u64, PacketKind)>,
    /// The link sends A-MPDUs (seen in its dequeue records).
    aggregated: bool,
    /// Bytes ahead at the previous prediction (the A-MPDU rule).
    last_ahead: u64,
}

impl FortuneTeller {
    pub fn new(cfg: FortuneTellerConfig) -> Self {
        FortuneTeller {
            cfg,
            dequeues: VecDeque::new(),
            dequeued_bytes: 0,
            idle: VecDeque::new(),
            idle_since: Some(Time::ZERO),
            backlog_bytes: 0,
            shadow: VecDeque::new(),
            aggregated: false,
            last_ahead: 0,
        }
    }

    /// The current 1 ms slot and the first slot of the window.
    fn window(&self, now: Time) -> (u64, u64) {
        let cur = slot_of(now);
        let w = (self.cfg.w_rate.as_nanos() / SLOT.as_nanos()).max(1) as u64;
        (cur, (cur + 1).saturating_sub(w))
    }

    fn expire(&mut self, now: Time) {
        let (_, first) = self.window(now);
        while self.dequeues.front().is_some_and(|d| slot_of(d.0) < first) {
            if let Some((_, b)) = self.dequeues.pop_front() {
                self.dequeued_bytes -= b as u64;
            }
        }
        while self.idle.front().is_some_and(|i| slot_of(i.1) <= first) {
            self.idle.pop_front();
        }
    }

    /// Slots of the window with neither a dequeue nor a packet waiting (the released code's
    /// "idle" slots): those strictly between the dequeue that emptied the queue and the next
    /// arrival.
    fn idle_slots(&self, now: Time) -> u64 {
        let (cur, first) = self.window(now);
        let overlap = |lo: u64, hi: u64| hi.min(cur + 1).saturating_sub(lo.max(first));
        let closed: u64 = self.idle.iter().map(|&(a, b)| overlap(slot_of(a) + 1, slot_of(b))).sum();
        closed + self.idle_since.map_or(0, |a| overlap(slot_of(a) + 1, cur + 1))
    }

    /// The window's non-idle slots, at least one.
    fn busy_slots(&self, now: Time) -> u64 {
        let (cur, first) = self.window(now);
        ((cur + 1 - first).saturating_sub(self.idle_slots(now))).max(1)
    }

    /// Dequeue rate over the window's non-idle time, bit/s.
    pub fn tx_rate_bps(&mut self, now: Time) -> f64 {
        self.expire(now);
        let bytes = self.dequeued_bytes;
        let busy = self.busy_slots(now) as f64 * SLOT.as_secs_f64();
        (8.0 * bytes as f64 / busy).max(self.cfg.min_tx_rate_bps)
    }

    /// Dequeue rate over the whole window, idle time included (what actually left), bit/s, at
    /// least the floor: ABC's "current" rate (the released `m_curTxTransRateBps`).
    pub fn window_rate_bps(&mut self, now: Time) -> f64 {
        self.expire(now);
        let (cur, first) = self.window(now);
        let bytes = self.dequeued_bytes;
        let span = (cur + 1 - first) as f64 * SLOT.as_secs_f64();
        (8.0 * bytes as f64 / span).max(self.cfg.min_tx_rate_bps)
    }

    /// Bytes in the link's queue now: the backlog after the last dequeue plus what arrived since.
    pub fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }

    /// Per-slot bursts: (number of 1 ms slots with a dequeue, largest bytes in one slot).
    fn slots(&self) -> (u32, u64) {
        let (mut n, mut max, mut cur_slot, mut cur) = (0u32, 0u64, None, 0u64);
        for &(t, b) in &self.dequeues {
            let s = slot_of(t);
            if cur_slot != Some(s) {
                max = max.max(cur);
                cur = 0;
                n += 1;
                cur_slot = Some(s);
            }
            cur += b as u64;
        }
        (n, max.max(cur))
    }

    /// The prediction for a packet arriving now (before it enters the queue).
    pub fn predict(&mut self, now: Time) -> Prediction {
        let rate = self.tx_rate_bps(now);
        let (n_slots, max_burst) = self.slots();
        let tx = if n_slots == 0 {
            self.cfg.w_rate
        } else {
            TimeDelta::from_nanos(SLOT.as_nanos() * self.busy_slots(now) as i64 / n_slots as i64)
        };
        let ahead = self.backlog_bytes;
        let q_long = if self.aggregated {
            let in_head_aggregate = 8.0 * ahead as f64 <= self.cfg.ampdu_wait.as_secs_f64() * rate
                && ahead >= self.last_ahead;
            if in_head_aggregate {
                TimeDelta::ZERO
            } else {
                TimeDelta::from_secs_f64(8.0 * ahead as f64 / rate)
            }
        } else {
            TimeDelta::from_secs_f64(8.0 * ahead.saturating_sub(max_burst) as f64 / rate)
        };
        self.last_ahead = ahead;
        let q_short = match self.shadow.front() {
            Some(&(t, ..)) if self.cfg.qshort && ahead > 0 => now - t,
            _ => TimeDelta::ZERO,
        };
        Prediction { q_long, q_short, tx, bytes_ahead: ahead }
    }

    /// A packet passed the middlebox into the link's queue.
    pub fn on_arrival(&mut self, now: Time, pkt: &Packet) {
        if let Some(a) = self.idle_since.take() {
            self.idle.push_back((a, now));
        }
        self.backlog_bytes += pkt.size as u64;
        self.shadow.push_back((now, pkt.flow, pkt.seq, pkt.kind));
    }

    /// The link took a packet from its queue.
    pub fn on_dequeue(&mut self, now: Time, rec: &DequeueRecord) {
        self.dequeues.push_back((now, rec.pkt.size));
        self.dequeued_bytes += rec.pkt.size as u64;
        self.aggregated = rec.aggregate.is_some();
        self.expire(now);
        self.backlog_bytes = rec.backlog.bytes;
        let key = (rec.pkt.flow, rec.pkt.seq, rec.pkt.kind);
        if let Some(i) = self.shadow.iter().position(|e| (e.1, e.2, e.3) == key) {
            self.shadow.drain(..=i);
        }
        if rec.backlog.packets == 0 {
            self.shadow.clear();
            self.idle_since.get_or_insert(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_net::qdisc::Backlog;

    fn pkt(seq: u64) -> Packet {
        Packet::data(FlowId(0), seq, 1500, Time::ZERO)
    }

    fn deq(ft: &mut FortuneTeller, t: Time, seq: u64, backlog: u32) {
        let rec = DequeueRecord {
            pkt: pkt(seq),
            sojourn: TimeDelta::ZERO,
            backlog: Backlog { packets: backlog, bytes: backlog as u64 * 1500 },
            aggregate: None,
            leaves_at: None,
        };
        ft.on_dequeue(t, &rec);
    }

    #[test]
    fn rate_and_interval_exclude_idle_time() {
        // 10 packets dequeued one per ms in [0, 10) ms, then the queue is empty for 30 ms:
        // over a 40 ms window the rate is 15 kB / 10 ms busy = 12 Mbit/s, not 3, and the
        // dequeue interval 1 ms.
        let mut ft = FortuneTeller::new(FortuneTellerConfig::default());
        for s in 0..10 {
            ft.on_arrival(Time::ZERO, &pkt(s));
        }
        for s in 0..10u64 {
            deq(&mut ft, Time::from_millis(s), s, 9 - s as u32);
        }
        let now = Time::from_millis(39);
        let r = ft.tx_rate_bps(now);
        assert!((r - 12e6).abs() < 0.5e6, "{r}");
        let p = ft.predict(now);
        assert_eq!(p.tx, TimeDelta::from_millis(1));
        assert_eq!(p.bytes_ahead, 0);
        assert_eq!(p.q_long + p.q_short, TimeDelta::ZERO);
        // Nothing dequeued in the window: tx is the whole window; the rate its floor.
        let mut ft = FortuneTeller::new(FortuneTellerConfig::default());
        let p = ft.predict(Time::from_millis(100));
        assert_eq!(p.tx, TimeDelta::from_millis(40));
        assert_eq!(ft.tx_rate_bps(Time::from_millis(100)), 512_000.0);
    }

    #[test]
    fn the_ampdu_rule_zeroes_qlong_for_a_growing_queue_within_one_aggregate() {
        // An aggregating link: 10 packets leave in one A-MPDU every 2 ms, the queue empty
        // in between.
        let mut ft = FortuneTeller::new(FortuneTellerConfig::default());
        let mut seq = 0;
        for burst in 0..20u64 {
            let t = Time::from_millis(2 * burst);
            for _ in 0..10 {
                ft.on_arrival(t, &pkt(seq));
                seq += 1;
            }
            for k in 0..10 {
                let rec = DequeueRecord {
                    pkt: pkt(seq - 10 + k),
                    sojourn: TimeDelta::ZERO,
                    backlog: Backlog { packets: 9 - k as u32, bytes: (9 - k) * 1500 },
                    aggregate: Some(burst),
                    leaves_at: None,
                };
                ft.on_dequeue(t + TimeDelta::from_micros(500), &rec);
            }
        }
        let t = Time::from_millis(40);
        // A growing queue within 5 ms at txRate: qLong 0; beyond it, the whole backlog at
        // txRate (no burst credit as in Eq. 4.1).
        loop {
            let rate = ft.tx_rate_bps(t);
            let limit = (0.005 * rate / 8.0) as u64; // 5 ms worth of bytes
            let p = ft.predict(t);
            if p.bytes_ahead <= limit {
                assert_eq!(p.q_long, TimeDelta::ZERO, "{p:?}");
            } else {
                let want = 8.0 * p.bytes_ahead as f64 / rate;
                assert!((p.q_long.as_secs_f64() - want).abs() < 1e-6, "{p:?} {want}");
                break;
            }
            ft.on_arrival(t, &pkt(seq));
            seq += 1;
        }
        // A queue that shrank since the last prediction gets its qLong even when short.
        let rec = DequeueRecord {
            pkt: pkt(200),
            sojourn: TimeDelta::ZERO,
            backlog: Backlog { packets: 2, bytes: 3000 },
            aggregate: Some(20),
            leaves_at: None,
        };
        ft.on_dequeue(t, &rec);
        let p = ft.predict(t);
        assert!(p.q_long > TimeDelta::ZERO, "{p:?}");
    }

    #[test]
    fn queue_ahead_and_head_of_line_wait() {
        // One packet per ms leaves a queue that keeps 20 packets: a packet arriving sees
        // 20 · 1500 B ahead, less the largest 1 ms burst (1500 B), at 12 Mbit/s: 19 ms of
        // qLong; the head has waited since it arrived.
        let mut ft = FortuneTeller::new(FortuneTellerConfig::default());
        let mut seq = 0;
        for _ in 0..21 {
            ft.on_arrival(Time::ZERO, &pkt(seq));
            seq += 1;
        }
        for t in 0..40u64 {
            let now = Time::from_millis(t);
            deq(&mut ft, now, t, 20);
            ft.on_arrival(now, &pkt(seq));
            seq += 1;
        }
        let now = Time::from_millis(40) - TimeDelta::from_micros(1);
        let p = ft.predict(now);
        assert_eq!(p.bytes_ahead, 21 * 1500);
        let ql = p.q_long.as_millis_f64();
        assert!((ql - 20.0).abs() < 0.6, "{ql}");
        // The head (seq 40, arrived at 19 ms) has waited about 21 ms.
        assert!((p.q_short.as_millis_f64() - 21.0).abs() < 0.01, "{:?}", p.q_short);
        let no_short = FortuneTellerConfig { qshort: false, ..Default::default() };
        let mut ft2 = FortuneTeller::new(no_short);
        ft2.on_arrival(Time::ZERO, &pkt(0));
        assert_eq!(ft2.predict(Time::from_millis(5)).q_short, TimeDelta::ZERO);
    }
}
