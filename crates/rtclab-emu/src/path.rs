//! One direction of the emulated network: shared elements (random loss, the bottleneck link)
//! followed by a per-flow propagation delay line, as the simulator builds them.
//!
//! The path runs as a small discrete-event loop up to the wall clock: `advance(now)` processes
//! every element deadline at or before `now` in deadline order, *at its deadline* (not at the
//! late wake-up time), so a late wake-up never shifts the schedule; packets leaving the last
//! hop are returned with their ideal release time, and the engine measures its lateness.

use rtclab_core::{Direction, Packet, Time, TimeDelta};
use rtclab_harness::link_meter::LinkMeter;
use rtclab_harness::{DirectionPart, MeterInfo, NO_HOP};
use rtclab_net::{AnyElement, Dropped, ElementOutput, Marked, NetElement};

pub struct Path {
    dir: Direction,
    elements: Vec<AnyElement>,
    /// Per element: the link meters it feeds (the simulator's bookkeeping).
    info: Vec<MeterInfo>,
    /// For each flow (index = flow id; the last entry serves unclassified packets): the
    /// element indices a packet crosses.
    routes: Vec<Vec<usize>>,
    out: ElementOutput,
    /// (ideal release time, packet) leaving the path, in order.
    pub released: Vec<(Time, Packet)>,
    pub dropped: Vec<Dropped>,
    /// Packets a queue marked CE (they travel on, carrying `Ecn::Ce`).
    pub marked: Vec<Marked>,
    /// One per (link, direction), `HopRef::index`; only this direction's are fed.
    pub meters: Vec<LinkMeter>,
    bin: TimeDelta,
    warmup: Time,
    next_bin_end: Time,
}

impl Path {
    /// `n_links`: links in the scenario; `bin`, `warmup`: the meters' bin and window start.
    pub fn new(
        dir: Direction,
        part: DirectionPart,
        n_links: usize,
        bin: TimeDelta,
        warmup: Time,
    ) -> Self {
        Path {
            dir,
            elements: part.elements,
            info: part.info,
            routes: part.routes,
            out: ElementOutput::default(),
            released: Vec::new(),
            dropped: Vec::new(),
            marked: Vec::new(),
            meters: vec![LinkMeter::default(); 2 * n_links.max(1)],
            bin,
            warmup,
            next_bin_end: Time::ZERO + bin,
        }
    }

    pub fn element(&self, i: usize) -> &AnyElement {
        &self.elements[i]
    }

    /// Index into `routes` for a flow id (unknown flows take the last route).
    fn route_of(&self, p: &Packet) -> usize {
        (p.flow.0 as usize).min(self.routes.len() - 1)
    }

    /// A packet enters the path at `now` (its `hop` is set here).
    pub fn inject(&mut self, now: Time, mut p: Packet) {
        self.close_bins_to(now);
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
        let entry = self.info[el].entry;
        if entry != NO_HOP {
            self.meters[entry as usize].on_offered(at >= self.warmup);
        }
        self.elements[el].handle_packet(at, self.dir, p, &mut self.out);
        self.after_element(el, at);
    }

    /// Meters what element `el` produced at `at`, then sends its packets on.
    fn after_element(&mut self, el: usize, at: Time) {
        let info = self.info[el];
        let w = at >= self.warmup;
        for d in &self.out.drops {
            if let Some(h) = info.drop_hop(d.pkt.dir) {
                self.meters[h].on_drop(w, d.reason);
            }
        }
        self.dropped.append(&mut self.out.drops);
        if info.hop != NO_HOP {
            for _ in &self.out.marks {
                self.meters[info.hop as usize].on_mark(w);
            }
        }
        self.marked.append(&mut self.out.marks);
        self.out.dequeues.clear(); // no dequeue observers in the emulator yet
        if info.is_link {
            let m = &mut self.meters[info.hop as usize];
            for p in &self.out.packets {
                m.on_departure(w, p.size as u64);
            }
            if let AnyElement::Link(l) = &self.elements[el] {
                m.on_backlog(at, l.backlog());
            }
        }
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

    /// Closes every meter bin that ends at or before `t`.
    pub fn close_bins_to(&mut self, t: Time) {
        while self.next_bin_end <= t {
            let end = self.next_bin_end;
            let start = end - self.bin;
            for (h, m) in self.meters.iter_mut().enumerate() {
                if h % 2 != self.dir.index() {
                    continue;
                }
                let bits = self
                    .info
                    .iter()
                    .zip(&self.elements)
                    .find(|(i, _)| i.is_link && i.hop as usize == h)
                    .and_then(|(_, e)| match e {
                        AnyElement::Link(l) => Some(l.capacity().bits_between(start, end)),
                        _ => None,
                    })
                    .unwrap_or(0.0);
                m.close_bin(end, self.bin, bits);
            }
            self.next_bin_end += self.bin;
        }
    }

    /// The earliest element deadline.
    pub fn next_deadline(&self) -> Option<Time> {
        self.elements.iter().filter_map(|e| e.poll_timeout()).min()
    }

    /// Runs every deadline up to `now`, each at its own time, closing meter bins on the way.
    pub fn advance(&mut self, now: Time) {
        loop {
            let next = self
                .elements
                .iter()
                .enumerate()
                .filter_map(|(i, e)| e.poll_timeout().map(|t| (t, i)))
                .min();
            let Some((t, i)) = next.filter(|(t, _)| *t <= now) else { break };
            self.close_bins_to(t);
            self.elements[i].handle_timeout(t, &mut self.out);
            self.after_element(i, t);
        }
        self.close_bins_to(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rtclab_core::{FlowId, Rate, SeedTree};
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
        let info = vec![
            MeterInfo { hop: 0, entry: 0, is_link: true },
            MeterInfo { hop: NO_HOP, entry: NO_HOP, is_link: false },
        ];
        let part = DirectionPart { elements: vec![link, delay], info, routes: vec![vec![0, 1]] };
        let bin = TimeDelta::from_millis(5);
        let mut path = Path::new(Direction::Forward, part, 1, bin, Time::ZERO);
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
        // The link meter saw them at their own times: all three left in the first 5 ms bin,
        // the queue held two packets at most.
        let m = &path.meters[0];
        assert_eq!((m.offered_packets, m.departed_packets, m.departed_bytes), (3, 3, 3600));
        assert_eq!(m.departed_per_bin()[..2], [3600, 0]);
        assert_eq!(m.bins(), 10);
    }
}
