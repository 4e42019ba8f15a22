//! Zhuge's out-of-band Feedback Updater: delaying a flow's ACKs at the access point by samples
//! of the predicted queue-delay changes ("DeltaDelay").
//!
//! Lineage: dissertation §4.5.2, Alg. 4.1 and 4.2 (with the printed `min(0, ·)` read as
//! `max(0, ·)`, as order preservation requires); the released ns-3 code's semantics
//! (transys-project/zhuge `delta-delay.cc`, `network-queue-zhuge.cc` `SetAckDelay`) where it
//! differs, as the spec (`zhuge-metis.md` A.4.1) prefers:
//! - on each downlink data packet (after a warm-up, and not while the queue stays empty), the
//!   change of the predicted total delay is kept: increases as *deltas*, decreases as *tokens*,
//!   each clamped to `clamp` and forgotten after `window`;
//! - an ACK is delayed by a sample drawn uniformly from the deltas, reduced by the tokens
//!   (consumed oldest first), scaled down when fewer downlink packets arrived in the current
//!   window than in the previous one; ACKs held back to back keep their original spacing and
//!   get a fresh sample on top;
//! - the added delay is capped (`max_ack_delay`) and ACKs never overtake one another.

use rtclab_core::{RngStream, Time, TimeDelta};
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeltaDelayConfig {
    /// History window of deltas and tokens (40 ms).
    pub window: TimeDelta,
    /// Clamp of every delta and token (10 ms).
    pub clamp: TimeDelta,
    /// Most delay added to one ACK (10 ms, "≈ min RTT" in the code's comment).
    pub max_ack_delay: TimeDelta,
    /// No deltas are recorded before this time (3 s).
    pub warmup: TimeDelta,
}

impl Default for DeltaDelayConfig {
    fn default() -> Self {
        DeltaDelayConfig {
            window: TimeDelta::from_millis(40),
            clamp: TimeDelta::from_millis(10),
            max_ack_delay: TimeDelta::from_millis(10),
            warmup: TimeDelta::from_secs(3),
        }
    }
}

#[derive(Debug)]
pub struct DeltaDelay {
    cfg: DeltaDelayConfig,
    deltas: VecDeque<(Time, TimeDelta)>,
    tokens: VecDeque<(Time, TimeDelta)>,
    /// Downlink packet times over two windows (for the rate rescale).
    arrivals: VecDeque<Time>,
    last_total: Option<TimeDelta>,
    last_queue_empty: bool,
    /// (arrival, release) of the last ACK.
    last_ack: Option<(Time, Time)>,
    /// Sum of the samples added so far (each ACK's increment over the previous one's delay).
    sampled: TimeDelta,
}

impl DeltaDelay {
    pub fn new(cfg: DeltaDelayConfig) -> Self {
        DeltaDelay {
            cfg,
            deltas: VecDeque::new(),
            tokens: VecDeque::new(),
            arrivals: VecDeque::new(),
            last_total: None,
            last_queue_empty: true,
            last_ack: None,
            sampled: TimeDelta::ZERO,
        }
    }

    fn expire(&mut self, now: Time) {
        let keep = |t: Time, w: TimeDelta| now - t <= w;
        while self.deltas.front().is_some_and(|d| !keep(d.0, self.cfg.window)) {
            self.deltas.pop_front();
        }
        while self.tokens.front().is_some_and(|d| !keep(d.0, self.cfg.window)) {
            self.tokens.pop_front();
        }
        let two = TimeDelta::from_nanos(2 * self.cfg.window.as_nanos());
        while self.arrivals.front().is_some_and(|&t| !keep(t, two)) {
            self.arrivals.pop_front();
        }
    }

    /// Alg. 4.1: a downlink data packet of the flow with predicted total delay `total`;
    /// `queue_empty`: nothing was queued ahead of it.
    pub fn on_data(&mut self, now: Time, total: TimeDelta, queue_empty: bool) {
        self.arrivals.push_back(now);
        let both_empty = queue_empty && self.last_queue_empty;
        self.last_queue_empty = queue_empty;
        let last = self.last_total.replace(total);
        if now < Time::ZERO + self.cfg.warmup || both_empty {
            return;
        }
        let Some(last) = last else { return };
        let d = total - last;
        let clamp = |x: TimeDelta| if x > self.cfg.clamp { self.cfg.clamp } else { x };
        if d >= TimeDelta::ZERO {
            self.deltas.push_back((now, clamp(d)));
        } else {
            self.tokens.push_back((now, clamp(TimeDelta::ZERO - d)));
        }
    }

    /// The code's `Sample(min)`: a delta drawn at random (at least `min`), less the tokens,
    /// rescaled by the downlink packet rate.
    fn sample(&mut self, now: Time, min: TimeDelta, rng: &mut RngStream) -> TimeDelta {
        self.expire(now);
        if self.deltas.is_empty() {
            return min;
        }
        let pick = self.deltas[rng.below(self.deltas.len() as u64) as usize].1;
        let mut s = if pick > min { pick } else { min };
        while let Some(tok) = self.tokens.front_mut() {
            if tok.1 > s {
                tok.1 -= s;
                s = TimeDelta::ZERO;
                break;
            }
            s -= tok.1;
            self.tokens.pop_front();
        }
        let cut = now - self.cfg.window;
        let current = self.arrivals.iter().filter(|&&t| t > cut).count();
        let previous = self.arrivals.len() - current;
        if previous > current && previous > 0 {
            s = TimeDelta::from_secs_f64(s.as_secs_f64() * current as f64 / previous as f64);
        }
        if s > TimeDelta::ZERO {
            self.sampled += s;
        }
        s
    }

    /// Sum of the positive samples handed out so far.
    pub fn sampled(&self) -> TimeDelta {
        self.sampled
    }

    /// Alg. 4.2 as the code does it: when the ACK arriving now may leave.
    pub fn on_ack(&mut self, now: Time, rng: &mut RngStream) -> Time {
        let Some((last_arr, last_sent)) = self.last_ack else {
            self.last_ack = Some((now, now));
            return now;
        };
        let mut sent = if now > last_sent {
            now + self.sample(now, TimeDelta::ZERO, rng)
        } else {
            // Held back to back: keep the original spacing, a fresh sample on top.
            let gap = last_sent - last_arr;
            now + gap + self.sample(now, last_arr - now, rng)
        };
        if sent > now + self.cfg.max_ack_delay {
            sent = now + self.cfg.max_ack_delay;
        }
        if sent < last_sent {
            sent = last_sent; // the cap must not reorder ACKs
        }
        if sent < now {
            sent = now;
        }
        self.last_ack = Some((now, sent));
        sent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: i64) -> TimeDelta {
        TimeDelta::from_millis(x)
    }
    fn at(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn dd() -> DeltaDelay {
        DeltaDelay::new(DeltaDelayConfig { warmup: TimeDelta::ZERO, ..DeltaDelayConfig::default() })
    }

    #[test]
    fn tokens_are_consumed_by_later_samples() {
        let mut d = dd();
        let mut rng = RngStream::from_seed(1);
        // Predicted totals 10, 13 (delta +3), 11 (token 2).
        d.on_data(at(100), ms(10), false);
        d.on_data(at(101), ms(13), false);
        d.on_data(at(102), ms(11), false);
        assert_eq!(d.on_ack(at(103), &mut rng), at(103), "the first ACK passes");
        // Sample 3, minus the 2 ms token: +1 ms.
        assert_eq!(d.on_ack(at(110), &mut rng), at(111));
        // Tokens used up: the next ACK gets the full 3 ms.
        assert_eq!(d.on_ack(at(120), &mut rng), at(123));
        // A token larger than the sample absorbs it and keeps the rest.
        d.on_data(at(121), ms(5), false); // token 6 (13 -> ... 11 -> 5)
        assert_eq!(d.on_ack(at(125), &mut rng), at(125));
        assert_eq!(d.tokens.front().unwrap().1, ms(3));
    }

    #[test]
    fn history_expires_after_the_window_and_clamps_at_ten_ms() {
        let mut d = dd();
        let mut rng = RngStream::from_seed(1);
        d.on_data(at(0), ms(0), false);
        d.on_data(at(1), ms(50), false); // +50, clamped to 10
        d.on_ack(at(2), &mut rng);
        assert_eq!(d.on_ack(at(3), &mut rng), at(13));
        // 40 ms later the delta is gone: no delay.
        assert_eq!(d.on_ack(at(60), &mut rng), at(60));
    }

    #[test]
    fn acks_never_overtake_and_back_to_back_acks_keep_their_spacing() {
        let mut d = dd();
        let mut rng = RngStream::from_seed(7);
        d.on_data(at(0), ms(0), false);
        for k in 1..=20 {
            d.on_data(at(k), ms(2 * k as i64), false); // steady +2 ms deltas
        }
        let mut last = Time::ZERO;
        let mut prev_arr = None;
        for (i, a) in [21u64, 22, 22, 23, 30, 30, 30, 31].into_iter().enumerate() {
            let s = d.on_ack(at(a), &mut rng);
            assert!(s >= last, "ACK {i} overtook: {s} < {last}");
            assert!(s >= at(a) && s <= at(a) + ms(10));
            if let Some(p) = prev_arr {
                if a == p && i > 1 {
                    assert!(s >= last);
                }
            }
            last = s;
            prev_arr = Some(a);
        }
    }

    #[test]
    fn added_delay_follows_the_net_predicted_change() {
        // The predicted delay climbs 0 -> 20 ms in +1 ms steps, then falls back in -1 ms steps,
        // one downlink packet and one ACK per ms. Over the rise each ACK is delayed by one
        // more ms than the one before (back to back, the previous delay plus a 1 ms sample) up
        // to the 10 ms cap; over the fall the tokens cancel the samples, so the delays stop
        // growing; the samples handed out add up to the rise (the net positive change); once
        // the history has expired the delays unwind.
        let mut d = dd();
        let mut rng = RngStream::from_seed(3);
        let mut prev_sent = Time::ZERO;
        let mut delays = Vec::new();
        for t in 0..=40u64 {
            let total = if t <= 20 { t as i64 } else { 40 - t as i64 };
            d.on_data(at(100 + t), ms(total), false);
            let s = d.on_ack(at(100 + t), &mut rng);
            assert!(s >= prev_sent);
            prev_sent = s;
            delays.push((s - at(100 + t)).as_millis_f64());
        }
        assert_eq!(delays[0], 0.0);
        assert_eq!(delays[5], 5.0);
        assert_eq!(delays[15], 10.0, "capped: {delays:?}");
        let after_sampled = d.sampled().as_millis_f64();
        assert!((18.0..=22.0).contains(&after_sampled), "samples {after_sampled} ms, {delays:?}");
        for w in delays[21..].windows(2) {
            assert!(w[1] <= w[0], "delays grew during the fall: {delays:?}");
        }
        // 40 ms without deltas: each ACK leaves with the previous one (the delay unwinds).
        let mut last = 10.0;
        for t in 200..230u64 {
            let s = d.on_ack(at(t), &mut rng);
            let add = (s - at(t)).as_millis_f64();
            assert!(add <= last);
            last = add;
        }
        assert_eq!(last, 0.0);
    }
}
