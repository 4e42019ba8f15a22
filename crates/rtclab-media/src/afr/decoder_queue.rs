//! The chapter's frame-level decoder-queue simulator (spec §2.6; released `sim/env.py`),
//! driven by a synthetic client session instead of a production trace: the encoder makes a
//! frame every target interval (or skips while paused), the frame reaches the client after the
//! network delay (never overtaking the previous frame; held to the end of a burst), waits in
//! the pre-decoder FIFO (bounded: a full queue drops the arriving frame, the released
//! `native` DropTail) and is decoded one at a time. At each arrival the receiver's policy sees
//! the inter-arrival time, the decode times finished since, the queue length and the head's
//! wait; its answer reaches the encoder one RTT later (released `arrv_staged`). The pause
//! baselines (QLen-S, QWait-S) are also re-evaluated every frame slot: a paused encoder sends
//! nothing, so without a periodic report the receiver could never tell it to resume.
//!
//! Per frame: queueing delay (decoder start − arrival), decode time, RTT and total = RTT +
//! queue + decode (the chapter's accounting); dropped frames are counted apart.

use super::clients::ClientSession;
use super::controller::{FrameRatePolicy, Observation, Target};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameRecord {
    pub generated: f64,
    pub arrival: f64,
    pub queue: f64,
    pub decode: f64,
    pub rtt: f64,
    pub total: f64,
    /// When decoding finished (NaN for a dropped frame).
    pub decoded_at: f64,
    pub dropped: bool,
}

/// Runs one session to its end; frames in generation order.
pub fn simulate(
    session: &ClientSession,
    policy: &mut FrameRatePolicy,
    queue_cap: Option<usize>,
) -> Vec<FrameRecord> {
    let end = session.seconds;
    let base = 1.0 / 60.0;
    let mut out: Vec<FrameRecord> = Vec::new();
    // Encoder: next slot, the instruction in force, instructions on their way (apply time).
    let mut next_gen = 0.0;
    let mut target = Target::Interval(base);
    let mut pending: VecDeque<(f64, Target)> = VecDeque::new();
    // Frames in flight: index into `out`.
    let mut inflight: VecDeque<usize> = VecDeque::new();
    let mut last_arrival_time = 0.0f64;
    // Decoder: accepted frames not yet finished (index), and when it is next free.
    let mut decoder: VecDeque<usize> = VecDeque::new();
    let mut free_at = 0.0f64;
    let mut prev_arrival: Option<f64> = None;
    let ticks = matches!(policy, FrameRatePolicy::Skip { .. });
    let mut next_tick = base;
    let mut last_rtt = session.at(0.0).rtt;
    loop {
        let gen_due = (next_gen < end).then_some(next_gen);
        let arr_due = inflight.front().map(|&i| out[i].arrival);
        if ticks
            && next_tick < end
            && gen_due.is_none_or(|g| next_tick < g)
            && arr_due.is_none_or(|a| next_tick < a)
        {
            let t = next_tick;
            next_tick += base;
            let waiting: Vec<usize> =
                decoder.iter().copied().filter(|&j| out[j].arrival + out[j].queue > t).collect();
            let qwait = waiting.first().map_or(0.0, |&h| t - out[h].arrival);
            let o = Observation {
                now: t,
                interarrival: base,
                decoded: Vec::new(),
                qlen: waiting.len(),
                qwait,
                rtt: last_rtt,
            };
            let target = policy.on_arrival(&o);
            let at = t + last_rtt;
            let pos = pending.iter().position(|p| p.0 > at).unwrap_or(pending.len());
            pending.insert(pos, (at, target));
            continue;
        }
        match (gen_due, arr_due) {
            (None, None) => break,
            (Some(g), a) if a.is_none_or(|a| g < a) => {
                while pending.front().is_some_and(|p| p.0 <= g) {
                    target = pending.pop_front().expect("checked").1;
                }
                match target {
                    Target::Pause(true) => next_gen = g + base,
                    t => {
                        let d = session.at(g);
                        let arrival = (g + d.owd).max(d.hold_until).max(last_arrival_time);
                        last_arrival_time = arrival;
                        out.push(FrameRecord {
                            generated: g,
                            arrival,
                            queue: f64::NAN,
                            decode: d.decode,
                            rtt: d.rtt,
                            total: f64::NAN,
                            decoded_at: f64::NAN,
                            dropped: false,
                        });
                        inflight.push_back(out.len() - 1);
                        next_gen = g + if let Target::Interval(iv) = t { iv } else { base };
                    }
                }
            }
            (_, Some(a)) => {
                let i = inflight.pop_front().expect("checked");
                let since = prev_arrival.unwrap_or(a);
                // What the decoder did since the previous arrival.
                let mut decoded = Vec::new();
                let mut qwait = 0.0f64;
                let started_since = |f: &FrameRecord| {
                    let start = f.arrival + f.queue;
                    start > since && start <= a
                };
                while decoder.front().is_some_and(|&j| out[j].decoded_at <= a) {
                    let j = decoder.pop_front().expect("checked");
                    decoded.push(out[j].decode);
                    if started_since(&out[j]) {
                        qwait = qwait.max(out[j].queue);
                    }
                }
                for &j in &decoder {
                    if started_since(&out[j]) {
                        qwait = qwait.max(out[j].queue);
                    }
                }
                let waiting: Vec<usize> = decoder
                    .iter()
                    .copied()
                    .filter(|&j| out[j].arrival + out[j].queue > a)
                    .collect();
                if let Some(&h) = waiting.first() {
                    qwait = qwait.max(a - out[h].arrival);
                }
                let o = Observation {
                    now: a,
                    interarrival: prev_arrival.map_or(base, |p| a - p),
                    decoded,
                    qlen: waiting.len(),
                    qwait,
                    rtt: out[i].rtt,
                };
                prev_arrival = Some(a);
                last_rtt = out[i].rtt;
                let t = policy.on_arrival(&o);
                // Instructions apply in the order they reach the encoder.
                let at = a + out[i].rtt;
                let pos = pending.iter().position(|p| p.0 > at).unwrap_or(pending.len());
                pending.insert(pos, (at, t));
                if queue_cap.is_some_and(|c| waiting.len() >= c) {
                    out[i].dropped = true;
                    continue;
                }
                let start = a.max(free_at);
                let f = &mut out[i];
                f.queue = start - a;
                f.decoded_at = start + f.decode;
                f.total = f.rtt + f.queue + f.decode;
                free_at = f.decoded_at;
                decoder.push_back(i);
            }
            _ => unreachable!("one of the two is due"),
        }
    }
    out
}

/// Figures of one or more sessions' frames (spec §2.8).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueStats {
    pub frames: usize,
    pub dropped: usize,
    pub queue_p99_ms: f64,
    pub queue_over_50ms: f64,
    pub total_p99_ms: f64,
    pub total_over_100ms: f64,
    pub queue_mean_ms: f64,
    pub decode_mean_ms: f64,
    pub network_mean_ms: f64,
    pub total_mean_ms: f64,
    /// Median and 10th percentile of the per-second decoded frame counts.
    pub fps_median: f64,
    pub fps_p10: f64,
    /// Inter-frame time after decoding: p99 (ms).
    pub interframe_p99_ms: f64,
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

pub fn stats(sessions: &[Vec<FrameRecord>], seconds: f64) -> QueueStats {
    let kept: Vec<&FrameRecord> = sessions.iter().flatten().filter(|f| !f.dropped).collect();
    let n = kept.len().max(1) as f64;
    let mut q: Vec<f64> = kept.iter().map(|f| f.queue * 1e3).collect();
    let mut t: Vec<f64> = kept.iter().map(|f| f.total * 1e3).collect();
    let mut fps = Vec::new();
    let mut gaps = Vec::new();
    for s in sessions {
        let mut per_sec = vec![0.0; seconds.ceil() as usize + 1];
        let mut done: Vec<f64> = s.iter().filter(|f| !f.dropped).map(|f| f.decoded_at).collect();
        done.sort_by(f64::total_cmp);
        let last = per_sec.len() - 1;
        for d in &done {
            per_sec[(*d as usize).min(last)] += 1.0;
        }
        fps.extend(per_sec[1..per_sec.len().saturating_sub(2)].iter().copied());
        gaps.extend(done.windows(2).map(|w| (w[1] - w[0]) * 1e3));
    }
    QueueStats {
        frames: sessions.iter().map(Vec::len).sum(),
        dropped: sessions.iter().flatten().filter(|f| f.dropped).count(),
        queue_p99_ms: quantile(&mut q, 0.99),
        queue_over_50ms: q.iter().filter(|x| **x > 50.0).count() as f64 / n,
        total_p99_ms: quantile(&mut t, 0.99),
        total_over_100ms: t.iter().filter(|x| **x > 100.0).count() as f64 / n,
        queue_mean_ms: q.iter().sum::<f64>() / n,
        decode_mean_ms: kept.iter().map(|f| f.decode * 1e3).sum::<f64>() / n,
        network_mean_ms: kept.iter().map(|f| f.rtt * 1e3).sum::<f64>() / n,
        total_mean_ms: t.iter().sum::<f64>() / n,
        fps_median: quantile(&mut fps.clone(), 0.5),
        fps_p10: quantile(&mut fps, 0.1),
        interframe_p99_ms: quantile(&mut gaps, 0.99),
    }
}

/// A session's stall ratio: its share of frames with total delay above 100 ms (dropped
/// frames count as stalled).
pub fn stall_ratio(frames: &[FrameRecord]) -> f64 {
    let bad = frames.iter().filter(|f| f.dropped || f.total > 0.100).count();
    bad as f64 / frames.len().max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::super::clients::{category, ClientSession};
    use super::super::controller::{Afr, AfrConfig};
    use super::*;

    fn session(seconds: f64, seed: u64) -> ClientSession {
        ClientSession::new(
            category("windows-wired").unwrap(),
            seconds,
            rtclab_core::SeedTree::new(seed).stream("s"),
        )
    }

    #[test]
    fn a_constant_rate_keeps_its_rate_and_queues_behind_slow_decoding() {
        let s = session(120.0, 3);
        let mut p = FrameRatePolicy::Constant { fps: 60.0 };
        let f = simulate(&s, &mut p, None);
        assert!((f.len() as f64 - 120.0 * 60.0).abs() <= 1.0, "{}", f.len());
        assert!(f.windows(2).all(|w| w[1].arrival >= w[0].arrival));
        let st = stats(&[f], 120.0);
        assert!(st.fps_median >= 59.0, "{st:?}");
        assert!(st.queue_mean_ms > 0.2 && st.queue_over_50ms > 0.0, "{st:?}");
        assert_eq!(st.dropped, 0);
    }

    #[test]
    fn afr_cuts_the_queue_tail_at_a_small_frame_rate_cost() {
        let (mut fixed, mut afr) = (Vec::new(), Vec::new());
        for seed in 1..=4 {
            let s = session(120.0, seed);
            fixed.push(simulate(&s, &mut FrameRatePolicy::Constant { fps: 60.0 }, Some(16)));
            let mut p = FrameRatePolicy::Afr {
                afr: Box::new(Afr::new(AfrConfig::default())),
                transient: true,
            };
            afr.push(simulate(&s, &mut p, Some(16)));
        }
        let (a, b) = (stats(&fixed, 120.0), stats(&afr, 120.0));
        println!("fixed {a:?}\nafr {b:?}");
        assert!(
            b.queue_over_50ms < 0.5 * a.queue_over_50ms,
            "{} vs {}",
            b.queue_over_50ms,
            a.queue_over_50ms
        );
        assert!(
            b.queue_mean_ms < 0.5 * a.queue_mean_ms,
            "{} vs {}",
            b.queue_mean_ms,
            a.queue_mean_ms
        );
        assert!(b.fps_median >= 0.85 * a.fps_median, "{} vs {}", b.fps_median, a.fps_median);
    }

    #[test]
    fn a_full_queue_drops_the_arriving_frame() {
        // A decoder stuck for 1 s (one huge decode) with room for 2 frames.
        let s = session(3.0, 9);
        let mut p = FrameRatePolicy::Constant { fps: 60.0 };
        let f = simulate(&s, &mut p, Some(2));
        // Without a stall in 3 s nothing drops at 60 fps on this client.
        let dropped = f.iter().filter(|x| x.dropped).count();
        let max_wait = f.iter().filter(|x| !x.dropped).map(|x| x.queue).fold(0.0, f64::max);
        assert!(dropped == 0 || max_wait > 0.016, "{dropped} {max_wait}");
        assert!(f.iter().all(|x| x.dropped || x.total >= x.rtt + x.decode - 1e-12));
    }
}
