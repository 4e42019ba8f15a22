//! One link direction's meter, the same in both engines: offered packets, departures, drops by
//! reason and CE marks over the measurement window, the backlog as a time-weighted mean and
//! maximum per bin, and the backlog sampled every 10 ms (the queue a periodic probe would
//! meet). The engine calls the `on_*` hooks as packets cross the link and `close_bin` at each
//! bin's end; nothing is stored per packet.

use crate::measure::Columns;
use crate::measure::{percentiles_ms, Percentiles};
use rtclab_core::{LogHistogram, Time, TimeDelta};
use rtclab_net::{Backlog, DropReason};

const N_REASONS: usize = DropReason::ALL.len();

/// Spacing of the time-sampled queue (`q_samples`).
pub const QUEUE_SAMPLE_INTERVAL: TimeDelta = TimeDelta::from_millis(10);

#[derive(Clone, Debug, Default)]
pub struct LinkMeter {
    cur_bytes: u64,
    last_change: Time,
    b_area: u128,
    b_max: u64,
    b_departed: u64,
    b_drops: [u64; N_REASONS],
    /// Measurement-window totals.
    pub departed_bytes: u64,
    pub departed_packets: u64,
    pub offered_packets: u64,
    /// Packets marked CE on this direction.
    pub ecn_marks: u64,
    pub drops: [u64; N_REASONS],
    /// Per closed bin: what the link could carry, in bits.
    pub col_capacity_bits: Vec<f64>,
    col_departed_bytes: Vec<u64>,
    col_q_mean: Vec<f64>,
    col_q_max: Vec<u64>,
    col_drops_overflow: Vec<u64>,
    col_drops_random: Vec<u64>,
    next_sample: Time,
    /// Backlog in bytes every `QUEUE_SAMPLE_INTERVAL` from time zero: the queue a probe
    /// arriving then would wait behind (the papers' RTT − RTT_min from periodic RTCP).
    pub q_samples: Vec<u64>,
}

impl LinkMeter {
    /// A packet arrived at this direction (its first element).
    #[inline]
    pub fn on_offered(&mut self, in_window: bool) {
        if in_window {
            self.offered_packets += 1;
        }
    }

    /// A packet of `bytes` left the link's serializer.
    #[inline]
    pub fn on_departure(&mut self, in_window: bool, bytes: u64) {
        self.b_departed += bytes;
        if in_window {
            self.departed_bytes += bytes;
            self.departed_packets += 1;
        }
    }

    #[inline]
    pub fn on_drop(&mut self, in_window: bool, reason: DropReason) {
        self.b_drops[reason.index()] += 1;
        if in_window {
            self.drops[reason.index()] += 1;
        }
    }

    #[inline]
    pub fn on_mark(&mut self, in_window: bool) {
        if in_window {
            self.ecn_marks += 1;
        }
    }

    /// Records the backlog at every sample instant before `t`.
    #[inline]
    fn sample_to(&mut self, t: Time) {
        while self.next_sample < t {
            self.q_samples.push(self.cur_bytes);
            self.next_sample += QUEUE_SAMPLE_INTERVAL;
        }
    }

    /// The queue holds `b` from `now` on. The emulator's path may report an element's
    /// timer (due a moment ago) after a packet handled at the present: such a report counts
    /// from the last change, so time in the integral never runs backwards.
    #[inline]
    pub fn on_backlog(&mut self, now: Time, b: Backlog) {
        let now = now.max(self.last_change);
        if b.bytes != self.cur_bytes {
            self.sample_to(now);
            self.b_area += self.cur_bytes as u128 * (now - self.last_change).as_nanos() as u128;
            self.last_change = now;
            self.cur_bytes = b.bytes;
            self.b_max = self.b_max.max(b.bytes);
        }
    }

    /// Closes the bin `[end - bin, end)`, in which the link could carry `capacity_bits`.
    pub fn close_bin(&mut self, end: Time, bin: TimeDelta, capacity_bits: f64) {
        self.sample_to(end);
        self.b_area += self.cur_bytes as u128 * (end - self.last_change).as_nanos() as u128;
        self.last_change = end;
        self.col_capacity_bits.push(capacity_bits);
        self.col_departed_bytes.push(self.b_departed);
        self.col_q_mean.push(self.b_area as f64 / bin.as_nanos() as f64);
        self.col_q_max.push(self.b_max);
        self.col_drops_overflow.push(self.b_drops[DropReason::QueueOverflow.index()]);
        self.col_drops_random.push(
            self.b_drops[DropReason::RandomLoss.index()]
                + self.b_drops[DropReason::BurstLoss.index()],
        );
        self.b_area = 0;
        self.b_max = self.cur_bytes;
        self.b_departed = 0;
        self.b_drops = [0; N_REASONS];
    }

    /// Closed bins so far.
    pub fn bins(&self) -> usize {
        self.col_capacity_bits.len()
    }

    /// Bytes that left the link in each closed bin.
    pub fn departed_per_bin(&self) -> &[u64] {
        &self.col_departed_bytes
    }

    /// The queue's delay sampled every 10 ms over `[w0, w1)` (time-weighted, unlike per-packet
    /// delays), each sample's bytes converted at its bin's capacity.
    pub fn sampled_queue(&self, bin: TimeDelta, w0: Time, w1: Time) -> LogHistogram {
        let mut h = LogHistogram::new();
        let step = QUEUE_SAMPLE_INTERVAL.as_nanos() as u64;
        let bin = bin.as_nanos() as u64;
        let (w0, w1) = ((w0 - Time::ZERO).as_nanos() as u64, (w1 - Time::ZERO).as_nanos() as u64);
        for (k, &bytes) in self.q_samples.iter().enumerate() {
            let t = k as u64 * step;
            if t < w0 || t >= w1 {
                continue;
            }
            let Some(&bits) = self.col_capacity_bits.get((t / bin) as usize) else { continue };
            if bits > 0.0 {
                let rate_bps = bits / (bin as f64 / 1e9);
                h.record((bytes as f64 * 8.0 / rate_bps * 1e9) as u64);
            }
        }
        h
    }

    /// `{p5, ..., p99, mean}` of [`Self::sampled_queue`].
    pub fn sampled_queue_ms(&self, bin: TimeDelta, w0: Time, w1: Time) -> Percentiles {
        percentiles_ms(&self.sampled_queue(bin, w0, w1))
    }
}

/// The columns of `link.parquet`, in order.
pub const LINK_COLUMNS: [&str; 10] = [
    "time_s",
    "capacity_mbps",
    "delivered_mbps",
    "utilization",
    "queue_bytes_mean",
    "queue_bytes_max",
    "queue_delay_ms_mean",
    "drops_overflow",
    "drops_random",
    "reverse_delivered_mbps",
];

/// `link.parquet`: one row per closed bin of the forward direction `l`, with the reverse
/// direction's delivered rate.
pub fn link_columns(l: &LinkMeter, rev: &LinkMeter, bin: TimeDelta) -> Columns {
    let mut c = Columns::new(&LINK_COLUMNS);
    let secs = bin.as_secs_f64();
    for b in 0..l.col_capacity_bits.len() {
        let t1 = Time::ZERO + TimeDelta::from_nanos(bin.as_nanos() * (b as i64 + 1));
        let cap = l.col_capacity_bits[b];
        let delivered = l.col_departed_bytes[b] as f64 * 8.0;
        // Mean queueing delay implied by the mean backlog at the bin's capacity.
        let qdelay_ms =
            if cap > 0.0 { l.col_q_mean[b] * 8.0 / (cap / secs) * 1e3 } else { f64::NAN };
        c.push_row(&[
            t1.as_secs_f64(),
            cap / secs / 1e6,
            delivered / secs / 1e6,
            if cap > 0.0 { delivered / cap } else { f64::NAN },
            l.col_q_mean[b],
            l.col_q_max[b] as f64,
            qdelay_ms,
            l.col_drops_overflow[b] as f64,
            l.col_drops_random[b] as f64,
            rev.col_departed_bytes.get(b).map_or(0.0, |&x| x as f64 * 8.0 / secs / 1e6),
        ]);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_occupancy_is_time_weighted() {
        let mut m = LinkMeter::default();
        m.on_backlog(Time::from_millis(0), Backlog { packets: 1, bytes: 1000 });
        m.on_backlog(Time::from_millis(50), Backlog { packets: 0, bytes: 0 });
        m.close_bin(Time::from_millis(200), TimeDelta::from_millis(200), 1.0);
        assert_eq!(m.col_q_mean[0], 250.0);
        assert_eq!(m.col_q_max[0], 1000);
        // Sampled every 10 ms from 0: 0..40 ms see 1000 B, 50..190 ms see an empty queue.
        assert_eq!(m.q_samples.len(), 20);
        assert_eq!(m.q_samples.iter().filter(|&&b| b == 1000).count(), 5);
        assert!(m.q_samples[5..].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_backlog_reported_out_of_order_counts_from_the_last_change() {
        // The emulator's path reports a timer due at 40 ms after a packet handled at 50 ms.
        let mut m = LinkMeter::default();
        m.on_backlog(Time::from_millis(0), Backlog { packets: 1, bytes: 1000 });
        m.on_backlog(Time::from_millis(50), Backlog { packets: 2, bytes: 2000 });
        m.on_backlog(Time::from_millis(40), Backlog { packets: 0, bytes: 0 });
        m.close_bin(Time::from_millis(100), TimeDelta::from_millis(100), 1.0);
        // 1000 B for 50 ms, then empty from 50 ms (not from 40 ms, not a negative span).
        assert_eq!(m.col_q_mean[0], 500.0);
        assert_eq!(m.col_q_max[0], 2000);
    }
}
