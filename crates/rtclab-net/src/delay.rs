//! Propagation delay with optional jitter that never reorders packets.
//!
//! Each packet's release time is `arrival + base + U(0, jitter)`, raised if needed to the
//! previous release time (FIFO), so jitter delays packets but never reorders them (unlike
//! netem's jitter, which reorders unless rate-limited).

use crate::element::{ElementOutput, NetElement};
use rtclab_core::{Direction, Packet, RngStream, Time, TimeDelta};
use std::collections::VecDeque;

/// Packets held until their release times, which never let a packet overtake the one ahead
/// of it (a later packet's release is raised to the previous one's). Shared by the delay
/// elements.
#[derive(Debug, Default)]
pub struct ReleaseFifo {
    fifo: VecDeque<(Time, Packet)>,
    last_release: Time,
}

impl ReleaseFifo {
    /// Holds `pkt` until `release` (or the previous packet's release, if later).
    #[inline]
    pub fn push(&mut self, release: Time, pkt: Packet) {
        let release = release.max(self.last_release);
        self.last_release = release;
        self.fifo.push_back((release, pkt));
    }
    /// Moves every packet due at `now` to `out`.
    #[inline]
    pub fn release(&mut self, now: Time, out: &mut ElementOutput) {
        while let Some(&(t, p)) = self.fifo.front() {
            if t > now {
                break;
            }
            self.fifo.pop_front();
            out.packets.push(p);
        }
    }
    #[inline]
    pub fn next_release(&self) -> Option<Time> {
        self.fifo.front().map(|x| x.0)
    }
    pub fn len(&self) -> usize {
        self.fifo.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
    /// Packets held, counted as (data, acks).
    pub fn held_by_kind(&self) -> (u64, u64) {
        crate::qdisc::count_kinds(self.fifo.iter().map(|x| &x.1))
    }
}

pub struct DelayLine {
    base: TimeDelta,
    jitter: TimeDelta,
    rng: RngStream,
    fifo: ReleaseFifo,
}

impl DelayLine {
    pub fn new(base: TimeDelta, jitter: TimeDelta, rng: RngStream) -> Self {
        DelayLine { base, jitter, rng, fifo: ReleaseFifo::default() }
    }
    pub fn base(&self) -> TimeDelta {
        self.base
    }
    pub fn len(&self) -> usize {
        self.fifo.len()
    }
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }
    /// Packets held, counted as (data, acks).
    pub fn held_by_kind(&self) -> (u64, u64) {
        self.fifo.held_by_kind()
    }
}

impl NetElement for DelayLine {
    fn held_by_kind(&self) -> (u64, u64) {
        DelayLine::held_by_kind(self)
    }
    #[inline]
    fn handle_packet(&mut self, now: Time, _dir: Direction, pkt: Packet, _out: &mut ElementOutput) {
        let mut release = now + self.base;
        if self.jitter > TimeDelta::ZERO {
            let j = self.rng.below(self.jitter.as_nanos() as u64 + 1);
            release += TimeDelta::from_nanos(j as i64);
        }
        self.fifo.push(release, pkt);
    }

    #[inline]
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        self.fifo.release(now, out);
    }

    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        self.fifo.next_release()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::FlowId;

    #[test]
    fn jitter_never_reorders() {
        let mut d = DelayLine::new(
            TimeDelta::from_millis(10),
            TimeDelta::from_millis(5),
            RngStream::from_seed(3),
        );
        let mut out = ElementOutput::default();
        for i in 0..1000u64 {
            let now = Time::from_micros(i * 100);
            d.handle_packet(
                now,
                Direction::Forward,
                Packet::data(FlowId(0), i, 100, now),
                &mut out,
            );
        }
        let mut released = Vec::new();
        let mut prev = Time::ZERO;
        while let Some(t) = d.poll_timeout() {
            assert!(t >= prev);
            prev = t;
            d.handle_timeout(t, &mut out);
            for p in out.packets.drain(..) {
                // Never earlier than the base delay, never later than base + jitter + queueing.
                assert!(t >= p.sent_at + TimeDelta::from_millis(10));
                released.push(p.seq);
            }
        }
        assert_eq!(released, (0..1000).collect::<Vec<_>>());
    }
}
