//! The simulator's run summary: fills the engine-neutral [`Summary`] (see
//! `rtclab_harness::summary` for the shape) from the simulator's meters.

use crate::metrics::{Columns, EngineStats, Meters};
use rtclab_core::{LogHistogram, Time};
use rtclab_harness::endpoints::AnyEndpoint;
use rtclab_harness::summary::{self as hs, percentiles_ms, EngineCounters, FrameCounts, Summary};
use rtclab_scenario::Scenario;

/// Jain's index per fairness window over the flows active for the whole window.
pub fn fairness_columns(s: &Scenario, m: &Meters) -> Columns {
    let n_bins = m.flows.first().map_or(0, |f| f.col_recv_bytes.len());
    rtclab_harness::measure::fairness_columns(s, n_bins, |i| &m.flows[i].col_recv_bytes)
}

#[allow(clippy::too_many_arguments)]
pub fn build(
    s: &Scenario,
    seed: u64,
    m: &Meters,
    endpoints: &[(&AnyEndpoint, &AnyEndpoint)],
    fairness: &Columns,
    stats: EngineStats,
) -> Summary {
    let w = hs::window(s, s.duration);
    let (w0, w1) = w;
    let total_bottleneck: u64 = m.flows.iter().map(|f| f.bottleneck_bytes).sum();

    let mut all_q = LogHistogram::new();
    let mut flows = Vec::new();
    let mut rates = Vec::new();
    for (f, fm) in s.flows.iter().zip(&m.flows) {
        let qdelay = fm.qdelay();
        all_q.merge(&qdelay);
        let mut out = hs::flow_base(f, w);
        let active = out.active_s;
        let mbps = |bytes: u64| if active > 0.0 { bytes as f64 * 8.0 / active / 1e6 } else { 0.0 };
        out.throughput_mbps = mbps(fm.recv_bytes);
        if active > 0.0 {
            rates.push(out.throughput_mbps);
        }
        let dropped: u64 = fm.drops.iter().sum();
        out.goodput_mbps = mbps(fm.goodput_bytes);
        out.sending_rate_mbps = mbps(fm.sent_bytes);
        out.loss_ratio =
            if fm.sent_packets > 0 { dropped as f64 / fm.sent_packets as f64 } else { 0.0 };
        out.share = if total_bottleneck > 0 {
            fm.bottleneck_bytes as f64 / total_bottleneck as f64
        } else {
            0.0
        };
        out.queuing_delay_ms = percentiles_ms(&qdelay);
        out.one_way_delay_ms = percentiles_ms(&fm.owd());
        out.packets_sent = fm.sent_packets;
        out.packets_received = fm.recv_packets;
        out.drops = hs::drops(&fm.drops);
        out.ecn_marks = fm.ecn_marks;
        out.ack_drops = fm.ack_drops;
        let (snd, rcv) = endpoints[f.id as usize];
        let frames =
            FrameCounts { frames: fm.frames, frame_delay: &fm.frame_delay, display: &fm.display };
        hs::endpoint_fields(&mut out, snd, rcv, frames, None);
        flows.push(out);
    }

    let (link, reverse_link) = hs::main_link(s, m.fwd(), m.rev(), &all_q, w);
    let mut out = Summary {
        scenario: s.name.clone(),
        description: s.description.clone(),
        rtclab_version: env!("CARGO_PKG_VERSION"),
        seed,
        engine: "sim",
        duration_s: s.duration.as_secs_f64(),
        warmup_s: s.metrics.warmup.as_secs_f64(),
        wall_time_s: None,
        measurement_window_s: [w0.as_secs_f64(), (w1 - Time::ZERO).as_secs_f64()],
        link,
        reverse_link,
        links: hs::links(s, &m.hops, w),
        fairness: hs::fairness(s, &rates, fairness.column("jain").unwrap_or(&[])),
        rfc8868: Default::default(),
        flows,
        engine_stats: EngineCounters {
            events: Some(stats.events),
            delivered_packets: stats.delivered_packets,
            delivered_acks: stats.delivered_acks,
        },
        emulator: None,
        middleboxes: Vec::new(),
    };
    let n_bins = m.flows.first().map_or(0, |f| f.col_recv_bytes.len());
    rtclab_harness::rfc8868::fill(&mut out, s, n_bins, w, |i| &m.flows[i].col_recv_bytes);
    out
}
