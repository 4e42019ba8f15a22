//! Time series of an emulation in the same columns as the simulator's
//! (`rtclab_harness::measure::FLOW_COLUMNS`, the standard controller series, `LINK_COLUMNS`,
//! `FAIRNESS_COLUMNS`; `time_s` = end of the bin), so the same plots, reports and comparisons
//! apply. A value the emulator cannot observe is NaN: kernel TCP's window and RTT per bin.
//! Per flow: the bottleneck-ingress sending rate, the rate leaving the path, the
//! application's goodput, the queuing and path delays, drops, and a media flow's controller
//! state (the same `CcSample` the simulator takes); per bin the link meters' columns.

use crate::engine::{BinCounters, EngineStats};
use crate::FlowResult;
use rtclab_core::{Time, TimeDelta};
use rtclab_harness::measure::{
    CcSample, Columns, FLOW_COLUMNS, STAGE_COLUMNS_AT, STANDARD_CC_SERIES,
};
use rtclab_harness::media_meter::{self, MediaBins};
use rtclab_scenario::Scenario;

pub(crate) fn n_bins(s: &Scenario) -> usize {
    (s.duration.as_nanos() / s.metrics.bin.as_nanos()) as usize
}

fn bin_of(bins: &[BinCounters], i: usize) -> BinCounters {
    bins.get(i).copied().unwrap_or_default()
}

fn mbps(bytes: u64, bin: TimeDelta) -> f64 {
    bytes as f64 * 8.0 / bin.as_secs_f64() / 1e6
}

pub fn flow_columns(s: &Scenario, st: &EngineStats, received: &[FlowResult]) -> Columns {
    let mut c = Columns::new(&FLOW_COLUMNS);
    // Controller series: the standard ones, then names in first-seen order.
    let mut names: Vec<&'static str> = STANDARD_CC_SERIES.to_vec();
    for rec in received {
        if let FlowResult::Endpoint(m) = rec {
            for (n, _) in m.samples.iter().flat_map(|x| &x.named) {
                if !names.contains(n) {
                    names.push(n);
                }
            }
        }
    }
    // The class a classifying queue discipline holds each flow in (as the simulator's).
    let classes = &st.dirs[0].queue_classes;
    if classes.iter().any(Option::is_some) && !names.contains(&"queue_class") {
        names.push("queue_class");
    }
    for n in &names {
        c.names.push(n);
        c.data.push(Vec::new());
    }
    let none = CcSample::default();
    let bin = s.metrics.bin;
    let mut row = vec![0.0; c.names.len()];
    for i in 0..n_bins(s) {
        let t0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * i as i64);
        let t1 = t0 + bin;
        for (f, rec) in s.flows.iter().zip(received) {
            if f.start >= t1 || f.stop <= t0 {
                continue;
            }
            let b = bin_of(&st.dirs[0].flows[f.id as usize].bins, i);
            let per_packet = |sum: u64| {
                if b.packets_out > 0 {
                    sum as f64 / b.packets_out as f64 / 1e6
                } else {
                    f64::NAN
                }
            };
            let cc = match rec {
                FlowResult::Endpoint(m) => m.samples.get(i).unwrap_or(&none),
                _ => &none,
            };
            let no_media = MediaBins::default();
            let media = match rec {
                FlowResult::Endpoint(m) => &m.receiver.media,
                _ => &no_media,
            };
            let (delay_mean, delay_max) = media.frame_delay_ms(i);
            row[..STAGE_COLUMNS_AT].copy_from_slice(&[
                t1.as_secs_f64(),
                f.id as f64,
                mbps(b.out_bytes, bin),
                mbps(rec.bins().get(i).copied().unwrap_or(0), bin),
                mbps(b.in_bytes, bin),
                per_packet(b.queue_delay_sum_ns),
                if b.packets_out > 0 { b.queue_delay_max_ns as f64 / 1e6 } else { f64::NAN },
                per_packet(b.path_delay_sum_ns),
                b.drops as f64,
                cc.cwnd_packets,
                cc.srtt_ms,
                cc.target_mbps,
                media.frame_rate(i, bin),
                media.rendered_fps(i, bin),
                delay_mean,
                delay_max,
                cc.state,
            ]);
            row[STAGE_COLUMNS_AT..FLOW_COLUMNS.len()].copy_from_slice(&media.stage_means_ms(i));
            for (k, n) in names.iter().enumerate() {
                row[FLOW_COLUMNS.len() + k] = if *n == "queue_class" {
                    classes
                        .get(f.id as usize)
                        .and_then(Option::as_ref)
                        .and_then(|c| c.get(i).copied())
                        .unwrap_or(f64::NAN)
                } else {
                    cc.named.iter().rev().find(|(m, _)| m == n).map_or(f64::NAN, |x| x.1)
                };
            }
            c.push_row(&row);
        }
    }
    c
}

pub fn link_columns(s: &Scenario, st: &EngineStats) -> Columns {
    let meters = crate::merged_meters(st);
    rtclab_harness::link_meter::link_columns(&meters[0], &meters[1], s.metrics.bin)
}

pub fn fairness_columns(s: &Scenario, st: &EngineStats) -> Columns {
    let bytes: Vec<Vec<u64>> =
        st.dirs[0].flows.iter().map(|f| f.bins.iter().map(|b| b.out_bytes).collect()).collect();
    rtclab_harness::measure::fairness_columns(s, n_bins(s), |i| &bytes[i])
}

/// Every media flow's freezes and stalls (`interruptions.parquet`).
pub fn interruption_columns(received: &[FlowResult]) -> Columns {
    media_meter::interruption_columns(received.iter().enumerate().filter_map(|(i, r)| match r {
        FlowResult::Endpoint(m) => Some((i, &m.receiver.media)),
        _ => None,
    }))
}

/// Every flow's delay distributions over the window (`distributions.parquet`).
pub fn distribution_columns(st: &EngineStats, received: &[FlowResult]) -> Columns {
    media_meter::distribution_columns(received.iter().enumerate().map(|(i, r)| {
        let c = &st.dirs[0].flows[i];
        let (frame, display) = match r {
            FlowResult::Endpoint(m) => (Some(&m.receiver.frame_delay), Some(&m.receiver.display)),
            _ => (None, None),
        };
        (i, [Some(&c.queue_delay), Some(&c.path_delay), frame], display)
    }))
}
