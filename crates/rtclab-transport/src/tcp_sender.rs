//! TCP-like reliable bulk sender: SACK loss recovery with proportional rate reduction (the
//! Linux default), or classic NewReno recovery.
//!
//! Sequence numbers count packets (as ns-3 and Linux's cwnd do).
//!
//! Lineage:
//! - SACK mode: RFC 2018 (blocks), RFC 6675 (scoreboard; a packet is lost once DupThresh = 3
//!   packets above it are SACKed; `pipe` = outstanding - sacked - lost + retransmitted;
//!   NextSeg sends lost packets first), RFC 6937 (PRR with slow-start reduction bound, as
//!   Linux `tcp_cwnd_reduction`). A retransmission timeout marks every unSACKed packet lost
//!   and resends them in slow start (Linux `tcp_enter_loss`); no new recovery episode starts
//!   until everything outstanding at the timeout is acknowledged. A retransmission is lost
//!   again once a packet sent more than min RTT / 4 after it is delivered (RFC 8985's time
//!   rule for retransmissions only, like Linux's former `tcp_mark_lost_retrans`).
//! - NewReno mode: RFC 5681 (fast retransmit on the 3rd duplicate ACK, window inflation),
//!   RFC 6582 (partial ACKs retransmit the next hole and deflate the window, the timer is
//!   reset on the first partial ACK only, `recover` guards re-entry); after a timeout the
//!   sender goes back to the first unacknowledged packet.
//! - Both: RFC 6298 (RTO, Karn's rule, exponential backoff), Linux `TCP_RTO_MIN` 200 ms and
//!   `TCP_RTO_MAX` 120 s.
//!
//! With `app_rate` set the application writes at that rate (a live stream pushed over TCP, the
//! fairness study's Bilibili-like sender): new data is sent only once written, the sender
//! wakes up when the next packet is written, ACKs that find the buffer empty and the window
//! open are marked application-limited (no window growth, RFC 7661's idea; BBR's app-limited
//! samples), and the time each packet waited in the send buffer is recorded.
//!
//! The congestion controller decides the window (`target().cwnd_bytes`) and may ask for
//! pacing; this file owns loss detection, recovery and the ACK clock, and feeds the
//! controller what each ACK delivered.

use rtclab_cc::{AnyController, CongestionController, CongestionEvent, FeedbackReport, SentPacket};
use rtclab_core::{Endpoint, FlowId, Packet, Payload, Rate, Time, TimeDelta, Transmit};
use std::collections::VecDeque;

use crate::rtt::RttEstimator;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryMode {
    /// SACK scoreboard + PRR (Linux default).
    Sack,
    /// RFC 6582 NewReno without SACK.
    NewReno,
}

#[derive(Clone, Copy, Debug)]
pub struct TcpSenderConfig {
    /// Bytes on the wire per data packet.
    pub packet_size: u32,
    pub dupack_threshold: u32,
    pub initial_rto: TimeDelta,
    pub min_rto: TimeDelta,
    pub max_rto: TimeDelta,
    pub recovery: RecoveryMode,
    /// The application's data rate (a live stream pushed over TCP); `None` = unbounded bulk.
    pub app_rate: Option<Rate>,
    /// A finite transfer of this many packets (a web object); `None` = no end.
    pub size_packets: Option<u64>,
    /// ECN (RFC 3168): data packets are ECT(0); an ACK with ECE is a congestion signal,
    /// answered at most once per window of data with the controller's loss response and CWR
    /// on the next new packet — no retransmission.
    pub ecn: bool,
}

impl Default for TcpSenderConfig {
    fn default() -> Self {
        TcpSenderConfig {
            packet_size: 1500,
            dupack_threshold: 3,
            initial_rto: TimeDelta::from_secs(1),
            min_rto: TimeDelta::from_millis(200),
            max_rto: TimeDelta::from_secs(120),
            recovery: RecoveryMode::Sack,
            ecn: false,
            app_rate: None,
            size_packets: None,
        }
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TcpSenderStats {
    pub packets_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    /// Recovery episodes entered on duplicate ACKs / SACK evidence (not timeouts).
    pub fast_retransmits: u64,
    pub timeouts: u64,
    /// Window reductions in answer to ECN echoes (ECE).
    pub ecn_reductions: u64,
    /// Application-limited senders: new packets sent, and the sum and maximum of the time
    /// each waited in the send buffer (written by the application → first sent).
    pub app_packets: u64,
    pub app_delay_sum: TimeDelta,
    pub app_delay_max: TimeDelta,
    /// Finite transfers: when the last packet was acknowledged.
    pub completed_at: Option<Time>,
}

/// Scoreboard entry of one outstanding packet.
#[derive(Clone, Copy, Debug, Default)]
struct Seg {
    sent_at: Time,
    /// Ever retransmitted (Karn: no RTT sample from it).
    retx: bool,
    sacked: bool,
    lost: bool,
    /// A retransmission of it is in flight.
    retx_in_flight: bool,
}

#[derive(Clone, Copy, Debug)]
struct Recovery {
    /// Highest sequence sent (exclusive) when recovery began: a full ACK reaches it.
    recover: u64,
    // NewReno
    inflation: i64,
    partial_seen: bool,
    // PRR
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    sndcnt: u64,
}

pub struct TcpSender {
    flow: FlowId,
    cfg: TcpSenderConfig,
    cc: AnyController,
    snd_una: u64,
    snd_nxt: u64,
    high_sent: u64,
    /// Scoreboard for [snd_una, high_sent).
    segs: VecDeque<Seg>,
    sacked_out: u64,
    lost_out: u64,
    retrans_out: u64,
    highest_sacked: u64,
    /// No lost-and-not-retransmitted packet lies below this.
    retx_cursor: u64,
    dupacks: u32,
    recovery: Option<Recovery>,
    /// No new recovery episode until snd_una reaches this.
    recover_guard: u64,
    /// ECN: no new reduction until `snd_una` passes this (one per window); CWR to send.
    ecn_recover: u64,
    cwr_pending: bool,
    /// NewReno: a retransmission that bypasses the window.
    retransmit_now: Option<u64>,
    rtt: RttEstimator,
    rto_at: Option<Time>,
    backoff: u32,
    next_send: Time,
    pacing_wait: bool,
    /// Packets declared lost since the last report to the controller.
    newly_lost: u32,
    started: bool,
    has_data: bool,
    /// When the application began writing (app-rate senders).
    app_start: Time,
    /// The window is open but the application has not written the next packet yet.
    data_wait: bool,
    pub stats: TcpSenderStats,
}

impl TcpSender {
    pub fn new(flow: FlowId, cfg: TcpSenderConfig, cc: AnyController) -> Self {
        TcpSender {
            flow,
            cfg,
            cc,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            segs: VecDeque::new(),
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            highest_sacked: 0,
            retx_cursor: 0,
            dupacks: 0,
            recovery: None,
            recover_guard: 0,
            ecn_recover: 0,
            cwr_pending: false,
            retransmit_now: None,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            rto_at: None,
            backoff: 0,
            next_send: Time::ZERO,
            pacing_wait: false,
            newly_lost: 0,
            started: false,
            has_data: false,
            app_start: Time::ZERO,
            data_wait: false,
            stats: TcpSenderStats::default(),
        }
    }

    /// The application starts its transfer: unbounded bulk, or a stream at `app_rate`.
    pub fn start(&mut self, now: Time) {
        self.started = true;
        self.has_data = true;
        self.app_start = now;
    }

    /// When the application has written all of packet `seq` (app-rate senders).
    fn written_at(&self, seq: u64, rate: Rate) -> Time {
        self.app_start + rate.tx_time((seq + 1) * self.cfg.packet_size as u64)
    }

    /// Whether new packet `seq` is in the send buffer at `now`.
    fn has_new_data(&self, now: Time, seq: u64) -> bool {
        self.has_data
            && self.cfg.size_packets.is_none_or(|n| seq < n)
            && self.cfg.app_rate.is_none_or(|r| self.written_at(seq, r) <= now)
    }

    /// The application stops offering new data (outstanding data is still recovered).
    pub fn stop(&mut self) {
        self.has_data = false;
    }

    pub fn controller(&self) -> &AnyController {
        &self.cc
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    /// Packets believed to be in the network (RFC 6675 `pipe`; NewReno: all outstanding).
    pub fn packets_in_flight(&self) -> u64 {
        match self.cfg.recovery {
            RecoveryMode::Sack => {
                (self.high_sent - self.snd_una) + self.retrans_out - self.sacked_out - self.lost_out
            }
            RecoveryMode::NewReno => self.snd_nxt - self.snd_una,
        }
    }

    fn cwnd_packets(&self) -> u64 {
        self.cc
            .target()
            .cwnd_bytes
            .map_or(u64::MAX / 4, |b| (b / self.cfg.packet_size as u64).max(1))
    }

    /// The usable window in packets (NewReno: including fast-recovery inflation).
    pub fn window_packets(&self) -> u64 {
        let cwnd = self.cwnd_packets();
        match (self.cfg.recovery, self.recovery) {
            (RecoveryMode::NewReno, Some(r)) => (cwnd as i64 + r.inflation).max(1) as u64,
            _ => cwnd,
        }
    }

    fn rto(&self) -> TimeDelta {
        let base = self.rtt.rto().as_nanos();
        let scaled = base.saturating_mul(1i64 << self.backoff.min(20));
        TimeDelta::from_nanos(scaled).min(self.rtt.max_rto())
    }

    fn seg_mut(&mut self, seq: u64) -> &mut Seg {
        &mut self.segs[(seq - self.snd_una) as usize]
    }

    pub fn handle_ack(&mut self, now: Time, pkt: &Packet) {
        let ack = pkt.seq.min(self.high_sent);
        let prev_una = self.snd_una;
        let mut delivered = 0u64;
        let mut newest_sample: Option<Time> = None;
        // The most recently sent of the newly delivered packets (rate sampling).
        let mut newest_acked: Option<(Time, u64)> = None;
        let mut note = |t: Time, seq: u64| {
            if newest_acked.is_none_or(|(nt, _)| t >= nt) {
                newest_acked = Some((t, seq));
            }
        };

        // Cumulative acknowledgement.
        if ack > self.snd_una {
            for i in 0..ack - self.snd_una {
                let s = self.segs.pop_front().expect("scoreboard covers [una, high)");
                if s.sacked {
                    self.sacked_out -= 1;
                } else {
                    delivered += 1;
                    note(s.sent_at, prev_una + i);
                    if !s.retx {
                        newest_sample = Some(newest_sample.map_or(s.sent_at, |t| t.max(s.sent_at)));
                    }
                }
                if s.lost {
                    self.lost_out -= 1;
                }
                if s.retx_in_flight {
                    self.retrans_out -= 1;
                }
            }
            self.snd_una = ack;
            if self.cfg.size_packets.is_some_and(|n| ack >= n) && self.stats.completed_at.is_none()
            {
                self.stats.completed_at = Some(now);
            }
            self.snd_nxt = self.snd_nxt.max(ack);
            self.retx_cursor = self.retx_cursor.max(ack);
            self.backoff = 0;
        }

        // Selective acknowledgements.
        let mut newly_sacked = false;
        if self.cfg.recovery == RecoveryMode::Sack {
            let sack = pkt.sack();
            for (s, e) in sack.iter(pkt.seq) {
                let (s, e) = (s.max(self.snd_una), e.min(self.high_sent));
                for seq in s..e {
                    let seg = self.seg_mut(seq);
                    if seg.sacked {
                        continue;
                    }
                    seg.sacked = true;
                    let (was_lost, was_retx_fl, retx, sent_at) =
                        (seg.lost, seg.retx_in_flight, seg.retx, seg.sent_at);
                    seg.lost = false;
                    seg.retx_in_flight = false;
                    self.sacked_out += 1;
                    delivered += 1;
                    note(sent_at, seq);
                    newly_sacked = true;
                    if was_lost {
                        self.lost_out -= 1;
                    }
                    if was_retx_fl {
                        self.retrans_out -= 1;
                    }
                    if !retx {
                        newest_sample = Some(newest_sample.map_or(sent_at, |t| t.max(sent_at)));
                    }
                }
                self.highest_sacked = self.highest_sacked.max(e);
            }
        }

        let rtt = newest_sample.map(|t| now - t);
        if let Some(r) = rtt {
            self.rtt.on_sample(r);
        }
        let was_in_recovery = self.recovery.is_some();
        let mut restart_timer = ack > prev_una;

        match self.cfg.recovery {
            RecoveryMode::Sack => {
                if newly_sacked {
                    self.mark_lost();
                }
                if let Some((xmit, _)) = newest_acked {
                    self.mark_lost_retransmissions(xmit);
                }
                if ack == prev_una && ack < self.high_sent {
                    self.dupacks += 1;
                } else if ack > prev_una {
                    self.dupacks = 0;
                }
                if self.recovery.is_none()
                    && self.lost_out > 0
                    && self.snd_una >= self.recover_guard
                {
                    self.enter_recovery(now);
                }
                if let Some(rec) = self.recovery {
                    if self.snd_una >= rec.recover {
                        self.recovery = None;
                    } else {
                        self.prr_update(delivered);
                    }
                }
            }
            RecoveryMode::NewReno => {
                if ack > prev_una {
                    if let Some(rec) = &mut self.recovery {
                        if ack >= rec.recover {
                            self.recovery = None;
                            self.dupacks = 0;
                        } else {
                            // Partial ACK: retransmit the next hole, deflate, add one back.
                            self.retransmit_now = Some(self.snd_una);
                            self.newly_lost += 1;
                            rec.inflation = (rec.inflation - (ack - prev_una) as i64 + 1).max(0);
                            restart_timer = !rec.partial_seen;
                            rec.partial_seen = true;
                        }
                    } else {
                        self.dupacks = 0;
                    }
                } else if ack == self.snd_una && self.snd_una < self.high_sent {
                    self.dupacks += 1;
                    if let Some(rec) = &mut self.recovery {
                        rec.inflation += 1;
                    } else if self.dupacks == self.cfg.dupack_threshold
                        && self.snd_una >= self.recover_guard
                    {
                        self.enter_recovery(now);
                        self.retransmit_now = Some(self.snd_una);
                        self.newly_lost += 1;
                    }
                }
            }
        }

        // ECN echo: a congestion signal without a loss, once per window (RFC 3168 §6.1.2).
        if self.cfg.ecn
            && pkt.ecn_echo()
            && self.recovery.is_none()
            && self.snd_una >= self.ecn_recover.max(self.recover_guard)
            && self.snd_una > 0
        {
            let in_flight = self.packets_in_flight() * self.cfg.packet_size as u64;
            self.cc.on_congestion_event(now, &CongestionEvent::Loss { bytes_in_flight: in_flight });
            self.ecn_recover = self.high_sent;
            self.cwr_pending = true;
            self.stats.ecn_reductions += 1;
        }

        if delivered > 0 {
            let fb = FeedbackReport {
                acked_packets: delivered as u32,
                acked_bytes: delivered * self.cfg.packet_size as u64,
                rtt,
                srtt: self.rtt.srtt(),
                min_rtt: self.rtt.min_rtt(),
                bytes_in_flight: self.packets_in_flight() * self.cfg.packet_size as u64,
                snd_una: self.snd_una,
                snd_nxt: self.high_sent,
                in_recovery: was_in_recovery || self.recovery.is_some(),
                app_limited: self.lost_out == 0
                    && !self.has_new_data(now, self.snd_nxt)
                    && self.packets_in_flight() < self.cwnd_packets(),
                newest_acked: newest_acked.map(|x| x.1),
                lost_packets: std::mem::take(&mut self.newly_lost),
            };
            self.cc.on_feedback(now, &fb);
        }

        if self.snd_una == self.high_sent {
            self.rto_at = None;
        } else if restart_timer {
            self.rto_at = Some(now + self.rto());
        }
    }

    fn enter_recovery(&mut self, now: Time) {
        let in_flight = self.packets_in_flight() * self.cfg.packet_size as u64;
        self.cc.on_congestion_event(now, &CongestionEvent::Loss { bytes_in_flight: in_flight });
        self.recovery = Some(Recovery {
            recover: self.high_sent,
            inflation: self.cfg.dupack_threshold as i64,
            partial_seen: false,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: (self.high_sent - self.snd_una).max(1),
            sndcnt: 0,
        });
        self.recover_guard = self.high_sent;
        self.stats.fast_retransmits += 1;
    }

    /// RFC 6675 IsLost: an unSACKed packet with at least DupThresh SACKed packets above it.
    fn mark_lost(&mut self) {
        let thresh = self.cfg.dupack_threshold as u64;
        let mut sacked_above = 0u64;
        let top = self.highest_sacked.min(self.high_sent);
        let mut seq = top;
        while seq > self.snd_una {
            seq -= 1;
            let i = (seq - self.snd_una) as usize;
            let seg = &mut self.segs[i];
            if seg.sacked {
                sacked_above += 1;
            } else if sacked_above >= thresh && !seg.lost && !seg.retx_in_flight {
                seg.lost = true;
                self.lost_out += 1;
                self.newly_lost += 1;
                self.retx_cursor = self.retx_cursor.min(seq);
            } else if seg.lost && sacked_above >= thresh && seq < self.retx_cursor {
                break;
            }
        }
    }

    /// Lost retransmissions (RACK's time-based rule, RFC 8985 §6.2, applied to retransmitted
    /// packets, as Linux did before RACK with `tcp_mark_lost_retrans`): a retransmission is
    /// lost once a packet sent more than a reordering window (min RTT / 4) after it has been
    /// delivered. Without this only the retransmission timeout finds them, and a flow whose
    /// retransmissions meet a full queue lives on timeouts.
    fn mark_lost_retransmissions(&mut self, newest_delivered_sent: Time) {
        if self.retrans_out == 0 {
            return;
        }
        let reo_wnd = self.rtt.min_rtt().map_or(TimeDelta::ZERO, |m| m.mul_f64(0.25));
        let horizon = newest_delivered_sent - reo_wnd;
        let mut seq = self.snd_una;
        while seq < self.high_sent && self.retrans_out > 0 {
            let seg = &mut self.segs[(seq - self.snd_una) as usize];
            if seg.retx_in_flight && seg.sent_at < horizon {
                seg.retx_in_flight = false;
                self.retrans_out -= 1;
                self.newly_lost += 1;
                self.retx_cursor = self.retx_cursor.min(seq);
            }
            seq += 1;
        }
    }

    /// RFC 6937 PRR with the slow-start reduction bound.
    fn prr_update(&mut self, delivered: u64) {
        let pipe = self.packets_in_flight();
        let ssthresh = self.cwnd_packets();
        let Some(rec) = &mut self.recovery else { return };
        rec.prr_delivered += delivered;
        let sndcnt = if pipe > ssthresh {
            (rec.prr_delivered * ssthresh).div_ceil(rec.recover_fs) as i64 - rec.prr_out as i64
        } else {
            let limit = (rec.prr_delivered as i64 - rec.prr_out as i64).max(delivered as i64) + 1;
            (ssthresh as i64 - pipe as i64).min(limit)
        };
        rec.sndcnt = sndcnt.max(0) as u64;
    }

    pub fn handle_timeout(&mut self, now: Time) {
        let Some(at) = self.rto_at else { return };
        if at > now {
            return;
        }
        if self.snd_una == self.high_sent {
            self.rto_at = None;
            return;
        }
        self.stats.timeouts += 1;
        self.cc.on_congestion_event(now, &CongestionEvent::Timeout);
        self.backoff += 1;
        self.rto_at = Some(now + self.rto());
        self.recovery = None;
        self.retransmit_now = None;
        self.dupacks = 0;
        self.recover_guard = self.high_sent;
        match self.cfg.recovery {
            RecoveryMode::Sack => {
                self.lost_out = 0;
                self.retrans_out = 0;
                for s in self.segs.iter_mut() {
                    s.retx_in_flight = false;
                    s.lost = !s.sacked;
                    self.lost_out += s.lost as u64;
                }
                self.retx_cursor = self.snd_una;
            }
            RecoveryMode::NewReno => {
                self.snd_nxt = self.snd_una;
                for s in self.segs.iter_mut() {
                    s.retx = true;
                }
            }
        }
    }

    /// The next lost packet not yet retransmitted (advances the cursor past others).
    fn next_lost(&mut self) -> Option<u64> {
        // Retransmitted packets stay marked lost until acknowledged: all lost ones are in
        // flight again when the counts match.
        if self.lost_out == self.retrans_out {
            return None;
        }
        while self.retx_cursor < self.high_sent {
            let s = self.segs[(self.retx_cursor - self.snd_una) as usize];
            if s.lost && !s.retx_in_flight {
                return Some(self.retx_cursor);
            }
            self.retx_cursor += 1;
        }
        None
    }

    /// Chooses what to send next, if the window (or PRR) allows.
    fn next_to_send(&mut self, now: Time) -> Option<u64> {
        match self.cfg.recovery {
            RecoveryMode::Sack => {
                let allowed = match &self.recovery {
                    Some(r) => r.sndcnt > 0,
                    None => self.packets_in_flight() < self.cwnd_packets(),
                };
                if !allowed {
                    return None;
                }
                if let Some(seq) = self.next_lost() {
                    return Some(seq);
                }
                if self.has_new_data(now, self.snd_nxt) {
                    let s = self.snd_nxt;
                    self.snd_nxt += 1;
                    return Some(s);
                }
                self.data_wait = self.has_data;
                None
            }
            RecoveryMode::NewReno => {
                if let Some(seq) = self.retransmit_now.take() {
                    return Some(seq);
                }
                if self.snd_nxt - self.snd_una < self.window_packets() {
                    if self.snd_nxt < self.high_sent || self.has_new_data(now, self.snd_nxt) {
                        let s = self.snd_nxt;
                        self.snd_nxt += 1;
                        return Some(s);
                    }
                    self.data_wait = self.has_data;
                }
                None
            }
        }
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        // The pacing timer is armed only while pacing (not the window) holds a packet back;
        // a closed window waits for an ACK instead of spinning on a past pacing time.
        self.pacing_wait = false;
        self.data_wait = false;
        if !self.started {
            return None;
        }
        if now < self.next_send {
            // (At most one spare wake-up if the window turns out to be closed then.)
            self.pacing_wait = true;
            return None;
        }
        let seq = self.next_to_send(now)?;
        let retransmit = seq < self.high_sent;
        if retransmit {
            let sack_mode = self.cfg.recovery == RecoveryMode::Sack;
            let seg = self.seg_mut(seq);
            seg.sent_at = now;
            seg.retx = true;
            if sack_mode {
                seg.retx_in_flight = true;
                self.retrans_out += 1;
            }
            self.stats.retransmits += 1;
        } else {
            self.high_sent += 1;
            self.segs.push_back(Seg { sent_at: now, ..Default::default() });
            if let Some(rate) = self.cfg.app_rate {
                let waited = now - self.written_at(seq, rate);
                self.stats.app_packets += 1;
                self.stats.app_delay_sum += waited;
                self.stats.app_delay_max = self.stats.app_delay_max.max(waited);
            }
        }
        if let Some(rec) = &mut self.recovery {
            rec.prr_out += 1;
            rec.sndcnt = rec.sndcnt.saturating_sub(1);
        }
        let size = self.cfg.packet_size;
        let mut p = Packet::data(self.flow, seq, size, now);
        p.set_retransmit(retransmit);
        if self.cfg.ecn {
            // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
            if !retransmit {
                p.set_ecn(rtclab_core::Ecn::Ect0);
                p.set_ecn_echo(std::mem::take(&mut self.cwr_pending));
            }
        }
        self.stats.packets_sent += 1;
        self.stats.bytes_sent += size as u64;
        let in_flight = self.packets_in_flight() * size as u64;
        self.cc.on_packet_sent(
            now,
            &SentPacket { seq, size, retransmit, bytes_in_flight: in_flight, probe_cluster: None },
        );
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rto());
        }
        if let Some(rate) = self.cc.target().pacing_rate {
            self.next_send = self.next_send.max(now) + rate.tx_time(size as u64);
        }
        Some(p)
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let pacing = self.pacing_wait.then_some(self.next_send);
        let data = match self.cfg.app_rate {
            Some(r) if self.data_wait => Some(self.written_at(self.snd_nxt, r)),
            _ => None,
        };
        rtclab_core::earliest([self.rto_at, pacing, data])
    }
}

impl Endpoint for TcpSender {
    fn start(&mut self, now: Time) {
        TcpSender::start(self, now)
    }
    fn stop(&mut self) {
        TcpSender::stop(self)
    }
    fn handle_packet(&mut self, now: Time, pkt: &Packet, _payload: Option<Payload>) {
        self.handle_ack(now, pkt)
    }
    fn handle_timeout(&mut self, now: Time) {
        TcpSender::handle_timeout(self, now)
    }
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit> {
        TcpSender::poll_transmit(self, now).map(Transmit::from)
    }
    fn poll_timeout(&self) -> Option<Time> {
        TcpSender::poll_timeout(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_cc::{Reno, RenoConfig};
    use rtclab_core::SackBlocks;

    fn sender(mode: RecoveryMode) -> TcpSender {
        let cc = AnyController::Reno(Reno::new(RenoConfig::default()));
        let cfg = TcpSenderConfig { recovery: mode, ..Default::default() };
        let mut s = TcpSender::new(FlowId(0), cfg, cc);
        s.start(Time::ZERO);
        s
    }

    fn drain(s: &mut TcpSender, now: Time) -> Vec<(u64, bool)> {
        std::iter::from_fn(|| s.poll_transmit(now).map(|p| (p.seq, p.retransmit()))).collect()
    }

    fn ack(seq: u64) -> Packet {
        Packet::ack(FlowId(0), seq, Time::ZERO, 52, Time::ZERO)
    }

    fn sack(seq: u64, blocks: &[(u64, u64)]) -> Packet {
        let mut p = ack(seq);
        p.info = rtclab_core::PacketInfo::Sack(SackBlocks::new(seq, blocks));
        p
    }

    #[test]
    fn app_rate_paces_new_data_and_records_the_send_buffer_wait() {
        let cc = AnyController::Reno(Reno::new(RenoConfig::default()));
        // 1500 B at 1.2 Mbit/s: one packet written every 10 ms.
        let cfg = TcpSenderConfig { app_rate: Some(Rate::from_kbps(1200)), ..Default::default() };
        let mut s = TcpSender::new(FlowId(0), cfg, cc);
        s.start(Time::ZERO);
        assert!(drain(&mut s, Time::ZERO).is_empty());
        assert_eq!(s.poll_timeout(), Some(Time::from_millis(10)), "wakes when packet 0 is written");
        assert_eq!(drain(&mut s, Time::from_millis(35)), vec![(0, false), (1, false), (2, false)]);
        assert_eq!(s.stats.app_packets, 3);
        assert_eq!(s.stats.app_delay_max, TimeDelta::from_millis(25));
        assert_eq!(s.stats.app_delay_sum, TimeDelta::from_millis(25 + 15 + 5));
        assert_eq!(s.poll_timeout(), Some(Time::from_millis(40)).min(s.rto_at));
        // The buffer is empty and the window open: the ACK is application-limited, Reno's
        // window does not grow.
        let w = s.window_packets();
        s.handle_ack(Time::from_millis(39), &ack(3));
        assert_eq!(s.window_packets(), w);
    }

    #[test]
    fn initial_window_then_slow_start() {
        for mode in [RecoveryMode::Sack, RecoveryMode::NewReno] {
            let mut s = sender(mode);
            assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
            s.handle_ack(Time::from_millis(10), &ack(1));
            // One packet acked: window 11, 9 in flight -> 2 new packets.
            assert_eq!(drain(&mut s, Time::from_millis(10)), vec![(10, false), (11, false)]);
        }
    }

    #[test]
    fn newreno_fast_retransmit_and_partial_ack() {
        let mut s = sender(RecoveryMode::NewReno);
        drain(&mut s, Time::ZERO); // 0..10 in flight
        let t = Time::from_millis(10);
        s.handle_ack(t, &ack(2)); // 0,1 acked; window 12, sends 10..14
        assert_eq!(drain(&mut s, t).len(), 4);
        // Packets 2 and 5 lost: dup ACKs for 2 from packets 3,4.
        for _ in 0..3 {
            s.handle_ack(t, &ack(2));
        }
        assert!(s.in_recovery());
        assert_eq!(s.stats.fast_retransmits, 1);
        assert_eq!(drain(&mut s, t)[0], (2, true));
        // Partial ACK up to 5 (the next hole): retransmit 5 at once.
        s.handle_ack(t, &ack(5));
        assert!(s.in_recovery());
        assert_eq!(drain(&mut s, t)[0], (5, true));
        // Full ACK beyond `recover` (14) ends recovery with cwnd = ssthresh = 6.
        s.handle_ack(t, &ack(14));
        assert!(!s.in_recovery());
        assert_eq!(s.window_packets(), 6);
    }

    #[test]
    fn sack_recovers_several_holes_in_one_round_trip() {
        let mut s = sender(RecoveryMode::Sack);
        drain(&mut s, Time::ZERO); // 0..10
        let t = Time::from_millis(10);
        // 1, 4 and 6 lost; SACKs arrive for the others.
        s.handle_ack(t, &ack(1));
        drain(&mut s, t); // window 11 -> sends 10, 11
        s.handle_ack(t, &sack(1, &[(2, 4)]));
        assert!(!s.in_recovery(), "two SACKed above 1 is not yet DupThresh");
        s.handle_ack(t, &sack(1, &[(5, 6), (2, 4)]));
        assert!(s.in_recovery(), "2, 3 and 5 SACKed: 1 is lost");
        s.handle_ack(t, &sack(1, &[(7, 10), (5, 6), (2, 4)]));
        // 1, 4 and 6 all have >= 3 SACKed packets above them: all marked lost at once.
        let sent = drain(&mut s, t);
        let retx: Vec<u64> = sent.iter().filter(|x| x.1).map(|x| x.0).collect();
        assert!(!retx.is_empty() && retx[0] == 1, "{sent:?}");
        // More SACKs (for 10, 11) release more sends under PRR; every hole gets resent.
        s.handle_ack(t, &sack(1, &[(7, 12), (5, 6), (2, 4)]));
        let mut all: Vec<u64> = retx;
        all.extend(drain(&mut s, t).iter().filter(|x| x.1).map(|x| x.0));
        s.handle_ack(t, &sack(1, &[(7, 12), (5, 6), (2, 4)]));
        all.extend(drain(&mut s, t).iter().filter(|x| x.1).map(|x| x.0));
        assert_eq!(all, vec![1, 4, 6]);
        assert_eq!(s.stats.timeouts, 0);
        s.handle_ack(t, &ack(12));
        assert!(!s.in_recovery());
        // The first SACK delivered 2 packets in slow start (11 -> 13); recovery halved 13 -> 6.
        assert_eq!(s.window_packets(), 6);
    }

    #[test]
    fn timeout_backs_off_and_resends_from_una() {
        for mode in [RecoveryMode::Sack, RecoveryMode::NewReno] {
            let mut s = sender(mode);
            drain(&mut s, Time::ZERO);
            let rto_at = s.poll_timeout().unwrap();
            assert_eq!(rto_at, Time::from_secs(1));
            s.handle_timeout(rto_at);
            assert_eq!(s.stats.timeouts, 1);
            assert_eq!(drain(&mut s, rto_at), vec![(0, true)]);
            assert_eq!(s.poll_timeout(), Some(rto_at + TimeDelta::from_secs(2)));
            // A cumulative ACK covering everything the receiver buffered jumps forward.
            s.handle_ack(rto_at + TimeDelta::from_millis(50), &ack(10));
            assert_eq!(s.packets_in_flight(), 0);
            assert_eq!(s.poll_timeout(), None);
        }
    }
}
