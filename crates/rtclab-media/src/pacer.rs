//! Pacer: sends queued packets at the pacing rate (a leaky bucket with no burst credit
//! beyond one packet), first in, first out. Like libwebrtc's `PacingController` with
//! `drain_large_queues`, the rate is raised when needed so that the queue drains within
//! `max_queue_time` (2 s, `kMaxExpectedQueueLength`) of its oldest packet's arrival.
//! libwebrtc's pacer also does padding, probe clusters and priorities; those are not here yet.

use crate::packetizer::MediaPacket;
use rtclab_core::{Rate, Time, TimeDelta};
use std::collections::VecDeque;

pub const MAX_QUEUE_TIME: TimeDelta = TimeDelta::from_secs(2);

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    /// (enqueue time, packet)
    queue: VecDeque<(Time, MediaPacket)>,
    queued_bytes: u64,
    rate: Rate,
    next_send: Time,
}

impl Pacer {
    pub fn new(rate: Rate) -> Self {
        Pacer { rate, ..Default::default() }
    }

    /// The configured rate, raised if the queue would otherwise wait beyond 2 s.
    fn effective_rate(&self, now: Time) -> Rate {
        let Some(&(oldest, _)) = self.queue.front() else { return self.rate };
        let left = (MAX_QUEUE_TIME - (now - oldest)).max(TimeDelta::from_millis(1));
        self.rate.max(Rate::from_bytes_per(self.queued_bytes, left))
    }
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }
    pub fn enqueue(&mut self, now: Time, p: MediaPacket) {
        self.queued_bytes += p.size as u64;
        self.queue.push_back((now, p));
    }
    pub fn queued_bytes(&self) -> u64 {
        self.queued_bytes
    }
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub fn poll_transmit(&mut self, now: Time) -> Option<MediaPacket> {
        if self.queue.is_empty() || now < self.next_send || self.rate == Rate::ZERO {
            return None;
        }
        let rate = self.effective_rate(now);
        let (_, p) = self.queue.pop_front()?;
        self.queued_bytes -= p.size as u64;
        // No credit for idle time: the next packet may leave one serialization time after
        // this one (or after `now`, whichever is later).
        self.next_send = self.next_send.max(now) + rate.tx_time(p.size as u64);
        if self.next_send < now {
            self.next_send = now;
        }
        Some(p)
    }

    pub fn poll_timeout(&self) -> Option<Time> {
        (!self.queue.is_empty()).then_some(self.next_send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::TimeDelta;

    fn p(size: u32) -> MediaPacket {
        MediaPacket { frame_id: 0, capture_time: Time::ZERO, index: 0, count: 1, size }
    }

    #[test]
    fn spaces_packets_at_the_rate() {
        let mut pacer = Pacer::new(Rate::from_kbps(1_000));
        for _ in 0..3 {
            pacer.enqueue(Time::from_millis(5), p(1250)); // 10 ms each at 1 Mbit/s
        }
        let mut times = Vec::new();
        let mut now = Time::from_millis(5);
        while let Some(t) = pacer.poll_timeout() {
            now = now.max(t);
            if pacer.poll_transmit(now).is_some() {
                times.push(now);
            }
        }
        assert_eq!(times, vec![Time::from_millis(5), Time::from_millis(15), Time::from_millis(25)]);
        // Idle time is not banked.
        pacer.enqueue(Time::from_secs(1), p(1250));
        pacer.enqueue(Time::from_secs(1), p(1250));
        let t = Time::from_secs(1);
        assert!(pacer.poll_transmit(t).is_some());
        assert!(pacer.poll_transmit(t).is_none());
        assert_eq!(pacer.poll_timeout(), Some(t + TimeDelta::from_millis(10)));
    }

    #[test]
    fn large_queues_drain_within_two_seconds() {
        let mut pacer = Pacer::new(Rate::from_kbps(100));
        for _ in 0..100 {
            pacer.enqueue(Time::ZERO, p(1250)); // 1 Mbit queued: 10 s at 100 kbit/s
        }
        let mut now = Time::ZERO;
        while let Some(t) = pacer.poll_timeout() {
            now = now.max(t);
            pacer.poll_transmit(now);
        }
        assert!(now <= Time::from_millis(2_010), "drained at {now}");
    }
}
