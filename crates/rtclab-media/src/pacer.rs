//! Pacer: sends queued packets at the pacing rate (a leaky bucket with no burst credit
//! beyond one packet), first in, first out. libwebrtc's pacer also does padding, probe
//! clusters and priorities; those are not here yet.

use crate::packetizer::MediaPacket;
use rtclab_core::{Rate, Time};
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct Pacer {
    queue: VecDeque<MediaPacket>,
    queued_bytes: u64,
    rate: Rate,
    next_send: Time,
}

impl Pacer {
    pub fn new(rate: Rate) -> Self {
        Pacer { rate, ..Default::default() }
    }
    pub fn set_rate(&mut self, rate: Rate) {
        self.rate = rate;
    }
    pub fn enqueue(&mut self, p: MediaPacket) {
        self.queued_bytes += p.size as u64;
        self.queue.push_back(p);
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
        let p = self.queue.pop_front()?;
        self.queued_bytes -= p.size as u64;
        // No credit for idle time: the next packet may leave one serialization time after
        // this one (or after `now`, whichever is later).
        self.next_send = self.next_send.max(now) + self.rate.tx_time(p.size as u64);
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
            pacer.enqueue(p(1250)); // 10 ms each at 1 Mbit/s
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
        pacer.enqueue(p(1250));
        pacer.enqueue(p(1250));
        let t = Time::from_secs(1);
        assert!(pacer.poll_transmit(t).is_some());
        assert!(pacer.poll_transmit(t).is_none());
        assert_eq!(pacer.poll_timeout(), Some(t + TimeDelta::from_millis(10)));
    }
}
