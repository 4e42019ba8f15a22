//! Time series of an emulation in the same columns as the simulator's, written by the same
//! code (`rtclab_harness::flow_meter::flow_columns`, `link_meter::link_columns`,
//! `summarize::fairness_columns`; `time_s` = end of the bin), so the same plots, reports and
//! comparisons apply. A value the emulator cannot observe is NaN: kernel TCP's window and RTT
//! per bin.
//!
//! Each flow's meter is put together here once the run is over: the receiving end's (its
//! goodput, frames and controller samples) plus the network half each forwarding loop kept
//! (what entered the path, what left it, delays, drops, marks, both directions), plus the
//! class a classifying queue discipline held the flow in per bin.

use crate::engine::EngineStats;
use crate::FlowResult;
use rtclab_harness::flow_meter::{FlowMeter, MeterWindow};
use rtclab_harness::measure::{CcSample, Columns};
use rtclab_scenario::Scenario;

pub(crate) fn n_bins(s: &Scenario) -> usize {
    (s.duration.as_nanos() / s.metrics.bin.as_nanos()) as usize
}

/// Every flow's whole meter (see the module documentation).
pub fn flow_meters(s: &Scenario, st: &EngineStats, received: &[FlowResult]) -> Vec<FlowMeter> {
    let window = st.dirs[0].flow_meters.first().map(FlowMeter::window).unwrap_or(MeterWindow {
        start: rtclab_core::Time::ZERO + s.metrics.warmup,
        end: rtclab_core::Time::ZERO + s.duration,
        bin: s.metrics.bin,
    });
    let none: &[CcSample] = &[];
    s.flows
        .iter()
        .map(|f| {
            let i = f.id as usize;
            // A shell runs no flows of its own: only the network half is there.
            let (mut m, samples) = match received.get(i) {
                Some(FlowResult::Endpoint(r)) => (r.receiver.meter.clone(), r.samples.as_slice()),
                Some(FlowResult::Tcp(r)) => (r.meter.clone(), none),
                Some(FlowResult::Failed) | None => (FlowMeter::new(window), none),
            };
            for d in &st.dirs {
                if let Some(net) = d.flow_meters.get(i) {
                    m.add_network(net);
                }
            }
            let classes = st.dirs[0].queue_classes.get(i).and_then(Option::as_ref);
            let bins = samples.len().max(classes.map_or(0, Vec::len));
            for b in 0..bins {
                let mut c = samples.get(b).cloned().unwrap_or_default();
                if let Some(&class) = classes.and_then(|c| c.get(b)) {
                    c.named.push(("queue_class", class));
                }
                m.push_sample(c);
            }
            m
        })
        .collect()
}

pub fn flow_columns(s: &Scenario, meters: &[FlowMeter]) -> Columns {
    let flows = &s.flows;
    rtclab_harness::flow_meter::flow_columns(meters, n_bins(s), |i, t0, t1| {
        flows[i].start < t1 && flows[i].stop > t0
    })
}

pub fn link_columns(s: &Scenario, st: &EngineStats) -> Columns {
    let meters = &st.dirs[0].meters;
    rtclab_harness::link_meter::link_columns(&meters[0], &meters[1], s.metrics.bin)
}
