//! Time series of an emulation in the simulator's column layout (`time_s` = end of the bin),
//! so the same plots, reports and comparisons apply: per flow the bottleneck-ingress sending
//! rate, the rate leaving the path, the application's goodput and the queuing delay; per bin
//! the link's capacity, delivered rate and utilization; Jain's index per fairness window.

use crate::engine::{BinCounters, EngineStats};
use crate::FlowResult;
use rtclab_core::{Time, TimeDelta};
use rtclab_harness::measure::Columns;
use rtclab_scenario::Scenario;

fn n_bins(s: &Scenario) -> usize {
    (s.duration.as_nanos() / s.metrics.bin.as_nanos()) as usize
}

fn bin_of(bins: &[BinCounters], i: usize) -> BinCounters {
    bins.get(i).copied().unwrap_or_default()
}

fn mbps(bytes: u64, bin: TimeDelta) -> f64 {
    bytes as f64 * 8.0 / bin.as_secs_f64() / 1e6
}

/// Application bytes in simulator bin `i` from the receiver's 100 ms bins.
fn app_bytes(rec: &FlowResult, bin: TimeDelta, i: usize, app_bin: TimeDelta) -> u64 {
    let per = (bin.as_nanos() / app_bin.as_nanos()).max(1) as usize;
    rec.bins().iter().skip(i * per).take(per).sum()
}

pub fn flow_columns(s: &Scenario, st: &EngineStats, received: &[FlowResult]) -> Columns {
    let mut c = Columns::new(&[
        "time_s",
        "flow",
        "sending_rate_mbps",
        "throughput_mbps",
        "goodput_mbps",
        "queuing_delay_ms_mean",
        "queuing_delay_ms_max",
        "target_mbps",
    ]);
    let bin = s.metrics.bin;
    for i in 0..n_bins(s) {
        let t0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * i as i64);
        let t1 = t0 + bin;
        for (f, rec) in s.flows.iter().zip(received) {
            if f.start >= t1 || f.stop <= t0 {
                continue;
            }
            let b = bin_of(&st.dirs[0].flows[f.id as usize].bins, i);
            let qd = if b.packets_out > 0 {
                b.queue_delay_sum_ns as f64 / b.packets_out as f64 / 1e6
            } else {
                f64::NAN
            };
            c.push_row(&[
                t1.as_secs_f64(),
                f.id as f64,
                mbps(b.in_bytes, bin),
                mbps(b.out_bytes, bin),
                mbps(app_bytes(rec, bin, i, crate::BIN), bin),
                qd,
                if b.packets_out > 0 { b.queue_delay_max_ns as f64 / 1e6 } else { f64::NAN },
                match rec {
                    FlowResult::Media(m) => m.target_mbps.get(i).copied().unwrap_or(f64::NAN),
                    _ => f64::NAN,
                },
            ]);
        }
    }
    c
}

pub fn link_columns(s: &Scenario, st: &EngineStats) -> Columns {
    let mut c = Columns::new(&[
        "time_s",
        "capacity_mbps",
        "delivered_mbps",
        "utilization",
        "queuing_delay_ms_mean",
        "queue_bytes_mean",
        "queue_bytes_max",
        "reverse_delivered_mbps",
    ]);
    let bin = s.metrics.bin;
    for i in 0..n_bins(s) {
        let t0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * i as i64);
        let t1 = t0 + bin;
        let sum = |d: usize| {
            st.dirs[d].flows.iter().map(|f| bin_of(&f.bins, i)).fold(
                BinCounters::default(),
                |a, b| BinCounters {
                    in_bytes: a.in_bytes + b.in_bytes,
                    out_bytes: a.out_bytes + b.out_bytes,
                    queue_delay_sum_ns: a.queue_delay_sum_ns + b.queue_delay_sum_ns,
                    queue_delay_max_ns: a.queue_delay_max_ns.max(b.queue_delay_max_ns),
                    packets_out: a.packets_out + b.packets_out,
                },
            )
        };
        let (f, r) = (sum(0), sum(1));
        let cap_bits = s.main_link().forward.capacity.bits_between(t0, t1);
        let (qmax, qarea) = st.dirs[0].queue_bins.get(i).copied().unwrap_or((0, 0.0));
        c.push_row(&[
            t1.as_secs_f64(),
            cap_bits / bin.as_secs_f64() / 1e6,
            mbps(f.out_bytes, bin),
            if cap_bits > 0.0 { f.out_bytes as f64 * 8.0 / cap_bits } else { f64::NAN },
            if f.packets_out > 0 {
                f.queue_delay_sum_ns as f64 / f.packets_out as f64 / 1e6
            } else {
                f64::NAN
            },
            qarea / bin.as_nanos() as f64,
            qmax as f64,
            mbps(r.out_bytes, bin),
        ]);
    }
    c
}

pub fn fairness_columns(s: &Scenario, st: &EngineStats) -> Columns {
    let mut c = Columns::new(&["time_s", "jain", "active_flows", "aggregate_mbps"]);
    let bin = s.metrics.bin;
    let per = (s.metrics.fairness_window.as_nanos() / bin.as_nanos()).max(1) as usize;
    let mut w = 0;
    while (w + 1) * per <= n_bins(s) {
        let w0 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * (w * per) as i64);
        let w1 = w0 + s.metrics.fairness_window;
        let xs: Vec<f64> = s
            .flows
            .iter()
            .filter(|f| f.start <= w0 && f.stop >= w1)
            .map(|f| {
                let bins = &st.dirs[0].flows[f.id as usize].bins;
                (w * per..(w + 1) * per).map(|i| bin_of(bins, i).out_bytes).sum::<u64>() as f64
            })
            .collect();
        let agg = xs.iter().sum::<f64>() * 8.0 / s.metrics.fairness_window.as_secs_f64() / 1e6;
        c.push_row(&[
            w1.as_secs_f64(),
            rtclab_harness::measure::jain(&xs).unwrap_or(f64::NAN),
            xs.len() as f64,
            agg,
        ]);
        w += 1;
    }
    c
}
