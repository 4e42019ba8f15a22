//! The simulator's meters: one engine-neutral [`FlowMeter`] per flow and one [`LinkMeter`]
//! per link direction (both in `rtclab_harness`), fed from the event loop, plus the engine's
//! own conservation counters. Bins close at fixed times (RFC 8868 uses 200 ms), when the
//! controllers are sampled. Nothing is stored per packet.

use rtclab_core::{Packet, PacketKind, Time, TimeDelta};
use rtclab_harness::flow_meter::{self, FlowMeter, MeterWindow};
use rtclab_harness::flow_table::FlowTable;
use rtclab_net::DropReason;

pub use rtclab_harness::link_meter::{LinkMeter, QUEUE_SAMPLE_INTERVAL};
pub use rtclab_harness::measure::{jain, CcSample, Columns};

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

/// All meters of a run.
pub struct Meters {
    pub bin: TimeDelta,
    pub next_bin_end: Time,
    /// Bins closed so far.
    pub closed: usize,
    pub flows: Vec<FlowMeter>,
    /// One per (link, direction), index `2 * link + direction` (`HopRef::index`): the first
    /// link's forward and reverse directions are 0 and 1 (what `summary.link` describes).
    pub hops: Vec<LinkMeter>,
    pub stats: EngineStats,
    /// The `flows` table, a bin's rows added as it closes.
    table: FlowTable,
    warmup: Time,
}

impl Meters {
    /// Meters for flows running over `spans` (`[start, stop)` each) and `n_links` links.
    pub fn new(spans: Vec<(Time, Time)>, n_links: usize, window: MeterWindow) -> Self {
        let n_flows = spans.len();
        let bins =
            ((window.end - Time::ZERO).as_nanos() / window.bin.as_nanos().max(1)) as usize + 1;
        Meters {
            table: FlowTable::new(spans, window.bin, bins.saturating_mul(n_flows)),
            bin: window.bin,
            next_bin_end: Time::ZERO + window.bin,
            closed: 0,
            flows: vec![FlowMeter::new(window); n_flows],
            hops: vec![LinkMeter::default(); 2 * n_links.max(1)],
            stats: EngineStats::default(),
            warmup: window.start,
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
        self.flows[pkt.flow.0 as usize].on_send(now, pkt.size);
    }

    /// A packet arrived at a link direction (its first element).
    #[inline]
    pub fn on_offered(&mut self, now: Time, hop: usize) {
        let w = self.in_window(now);
        self.hops[hop].on_offered(w);
    }

    /// A data packet reached its receiver, which delivered `goodput` bytes in order on it.
    #[inline]
    pub fn on_data_delivered(&mut self, now: Time, pkt: &Packet, goodput: u64) {
        self.stats.delivered_packets += 1;
        let f = &mut self.flows[pkt.flow.0 as usize];
        f.on_delivery(now, pkt.size, pkt.queue_delay, now - pkt.sent_at, goodput);
    }

    /// A packet left a link (the first link's forward departures make the flows' shares).
    #[inline]
    pub fn on_departure(&mut self, now: Time, hop: usize, pkt: &Packet) {
        let in_window = self.in_window(now);
        self.hops[hop].on_departure(in_window, pkt.size as u64);
        if hop == 0 {
            self.flows[pkt.flow.0 as usize].on_bottleneck(now, pkt.size);
        }
    }

    /// A queue at `hop` marked `pkt` CE (measurement window only; the packet travels on).
    pub fn on_mark(&mut self, now: Time, pkt: &Packet, hop: Option<usize>) {
        self.flows[pkt.flow.0 as usize].on_mark(now, pkt.dir);
        if let (Some(h), true) = (hop, self.in_window(now)) {
            self.hops[h].on_mark(true);
        }
    }

    /// `pkt` was dropped at `hop` (None: outside any link).
    pub fn on_drop(&mut self, now: Time, pkt: &Packet, reason: DropReason, hop: Option<usize>) {
        match pkt.kind {
            PacketKind::Data => self.stats.dropped_packets += 1,
            PacketKind::Ack => self.stats.dropped_acks += 1,
        }
        self.flows[pkt.flow.0 as usize].on_drop(now, pkt.dir, reason);
        if let Some(h) = hop {
            let in_window = self.in_window(now);
            self.hops[h].on_drop(in_window, reason);
        }
    }

    /// Closes the bin ending at `self.next_bin_end`; `sample(flow)` gives the controller state.
    /// `capacity_bits[h]`: what hop `h` could carry during the bin.
    pub fn close_bin(&mut self, capacity_bits: &[f64], mut sample: impl FnMut(usize) -> CcSample) {
        let end = self.next_bin_end;
        for (i, f) in self.flows.iter_mut().enumerate() {
            f.push_sample(sample(i));
        }
        for (h, l) in self.hops.iter_mut().enumerate() {
            l.close_bin(end, self.bin, capacity_bits.get(h).copied().unwrap_or(0.0));
        }
        self.table.close_bin(self.closed, &self.flows);
        self.closed += 1;
        self.next_bin_end = end + self.bin;
    }

    /// Per-flow rows for the closed bins in which the flow was active (its span overlaps the bin).
    pub fn flow_columns(&self) -> Columns {
        self.table.columns(&self.flows, self.closed)
    }

    /// The same table built from the meters after the run ([`flow_meter::flow_columns`], what
    /// the emulator does): the reference the incremental table is tested against.
    #[doc(hidden)]
    pub fn flow_columns_after_the_run(
        &self,
        active: impl Fn(usize, Time, Time) -> bool,
    ) -> Columns {
        flow_meter::flow_columns(&self.flows, self.closed, active)
    }

    /// Every media flow's freezes and stalls (`interruptions.parquet`).
    pub fn interruption_columns(&self) -> Columns {
        flow_meter::interruption_columns(&self.flows)
    }

    /// Every flow's delay distributions over the window (`distributions.parquet`).
    pub fn distribution_columns(&self) -> Columns {
        flow_meter::distribution_columns(&self.flows)
    }

    pub fn link_columns(&self) -> Columns {
        rtclab_harness::link_meter::link_columns(self.fwd(), self.rev(), self.bin)
    }
}
