//! One direction of the emulated network: shared elements (random loss, the bottleneck link)
//! followed by a per-flow propagation delay line, as the simulator builds them.
//!
//! The path runs as a small discrete-event loop up to the wall clock: `advance(now)` processes
//! every element deadline at or before `now` in deadline order, *at its deadline* (not at the
//! late wake-up time), so a late wake-up never shifts the schedule; packets leaving the last
//! hop are returned with their ideal release time, and the engine measures its lateness.

use rtclab_core::{Direction, Packet, Time};
use rtclab_net::{AnyElement, Dropped, ElementOutput, Marked, NetElement};

pub struct Path {
    dir: Direction,
    elements: Vec<AnyElement>,
    /// For each flow (index = flow id; the last entry serves unclassified packets): the
    /// element indices a packet crosses.
    routes: Vec<Vec<usize>>,
    out: ElementOutput,
    /// (ideal release time, packet) leaving the path, in order.
    pub released: Vec<(Time, Packet)>,
    pub dropped: Vec<Dropped>,
    /// Packets a queue marked CE (they travel on, carrying `Ecn::Ce`).
    pub marked: Vec<Marked>,
}

impl Path {
    pub fn new(dir: Direction, elements: Vec<AnyElement>, routes: Vec<Vec<usize>>) -> Self {
        Path {
            dir,
            elements,
            routes,
            out: ElementOutput::default(),
            released: Vec::new(),
            dropped: Vec::new(),
            marked: Vec::new(),
        }
    }

    pub fn element(&self, i: usize) -> &AnyElement {
        &self.elements[i]
    }

    /// Bytes waiting in the path's bottleneck link, if it has one.
    pub fn link_backlog_bytes(&self) -> Option<u64> {
        self.elements.iter().find_map(|e| match e {
            AnyElement::Link(l) => Some(l.backlog().bytes),
            _ => None,
        })
    }

    /// Index into `routes` for a flow id (unknown flows take the last route).
    fn route_of(&self, p: &Packet) -> usize {
        (p.flow.0 as usize).min(self.routes.len() - 1)
    }

    /// A packet enters the path at `now` (its `hop` is set here).
    pub fn inject(&mut self, now: Time, mut p: Packet) {
        p.hop = 0;
        p.dir = self.dir;
        self.deliver(now, p);
    }

    fn deliver(&mut self, at: Time, mut p: Packet) {
        let r = self.route_of(&p);
        let Some(&el) = self.routes[r].get(p.hop as usize) else {
            self.released.push((at, p));
            return;
        };
        p.hop += 1;
        self.elements[el].handle_packet(at, self.dir, p, &mut self.out);
        self.drain_out(at);
    }

    fn drain_out(&mut self, at: Time) {
        self.dropped.append(&mut self.out.drops);
        self.marked.append(&mut self.out.marks);
        self.out.dequeues.clear(); // no dequeue observers in the emulator yet
        let pkts = std::mem::take(&mut self.out.packets);
        for p in &pkts {
            self.deliver(at, *p);
        }
        let mut pkts = pkts;
        pkts.clear();
        if self.out.packets.is_empty() {
            self.out.packets = pkts;
        }
    }

    /// The earliest element deadline.
    pub fn next_deadline(&self) -> Option<Time> {
        self.elements.iter().filter_map(|e| e.poll_timeout()).min()
    }

    /// Runs every deadline up to `now`, each at its own time.
    pub fn advance(&mut self, now: Time) {
        loop {
            let next = self
                .elements
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.poll_timeout().map(|t| (t, i)))
                .min();
            let Some((t, i)) = next.filter(|(t, _)| *t <= now) else { return };
            self.elements[i].handle_timeout(t, &mut self.out);
            self.drain_out(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::{FlowId, Rate, SeedTree, TimeDelta};
    use rtclab_net::{AnyQdisc, CapacityModel, DelayLine, DropTail, Link, QueueLimit};

    #[test]
    fn late_wakeups_keep_the_ideal_schedule() {
        // 1200 B at 9.6 Mbit/s = 1 ms each, then 10 ms of delay.
        let cap = CapacityModel::Constant(Rate::from_kbps(9_600));
        let link = AnyElement::Link(Box::new(Link::new(
            cap,
            AnyQdisc::DropTail(DropTail::new(QueueLimit::Packets(100))),
        )));
        let delay = AnyElement::Delay(DelayLine::new(
            TimeDelta::from_millis(10),
            TimeDelta::ZERO,
            SeedTree::new(1).stream("d"),
        ));
        let mut path = Path::new(Direction::Forward, vec![link, delay], vec![vec![0, 1]]);
        for i in 0..3 {
            path.inject(Time::ZERO, Packet::data(FlowId(0), i, 1200, Time::ZERO));
        }
        // Woken up 50 ms late: every packet still gets its ideal release time.
        path.advance(Time::from_millis(50));
        let times: Vec<Time> = path.released.iter().map(|x| x.0).collect();
        assert_eq!(
            times,
            vec![Time::from_millis(11), Time::from_millis(12), Time::from_millis(13)]
        );
    }
}
