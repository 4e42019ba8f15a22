//! Streaming metrics: per-flow and per-link totals over the measurement window
//! [warmup, end), delay histograms, and fixed-width time-series bins (RFC 8868 uses 200 ms).
//! Nothing is stored per packet.

use rtclab_core::{FrameStages, LogHistogram, Packet, Time, TimeDelta};
use rtclab_harness::media_meter::{self, DisplayMeter, MediaBins};
use rtclab_net::DropReason;

const N_REASONS: usize = DropReason::ALL.len();

pub use rtclab_harness::link_meter::{LinkMeter, QUEUE_SAMPLE_INTERVAL};
pub use rtclab_harness::measure::{
    jain, CcSample, Columns, FLOW_COLUMNS, STAGE_COLUMNS_AT, STANDARD_CC_SERIES,
};

/// Everything a finished run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// The summary document (see README "summary.json").
    pub summary: serde_json::Value,
    /// One row per (bin, active flow).
    pub flows: Columns,
    /// One row per bin, forward bottleneck.
    pub link: Columns,
    /// One row per fairness window.
    pub fairness: Columns,
    /// One row per freeze of a media flow's display or stall of its frames.
    pub interruptions: Columns,
    /// Per flow and delay metric, the delay at fixed percentiles (the report's CDFs).
    pub distributions: Columns,
    pub stats: EngineStats,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    pub events: u64,
    /// All-time counts (not limited to the measurement window), for conservation checks:
    /// sent = delivered + dropped + still in the network, per packet kind.
    pub sent_packets: u64,
    pub sent_acks: u64,
    pub delivered_packets: u64,
    pub delivered_acks: u64,
    pub dropped_packets: u64,
    pub dropped_acks: u64,
}

#[derive(Clone, Debug, Default)]
pub struct FlowMeter {
    // measurement-window totals
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub recv_packets: u64,
    pub recv_bytes: u64,
    pub goodput_bytes: u64,
    pub bottleneck_bytes: u64,
    pub drops: [u64; N_REASONS],
    pub ack_drops: u64,
    /// Data packets marked CE by a queue.
    pub ecn_marks: u64,
    /// Queuing and one-way delays of the packets delivered in the window; read them through
    /// [`FlowMeter::qdelay`] / [`FlowMeter::owd`] (the latest samples wait in `batch`).
    qdelay: LogHistogram,
    owd: LogHistogram,
    /// The latest delivered packets' (queuing, one-way) delays, recorded 16 at a time: with
    /// many flows interleaved (fair queueing) each record would otherwise touch another flow's
    /// histogram lines; one flow's consecutive samples share them.
    batch: DelayBatch,
    /// Media: end-to-end frame delay (ns) and completed frames, in the window.
    pub frame_delay: LogHistogram,
    pub frames: u64,
    /// Media: frames shown in the window, their delays and latency breakdowns.
    pub display: DisplayMeter,
    /// Media: per-bin frames and delays, and the display's freezes.
    pub media: MediaBins,
    /// Media, whole run (warm-up included), for step-wise readers (the Gymnasium
    /// environment's QoE reward): frames completed, their delays summed, freeze time.
    pub run_frames: u64,
    pub run_frame_delay_ns: u128,
    pub run_freeze_ns: u128,
    // current bin
    b_recv: u64,
    b_goodput: u64,
    b_sent: u64,
    b_q_sum: u64,
    b_q_max: u64,
    b_owd_sum: u64,
    b_n: u64,
    b_drops: u64,
    // one entry per closed bin
    pub col_recv_bytes: Vec<u64>,
    col_goodput: Vec<u64>,
    col_sent: Vec<u64>,
    col_q_mean_ms: Vec<f64>,
    col_q_max_ms: Vec<f64>,
    col_owd_mean_ms: Vec<f64>,
    col_drops: Vec<u64>,
    col_cwnd: Vec<f64>,
    col_srtt_ms: Vec<f64>,
    col_target_mbps: Vec<f64>,
    col_state: Vec<f64>,
    /// Per controller series (index into `Meters::cc_names`): one value per bin from the first
    /// bin the flow reported it in (earlier bins read as NaN).
    col_named: Vec<Vec<f64>>,
    /// The id (`Meters::cc_names`) of the k-th name this flow reported last bin.
    name_ids: Vec<(&'static str, usize)>,
}

/// Samples waiting to be recorded (see `FlowMeter::batch`).
#[derive(Clone, Debug, Default)]
struct DelayBatch {
    n: usize,
    q: [u64; DELAY_BATCH],
    owd: [u64; DELAY_BATCH],
}

const DELAY_BATCH: usize = 16;

impl FlowMeter {
    /// The queuing delays (ns) of the data packets delivered in the window.
    pub fn qdelay(&self) -> std::borrow::Cow<'_, LogHistogram> {
        self.with_batch(&self.qdelay, &self.batch.q)
    }

    /// The one-way delays (ns) of the data packets delivered in the window.
    pub fn owd(&self) -> std::borrow::Cow<'_, LogHistogram> {
        self.with_batch(&self.owd, &self.batch.owd)
    }

    fn with_batch<'a>(
        &self,
        h: &'a LogHistogram,
        pending: &[u64; DELAY_BATCH],
    ) -> std::borrow::Cow<'a, LogHistogram> {
        if self.batch.n == 0 {
            return std::borrow::Cow::Borrowed(h);
        }
        let mut h = h.clone();
        for &v in &pending[..self.batch.n] {
            h.record(v);
        }
        std::borrow::Cow::Owned(h)
    }

    #[inline]
    fn record_delays(&mut self, q: u64, owd: u64) {
        let b = &mut self.batch;
        b.q[b.n] = q;
        b.owd[b.n] = owd;
        b.n += 1;
        if b.n == DELAY_BATCH {
            for &v in &b.q {
                self.qdelay.record(v);
            }
            for &v in &b.owd {
                self.owd.record(v);
            }
            b.n = 0;
        }
    }
}

/// All meters of a run.
pub struct Meters {
    pub bin: TimeDelta,
    pub warmup: Time,
    pub next_bin_end: Time,
    pub flows: Vec<FlowMeter>,
    /// One per (link, direction), index `2 * link + direction` (`HopRef::index`): the first
    /// link's forward and reverse directions are 0 and 1 (what `summary.link` describes).
    pub hops: Vec<LinkMeter>,
    pub stats: EngineStats,
    /// Names of the controller series, in first-seen order after the standard ones.
    pub cc_names: Vec<&'static str>,
}

impl Meters {
    pub fn new(n_flows: usize, n_links: usize, bin: TimeDelta, warmup: Time) -> Self {
        let flow = FlowMeter {
            frame_delay: LogHistogram::new(),
            qdelay: LogHistogram::new(),
            owd: LogHistogram::new(),
            ..Default::default()
        };
        Meters {
            bin,
            warmup,
            next_bin_end: Time::ZERO + bin,
            flows: vec![flow; n_flows],
            hops: vec![LinkMeter::default(); 2 * n_links.max(1)],
            stats: EngineStats::default(),
            cc_names: STANDARD_CC_SERIES.to_vec(),
        }
    }

    /// The first link's forward direction.
    pub fn fwd(&self) -> &LinkMeter {
        &self.hops[0]
    }
    /// The first link's reverse direction.
    pub fn rev(&self) -> &LinkMeter {
        &self.hops[1]
    }

    #[inline]
    fn in_window(&self, now: Time) -> bool {
        now >= self.warmup
    }

    #[inline]
    pub fn on_sent(&mut self, now: Time, pkt: &Packet) {
        self.stats.sent_packets += 1;
        let f = &mut self.flows[pkt.flow.0 as usize];
        f.b_sent += pkt.size as u64;
        if now >= self.warmup {
            f.sent_packets += 1;
            f.sent_bytes += pkt.size as u64;
        }
    }

    /// A packet arrived at a link direction (its first element).
    #[inline]
    pub fn on_offered(&mut self, now: Time, hop: usize) {
        let w = self.in_window(now);
        self.hops[hop].on_offered(w);
    }

    /// A data packet reached its receiver; `goodput` is the payload newly delivered in order.
    #[inline]
    pub fn on_data_delivered(&mut self, now: Time, pkt: &Packet, goodput: u64) {
        self.stats.delivered_packets += 1;
        let in_window = self.in_window(now);
        let f = &mut self.flows[pkt.flow.0 as usize];
        let q = pkt.queue_delay.as_nanos().max(0) as u64;
        let owd = (now - pkt.sent_at).as_nanos().max(0) as u64;
        f.b_recv += pkt.size as u64;
        f.b_goodput += goodput;
        f.b_q_sum += q;
        f.b_q_max = f.b_q_max.max(q);
        f.b_owd_sum += owd;
        f.b_n += 1;
        if in_window {
            f.recv_packets += 1;
            f.recv_bytes += pkt.size as u64;
            f.goodput_bytes += goodput;
            f.record_delays(q, owd);
        }
    }

    /// A media frame completed at its receiver.
    pub fn on_frame(&mut self, now: Time, flow: usize, delay: TimeDelta) {
        let in_window = self.in_window(now);
        let b = self.bin_of(now);
        let f = &mut self.flows[flow];
        f.run_frames += 1;
        f.run_frame_delay_ns += delay.as_nanos().max(0) as u128;
        f.media.on_frame(b, delay);
        if in_window {
            f.frames += 1;
            f.frame_delay.record(delay.as_nanos().max(0) as u64);
        }
    }

    /// A media frame was shown at its receiver.
    pub fn on_display(&mut self, now: Time, flow: usize, delay: TimeDelta, stages: &FrameStages) {
        let b = self.bin_of(now);
        self.flows[flow].media.on_display(b, stages);
        if self.in_window(now) {
            self.flows[flow].display.record(delay, stages);
        }
    }

    /// A media flow's display froze until `now` for `duration`.
    pub fn on_freeze(&mut self, now: Time, flow: usize, duration: TimeDelta) {
        self.flows[flow].run_freeze_ns += duration.as_nanos().max(0) as u128;
        self.flows[flow].media.on_freeze(now, duration);
    }

    /// A media flow's frames stopped completing until `now`, for `duration`.
    pub fn on_stall(&mut self, now: Time, flow: usize, duration: TimeDelta) {
        self.flows[flow].media.on_stall(now, duration);
    }

    /// The time-series bin `t` falls in.
    fn bin_of(&self, t: Time) -> usize {
        ((t - Time::ZERO).as_nanos() / self.bin.as_nanos()) as usize
    }

    /// A packet left a link (the first link's forward departures make the flows' shares).
    #[inline]
    pub fn on_departure(&mut self, now: Time, hop: usize, pkt: &Packet) {
        let in_window = self.in_window(now);
        self.hops[hop].on_departure(in_window, pkt.size as u64);
        if in_window && hop == 0 {
            self.flows[pkt.flow.0 as usize].bottleneck_bytes += pkt.size as u64;
        }
    }

    /// A queue at `hop` marked `pkt` CE (measurement window only; the packet travels on).
    pub fn on_mark(&mut self, now: Time, pkt: &Packet, hop: Option<usize>) {
        if !self.in_window(now) {
            return;
        }
        if pkt.dir == rtclab_core::Direction::Forward {
            self.flows[pkt.flow.0 as usize].ecn_marks += 1;
        }
        if let Some(h) = hop {
            self.hops[h].on_mark(true);
        }
    }

    /// `pkt` was dropped at `hop` (None: outside any link).
    pub fn on_drop(&mut self, now: Time, pkt: &Packet, reason: DropReason, hop: Option<usize>) {
        match pkt.kind {
            rtclab_core::PacketKind::Data => self.stats.dropped_packets += 1,
            rtclab_core::PacketKind::Ack => self.stats.dropped_acks += 1,
        }
        let in_window = self.in_window(now);
        let f = &mut self.flows[pkt.flow.0 as usize];
        match pkt.dir {
            rtclab_core::Direction::Forward => {
                f.b_drops += 1;
                if in_window {
                    f.drops[reason.index()] += 1;
                }
            }
            rtclab_core::Direction::Reverse => {
                if in_window {
                    f.ack_drops += 1;
                }
            }
        }
        if let Some(h) = hop {
            self.hops[h].on_drop(in_window, reason);
        }
    }

    /// Closes the bin ending at `self.next_bin_end`; `sample(flow)` gives the controller state.
    /// `capacity_bits[h]`: what hop `h` could carry during the bin.
    pub fn close_bin(&mut self, capacity_bits: &[f64], mut sample: impl FnMut(usize) -> CcSample) {
        let end = self.next_bin_end;
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.col_recv_bytes.push(f.b_recv);
            f.col_goodput.push(f.b_goodput);
            f.col_sent.push(f.b_sent);
            let n = f.b_n.max(1) as f64;
            f.col_q_mean_ms.push(if f.b_n > 0 { f.b_q_sum as f64 / n / 1e6 } else { f64::NAN });
            f.col_q_max_ms.push(if f.b_n > 0 { f.b_q_max as f64 / 1e6 } else { f64::NAN });
            f.col_owd_mean_ms.push(if f.b_n > 0 { f.b_owd_sum as f64 / n / 1e6 } else { f64::NAN });
            f.col_drops.push(f.b_drops);
            let cc = sample(i);
            f.col_cwnd.push(cc.cwnd_packets);
            f.col_srtt_ms.push(cc.srtt_ms);
            f.col_target_mbps.push(cc.target_mbps);
            f.col_state.push(cc.state);
            let bin = f.col_state.len() - 1;
            for (k, (name, v)) in cc.named.into_iter().enumerate() {
                // Controllers report the same names in the same order every bin: the id of
                // the k-th name is remembered per flow (pointer-equal strings).
                let id = match f.name_ids.get(k) {
                    Some(&(n, id)) if std::ptr::eq(n, name) => id,
                    _ => {
                        let id = match self.cc_names.iter().position(|n| *n == name) {
                            Some(id) => id,
                            None => {
                                self.cc_names.push(name);
                                self.cc_names.len() - 1
                            }
                        };
                        f.name_ids.truncate(k);
                        f.name_ids.push((name, id));
                        id
                    }
                };
                if f.col_named.len() <= id {
                    f.col_named.resize(id + 1, Vec::new());
                }
                let col = &mut f.col_named[id];
                col.resize(bin, f64::NAN); // bins before the first report
                col.truncate(bin); // a name reported twice in one sample: the last counts
                col.push(v);
            }
            f.b_recv = 0;
            f.b_goodput = 0;
            f.b_sent = 0;
            f.b_q_sum = 0;
            f.b_q_max = 0;
            f.b_owd_sum = 0;
            f.b_n = 0;
            f.b_drops = 0;
        }
        for (h, l) in self.hops.iter_mut().enumerate() {
            l.close_bin(end, self.bin, capacity_bits.get(h).copied().unwrap_or(0.0));
        }
        self.next_bin_end = end + self.bin;
    }

    /// Per-flow rows for the bins in which the flow was active (`active(flow, t0, t1)`).
    pub fn flow_columns(&self, active: impl Fn(usize, Time, Time) -> bool) -> Columns {
        let mut c = Columns::new(&FLOW_COLUMNS);
        let base = c.names.len();
        for n in &self.cc_names {
            c.names.push(n);
            c.data.push(Vec::new());
        }
        let mut row = vec![0.0; c.names.len()];
        let secs = self.bin.as_secs_f64();
        let mbps = |bytes: u64| bytes as f64 * 8.0 / secs / 1e6;
        let bins = self.fwd().col_capacity_bits.len();
        for b in 0..bins {
            let t0 = Time::ZERO + TimeDelta::from_nanos(self.bin.as_nanos() * b as i64);
            let t1 = t0 + self.bin;
            for (i, f) in self.flows.iter().enumerate() {
                if !active(i, t0, t1) {
                    continue;
                }
                row[..STAGE_COLUMNS_AT].copy_from_slice(&[
                    t1.as_secs_f64(),
                    i as f64,
                    mbps(f.col_recv_bytes[b]),
                    mbps(f.col_goodput[b]),
                    mbps(f.col_sent[b]),
                    f.col_q_mean_ms[b],
                    f.col_q_max_ms[b],
                    f.col_owd_mean_ms[b],
                    f.col_drops[b] as f64,
                    f.col_cwnd[b],
                    f.col_srtt_ms[b],
                    f.col_target_mbps[b],
                    f.media.frame_rate(b, self.bin),
                    f.media.rendered_fps(b, self.bin),
                    f.media.frame_delay_ms(b).0,
                    f.media.frame_delay_ms(b).1,
                    f.col_state[b],
                ]);
                row[STAGE_COLUMNS_AT..base].copy_from_slice(&f.media.stage_means_ms(b));
                for (k, v) in row[base..].iter_mut().enumerate() {
                    *v = f.col_named.get(k).and_then(|c| c.get(b)).copied().unwrap_or(f64::NAN);
                }
                c.push_row(&row);
            }
        }
        c
    }

    /// Every media flow's freezes and stalls (`interruptions.parquet`).
    pub fn interruption_columns(&self) -> Columns {
        media_meter::interruption_columns(self.flows.iter().map(|f| &f.media).enumerate())
    }

    /// Every flow's delay distributions over the window (`distributions.parquet`).
    pub fn distribution_columns(&self) -> Columns {
        let delays: Vec<_> = self.flows.iter().map(|f| (f.qdelay(), f.owd())).collect();
        media_meter::distribution_columns(self.flows.iter().zip(&delays).enumerate().map(
            |(i, (f, (q, owd)))| {
                (i, [Some(&**q), Some(&**owd), Some(&f.frame_delay)], Some(&f.display))
            },
        ))
    }

    pub fn link_columns(&self) -> Columns {
        rtclab_harness::link_meter::link_columns(self.fwd(), self.rev(), self.bin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batched recording changes nothing a reader sees: with a batch full or part-full, the
    /// histograms hold exactly the samples recorded one by one.
    #[test]
    fn batched_delays_read_as_if_recorded_one_by_one() {
        for n in [0u64, 5, 16, 37] {
            let mut f = FlowMeter::default();
            let (mut q, mut owd) = (LogHistogram::new(), LogHistogram::new());
            f.qdelay = LogHistogram::new();
            f.owd = LogHistogram::new();
            for k in 0..n {
                let (a, b) = (1_000 * k * k + 7, 20_000_000 + 3_000 * k);
                f.record_delays(a, b);
                q.record(a);
                owd.record(b);
            }
            for (got, want) in [(f.qdelay(), &q), (f.owd(), &owd)] {
                assert_eq!(got.count(), want.count(), "{n} samples");
                assert_eq!(got.max(), want.max());
                for p in [0.0, 0.5, 0.95, 1.0] {
                    assert_eq!(got.quantile(p), want.quantile(p), "{n} samples, q{p}");
                }
            }
        }
    }
}
