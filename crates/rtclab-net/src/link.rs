//! A unidirectional link: a queue discipline feeding a serializer whose speed follows a
//! `CapacityModel`.
//!
//! Rate models: the head packet is dequeued when the serializer is free and leaves when its
//! last bit is sent (the finish time integrates a time-varying rate exactly). Opportunity
//! models (mahimahi): at each opportunity instant up to 1504 bytes per opportunity leave;
//! a packet may be spread over several opportunities and leaves at the one that completes
//! it; opportunities that find the queue empty are lost.
//!
//! Wireless access points (`Link::wifi`): the queue discipline feeds a `WifiMac` (MAC queue,
//! A-MPDU aggregation, DCF contention) that replaces the serializer; the capacity model is
//! then the PHY rate.

use crate::any_qdisc::AnyQdisc;
use crate::capacity::CapacityModel;
use crate::element::{DequeueRecord, ElementOutput, NetElement};
use crate::qdisc::{Backlog, Dequeued, Qdisc};
use crate::wifi::WifiMac;
use rtclab_core::{Direction, Packet, Time, TimeDelta};

pub struct Link {
    capacity: CapacityModel,
    qdisc: AnyQdisc,
    /// Rate models: the packet on the wire and when its last bit leaves.
    in_service: Option<(Packet, Time)>,
    /// Opportunity models: the head packet and the bytes it still needs.
    partial: Option<(Packet, u32)>,
    next_opportunity: Option<Time>,
    /// Record every dequeue in `ElementOutput::dequeues` (a middlebox at this hop wants them).
    observed: bool,
    /// A wireless AP's MAC in place of the serializer.
    wifi: Option<Box<WifiMac>>,
    /// Per flow id: its data takes the links' reverse direction (`direction = "reverse"`), so
    /// its packets' `dir` is the opposite of the link direction they cross (`physical_dir`).
    reversed_flows: Vec<bool>,
}

impl Link {
    pub fn new(capacity: CapacityModel, qdisc: AnyQdisc) -> Self {
        Link {
            capacity,
            qdisc,
            in_service: None,
            partial: None,
            next_opportunity: None,
            observed: false,
            wifi: None,
            reversed_flows: Vec::new(),
        }
    }

    /// A wireless access point's link: `capacity` is the PHY rate (it must be a rate, not
    /// mahimahi opportunities).
    pub fn wifi(capacity: CapacityModel, qdisc: AnyQdisc, mac: WifiMac) -> Self {
        assert!(
            !matches!(capacity, CapacityModel::Opportunities(_)),
            "a wireless link needs a PHY rate, not delivery opportunities"
        );
        Link { wifi: Some(Box::new(mac)), ..Link::new(capacity, qdisc) }
    }

    /// The wireless MAC, for a wireless access point's link.
    pub fn wifi_mac(&self) -> Option<&WifiMac> {
        self.wifi.as_deref()
    }

    /// Reports every packet leaving the queue for the serializer in `out.dequeues`.
    pub fn set_observed(&mut self, on: bool) {
        self.observed = on;
    }

    pub fn qdisc(&self) -> &AnyQdisc {
        &self.qdisc
    }

    #[inline]
    fn pull(&mut self, at: Time, out: &mut ElementOutput) -> Option<Packet> {
        pull(&mut self.qdisc, self.observed, at, out)
    }

    /// Runs the queue discipline's own timer if it is due; true if it ran.
    fn run_qdisc_timer(&mut self, now: Time, out: &mut ElementOutput) -> bool {
        let due = self.qdisc.poll_timeout().is_some_and(|t| t <= now);
        if due {
            self.qdisc.handle_timeout(now, out);
        }
        due
    }

    pub fn capacity(&self) -> &CapacityModel {
        &self.capacity
    }

    /// Which flows are reversed (their data on the links' reverse direction), by flow id: a
    /// link carrying both directions needs it to tell which way a packet crosses it.
    pub fn set_reversed_flows(&mut self, reversed: Vec<bool>) {
        self.reversed_flows = reversed;
    }

    /// The direction of the link a packet crosses: its own `dir`, flipped for a reversed flow.
    #[inline]
    pub fn physical_dir(&self, pkt: &Packet) -> Direction {
        let flipped = self.reversed_flows.get(pkt.flow.0 as usize).copied().unwrap_or(false);
        match (pkt.dir, flipped) {
            (d, false) => d,
            (Direction::Forward, true) => Direction::Reverse,
            (Direction::Reverse, true) => Direction::Forward,
        }
    }

    /// Whether this link also carries its reverse direction (a Wi-Fi channel with `uplink`).
    pub fn carries_reverse(&self) -> bool {
        self.wifi.as_ref().is_some_and(|m| m.config().uplink)
    }

    /// The backlog of one direction: the reverse one is the uplink stations' (`carries_reverse`).
    pub fn backlog_of(&self, dir: Direction) -> Backlog {
        match (&self.wifi, dir == Direction::Reverse && self.carries_reverse()) {
            (Some(m), true) => m.uplink_backlog(),
            _ => self.backlog(),
        }
    }

    /// Packets and bytes waiting in the queue (excluding the one being serialized; for a
    /// wireless link the MAC queue counts, the PPDU on the air does not).
    pub fn backlog(&self) -> Backlog {
        let q = self.qdisc.backlog();
        match &self.wifi {
            None => q,
            Some(m) => q + m.backlog(),
        }
    }

    /// Packets held (queued or on the wire), counted as (data, acks).
    pub fn held_by_kind(&self) -> (u64, u64) {
        let mut held = self.qdisc.held_by_kind();
        if let Some(m) = &self.wifi {
            let w = m.held_by_kind();
            held = (held.0 + w.0, held.1 + w.1);
        }
        for p in self.in_service.map(|x| x.0).into_iter().chain(self.partial.map(|x| x.0)) {
            match p.kind {
                rtclab_core::PacketKind::Data => held.0 += 1,
                rtclab_core::PacketKind::Ack => held.1 += 1,
            }
        }
        held
    }

    /// Whether a packet is on the wire (or partly delivered, for opportunity traces).
    pub fn busy(&self) -> bool {
        self.wifi.as_ref().is_some_and(|m| m.busy())
            || self.in_service.is_some()
            || self.partial.is_some()
    }

    #[inline]
    fn start_next(&mut self, at: Time, out: &mut ElementOutput) {
        debug_assert!(self.in_service.is_none());
        if let Some(p) = self.pull(at, out) {
            let finish = self.capacity.finish_time(at, p.size as u64);
            self.in_service = Some((p, finish));
            if self.observed {
                if let Some(r) = out.dequeues.last_mut() {
                    r.leaves_at = Some(finish);
                }
            }
        }
    }

    fn run_opportunities(&mut self, now: Time, out: &mut ElementOutput) {
        let CapacityModel::Opportunities(ops) = &self.capacity else { unreachable!() };
        while let Some(at) = self.next_opportunity {
            if at > now {
                return;
            }
            let (t, count) = ops.next_at_or_after(at);
            debug_assert_eq!(t, at);
            let mut budget = count as u64 * ops.bytes_each() as u64;
            while budget > 0 {
                let (pkt, left) = match self.partial.take() {
                    Some(x) => x,
                    None => match pull(&mut self.qdisc, self.observed, at, out) {
                        Some(p) => (p, p.size),
                        None => break,
                    },
                };
                if (left as u64) <= budget {
                    budget -= left as u64;
                    out.packets.push(pkt);
                } else {
                    self.partial = Some((pkt, left - budget as u32));
                    budget = 0;
                }
            }
            self.next_opportunity = if self.partial.is_some() || self.qdisc.backlog().packets > 0 {
                Some(ops.next_at_or_after(at + TimeDelta::from_nanos(1)).0)
            } else {
                None
            };
        }
    }
}

/// The queue's next packet, its sojourn added to the packet's ground-truth queue delay.
#[inline(always)]
fn pull(q: &mut AnyQdisc, observed: bool, at: Time, out: &mut ElementOutput) -> Option<Packet> {
    let Dequeued { mut pkt, sojourn } = q.dequeue(at, out)?;
    pkt.queue_delay += sojourn;
    if observed {
        out.dequeues.push(DequeueRecord {
            pkt,
            sojourn,
            backlog: q.backlog(),
            aggregate: None,
            leaves_at: None,
        });
    }
    Some(pkt)
}

impl NetElement for Link {
    fn held_by_kind(&self) -> (u64, u64) {
        Link::held_by_kind(self)
    }
    #[inline]
    fn handle_packet(&mut self, now: Time, _dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        let uplink = self.carries_reverse() && self.physical_dir(&pkt) == Direction::Reverse;
        if let Some(m) = &mut self.wifi {
            if uplink {
                m.enqueue_uplink(now, pkt, out);
            } else {
                m.enqueue(now, pkt, &mut self.qdisc, out);
            }
            return;
        }
        self.qdisc.enqueue(now, pkt, out);
        match &self.capacity {
            CapacityModel::Opportunities(ops) => {
                if self.next_opportunity.is_none() && self.qdisc.backlog().packets > 0 {
                    self.next_opportunity = Some(ops.next_at_or_after(now).0);
                }
            }
            _ => {
                if self.in_service.is_none() {
                    self.start_next(now, out);
                }
            }
        }
    }

    #[inline]
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        if let Some(m) = &mut self.wifi {
            if self.qdisc.poll_timeout().is_some_and(|t| t <= now) {
                self.qdisc.handle_timeout(now, out);
                m.after_qdisc_timer(now, &mut self.qdisc, out);
            }
            m.handle_timeout(now, &self.capacity, &mut self.qdisc, self.observed, out);
            return;
        }
        if matches!(self.capacity, CapacityModel::Opportunities(_)) {
            self.run_qdisc_timer(now, out);
            if let CapacityModel::Opportunities(ops) = &self.capacity {
                if self.next_opportunity.is_none() && self.qdisc.backlog().packets > 0 {
                    self.next_opportunity = Some(ops.next_at_or_after(now).0);
                }
            }
            self.run_opportunities(now, out);
            return;
        }
        while let Some((pkt, finish)) = self.in_service {
            if finish > now {
                break;
            }
            self.in_service = None;
            out.packets.push(pkt);
            self.start_next(finish, out);
        }
        if self.run_qdisc_timer(now, out) && self.in_service.is_none() {
            self.start_next(now, out);
        }
    }

    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        let own = match (&self.wifi, self.in_service) {
            (Some(m), _) => m.poll_timeout(),
            (None, Some((_, finish))) => Some(finish),
            (None, None) => self.next_opportunity,
        };
        match self.qdisc.poll_timeout() {
            None => own,
            Some(q) => Some(own.map_or(q, |o| o.min(q))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capacity::Opportunities;
    use crate::qdisc::QueueLimit;
    use crate::queues::droptail::DropTail;
    use rtclab_core::{FlowId, Rate};

    fn drive(link: &mut Link, arrivals: &[(Time, u32)], until: Time) -> Vec<(Time, u64)> {
        let mut out = ElementOutput::default();
        let mut departures = Vec::new();
        let mut i = 0;
        loop {
            let next_arrival = arrivals.get(i).map(|a| a.0);
            let next_timer = link.poll_timeout();
            let now = match (next_arrival, next_timer) {
                (Some(a), Some(t)) => a.min(t),
                (Some(a), None) => a,
                (None, Some(t)) => t,
                (None, None) => break,
            };
            if now > until {
                break;
            }
            if next_timer == Some(now) {
                link.handle_timeout(now, &mut out);
            }
            if next_arrival == Some(now) {
                let p = Packet::data(FlowId(0), i as u64, arrivals[i].1, now);
                link.handle_packet(now, Direction::Forward, p, &mut out);
                i += 1;
            }
            for p in out.packets.drain(..) {
                departures.push((now, p.seq));
            }
        }
        departures
    }

    #[test]
    fn constant_rate_serializes_back_to_back() {
        let q = AnyQdisc::DropTail(DropTail::new(QueueLimit::Packets(10)));
        let mut l = Link::new(CapacityModel::Constant(Rate::from_mbps(12)), q);
        // 1500 B at 12 Mbit/s = 1 ms each.
        let d = drive(
            &mut l,
            &[(Time::ZERO, 1500), (Time::ZERO, 1500), (Time::ZERO, 1500)],
            Time::from_secs(1),
        );
        assert_eq!(
            d,
            vec![(Time::from_millis(1), 0), (Time::from_millis(2), 1), (Time::from_millis(3), 2)]
        );
    }

    #[test]
    fn opportunities_carry_partial_packets() {
        let ops = Opportunities::new(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 1504).unwrap();
        let q = AnyQdisc::DropTail(DropTail::new(QueueLimit::Packets(10)));
        let mut l = Link::new(CapacityModel::Opportunities(ops), q);
        // Two 1000 B packets: the first leaves at 1 ms (504 B left over go to the second),
        // the second needs 496 more bytes and leaves at 2 ms.
        let d = drive(&mut l, &[(Time::ZERO, 1000), (Time::ZERO, 1000)], Time::from_secs(1));
        assert_eq!(d, vec![(Time::from_millis(1), 0), (Time::from_millis(2), 1)]);
        // A 3000 B packet needs two opportunities.
        let d = drive(&mut l, &[(Time::from_millis(20), 3000)], Time::from_secs(1));
        assert_eq!(d, vec![(Time::from_millis(22), 0)]);
    }
}
