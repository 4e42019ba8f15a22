//! Zhuge at a wireless access point: early congestion feedback (the "shortest control loop").
//!
//! Lineage: Z. Meng, Y. Guo, C. Sun, B. Wang, J. Sherry, H. Liu, M. Xu, *Achieving Consistent
//! Low Latency for Wireless Real-Time Communications with the Shortest Control Loop*, ACM
//! SIGCOMM 2022; chapter 4 of Meng Zili's dissertation (seed `004_0e90cd88815e68a1.txt`);
//! spec `shared/specs/zhuge-metis.md` part A; the released ns-3 code transys-project/zhuge.
//!
//! A middlebox at the hop of the access point's downlink (`[[middleboxes]] kind = "zhuge",
//! at = "<link>"`): it sees every packet entering that link, the link's dequeues, and the
//! feedback coming back. For each downlink packet of a tracked flow the Fortune Teller
//! (`fortune_teller.rs`) predicts the time to the client; the Feedback Updater hands that to
//! the sender before the packet has even waited in the queue:
//! - **out of band** (TCP, any ACK-clocked transport): the flow's ACKs are delayed by samples
//!   of the predicted delay's changes (`delta_delay.rs`), so the sender's RTT samples rise
//!   about one loop earlier; ACKs are never altered or reordered;
//! - **in band** (RTP with transport-wide feedback, i.e. `gcc`): each client TWCC message
//!   passing back through the AP is rewritten to report the media packets the AP has seen
//!   since the last report, with their *predicted* arrival times. The client's own TWCC
//!   content is thus dropped and replaced, as the dissertation requires (§4.5.3), at the
//!   client's feedback cadence by default — the clean ablation the spec recommends (A.4.2).
//!   With `cadence_ms` > 0 the AP sends its own report every `cadence_ms` instead (the
//!   released simulator: 1 ms; simulator only) and absorbs the client's transport-wide
//!   feedback once it has learnt the stream's SSRCs from the first one. Other RTCP (REMB, RR,
//!   RFC 8888) passes untouched.
//!
//! The Fortune Teller's queue statistics are the whole link queue's, exact for FIFO queues.
//!
//! **Drops (`report_drops`, off by default as published).** In band, Zhuge reports a packet as
//! received the moment it enters the AP, before the queue has decided to keep it. A packet the
//! queue then drops (tail drop on arrival; an AQM drop before its report left) is reported as
//! received, and a sender that culls acknowledged packets from its retransmission history (as
//! libwebrtc does on transport-wide feedback) can no longer answer the client's NACK: the frame
//! never completes. With `report_drops = true` the AP forgets such a packet before its report
//! leaves, so the report gives it as lost; the delay prediction is unchanged. A packet dropped
//! after its report left (a dequeue-time AQM drop more than a report interval later) stays
//! hidden; the `drops_hidden` metric counts those.
//!
//! **Holding reports (`hold_until_dequeue`, off by default).** The in-band report also tells the
//! sender that a packet is no longer in flight, so a sender that limits its data in flight
//! (libwebrtc's congestion-window pushback, which also drops frames at the encoder) never sees
//! the AP queue it fills. With `hold_until_dequeue = true` a packet's predicted arrival joins a
//! report only once the link has taken it from its queue: the prediction is the same, the
//! sender's in-flight count again holds the AP queue, and a packet the queue drops is never
//! reported received (simulator only).

pub mod delta_delay;
pub mod fortune_teller;

use crate::feedback::PendingArrivals;
use crate::feedback_access::rewrite_transport_feedback;
use crate::sender::MediaFeedback;
use delta_delay::{DeltaDelay, DeltaDelayConfig};
use fortune_teller::{FortuneTeller, FortuneTellerConfig};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{Direction, Packet, PacketInfo, PacketKind, RngStream, Time, TimeDelta};
use rtclab_net::element::{DequeueRecord, ElementOutput, NetElement};
use rtclab_net::middleboxes::{MiddleboxArgs, MiddleboxKind};
use rtclab_net::queues::describe;
use rtclab_wire::rtcp::TransportFeedback;
use std::collections::BTreeMap;

pub static KIND: MiddleboxKind = MiddleboxKind {
    name: "zhuge",
    help: "Zhuge (SIGCOMM'22) at a wireless AP: predicts each downlink packet's delay and feeds it back early (delayed TCP ACKs, rewritten TWCC)",
    params: || describe(ZHUGE_PARAMS, &ZhugeConfig::default()),
    build: |a: MiddleboxArgs| {
        let mut c = ZhugeConfig::default();
        a.apply(ZHUGE_PARAMS, &mut c)?;
        Ok(Box::new(Zhuge::new(c, a.rng)))
    },
    acts_on_feedback: true,
    simulator_only: |params| {
        let on = |name: &str| {
            params.iter().any(|(k, v)| {
                use rtclab_core::params::Value;
                k == name && (matches!(v, Value::Num(x) if *x > 0.0) || matches!(v, Value::Bool(true)))
            })
        };
        if on("cadence_ms") {
            Some(
                "cadence_ms > 0 (AP-originated transport-wide feedback): the emulator's Zhuge \
                 rewrites the client's real RTCP at its cadence (leave cadence_ms out or 0)",
            )
        } else if on("hold_until_dequeue") {
            Some(
                "hold_until_dequeue = true: the emulator's dequeue records do not carry the \
                 RTP transport sequence numbers it needs (leave it out or false)",
            )
        } else {
            None
        }
    },
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ZhugeConfig {
    pub teller: FortuneTellerConfig,
    pub acks: DeltaDelayConfig,
    /// Flows with an id below this are tracked (all by default).
    pub flows_below: u32,
    pub in_band: bool,
    pub out_of_band: bool,
    /// In band: the AP's own report every this often (None: rewrite the client's).
    pub report_every: Option<TimeDelta>,
    /// In band: a packet the AP's queue drops before its report leaves is reported as lost.
    pub report_drops: bool,
    /// In band: a packet's prediction is reported once the link has dequeued it.
    pub hold_until_dequeue: bool,
}

impl Default for ZhugeConfig {
    fn default() -> Self {
        ZhugeConfig {
            teller: FortuneTellerConfig::default(),
            acks: DeltaDelayConfig::default(),
            flows_below: u32::MAX,
            in_band: true,
            out_of_band: true,
            report_every: None,
            report_drops: false,
            hold_until_dequeue: false,
        }
    }
}

pub static ZHUGE_PARAMS: &[Param<ZhugeConfig>] = &[
    param!(ZhugeConfig, "w_rate_ms", "window of the dequeue-rate and dequeue-interval estimates, ms (40; the released code: 200)", Real, 1.0, 10_000.0,
        |c| c.teller.w_rate.as_millis_f64(), |c, v| c.teller.w_rate = ms(v)),
    param!(ZhugeConfig, "min_tx_rate_kbps", "floor of the dequeue-rate estimate, kbit/s (512)", Real, 1.0, 1e7,
        |c| c.teller.min_tx_rate_bps / 1000.0, |c, v| c.teller.min_tx_rate_bps = v * 1000.0),
    param!(ZhugeConfig, "qshort", "add the head-of-line packet's waiting time (true; the code's wired mode: false)", Bool, 0.0, 1.0,
        |c| c.teller.qshort as u8 as f64, |c, v| c.teller.qshort = v != 0.0),
    param!(ZhugeConfig, "ampdu_wait_ms", "A-MPDU rule on aggregating (wifi) links: bytes ahead worth less than this at the dequeue rate ride in the head's aggregate, ms (5)", Real, 0.0, 1000.0,
        |c| c.teller.ampdu_wait.as_millis_f64(), |c, v| c.teller.ampdu_wait = ms(v)),
    param!(ZhugeConfig, "w_delta_ms", "history window of delay deltas and tokens, ms (40)", Real, 1.0, 10_000.0,
        |c| c.acks.window.as_millis_f64(), |c, v| c.acks.window = ms(v)),
    param!(ZhugeConfig, "delta_clamp_ms", "clamp of each delta and token, ms (10)", Real, 0.0, 10_000.0,
        |c| c.acks.clamp.as_millis_f64(), |c, v| c.acks.clamp = ms(v)),
    param!(ZhugeConfig, "max_ack_delay_ms", "most delay added to one ACK, ms (10)", Real, 0.0, 10_000.0,
        |c| c.acks.max_ack_delay.as_millis_f64(), |c, v| c.acks.max_ack_delay = ms(v)),
    param!(ZhugeConfig, "warmup_ms", "no ACK delaying before this time, ms (3000)", Real, 0.0, 1e9,
        |c| c.acks.warmup.as_millis_f64(), |c, v| c.acks.warmup = ms(v)),
    param!(ZhugeConfig, "flows_below", "track flows with an id below this (all)", Integer, 0.0, 4_294_967_295.0,
        |c| c.flows_below as f64, |c, v| c.flows_below = v as u32),
    param!(ZhugeConfig, "in_band", "rewrite RTP flows' transport-wide feedback (true)", Bool, 0.0, 1.0,
        |c| c.in_band as u8 as f64, |c, v| c.in_band = v != 0.0),
    param!(ZhugeConfig, "out_of_band", "delay TCP flows' ACKs (true)", Bool, 0.0, 1.0,
        |c| c.out_of_band as u8 as f64, |c, v| c.out_of_band = v != 0.0),
    param!(ZhugeConfig, "report_drops", "in band: report a packet the AP's queue drops before its report leaves as lost, not as received (false: as published)", Bool, 0.0, 1.0,
        |c| c.report_drops as u8 as f64, |c, v| c.report_drops = v != 0.0),
    param!(ZhugeConfig, "hold_until_dequeue", "in band: report a packet's predicted arrival only once the link has dequeued it, so the sender counts the AP queue as in flight (false: as published; simulator only)", Bool, 0.0, 1.0,
        |c| c.hold_until_dequeue as u8 as f64, |c, v| c.hold_until_dequeue = v != 0.0),
    param!(ZhugeConfig, "cadence_ms", "in band: 0 rewrites the client's transport-wide feedback at its cadence (default); > 0 sends the AP's own report every cadence_ms and absorbs the client's (the released simulator: 1; simulator only), ms", Real, 0.0, 1000.0,
        |c| c.report_every.map_or(0.0, |d| d.as_millis_f64()), |c, v| c.report_every = (v > 0.0).then(|| ms(v))),
];

#[derive(Debug)]
enum Tracked {
    Tcp(DeltaDelay),
    Rtp(RtpState),
}

#[derive(Debug, Default)]
struct RtpState {
    pending: PendingArrivals,
    /// `hold_until_dequeue`: predictions of packets still in the link's queue, by sequence.
    queued: BTreeMap<u64, Time>,
    /// Transport sequence numbers read from RTP bytes (the emulator's packets).
    seqs: crate::rtp_codec::SeqUnwrapper,
    /// The last packet reported, for a report with nothing new.
    last_reported: Option<(u64, Time)>,
    /// AP-originated reports: the stream's (sender, media) SSRCs, learnt from the client's
    /// first transport-wide feedback, and the reports' own count.
    ssrcs: Option<(u32, u32)>,
    fb_count: u8,
}

/// Counters a test or a report can read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZhugeStats {
    pub predictions: u64,
    pub acks_delayed: u64,
    pub feedback_rewritten: u64,
    /// AP-originated reports sent, and client reports absorbed in their place.
    pub reports_originated: u64,
    pub client_reports_absorbed: u64,
    /// Tracked media packets the AP's queue dropped: reported as lost in time
    /// (`report_drops`), or already reported as received.
    pub drops_reported: u64,
    pub drops_hidden: u64,
}

pub struct Zhuge {
    cfg: ZhugeConfig,
    rng: RngStream,
    teller: FortuneTeller,
    flows: BTreeMap<u32, Tracked>,
    /// ACKs held back: (release, arrival order) -> packet.
    held: BTreeMap<(Time, u64), Packet>,
    order: u64,
    stats: ZhugeStats,
    accuracy: Accuracy,
    /// The next AP-originated report (once a stream's SSRCs are known).
    next_report: Option<Time>,
}

/// The Fortune Teller against what happened (dissertation §4.7.6.1, Fig 4.18): each tracked
/// packet's predicted delay against its delay from the AP to the end of its transmission,
/// known when the link dequeues it (`DequeueRecord::leaves_at`).
#[derive(Debug, Default)]
struct Accuracy {
    /// (flow, seq, is an ACK) -> (arrival, predicted total delay).
    pending: BTreeMap<(u32, u64, bool), (Time, TimeDelta)>,
    /// |error| in µs, for packets whose actual delay was at most 64 ms, and above.
    upto_64ms: rtclab_core::histogram::LogHistogram,
    over_64ms: rtclab_core::histogram::LogHistogram,
    /// Sum of signed errors (predicted − actual), µs.
    signed_sum_us: f64,
    /// Not before then is `pending` pruned again.
    next_prune: Time,
}

impl Accuracy {
    fn predicted(&mut self, now: Time, pkt: &Packet, total: TimeDelta) {
        if self.pending.len() >= 200_000 && now >= self.next_prune {
            // Packets the queue dropped never leave: forget those older than 10 s, at most once
            // a second (a full map of younger packets is not rescanned on every arrival).
            self.next_prune = now + TimeDelta::from_secs(1);
            if let Some(cutoff) = now.as_nanos().checked_sub(10_000_000_000) {
                self.pending.retain(|_, v| v.0 > Time::from_nanos(cutoff));
            }
        }
        self.pending.insert((pkt.flow.0, pkt.seq, pkt.kind == PacketKind::Ack), (now, total));
    }

    fn left(&mut self, rec: &DequeueRecord) {
        let key = (rec.pkt.flow.0, rec.pkt.seq, rec.pkt.kind == PacketKind::Ack);
        let (Some(leaves), Some((arrived, predicted))) = (rec.leaves_at, self.pending.remove(&key))
        else {
            return;
        };
        let actual = leaves - arrived;
        let err = predicted - actual;
        self.signed_sum_us += err.as_secs_f64() * 1e6;
        let abs = err.abs().as_nanos().max(0) as u64 / 1000;
        if actual <= TimeDelta::from_millis(64) {
            self.upto_64ms.record(abs);
        } else {
            self.over_64ms.record(abs);
        }
    }

    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let n = self.upto_64ms.count() + self.over_64ms.count();
        let ms = |h: &rtclab_core::histogram::LogHistogram, q: f64| {
            h.quantile(q).map_or(f64::NAN, |us| us as f64 / 1000.0)
        };
        vec![
            ("prediction_samples", n as f64),
            ("prediction_share_over_64ms", self.over_64ms.count() as f64 / (n.max(1)) as f64),
            ("prediction_error_ms_mean", self.signed_sum_us / 1000.0 / (n.max(1)) as f64),
            ("prediction_abs_error_ms_p50_upto_64ms", ms(&self.upto_64ms, 0.5)),
            ("prediction_abs_error_ms_p90_upto_64ms", ms(&self.upto_64ms, 0.9)),
            ("prediction_abs_error_ms_p50_over_64ms", ms(&self.over_64ms, 0.5)),
            ("prediction_abs_error_ms_p90_over_64ms", ms(&self.over_64ms, 0.9)),
        ]
    }
}

impl Zhuge {
    pub fn new(cfg: ZhugeConfig, rng: RngStream) -> Self {
        Zhuge {
            cfg,
            rng,
            teller: FortuneTeller::new(cfg.teller),
            flows: BTreeMap::new(),
            held: BTreeMap::new(),
            order: 0,
            stats: ZhugeStats::default(),
            accuracy: Accuracy::default(),
            next_report: None,
        }
    }

    pub fn stats(&self) -> ZhugeStats {
        self.stats
    }

    /// Held ACKs whose time has come, in release order.
    fn release_due(&mut self, now: Time, out: &mut ElementOutput) {
        while let Some(entry) = self.held.first_entry() {
            if entry.key().0 > now {
                break;
            }
            out.packets.push(entry.remove());
        }
    }

    fn on_downlink(&mut self, now: Time, pkt: &Packet, payloads: &rtclab_core::Payloads) {
        if pkt.kind != PacketKind::Data || pkt.flow.0 >= self.cfg.flows_below {
            return;
        }
        // A media packet: structured (simulator) or RTP bytes (emulator); a flow already known
        // as TCP is not parsed again.
        let known_tcp = matches!(self.flows.get(&pkt.flow.0), Some(Tracked::Tcp(_)));
        let wire_seq = if known_tcp { None } else { wire_seq(pkt, payloads) };
        let rtp = wire_seq.is_some()
            || matches!(pkt.info, PacketInfo::Media { .. } | PacketInfo::Padding);
        let p = self.teller.predict(now);
        self.stats.predictions += 1;
        self.accuracy.predicted(now, pkt, p.total());
        let acks = self.cfg.acks;
        let f = self.flows.entry(pkt.flow.0).or_insert_with(|| {
            if rtp {
                Tracked::Rtp(RtpState::default())
            } else {
                Tracked::Tcp(DeltaDelay::new(acks))
            }
        });
        match f {
            Tracked::Tcp(d) => d.on_data(now, p.total(), p.bytes_ahead == 0),
            Tracked::Rtp(r) => {
                let seq = wire_seq.map_or(pkt.seq, |s| r.seqs.unwrap(s));
                if self.cfg.hold_until_dequeue {
                    r.queued.insert(seq, now + p.total());
                } else {
                    r.pending.insert(seq, now + p.total());
                }
            }
        }
    }

    /// Feedback coming back: Some(packet) to pass on now, None if held.
    fn on_uplink(&mut self, now: Time, mut pkt: Packet, out: &mut ElementOutput) -> Option<Packet> {
        match self.flows.get_mut(&pkt.flow.0) {
            Some(Tracked::Tcp(d)) if self.cfg.out_of_band && pkt.kind == PacketKind::Ack => {
                let release = d.on_ack(now, &mut self.rng);
                if release <= now {
                    // Its flow's earlier ACKs are due by now too: they leave first.
                    self.release_due(now, out);
                    return Some(pkt);
                }
                self.stats.acks_delayed += 1;
                self.held.insert((release, self.order), pkt);
                self.order += 1;
                None
            }
            Some(Tracked::Rtp(r)) if self.cfg.in_band && self.cfg.report_every.is_some() => {
                // The AP reports on its own cadence: the client's transport-wide feedback
                // (structured: the simulator) teaches the SSRCs and is absorbed.
                let PacketInfo::Payload { id } = pkt.info else { return Some(pkt) };
                let ids = match out.payloads.get(id).and_then(|p| p.downcast_ref::<MediaFeedback>())
                {
                    Some(MediaFeedback::Twcc(t)) => (t.sender_ssrc, t.media_ssrc),
                    _ => return Some(pkt),
                };
                r.ssrcs = Some(ids);
                out.payloads.take(id);
                self.stats.client_reports_absorbed += 1;
                if self.next_report.is_none() {
                    self.next_report = self.cfg.report_every.map(|d| now + d);
                }
                None
            }
            Some(Tracked::Rtp(r)) if self.cfg.in_band => {
                let PacketInfo::Payload { id } = pkt.info else { return Some(pkt) };
                let Some(payload) = out.payloads.get_mut(id) else { return Some(pkt) };
                let report =
                    r.pending.take().or_else(|| r.last_reported.map(|(s, t)| (s, vec![Some(t)])));
                let Some((base, arrivals)) = report else { return Some(pkt) };
                if let Some((i, Some(t))) =
                    arrivals.iter().enumerate().rev().find(|(_, a)| a.is_some())
                {
                    r.last_reported = Some((base + i as u64, *t));
                }
                let mut rewritten = false;
                let res = rewrite_transport_feedback(payload, |t: &mut TransportFeedback| {
                    if let Ok(fb) =
                        predicted_twcc((t.sender_ssrc, t.media_ssrc), t.fb_count, base, &arrivals)
                    {
                        *t = fb;
                        rewritten = true;
                    }
                });
                if let (Ok(crate::feedback_access::Rewritten::Done { size }), true) =
                    (res, rewritten)
                {
                    pkt.size = size;
                    self.stats.feedback_rewritten += 1;
                }
                Some(pkt)
            }
            _ => Some(pkt),
        }
    }

    /// The AP's own report for each stream with new packets since its last one: their
    /// predicted arrival times, as a client's TWCC would carry the measured ones.
    fn originate_reports(&mut self, now: Time, out: &mut ElementOutput) {
        for (&flow, f) in self.flows.iter_mut() {
            let Tracked::Rtp(r) = f else { continue };
            let Some((sender_ssrc, media_ssrc)) = r.ssrcs else { continue };
            let Some((base, arrivals)) = r.pending.take() else { continue };
            let Ok(fb) = predicted_twcc((sender_ssrc, media_ssrc), r.fb_count, base, &arrivals)
            else {
                continue;
            };
            r.fb_count = r.fb_count.wrapping_add(1);
            let fb = MediaFeedback::Twcc(fb);
            let size = crate::receiver::feedback_wire_size(&fb);
            let id = out.payloads.insert(rtclab_core::Payload::structured(fb));
            let mut p = Packet::ack(rtclab_core::FlowId(flow), 0, now, size, now);
            p.info = PacketInfo::Payload { id };
            p.hop = Packet::ORIGINATED;
            out.packets.push(p);
            self.stats.reports_originated += 1;
        }
    }
}

/// The transport-wide sequence number of a packet carried as RTP bytes (the emulator's
/// packets); None for any other packet.
fn wire_seq(pkt: &Packet, payloads: &rtclab_core::Payloads) -> Option<u16> {
    let PacketInfo::Payload { id } = pkt.info else { return None };
    payloads
        .get(id)
        .and_then(|p| p.downcast_ref::<Vec<u8>>())
        .and_then(|b| crate::rtp_codec::transport_seq_of_ip(b))
}

/// A transport-wide feedback message reporting packets `base..` with the AP's predicted
/// arrival times (None: not seen).
fn predicted_twcc(
    (sender_ssrc, media_ssrc): (u32, u32),
    fb_count: u8,
    base: u64,
    arrivals: &[Option<Time>],
) -> Result<TransportFeedback, rtclab_wire::WireError> {
    let us: Vec<Option<i64>> =
        arrivals.iter().map(|a| a.map(|t| (t.as_nanos() / 1000) as i64)).collect();
    TransportFeedback::from_arrivals(sender_ssrc, media_ssrc, base as u16, fb_count, &us)
}

impl NetElement for Zhuge {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match dir {
            Direction::Forward => {
                self.on_downlink(now, &pkt, &out.payloads);
                self.teller.on_arrival(now, &pkt);
                out.packets.push(pkt);
            }
            Direction::Reverse => {
                if let Some(p) = self.on_uplink(now, pkt, out) {
                    out.packets.push(p);
                }
            }
        }
    }

    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        self.release_due(now, out);
        if let (Some(at), Some(every)) = (self.next_report, self.cfg.report_every) {
            if at <= now {
                self.originate_reports(now, out);
                // The next tick of the cadence after now.
                let n = (now - at).as_nanos() / every.as_nanos() + 1;
                self.next_report = Some(at + TimeDelta::from_nanos(n * every.as_nanos()));
            }
        }
    }

    fn poll_timeout(&self) -> Option<Time> {
        rtclab_core::earliest([self.held.keys().next().map(|k| k.0), self.next_report])
    }

    fn made_and_absorbed(&self) -> rtclab_net::element::MadeAbsorbed {
        rtclab_net::element::MadeAbsorbed {
            made: (0, self.stats.reports_originated),
            absorbed: (0, self.stats.client_reports_absorbed),
        }
    }

    fn observe_dequeue(&mut self, now: Time, rec: &DequeueRecord) {
        self.teller.on_dequeue(now, rec);
        self.accuracy.left(rec);
        if self.cfg.hold_until_dequeue && rec.pkt.kind == PacketKind::Data {
            if let Some(Tracked::Rtp(r)) = self.flows.get_mut(&rec.pkt.flow.0) {
                if let Some(at) = r.queued.remove(&rec.pkt.seq) {
                    r.pending.insert(rec.pkt.seq, at);
                }
            }
        }
    }

    fn observe_drop(&mut self, _now: Time, pkt: &Packet, payloads: &rtclab_core::Payloads) {
        if pkt.kind != PacketKind::Data || pkt.dir != Direction::Forward {
            return;
        }
        let Some(Tracked::Rtp(r)) = self.flows.get_mut(&pkt.flow.0) else { return };
        let seq = match (pkt.info, wire_seq(pkt, payloads)) {
            (PacketInfo::Payload { .. }, Some(s)) => r.seqs.unwrap(s),
            (PacketInfo::Payload { .. }, None) => return,
            _ => pkt.seq,
        };
        if r.queued.remove(&seq).is_some() || (self.cfg.report_drops && r.pending.forget(seq)) {
            self.stats.drops_reported += 1;
        } else {
            self.stats.drops_hidden += 1;
        }
    }

    fn metrics(&self) -> Vec<(&'static str, f64)> {
        let mut m = vec![
            ("predictions", self.stats.predictions as f64),
            ("acks_delayed", self.stats.acks_delayed as f64),
            ("feedback_rewritten", self.stats.feedback_rewritten as f64),
            ("reports_originated", self.stats.reports_originated as f64),
            ("client_reports_absorbed", self.stats.client_reports_absorbed as f64),
            ("drops_reported", self.stats.drops_reported as f64),
            ("drops_hidden", self.stats.drops_hidden as f64),
        ];
        m.extend(self.accuracy.metrics());
        m
    }

    fn held_by_kind(&self) -> (u64, u64) {
        rtclab_net::qdisc::count_kinds(self.held.values())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sender::MediaFeedback;
    use rtclab_core::{FlowId, Payload, TimeDelta};
    use rtclab_net::qdisc::Backlog;
    use rtclab_wire::rtcp::PacketStatus;

    fn zhuge(params: &[(&str, f64)]) -> Zhuge {
        let mut c = ZhugeConfig::default();
        let given: Vec<(String, rtclab_core::params::Value)> = params
            .iter()
            .map(|(n, v)| (n.to_string(), rtclab_core::params::Value::Num(*v)))
            .collect();
        rtclab_core::params::apply(ZHUGE_PARAMS, &mut c, &given).unwrap();
        Zhuge::new(c, RngStream::from_seed(1))
    }

    /// A one-packet media frame `seq` of `flow`.
    fn media_packet(flow: u32, seq: u64, now: Time) -> Packet {
        let mut p = Packet::data(FlowId(flow), seq, 1200, now);
        p.info = PacketInfo::Media {
            frame_id: seq as u32,
            index: 0,
            count: 1,
            key: false,
            xor_groups: 0,
            encode_ns: 0,
            rtx_wait_ns: 0,
        };
        p
    }

    /// Feeds `n` packets of `flow` into the hop at one per ms while the link serves one every
    /// 2 ms (the queue grows), from `t0`; returns the next free time.
    fn grow_queue(
        z: &mut Zhuge,
        flow: u32,
        media: bool,
        t0: u64,
        n: u64,
        out: &mut ElementOutput,
    ) -> u64 {
        let mut queued = 0u32;
        for k in 0..n {
            let now = Time::from_millis(t0 + k);
            let p = if media {
                media_packet(flow, k, now)
            } else {
                Packet::data(FlowId(flow), k, 1200, now)
            };
            z.handle_packet(now, Direction::Forward, p, out);
            queued += 1;
            if k % 2 == 0 {
                queued -= 1;
                let rec = DequeueRecord {
                    pkt: Packet::data(FlowId(flow), k / 2, 1200, now),
                    sojourn: TimeDelta::ZERO,
                    backlog: Backlog { packets: queued, bytes: queued as u64 * 1200 },
                    aggregate: None,
                    leaves_at: Some(now + TimeDelta::from_millis(2)),
                };
                z.observe_dequeue(now, &rec);
            }
        }
        out.packets.clear();
        t0 + n
    }

    #[test]
    fn predictions_are_scored_against_when_packets_leave_the_link() {
        // 200 arrivals, one per ms; every other ms the link takes the oldest, which leaves
        // 2 ms later: packet j's delay is j + 2 ms, so half of the 100 scored are over 64 ms.
        let mut z = zhuge(&[]);
        let mut out = ElementOutput::default();
        grow_queue(&mut z, 0, false, 0, 200, &mut out);
        let m: BTreeMap<&str, f64> = z.metrics().into_iter().collect();
        assert_eq!(m["predictions"], 200.0);
        assert_eq!(m["prediction_samples"], 100.0);
        let share = m["prediction_share_over_64ms"];
        assert!((share - 0.37).abs() < 0.05, "{share}");
        assert!(m["prediction_abs_error_ms_p50_upto_64ms"].is_finite());
        assert!(m["prediction_abs_error_ms_p50_over_64ms"].is_finite());
        // Packets never seen leaving (or leaving at an unknown time) are not scored.
        assert_eq!(z.accuracy.pending.len(), 100);
    }

    #[test]
    fn tcp_acks_are_delayed_in_order_while_the_queue_grows() {
        let mut z = zhuge(&[("warmup_ms", 0.0)]);
        let mut out = ElementOutput::default();
        let t = grow_queue(&mut z, 0, false, 1000, 100, &mut out);
        assert!(z.stats().predictions >= 100);
        // ACKs come back one per ms: the first passes, later ones are held (the predicted
        // delay grew by about 1 ms per packet) and leave in order, no later than 10 ms; as
        // the downlink has gone quiet, the deltas age out of their 40 ms window and the
        // samples shrink with the packet rate, so the last ACKs pass at once.
        let mut released = Vec::new();
        for k in 0..20u64 {
            let now = Time::from_millis(t + k);
            z.handle_packet(
                now,
                Direction::Reverse,
                Packet::ack(FlowId(0), k, Time::ZERO, 52, now),
                &mut out,
            );
            z.handle_timeout(now, &mut out);
            released.extend(out.packets.drain(..).map(|p| (p.seq, now)));
        }
        assert!(z.stats().acks_delayed >= 5, "{:?}", z.stats());
        assert_eq!(z.held_by_kind().1 as usize + released.len(), 20);
        while let Some(at) = z.poll_timeout() {
            z.handle_timeout(at, &mut out);
            released.extend(out.packets.drain(..).map(|p| (p.seq, at)));
        }
        let end = Time::from_millis(t + 100);
        let seqs: Vec<u64> = released.iter().map(|r| r.0).collect();
        assert_eq!(seqs, (0..20).collect::<Vec<_>>(), "in order");
        for (s, at) in &released {
            assert!(*at <= Time::from_millis(t + s + 10), "ACK {s} held past the 10 ms cap: {at}");
        }
        // Data passes untouched.
        z.handle_packet(end, Direction::Forward, Packet::data(FlowId(0), 999, 1200, end), &mut out);
        assert_eq!(out.packets.len(), 1);
    }

    /// `cadence_ms` > 0: the client's first TWCC teaches the SSRCs and is absorbed; then the AP
    /// reports every cadence tick the packets it saw since its last report (none when nothing
    /// is new), with its own feedback count, as packets it makes itself.
    #[test]
    fn the_ap_originates_reports_on_its_cadence_and_absorbs_the_clients() {
        let mut z = zhuge(&[("cadence_ms", 1.0)]);
        let mut out = ElementOutput::default();
        let t = grow_queue(&mut z, 3, true, 0, 10, &mut out);
        assert_eq!(z.poll_timeout(), None, "no report before the SSRCs are known");
        let fb = TransportFeedback::from_arrivals(7, 9, 0, 40, &[Some(1_000)]).unwrap();
        let id = out.payloads.insert(Payload::structured(MediaFeedback::Twcc(fb)));
        let now = Time::from_millis(t);
        let mut pkt = Packet::ack(FlowId(3), 0, Time::ZERO, 100, now);
        pkt.info = PacketInfo::Payload { id };
        z.handle_packet(now, Direction::Reverse, pkt, &mut out);
        assert!(out.packets.is_empty(), "the client's report is absorbed");
        assert!(out.payloads.get(id).is_none(), "and its payload freed");
        assert_eq!(z.poll_timeout(), Some(now + TimeDelta::from_millis(1)));
        let mut reports = Vec::new();
        for k in 1..=5u64 {
            let at = now + TimeDelta::from_millis(k as i64);
            if k == 3 {
                // Two more packets between the second and the third tick.
                for seq in [10, 11] {
                    z.handle_packet(at, Direction::Forward, media_packet(3, seq, at), &mut out);
                }
                out.packets.clear();
            }
            assert_eq!(z.poll_timeout(), Some(at));
            z.handle_timeout(at, &mut out);
            for p in out.packets.drain(..) {
                assert_eq!(
                    (p.dir, p.hop, p.flow),
                    (Direction::Reverse, Packet::ORIGINATED, FlowId(3))
                );
                let PacketInfo::Payload { id } = p.info else { panic!("a feedback payload") };
                let Some(MediaFeedback::Twcc(fb)) =
                    out.payloads.take(id).and_then(|x| x.downcast_ref::<MediaFeedback>().cloned())
                else {
                    panic!("TWCC")
                };
                reports.push((k, fb.base_seq, fb.packets.len(), fb.fb_count, fb.sender_ssrc));
            }
        }
        // Tick 1: the ten packets seen so far; tick 3: the two new ones; nothing else.
        assert_eq!(reports, vec![(1, 0, 10, 0, 7), (3, 10, 2, 1, 7)]);
        let m = z.made_and_absorbed();
        assert_eq!((m.made, m.absorbed), ((0, 2), (0, 1)));
    }

    /// Rewrites a client report through `z` and returns which of packets 0.. it gives as
    /// received.
    fn rewritten_received(z: &mut Zhuge, now: Time, out: &mut ElementOutput) -> Vec<bool> {
        let fb = TransportFeedback::from_arrivals(7, 9, 0, 4, &[Some(1_000)]).unwrap();
        let id = out.payloads.insert(Payload::structured(MediaFeedback::Twcc(fb)));
        let mut pkt = Packet::ack(FlowId(3), 0, Time::ZERO, 100, now);
        pkt.info = PacketInfo::Payload { id };
        z.handle_packet(now, Direction::Reverse, pkt, out);
        let Some(MediaFeedback::Twcc(got)) =
            out.payloads.get(id).and_then(|x| x.downcast_ref::<MediaFeedback>())
        else {
            panic!("TWCC")
        };
        got.packets.iter().map(|s| !matches!(s, PacketStatus::NotReceived)).collect()
    }

    #[test]
    fn a_packet_the_queue_drops_is_reported_lost_only_with_report_drops() {
        for (report, expect_hidden) in [(false, 1.0), (true, 0.0)] {
            let mut z = zhuge(&[]);
            z.cfg.report_drops = report;
            let mut out = ElementOutput::default();
            let t = grow_queue(&mut z, 3, true, 0, 20, &mut out);
            let dropped = media_packet(3, 12, Time::from_millis(12));
            z.observe_drop(Time::from_millis(12), &dropped, &out.payloads);
            let got = rewritten_received(&mut z, Time::from_millis(t), &mut out);
            assert_eq!(got.len(), 20);
            assert_eq!(got[12], !report, "report_drops = {report}");
            assert!(got.iter().enumerate().all(|(i, r)| i == 12 || *r));
            let m: BTreeMap<&str, f64> = z.metrics().into_iter().collect();
            assert_eq!(
                (m["drops_hidden"], m["drops_reported"]),
                (expect_hidden, 1.0 - expect_hidden)
            );
        }
    }

    #[test]
    fn held_reports_give_only_packets_the_link_has_dequeued() {
        // `grow_queue` dequeues packets 0..10 of the 20 it feeds (one every other ms).
        let mut z = zhuge(&[]);
        z.cfg.hold_until_dequeue = true;
        let mut out = ElementOutput::default();
        let t = grow_queue(&mut z, 3, true, 0, 20, &mut out);
        let got = rewritten_received(&mut z, Time::from_millis(t), &mut out);
        assert_eq!(got, vec![true; 10], "only the dequeued packets");
        // A held packet the queue then drops is never reported received.
        z.observe_drop(
            Time::from_millis(t),
            &media_packet(3, 15, Time::from_millis(15)),
            &out.payloads,
        );
        for k in 10..20u64 {
            if k == 15 {
                continue;
            }
            let rec = DequeueRecord {
                pkt: media_packet(3, k, Time::from_millis(t)),
                sojourn: TimeDelta::ZERO,
                backlog: Backlog { packets: 0, bytes: 0 },
                aggregate: None,
                leaves_at: None,
            };
            z.observe_dequeue(Time::from_millis(t), &rec);
        }
        let got = rewritten_received(&mut z, Time::from_millis(t + 1), &mut out);
        assert_eq!(got, (10..20).map(|k| k != 15).collect::<Vec<_>>());
    }

    #[test]
    fn client_twcc_is_rewritten_with_the_aps_predictions() {
        let mut z = zhuge(&[]);
        let mut out = ElementOutput::default();
        let t = grow_queue(&mut z, 3, true, 0, 50, &mut out);
        // The client's feedback reports only packets 0..10 (the rest are still queued).
        let arrivals: Vec<Option<i64>> = (0..10).map(|k| Some(20_000 + 2_000 * k)).collect();
        let fb = TransportFeedback::from_arrivals(7, 9, 0, 4, &arrivals).unwrap();
        let id = out.payloads.insert(Payload::structured(MediaFeedback::Twcc(fb)));
        let now = Time::from_millis(t);
        let mut pkt = Packet::ack(FlowId(3), 0, Time::ZERO, 100, now);
        pkt.info = PacketInfo::Payload { id };
        z.handle_packet(now, Direction::Reverse, pkt, &mut out);
        assert_eq!(out.packets.len(), 1, "feedback passes on at once");
        assert_eq!(z.stats().feedback_rewritten, 1);
        let p = out.packets[0];
        let Some(MediaFeedback::Twcc(got)) =
            out.payloads.get(id).and_then(|x| x.downcast_ref::<MediaFeedback>())
        else {
            panic!("still TWCC")
        };
        // All 50 packets the AP saw, the client's ssrcs and count kept, predicted times that
        // grow with the queue.
        assert_eq!((got.sender_ssrc, got.media_ssrc, got.fb_count, got.base_seq), (7, 9, 4, 0));
        assert_eq!(got.packets.len(), 50);
        assert!(got.packets.iter().all(|s| !matches!(s, PacketStatus::NotReceived)));
        let times: Vec<i64> = got.arrivals().into_iter().map(|(_, a)| a.unwrap()).collect();
        assert!(times[49] - times[10] > 20_000, "predictions grow with the queue: {times:?}");
        assert_eq!(p.size, crate::receiver::feedback_wire_size(&MediaFeedback::Twcc(got.clone())));
        // With `in_band = false` the same feedback passes unchanged.
        let mut z = zhuge(&[]);
        z.cfg.in_band = false;
        let mut out2 = ElementOutput::default();
        grow_queue(&mut z, 3, true, 0, 5, &mut out2);
        let fb = TransportFeedback::from_arrivals(7, 9, 0, 4, &arrivals).unwrap();
        let id = out2.payloads.insert(Payload::structured(MediaFeedback::Twcc(fb.clone())));
        let mut pkt = Packet::ack(FlowId(3), 0, Time::ZERO, 100, now);
        pkt.info = PacketInfo::Payload { id };
        z.handle_packet(now, Direction::Reverse, pkt, &mut out2);
        let Some(MediaFeedback::Twcc(same)) =
            out2.payloads.get(id).and_then(|x| x.downcast_ref::<MediaFeedback>())
        else {
            panic!()
        };
        assert_eq!(*same, fb);
    }
}
