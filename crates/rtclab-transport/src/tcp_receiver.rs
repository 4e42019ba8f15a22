//! TCP-like receiver: cumulative ACKs, out-of-order buffering, optional delayed ACK.
//!
//! Lineage: RFC 5681 section 4.2 (ACK at least every second full segment, within 500 ms;
//! immediately on out-of-order or hole-filling segments), Linux `TCP_DELACK_MIN` 40 ms,
//! RFC 7323 timestamps (the ACK echoes the TSval of the earliest segment it acknowledges),
//! RFC 2018 SACK: the first block holds the most recently received packet, the others the
//! highest remaining out-of-order ranges (at most three blocks, as with timestamps).
//!
//! Video over TCP (`tcp_video.rs`): a data packet marked `FrameEnd` ends a frame captured at
//! its `echo`; once in-order delivery passes it the frame is complete and decodable (all its
//! bytes and all earlier frames are in), and shown at once (no jitter buffer or decoder model):
//! `FrameComplete` and `FrameDisplayed` events, the latter split into the send-buffer wait
//! (pacing stage: capture → the completing packet's transmission), its queueing (ground truth)
//! and the rest of its trip (propagation).

use rtclab_core::ranges::insert_range;
use rtclab_core::{
    Endpoint, EndpointEvent, FlowId, FrameStages, Packet, PacketInfo, Payload, SackBlocks, Time,
    TimeDelta, Transmit,
};
use std::collections::{BTreeMap, VecDeque};

#[derive(Clone, Copy, Debug)]
pub struct TcpReceiverConfig {
    /// ACK every `ack_every` in-order segments (1 = every segment, 2 = delayed ACK).
    pub ack_every: u32,
    pub delayed_ack_timeout: TimeDelta,
    pub ack_size: u32,
    /// Header bytes per data packet (payload = size - header).
    pub header_size: u32,
    /// Send SACK blocks (RFC 2018).
    pub sack: bool,
    /// Accurate ECN (draft-ietf-tcpm-accurate-ecn, the feedback L4S senders need): every ACK
    /// carries the count of CE-marked packets received, modulo 8 (the ACE field), instead of
    /// RFC 3168's sticky ECE.
    pub accecn: bool,
}

impl Default for TcpReceiverConfig {
    fn default() -> Self {
        TcpReceiverConfig {
            ack_every: 1,
            delayed_ack_timeout: TimeDelta::from_millis(40),
            ack_size: 52,
            header_size: 52,
            sack: true,
            accecn: false,
        }
    }
}

pub struct TcpReceiver {
    flow: FlowId,
    cfg: TcpReceiverConfig,
    rcv_nxt: u64,
    /// Out-of-order data: sorted, disjoint, non-adjacent ranges [start, end) above rcv_nxt.
    ooo: Vec<(u64, u64)>,
    unacked_segments: u32,
    ts_recent: Time,
    delack_deadline: Option<Time>,
    pending_ack: bool,
    last_ooo: Option<u64>,
    /// RFC 3168 §6.1.3: a CE mark was seen; ACKs carry ECE until a packet with CWR arrives.
    ece: bool,
    /// A duplicate arrived since the last ACK (D-SACK).
    dsack: bool,
    /// ABC: the mark of the latest data packet (ECT(1) accelerate, ECT(0) brake), echoed by
    /// the next ACK (ABC receivers ACK every packet, so each ACK echoes one mark).
    abc_mark: Option<bool>,
    /// AccECN: CE-marked packets received (r.cep), and its value when the last ACK left.
    ce_packets: u64,
    ce_acked: u64,
    /// Bytes newly delivered in order to the application (payload only).
    pub goodput_bytes: u64,
    pub received_packets: u64,
    pub duplicate_packets: u64,
    /// Goodput of the last packet handled through `Endpoint`, not yet polled as an event.
    delivered: Option<u64>,
    /// Video over TCP (made at the first frame end; boxed so a bulk receiver stays small).
    video: Option<Box<FrameTiming>>,
}

/// Video over TCP at the receiver.
#[derive(Debug, Default)]
struct FrameTiming {
    /// Frame ends received and not yet delivered in order (seq → capture).
    ends: BTreeMap<u64, Time>,
    /// Frame events not yet polled.
    events: VecDeque<EndpointEvent>,
}

impl TcpReceiver {
    pub fn new(flow: FlowId, cfg: TcpReceiverConfig) -> Self {
        TcpReceiver {
            flow,
            cfg,
            rcv_nxt: 0,
            ooo: Vec::new(),
            unacked_segments: 0,
            ts_recent: Time::ZERO,
            delack_deadline: None,
            pending_ack: false,
            last_ooo: None,
            ece: false,
            dsack: false,
            abc_mark: None,
            ce_packets: 0,
            ce_acked: 0,
            goodput_bytes: 0,
            received_packets: 0,
            duplicate_packets: 0,
            delivered: None,
            video: None,
        }
    }

    /// Handles a data packet; returns the payload bytes newly delivered in order.
    pub fn handle_data(&mut self, now: Time, pkt: &Packet) -> u64 {
        self.received_packets += 1;
        let payload = pkt.size.saturating_sub(self.cfg.header_size) as u64;
        let seq = pkt.seq;
        if pkt.info == PacketInfo::FrameEnd && seq >= self.rcv_nxt {
            self.video.get_or_insert_with(Default::default).ends.insert(seq, pkt.echo);
        }
        let before = self.rcv_nxt;
        let immediate;
        let mut delivered = 0;
        if seq == self.rcv_nxt {
            if self.unacked_segments == 0 {
                self.ts_recent = pkt.sent_at;
            }
            self.rcv_nxt += 1;
            delivered += payload;
            let had_hole = !self.ooo.is_empty();
            if let Some(&(s, e)) = self.ooo.first() {
                if s == self.rcv_nxt {
                    delivered += payload * (e - s);
                    self.rcv_nxt = e;
                    self.ooo.remove(0);
                }
            }
            immediate = had_hole;
            self.unacked_segments += 1;
        } else if seq > self.rcv_nxt {
            self.last_ooo = Some(seq);
            if !self.insert_ooo(seq) {
                self.duplicate_packets += 1;
                self.dsack = true;
            }
            immediate = true;
        } else {
            self.duplicate_packets += 1;
            self.dsack = true;
            immediate = true;
        }
        self.goodput_bytes += delivered;
        if self.rcv_nxt > before && self.video.is_some() {
            self.complete_frames(now, pkt);
        }
        let ce = pkt.ecn() == rtclab_core::Ecn::Ce;
        let new_ce = if self.cfg.accecn {
            // AccECN: count every CE; ACK at once before the three-bit field could wrap.
            self.ce_packets += ce as u64;
            self.ce_packets - self.ce_acked >= 7
        } else {
            // ECN: CWR ends the echo; a CE mark starts it, and a new one is sent at once (as
            // Linux's quick-ACK on a CE change).
            if pkt.ecn_echo() {
                self.ece = false;
            }
            let new_ce = ce && !self.ece;
            self.ece |= ce;
            new_ce
        };
        self.abc_mark = match pkt.ecn() {
            rtclab_core::Ecn::Ect1 => Some(true),
            rtclab_core::Ecn::Ect0 => Some(false),
            _ => None,
        };
        if immediate || new_ce || self.unacked_segments >= self.cfg.ack_every {
            self.pending_ack = true;
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.cfg.delayed_ack_timeout);
        }
        delivered
    }

    pub fn handle_timeout(&mut self, now: Time) {
        if let Some(d) = self.delack_deadline {
            if d <= now {
                self.pending_ack = true;
            }
        }
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if !self.pending_ack {
            return None;
        }
        self.pending_ack = false;
        self.delack_deadline = None;
        self.unacked_segments = 0;
        let mut ack = Packet::ack(self.flow, self.rcv_nxt, self.ts_recent, self.cfg.ack_size, now);
        ack.set_ecn_echo(self.ece);
        ack.set_dsack(std::mem::take(&mut self.dsack));
        if self.cfg.accecn {
            ack.set_ace(self.ce_packets as u8);
            self.ce_acked = self.ce_packets;
        } else {
            ack.set_abc_echo(self.abc_mark.take());
        }
        if self.cfg.sack && !self.ooo.is_empty() {
            ack.info = rtclab_core::PacketInfo::Sack(self.sack_blocks());
        }
        Some(ack)
    }

    /// Frames whose last packet is now delivered in order; `pkt` completed them.
    fn complete_frames(&mut self, now: Time, pkt: &Packet) {
        let Some(v) = self.video.as_deref_mut() else { return };
        while let Some((&end, &capture)) = v.ends.first_key_value() {
            if end >= self.rcv_nxt {
                break;
            }
            v.ends.pop_first();
            let delay = now - capture;
            let s = pkt.sent_at;
            let q = s + pkt.queue_delay;
            let stages =
                FrameStages::from_instants([capture, capture, s, s, q, now, now, now, now, now]);
            v.events.push_back(EndpointEvent::FrameComplete { delay });
            v.events.push_back(EndpointEvent::FrameDisplayed { delay, stages });
        }
    }

    /// Adds `seq` (> rcv_nxt) to the out-of-order ranges; false if it was already held.
    fn insert_ooo(&mut self, seq: u64) -> bool {
        if self.range_of(seq).is_some() {
            return false;
        }
        insert_range(&mut self.ooo, seq, seq + 1);
        true
    }

    /// The out-of-order range containing `seq`, if held.
    fn range_of(&self, seq: u64) -> Option<usize> {
        let i = self.ooo.partition_point(|r| r.1 <= seq);
        (i < self.ooo.len() && self.ooo[i].0 <= seq).then_some(i)
    }

    fn sack_blocks(&self) -> SackBlocks {
        let mut blocks = [(0u64, 0u64); SackBlocks::MAX];
        let mut n = 0;
        let first = self.last_ooo.and_then(|s| self.range_of(s));
        if let Some(i) = first {
            blocks[0] = self.ooo[i];
            n = 1;
        }
        // Then the highest other ranges.
        for (i, r) in self.ooo.iter().enumerate().rev() {
            if n == SackBlocks::MAX {
                break;
            }
            if Some(i) != first {
                blocks[n] = *r;
                n += 1;
            }
        }
        SackBlocks::new(self.rcv_nxt, &blocks[..n])
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
}

impl Endpoint for TcpReceiver {
    fn handle_packet(&mut self, now: Time, pkt: &Packet, _payload: Option<Payload>) {
        let g = self.handle_data(now, pkt);
        *self.delivered.get_or_insert(0) += g;
    }
    fn handle_timeout(&mut self, now: Time) {
        TcpReceiver::handle_timeout(self, now)
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        TcpReceiver::poll_transmit(self, now).map(Transmit::from)
    }
    fn poll_timeout(&self) -> Option<Time> {
        TcpReceiver::poll_timeout(self)
    }
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        if let Some(goodput_bytes) = self.delivered.take() {
            return Some(EndpointEvent::Delivered { goodput_bytes });
        }
        self.video.as_deref_mut()?.events.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64) -> Packet {
        Packet::data(FlowId(0), seq, 1500, Time::ZERO)
    }

    #[test]
    fn each_ack_echoes_the_abc_mark_of_the_packet_it_answers() {
        use rtclab_core::Ecn;
        let mut r = TcpReceiver::new(FlowId(0), TcpReceiverConfig::default());
        for (seq, ecn, echo) in
            [(0, Ecn::Ect1, Some(true)), (1, Ecn::Ect0, Some(false)), (2, Ecn::NotEct, None)]
        {
            let mut p = data(seq);
            p.set_ecn(ecn);
            r.handle_data(Time::ZERO, &p);
            assert_eq!(r.poll_transmit(Time::ZERO).unwrap().abc_echo(), echo, "{seq}");
        }
    }

    #[test]
    fn out_of_order_is_acked_at_once_and_hole_fill_jumps() {
        let mut r =
            TcpReceiver::new(FlowId(0), TcpReceiverConfig { ack_every: 2, ..Default::default() });
        r.handle_data(Time::ZERO, &data(0));
        assert!(r.poll_transmit(Time::ZERO).is_none());
        assert_eq!(r.poll_timeout(), Some(Time::from_millis(40)));
        r.handle_data(Time::ZERO, &data(2));
        assert_eq!(r.poll_transmit(Time::ZERO).unwrap().seq, 1); // dup ACK
        r.handle_data(Time::ZERO, &data(1));
        assert_eq!(r.poll_transmit(Time::ZERO).unwrap().seq, 3);
        assert_eq!(r.goodput_bytes, 3 * 1448);
    }

    #[test]
    fn sack_blocks_report_latest_then_highest() {
        let mut r = TcpReceiver::new(FlowId(0), TcpReceiverConfig::default());
        for s in [0, 2, 3, 5, 8, 9, 6] {
            r.handle_data(Time::ZERO, &data(s));
        }
        let a = r.poll_transmit(Time::ZERO).unwrap();
        assert_eq!(a.seq, 1);
        // 6 arrived last: its block [5, 7) first, then [8, 10), then [2, 4).
        assert_eq!(a.sack().iter(a.seq).collect::<Vec<_>>(), vec![(5, 7), (8, 10), (2, 4)]);
        r.handle_data(Time::ZERO, &data(1));
        let a = r.poll_transmit(Time::ZERO).unwrap();
        assert_eq!(a.seq, 4);
        // The in-order packet is in no block; 6 is still the most recent out-of-order one.
        assert_eq!(a.sack().iter(a.seq).collect::<Vec<_>>(), vec![(5, 7), (8, 10)]);
    }

    #[test]
    fn out_of_order_ranges_merge() {
        let mut r = TcpReceiver::new(FlowId(0), TcpReceiverConfig::default());
        for s in [5, 3, 7, 4, 9, 8, 6, 6] {
            r.handle_data(Time::ZERO, &data(s));
        }
        assert_eq!(r.ooo, vec![(3, 10)]);
        assert_eq!(r.duplicate_packets, 1);
        r.handle_data(Time::ZERO, &data(0));
        r.handle_data(Time::ZERO, &data(1));
        r.handle_data(Time::ZERO, &data(2));
        assert_eq!(r.rcv_nxt(), 10);
        assert!(r.ooo.is_empty());
        assert_eq!(r.goodput_bytes, 10 * 1448);
    }

    #[test]
    fn delayed_ack_timer_fires() {
        let mut r =
            TcpReceiver::new(FlowId(0), TcpReceiverConfig { ack_every: 2, ..Default::default() });
        r.handle_data(Time::ZERO, &data(0));
        r.handle_timeout(Time::from_millis(40));
        assert_eq!(r.poll_transmit(Time::from_millis(40)).unwrap().seq, 1);
        assert_eq!(r.poll_timeout(), None);
    }
}
