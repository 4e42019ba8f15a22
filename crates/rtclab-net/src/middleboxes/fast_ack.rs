//! FastAck at a wireless access point: the AP acknowledges TCP data itself, as soon as the data
//! has left on the last hop, and repairs last-hop losses from its own copy.
//!
//! Lineage: the FastACK idea (the AP forges ACKs on the client's behalf when the last hop has
//! carried a segment, so the sender's ACK clock no longer waits for the client's ACKs), as the
//! Zhuge evaluation ran it as a baseline (spec `shared/specs/zhuge-metis.md` A.8: "the AP
//! forges TCP ACKs for segments once they have been transmitted on the last hop, polled every
//! 200 µs"; the released ns-3 code transys-project/zhuge `network-queue-fastack.cc`, read for
//! its behaviour, none of it copied). A middlebox at the AP's downlink hop
//! (`[[middleboxes]] kind = "fast_ack", at = "<link>"`):
//!
//! - every TCP data segment entering the link is copied into a per-flow cache;
//! - every `poll_us` (200 µs) the segments the link has finished sending since the last poll
//!   (its dequeue records: when each packet's last bit leaves) are acknowledged as a receiver
//!   at the AP would: the cumulative acknowledgement is the first segment the link has not
//!   sent, SACK blocks (RFC 2018, up to three, highest first) list what it sent above a gap;
//!   in order, a forged ACK per `ack_every` (2) new segments — the released code skips a
//!   segment that starts at the last forged acknowledgement, which acknowledges every second
//!   segment — or for a lone one after `ack_timeout_ms` (40; the released code never
//!   acknowledges a last odd segment); above a gap or filling one, at once. The ACK echoes the segment's
//!   timestamp and its congestion mark (ECE for CE) and is held `hold_ms` (16: the released
//!   code's wired mode, whose forged ACKs wait 16 ms; its Wi-Fi mode sends them at once: 0)
//!   before it travels back. Segments the AP dropped are never acknowledged, so the sender
//!   still sees the queue's losses — the released code acknowledges each sent segment's end
//!   whatever lies below it, which hides them: a loss-based sender then floods the queue
//!   (measured: a CUBIC flow on a 10 Mbit/s link sent 540 Mbit/s, 0.5 Mbit/s goodput), so that
//!   reading is not kept (docs/algorithms/fast_ack.md);
//! - the client's own ACKs are absorbed (the sender hears only the AP), except one that
//!   acknowledges more than the AP has forged (the first round trip, before the AP knows the
//!   flow's feedback passes it), which passes; the client's duplicate ACKs (segments lost
//!   after the link sent them) drive local recovery: from the third duplicate on, every
//!   segment the client is missing — its cumulative point and the gaps below the highest
//!   segment its SACK blocks have reported (a scoreboard over its ACKs) — is sent again from
//!   the cache through the link, once the link sent it longer ago than the client's loop (the
//!   shortest time seen from the link sending a segment to the client's ACK of it, sampled
//!   only from segments the link sent once: Karn's rule), so that a segment still on its way
//!   (the sender's own resend of a queue drop, an earlier local resend) is not sent twice. The
//!   released code resends the cumulative point at the third duplicate only: one hole per
//!   client loop (measured: a 2 % last-hop loss then leaves goodput at 7.7 of 9.7 Mbit/s, 9.4
//!   here), and a lost local resend stalls the flow for good. Without Karn's rule the loop
//!   estimate fell to 15.5 ms (the forward delay is 25) and a C3 trace drew 257,520 needless
//!   resends in 300 s; with it, none. The client's cumulative ACK frees the cache below it.
//!
//! A flow is served once one of its ACKs has crossed the AP (so forged ACKs have a way back);
//! packets with media content (RTP) or feedback payloads (RTCP) pass untouched. The engine
//! counts forged ACKs and local retransmissions as made, absorbed client ACKs as absorbed
//! (`NetElement::made_and_absorbed`).

use crate::element::{DequeueRecord, ElementOutput, MadeAbsorbed, NetElement};
use crate::middleboxes::{MiddleboxArgs, MiddleboxKind};
use crate::queues::describe;
use rtclab_core::params::{ms, param, Param};
use rtclab_core::ranges::{insert_range, remove_below, uncovered};
use rtclab_core::{Direction, Packet, PacketInfo, PacketKind, SackBlocks, Time, TimeDelta};
use std::collections::{BTreeMap, VecDeque};

pub static KIND: MiddleboxKind = MiddleboxKind {
    name: "fast_ack",
    help: "FastAck at a wireless AP: forges the TCP ACKs of segments the link has sent, absorbs the client's ACKs and retransmits last-hop losses locally (the Zhuge evaluation's baseline)",
    params: || describe(PARAMS, &FastAckConfig::default()),
    build: |a: MiddleboxArgs| {
        let mut c = FastAckConfig::default();
        a.apply(PARAMS, &mut c)?;
        Ok(Box::new(FastAck::new(c)))
    },
    acts_on_feedback: true,
    simulator_only: |_| {
        Some(
            "forging a kernel TCP flow's ACKs and retransmitting its segments from the AP needs \
             TCP byte streams the emulator does not rebuild",
        )
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastAckConfig {
    /// How often sent segments are collected and acknowledged (200 µs).
    pub poll: TimeDelta,
    /// A forged ACK per this many new segments (2).
    pub ack_every: u32,
    /// A pending segment is acknowledged alone after this long (40 ms).
    pub ack_timeout: TimeDelta,
    /// Forged ACKs wait this long before travelling back (16 ms).
    pub hold: TimeDelta,
    /// Duplicate ACKs from the client that trigger a local retransmission (3).
    pub dupthresh: u32,
}

impl Default for FastAckConfig {
    fn default() -> Self {
        FastAckConfig {
            poll: TimeDelta::from_micros(200),
            ack_every: 2,
            ack_timeout: TimeDelta::from_millis(40),
            hold: TimeDelta::from_millis(16),
            dupthresh: 3,
        }
    }
}

static PARAMS: &[Param<FastAckConfig>] = &[
    param!(FastAckConfig, "poll_us", "how often sent segments are collected and acknowledged, µs (200)", Real, 1.0, 1e6,
        |c| c.poll.as_secs_f64() * 1e6, |c, v| c.poll = TimeDelta::from_secs_f64(v / 1e6)),
    param!(FastAckConfig, "ack_every", "a forged ACK per this many new segments (2: the released code)", Integer, 1.0, 64.0,
        |c| c.ack_every as f64, |c, v| c.ack_every = v as u32),
    param!(FastAckConfig, "ack_timeout_ms", "a lone pending segment is acknowledged after this long, ms (40)", Real, 0.0, 10_000.0,
        |c| c.ack_timeout.as_millis_f64(), |c, v| c.ack_timeout = ms(v)),
    param!(FastAckConfig, "hold_ms", "forged ACKs wait this long before travelling back, ms (16: the released code's wired mode; its Wi-Fi mode: 0)", Real, 0.0, 10_000.0,
        |c| c.hold.as_millis_f64(), |c, v| c.hold = ms(v)),
    param!(FastAckConfig, "dupthresh", "client duplicate ACKs that trigger a local retransmission (3)", Integer, 1.0, 1000.0,
        |c| c.dupthresh as f64, |c, v| c.dupthresh = v as u32),
];

/// One TCP flow crossing the AP.
#[derive(Debug, Default)]
struct FlowState {
    /// Segments seen entering the link and not yet acknowledged by the client, by number,
    /// with when the link last finished sending each (None: not yet) and how many times it
    /// has.
    cache: BTreeMap<u64, (Packet, Option<Time>, u32)>,
    /// The shortest time seen from the link sending a segment to the client's ACK of it
    /// arriving back (the client's loop).
    client_loop: Option<TimeDelta>,
    /// Segments above the client's cumulative point its SACK blocks have reported (ranges).
    client_sacked: Vec<(u64, u64)>,
    /// Some ACK of the flow has crossed the AP: forged ACKs have a way back.
    served: bool,
    /// The highest cumulative acknowledgement the sender has heard (forged or passed on).
    acked: u64,
    /// The first segment the link has not sent (the AP's own cumulative acknowledgement), and
    /// the segments above it the link has sent (ranges).
    next: u64,
    above: Vec<(u64, u64)>,
    /// In-order sent segments not yet acknowledged.
    pending: Option<Pending>,
    /// The client's cumulative acknowledgement and its duplicates.
    client_ack: u64,
    dups: u32,
    ack_size: u32,
}

/// In-order segments the link has sent that no forged ACK covers yet.
#[derive(Clone, Copy, Debug)]
struct Pending {
    /// The latest one's timestamp and congestion mark.
    echo: Time,
    ce: bool,
    count: u32,
    /// When the first of them was collected.
    since: Time,
}

/// Segments cached for a flow whose feedback has not crossed the AP yet (a flow that never
/// answers, such as constant-rate UDP, keeps no more than this).
const UNSERVED_CACHE: usize = 65_536;

/// Counters for the summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastAckStats {
    pub forged_acks: u64,
    pub absorbed_acks: u64,
    pub passed_acks: u64,
    pub local_retransmissions: u64,
}

pub struct FastAck {
    cfg: FastAckConfig,
    flows: BTreeMap<u32, FlowState>,
    /// Segments whose last bit has left (or will by then), waiting for the next poll.
    sent: VecDeque<Sent>,
    /// Forged ACKs waiting out `hold`, in release order.
    held: VecDeque<(Time, Packet)>,
    stats: FastAckStats,
}

#[derive(Clone, Copy, Debug)]
struct Sent {
    leaves: Time,
    flow: u32,
    seq: u64,
    echo: Time,
    ce: bool,
}

fn is_tcp_data(p: &Packet) -> bool {
    p.kind == PacketKind::Data && matches!(p.info, PacketInfo::None)
}

impl FastAck {
    pub fn new(cfg: FastAckConfig) -> Self {
        FastAck {
            cfg,
            flows: BTreeMap::new(),
            sent: VecDeque::new(),
            held: VecDeque::new(),
            stats: FastAckStats::default(),
        }
    }

    pub fn stats(&self) -> FastAckStats {
        self.stats
    }

    /// The first poll instant at or after `t`.
    fn poll_at(&self, t: Time) -> Time {
        let step = self.cfg.poll.as_nanos().max(1) as u64;
        let n = (t - Time::ZERO).as_nanos().max(0) as u64;
        Time::ZERO + TimeDelta::from_nanos((n.div_ceil(step) * step) as i64)
    }

    /// A forged ACK for `flow` with the AP's cumulative acknowledgement and SACK blocks, made
    /// now, released after `hold`.
    fn forge(&mut self, now: Time, flow: u32, echo: Time, ce: bool) {
        let f = self.flows.get_mut(&flow).expect("served flow");
        f.acked = f.acked.max(f.next);
        f.pending = None;
        let mut ack = Packet::ack(rtclab_core::FlowId(flow), f.next, echo, f.ack_size, now);
        if !f.above.is_empty() {
            // The highest blocks first (up to three), as the AP's receiver-like view has them.
            let blocks: Vec<(u64, u64)> = f.above.iter().rev().copied().collect();
            ack.info = PacketInfo::Sack(SackBlocks::new(f.next, &blocks));
        }
        ack.set_ecn_echo(ce);
        ack.hop = Packet::ORIGINATED;
        self.held.push_back((now + self.cfg.hold, ack));
        self.stats.forged_acks += 1;
    }

    /// The poll: acknowledge what the link had sent by the last poll instant, and lone
    /// in-order segments waiting too long.
    fn poll(&mut self, now: Time) {
        while self.sent.front().is_some_and(|s| self.poll_at(s.leaves) <= now) {
            let s = self.sent.pop_front().expect("front exists");
            let Some(f) = self.flows.get_mut(&s.flow) else { continue };
            if let Some(c) = f.cache.get_mut(&s.seq) {
                c.1 = Some(s.leaves);
                c.2 += 1;
            }
            if s.seq < f.next || uncovered(&f.above, s.seq, s.seq + 1).is_empty() {
                continue; // sent before (a resend of what the AP has acknowledged)
            }
            insert_range(&mut f.above, s.seq, s.seq + 1);
            let before = f.next;
            if f.above.first().is_some_and(|r| r.0 == f.next) {
                f.next = f.above.remove(0).1;
            }
            if !f.served {
                continue; // no way back yet: the client's ACKs still speak for it
            }
            if !f.above.is_empty() || f.next > before + 1 {
                // Above a gap, or filling one: at once, as a receiver would (RFC 5681 §4.2).
                self.forge(now, s.flow, s.echo, s.ce);
                continue;
            }
            let p = f.pending.get_or_insert(Pending { echo: s.echo, ce: false, count: 0, since: now });
            p.echo = s.echo;
            p.ce |= s.ce;
            p.count += 1;
            let p = *p;
            if p.count >= self.cfg.ack_every {
                self.forge(now, s.flow, p.echo, p.ce);
            }
        }
        let timeout = self.cfg.ack_timeout;
        let due: Vec<(u32, Pending)> = self
            .flows
            .iter()
            .filter_map(|(&id, f)| f.pending.filter(|p| now >= p.since + timeout).map(|p| (id, p)))
            .collect();
        for (flow, p) in due {
            self.forge(now, flow, p.echo, p.ce);
        }
    }

    /// The next instant something is due: the poll after a sent segment's last bit, a lone
    /// segment's timeout, a held ACK's release.
    fn next_due(&self) -> Option<Time> {
        let timeout = self.cfg.ack_timeout;
        let lone = self.flows.values().filter_map(|f| f.pending.map(|p| p.since + timeout)).min();
        let poll = self.sent.front().map(|s| self.poll_at(s.leaves));
        [lone, poll, self.held.front().map(|h| h.0)].into_iter().flatten().min()
    }

    /// A client ACK: Some(packet) to pass on, None when absorbed (a local retransmission may go
    /// out instead).
    fn on_client_ack(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) -> Option<Packet> {
        let f = self.flows.entry(pkt.flow.0).or_default();
        f.served = true;
        f.ack_size = pkt.size;
        let c = pkt.seq;
        for (b0, b1) in pkt.sack().iter(c) {
            insert_range(&mut f.client_sacked, b0, b1);
        }
        if c > f.client_ack {
            // The client's loop, from the newest segment this ACK covers, if the link sent it
            // once (Karn's rule: an ACK of a segment sent twice does not say which copy).
            if let Some(&(_, Some(left), 1)) = f.cache.get(&(c - 1)) {
                let sample = now - left;
                f.client_loop = Some(f.client_loop.map_or(sample, |l| l.min(sample)));
            }
            f.client_ack = c;
            f.dups = 0;
            f.cache = f.cache.split_off(&c);
            remove_below(&mut f.client_sacked, c);
        } else if c == f.client_ack && c < f.acked {
            f.dups += 1;
            if f.dups >= self.cfg.dupthresh {
                // The client's holes: its cumulative point and the gaps below its highest SACKed
                // segment. Each is resent once the client has had time to receive it since the
                // link last sent it (a segment still on its way would arrive twice).
                let top = f.client_sacked.last().map_or(c + 1, |r| r.1);
                let holes: Vec<u64> = uncovered(&f.client_sacked, c, top)
                    .into_iter()
                    .flat_map(|(a, b)| a..b)
                    .filter(|s| match (f.cache.get(s), f.client_loop) {
                        (Some((_, Some(left), _)), Some(l)) => now - *left > l,
                        (Some((_, Some(_), _)), None) => true,
                        _ => false,
                    })
                    .collect();
                for s in holes {
                    let (seg, left, _) = f.cache.get_mut(&s).expect("a cached hole");
                    // Back in the link's queue: not due again until the link has sent it and
                    // the client has had its loop's time to answer.
                    *left = None;
                    let mut again = *seg;
                    again.set_retransmit(true);
                    again.hop = Packet::ORIGINATED;
                    again.dir = Direction::Forward;
                    out.packets.push(again);
                    self.stats.local_retransmissions += 1;
                }
            }
        }
        if c > f.acked {
            f.acked = c;
            if c >= f.next {
                // The client is ahead of what the AP saw sent (the first round trip).
                f.next = c;
                remove_below(&mut f.above, c);
                f.pending = None;
            }
            self.stats.passed_acks += 1;
            Some(pkt)
        } else {
            self.stats.absorbed_acks += 1;
            None
        }
    }
}

impl NetElement for FastAck {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match dir {
            Direction::Forward => {
                if is_tcp_data(&pkt) {
                    let f = self.flows.entry(pkt.flow.0).or_default();
                    if pkt.seq >= f.client_ack {
                        // A resend from the sender keeps the count of the link's sends.
                        let sends = f.cache.get(&pkt.seq).map_or(0, |c| c.2);
                        f.cache.insert(pkt.seq, (pkt, None, sends));
                        if !f.served && f.cache.len() > UNSERVED_CACHE {
                            f.cache.pop_first();
                        }
                    }
                }
                out.packets.push(pkt);
            }
            Direction::Reverse => {
                let ours = pkt.kind == PacketKind::Ack
                    && matches!(pkt.info, PacketInfo::None | PacketInfo::Sack(_));
                if !ours {
                    out.packets.push(pkt);
                } else if let Some(p) = self.on_client_ack(now, pkt, out) {
                    out.packets.push(p);
                }
            }
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        self.poll(now);
        while self.held.front().is_some_and(|h| h.0 <= now) {
            out.packets.push(self.held.pop_front().expect("front exists").1);
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_due()
    }

    fn observe_dequeue(&mut self, now: Time, rec: &DequeueRecord) {
        let p = &rec.pkt;
        if p.dir != Direction::Forward || !is_tcp_data(p) || !self.flows.contains_key(&p.flow.0) {
            return;
        }
        let leaves = rec.leaves_at.unwrap_or(now).max(now);
        let ce = p.ecn() == rtclab_core::Ecn::Ce;
        self.sent.push_back(Sent { leaves, flow: p.flow.0, seq: p.seq, echo: p.sent_at, ce });
    }

    fn made_and_absorbed(&self) -> MadeAbsorbed {
        MadeAbsorbed {
            made: (self.stats.local_retransmissions, self.stats.forged_acks - self.held.len() as u64),
            absorbed: (0, self.stats.absorbed_acks),
        }
    }

    fn metrics(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("forged_acks", self.stats.forged_acks as f64),
            ("absorbed_acks", self.stats.absorbed_acks as f64),
            ("passed_acks", self.stats.passed_acks as f64),
            ("local_retransmissions", self.stats.local_retransmissions as f64),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qdisc::Backlog;
    use rtclab_core::FlowId;

    fn fast_ack(params: &[(&str, f64)]) -> FastAck {
        let given: Vec<(String, rtclab_core::params::Value)> = params
            .iter()
            .map(|(n, v)| (n.to_string(), rtclab_core::params::Value::Num(*v)))
            .collect();
        let mut c = FastAckConfig::default();
        rtclab_core::params::apply(PARAMS, &mut c, &given).unwrap();
        FastAck::new(c)
    }

    fn us(t: i64) -> Time {
        Time::from_nanos(t as u64 * 1000)
    }

    fn data(seq: u64) -> Packet {
        Packet::data(FlowId(0), seq, 1500, us(seq as i64))
    }

    /// The link sent `seq`, its last bit leaving at `leaves` (µs).
    fn sent(m: &mut FastAck, now: i64, seq: u64, leaves: i64) {
        let rec = DequeueRecord {
            pkt: data(seq),
            sojourn: TimeDelta::ZERO,
            backlog: Backlog::default(),
            aggregate: None,
            leaves_at: Some(us(leaves)),
        };
        m.observe_dequeue(us(now), &rec);
    }

    /// Runs the element's timers up to `t` (µs), returning what left.
    fn run_to(m: &mut FastAck, t: i64) -> Vec<(Time, Packet)> {
        let mut got = Vec::new();
        while let Some(due) = m.poll_timeout().filter(|&d| d <= us(t)) {
            let mut out = ElementOutput::default();
            m.handle_timeout(due, &mut out);
            got.extend(out.packets.into_iter().map(|p| (due, p)));
        }
        got
    }

    /// A flow served: one client ACK for segment 0 has crossed (it passes: news for the sender).
    fn served(m: &mut FastAck) {
        let mut out = ElementOutput::default();
        m.handle_packet(us(0), Direction::Forward, data(0), &mut out);
        m.handle_packet(us(1), Direction::Reverse, Packet::ack(FlowId(0), 1, us(0), 52, us(1)), &mut out);
        assert_eq!(out.packets.len(), 2, "data and the first client ACK pass");
        assert_eq!(m.stats().passed_acks, 1);
    }

    #[test]
    fn every_second_sent_segment_is_acknowledged_at_the_next_poll_then_held() {
        let mut m = fast_ack(&[("hold_ms", 16.0)]);
        served(&mut m);
        // Segments 1 and 2 leave at 1,050 and 1,450 µs: one ACK at the poll at 1,600 µs,
        // cumulative 3, echoing segment 2's timestamp, released 16 ms later.
        sent(&mut m, 1000, 1, 1050);
        sent(&mut m, 1000, 2, 1450);
        assert_eq!(m.poll_timeout(), Some(us(1200)));
        assert!(run_to(&mut m, 17_000).is_empty());
        let got = run_to(&mut m, 17_600);
        assert_eq!(got.len(), 1);
        let (t, ack) = got[0];
        assert_eq!(t, us(17_600));
        assert_eq!((ack.kind, ack.dir, ack.seq, ack.echo), (PacketKind::Ack, Direction::Reverse, 3, us(2)));
        assert_eq!(ack.hop, Packet::ORIGINATED);
        assert_eq!(ack.sent_at, us(1600), "made at the poll");
        assert_eq!(m.made_and_absorbed().made, (0, 1));
    }

    #[test]
    fn a_lone_segment_waits_for_the_timeout_and_a_gap_is_reported_at_once_with_sack() {
        let mut m = fast_ack(&[("hold_ms", 0.0), ("ack_timeout_ms", 40.0)]);
        served(&mut m);
        sent(&mut m, 1000, 1, 1000);
        assert!(run_to(&mut m, 40_000).is_empty());
        let got = run_to(&mut m, 41_000);
        assert_eq!(got.iter().map(|g| (g.0, g.1.seq)).collect::<Vec<_>>(), vec![(us(41_000), 2)]);
        // Segment 2 was dropped by the queue: 3 and 4 are reported above the gap, each at once.
        sent(&mut m, 50_000, 3, 50_000);
        sent(&mut m, 50_000, 4, 50_200);
        let got = run_to(&mut m, 60_000);
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|g| g.1.seq == 2), "the sender still sees the queue's loss");
        assert_eq!(got[1].1.sack().iter(2).collect::<Vec<_>>(), vec![(3, 5)]);
        // The sender's resend of 2 fills the gap: cumulative 5, no blocks.
        sent(&mut m, 70_000, 2, 70_000);
        let got = run_to(&mut m, 80_000);
        assert_eq!(got.last().map(|g| (g.1.seq, g.1.sack().is_empty())), Some((5, true)));
    }

    #[test]
    fn client_acks_are_absorbed_and_its_duplicates_resend_from_the_cache() {
        let mut m = fast_ack(&[("hold_ms", 0.0), ("ack_every", 1.0)]);
        served(&mut m);
        let mut out = ElementOutput::default();
        for seq in 1..=5 {
            m.handle_packet(us(100), Direction::Forward, data(seq), &mut out);
            sent(&mut m, 100, seq, 100 + seq as i64);
        }
        out.packets.clear();
        assert_eq!(run_to(&mut m, 1000).last().map(|g| g.1.seq), Some(6));
        // Segment 2 was lost after the link: the client acknowledges 2 at 2,000 µs (its loop:
        // segment 1 left at 101 µs, so 1,899 µs), then repeats it.
        let ack = |c| Packet::ack(FlowId(0), c, us(0), 52, us(0));
        for _ in 0..4 {
            m.handle_packet(us(2000), Direction::Reverse, ack(2), &mut out);
        }
        // Three duplicates, but segment 2 left only 1,898 µs ago: it may be on its way.
        assert!(out.packets.is_empty());
        for _ in 0..3 {
            m.handle_packet(us(4000), Direction::Reverse, ack(2), &mut out);
        }
        // Later duplicates: one resend from the cache, through the link.
        assert_eq!(out.packets.len(), 1);
        let again = out.packets[0];
        assert_eq!((again.dir, again.kind, again.seq, again.retransmit()), (Direction::Forward, PacketKind::Data, 2, true));
        assert_eq!(again.hop, Packet::ORIGINATED);
        assert_eq!(m.stats().absorbed_acks, 7);
        assert_eq!(m.made_and_absorbed(), MadeAbsorbed { made: (1, 5), absorbed: (0, 7) });
        // The client's cumulative ACK frees the cache below it.
        m.handle_packet(us(3000), Direction::Reverse, ack(6), &mut out);
        assert!(m.flows[&0].cache.is_empty());
    }

    #[test]
    fn media_and_unanswered_flows_pass_untouched() {
        let mut m = fast_ack(&[]);
        let mut out = ElementOutput::default();
        let mut media = data(1);
        media.info = PacketInfo::Padding;
        m.handle_packet(us(0), Direction::Forward, media, &mut out);
        // A flow whose feedback never crossed: sent segments are not acknowledged.
        m.handle_packet(us(0), Direction::Forward, data(1), &mut out);
        sent(&mut m, 0, 1, 10);
        assert!(run_to(&mut m, 1_000_000).is_empty());
        assert_eq!(out.packets.len(), 2);
        assert_eq!(m.stats(), FastAckStats::default());
    }
}
