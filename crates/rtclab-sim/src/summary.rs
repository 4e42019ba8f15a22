//! The run summary (`summary.json`) and the per-window fairness series.
//!
//! Shape (stable; fields may be added): top level `scenario`, `seed`, `engine`, `duration_s`,
//! `wall_time_s` (filled in by the front end, which owns the wall clock); `link` with
//! `utilization`, `loss_ratio`; `fairness` with `jain`; `flows` with per flow `id`, `kind`,
//! `cc`, `throughput_mbps`, `goodput_mbps`, `loss_ratio`, `share`, `queuing_delay_ms`
//! {p5,p25,p50,p75,p95,p99}. All statistics cover the measurement window [warmup, end).

use crate::metrics::{jain, Columns, EngineStats, LinkMeter, Meters};
use rtclab_core::{LogHistogram, Time, TimeDelta};
use rtclab_scenario::Scenario;
use rtclab_transport::TcpSenderStats;
use serde_json::{json, Value};

pub use rtclab_harness::measure::{drops_json, num, percentiles_ms, queue_limit_json};

/// The forward queue's delay sampled every 10 ms over the measurement window (time-weighted,
/// unlike the per-packet `queuing_delay_ms`), each sample's bytes converted at its bin's
/// capacity.
fn sampled_queue(s: &Scenario, l: &LinkMeter) -> LogHistogram {
    let mut h = LogHistogram::new();
    let step = crate::metrics::QUEUE_SAMPLE_INTERVAL.as_nanos() as u64;
    let bin = s.metrics.bin.as_nanos() as u64;
    let (w0, w1) = (s.metrics.warmup.as_nanos() as u64, s.duration.as_nanos() as u64);
    for (k, &bytes) in l.q_samples.iter().enumerate() {
        let t = k as u64 * step;
        if t < w0 || t >= w1 {
            continue;
        }
        let Some(&bits) = l.col_capacity_bits.get((t / bin) as usize) else { continue };
        if bits > 0.0 {
            let rate_bps = bits / (bin as f64 / 1e9);
            h.record((bytes as f64 * 8.0 / rate_bps * 1e9) as u64);
        }
    }
    h
}

/// `summary.links`: every link direction that has a bottleneck, over the measurement window.
fn links_json(s: &Scenario, m: &Meters) -> Value {
    let (w0, w1) = (Time::ZERO + s.metrics.warmup, Time::ZERO + s.duration);
    let secs = (w1 - w0).as_secs_f64();
    let mut out = Vec::new();
    for (li, l) in s.links.iter().enumerate() {
        for (d, spec) in [("forward", Some(&l.forward)), ("reverse", l.reverse.as_ref())] {
            let Some(spec) = spec else { continue };
            let lm = &m.hops[2 * li + (d == "reverse") as usize];
            let cap_bits = spec.capacity.bits_between(w0, w1);
            let drops: u64 = lm.drops.iter().sum();
            out.push(json!({
                "name": l.name,
                "direction": d,
                "delay_ms": l.delay.as_millis_f64(),
                "capacity": spec.capacity_desc,
                "queue_kind": spec.queue_kind,
                "queue_limit": queue_limit_json(spec.queue_limit),
                "utilization": num(if cap_bits > 0.0 { lm.departed_bytes as f64 * 8.0 / cap_bits } else { f64::NAN }),
                "delivered_mbps": num(lm.departed_bytes as f64 * 8.0 / secs / 1e6),
                "loss_ratio": num(if lm.offered_packets > 0 { drops as f64 / lm.offered_packets as f64 } else { 0.0 }),
                "drops": drops_json(&lm.drops),
                "ecn_marks": lm.ecn_marks,
                "queuing_delay_sampled_ms": percentiles_ms(&sampled_queue(s, lm)),
            }));
        }
    }
    Value::Array(out)
}

/// Seconds of [start, stop) that fall inside [w0, w1).
fn overlap_secs(start: Time, stop: Time, w0: Time, w1: Time) -> f64 {
    let a = start.max(w0);
    let b = stop.min(w1);
    if b > a {
        (b - a).as_secs_f64()
    } else {
        0.0
    }
}

/// Jain's index per fairness window over the flows active for the whole window.
pub fn fairness_columns(s: &Scenario, m: &Meters) -> Columns {
    let mut c = Columns::new(&["time_s", "jain", "active_flows", "aggregate_mbps"]);
    let bins_per = (s.metrics.fairness_window.as_nanos() / m.bin.as_nanos()) as usize;
    let n_bins = m.flows.first().map_or(0, |f| f.col_recv_bytes.len());
    let mut w = 0;
    while (w + 1) * bins_per <= n_bins {
        let w0 = Time::ZERO + TimeDelta::from_nanos(m.bin.as_nanos() * (w * bins_per) as i64);
        let w1 = w0 + s.metrics.fairness_window;
        let xs: Vec<f64> = s
            .flows
            .iter()
            .zip(&m.flows)
            .filter(|(f, _)| f.start <= w0 && f.stop >= w1)
            .map(|(_, fm)| {
                fm.col_recv_bytes[w * bins_per..(w + 1) * bins_per].iter().sum::<u64>() as f64
            })
            .collect();
        let agg = xs.iter().sum::<f64>() * 8.0 / s.metrics.fairness_window.as_secs_f64() / 1e6;
        c.push_row(&[w1.as_secs_f64(), jain(&xs).unwrap_or(f64::NAN), xs.len() as f64, agg]);
        w += 1;
    }
    c
}

/// Whole-run media QoE a receiver keeps (stalls are judged on the receiver's frame clock).
#[derive(Clone, Copy, Debug)]
pub struct MediaSummary {
    pub stalls: u64,
    pub stall_time_s: f64,
    pub incomplete_frames: u64,
    pub frames_dropped_by_sender: u64,
    pub padding_bytes: u64,
    pub probe_clusters: u64,
    /// Whole-run traffic composition at the sender (bytes on the wire).
    pub bytes_sent: u64,
    pub fec_bytes: u64,
    pub rtx_bytes: u64,
}

/// Shares of the bytes a media sender put on the wire: media, FEC, retransmission, padding.
fn composition_json(ms: &MediaSummary) -> Value {
    let total = ms.bytes_sent.max(1) as f64;
    let media = ms.bytes_sent.saturating_sub(ms.fec_bytes + ms.rtx_bytes + ms.padding_bytes);
    json!({
        "media": num(media as f64 / total),
        "fec": num(ms.fec_bytes as f64 / total),
        "rtx": num(ms.rtx_bytes as f64 / total),
        "padding": num(ms.padding_bytes as f64 / total),
    })
}

#[allow(clippy::too_many_arguments)]
pub fn build(
    s: &Scenario,
    seed: u64,
    m: &Meters,
    senders: &[Option<TcpSenderStats>],
    media: &[Option<MediaSummary>],
    fairness: &Columns,
    stats: EngineStats,
) -> Value {
    let w0 = Time::ZERO + s.metrics.warmup;
    let w1 = Time::ZERO + s.duration;
    let window_secs = (w1 - w0).as_secs_f64();
    let total_bottleneck: u64 = m.flows.iter().map(|f| f.bottleneck_bytes).sum();

    let mut all_q = LogHistogram::new();
    let mut flows = Vec::new();
    let mut rates = Vec::new();
    for (f, fm) in s.flows.iter().zip(&m.flows) {
        all_q.merge(&fm.qdelay);
        let active = overlap_secs(f.start, f.stop, w0, w1);
        let mbps = |bytes: u64| if active > 0.0 { bytes as f64 * 8.0 / active / 1e6 } else { 0.0 };
        let throughput = mbps(fm.recv_bytes);
        if active > 0.0 {
            rates.push(throughput);
        }
        let dropped: u64 = fm.drops.iter().sum();
        let st = senders[f.id as usize];
        let media_json = media[f.id as usize].map(|ms| {
            json!({
                "frame_delay_ms": percentiles_ms(&fm.frame_delay),
                "frames": fm.frames,
                "frame_rate": num(if active > 0.0 { fm.frames as f64 / active } else { 0.0 }),
                "incomplete_frames": ms.incomplete_frames,
                "stalls": ms.stalls,
                "stall_time_s": num(ms.stall_time_s),
                "frames_dropped_by_sender": ms.frames_dropped_by_sender,
                "padding_bytes": ms.padding_bytes,
                "probe_clusters": ms.probe_clusters,
                "composition": composition_json(&ms),
            })
        });
        flows.push(json!({
            "id": f.id,
            "name": f.name,
            "kind": f.kind.kind_name(),
            "cc": f.kind.cc_name(),
            "rtt_ms": f.base_rtt.as_millis_f64(),
            "start_s": f.start.as_secs_f64(),
            "stop_s": f.stop.as_secs_f64(),
            "active_s": active,
            "throughput_mbps": num(throughput),
            "goodput_mbps": num(mbps(fm.goodput_bytes)),
            "sending_rate_mbps": num(mbps(fm.sent_bytes)),
            "loss_ratio": num(if fm.sent_packets > 0 { dropped as f64 / fm.sent_packets as f64 } else { 0.0 }),
            "share": num(if total_bottleneck > 0 { fm.bottleneck_bytes as f64 / total_bottleneck as f64 } else { 0.0 }),
            "queuing_delay_ms": percentiles_ms(&fm.qdelay),
            "one_way_delay_ms": percentiles_ms(&fm.owd),
            "packets_sent": fm.sent_packets,
            "packets_received": fm.recv_packets,
            "drops": drops_json(&fm.drops),
            "ecn_marks": fm.ecn_marks,
            "ack_drops": fm.ack_drops,
            "retransmits": st.map(|x| x.retransmits),
            "fast_retransmits": st.map(|x| x.fast_retransmits),
            "timeouts": st.map(|x| x.timeouts),
            "app_delay_ms": st.filter(|x| x.app_packets > 0).map(|x| json!({
                "mean": num(x.app_delay_sum.as_millis_f64() / x.app_packets as f64),
                "max": num(x.app_delay_max.as_millis_f64()),
            })),
            "media": media_json,
        }));
    }

    let main = s.main_link();
    let cap_bits = main.forward.capacity.bits_between(w0, w1);
    let fwd_drops: u64 = m.fwd().drops.iter().sum();
    let queue_limit = queue_limit_json(main.forward.queue_limit);
    let jw = fairness.column("jain").unwrap_or(&[]);
    let jw: Vec<f64> = jw.iter().copied().filter(|x| x.is_finite()).collect();
    let reverse = main.reverse.as_ref().map(|r| {
        json!({
            "capacity": r.capacity_desc,
            "delivered_mbps": num(m.rev().departed_bytes as f64 * 8.0 / window_secs / 1e6),
            "drops": drops_json(&m.rev().drops),
        })
    });
    json!({
        "scenario": s.name,
        "description": s.description,
        "rtclab_version": env!("CARGO_PKG_VERSION"),
        "seed": seed,
        "engine": "sim",
        "duration_s": s.duration.as_secs_f64(),
        "wall_time_s": Value::Null,
        "measurement_window_s": [w0.as_secs_f64(), w1.as_secs_f64()],
        "link": {
            "name": main.name,
            "capacity": main.forward.capacity_desc,
            "mean_capacity_mbps": num(cap_bits / window_secs / 1e6),
            "queue_limit": queue_limit,
            "queue_kind": main.forward.queue_kind,
            "utilization": num(if cap_bits > 0.0 { m.fwd().departed_bytes as f64 * 8.0 / cap_bits } else { f64::NAN }),
            "delivered_mbps": num(m.fwd().departed_bytes as f64 * 8.0 / window_secs / 1e6),
            "loss_ratio": num(if m.fwd().offered_packets > 0 { fwd_drops as f64 / m.fwd().offered_packets as f64 } else { 0.0 }),
            "drops": drops_json(&m.fwd().drops),
            "ecn_marks": m.fwd().ecn_marks,
            "queuing_delay_ms": percentiles_ms(&all_q),
            "queuing_delay_sampled_ms": percentiles_ms(&sampled_queue(s, m.fwd())),
        },
        "reverse_link": reverse,
        "links": links_json(s, m),
        "fairness": {
            "jain": jain(&rates).map_or(Value::Null, num),
            "window_s": s.metrics.fairness_window.as_secs_f64(),
            "jain_windows_mean": if jw.is_empty() { Value::Null } else { num(jw.iter().sum::<f64>() / jw.len() as f64) },
            "jain_windows_min": jw.iter().copied().reduce(f64::min).map_or(Value::Null, num),
        },
        "flows": flows,
        "engine_stats": {
            "events": stats.events,
            "delivered_packets": stats.delivered_packets,
            "delivered_acks": stats.delivered_acks,
        },
    })
}
