//! One direction of the emulated network: shared elements (random loss, the bottleneck link)
//! followed by a per-flow propagation delay line, as the simulator builds them.
//!
//! The path runs as a small discrete-event loop up to the wall clock: `advance(now)` processes
//! every element deadline at or before `now` in deadline order, *at its deadline* (not at the
//! late wake-up time), so a late wake-up never shifts the schedule; packets leaving the last
//! hop are returned with their ideal release time, and the engine measures its lateness.

use rtclab_core::{Direction, Packet, Time, TimeDelta};
use rtclab_harness::link_meter::LinkMeter;
use rtclab_harness::{MeterInfo, Network, NO_HOP};
use rtclab_net::{AnyElement, DequeueRecord, Dropped, ElementOutput, Marked, NetElement};

pub struct Path {
    elements: Vec<AnyElement>,
    /// Per element: the link meters it feeds (the simulator's bookkeeping).
    info: Vec<MeterInfo>,
    /// For each flow (index = flow id; the last entry serves unclassified packets): the
    /// element indices a packet crosses, `[forward, reverse]`.
    routes: Vec<[Vec<usize>; 2]>,
    /// Per element that is a link: the middleboxes told of its dequeues.
    observers: Vec<Vec<usize>>,
    /// Per (link, direction): the link element, if that direction has one.
    link_of_hop: Vec<Option<usize>>,
    /// Per scenario middlebox (in file order): its element, if this path holds it.
    middlebox_elements: Vec<Option<usize>>,
    out: ElementOutput,
    dequeued: Vec<DequeueRecord>,
    /// (ideal release time, packet) leaving the network, in order (both directions).
    pub released: Vec<(Time, Packet)>,
    pub dropped: Vec<Dropped>,
    /// Packets a queue marked CE (they travel on, carrying `Ecn::Ce`).
    pub marked: Vec<Marked>,
    /// One per (link, direction), `HopRef::index`.
    pub meters: Vec<LinkMeter>,
    bin: TimeDelta,
    warmup: Time,
    next_bin_end: Time,
    /// Per flow: its forward links (scenario indices), and per closed bin the class a
    /// classifying queue discipline on them (Confucius) holds it in, NaN where none does.
    flow_links: Vec<Vec<usize>>,
    classes: Vec<Vec<f64>>,
}

impl Path {
    /// The whole network, both directions (`bin`, `warmup`: the meters' bin and window
    /// start). Unclassified packets take the first flow's routes.
    pub fn new(net: Network, n_links: usize, bin: TimeDelta, warmup: Time) -> Self {
        let side = vec![0; net.elements.len()];
        let mut parts = Self::partition(net, &side, 1, n_links, bin, warmup);
        parts.pop().expect("one part")
    }

    /// The network as one path per direction — `[forward, reverse]`, each runnable on its own
    /// thread — when no element is shared by the two directions (on both directions' routes, or
    /// observing a link of the other direction); otherwise the whole network as one path. A
    /// forwarding loop per direction spreads the device reads and writes, which dominate the
    /// emulator's cost, over two cores (docs/benchmarks.md).
    pub fn per_direction(net: Network, n_links: usize, bin: TimeDelta, warmup: Time) -> Vec<Self> {
        match Self::direction_of_elements(&net) {
            Some(side) => Self::partition(net, &side, 2, n_links, bin, warmup),
            None => vec![Self::new(net, n_links, bin, warmup)],
        }
    }

    /// Per element, the one direction (0 forward, 1 reverse) whose packets it handles, or
    /// `None` if some element serves both. Elements on no route go with the forward side.
    fn direction_of_elements(net: &Network) -> Option<Vec<usize>> {
        // A reversed flow's data route holds reverse-direction links, which the per-direction
        // split (and its meter bookkeeping, by link direction) does not expect: one loop.
        if net.any_reversed {
            return None;
        }
        let mut side: Vec<Option<usize>> = vec![None; net.elements.len()];
        let mut claim = |e: usize, d: usize| match side[e] {
            Some(x) if x != d => false,
            _ => {
                side[e] = Some(d);
                true
            }
        };
        for r in &net.routes {
            for (d, hops) in r.iter().enumerate() {
                if !hops.iter().all(|&e| claim(e as usize, d)) {
                    return None;
                }
            }
        }
        // A middlebox told of a link's dequeues works on that link's side.
        for (li, obs) in net.observers.iter().enumerate() {
            if let Some(l) = net.link_elements.get(li * 2).copied().flatten() {
                if !obs.iter().all(|&o| claim(o as usize, 0) && claim(l as usize, 0)) {
                    return None;
                }
            }
        }
        Some(side.into_iter().map(|s| s.unwrap_or(0)).collect())
    }

    /// Moves the network's elements into `n` paths, element `e` into path `side[e]`, each
    /// path keeping the routes (per direction: those of its side, if all their elements are
    /// its own) and feeding its own copy of every link meter (the engine keeps, per meter,
    /// the copy of the path that owns the meter's direction).
    fn partition(
        net: Network,
        side: &[usize],
        n: usize,
        n_links: usize,
        bin: TimeDelta,
        warmup: Time,
    ) -> Vec<Self> {
        let info_all = net.meter_info();
        let observers_all = net.observers_by_element();
        let mut local = vec![0usize; side.len()];
        let mut count = vec![0usize; n];
        for (e, &s) in side.iter().enumerate() {
            local[e] = count[s];
            count[s] += 1;
        }
        let mut parts: Vec<Path> = (0..n)
            .map(|p| {
                let mut routes: Vec<[Vec<usize>; 2]> = net
                    .routes
                    .iter()
                    .map(|r| {
                        r.clone().map(|hops| {
                            if hops.iter().all(|&e| side[e as usize] == p) {
                                hops.into_iter().map(|e| local[e as usize]).collect()
                            } else {
                                Vec::new()
                            }
                        })
                    })
                    .collect();
                routes.push(routes.first().cloned().unwrap_or_default());
                let link_of_hop = net
                    .link_elements
                    .iter()
                    .map(|l| l.map(|e| e as usize).filter(|&e| side[e] == p).map(|e| local[e]))
                    .collect();
                let middlebox_elements = rtclab_harness::network::middlebox_elements(&net.roles)
                    .map(|e| (side[e] == p).then_some(local[e]))
                    .collect();
                Path {
                    elements: Vec::with_capacity(count[p]),
                    info: Vec::with_capacity(count[p]),
                    routes,
                    observers: Vec::with_capacity(count[p]),
                    link_of_hop,
                    middlebox_elements,
                    out: ElementOutput::default(),
                    dequeued: Vec::new(),
                    released: Vec::new(),
                    dropped: Vec::new(),
                    marked: Vec::new(),
                    meters: vec![LinkMeter::default(); 2 * n_links.max(1)],
                    bin,
                    warmup,
                    next_bin_end: Time::ZERO + bin,
                    flow_links: Vec::new(),
                    classes: Vec::new(),
                }
            })
            .collect();
        for (e, el) in net.elements.into_iter().enumerate() {
            let part = &mut parts[side[e]];
            part.elements.push(el);
            part.info.push(info_all[e]);
            part.observers.push(observers_all[e].iter().map(|&o| local[o as usize]).collect());
        }
        parts
    }

    /// The payload store of the packets in this path (the emulator keeps each packet's bytes
    /// there; elements reach them through `ElementOutput::payloads`).
    pub fn payloads(&mut self) -> &mut rtclab_core::Payloads {
        &mut self.out.payloads
    }

    /// Removes and returns a packet's payload (it was released or dropped).
    pub fn take_payload(&mut self, p: &Packet) -> Option<rtclab_core::Payload> {
        match p.info {
            rtclab_core::PacketInfo::Payload { id } => self.out.payloads.take(id),
            _ => None,
        }
    }

    pub fn element(&self, i: usize) -> &AnyElement {
        &self.elements[i]
    }

    /// Index into `routes` for a flow id (unknown flows take the last route).
    fn route_of(&self, p: &Packet) -> usize {
        (p.flow.0 as usize).min(self.routes.len() - 1)
    }

    /// A packet enters the network at `now` in its direction `p.dir` (its `hop` is set here).
    pub fn inject(&mut self, now: Time, mut p: Packet) {
        self.close_bins_to(now);
        p.hop = 0;
        self.deliver(now, p);
    }

    fn deliver(&mut self, at: Time, mut p: Packet) {
        let r = self.route_of(&p);
        let Some(&el) = self.routes[r][p.dir.index()].get(p.hop as usize) else {
            self.released.push((at, p));
            return;
        };
        p.hop += 1;
        let info = self.info[el];
        let entry = match (&self.elements[el], info.both_ways) {
            (AnyElement::Link(l), true) => info.entry_for(l.physical_dir(&p)),
            _ => info.entry,
        };
        if entry != NO_HOP {
            self.meters[entry as usize].on_offered(at >= self.warmup);
        }
        self.elements[el].handle_packet(at, p.dir, p, &mut self.out);
        self.after_element(el, at);
    }

    /// Meters what element `el` produced at `at`, tells its observers of its dequeues, then
    /// sends its packets on.
    fn after_element(&mut self, el: usize, at: Time) {
        let info = self.info[el];
        let w = at >= self.warmup;
        for d in &self.out.drops {
            if let Some(h) = info.drop_hop(d.pkt.dir) {
                self.meters[h].on_drop(w, d.reason);
            }
            for &obs in &self.observers[el] {
                self.elements[obs].observe_drop(at, &d.pkt, &self.out.payloads);
            }
        }
        self.dropped.append(&mut self.out.drops);
        if info.hop != NO_HOP {
            for _ in &self.out.marks {
                self.meters[info.hop as usize].on_mark(w);
            }
        }
        self.marked.append(&mut self.out.marks);
        if info.is_link && info.both_ways {
            // A Wi-Fi channel with uplink stations: each direction its own meter.
            if let AnyElement::Link(l) = &self.elements[el] {
                for p in &self.out.packets {
                    self.meters[info.hop_for(l.physical_dir(p)) as usize]
                        .on_departure(w, p.size as u64);
                }
                for dir in [Direction::Forward, Direction::Reverse] {
                    self.meters[info.hop_for(dir) as usize].on_backlog(at, l.backlog_of(dir));
                }
            }
        } else if info.is_link {
            let m = &mut self.meters[info.hop as usize];
            for p in &self.out.packets {
                m.on_departure(w, p.size as u64);
            }
            if let AnyElement::Link(l) = &self.elements[el] {
                m.on_backlog(at, l.backlog());
            }
        }
        let pkts = std::mem::take(&mut self.out.packets);
        if !self.out.dequeues.is_empty() {
            self.tell_observers(el, at);
        }
        for p in &pkts {
            self.deliver(at, *p);
        }
        let mut pkts = pkts;
        pkts.clear();
        if self.out.packets.is_empty() {
            self.out.packets = pkts;
        }
    }

    /// Hands the dequeues link `el` just reported to the middleboxes observing it.
    fn tell_observers(&mut self, el: usize, at: Time) {
        std::mem::swap(&mut self.dequeued, &mut self.out.dequeues);
        for k in 0..self.observers[el].len() {
            let obs = self.observers[el][k];
            for r in &self.dequeued {
                self.elements[obs].observe_dequeue(at, r);
            }
            self.after_element(obs, at);
        }
        self.dequeued.clear();
    }

    /// Per (link, direction), `HopRef::index`: a wireless link's MAC counters (None for
    /// other links, and for hops this path does not hold).
    pub fn wifi_stats(&self) -> Vec<Option<rtclab_net::WifiStats>> {
        (0..self.meters.len())
            .map(|h| match self.link_of_hop.get(h).copied().flatten().map(|e| &self.elements[e]) {
                Some(AnyElement::Link(l)) => l.wifi_mac().map(|m| m.stats()),
                _ => None,
            })
            .collect()
    }

    /// Per scenario middlebox: its figures (`NetElement::metrics`), if this path holds it.
    pub fn middlebox_metrics(&self) -> Vec<Option<Vec<(&'static str, f64)>>> {
        self.middlebox_elements.iter().map(|e| e.map(|e| self.elements[e].metrics())).collect()
    }

    /// Each flow's forward links (scenario indices), for the per-bin `queue_class` series.
    pub fn set_flow_links(&mut self, links: Vec<Vec<usize>>) {
        self.classes = vec![Vec::new(); links.len()];
        self.flow_links = links;
    }

    /// Per flow: the class held at the end of each bin, None if no element of this path
    /// classified it.
    pub fn take_queue_classes(&mut self) -> Vec<Option<Vec<f64>>> {
        std::mem::take(&mut self.classes)
            .into_iter()
            .map(|c| c.iter().any(|x| x.is_finite()).then_some(c))
            .collect()
    }

    /// Closes every meter bin that ends at or before `t`.
    pub fn close_bins_to(&mut self, t: Time) {
        while self.next_bin_end <= t {
            for (f, links) in self.flow_links.iter().enumerate() {
                let class = links.iter().find_map(|&l| {
                    match self.link_of_hop.get(l * 2).copied().flatten().map(|e| &self.elements[e])
                    {
                        Some(AnyElement::Link(link)) => rtclab_net::Qdisc::flow_class(
                            link.qdisc(),
                            rtclab_core::FlowId(f as u32),
                        ),
                        _ => None,
                    }
                });
                self.classes[f].push(class.map_or(f64::NAN, |c| c as f64));
            }
            let end = self.next_bin_end;
            let start = end - self.bin;
            for (h, m) in self.meters.iter_mut().enumerate() {
                let bits =
                    match self.link_of_hop.get(h).copied().flatten().map(|e| &self.elements[e]) {
                        Some(AnyElement::Link(l)) => l.capacity().bits_between(start, end),
                        _ => 0.0,
                    };
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
    use rtclab_core::{Direction, FlowId, SeedTree};

    fn path(extra: &str) -> Path {
        // 1200 B at 9.6 Mbit/s = 1 ms each; the flow's 20 ms RTT is 10 ms each way.
        let text = format!(
            "duration = \"5s\"\n[link]\ncapacity = \"9600kbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\n{extra}"
        );
        let s = rtclab_scenario::from_toml_str(&text, std::path::Path::new(".")).unwrap();
        let net = Network::build(&s, &SeedTree::new(1)).unwrap();
        Path::new(net, s.links.len(), TimeDelta::from_millis(5), Time::ZERO)
    }

    #[test]
    fn late_wakeups_keep_the_ideal_schedule() {
        let mut path = path("");
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
        // The link meter saw them at their own times: all three left in the first 5 ms bin.
        let m = &path.meters[0];
        assert_eq!((m.offered_packets, m.departed_packets, m.departed_bytes), (3, 3, 3600));
        assert_eq!(m.departed_per_bin()[..2], [3600, 0]);
        assert_eq!(m.bins(), 10);
    }

    #[test]
    fn a_packets_bytes_sit_in_the_store_elements_read_until_it_leaves() {
        let mut path = path("");
        let bytes = vec![0x45u8, 0, 0, 28];
        let id = path.payloads().insert(rtclab_core::Payload::bytes(bytes.clone()));
        let mut p = Packet::data(FlowId(0), 0, 1200, Time::ZERO);
        p.info = rtclab_core::PacketInfo::Payload { id };
        path.inject(Time::ZERO, p);
        path.advance(Time::from_millis(5));
        // In flight: every element is handed this store (`ElementOutput::payloads`).
        let seen = path.out.payloads.get(id).and_then(|x| x.downcast_ref::<Vec<u8>>());
        assert_eq!(seen, Some(&bytes));
        path.advance(Time::from_millis(50));
        let (_, out) = path.released[0];
        let got = path.take_payload(&out).unwrap();
        assert_eq!(got.downcast_ref::<Vec<u8>>(), Some(&bytes));
        assert_eq!(path.out.payloads.len(), 0, "nothing left behind");
    }

    fn parts(extra: &str) -> Vec<Path> {
        let text = format!(
            "duration = \"5s\"\n[link]\ncapacity = \"9600kbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\n{extra}"
        );
        let s = rtclab_scenario::from_toml_str(&text, std::path::Path::new(".")).unwrap();
        let net = Network::build(&s, &SeedTree::new(1)).unwrap();
        Path::per_direction(net, s.links.len(), TimeDelta::from_millis(5), Time::ZERO)
    }

    #[test]
    fn directions_get_a_path_each_unless_an_element_serves_both() {
        let mut split = parts("[reverse_link]\ncapacity = \"1Mbps\"\n");
        assert_eq!(split.len(), 2);
        // Each part forwards its own direction exactly as the whole network does.
        split[0].inject(Time::ZERO, Packet::data(FlowId(0), 0, 1200, Time::ZERO));
        let mut ack = Packet::ack(FlowId(0), 1, Time::ZERO, 125, Time::ZERO);
        ack.dir = Direction::Reverse;
        split[1].inject(Time::ZERO, ack);
        for p in &mut split {
            p.advance(Time::from_millis(100));
        }
        assert_eq!(
            split[0].released.iter().map(|x| x.0).collect::<Vec<_>>(),
            [Time::from_millis(11)]
        );
        // 125 B at 1 Mbit/s = 1 ms on the reverse link, then 10 ms.
        assert_eq!(
            split[1].released.iter().map(|x| x.0).collect::<Vec<_>>(),
            [Time::from_millis(11)]
        );
        // Each part meters its own direction of the bottleneck (meter 0 forward, 1 reverse).
        assert_eq!(split[0].meters[0].departed_packets, 1);
        assert_eq!(split[1].meters[1].departed_packets, 1);
        assert_eq!(split[0].meters[1].departed_packets, 0);
        // A middlebox on both directions keeps the network whole.
        let whole = parts(
            "[[middleboxes]]\nkind = \"ack_aggregation\"\nat = \"bottleneck\"\ninterval_ms = 20\n",
        );
        assert_eq!(whole.len(), 1);
    }

    #[test]
    fn one_network_carries_both_directions_through_a_shared_middlebox() {
        // ACK aggregation at the bottleneck sees data going out and holds ACKs coming back.
        let mut path = path(
            "[[middleboxes]]\nkind = \"ack_aggregation\"\nat = \"bottleneck\"\ninterval_ms = 20\n",
        );
        path.inject(Time::ZERO, Packet::data(FlowId(0), 0, 1200, Time::ZERO));
        let mut ack = Packet::ack(FlowId(0), 1, Time::ZERO, 40, Time::ZERO);
        ack.dir = Direction::Reverse;
        path.inject(Time::from_millis(1), ack);
        path.advance(Time::from_millis(100));
        let dirs: Vec<Direction> = path.released.iter().map(|x| x.1.dir).collect();
        assert_eq!(dirs, vec![Direction::Forward, Direction::Reverse]);
        // The ACK waited for the aggregation interval, then its 10 ms of delay.
        let ack_at = path.released[1].0;
        assert!(ack_at >= Time::from_millis(20), "{ack_at:?}");
    }
}
