//! The edge-stream sender: frames at a fixed rate, each sent at once as one FEC block (data +
//! the policy's parity); lost data found by ACK holes or a timeout is resent, group by group,
//! as a new FEC block sized by the policy for the time left (spec `afr-hairpin-confucius.md`
//! §3.5, after the released `game-server.cc` of hkust-spark/hairpin).
//!
//! Every millisecond (`check_rtx_interval`):
//! 1. packets that will miss the deadline (now − encode + minRTT/2 > deadline) are forgotten,
//!    from the front of the history (oldest transmission first) only, as the released sender
//!    does: a resent packet sits behind younger frames, and taking it out there would leave a
//!    gap that the dup-ACK rule below reads as a hole (spuriously resending every frame once
//!    a queue holds packets past the deadline);
//! 2. groups whose delayed retransmission is due are resent;
//! 3. going from the newest unacknowledged data packet to the oldest, the first one with a
//!    newer data packet acknowledged at least two sequence numbers above it, and every older
//!    one, is a hole: its group is resent after the batch's dispersion
//!    (min(batch size × dispersion + 0.5 ms, frame interval)), unless the frame is younger
//!    than the minimum RTT; a packet unacknowledged for longer than the timeout has its group
//!    resent at once. Timeout: 1 s (`dupack`, a backstop) or max(srtt + 4·rttvar, 2·srtt)
//!    (`pto`, RFC 8985's probe timeout); Hairpin's packets sent three times or more use
//!    max(srtt + 4·rttvar, 1.5·srtt); all plus the dispersion + 0.5 ms.
//!
//! With `gcc = true` a congestion controller sets the encoder's rate and caps the parity
//! (`rate.rs`); frames then vary in size.
//!
//! Loss estimate: data packets retransmitted / packets sent over the last `window_ms`
//! (released `LossEstimator`). Not modelled: the released sender's loss detection on parity
//! sequence gaps in "recovery", and Hairpin's hold-back of retransmissions when the smoothed
//! RTT doubles (both narrow heuristics of the code, not of the paper). Where the released
//! sender keeps packets of completed frames as placeholders (`RCVD_PREV_DATA`), ours drops
//! them at once: a placeholder just above a lost packet hides its hole from the dup-ACK rule
//! (the released code finds such losses with the parity-gap rule instead), and on a path that
//! does not reorder, packets received above a gap still prove what is below it lost.

use super::policy::{BatchContext, RecoveryPolicy};
use super::rate::RateControl;
use super::wire::{Chunk, ChunkAck};
use super::EdgeStreamConfig;
use crate::RttEstimator;
use rtclab_core::{Endpoint, FlowId, Packet, Payload, Time, TimeDelta, Transmit};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

/// Wire overhead of a data packet (IPv4 + UDP + RTP + extensions), as the media packetizer.
pub const OVERHEAD: u32 = 48;
const CHECK_EVERY: TimeDelta = TimeDelta::from_millis(1);

/// A frame as its batches need it: id, encode time, data packets, payload bytes.
#[derive(Clone, Copy, Debug)]
struct FrameRef {
    id: u64,
    encode: Time,
    packets: u32,
    bytes: u32,
}

#[derive(Clone, Copy, Debug)]
struct Outstanding {
    frame: u64,
    index: u32,
    encode: Time,
    sent_at: Time,
    round: u8,
    /// Packets (data + parity) in its batch.
    batch_size: u32,
    /// Data packets and payload bytes of its frame, and its size on the wire.
    frame_packets: u32,
    frame_bytes: u32,
    size: u32,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct EdgeStreamSenderStats {
    pub frames: u64,
    pub data_packets: u64,
    pub parity_packets: u64,
    pub rtx_data_packets: u64,
    pub rtx_batches: u64,
    pub given_up_packets: u64,
    /// Groups resent because a packet timed out (not for an ACK hole).
    pub timeouts: u64,
    /// Sum of the loss estimates the policy was given, one per batch.
    pub loss_estimate_sum: f64,
}

pub struct EdgeStreamSender {
    flow: FlowId,
    cfg: EdgeStreamConfig,
    policy: RecoveryPolicy,
    packet_size: u32,
    interval: TimeDelta,
    next_frame: Option<Time>,
    next_check: Option<Time>,
    frame_id: u64,
    seq: u64,
    data_seq: u64,
    batch_id: u64,
    out: VecDeque<Transmit>,
    /// Unacknowledged data transmissions by data sequence number.
    history: BTreeMap<u64, Outstanding>,
    /// (frame, index) → data sequence number of its newest transmission.
    by_packet: BTreeMap<(u64, u32), u64>,
    /// Global sequence number → (send time, data sequence number).
    sent: BTreeMap<u64, (Time, Option<u64>)>,
    /// Frames whose group is to be resent at the given time (after a hole's dispersion).
    delayed: BTreeMap<u64, Time>,
    highest_acked_data: Option<u64>,
    rtt: RttEstimator,
    dispersion: TimeDelta,
    loss_sent: VecDeque<(Time, u32)>,
    loss_rtx: VecDeque<(Time, u32)>,
    /// The congestion controller setting the encoder's rate (`gcc = true`).
    rate: Option<RateControl>,
    pub stats: EdgeStreamSenderStats,
}

impl EdgeStreamSender {
    pub fn new(
        flow: FlowId,
        packet_size: u32,
        cfg: EdgeStreamConfig,
        policy: RecoveryPolicy,
    ) -> Self {
        let interval = TimeDelta::from_secs_f64(1.0 / cfg.fps);
        let rate = cfg.gcc.then(|| RateControl::new(packet_size, cfg.gcc_config()));
        EdgeStreamSender {
            flow,
            policy,
            packet_size,
            interval,
            next_frame: None,
            next_check: None,
            frame_id: 0,
            seq: 0,
            data_seq: 0,
            batch_id: 0,
            out: VecDeque::new(),
            history: BTreeMap::new(),
            by_packet: BTreeMap::new(),
            sent: BTreeMap::new(),
            delayed: BTreeMap::new(),
            highest_acked_data: None,
            rtt: RttEstimator::new(
                TimeDelta::from_secs(1),
                TimeDelta::ZERO,
                TimeDelta::from_secs(60),
            ),
            dispersion: TimeDelta::ZERO,
            loss_sent: VecDeque::new(),
            loss_rtx: VecDeque::new(),
            rate,
            stats: EdgeStreamSenderStats::default(),
            cfg,
        }
    }

    pub fn policy(&self) -> &RecoveryPolicy {
        &self.policy
    }

    fn deadline(&self) -> TimeDelta {
        TimeDelta::from_secs_f64(self.cfg.deadline_ms / 1e3)
    }

    fn srtt(&self) -> TimeDelta {
        self.rtt.srtt().unwrap_or(TimeDelta::from_secs_f64(self.cfg.default_rtt_ms / 1e3))
    }

    fn min_rtt(&self) -> TimeDelta {
        self.rtt.min_rtt().unwrap_or_else(|| self.srtt())
    }

    /// The loss estimate over the window ending at `now`.
    pub fn loss_estimate(&mut self, now: Time) -> f64 {
        let w = TimeDelta::from_secs_f64(self.cfg.window_ms / 1e3);
        for q in [&mut self.loss_sent, &mut self.loss_rtx] {
            while q.front().is_some_and(|(t, _)| *t < now - w) {
                q.pop_front();
            }
        }
        let sent: u32 = self.loss_sent.iter().map(|e| e.1).sum();
        let rtx: u32 = self.loss_rtx.iter().map(|e| e.1).sum();
        if sent == 0 {
            if rtx == 0 {
                0.0
            } else {
                1.0
            }
        } else {
            rtx as f64 / sent as f64
        }
    }

    fn context(
        &mut self,
        now: Time,
        (frame_packets, frame_bytes): (u32, u32),
        batch: u32,
        ddl_left: TimeDelta,
        rtx: bool,
    ) -> BatchContext {
        let rtt = self.srtt() + self.rtt.rttvar();
        let loss = self.loss_estimate(now);
        self.stats.loss_estimate_sum += loss;
        BatchContext {
            loss,
            frame_packets,
            batch_packets: batch,
            ddl_left_ms: ddl_left.as_nanos().div_euclid(1_000_000),
            rtt_ms: (rtt.as_nanos() as u64).div_ceil(1_000_000) as u32,
            retransmission: rtx,
            now_ms: (now.as_nanos() / 1_000_000) as i64,
            frame_kbits: frame_bytes as f64 * 8.0 / 1e3,
        }
    }

    fn batch_dispersion(&self, batch_size: u32) -> TimeDelta {
        (self.dispersion.mul_f64(batch_size as f64) + TimeDelta::from_micros(500))
            .min(self.interval)
    }

    /// Wire size of data packet `index` of a frame of `packets` packets and `bytes` bytes.
    fn data_size(&self, (packets, bytes): (u32, u32), index: u32) -> u32 {
        let payload = self.packet_size - OVERHEAD;
        if index + 1 == packets {
            bytes - payload * (packets - 1) + OVERHEAD
        } else {
            self.packet_size
        }
    }

    /// Sends `members` (data index, wire size) of `fr` and `parity` parity packets (capped by
    /// the rate controller's quota) as one FEC block.
    fn send_batch(
        &mut self,
        now: Time,
        fr: FrameRef,
        members: Vec<(u32, u32)>,
        parity: u32,
        round: u8,
    ) {
        let (frame, encode, frame_packets) = (fr.id, fr.encode, fr.packets);
        let batch = self.batch_id;
        self.batch_id += 1;
        let n = members.len() as u32;
        let parity = match &mut self.rate {
            Some(r) => r.cap_parity(n, parity),
            None => parity,
        };
        let sizes: Vec<u32> = members.iter().map(|m| m.1).collect();
        let members: Arc<[u32]> = members.iter().map(|m| m.0).collect();
        let interval_ns = self.interval.as_nanos() as u64;
        let chunk = |data_index, members: &Arc<[u32]>| Chunk {
            frame,
            encode,
            frame_packets,
            interval_ns,
            batch,
            members: members.clone(),
            data_index,
            round,
        };
        for (&i, size) in members.iter().zip(sizes) {
            let c = chunk(Some(i), &members);
            self.history.insert(
                self.data_seq,
                Outstanding {
                    frame,
                    index: i,
                    encode,
                    sent_at: now,
                    round,
                    batch_size: n + parity,
                    frame_packets,
                    frame_bytes: fr.bytes,
                    size,
                },
            );
            self.by_packet.insert((frame, i), self.data_seq);
            self.sent.insert(self.seq, (now, Some(self.data_seq)));
            self.data_seq += 1;
            self.emit(now, size, c, round > 0);
        }
        for _ in 0..parity {
            let c = chunk(None, &members);
            self.sent.insert(self.seq, (now, None));
            self.emit(now, self.packet_size, c, round > 0);
        }
        self.loss_sent.push_back((now, n + parity));
        self.stats.parity_packets += parity as u64;
        if round == 0 {
            self.stats.data_packets += n as u64;
        } else {
            self.stats.rtx_data_packets += n as u64;
            self.stats.rtx_batches += 1;
        }
        if self.next_check.is_none() {
            self.next_check = Some(now + CHECK_EVERY);
        }
    }

    fn emit(&mut self, now: Time, size: u32, c: Chunk, rtx: bool) {
        self.emit_bytes(now, size, c.encode(), rtx, None);
    }

    fn emit_bytes(&mut self, now: Time, size: u32, bytes: Vec<u8>, rtx: bool, probe: Option<u32>) {
        let mut p = Packet::data(self.flow, self.seq, size, now);
        p.set_retransmit(rtx);
        if let Some(r) = &mut self.rate {
            r.on_sent(now, self.seq, size, probe);
        }
        self.seq += 1;
        self.out.push_back(Transmit { pkt: p, payload: Some(Payload::bytes(bytes)) });
    }

    fn send_frame(&mut self, now: Time) {
        let frame = self.frame_id;
        self.frame_id += 1;
        self.stats.frames += 1;
        let payload = self.packet_size - OVERHEAD;
        let bytes = match &mut self.rate {
            Some(r) => r.frame_bytes(self.cfg.fps, payload),
            None => self.cfg.frame_bytes(self.packet_size),
        };
        let f = super::packets_for(bytes, self.packet_size).min(super::MAX_FRAME_PACKETS);
        let bytes = bytes.min(f * payload);
        let left = self.deadline() - self.dispersion.mul_f64(f as f64);
        let ctx = self.context(now, (f, bytes), f, left, false);
        let k = self.policy.parity(&ctx);
        let members = (0..f).map(|i| (i, self.data_size((f, bytes), i))).collect();
        let fr = FrameRef { id: frame, encode: now, packets: f, bytes };
        self.send_batch(now, fr, members, k, 0);
    }

    /// Takes a frame's outstanding packets out of the history, with any delayed
    /// retransmission of it.
    fn take_frame(&mut self, frame: u64) -> Vec<Outstanding> {
        self.delayed.remove(&frame);
        let keys: Vec<(u64, u32)> =
            self.by_packet.range((frame, 0)..=(frame, u32::MAX)).map(|(k, _)| *k).collect();
        keys.iter()
            .filter_map(|k| self.by_packet.remove(k))
            .map(|s| self.history.remove(&s).expect("by_packet mirrors history"))
            .collect()
    }

    fn retransmit(&mut self, now: Time, frame: u64) {
        let taken = self.take_frame(frame);
        if taken.is_empty() {
            return;
        }
        let mut members = Vec::with_capacity(taken.len());
        let mut fr = FrameRef { id: frame, encode: now, packets: 0, bytes: 0 };
        let mut round = 0;
        for o in taken {
            members.push((o.index, o.size));
            (fr.encode, fr.packets, fr.bytes) = (o.encode, o.frame_packets, o.frame_bytes);
            round = round.max(o.round);
        }
        let n = members.len() as u32;
        self.loss_rtx.push_back((now, n));
        let left = self.deadline() - (now - fr.encode);
        let ctx = self.context(now, (fr.packets, fr.bytes), n, left, true);
        let k = self.policy.parity(&ctx);
        self.send_batch(now, fr, members, k, round.saturating_add(1));
    }

    fn check(&mut self, now: Time) {
        let ddl = self.deadline();
        let half_min = TimeDelta::from_nanos(self.min_rtt().as_nanos() / 2);
        // 1. Packets that will miss the deadline, from the front only: taking one out behind
        //    a younger unacknowledged packet would open a gap that step 3 reads as a hole.
        while let Some(e) = self.history.first_entry() {
            let o = *e.get();
            if now - o.encode + half_min <= ddl {
                break;
            }
            e.remove();
            self.by_packet.remove(&(o.frame, o.index));
            self.stats.given_up_packets += 1;
            if self.by_packet.range((o.frame, 0)..=(o.frame, u32::MAX)).next().is_none() {
                self.delayed.remove(&o.frame);
            }
        }
        // 2. Delayed retransmissions now due.
        let mut resend: BTreeSet<u64> =
            self.delayed.iter().filter(|(_, t)| **t < now).map(|(f, _)| *f).collect();
        // 3. Holes and timeouts, newest to oldest.
        let srtt = self.srtt();
        let var4 = TimeDelta::from_nanos(4 * self.rtt.rttvar().as_nanos());
        let pto = (srtt + var4).max(srtt.mul_f64(2.0));
        let late_pto = (srtt + var4).max(srtt.mul_f64(1.5));
        let hairpin = matches!(self.policy, RecoveryPolicy::Hairpin { .. });
        let min_rtt = self.min_rtt();
        let mut last = self.highest_acked_data;
        let mut hole = false;
        let mut delays = Vec::new();
        for (&s, o) in self.history.iter().rev() {
            let newer = last.replace(s);
            if now - o.encode < min_rtt || resend.contains(&o.frame) {
                continue;
            }
            if !hole && newer.is_some_and(|l| s + 1 < l) {
                hole = true;
            }
            let disp = self.batch_dispersion(o.batch_size);
            if hole {
                delays.push((o.frame, now + disp));
            }
            let mut rto = if self.cfg.pto { pto } else { TimeDelta::from_secs(1) };
            if hairpin && o.round > 1 {
                rto = late_pto;
            }
            if now - o.sent_at > rto + disp + TimeDelta::from_micros(500) && resend.insert(o.frame)
            {
                self.stats.timeouts += 1;
            }
        }
        for (f, t) in delays {
            if !resend.contains(&f) {
                let e = self.delayed.entry(f).or_insert(t);
                *e = (*e).min(t);
            }
        }
        for f in resend {
            self.retransmit(now, f);
        }
    }
}

impl Endpoint for EdgeStreamSender {
    fn start(&mut self, now: Time) {
        self.next_frame = Some(now);
        if let Some(r) = &mut self.rate {
            r.start(now);
        }
    }
    fn stop(&mut self) {
        self.next_frame = None;
    }
    fn handle_packet(&mut self, now: Time, _pkt: &Packet, payload: Option<Payload>) {
        let Some(ack) = payload
            .as_ref()
            .and_then(|p| p.downcast_ref::<Vec<u8>>())
            .and_then(|b| ChunkAck::decode(b))
        else {
            return;
        };
        if let Some(r) = &mut self.rate {
            r.on_ack(ack.seq, Time::from_nanos(ack.arrival_ns));
        }
        if let Some((sent_at, data_seq)) = self.sent.remove(&ack.seq) {
            self.rtt.on_sample(now - sent_at);
            if let Some(d) = data_seq {
                self.highest_acked_data = Some(self.highest_acked_data.map_or(d, |h| h.max(d)));
            }
        }
        if let Some(key) = ack.data {
            if let Some(s) = self.by_packet.remove(&key) {
                self.history.remove(&s);
            }
        }
        if let Some(f) = ack.frame_done {
            self.take_frame(f);
        }
        if ack.dispersion_ns > 0 {
            self.dispersion = TimeDelta::from_nanos(ack.dispersion_ns as i64);
        }
        // Send times older than any deadline are of no use.
        let horizon = now - self.deadline() - TimeDelta::from_secs(1);
        while self.sent.first_key_value().is_some_and(|(_, (t, _))| *t < horizon) {
            self.sent.pop_first();
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if let Some(r) = &mut self.rate {
            r.handle_timeout(now);
        }
        while let Some(t) = self.next_frame.filter(|t| *t <= now) {
            self.send_frame(now);
            self.next_frame = Some(t + self.interval);
        }
        if self.next_check.is_some_and(|t| t <= now) {
            self.check(now);
            self.next_check =
                (!self.history.is_empty() || !self.delayed.is_empty()).then_some(now + CHECK_EVERY);
        }
        while let Some((id, bytes)) = self.rate.as_mut().and_then(|r| r.poll_padding(now)) {
            self.sent.insert(self.seq, (now, None));
            self.emit_bytes(now, self.packet_size, bytes, false, Some(id));
        }
    }
    fn poll_transmit(&mut self, _now: Time) -> Option<Transmit> {
        self.out.pop_front()
    }
    fn target_rate(&self) -> Option<rtclab_core::Rate> {
        self.rate.as_ref().map(|r| rtclab_core::Rate::from_bps(r.controller().target_bps() as u64))
    }
    fn poll_timeout(&self) -> Option<Time> {
        let rate = self.rate.as_ref().and_then(RateControl::poll_timeout);
        [self.next_frame, self.next_check, rate].into_iter().flatten().min()
    }
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let s = &self.stats;
        let first = s.data_packets.max(1) as f64;
        let mut m = vec![
            ("bwc", (s.parity_packets + s.rtx_data_packets) as f64 / first),
            ("frames_sent", s.frames as f64),
            ("data_packets", s.data_packets as f64),
            ("parity_packets", s.parity_packets as f64),
            ("rtx_data_packets", s.rtx_data_packets as f64),
            ("rtx_batches", s.rtx_batches as f64),
            ("given_up_packets", s.given_up_packets as f64),
            ("rtx_timeouts", s.timeouts as f64),
            ("loss_estimate_mean", s.loss_estimate_sum / (s.frames + s.rtx_batches).max(1) as f64),
        ];
        if let Some(r) = &self.rate {
            m.extend(r.metrics());
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn take(s: &mut EdgeStreamSender, now: Time) -> Vec<(u64, Chunk)> {
        let mut v = Vec::new();
        while let Some(t) = s.poll_transmit(now) {
            let bytes = t.payload.unwrap().downcast_ref::<Vec<u8>>().unwrap().clone();
            v.push((t.pkt.seq, Chunk::decode(&bytes).unwrap()));
        }
        v
    }

    fn ack(s: &mut EdgeStreamSender, now: Time, seq: u64, c: &Chunk, done: bool) {
        let a = ChunkAck {
            seq,
            data: c.data_index.map(|i| (c.frame, i)),
            frame_done: done.then_some(c.frame),
            dispersion_ns: 100_000,
            arrival_ns: now.as_nanos(),
        };
        let p = Packet::ack(FlowId(0), seq, Time::ZERO, 64, now);
        s.handle_packet(now, &p, Some(Payload::bytes(a.encode())));
    }

    #[test]
    fn a_hole_resends_the_group_as_a_new_block_after_the_dispersion() {
        let cfg = EdgeStreamConfig { frame_packets: 5, ..Default::default() };
        let mut s = EdgeStreamSender::new(FlowId(0), 1248, cfg, RecoveryPolicy::Rtx);
        let t0 = Time::ZERO;
        s.start(t0);
        s.handle_timeout(t0);
        let sent = take(&mut s, t0);
        s.stop(); // one frame only
        assert_eq!(sent.len(), 5);
        assert!(sent.iter().all(|(_, c)| c.members.len() == 5 && c.round == 0));
        // Packets 1 and 2 are lost; 0, 3, 4 acknowledged at 20 ms.
        let at = Time::from_millis(20);
        for i in [0, 3, 4] {
            ack(&mut s, at, sent[i].0, &sent[i].1, false);
        }
        // The hole is seen at the next check, the group resent a dispersion later.
        let mut t = at;
        let mut rtx = Vec::new();
        while rtx.is_empty() && t < Time::from_millis(40) {
            t = s.poll_timeout().unwrap();
            s.handle_timeout(t);
            rtx = take(&mut s, t);
        }
        let idx: Vec<u32> = rtx.iter().map(|(_, c)| c.data_index.unwrap()).collect();
        assert_eq!(idx, vec![1, 2]);
        assert!(rtx.iter().all(|(_, c)| c.round == 1 && c.members.len() == 2));
        assert!(t > at && t <= at + TimeDelta::from_millis(3), "{t:?}");
        assert_eq!(s.stats.rtx_data_packets, 2);
        // The receiver completes the frame: nothing more is resent, the checks stop.
        ack(&mut s, t, rtx[0].0, &rtx[0].1, true);
        assert!(s.history.is_empty());
        let end = s.poll_timeout().unwrap();
        s.handle_timeout(end);
        assert!(take(&mut s, end).is_empty());
        assert_eq!(s.poll_timeout(), None);
        // BWC = 2 resent / 5 first sent.
        let m: BTreeMap<_, _> = s.metrics().into_iter().collect();
        assert!((m["bwc"] - 0.4).abs() < 1e-12);
    }

    #[test]
    fn a_doomed_retransmission_behind_younger_frames_opens_no_hole() {
        // Frames of 2 packets every 10 ms, deadline 50 ms, dup-ACK holes only. Frame 0's
        // packet 0 is lost: the ACK of its packet 1 at 12 ms makes it a hole, resent after
        // frame 1 (data seq 4, behind frame 1's 2 and 3; frame 2 follows with 5 and 6). At
        // 44 ms the resent packet will miss the deadline, but it is not at the front: taking
        // it out would leave a gap between frame 1 and frame 2 that reads as a hole and
        // resends frame 1 for nothing (the released sender removes only from the front).
        let cfg = EdgeStreamConfig {
            frame_packets: 2,
            fps: 100.0,
            deadline_ms: 50.0,
            ..Default::default()
        };
        let mut s = EdgeStreamSender::new(FlowId(0), 1248, cfg, RecoveryPolicy::Rtx);
        s.start(Time::ZERO);
        let mut sent = Vec::new();
        let mut acked = false;
        let mut t = Time::ZERO;
        while t < Time::from_millis(53) {
            t = s.poll_timeout().unwrap();
            s.handle_timeout(t);
            sent.extend(take(&mut s, t));
            if t >= Time::from_millis(25) {
                s.stop();
            }
            if !acked && t >= Time::from_millis(12) {
                acked = true;
                let (seq, c) = sent[1].clone();
                ack(&mut s, Time::from_millis(12), seq, &c, false);
            }
        }
        let resent: Vec<(u64, Option<u32>)> = sent
            .iter()
            .filter(|(_, c)| c.round > 0)
            .map(|(_, c)| (c.frame, c.data_index))
            .collect();
        assert_eq!(resent, vec![(0, Some(0))]);
        assert_eq!(s.stats.rtx_data_packets, 1);
    }

    #[test]
    fn frames_that_will_miss_the_deadline_are_given_up() {
        let cfg = EdgeStreamConfig { frame_packets: 2, deadline_ms: 50.0, ..Default::default() };
        let mut s = EdgeStreamSender::new(FlowId(0), 1248, cfg, RecoveryPolicy::Rtx);
        s.start(Time::ZERO);
        s.handle_timeout(Time::ZERO);
        take(&mut s, Time::ZERO);
        s.stop();
        // Nothing acknowledged: the 1 s backstop never fires before the deadline; after
        // 50 ms − minRTT/2 (default RTT 20 ms) the frame is forgotten.
        while let Some(t) = s.poll_timeout() {
            s.handle_timeout(t);
            assert!(take(&mut s, t).is_empty());
            assert!(t <= Time::from_millis(45), "{t:?}");
        }
        assert_eq!(s.stats.given_up_packets, 2);
    }
}
