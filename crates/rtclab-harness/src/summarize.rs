//! The one place a run's [`Summary`] is assembled from the meters, for both engines: the
//! flows' [`FlowMeter`]s, the link directions' [`LinkMeter`]s and the fairness windows give
//! every figure; the engine passes what only it knows ([`RunFacts`]) and fills what only its
//! endpoints know through a callback (a kernel TCP socket's `TCP_INFO`, decode errors on real
//! bytes). Engine extras that are not per flow (`emulator`, `middleboxes`, `links[].wifi`)
//! are set on the returned value.

use crate::flow_meter::FlowMeter;
use crate::link_meter::LinkMeter;
use crate::measure::Columns;
use crate::summary::{
    self as hs, percentiles_ms, EngineCounters, FlowSummary, FrameCounts, Summary,
};
use rtclab_core::{LogHistogram, Time, TimeDelta};
use rtclab_scenario::Scenario;

/// What the engine knows of the run that its meters do not.
pub struct RunFacts<'a> {
    pub scenario: &'a Scenario,
    pub seed: u64,
    /// `"sim"` or `"emu"`.
    pub engine: &'static str,
    /// How long the run went: the measurement window ends at the scenario's duration or here.
    pub ran: TimeDelta,
    /// Time-series bins the run completed (RFC 8868's input).
    pub n_bins: usize,
    pub engine_stats: EngineCounters,
}

/// The summary of a run: `flows[i]` is flow `i`'s meter, `hops` the link meters
/// (`HopRef::index`), `fairness` the fairness windows' table. `endpoint(i, summary, frames)`
/// adds what flow `i`'s endpoints report of themselves.
pub fn build(
    run: RunFacts,
    flows: &[FlowMeter],
    hops: &[LinkMeter],
    fairness: &Columns,
    mut endpoint: impl FnMut(usize, &mut FlowSummary, FrameCounts),
) -> Summary {
    let s = run.scenario;
    let w = hs::window(s, run.ran);
    let total_bottleneck: u64 = flows.iter().map(|f| f.totals.bottleneck_bytes).sum();
    let mut all_q = LogHistogram::new();
    let mut out_flows = Vec::with_capacity(s.flows.len());
    let mut rates = Vec::new();
    for (f, fm) in s.flows.iter().zip(flows) {
        let t = &fm.totals;
        let qdelay = fm.qdelay();
        all_q.merge(&qdelay);
        let mut out = hs::flow_base(f, w);
        let active = out.active_s;
        let mbps = |bytes: u64| if active > 0.0 { bytes as f64 * 8.0 / active / 1e6 } else { 0.0 };
        out.throughput_mbps = mbps(t.recv_bytes);
        if active > 0.0 {
            rates.push(out.throughput_mbps);
        }
        out.goodput_mbps = mbps(t.goodput_bytes);
        out.sending_rate_mbps = mbps(t.sent_bytes);
        out.loss_ratio =
            if t.sent_packets > 0 { t.dropped() as f64 / t.sent_packets as f64 } else { 0.0 };
        out.share = if total_bottleneck > 0 {
            t.bottleneck_bytes as f64 / total_bottleneck as f64
        } else {
            0.0
        };
        out.queuing_delay_ms = percentiles_ms(&qdelay);
        out.one_way_delay_ms = percentiles_ms(&fm.owd());
        out.packets_sent = t.sent_packets;
        out.packets_received = t.recv_packets;
        out.drops = hs::drops(&t.drops);
        out.ecn_marks = t.ecn_marks;
        out.ack_drops = t.ack_drops;
        let frames =
            FrameCounts { frames: fm.frames, frame_delay: &fm.frame_delay, display: &fm.display };
        endpoint(f.id as usize, &mut out, frames);
        out_flows.push(out);
    }
    let (link, reverse_link) = hs::main_link(s, &hops[0], &hops[1], &all_q, w);
    let mut out = Summary {
        scenario: s.name.clone(),
        description: s.description.clone(),
        rtclab_version: env!("CARGO_PKG_VERSION"),
        seed: run.seed,
        engine: run.engine,
        duration_s: s.duration.as_secs_f64(),
        warmup_s: s.metrics.warmup.as_secs_f64(),
        wall_time_s: None,
        measurement_window_s: [(w.0 - Time::ZERO).as_secs_f64(), (w.1 - Time::ZERO).as_secs_f64()],
        link,
        reverse_link,
        links: hs::links(s, hops, w),
        fairness: hs::fairness(s, &rates, fairness.column("jain").unwrap_or(&[])),
        rfc8868: Default::default(),
        flows: out_flows,
        engine_stats: run.engine_stats,
        emulator: None,
        middleboxes: Vec::new(),
        scenario_source: None,
        command_line: None,
        scenario_text: None,
    };
    let bytes: Vec<Vec<u64>> = flows.iter().map(|f| f.recv_bytes_per_bin(run.n_bins)).collect();
    let (run_figures, flow_figures) = crate::rfc8868::compute(s, run.n_bins, w, |i| &bytes[i]);
    out.rfc8868 = run_figures;
    for (f, figures) in out.flows.iter_mut().zip(flow_figures) {
        f.rfc8868 = figures;
    }
    out
}

/// Jain's index per fairness window over the flows active for the whole window, from the
/// bytes that came out of the path per bin (`fairness.parquet`).
pub fn fairness_columns(s: &Scenario, flows: &[FlowMeter], n_bins: usize) -> Columns {
    let bytes: Vec<Vec<u64>> = flows.iter().map(|f| f.recv_bytes_per_bin(n_bins)).collect();
    crate::measure::fairness_columns(s, n_bins, |i| &bytes[i])
}
