//! One flow's meter, the same for both engines: the engine feeds it what happened to the
//! flow's packets ([`FlowMeter::on_send`], [`FlowMeter::on_arrival`], [`FlowMeter::on_drop`],
//! [`FlowMeter::on_mark`]), what its receiver reported ([`FlowMeter::on_event`]: goodput,
//! frames, freezes, stalls) and its controller's state at each bin's end
//! ([`FlowMeter::push_sample`]); the meter keeps the measurement window and the time-series
//! bins itself. Nothing is stored per packet.
//!
//! The simulator keeps one meter per flow and feeds it everything. The emulator's packets and
//! its endpoints live in different threads: each forwarding loop keeps a meter per flow for
//! what crossed the emulated path, each receiving end one for its events, and
//! [`FlowMeter::add_network`] joins them once the run is over. [`flow_columns`] writes the
//! `flows` table (one [`FlowBin`] per row plus the controller series) from either.

use std::sync::Arc;

use crate::measure::{
    CcSample, Columns, OneValueColumns, FLOW_COLUMNS, STAGE_COLUMNS_AT, STANDARD_CC_SERIES,
};
use crate::media_meter::{DisplayMeter, MediaBins};
use rtclab_core::{Direction, EndpointEvent, LogHistogram, Time, TimeDelta};
use rtclab_net::DropReason;

const N_REASONS: usize = DropReason::ALL.len();

/// The measurement window `[start, end)` and the width of a time-series bin (bin `i` covers
/// `[i * bin, (i + 1) * bin)` from time zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterWindow {
    pub start: Time,
    pub end: Time,
    pub bin: TimeDelta,
}

impl MeterWindow {
    #[inline]
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start && t < self.end
    }
    /// The bin `t` falls in (times before zero count as bin 0).
    #[inline]
    pub fn bin_of(&self, t: Time) -> usize {
        ((t - Time::ZERO).as_nanos().max(0) / self.bin.as_nanos()) as usize
    }
}

/// One flow's traffic in one time bin: the `flows` table's network columns before they are
/// turned into rates and means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowBin {
    /// Bytes the sender put on the path (the sending rate).
    pub sent_bytes: u64,
    /// Bytes that came out of the path to the receiver (the throughput).
    pub recv_bytes: u64,
    /// Payload the receiver delivered to its application in order (the goodput).
    pub goodput_bytes: u64,
    /// Packets behind the delay sums (those that came out of the path).
    pub delayed_packets: u64,
    pub queue_delay_sum_ns: u64,
    pub queue_delay_max_ns: u64,
    pub one_way_delay_sum_ns: u64,
    /// Data packets of the flow lost on the path.
    pub drops: u64,
}

impl FlowBin {
    fn add(&mut self, o: &FlowBin) {
        self.sent_bytes += o.sent_bytes;
        self.recv_bytes += o.recv_bytes;
        self.goodput_bytes += o.goodput_bytes;
        self.delayed_packets += o.delayed_packets;
        self.queue_delay_sum_ns += o.queue_delay_sum_ns;
        self.queue_delay_max_ns = self.queue_delay_max_ns.max(o.queue_delay_max_ns);
        self.one_way_delay_sum_ns += o.one_way_delay_sum_ns;
        self.drops += o.drops;
    }
    fn mean_ms(&self, sum_ns: u64) -> f64 {
        match self.delayed_packets {
            0 => f64::NAN,
            n => sum_ns as f64 / n as f64 / 1e6,
        }
    }
    /// Mean queuing delay (ms) of the packets that came out of the path; NaN if none did.
    pub fn queue_delay_mean_ms(&self) -> f64 {
        self.mean_ms(self.queue_delay_sum_ns)
    }
    pub fn queue_delay_max_ms(&self) -> f64 {
        match self.delayed_packets {
            0 => f64::NAN,
            _ => self.queue_delay_max_ns as f64 / 1e6,
        }
    }
    pub fn one_way_delay_mean_ms(&self) -> f64 {
        self.mean_ms(self.one_way_delay_sum_ns)
    }
}

/// Totals over the measurement window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WindowTotals {
    pub sent_packets: u64,
    pub sent_bytes: u64,
    pub recv_packets: u64,
    pub recv_bytes: u64,
    pub goodput_bytes: u64,
    /// Bytes of the flow that left the first link forward (the flow's share of it).
    pub bottleneck_bytes: u64,
    /// Data packets lost, by [`DropReason`] index.
    pub drops: [u64; N_REASONS],
    /// Feedback packets (ACKs, RTCP) lost on the way back.
    pub ack_drops: u64,
    /// Data packets a queue marked CE.
    pub ecn_marks: u64,
}

impl WindowTotals {
    fn add(&mut self, o: &WindowTotals) {
        self.sent_packets += o.sent_packets;
        self.sent_bytes += o.sent_bytes;
        self.recv_packets += o.recv_packets;
        self.recv_bytes += o.recv_bytes;
        self.goodput_bytes += o.goodput_bytes;
        self.bottleneck_bytes += o.bottleneck_bytes;
        for (a, b) in self.drops.iter_mut().zip(o.drops) {
            *a += b;
        }
        self.ack_drops += o.ack_drops;
        self.ecn_marks += o.ecn_marks;
    }
    pub fn dropped(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Samples waiting to be recorded (see `FlowMeter::batch`).
#[derive(Clone, Debug, Default)]
struct DelayBatch {
    n: usize,
    q: [u64; DELAY_BATCH],
    owd: [u64; DELAY_BATCH],
}

const DELAY_BATCH: usize = 16;

/// One controller series of a flow: its name, the bin it was first reported in, and one
/// value per bin from bin 0 (NaN before the first report and in bins it was not reported).
#[derive(Clone, Debug)]
pub(crate) struct NamedSeries {
    name: &'static str,
    first_bin: usize,
    values: Vec<f64>,
}

/// The controller's state per bin (`CcSample`s, stored as columns).
#[derive(Clone, Debug, Default)]
struct CcSeries {
    cwnd: Vec<f64>,
    srtt_ms: Vec<f64>,
    target_mbps: Vec<f64>,
    state: Vec<f64>,
    named: Vec<NamedSeries>,
    /// The series of the k-th name reported last bin (controllers report the same names in
    /// the same order every bin; the strings are compared by address first).
    slot: Vec<(&'static str, usize)>,
}

impl CcSeries {
    fn push(&mut self, cc: CcSample) {
        let bin = self.state.len();
        self.cwnd.push(cc.cwnd_packets);
        self.srtt_ms.push(cc.srtt_ms);
        self.target_mbps.push(cc.target_mbps);
        self.state.push(cc.state);
        for (k, (name, v)) in cc.named.into_iter().enumerate() {
            let id = match self.slot.get(k) {
                Some(&(n, id)) if std::ptr::eq(n, name) => id,
                _ => {
                    let id = match self.named.iter().position(|s| s.name == name) {
                        Some(id) => id,
                        None => {
                            self.named.push(NamedSeries {
                                name,
                                first_bin: bin,
                                values: Vec::new(),
                            });
                            self.named.len() - 1
                        }
                    };
                    self.slot.truncate(k);
                    self.slot.push((name, id));
                    id
                }
            };
            let col = &mut self.named[id].values;
            col.resize(bin, f64::NAN); // bins it was not reported in
            col.truncate(bin); // a name reported twice in one sample: the last counts
            col.push(v);
        }
    }
}

/// One flow's meter (see the module documentation).
#[derive(Clone, Debug)]
pub struct FlowMeter {
    window: MeterWindow,
    /// Per bin, from bin 0; grown as events arrive (a bin past the end reads as empty).
    /// The bin the latest event fell in is kept apart, in `hot`, until an event falls in
    /// another: most events fall in it, and it sits beside the totals.
    bins: Vec<FlowBin>,
    hot: FlowBin,
    hot_index: usize,
    /// The span of bin `hot_index`, ns from time zero.
    hot_span: (i64, i64),
    pub totals: WindowTotals,
    /// Queuing and one-way delays of the packets that came out of the path in the window;
    /// read them through [`FlowMeter::qdelay`] / [`FlowMeter::owd`].
    qdelay: LogHistogram,
    owd: LogHistogram,
    /// The latest (queuing, one-way) delays, recorded 16 at a time: with many flows
    /// interleaved (fair queueing) each record would otherwise touch another flow's
    /// histogram lines; one flow's consecutive samples share them.
    batch: DelayBatch,
    /// Media: frames completed in the window and their end-to-end delays (ns).
    pub frames: u64,
    pub frame_delay: LogHistogram,
    /// Media: frames shown in the window, their delays and latency breakdowns.
    pub display: DisplayMeter,
    /// Media: per-bin frames and delays, and the display's freezes and stalls.
    pub media: MediaBins,
    /// Media, whole run (warm-up included), for step-wise readers (the Gymnasium
    /// environment's QoE reward): frames completed, their delays summed, freeze time.
    pub run_frames: u64,
    pub run_frame_delay_ns: u128,
    pub run_freeze_ns: u128,
    cc: CcSeries,
}

impl FlowMeter {
    pub fn new(window: MeterWindow) -> Self {
        FlowMeter {
            window,
            bins: Vec::new(),
            hot: FlowBin::default(),
            hot_index: 0,
            hot_span: (0, window.bin.as_nanos()),
            totals: WindowTotals::default(),
            qdelay: LogHistogram::new(),
            owd: LogHistogram::new(),
            batch: DelayBatch::default(),
            frames: 0,
            frame_delay: LogHistogram::new(),
            display: DisplayMeter::default(),
            media: MediaBins::default(),
            run_frames: 0,
            run_frame_delay_ns: 0,
            run_freeze_ns: 0,
            cc: CcSeries::default(),
        }
    }

    pub fn window(&self) -> MeterWindow {
        self.window
    }

    #[inline]
    fn bin_mut(&mut self, t: Time) -> &mut FlowBin {
        let ns = (t - Time::ZERO).as_nanos();
        if ns < self.hot_span.0 || ns >= self.hot_span.1 {
            self.switch_bin(t);
        }
        &mut self.hot
    }

    /// Puts the hot bin back among the others and makes the bin of `t` the hot one.
    #[cold]
    fn switch_bin(&mut self, t: Time) {
        self.settle();
        let i = self.window.bin_of(t);
        let w = self.window.bin.as_nanos();
        self.hot_index = i;
        self.hot_span = (i as i64 * w, (i as i64 + 1) * w);
    }

    /// Adds the hot bin into `bins` (it stays the hot one, empty).
    fn settle(&mut self) {
        let h = std::mem::take(&mut self.hot);
        if h != FlowBin::default() {
            if self.bins.len() <= self.hot_index {
                self.bins.resize(self.hot_index + 1, FlowBin::default());
            }
            self.bins[self.hot_index].add(&h);
        }
    }

    /// Bin `b` (empty past the last event).
    pub fn bin(&self, b: usize) -> FlowBin {
        let mut x = self.bins.get(b).copied().unwrap_or_default();
        if b == self.hot_index {
            x.add(&self.hot);
        }
        x
    }

    /// The bytes that came out of the path per bin, for bins `0..n` (the fairness windows'
    /// and RFC 8868's input).
    pub fn recv_bytes_per_bin(&self, n: usize) -> Vec<u64> {
        (0..n).map(|b| self.bin(b).recv_bytes).collect()
    }

    /// The sender put a packet of `size` bytes on the path at `t`.
    #[inline]
    pub fn on_send(&mut self, t: Time, size: u32) {
        self.bin_mut(t).sent_bytes += size as u64;
        if self.window.contains(t) {
            self.totals.sent_packets += 1;
            self.totals.sent_bytes += size as u64;
        }
    }

    /// A data packet of `size` bytes came out of the path at `t` after queuing `queue_delay`
    /// and `one_way` in all.
    #[inline]
    pub fn on_arrival(&mut self, t: Time, size: u32, queue_delay: TimeDelta, one_way: TimeDelta) {
        self.on_delivery(t, size, queue_delay, one_way, 0);
    }

    /// `on_arrival` and the `goodput` bytes the receiver delivered to its application on that
    /// packet (its `Delivered` events) in one step: the simulator, which holds both at once.
    #[inline]
    pub fn on_delivery(
        &mut self,
        t: Time,
        size: u32,
        queue_delay: TimeDelta,
        one_way: TimeDelta,
        goodput: u64,
    ) {
        let q = queue_delay.as_nanos().max(0) as u64;
        let owd = one_way.as_nanos().max(0) as u64;
        let b = self.bin_mut(t);
        b.recv_bytes += size as u64;
        b.goodput_bytes += goodput;
        b.queue_delay_sum_ns += q;
        b.queue_delay_max_ns = b.queue_delay_max_ns.max(q);
        b.one_way_delay_sum_ns += owd;
        b.delayed_packets += 1;
        if self.window.contains(t) {
            self.totals.recv_packets += 1;
            self.totals.recv_bytes += size as u64;
            self.totals.goodput_bytes += goodput;
            self.record_delays(q, owd);
        }
    }

    /// `size` bytes of the flow left the first link forward at `t` (its share of that link).
    #[inline]
    pub fn on_bottleneck(&mut self, t: Time, size: u32) {
        if self.window.contains(t) {
            self.totals.bottleneck_bytes += size as u64;
        }
    }

    /// A packet of the flow going `dir` was lost; `t` is the time the engine counts it at.
    pub fn on_drop(&mut self, t: Time, dir: Direction, reason: DropReason) {
        match dir {
            Direction::Forward => {
                self.bin_mut(t).drops += 1;
                if self.window.contains(t) {
                    self.totals.drops[reason.index()] += 1;
                }
            }
            Direction::Reverse => {
                if self.window.contains(t) {
                    self.totals.ack_drops += 1;
                }
            }
        }
    }

    /// A queue marked a packet of the flow going `dir` CE at `t` (data packets count).
    pub fn on_mark(&mut self, t: Time, dir: Direction) {
        if dir == Direction::Forward && self.window.contains(t) {
            self.totals.ecn_marks += 1;
        }
    }

    /// The flow's receiver reported `ev` at `t`.
    #[inline]
    pub fn on_event(&mut self, t: Time, ev: &EndpointEvent) {
        if let EndpointEvent::Delivered { goodput_bytes } = ev {
            // The common event first: one per data packet.
            self.bin_mut(t).goodput_bytes += goodput_bytes;
            if self.window.contains(t) {
                self.totals.goodput_bytes += goodput_bytes;
            }
            return;
        }
        let in_window = self.window.contains(t);
        match ev {
            EndpointEvent::Delivered { .. } => {}
            EndpointEvent::FrameComplete { delay } => {
                let ns = delay.as_nanos().max(0);
                self.run_frames += 1;
                self.run_frame_delay_ns += ns as u128;
                self.media.on_frame(self.window.bin_of(t), *delay);
                if in_window {
                    self.frames += 1;
                    self.frame_delay.record(ns as u64);
                }
            }
            EndpointEvent::FrameDisplayed { delay, stages } => {
                self.media.on_display(self.window.bin_of(t), stages);
                if in_window {
                    self.display.record(*delay, stages);
                }
            }
            EndpointEvent::Freeze { duration } => {
                self.run_freeze_ns += duration.as_nanos().max(0) as u128;
                self.media.on_freeze(t, *duration);
            }
            EndpointEvent::Stall { duration } => self.media.on_stall(t, *duration),
            EndpointEvent::FreezeStart | EndpointEvent::TargetRate { .. } => {}
        }
    }

    /// The controller's state at the end of the next bin (one call per bin, in order).
    pub fn push_sample(&mut self, cc: CcSample) {
        self.cc.push(cc);
    }

    /// Bins sampled so far.
    pub fn samples(&self) -> usize {
        self.cc.state.len()
    }

    /// Adds what another meter of the same flow counted of its packets (the emulator: a
    /// forwarding loop's meter into the receiving end's): bins, window totals and delay
    /// histograms. Frames and controller samples stay this meter's.
    pub fn add_network(&mut self, o: &FlowMeter) {
        self.settle();
        let n = o.bins.len().max(o.hot_index + 1);
        if self.bins.len() < n {
            self.bins.resize(n, FlowBin::default());
        }
        for (b, x) in self.bins.iter_mut().enumerate().take(n) {
            x.add(&o.bin(b));
        }
        self.totals.add(&o.totals);
        self.qdelay.merge(&o.qdelay());
        self.owd.merge(&o.owd());
    }

    /// The queuing delays (ns) of the data packets that came out of the path in the window.
    pub fn qdelay(&self) -> std::borrow::Cow<'_, LogHistogram> {
        self.with_batch(&self.qdelay, &self.batch.q)
    }

    /// The one-way delays (ns) of the data packets that came out of the path in the window.
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

/// The controller series' names of the `flows` table: the standard ones, then the others in
/// the order they were first reported (by bin, then flow, then place in the sample).
pub fn cc_series_names(meters: &[FlowMeter]) -> Vec<&'static str> {
    let mut seen: Vec<(usize, usize, usize, &'static str)> = Vec::new();
    for (f, m) in meters.iter().enumerate() {
        for (k, s) in m.cc.named.iter().enumerate() {
            seen.push((s.first_bin, f, k, s.name));
        }
    }
    seen.sort_unstable_by_key(|&(b, f, k, _)| (b, f, k));
    let mut names = STANDARD_CC_SERIES.to_vec();
    for (.., n) in seen {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The `flows` table: one row per bin `0..n_bins` and flow active in it (`active(flow, t0,
/// t1)`), [`FLOW_COLUMNS`] then the controller series ([`cc_series_names`]).
pub fn flow_columns(
    meters: &[FlowMeter],
    n_bins: usize,
    active: impl Fn(usize, Time, Time) -> bool,
) -> Columns {
    flow_columns_split(meters, n_bins, active, PARALLEL_ROWS)
}

/// [`flow_columns`], on two threads when the table has at least `parallel_rows` rows.
fn flow_columns_split(
    meters: &[FlowMeter],
    n_bins: usize,
    active: impl Fn(usize, Time, Time) -> bool,
    parallel_rows: usize,
) -> Columns {
    let mut c = Columns::new(&FLOW_COLUMNS);
    let names = cc_series_names(meters);
    let base = c.names.len();
    for n in &names {
        c.names.push(n);
        c.data.push(Default::default());
    }
    // Per flow: which of its series each name is.
    let series = series_of(meters, &names);
    // The row of (bin, flow) in the table's bin-major order, where the flow was active, and
    // the rows before each bin.
    let n = meters.len();
    let mut row_of = vec![NOT_ACTIVE; n_bins * n];
    let mut bin_row = Vec::with_capacity(n_bins + 1);
    let mut rows = 0usize;
    for b in 0..n_bins {
        bin_row.push(rows);
        for (i, f) in meters.iter().enumerate() {
            let (t0, t1) = bin_span(f, b);
            if active(i, t0, t1) {
                row_of[b * n + i] = rows as u32;
                rows += 1;
            }
        }
    }
    bin_row.push(rows);
    // A column no flow has a source for (the media columns in a run without media, a
    // controller's series no flow's controller reports) is one value throughout: filled once,
    // and left out of the row loop, whose stores into every column were most of its time.
    let constant = constant_flow_columns(meters, &series, c.names.len());
    let live: Vec<usize> = (0..constant.len()).filter(|&j| constant[j].is_none()).collect();
    let mut filled: Vec<Vec<f64>> = live.iter().map(|_| vec![0.0; rows]).collect();
    let fill = Fill { meters, series: &series, row_of: &row_of, live: &live, base };
    // A large table is filled by two threads, each a range of bins (their rows are a
    // contiguous range of every column), while this one also writes the constant columns.
    let two = rows >= parallel_rows
        && n_bins >= 2
        && std::thread::available_parallelism().is_ok_and(|p| p.get() > 1);
    // One vector per constant value, shared by every column that holds it (filling each of a
    // 1,000-flow run's twenty constant columns, 48 MB of fresh pages, took longer than the rows).
    let constants = |rows| {
        let mut one = OneValueColumns::new(rows);
        constant.iter().map(|k| k.map(|v| one.of(v))).collect::<Vec<_>>()
    };
    let mut made = if two {
        let split = n_bins / 2;
        let (mut lo, mut hi): (Vec<&mut [f64]>, Vec<&mut [f64]>) =
            filled.iter_mut().map(|col| col.split_at_mut(bin_row[split])).unzip();
        std::thread::scope(|s| {
            let fill = &fill;
            s.spawn(move || fill.bins(0..split, 0, &mut lo));
            let made = constants(rows);
            fill.bins(split..n_bins, bin_row[split], &mut hi);
            made
        })
    } else {
        let mut all: Vec<&mut [f64]> = filled.iter_mut().map(Vec::as_mut_slice).collect();
        fill.bins(0..n_bins, 0, &mut all);
        constants(rows)
    };
    for (j, col) in live.iter().zip(filled) {
        made[*j] = Some(Arc::new(col));
    }
    c.data = made.into_iter().map(Option::unwrap_or_default).collect();
    c
}

/// Tables with at least this many rows are filled on two threads.
const PARALLEL_ROWS: usize = 20_000;

/// What `flow_columns` fills the table's rows from.
struct Fill<'a> {
    meters: &'a [FlowMeter],
    /// Per flow: which of its series each controller-series column is.
    series: &'a [Vec<Option<&'a NamedSeries>>],
    /// The row of (bin, flow), bin-major, or [`NOT_ACTIVE`].
    row_of: &'a [u32],
    /// The columns written row by row (the others are constant).
    live: &'a [usize],
    /// Where the controller series begin among the columns.
    base: usize,
}

impl Fill<'_> {
    /// Writes the rows of `bins` into `out` (one slice per live column, starting at row
    /// `first_row` of the table).
    fn bins(&self, bins: std::ops::Range<usize>, first_row: usize, out: &mut [&mut [f64]]) {
        let (meters, n, base) = (self.meters, self.meters.len(), self.base);
        let mut row = vec![0.0; base + self.series.first().map_or(0, Vec::len)];
        // Filled flow-major in blocks of flows, bin by bin inside a block: each flow's per-bin
        // vectors are read in order (one cache line serves eight bins) while the rows written
        // for one bin stay together. Bin-major reading touched every flow's vectors for every
        // row: with 1,000 flows a cache miss per source vector per row. Same table either way.
        for block in (0..n).step_by(FLOW_BLOCK) {
            for b in bins.clone() {
                let flows = meters.iter().enumerate().take(block + FLOW_BLOCK).skip(block);
                for (i, f) in flows {
                    let r = self.row_of[b * n + i];
                    if r == NOT_ACTIVE {
                        continue;
                    }
                    let r = r as usize - first_row;
                    base_row(f, i, b, &mut row[..base]);
                    for (v, s) in row[base..].iter_mut().zip(&self.series[i]) {
                        *v = series_value(*s, b);
                    }
                    for (col, &j) in out.iter_mut().zip(self.live) {
                        col[r] = row[j];
                    }
                }
            }
        }
    }
}

/// Flow `i`'s row of bin `b` in the [`FLOW_COLUMNS`] (`row`: that many values; the controller
/// series that follow them are not written).
pub(crate) fn base_row(f: &FlowMeter, i: usize, b: usize, row: &mut [f64]) {
    let (_, t1) = bin_span(f, b);
    let bin = f.window.bin;
    let secs = bin.as_secs_f64();
    let mbps = |bytes: u64| bytes as f64 * 8.0 / secs / 1e6;
    let x = f.bin(b);
    let cc = |v: &Vec<f64>| v.get(b).copied().unwrap_or(f64::NAN);
    let (delay_mean, delay_max) = f.media.frame_delay_ms(b);
    row[..STAGE_COLUMNS_AT].copy_from_slice(&[
        t1.as_secs_f64(),
        i as f64,
        mbps(x.recv_bytes),
        mbps(x.goodput_bytes),
        mbps(x.sent_bytes),
        x.queue_delay_mean_ms(),
        x.queue_delay_max_ms(),
        x.one_way_delay_mean_ms(),
        x.drops as f64,
        cc(&f.cc.cwnd),
        cc(&f.cc.srtt_ms),
        cc(&f.cc.target_mbps),
        f.media.frame_rate(b, bin),
        f.media.rendered_fps(b, bin),
        delay_mean,
        delay_max,
        cc(&f.cc.state),
    ]);
    row[STAGE_COLUMNS_AT..FLOW_COLUMNS.len()].copy_from_slice(&f.media.stage_means_ms(b));
}

/// Per flow: which of its controller series each of the `flows` table's controller-series
/// columns (`names`) is.
pub(crate) fn series_of<'a>(
    meters: &'a [FlowMeter],
    names: &[&str],
) -> Vec<Vec<Option<&'a NamedSeries>>> {
    meters
        .iter()
        .map(|m| names.iter().map(|n| m.cc.named.iter().find(|s| s.name == *n)).collect())
        .collect()
}

/// A controller series' value in bin `b` (NaN where the flow has no such series or did not
/// report it then).
pub(crate) fn series_value(s: Option<&NamedSeries>, b: usize) -> f64 {
    s.and_then(|s| s.values.get(b)).copied().unwrap_or(f64::NAN)
}

/// Per column of the `flows` table (in [`flow_columns`]' order): the value every row has when
/// no flow has a source for that column, else `None`. What an empty source reads as is what
/// the row loop would write: NaN for the controller's and the frames' series, zero frames per
/// second for a flow that completed and displayed none.
fn constant_flow_columns(
    meters: &[FlowMeter],
    series: &[Vec<Option<&NamedSeries>>],
    n_columns: usize,
) -> Vec<Option<f64>> {
    let mut k = vec![None; n_columns];
    let all = |p: &dyn Fn(&FlowMeter) -> bool| meters.iter().all(p);
    let no_cc = |v: fn(&CcSeries) -> &Vec<f64>| all(&|f: &FlowMeter| v(&f.cc).is_empty());
    let at = |name: &str| FLOW_COLUMNS.iter().position(|n| *n == name);
    let mut set = |name: &str, v: f64, when: bool| {
        if let (Some(j), true) = (at(name), when) {
            k[j] = Some(v);
        }
    };
    set("cwnd_packets", f64::NAN, no_cc(|c| &c.cwnd));
    set("srtt_ms", f64::NAN, no_cc(|c| &c.srtt_ms));
    set("target_mbps", f64::NAN, no_cc(|c| &c.target_mbps));
    set("cc_state", f64::NAN, no_cc(|c| &c.state));
    let no_frames = all(&|f: &FlowMeter| f.media.frames_completed_bins() == 0);
    let none_shown = all(&|f: &FlowMeter| f.media.frames_displayed_bins() == 0);
    set("frame_rate", 0.0, no_frames);
    set("frame_delay_ms_mean", f64::NAN, no_frames);
    set("frame_delay_ms_max", f64::NAN, no_frames);
    set("rendered_fps", 0.0, none_shown);
    if none_shown {
        k[STAGE_COLUMNS_AT..FLOW_COLUMNS.len()].fill(Some(f64::NAN));
    }
    for (j, slot) in k.iter_mut().enumerate().skip(FLOW_COLUMNS.len()) {
        if series.iter().all(|s| s[j - FLOW_COLUMNS.len()].is_none()) {
            *slot = Some(f64::NAN);
        }
    }
    k
}

/// `flow_columns`' mark for a (bin, flow) with no row.
const NOT_ACTIVE: u32 = u32::MAX;
/// Flows filled together by `flow_columns` (their rows for one bin are adjacent).
const FLOW_BLOCK: usize = 64;

/// Bin `b` of a meter's window: `[b·bin, (b+1)·bin)` from time zero.
fn bin_span(f: &FlowMeter, b: usize) -> (Time, Time) {
    let bin = f.window.bin;
    let t0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * b as i64);
    (t0, t0 + bin)
}

/// Every flow's freezes and stalls (`interruptions.parquet`).
pub fn interruption_columns(meters: &[FlowMeter]) -> Columns {
    crate::media_meter::interruption_columns(meters.iter().map(|f| &f.media).enumerate())
}

/// Every flow's delay distributions over the window (`distributions.parquet`).
pub fn distribution_columns(meters: &[FlowMeter]) -> Columns {
    let delays: Vec<_> = meters.iter().map(|f| (f.qdelay(), f.owd())).collect();
    crate::media_meter::distribution_columns(meters.iter().zip(&delays).enumerate().map(
        |(i, (f, (q, owd)))| {
            (i, [Some(&**q), Some(&**owd), Some(&f.frame_delay)], Some(&f.display))
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window() -> MeterWindow {
        MeterWindow {
            start: Time::from_secs(1),
            end: Time::from_secs(10),
            bin: TimeDelta::from_millis(200),
        }
    }

    /// Batched recording changes nothing a reader sees: with a batch full or part-full, the
    /// histograms hold exactly the samples recorded one by one.
    #[test]
    fn batched_delays_read_as_if_recorded_one_by_one() {
        for n in [0u64, 5, 16, 37] {
            let mut f = FlowMeter::new(window());
            let (mut q, mut owd) = (LogHistogram::new(), LogHistogram::new());
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

    /// Events land in the bin of their time, in any order, and only those inside the window
    /// count toward the totals.
    #[test]
    fn bins_follow_event_times_and_totals_the_window() {
        let mut f = FlowMeter::new(window());
        let ms = |x: i64| Time::ZERO + TimeDelta::from_millis(x);
        f.on_send(ms(100), 1000); // bin 0, before the window
        f.on_send(ms(1_100), 1200); // bin 5
        f.on_arrival(ms(1_150), 1200, TimeDelta::from_millis(4), TimeDelta::from_millis(24));
        f.on_drop(ms(150), Direction::Forward, DropReason::QueueOverflow); // late, out of order
        f.on_send(ms(10_000), 1200); // at the window's end: binned, not totalled
        assert_eq!(f.bin(0), FlowBin { sent_bytes: 1000, drops: 1, ..Default::default() });
        let b5 = f.bin(5);
        assert_eq!((b5.sent_bytes, b5.recv_bytes, b5.delayed_packets), (1200, 1200, 1));
        assert_eq!(b5.queue_delay_mean_ms(), 4.0);
        assert!(f.bin(3).queue_delay_mean_ms().is_nan());
        assert_eq!(f.bin(50).sent_bytes, 1200);
        assert_eq!(f.totals.sent_packets, 1);
        assert_eq!(f.totals.dropped(), 0);
        assert_eq!(f.qdelay().count(), 1);
    }

    /// A forwarding loop's meter and a receiving end's add up to what one meter fed both
    /// would hold (the emulator's join).
    #[test]
    fn add_network_equals_one_meter_fed_everything() {
        let ms = |x: i64| Time::ZERO + TimeDelta::from_millis(x);
        let (mut path, mut end, mut one) =
            (FlowMeter::new(window()), FlowMeter::new(window()), FlowMeter::new(window()));
        for k in 0..40 {
            let t = ms(900 + 37 * k);
            let d = TimeDelta::from_micros(100 * k);
            for m in [&mut path, &mut one] {
                m.on_send(t, 1200);
                m.on_arrival(t, 1200, d, d + TimeDelta::from_millis(20));
                m.on_bottleneck(t, 1200);
            }
            let ev = EndpointEvent::Delivered { goodput_bytes: 1100 };
            end.on_event(t, &ev);
            one.on_event(t, &ev);
        }
        end.add_network(&path);
        assert_eq!(end.totals, one.totals);
        assert_eq!((0..10).map(|b| end.bin(b)).collect::<Vec<_>>(), {
            (0..10).map(|b| one.bin(b)).collect::<Vec<_>>()
        });
        assert_eq!(end.qdelay().quantile(0.5), one.qdelay().quantile(0.5));
        assert_eq!(end.owd().count(), one.owd().count());
    }

    /// Controller series: standard columns first, then names by first bin, flow and place;
    /// NaN where a flow did not report a name.
    #[test]
    fn controller_series_keep_first_seen_order() {
        let sample = |named: Vec<(&'static str, f64)>| CcSample { named, ..Default::default() };
        let (mut a, mut b) = (FlowMeter::new(window()), FlowMeter::new(window()));
        a.push_sample(sample(vec![("x", 1.0)]));
        b.push_sample(sample(vec![("y", 2.0)]));
        a.push_sample(sample(vec![("z", 3.0), ("x", 4.0)]));
        b.push_sample(sample(vec![]));
        let meters = [a, b];
        let names = cc_series_names(&meters);
        assert_eq!(&names[STANDARD_CC_SERIES.len()..], &["x", "y", "z"]);
        let c = flow_columns(&meters, 2, |_, _, _| true);
        let x = c.column("x").unwrap();
        assert_eq!(x[0], 1.0); // bin 0, flow 0
        assert!(x[1].is_nan()); // bin 0, flow 1
        assert_eq!(x[2], 4.0); // bin 1, flow 0
        let y = c.column("y").unwrap();
        assert_eq!(y[1], 2.0);
        assert!(y[3].is_nan()); // flow 1 stopped reporting it
    }

    /// A column no flow has a source for is filled once instead of row by row: a flow's rows
    /// read the same, bit for bit, whether its table had that column constant (alone) or
    /// filled row by row (beside a media flow that reports a controller series).
    #[test]
    fn constant_columns_read_as_the_row_loop_writes_them() {
        let mut tcp = FlowMeter::new(window());
        tcp.push_sample(CcSample { cwnd_packets: 10.0, ..Default::default() });
        tcp.push_sample(CcSample { cwnd_packets: 12.0, ..Default::default() });
        let mut media = FlowMeter::new(window());
        media.push_sample(CcSample { named: vec![("threshold", 6.0)], ..Default::default() });
        media.media.on_frame(0, TimeDelta::from_millis(40));
        media.media.on_display(1, &rtclab_core::FrameStages([TimeDelta::from_millis(5); 8]));
        let alone = flow_columns(std::slice::from_ref(&tcp), 2, |_, _, _| true);
        let mixed = flow_columns(&[tcp, media], 2, |_, _, _| true);
        let constant = constant_flow_columns(
            &[FlowMeter::new(window())],
            &[vec![None; STANDARD_CC_SERIES.len()]],
            FLOW_COLUMNS.len() + STANDARD_CC_SERIES.len(),
        );
        assert_eq!(
            constant[FLOW_COLUMNS.iter().position(|n| *n == "frame_rate").unwrap()],
            Some(0.0)
        );
        assert!(constant[FLOW_COLUMNS.len()].is_some_and(f64::is_nan));
        assert_eq!(constant[0], None); // time_s always has a source
        assert_eq!(alone.names, mixed.names);
        for (name, a) in alone.names.iter().zip(&alone.data) {
            let m = mixed.column(name).unwrap();
            // The tcp flow's rows in the mixed table: bin 0 row 0, bin 1 row 2.
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(a), bits(&[m[0], m[2]]), "{name}");
        }
        assert_eq!(mixed.column("frame_rate").unwrap()[1], 5.0); // 1 frame in 200 ms
        assert_eq!(mixed.column("threshold").unwrap()[1], 6.0);
    }

    /// Two threads filling a bin range each write the table one thread writes, bit for bit.
    #[test]
    fn two_threads_fill_the_same_table() {
        let meters: Vec<FlowMeter> = (0..7)
            .map(|i| {
                let mut m = FlowMeter::new(window());
                for b in 0..(3 + i) {
                    let cwnd = (i * 10 + b) as f64;
                    m.push_sample(CcSample { cwnd_packets: cwnd, ..Default::default() });
                }
                m.media.on_frame(i, TimeDelta::from_millis(30 + i as i64));
                m
            })
            .collect();
        // Flow 3 is active only from bin 2.
        let active = |i: usize, t0: Time, _| i != 3 || t0 >= Time::from_millis(400);
        let one = flow_columns_split(&meters, 9, active, usize::MAX);
        let two = flow_columns_split(&meters, 9, active, 0);
        assert_eq!(one.rows(), 9 * 7 - 2);
        assert_eq!(one.names, two.names);
        for (a, b) in one.data.iter().zip(&two.data) {
            assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), {
                b.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            });
        }
    }
}
