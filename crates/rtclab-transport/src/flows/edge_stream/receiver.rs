//! The edge-stream receiver: acknowledges every packet at once, recovers a batch when at
//! least as many of its packets (data + parity) arrived as it has data packets (an ideal MDS
//! code: Reed-Solomon in production, spec §3.2), keeps the data packets of a batch that
//! failed, and delivers a frame when all its data is in. It measures what the Hairpin chapter
//! reports (spec §3.8, released `process_results.py`): the deadline miss rate (DMR) — per 1 s
//! bin of frame encode time, the share of frames not delivered within the deadline, averaged
//! over the bins — and the delivered frames' end-to-end delay.
//!
//! Frames are produced at a fixed rate, so frame i was encoded at origin + i × interval: a
//! frame none of whose packets arrived still counts, in its bin. Frames whose deadline falls
//! after the last arrival (still in flight at the end) are not counted.

use super::wire::{is_padding, Chunk, ChunkAck};
use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, LogHistogram, Packet, Payload, Time, TimeDelta, Transmit,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

const ACK_SIZE: u32 = 64;

struct FrameRx {
    have: Vec<bool>,
    count: u32,
    /// Batch → (its data members, packets of it arrived).
    batches: BTreeMap<u64, (Arc<[u32]>, u32)>,
}

pub struct EdgeStreamReceiver {
    flow: FlowId,
    deadline: TimeDelta,
    out: VecDeque<Transmit>,
    events: VecDeque<EndpointEvent>,
    partial: BTreeMap<u64, FrameRx>,
    /// Delay of each completed frame, by frame id (None: not completed).
    delays: Vec<Option<TimeDelta>>,
    /// Encode time of frame 0 and the frame interval.
    origin: Option<(Time, TimeDelta)>,
    last_arrival: Option<Time>,
    last_batch: Option<(u64, Time)>,
    dispersion: Option<TimeDelta>,
    delay_hist: LogHistogram,
    pub packets: u64,
    pub recovered_by_fec: u64,
    /// Padding packets (a congestion controller's probes), acknowledged and otherwise ignored.
    pub padding: u64,
    /// Packets whose payload was not an edge-stream chunk.
    pub undecodable: u64,
}

impl EdgeStreamReceiver {
    pub fn new(flow: FlowId, deadline: TimeDelta) -> Self {
        EdgeStreamReceiver {
            flow,
            deadline,
            out: VecDeque::new(),
            events: VecDeque::new(),
            partial: BTreeMap::new(),
            delays: Vec::new(),
            origin: None,
            last_arrival: None,
            last_batch: None,
            dispersion: None,
            delay_hist: LogHistogram::new(),
            packets: 0,
            recovered_by_fec: 0,
            padding: 0,
            undecodable: 0,
        }
    }

    fn completed(&self, frame: u64) -> bool {
        self.delays.get(frame as usize).is_some_and(Option::is_some)
    }

    /// (frames counted, DMR as the mean over 1 s bins, frames missed).
    pub fn deadline_misses(&self) -> (u64, f64, u64) {
        let (Some((origin, interval)), Some(last)) = (self.origin, self.last_arrival) else {
            return (0, f64::NAN, 0);
        };
        let mut bins: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        let (mut frames, mut missed) = (0, 0);
        for (i, d) in self.delays.iter().enumerate() {
            let encode = origin + TimeDelta::from_nanos(interval.as_nanos() * i as i64);
            if encode + self.deadline > last {
                break;
            }
            let miss = d.is_none_or(|d| d > self.deadline);
            let b = bins.entry(encode.as_nanos() / 1_000_000_000).or_default();
            b.0 += 1;
            b.1 += miss as u64;
            frames += 1;
            missed += miss as u64;
        }
        if bins.is_empty() {
            return (0, f64::NAN, 0);
        }
        let dmr =
            bins.values().map(|(n, m)| *m as f64 / *n as f64).sum::<f64>() / bins.len() as f64;
        (frames, dmr, missed)
    }

    fn on_chunk(&mut self, now: Time, c: &Chunk) -> Option<u64> {
        let frame = c.frame;
        if self.origin.is_none() {
            let interval = TimeDelta::from_nanos(c.interval_ns as i64);
            let back = TimeDelta::from_nanos(interval.as_nanos() * frame as i64);
            self.origin = Some((c.encode - back, interval));
        }
        if self.delays.len() <= frame as usize {
            self.delays.resize(frame as usize + 1, None);
        }
        if self.completed(frame) {
            return Some(frame); // tell the sender again
        }
        let f = self.partial.entry(frame).or_insert_with(|| FrameRx {
            have: vec![false; c.frame_packets as usize],
            count: 0,
            batches: BTreeMap::new(),
        });
        if let Some(i) = c.data_index {
            if let Some(h) = f.have.get_mut(i as usize).filter(|h| !**h) {
                *h = true;
                f.count += 1;
            }
        }
        let b = f.batches.entry(c.batch).or_insert_with(|| (c.members.clone(), 0));
        b.1 += 1;
        if b.1 as usize >= b.0.len() {
            for &m in b.0.iter() {
                if let Some(h) = f.have.get_mut(m as usize).filter(|h| !**h) {
                    *h = true;
                    f.count += 1;
                    self.recovered_by_fec += 1;
                }
            }
        }
        if f.count < c.frame_packets {
            return None;
        }
        self.partial.remove(&frame);
        let delay = now - c.encode;
        self.delays[frame as usize] = Some(delay);
        self.delay_hist.record(delay.as_nanos().max(0) as u64);
        self.events.push_back(EndpointEvent::FrameComplete { delay });
        // Partial frames far past their deadline are given up.
        let horizon = now - self.deadline - TimeDelta::from_secs(1);
        if let Some((origin, interval)) = self.origin {
            let stale: Vec<u64> = self
                .partial
                .keys()
                .copied()
                .filter(|&k| {
                    origin + TimeDelta::from_nanos(interval.as_nanos() * k as i64) < horizon
                })
                .collect();
            for k in stale {
                self.partial.remove(&k);
            }
        }
        Some(frame)
    }

    fn ack(&mut self, now: Time, pkt: &Packet, ack: ChunkAck) {
        let p = Packet::ack(self.flow, pkt.seq, pkt.sent_at, ACK_SIZE, now);
        self.out.push_back(Transmit { pkt: p, payload: Some(Payload::bytes(ack.encode())) });
    }
}

impl Endpoint for EdgeStreamReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet, payload: Option<Payload>) {
        let bytes = payload.as_ref().and_then(|p| p.downcast_ref::<Vec<u8>>());
        let arrival_ns = now.as_nanos();
        if bytes.is_some_and(|b| is_padding(b)) {
            self.padding += 1;
            let ack = ChunkAck {
                seq: pkt.seq,
                data: None,
                frame_done: None,
                dispersion_ns: 0,
                arrival_ns,
            };
            self.ack(now, pkt, ack);
            return;
        }
        let Some(c) = bytes.and_then(|b| Chunk::decode(b)) else {
            self.undecodable += 1;
            return;
        };
        let c = &c;
        self.packets += 1;
        self.last_arrival = Some(now);
        if let Some((b, t)) = self.last_batch {
            if b == c.batch {
                let sample = now - t;
                self.dispersion = Some(match self.dispersion {
                    None => sample,
                    Some(d) => d + (sample - d).mul_f64(0.125),
                });
            }
        }
        self.last_batch = Some((c.batch, now));
        let frame_done = self.on_chunk(now, c);
        let ack = ChunkAck {
            seq: pkt.seq,
            data: c.data_index.map(|i| (c.frame, i)),
            frame_done,
            dispersion_ns: self.dispersion.map_or(0, |d| d.as_nanos().max(0) as u64),
            arrival_ns,
        };
        self.ack(now, pkt, ack);
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_transmit(&mut self, _now: Time) -> Option<Transmit> {
        self.out.pop_front()
    }
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        self.events.pop_front()
    }
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let (frames, dmr, missed) = self.deadline_misses();
        let q = |p| self.delay_hist.quantile(p).map_or(f64::NAN, |v| v as f64 / 1e6);
        vec![
            ("dmr", dmr),
            ("frames_counted", frames as f64),
            ("frames_missed", missed as f64),
            ("frame_delay_ms_mean", self.delay_hist.mean().map_or(f64::NAN, |v| v / 1e6)),
            ("frame_delay_p50_ms", q(0.5)),
            ("frame_delay_p99_ms", q(0.99)),
            ("packets_recovered_by_fec", self.recovered_by_fec as f64),
            ("padding_packets_received", self.padding as f64),
            ("undecodable_packets", self.undecodable as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(frame: u64, batch: u64, members: &Arc<[u32]>, data_index: Option<u32>) -> Chunk {
        Chunk {
            frame,
            encode: Time::from_millis(frame * 10),
            frame_packets: 4,
            interval_ns: 10_000_000,
            batch,
            members: members.clone(),
            data_index,
            round: 0,
        }
    }

    fn feed(r: &mut EdgeStreamReceiver, at_ms: u64, c: Chunk) -> ChunkAck {
        let p = Packet::data(FlowId(0), r.packets, 1000, Time::from_millis(at_ms));
        r.handle_packet(Time::from_millis(at_ms), &p, Some(Payload::bytes(c.encode())));
        let t = r.poll_transmit(Time::from_millis(at_ms)).unwrap();
        ChunkAck::decode(t.payload.unwrap().downcast_ref::<Vec<u8>>().unwrap()).unwrap()
    }

    #[test]
    fn a_batch_recovers_with_as_many_packets_as_data_and_keeps_data_of_a_failed_one() {
        let mut r = EdgeStreamReceiver::new(FlowId(0), TimeDelta::from_millis(100));
        let all: Arc<[u32]> = vec![0, 1, 2, 3].into();
        // Frame 0: data 0, 1, 3 and one parity of the same batch: recovered at the parity.
        assert!(feed(&mut r, 5, chunk(0, 0, &all, Some(0))).frame_done.is_none());
        feed(&mut r, 5, chunk(0, 0, &all, Some(1)));
        feed(&mut r, 6, chunk(0, 0, &all, Some(3)));
        let a = feed(&mut r, 6, chunk(0, 0, &all, None));
        assert_eq!(a.frame_done, Some(0));
        assert_eq!(r.recovered_by_fec, 1);
        // Frame 1: the first batch loses 2 of 4 data and its parity; data 1, 3 are kept, the
        // retransmission batch {0, 2} + 1 parity completes with 2 of its 3 packets.
        feed(&mut r, 15, chunk(1, 1, &all, Some(1)));
        feed(&mut r, 15, chunk(1, 1, &all, Some(3)));
        let rtx: Arc<[u32]> = vec![0, 2].into();
        feed(&mut r, 40, chunk(1, 2, &rtx, Some(2)));
        let a = feed(&mut r, 41, chunk(1, 2, &rtx, None));
        assert_eq!(a.frame_done, Some(1));
        assert_eq!(a.data, None);
        // Frame 2 never arrives; frame 3 arrives late (delay 150 ms > 100 ms).
        for i in 0..4 {
            feed(&mut r, 180, chunk(3, 5, &all, Some(i)));
        }
        // Counted: frames 0..=3 have encode + 100 ms ≤ 180 ms except frame 3 (130 ms): all
        // counted but frame 3 is not (its deadline 130 ms ≤ 180 ms, so it is).
        let (frames, dmr, missed) = r.deadline_misses();
        assert_eq!((frames, missed), (4, 2));
        assert!((dmr - 0.5).abs() < 1e-12, "{dmr}");
    }
}
