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
//! - RACK-TLP (RFC 8985, on by default in SACK mode, as in Linux): a packet is lost once a
//!   packet sent after it is delivered and a reordering window has passed since (RACK.rtt +
//!   reo_wnd after its transmission; reo_wnd = min RTT / 4, 0 in recovery or with DupThresh
//!   packets SACKed while no reordering has been seen; a reorder timer for the rest); this
//!   replaces DupThresh and the retransmission rule above. Tail loss probe: 2·SRTT (+200 ms
//!   with one packet in flight) after the last new data or ACK, no SACKed data and not in
//!   recovery, send one new packet or resend the highest one, then re-arm the RTO; a probe
//!   that repairs a loss (its ACK carries no DSACK) reduces the window once.
//! - F-RTO (RFC 5682 §3, the SACK-enhanced version, as Linux `tcp_process_loss`): after a
//!   timeout, an ACK that advances the window sends new data instead of retransmissions; an
//!   ACK that (S)ACKs a packet never retransmitted proves the timeout spurious and undoes it
//!   (the controller is restored to its state before the timeout and the loss marks are
//!   cleared; Linux restores cwnd and ssthresh only); a duplicate ACK or SACK after the new
//!   data makes the timeout real.
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
//! samples), and the time each packet waited in the send buffer is recorded. With `video` set
//! the application is a video encoder writing frames into the socket (`tcp_video.rs`, the
//! Zhuge TCP experiments' sender): new data is what it has written, it runs on its own timer,
//! and the last packet of each frame carries the frame's capture time for the receiver.
//!
//! The congestion controller decides the window (`target().cwnd_bytes`) and may ask for
//! pacing; this file owns loss detection, recovery and the ACK clock, and feeds the
//! controller what each ACK delivered.

use rtclab_cc::{AnyController, CongestionController, CongestionEvent, FeedbackReport, SentPacket};
use rtclab_core::{Endpoint, FlowId, Packet, Payload, Rate, Time, TimeDelta, Transmit};
use std::collections::VecDeque;

use crate::rtt::RttEstimator;
use crate::tcp_video::{TcpVideoApp, TcpVideoConfig};
use rtclab_core::ranges::{insert_range, uncovered};

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
    /// Video over TCP: an encoder writes frames and follows the socket (`tcp_video.rs`).
    pub video: Option<TcpVideoConfig>,
    /// ECN (RFC 3168): data packets are ECT(0); an ACK with ECE is a congestion signal,
    /// answered at most once per window of data with the controller's loss response and CWR
    /// on the next new packet — no retransmission.
    pub ecn: bool,
    /// ABC (Goyal et al., NSDI'20; the controller `abc`): data packets leave marked accelerate
    /// (ECT(1)) and each ACK's echoed mark (accelerate or brake) reaches the controller.
    pub abc: bool,
    /// Accurate ECN for an L4S controller (RFC 9331 §4.2; draft-ietf-tcpm-accurate-ecn): every
    /// data packet, retransmissions included (ECN++), leaves ECT(1); each ACK's ACE field
    /// (CE packets received, modulo 8) gives the newly marked packets, which reach the
    /// controller in `FeedbackReport::ce_packets`. The controller answers CE itself (no
    /// RFC 3168 halving, no CWR flag).
    pub accecn: bool,
    /// SACK mode: RACK time-based loss detection (RFC 8985) instead of DupThresh.
    pub rack: bool,
    /// SACK mode: tail loss probes (RFC 8985 §7).
    pub tlp: bool,
    /// SACK mode: F-RTO spurious-timeout detection and undo (RFC 5682).
    pub frto: bool,
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
            abc: false,
            accecn: false,
            app_rate: None,
            size_packets: None,
            video: None,
            rack: true,
            tlp: true,
            frto: true,
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
    /// AccECN: data packets the receiver reported CE-marked.
    pub ce_reported: u64,
    /// Application-limited senders: new packets sent, and the sum and maximum of the time
    /// each waited in the send buffer (written by the application → first sent).
    pub app_packets: u64,
    pub app_delay_sum: TimeDelta,
    pub app_delay_max: TimeDelta,
    /// Finite transfers: when the last packet was acknowledged.
    pub completed_at: Option<Time>,
    /// Tail loss probes sent.
    pub tail_loss_probes: u64,
    /// Timeouts that F-RTO found spurious and undid.
    pub spurious_timeouts: u64,
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

/// A tail loss probe in flight (RFC 8985 `TLP.end_seq`, `TLP.is_retrans`).
#[derive(Clone, Copy, Debug)]
struct Tlp {
    end: u64,
    retx: bool,
}

/// F-RTO after a timeout: `high` is `SND.NXT` at the timeout (or at step 2b), `new_data`
/// asks for new data instead of retransmissions, `prior` is the controller before the timeout.
struct Frto {
    high: u64,
    new_data: bool,
    prior: Option<AnyController>,
}

pub struct TcpSender {
    flow: FlowId,
    cfg: TcpSenderConfig,
    cc: AnyController,
    /// The controller's declared `owns_recovery_window` (no PRR), read once.
    cc_owns_recovery: bool,
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
    /// ABC marks echoed since the last feedback report: (accelerates, brakes).
    abc_marks: (u32, u32),
    /// AccECN: the last ACE field read, and the CE packets it reported since the last report.
    last_ace: u8,
    ce_marks: u32,
    /// Sequence ranges [start, end) already marked SACKed (sorted, disjoint; segments are never
    /// un-SACKed): each ACK walks only what its blocks add, where a block repeated on every ACK
    /// of a long recovery with a large window would cost its whole length each time.
    sacked_ranges: Vec<(u64, u64)>,
    /// NewReno: a retransmission that bypasses the window.
    retransmit_now: Option<u64>,
    rtt: RttEstimator,
    rto_at: Option<Time>,
    backoff: u32,
    next_send: Time,
    pacing_wait: bool,
    /// Packets declared lost since the last report to the controller.
    newly_lost: u32,
    /// RACK: the most recently sent delivered packet (send time, seq), its RTT, and whether a
    /// packet marked lost was delivered without a retransmission (reordering).
    rack: Option<(Time, u64)>,
    rack_rtt: TimeDelta,
    reordering_seen: bool,
    /// Transmissions in send order (entries go stale when acknowledged, SACKed, lost or
    /// sent again; pruned lazily from the front).
    rack_queue: VecDeque<(Time, u64)>,
    reo_at: Option<Time>,
    /// TLP: the probe timer, the probe in flight, a probe waiting to be sent (None = new data).
    pto_at: Option<Time>,
    tlp: Option<Tlp>,
    tlp_send: Option<Option<u64>>,
    /// RTO recovery lasts until snd_una reaches this.
    loss_high: u64,
    frto: Option<Frto>,
    started: bool,
    has_data: bool,
    /// When the application began writing (app-rate senders).
    app_start: Time,
    /// The window is open but the application has not written the next packet yet.
    data_wait: bool,
    /// Video over TCP: the encoder and its socket writes (boxed: a bulk sender's state stays
    /// small, which the many-flow runs notice).
    video: Option<Box<TcpVideoApp>>,
    /// When the last data packet left (Linux `lsndtime`): the idle time `on_tx_start` reports.
    last_send: Option<Time>,
    pub stats: TcpSenderStats,
}

impl TcpSender {
    pub fn new(flow: FlowId, cfg: TcpSenderConfig, cc: AnyController) -> Self {
        TcpSender {
            cc_owns_recovery: cc.owns_recovery_window(),
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
            abc_marks: (0, 0),
            last_ace: 0,
            ce_marks: 0,
            sacked_ranges: Vec::new(),
            retransmit_now: None,
            rtt: RttEstimator::new(cfg.initial_rto, cfg.min_rto, cfg.max_rto),
            rto_at: None,
            backoff: 0,
            next_send: Time::ZERO,
            pacing_wait: false,
            newly_lost: 0,
            rack: None,
            rack_rtt: TimeDelta::ZERO,
            reordering_seen: false,
            rack_queue: VecDeque::new(),
            reo_at: None,
            pto_at: None,
            tlp: None,
            tlp_send: None,
            loss_high: 0,
            frto: None,
            started: false,
            has_data: false,
            app_start: Time::ZERO,
            data_wait: false,
            video: cfg.video.map(|v| Box::new(TcpVideoApp::new(v, cfg.packet_size))),
            last_send: None,
            stats: TcpSenderStats::default(),
        }
    }

    /// The application starts its transfer: unbounded bulk, or a stream at `app_rate`.
    pub fn start(&mut self, now: Time) {
        self.started = true;
        self.has_data = true;
        self.app_start = now;
        if let Some(v) = &mut self.video {
            v.start(now);
            v.on_timer(now, self.snd_una, self.high_sent);
        }
    }

    /// The video application, if this sender carries video over TCP.
    pub fn video(&self) -> Option<&TcpVideoApp> {
        self.video.as_deref()
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
            && self.video.as_ref().is_none_or(|v| seq < v.written())
    }

    /// The application stops offering new data (outstanding data is still recovered).
    pub fn stop(&mut self) {
        self.has_data = false;
        if let Some(v) = &mut self.video {
            v.stop();
        }
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
        // RACK: the most recently sent newly delivered packet (a retransmission acknowledged
        // sooner than min RTT may be its original's ACK: not used, RFC 8985 §6.2 step 2), and
        // whether a packet never retransmitted was delivered (F-RTO) after being marked lost
        // (reordering).
        let min_rtt = self.rtt.min_rtt();
        let mut rack_new: Option<(Time, u64)> = None;
        let mut orig_delivered: Option<u64> = None;
        let mut reordered = false;
        let mut rack_see = |t: Time, seq: u64, retx: bool, was_lost: bool| {
            if !(retx && min_rtt.is_some_and(|m| now - t < m))
                && rack_new.is_none_or(|r| (t, seq) > r)
            {
                rack_new = Some((t, seq));
            }
            if !retx {
                orig_delivered = Some(orig_delivered.map_or(seq, |o: u64| o.min(seq)));
            }
            reordered |= !retx && was_lost;
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
                    rack_see(s.sent_at, prev_una + i, s.retx, s.lost);
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
            let una = self.snd_una;
            self.sacked_ranges.retain_mut(|r| {
                r.0 = r.0.max(una);
                r.0 < r.1
            });
            for (s, e) in sack.iter(pkt.seq) {
                let (s, e) = (s.max(self.snd_una), e.min(self.high_sent));
                if s >= e {
                    continue;
                }
                let fresh = uncovered(&self.sacked_ranges, s, e);
                insert_range(&mut self.sacked_ranges, s, e);
                for seq in fresh.iter().flat_map(|&(a, b)| a..b) {
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
                    rack_see(sent_at, seq, retx, was_lost);
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
        if let Some(r) = rack_new {
            if self.rack.is_none_or(|old| r > old) {
                self.rack = Some(r);
                self.rack_rtt = now - r.0;
            }
        }
        self.reordering_seen |= reordered;
        let was_in_recovery = self.recovery.is_some();
        let mut restart_timer = ack > prev_una;

        match self.cfg.recovery {
            RecoveryMode::Sack => {
                let dupack = ack == prev_una && ack < self.high_sent;
                if dupack {
                    self.dupacks += 1;
                } else if ack > prev_una {
                    self.dupacks = 0;
                }
                self.process_frto(ack > prev_una, dupack || newly_sacked, orig_delivered);
                self.process_tlp_ack(now, pkt.dsack());
                if self.cfg.rack {
                    self.rack_detect(now);
                } else {
                    if newly_sacked {
                        self.mark_lost();
                    }
                    if let Some((xmit, _)) = newest_acked {
                        self.mark_lost_retransmissions(xmit);
                    }
                }
                if self.recovery_due() {
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

        if self.cfg.abc {
            match pkt.abc_echo() {
                Some(true) => self.abc_marks.0 += 1,
                Some(false) => self.abc_marks.1 += 1,
                None => {}
            }
        }

        if self.cfg.accecn {
            // ACKs arrive in order here, each covering at most a few packets: the three-bit
            // difference is the count (the receiver ACKs before it could wrap).
            let ace = pkt.ace();
            let newly = (ace.wrapping_sub(self.last_ace) & 0b111) as u32;
            self.last_ace = ace;
            self.ce_marks += newly;
            self.stats.ce_reported += newly as u64;
        }

        // ECN echo: a congestion signal without a loss, once per window (RFC 3168 §6.1.2).
        if self.cfg.ecn
            && pkt.ecn_echo()
            && self.recovery.is_none()
            && self.snd_una >= self.ecn_recover.max(self.recover_guard)
            && self.snd_una > 0
        {
            self.loss_response(now);
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
                accelerates: self.abc_marks.0,
                brakes: self.abc_marks.1,
                ce_packets: std::mem::take(&mut self.ce_marks),
            };
            self.abc_marks = (0, 0);
            self.cc.on_feedback(now, &fb);
        }

        if self.snd_una == self.high_sent {
            self.rto_at = None;
        } else if restart_timer {
            self.rto_at = Some(now + self.rto());
        }
        if ack > prev_una {
            self.arm_pto(now);
        }
    }

    /// RFC 8985 §6.2: the reordering window (0 while no reordering has been seen and the
    /// sender is recovering or has DupThresh packets SACKed; else min RTT / 4, at most SRTT).
    fn reo_wnd(&self) -> TimeDelta {
        if !self.reordering_seen
            && (self.recovery.is_some()
                || self.snd_una < self.loss_high
                || self.sacked_out >= self.cfg.dupack_threshold as u64)
        {
            return TimeDelta::ZERO;
        }
        let quarter = self.rtt.min_rtt().map_or(TimeDelta::ZERO, |m| m.mul_f64(0.25));
        self.rtt.srtt().map_or(quarter, |s| quarter.min(s))
    }

    /// A transmission-order entry that no longer stands for a packet in flight.
    fn rack_stale(&self, t: Time, seq: u64) -> bool {
        if seq < self.snd_una || seq >= self.high_sent {
            return true;
        }
        let s = &self.segs[(seq - self.snd_una) as usize];
        s.sacked || s.sent_at != t || (s.lost && !s.retx_in_flight)
    }

    /// RFC 8985 §6.2 step 5 (`RACK_detect_loss`): every packet in flight sent before the
    /// most recently sent delivered one is lost once RACK.rtt + reo_wnd has passed since it
    /// was sent; the reorder timer waits for the first of the others.
    fn rack_detect(&mut self, now: Time) {
        self.reo_at = None;
        let Some(rack) = self.rack else { return };
        let reo = self.reo_wnd();
        let mut wait: Option<TimeDelta> = None;
        let mut i = 0;
        while i < self.rack_queue.len() {
            let (t, seq) = self.rack_queue[i];
            if (t, seq) >= rack {
                break;
            }
            if !self.rack_stale(t, seq) {
                let remaining = t + self.rack_rtt + reo - now;
                if remaining <= TimeDelta::ZERO {
                    self.rack_mark_lost(seq);
                } else {
                    wait = Some(wait.map_or(remaining, |w| w.max(remaining)));
                }
            }
            i += 1;
        }
        while self.rack_queue.front().is_some_and(|&(t, seq)| self.rack_stale(t, seq)) {
            self.rack_queue.pop_front();
        }
        self.reo_at = wait.map(|w| now + w);
    }

    fn rack_mark_lost(&mut self, seq: u64) {
        let i = (seq - self.snd_una) as usize;
        let seg = &mut self.segs[i];
        if seg.retx_in_flight {
            seg.retx_in_flight = false;
            self.retrans_out -= 1;
        }
        if !seg.lost {
            seg.lost = true;
            self.lost_out += 1;
        }
        self.newly_lost += 1;
        self.retx_cursor = self.retx_cursor.min(seq);
    }

    /// RFC 8985 §7.2: arm the probe timeout after new data or an ACK that advances the window,
    /// unless recovering or holding SACKed data (a probe is for the tail).
    fn arm_pto(&mut self, now: Time) {
        self.pto_at = None;
        if !self.cfg.tlp
            || self.cfg.recovery != RecoveryMode::Sack
            || self.recovery.is_some()
            || self.snd_una < self.loss_high
            || self.sacked_out > 0
            || self.tlp.is_some()
            || self.snd_una == self.high_sent
        {
            return;
        }
        let pto = match self.rtt.srtt() {
            Some(srtt) => {
                let extra = if self.high_sent - self.snd_una == 1 {
                    TimeDelta::from_millis(200)
                } else {
                    TimeDelta::ZERO
                };
                srtt.mul_f64(2.0) + extra
            }
            None => TimeDelta::from_secs(1),
        };
        let at = now + pto;
        self.pto_at = Some(self.rto_at.map_or(at, |r| at.min(r)));
    }

    /// RFC 8985 §7.3: the probe is one new packet if there is one, else the highest sent.
    fn fire_tlp(&mut self, now: Time) {
        self.pto_at = None;
        let probe = if self.has_new_data(now, self.snd_nxt) {
            Some(None)
        } else {
            let top = self.high_sent - 1;
            (self.high_sent > self.snd_una && !self.segs[(top - self.snd_una) as usize].sacked)
                .then_some(Some(top))
        };
        if let Some(p) = probe {
            self.tlp_send = Some(p);
            self.stats.tail_loss_probes += 1;
        }
        self.rto_at = Some(now + self.rto());
    }

    /// RFC 8985 §7.4: a retransmitted probe that repaired a loss (no D-SACK for it, and an
    /// ACK beyond it) is a congestion signal, answered once with the controller's loss
    /// response; a D-SACK shows it redundant.
    fn process_tlp_ack(&mut self, now: Time, dsack: bool) {
        let Some(t) = self.tlp else { return };
        if !t.retx && self.snd_una >= t.end || t.retx && dsack {
            self.tlp = None;
        } else if t.retx && self.snd_una > t.end {
            // Beyond the probe: an ACK of exactly its end may be the original's, so wait
            // for more (or for the probe's D-SACK).
            self.tlp = None;
            if self.recovery.is_none() {
                self.loss_response(now);
            }
        }
    }

    /// F-RTO after a timeout (Linux `tcp_process_loss`, RFC 5682 §3): `advanced` = the
    /// cumulative ACK moved; `dup_or_sack` = a duplicate ACK or new SACK information;
    /// `orig` = the lowest packet never retransmitted that this ACK (S)ACKed: one sent before
    /// the timeout (or before step 2b) proves it spurious (Linux `FLAG_ORIG_SACK_ACKED`).
    fn process_frto(&mut self, advanced: bool, dup_or_sack: bool, orig: Option<u64>) {
        if self.snd_una >= self.loss_high {
            self.frto = None;
        }
        let Some(fr) = &mut self.frto else { return };
        if orig.is_some_and(|q| q < fr.high) {
            // Step 3b: not everything was lost, the timeout was spurious: undo it.
            let prior = fr.prior.take();
            self.frto = None;
            if let Some(prior) = prior {
                self.cc = prior;
            }
            for seg in self.segs.iter_mut() {
                seg.lost = false;
            }
            self.lost_out = 0;
            self.loss_high = self.snd_una;
            self.recover_guard = self.snd_una;
            self.backoff = 0;
            self.stats.spurious_timeouts += 1;
        } else if self.high_sent > fr.high {
            // Step 3a: after new data, a duplicate ACK or SACK means the loss was real.
            if dup_or_sack {
                self.frto = None;
            }
        } else if advanced {
            // Step 2b: send new data instead of retransmissions, if there is any.
            fr.high = self.high_sent;
            fr.new_data = true;
        }
    }

    /// The controller's response to a congestion signal (a loss episode, an ECN echo, a
    /// repaired tail loss).
    fn loss_response(&mut self, now: Time) {
        let in_flight = self.packets_in_flight() * self.cfg.packet_size as u64;
        self.cc.on_congestion_event(now, &CongestionEvent::Loss { bytes_in_flight: in_flight });
    }

    /// SACK mode: something is lost, no recovery episode runs and the last one (or the
    /// timeout) is over.
    fn recovery_due(&self) -> bool {
        self.recovery.is_none() && self.lost_out > 0 && self.snd_una >= self.recover_guard
    }

    fn enter_recovery(&mut self, now: Time) {
        self.loss_response(now);
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
        if let Some(v) = &mut self.video {
            if v.poll_timeout().is_some_and(|t| t <= now) {
                v.on_timer(now, self.snd_una, self.high_sent);
            }
        }
        if self.reo_at.is_some_and(|t| t <= now) {
            self.rack_detect(now);
            if self.recovery_due() {
                self.enter_recovery(now);
                // As Linux's reorder timeout: one delivered packet's worth of PRR to send on.
                self.prr_update(1);
            }
        }
        if self.pto_at.is_some_and(|t| t <= now) {
            self.fire_tlp(now);
            return;
        }
        let Some(at) = self.rto_at else { return };
        if at > now {
            return;
        }
        if self.snd_una == self.high_sent {
            self.rto_at = None;
            return;
        }
        self.stats.timeouts += 1;
        if self.cfg.frto && self.cfg.recovery == RecoveryMode::Sack {
            // The controller as it was before this loss episode, for an undo.
            match &mut self.frto {
                Some(fr) => {
                    fr.high = self.high_sent;
                    fr.new_data = false;
                }
                None => {
                    self.frto = Some(Frto {
                        high: self.high_sent,
                        new_data: false,
                        prior: self.cc.snapshot(),
                    })
                }
            }
        }
        self.loss_high = self.high_sent;
        self.pto_at = None;
        self.reo_at = None;
        self.tlp = None;
        self.tlp_send = None;
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
        if self.lost_out == 0 {
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
                    Some(r) if !self.cc_owns_recovery => r.sndcnt > 0,
                    _ => self.packets_in_flight() < self.cwnd_packets(),
                };
                if !allowed {
                    return None;
                }
                if self.frto.as_ref().is_some_and(|f| f.new_data) {
                    if self.has_new_data(now, self.snd_nxt) {
                        let s = self.snd_nxt;
                        self.snd_nxt += 1;
                        return Some(s);
                    }
                    // Nothing new to send: conventional recovery (RFC 5682 step 2b).
                    self.frto = None;
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
        if let Some(probe) = self.tlp_send.take() {
            let seq = match probe {
                Some(seq) => seq,
                None => {
                    let s = self.snd_nxt;
                    self.snd_nxt += 1;
                    s
                }
            };
            let p = self.transmit(now, seq);
            self.tlp = Some(Tlp { end: self.high_sent, retx: probe.is_some() });
            return Some(p);
        }
        if now < self.next_send {
            // (At most one spare wake-up if the window turns out to be closed then.)
            self.pacing_wait = true;
            return None;
        }
        let seq = self.next_to_send(now)?;
        let p = self.transmit(now, seq);
        if !p.retransmit() {
            self.arm_pto(now);
        }
        Some(p)
    }

    /// Sends packet `seq` (new or a retransmission) and does the bookkeeping.
    fn transmit(&mut self, now: Time, seq: u64) -> Packet {
        // Linux `tcp_event_data_sent`: data leaving with nothing in flight is CA_EVENT_TX_START
        // (CUBIC shifts its epoch by the idle time, Vegas starts over), then `lsndtime`.
        if self.packets_in_flight() == 0 {
            if let Some(last) = self.last_send {
                self.cc.on_tx_start(now, now - last);
            }
        }
        self.last_send = Some(now);
        let retransmit = seq < self.high_sent;
        if retransmit {
            let sack_mode = self.cfg.recovery == RecoveryMode::Sack;
            let seg = self.seg_mut(seq);
            seg.sent_at = now;
            seg.retx = true;
            if sack_mode && !seg.retx_in_flight {
                seg.retx_in_flight = true;
                self.retrans_out += 1;
            }
            self.stats.retransmits += 1;
            if sack_mode && self.cfg.rack && seq == self.snd_una && self.rto_at.is_some() {
                // Linux `tcp_xmit_retransmit_queue`: resending the head restarts the timer,
                // so the retransmission gets a whole RTO to be acknowledged.
                self.rto_at = Some(now + self.rto());
            }
        } else {
            self.high_sent += 1;
            self.segs.push_back(Seg { sent_at: now, ..Default::default() });
            let written = match (&mut self.video, self.cfg.app_rate) {
                (Some(v), _) => {
                    v.track(now, v.written().saturating_sub(self.high_sent));
                    v.written_at(seq)
                }
                (None, Some(rate)) => Some(self.written_at(seq, rate)),
                (None, None) => None,
            };
            if let Some(w) = written {
                let waited = now - w;
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
        if let Some(capture) = self.video.as_ref().and_then(|v| v.frame_end(seq)) {
            p.info = rtclab_core::PacketInfo::FrameEnd;
            p.echo = capture;
        }
        if self.cfg.abc || self.cfg.accecn {
            // Every ABC data packet leaves as an accelerate; an ABC router may make it a brake.
            // An L4S sender's packets are ECT(1), the L4S identifier (RFC 9331 §4.1).
            p.set_ecn(rtclab_core::Ecn::Ect1);
        } else if self.cfg.ecn {
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
            &SentPacket {
                seq,
                size,
                retransmit,
                bytes_in_flight: in_flight,
                probe_cluster: None,
                queued_bytes: 0,
            },
        );
        if self.rto_at.is_none() {
            self.rto_at = Some(now + self.rto());
        }
        if let Some(rate) = self.cc.target().pacing_rate {
            self.next_send = self.next_send.max(now) + rate.tx_time(size as u64);
        }
        if self.cfg.rack && self.cfg.recovery == RecoveryMode::Sack {
            self.rack_queue.push_back((now, seq));
        }
        p
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        let pacing = self.pacing_wait.then_some(self.next_send);
        let data = match self.cfg.app_rate {
            Some(r) if self.data_wait => Some(self.written_at(self.snd_nxt, r)),
            _ => None,
        };
        let video = self.video.as_ref().and_then(|v| v.poll_timeout());
        rtclab_core::earliest([self.rto_at, pacing, data, self.reo_at, self.pto_at, video])
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
        sender_with(TcpSenderConfig { recovery: mode, ..Default::default() })
    }

    /// RFC 6675 alone: DupThresh loss marking, no probes, no F-RTO.
    fn classic(mode: RecoveryMode) -> TcpSender {
        sender_with(TcpSenderConfig {
            recovery: mode,
            rack: false,
            tlp: false,
            frto: false,
            ..Default::default()
        })
    }

    fn sender_with(cfg: TcpSenderConfig) -> TcpSender {
        let cc = AnyController::Reno(Reno::new(RenoConfig::default()));
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

    /// PRR paces a window-cutting controller through recovery; a controller that keeps its
    /// window for a loss (Copa, BBR) owns it: the sender fills `cwnd − pipe` at once.
    #[test]
    fn copa_owns_its_window_in_recovery_where_reno_gets_prr() {
        let sent_after_loss = |cc: AnyController| {
            let mut s = TcpSender::new(FlowId(0), TcpSenderConfig::default(), cc);
            s.start(Time::ZERO);
            assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
            // 0 lost, 1-4 delivered: loss detected, recovery starts.
            let t = Time::from_millis(100);
            s.handle_ack(t, &sack(0, &[(1, 5)]));
            assert!(s.recovery.is_some());
            let pipe = s.packets_in_flight();
            // Copa paces: give it 100 ms (no ACK comes back, no timer fires that soon).
            let out: usize =
                (0..100).map(|ms| drain(&mut s, t + TimeDelta::from_millis(ms)).len()).sum();
            (out as u64, pipe, s.cwnd_packets())
        };
        let (reno, _, _) = sent_after_loss(AnyController::Reno(Reno::new(RenoConfig::default())));
        let copa_cc =
            AnyController::Copa(Box::new(rtclab_cc::Copa::new(rtclab_cc::CopaConfig::default())));
        let (copa, pipe, cwnd) = sent_after_loss(copa_cc);
        // Reno: halved to 5 with 5 in flight, PRR holds it (pipe ≥ ssthresh).
        assert!(reno <= 2, "{reno}");
        // Copa: everything its window allows.
        assert!(copa > reno, "{copa} vs {reno}");
        assert_eq!(pipe + copa, cwnd.max(pipe), "pipe {pipe} + sent {copa} vs cwnd {cwnd}");
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

    /// Linux `tcp_event_data_sent`: data sent with nothing in flight tells the controller
    /// CA_EVENT_TX_START with the time since the last data left (`lsndtime`).
    #[test]
    fn sending_after_an_idle_spell_tells_the_controller_how_long_it_was() {
        use std::sync::{Arc, Mutex};
        struct Recorder(Reno, Arc<Mutex<Vec<(Time, TimeDelta)>>>);
        impl rtclab_cc::CongestionController for Recorder {
            fn name(&self) -> &'static str {
                "recorder"
            }
            fn on_feedback(&mut self, now: Time, fb: &rtclab_cc::FeedbackReport) {
                self.0.on_feedback(now, fb)
            }
            fn on_congestion_event(&mut self, now: Time, ev: &rtclab_cc::CongestionEvent) {
                self.0.on_congestion_event(now, ev)
            }
            fn on_tx_start(&mut self, now: Time, idle: TimeDelta) {
                self.1.lock().unwrap().push((now, idle));
            }
            fn target(&self) -> rtclab_cc::CcTarget {
                self.0.target()
            }
            fn metrics(&self) -> rtclab_cc::CcMetrics {
                self.0.metrics()
            }
        }
        let seen = Arc::new(Mutex::new(Vec::new()));
        let cc = AnyController::Custom(Box::new(Recorder(
            Reno::new(RenoConfig::default()),
            Arc::clone(&seen),
        )));
        // 1500 B at 1.2 Mbit/s: a packet written every 10 ms, each acknowledged before the next.
        let cfg = TcpSenderConfig { app_rate: Some(Rate::from_kbps(1200)), ..Default::default() };
        let mut s = TcpSender::new(FlowId(0), cfg, cc);
        s.start(Time::ZERO);
        assert_eq!(drain(&mut s, Time::from_millis(10)), vec![(0, false)]);
        assert!(seen.lock().unwrap().is_empty(), "the first packet follows no idle spell");
        s.handle_ack(Time::from_millis(15), &ack(1));
        assert_eq!(drain(&mut s, Time::from_millis(20)), vec![(1, false)]);
        assert_eq!(
            *seen.lock().unwrap(),
            vec![(Time::from_millis(20), TimeDelta::from_millis(10))]
        );
        // With a packet still in flight, sending is not a restart.
        assert_eq!(drain(&mut s, Time::from_millis(30)), vec![(2, false)]);
        assert_eq!(seen.lock().unwrap().len(), 1);
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
        let mut s = classic(RecoveryMode::Sack);
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
            let mut s = classic(mode);
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

    /// Sends `0..n`, then ACKs each packet in `delivered` one by one at 100 ms (one SACK block
    /// per ACK), so the sender has an RTT of 100 ms.
    fn deliver(s: &mut TcpSender, t: Time, delivered: &[u64]) {
        let mut una = s.snd_una;
        let mut held: Vec<(u64, u64)> = Vec::new();
        for &q in delivered {
            if q == una {
                una += 1;
                while let Some(i) = held.iter().position(|r| r.0 == una) {
                    una = held.remove(i).1;
                }
            } else {
                match held.iter_mut().find(|r| r.1 == q) {
                    Some(r) => r.1 = q + 1,
                    None => held.push((q, q + 1)),
                }
            }
            let blocks: Vec<(u64, u64)> = held.iter().rev().take(3).copied().collect();
            s.handle_ack(t, &if blocks.is_empty() { ack(una) } else { sack(una, &blocks) });
        }
    }

    #[test]
    fn rack_marks_a_loss_with_one_packet_after_it_once_the_reordering_window_passes() {
        let mut s = sender(RecoveryMode::Sack);
        assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
        // 0..8 and 9 delivered, 8 lost: only one packet SACKed above it (DupThresh would wait
        // for the RTO).
        let t = Time::from_millis(100);
        deliver(&mut s, t, &[0, 1, 2, 3, 4, 5, 6, 7, 9]);
        drain(&mut s, t);
        assert!(!s.in_recovery(), "within the reordering window (min RTT / 4 = 25 ms)");
        let reo = s.poll_timeout().unwrap();
        assert_eq!(reo, Time::from_millis(125), "8 was sent at 0: lost at RACK.rtt + reo_wnd");
        s.handle_timeout(reo);
        assert!(s.in_recovery());
        assert_eq!(drain(&mut s, reo)[0], (8, true));
        assert_eq!(s.stats.timeouts, 0);
        // Without RACK the same loss waits for the retransmission timeout.
        let mut c = classic(RecoveryMode::Sack);
        drain(&mut c, Time::ZERO);
        deliver(&mut c, t, &[0, 1, 2, 3, 4, 5, 6, 7, 9]);
        drain(&mut c, t);
        assert!(!c.in_recovery() && c.poll_timeout().unwrap() >= Time::from_millis(300));
    }

    #[test]
    fn rack_finds_a_lost_retransmission_by_time() {
        let mut s = sender(RecoveryMode::Sack);
        drain(&mut s, Time::ZERO);
        let t = Time::from_millis(100);
        deliver(&mut s, t, &[0, 1, 3, 4, 5, 6]);
        assert!(s.in_recovery(), "3 SACKed above 2: reo_wnd is 0, 2 is lost");
        let sent = drain(&mut s, t);
        assert!(sent.contains(&(2, true)), "{sent:?}");
        // The retransmission of 2 is lost too; packets sent after it are delivered.
        let later: Vec<u64> = sent.iter().filter(|x| !x.1).map(|x| x.0).collect();
        assert!(!later.is_empty());
        let t2 = Time::from_millis(200);
        deliver(&mut s, t2, &[7, 8, 9]);
        deliver(&mut s, Time::from_millis(210), &later);
        assert!(drain(&mut s, Time::from_millis(210)).contains(&(2, true)), "resent again");
        assert_eq!(s.stats.timeouts, 0);
    }

    #[test]
    fn a_tail_loss_probe_resends_the_last_packet_before_the_timeout() {
        let mut s = sender_with(TcpSenderConfig { size_packets: Some(10), ..Default::default() });
        drain(&mut s, Time::ZERO);
        // 0..9 delivered, 9 (the tail) lost: nothing is SACKed, no later packet to RACK from.
        let t = Time::from_millis(100);
        deliver(&mut s, t, &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
        // PTO = 2·SRTT + 200 ms with one packet in flight, capped by the RTO (SRTT 100 ms +
        // 200 ms): the probe goes out when the timeout would have fired.
        let pto = s.poll_timeout().unwrap();
        assert_eq!(pto, t + TimeDelta::from_millis(300));
        s.handle_timeout(pto);
        assert_eq!(drain(&mut s, pto), vec![(9, true)]);
        assert_eq!((s.stats.tail_loss_probes, s.stats.timeouts), (1, 0));
        // The probe repairs the loss: no timeout, no go-back-N, the transfer completes.
        s.handle_ack(pto + TimeDelta::from_millis(100), &ack(10));
        assert_eq!((s.stats.timeouts, s.stats.completed_at.is_some()), (0, true));
        assert_eq!(s.poll_timeout(), None);
    }

    #[test]
    fn a_redundant_probe_answered_with_a_dsack_keeps_the_window() {
        let mut s = sender_with(TcpSenderConfig { size_packets: Some(10), ..Default::default() });
        drain(&mut s, Time::ZERO);
        let t = Time::from_millis(100);
        deliver(&mut s, t, &[0, 1, 2, 3, 4, 5, 6, 7, 8]);
        let pto = s.poll_timeout().unwrap();
        s.handle_timeout(pto);
        drain(&mut s, pto);
        let w = s.window_packets();
        // 9 was only late: its ACK, then the receiver's D-SACK for the probe.
        s.handle_ack(pto + TimeDelta::from_millis(1), &ack(10));
        let mut d = ack(10);
        d.set_dsack(true);
        s.handle_ack(pto + TimeDelta::from_millis(100), &d);
        assert_eq!(s.window_packets(), w);
    }

    #[test]
    fn frto_undoes_a_spurious_timeout_and_keeps_a_real_one() {
        // Spurious: the ACKs were only late; after the timeout they acknowledge packets that
        // were never retransmitted.
        let cfg = TcpSenderConfig { tlp: false, ..Default::default() };
        let mut s = sender_with(cfg);
        drain(&mut s, Time::ZERO);
        let t = Time::from_millis(100);
        deliver(&mut s, t, &[0, 1]);
        drain(&mut s, t);
        let w = s.window_packets();
        let rto = s.poll_timeout().unwrap();
        s.handle_timeout(rto);
        assert_eq!(s.stats.timeouts, 1);
        assert_eq!(drain(&mut s, rto), vec![(2, true)]);
        assert!(s.window_packets() < w);
        s.handle_ack(rto + TimeDelta::from_millis(10), &ack(6));
        assert_eq!(s.stats.spurious_timeouts, 1);
        assert!(s.window_packets() >= w, "controller restored (then fed this ACK)");
        let next = drain(&mut s, rto + TimeDelta::from_millis(10));
        assert!(next.iter().all(|x| !x.1), "no go-back-N after the undo: {next:?}");
        // Real: everything outstanding was lost; the retransmission's ACK advances the window
        // (step 2b: new data), then duplicate ACKs arrive for it.
        let mut s = sender_with(cfg);
        drain(&mut s, Time::ZERO);
        deliver(&mut s, t, &[0, 1]);
        drain(&mut s, t);
        let rto = s.poll_timeout().unwrap();
        s.handle_timeout(rto);
        assert_eq!(drain(&mut s, rto), vec![(2, true)]);
        s.handle_ack(rto + TimeDelta::from_millis(100), &ack(3));
        let new = drain(&mut s, rto + TimeDelta::from_millis(100));
        assert!(
            !new.is_empty() && new.iter().all(|x| !x.1 && x.0 >= 12),
            "new data first: {new:?}"
        );
        s.handle_ack(rto + TimeDelta::from_millis(200), &sack(3, &[(new[0].0, new[0].0 + 1)]));
        assert_eq!(s.stats.spurious_timeouts, 0);
        assert!(
            drain(&mut s, rto + TimeDelta::from_millis(200)).iter().any(|x| x.1),
            "retransmits"
        );
    }
}
