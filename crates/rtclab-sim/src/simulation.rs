//! The event loop over the network the harness builds.
//!
//! `rtclab_harness::Network` turns the scenario's topology (links, per-flow paths,
//! middleboxes at hops; the `[link]` shorthand is the classic dumbbell) into elements and a
//! route per flow and direction:
//!
//! ```text
//! sender_i --fwd--> [middleboxes@l1] [l1: loss, queue + serializer, delay] ... [flow delay (rtt/2, jitter)] --> receiver_i
//! sender_i <--rev-- [flow delay (rtt/2)] ... [middleboxes@l1] [l1 reverse: loss, link, delay] <---------------- receiver_i
//! ```
//!
//! Elements live in one arena; an element may appear on both directions' routes
//! (middleboxes). Packets move between elements within the same instant without events; only
//! timers (link serialization, delay release, queue timers, endpoint timers, flow start/stop)
//! go through the event queue. Meters are kept per link direction; the first link is the one
//! `summary.link` and `link.parquet` describe.

use crate::event::{Event, EventQueue, TimerSlot};
use crate::metrics::{EngineStats, Meters, RunOutput};
use rtclab_core::{
    Direction, Endpoint, EndpointEvent, Packet, PacketInfo, PacketKind, SeedTree, Time, Transmit,
};
pub use rtclab_harness::endpoints::media_endpoints;
use rtclab_harness::endpoints::{flow_endpoints, sample_flow, AnyEndpoint};
use rtclab_harness::flow_meter::MeterWindow;
use rtclab_harness::measure::Columns;
use rtclab_harness::summarize::RunFacts;
use rtclab_harness::summary::EngineCounters;
use rtclab_harness::{MeterInfo, Network, Role, NO_HOP};
use rtclab_net::{AnyElement, DequeueRecord, ElementOutput, Link, NetElement};
use rtclab_scenario::Scenario;
use std::collections::VecDeque;

/// A flow's two endpoints, driven through the one `Endpoint` interface.
struct FlowState {
    snd: AnyEndpoint,
    rcv: AnyEndpoint,
    snd_timer: TimerSlot,
    rcv_timer: TimerSlot,
}

/// A transmitted packet, its payload (if any) moved into the payload store.
#[inline]
fn launch(t: Transmit, payloads: &mut rtclab_core::Payloads) -> Packet {
    let mut p = t.pkt;
    if let Some(payload) = t.payload {
        p.info = PacketInfo::Payload { id: payloads.insert(payload) };
    }
    p
}

pub struct Simulation {
    scenario: Scenario,
    seed: u64,
    now: Time,
    end: Time,
    queue: EventQueue,
    elements: Vec<AnyElement>,
    roles: Vec<Role>,
    /// Per element: what the meters need to know on the hot path.
    info: Vec<MeterInfo>,
    /// Per element that is a link: the middleboxes told of its dequeues.
    observers: Vec<Vec<u32>>,
    /// Per (link, direction): the link element, if any.
    link_elements: Vec<Option<u32>>,
    el_timers: Vec<TimerSlot>,
    flows: Vec<FlowState>,
    routes: Vec<[Vec<u32>; 2]>,
    out: ElementOutput,
    dequeued: Vec<DequeueRecord>,
    work: VecDeque<Packet>,
    meters: Meters,
    events: u64,
}

impl Simulation {
    /// Panics where [`Self::try_new`] fails.
    pub fn new(scenario: Scenario, seed: u64) -> Self {
        Self::try_new(scenario, seed).unwrap_or_else(|e| panic!("{e}"))
    }

    /// Builds the network and endpoints. Fails only where something from outside fails to
    /// build with settings the scenario layer already accepted (a registered controller's
    /// factory, a middlebox), with the reason.
    pub fn try_new(scenario: Scenario, seed: u64) -> Result<Self, rtclab_harness::BuildError> {
        let seeds = SeedTree::new(seed);
        let end = Time::ZERO + scenario.duration;
        let net = Network::build(&scenario, &seeds)?;
        let n = net.elements.len();
        let info = net.meter_info();
        let observers = net.observers_by_element();
        let mut flows = Vec::new();
        for f in &scenario.flows {
            let (snd, rcv) = flow_endpoints(f, &seeds)?;
            flows.push(FlowState {
                snd,
                rcv,
                snd_timer: TimerSlot::default(),
                rcv_timer: TimerSlot::default(),
            });
        }
        let mut queue = EventQueue::default();
        for f in &scenario.flows {
            queue.push(f.start, Event::FlowStart { flow: f.id });
            if f.stop < end {
                queue.push(f.stop, Event::FlowStop { flow: f.id });
            }
            for &(pause, resume) in &f.pauses {
                queue.push(pause, Event::FlowStop { flow: f.id });
                queue.push(resume, Event::FlowStart { flow: f.id });
            }
        }
        let window = MeterWindow {
            start: Time::ZERO + scenario.metrics.warmup,
            end,
            bin: scenario.metrics.bin,
        };
        let spans: Vec<(Time, Time)> = scenario.flows.iter().map(|f| (f.start, f.stop)).collect();
        let meters = Meters::new(spans, scenario.links.len(), window);
        Ok(Simulation {
            scenario,
            seed,
            now: Time::ZERO,
            end,
            queue,
            elements: net.elements,
            roles: net.roles,
            info,
            observers,
            link_elements: net.link_elements,
            el_timers: vec![TimerSlot::default(); n],
            flows,
            routes: net.routes,
            out: ElementOutput::default(),
            dequeued: Vec::new(),
            work: VecDeque::new(),
            meters,
            events: 0,
        })
    }

    pub fn now(&self) -> Time {
        self.now
    }
    pub fn seed(&self) -> u64 {
        self.seed
    }
    pub fn end(&self) -> Time {
        self.end
    }
    pub fn is_finished(&self) -> bool {
        self.now >= self.end
    }
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }
    /// A media flow's whole-run counters so far: (frames completed, their delays summed in
    /// seconds, freeze time in seconds); None for a flow index out of range.
    pub fn media_totals(&self, flow: usize) -> Option<(u64, f64, f64)> {
        self.meters.flows.get(flow).map(|f| {
            (f.run_frames, f.run_frame_delay_ns as f64 / 1e9, f.run_freeze_ns as f64 / 1e9)
        })
    }

    pub fn stats(&self) -> EngineStats {
        EngineStats { events: self.events, ..self.meters.stats }
    }

    /// Packets held inside network elements (queues, serializers, delay lines), by kind:
    /// (data, acks).
    pub fn packets_in_network(&self) -> (u64, u64) {
        let mut held = (0, 0);
        for e in &self.elements {
            let (d, a) = e.held_by_kind();
            held.0 += d;
            held.1 += a;
        }
        held
    }

    /// What elements made and absorbed (FastAck's forged ACKs and local retransmissions, the
    /// client ACKs it answered), summed: the conservation identities add them.
    pub fn packets_made_and_absorbed(&self) -> rtclab_net::element::MadeAbsorbed {
        let mut t = rtclab_net::element::MadeAbsorbed::default();
        for e in &self.elements {
            let m = e.made_and_absorbed();
            t.made.0 += m.made.0;
            t.made.1 += m.made.1;
            t.absorbed.0 += m.absorbed.0;
            t.absorbed.1 += m.absorbed.1;
        }
        t
    }

    /// Payloads (media feedback contents) held for packets still in flight (leak checks).
    pub fn pending_feedback(&self) -> usize {
        self.out.payloads.len()
    }

    /// Runs to the end of the scenario.
    pub fn run(&mut self) {
        while !self.step(u64::MAX) {}
    }

    /// Processes every event before `t` (capped at the scenario's end) and advances the
    /// clock to `t`. Returns true once the scenario has ended.
    pub fn run_until(&mut self, t: Time) -> bool {
        let t = t.min(self.end);
        while self.process_next_before(t) {}
        self.advance_clock(t);
        self.now >= self.end
    }

    /// Puts `element` on the route of every flow crossing the first link, in front of that
    /// link's queue and/or in front of the reverse path's access delay line (it is also told
    /// of the link's dequeues), so that one element sees data going one way
    /// and feedback coming back (a middlebox, e.g. a wireless access point). Call before the
    /// run starts. Returns the element's index.
    pub fn attach_middlebox(&mut self, element: AnyElement, forward: bool, reverse: bool) -> usize {
        assert!(self.now == Time::ZERO && self.events == 0, "attach middleboxes before running");
        self.elements.push(element);
        self.roles.push(Role::Middlebox { at: 0 });
        self.info.push(MeterInfo {
            hop: 0,
            entry: NO_HOP,
            is_link: false,
            both_ways: false,
            entry_rev: NO_HOP,
        });
        self.observers.push(Vec::new());
        self.el_timers.push(TimerSlot::default());
        let idx = (self.elements.len() - 1) as u32;
        let fwd_link = self.link_elements[0].expect("the first link has a forward bottleneck");
        self.observers[fwd_link as usize].push(idx);
        if let AnyElement::Link(l) = &mut self.elements[fwd_link as usize] {
            l.set_observed(true);
        }
        for route in &mut self.routes {
            if forward {
                let Some(at) = route[0].iter().position(|&e| e == fwd_link) else { continue };
                route[0].insert(at, idx);
            }
            if reverse {
                let at = route[1].len() - 1; // before the flow's own delay line
                route[1].insert(at, idx);
            }
        }
        idx as usize
    }

    /// Processes up to `max_events` events; returns true once the scenario has ended.
    pub fn step(&mut self, max_events: u64) -> bool {
        for _ in 0..max_events {
            if !self.process_next_before(self.end) {
                self.advance_clock(self.end);
                return true;
            }
        }
        false
    }

    /// Processes the earliest event if it is due before `limit`; false if none is.
    #[inline]
    fn process_next_before(&mut self, limit: Time) -> bool {
        match self.queue.peek_time() {
            Some(t) if t < limit => {
                let (t, ev) = self.queue.pop().expect("peeked");
                self.advance_clock(t);
                self.dispatch(ev);
                self.events += 1;
                true
            }
            _ => false,
        }
    }

    fn advance_clock(&mut self, t: Time) {
        while self.meters.next_bin_end <= t {
            let b_end = self.meters.next_bin_end;
            self.now = b_end;
            self.close_bin();
            if b_end >= self.end {
                break;
            }
        }
        self.now = t;
    }

    fn close_bin(&mut self) {
        let b_end = self.meters.next_bin_end;
        let b_start = b_end - self.meters.bin;
        let bits: Vec<f64> = self
            .link_elements
            .iter()
            .map(|e| {
                e.map_or(0.0, |e| self.link(e as usize).capacity().bits_between(b_start, b_end))
            })
            .collect();
        let (flows, scenario, elements, links) =
            (&self.flows, &self.scenario, &self.elements, &self.link_elements);
        self.meters.close_bin(&bits, |i| {
            let f = &scenario.flows[i];
            let mut s = sample_flow(&flows[i].snd, Some(&flows[i].rcv), f.kind.packet_size());
            // The class a classifying discipline on the flow's path holds it in (Confucius).
            let class = f.path.iter().find_map(|&l| match &elements[links[l * 2]? as usize] {
                AnyElement::Link(link) => {
                    rtclab_net::Qdisc::flow_class(link.qdisc(), rtclab_core::FlowId(f.id))
                }
                _ => None,
            });
            if let Some(c) = class {
                s.named.push(("queue_class", c as f64));
            }
            s
        });
    }

    fn link(&self, idx: usize) -> &Link {
        match &self.elements[idx] {
            AnyElement::Link(l) => l,
            _ => unreachable!("index {idx} is a link"),
        }
    }

    fn dispatch(&mut self, ev: Event) {
        let now = self.now;
        match ev {
            Event::Element { idx, gen } => {
                if self.el_timers[idx as usize].fire(gen) {
                    self.elements[idx as usize].handle_timeout(now, &mut self.out);
                    self.after_element(idx as usize);
                    self.drain_work();
                }
            }
            Event::Sender { flow, gen } => {
                if self.flows[flow as usize].snd_timer.fire(gen) {
                    self.flows[flow as usize].snd.handle_timeout(now);
                    self.pump_sender(flow as usize);
                    self.drain_work();
                }
            }
            Event::Receiver { flow, gen } => {
                if self.flows[flow as usize].rcv_timer.fire(gen) {
                    let Simulation { flows, meters, .. } = self;
                    let rcv = &mut flows[flow as usize].rcv;
                    rcv.handle_timeout(now);
                    let goodput = receiver_events(rcv, meters, now, flow as usize);
                    if goodput > 0 {
                        let ev = EndpointEvent::Delivered { goodput_bytes: goodput };
                        meters.flows[flow as usize].on_event(now, &ev);
                    }
                    self.pump_receiver(flow as usize);
                    self.drain_work();
                }
            }
            Event::FlowStart { flow } => {
                self.flows[flow as usize].snd.start(now);
                self.pump_sender(flow as usize);
                self.drain_work();
            }
            Event::FlowStop { flow } => self.flows[flow as usize].snd.stop(),
        }
    }

    /// Routes what element `idx` produced, records drops, marks and link departures, tells
    /// the link's observers of its dequeues, re-arms its timer.
    #[inline]
    fn after_element(&mut self, idx: usize) {
        let now = self.now;
        let info = self.info[idx];
        if !self.out.drops.is_empty() {
            if !self.observers[idx].is_empty() {
                self.tell_drop_observers(idx);
            }
            for d in self.out.drops.drain(..) {
                let h = info.drop_hop(d.pkt.dir);
                self.meters.on_drop(now, &d.pkt, d.reason, h);
                if let PacketInfo::Payload { id } = d.pkt.info {
                    self.out.payloads.take(id);
                }
            }
        }
        if !self.out.marks.is_empty() {
            let h = (info.hop != NO_HOP).then_some(info.hop as usize);
            for m in self.out.marks.drain(..) {
                self.meters.on_mark(now, &m.pkt, h);
            }
        }
        if info.is_link && info.both_ways {
            self.after_two_way_link(idx, info);
        } else if info.is_link {
            let h = info.hop as usize;
            for mut p in self.out.packets.drain(..) {
                self.meters.on_departure(now, h, &p);
                p.hop += 1;
                self.work.push_back(p);
            }
            let b = self.link(idx).backlog();
            self.meters.hops[h].on_backlog(now, b);
        } else {
            for mut p in self.out.packets.drain(..) {
                if p.hop == Packet::ORIGINATED {
                    // A packet the element made: it travels on from the element's place on
                    // its flow's route (an element makes packets only for flows whose route
                    // in that direction crosses it).
                    let route = &self.routes[p.flow.0 as usize][p.dir.index()];
                    let Some(at) = route.iter().position(|&e| e as usize == idx) else {
                        debug_assert!(false, "element {idx} made a packet off its route");
                        continue;
                    };
                    p.hop = at as u8;
                }
                p.hop += 1;
                self.work.push_back(p);
            }
        }
        let want = self.elements[idx].poll_timeout();
        self.el_timers[idx]
            .arm(&mut self.queue, want, |gen| Event::Element { idx: idx as u32, gen });
        if !self.out.dequeues.is_empty() {
            self.tell_observers(idx);
        }
    }

    /// `after_element` for a link carrying both directions (a Wi-Fi channel with uplink
    /// stations): each packet metered by its own direction, both directions' backlogs.
    #[cold]
    fn after_two_way_link(&mut self, idx: usize, info: MeterInfo) {
        let now = self.now;
        let mut pkts = std::mem::take(&mut self.out.packets);
        for mut p in pkts.drain(..) {
            let dir = self.link(idx).physical_dir(&p);
            self.meters.on_departure(now, info.hop_for(dir) as usize, &p);
            p.hop += 1;
            self.work.push_back(p);
        }
        self.out.packets = pkts;
        for dir in [Direction::Forward, Direction::Reverse] {
            let b = self.link(idx).backlog_of(dir);
            self.meters.hops[info.hop_for(dir) as usize].on_backlog(now, b);
        }
    }

    /// Tells the middleboxes observing link `idx` of the drops it just reported, their
    /// payloads still readable.
    #[cold]
    fn tell_drop_observers(&mut self, idx: usize) {
        let now = self.now;
        for &obs in &self.observers[idx] {
            for d in &self.out.drops {
                self.elements[obs as usize].observe_drop(now, &d.pkt, &self.out.payloads);
            }
        }
    }

    /// Hands the dequeues link `idx` just reported to the middleboxes observing it.
    #[cold]
    fn tell_observers(&mut self, idx: usize) {
        std::mem::swap(&mut self.dequeued, &mut self.out.dequeues);
        let now = self.now;
        for k in 0..self.observers[idx].len() {
            let obs = self.observers[idx][k] as usize;
            for r in &self.dequeued {
                self.elements[obs].observe_dequeue(now, r);
            }
            self.after_element(obs);
        }
        self.dequeued.clear();
    }

    #[inline]
    fn drain_work(&mut self) {
        let now = self.now;
        while let Some(pkt) = self.work.pop_front() {
            let route = &self.routes[pkt.flow.0 as usize][pkt.dir.index()];
            if let Some(&e) = route.get(pkt.hop as usize) {
                let info = self.info[e as usize];
                let entry = if info.both_ways {
                    info.entry_for(self.link(e as usize).physical_dir(&pkt))
                } else {
                    info.entry
                };
                if entry != NO_HOP {
                    self.meters.on_offered(now, entry as usize);
                }
                self.elements[e as usize].handle_packet(now, pkt.dir, pkt, &mut self.out);
                self.after_element(e as usize);
            } else {
                self.deliver(pkt);
            }
        }
    }

    #[inline]
    fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        let flow = pkt.flow.0 as usize;
        let payload = match pkt.info {
            PacketInfo::Payload { id } => self.out.payloads.take(id),
            _ => None,
        };
        match (pkt.dir, pkt.kind) {
            (Direction::Forward, PacketKind::Data) => {
                let Simulation { flows, meters, .. } = self;
                let rcv = &mut flows[flow].rcv;
                rcv.handle_packet(now, &pkt, payload);
                let goodput = receiver_events(rcv, meters, now, flow);
                meters.on_data_delivered(now, &pkt, goodput);
                self.pump_receiver(flow);
            }
            (Direction::Reverse, PacketKind::Ack) => {
                self.meters.stats.delivered_acks += 1;
                self.flows[flow].snd.handle_packet(now, &pkt, payload);
                self.pump_sender(flow);
            }
            _ => {}
        }
    }

    #[inline]
    fn pump_sender(&mut self, flow: usize) {
        let now = self.now;
        let Simulation { flows, meters, work, out, queue, .. } = self;
        let st = &mut flows[flow];
        while let Some(t) = st.snd.poll_transmit(now) {
            meters.on_sent(now, &t.pkt);
            work.push_back(launch(t, &mut out.payloads));
        }
        // Sender events (a media target change) are not metered yet: the controller's target
        // is sampled per bin instead.
        while st.snd.poll_event().is_some() {}
        // A time already past is due now: the clock never runs back (a controller from
        // outside, say a Python one, may name one).
        let want = st.snd.poll_timeout().map(|t| t.max(now));
        st.snd_timer.arm(queue, want, |gen| Event::Sender { flow: flow as u32, gen });
    }

    #[inline]
    fn pump_receiver(&mut self, flow: usize) {
        let now = self.now;
        let Simulation { flows, meters, work, out, queue, .. } = self;
        let st = &mut flows[flow];
        while let Some(t) = st.rcv.poll_transmit(now) {
            meters.stats.sent_acks += 1;
            work.push_back(launch(t, &mut out.payloads));
        }
        let want = st.rcv.poll_timeout().map(|t| t.max(now));
        st.rcv_timer.arm(queue, want, |gen| Event::Receiver { flow: flow as u32, gen });
    }

    /// Builds the summary and time series; call once the run has finished. The per-flow table's
    /// rows were written as their bins closed (`Meters::close_bin`).
    pub fn finish(&self) -> RunOutput {
        self.finish_with(self.meters.flow_columns())
    }

    /// The per-flow table alone (what `finish` returns as `flows`), for a caller that starts
    /// writing it before the summary is built; hand it back to [`Simulation::finish_with_flows`].
    pub fn flow_columns(&self) -> Columns {
        self.meters.flow_columns()
    }

    /// `finish`, given the per-flow table [`Simulation::flow_columns`] returned (not built twice).
    pub fn finish_with_flows(&self, flow_cols: Columns) -> RunOutput {
        self.finish_with(flow_cols)
    }

    /// The per-flow table built from the meters after the run, as the emulator builds it: the
    /// reference `finish`'s table (built as the bins closed) is tested against.
    #[doc(hidden)]
    pub fn flow_columns_after_the_run(&self) -> Columns {
        let flows = &self.scenario.flows;
        let active = |i: usize, t0: Time, t1: Time| flows[i].start < t1 && flows[i].stop > t0;
        self.meters.flow_columns_after_the_run(active)
    }

    /// Everything `finish` returns but the per-flow table, which it is given.
    fn finish_with(&self, flow_cols: Columns) -> RunOutput {
        let link_cols = self.meters.link_columns();
        let m = &self.meters;
        let fairness =
            rtclab_harness::summarize::fairness_columns(&self.scenario, &m.flows, m.closed);
        let stats = self.stats();
        let run = RunFacts {
            scenario: &self.scenario,
            seed: self.seed,
            engine: "sim",
            ran: self.scenario.duration,
            n_bins: m.closed,
            engine_stats: EngineCounters {
                events: Some(stats.events),
                delivered_packets: stats.delivered_packets,
                delivered_acks: stats.delivered_acks,
            },
        };
        let mut summary = rtclab_harness::summarize::build(
            run,
            &m.flows,
            &m.hops,
            &fairness,
            |i, out, frames| {
                let f = &self.flows[i];
                rtclab_harness::summary::endpoint_fields(out, &f.snd, &f.rcv, frames, None)
            },
        );
        // Wireless links' MAC counters (`summary.links[].wifi`).
        let run = self.now - Time::ZERO;
        rtclab_harness::summary::attach_wifi(&mut summary.links, &self.scenario, run, |h| {
            let e = self.link_elements.get(h).copied().flatten()?;
            self.link(e as usize).wifi_mac().map(|m| m.stats())
        });
        // The scenario's middleboxes (built first, in file order) and their figures.
        let mbs: Vec<usize> = rtclab_harness::network::middlebox_elements(&self.roles).collect();
        summary.middleboxes = rtclab_harness::summary::MiddleboxSummary::all(&self.scenario, |i| {
            mbs.get(i).map(|&e| self.elements[e].metrics())
        });
        let summary = summary.to_value();
        RunOutput {
            summary,
            flows: flow_cols,
            link: link_cols,
            fairness,
            interruptions: self.meters.interruption_columns(),
            distributions: self.meters.distribution_columns(),
            stats: self.stats(),
        }
    }
}

/// Hands a receiver's events to the meters; returns the goodput its `Delivered` events
/// reported (metered with the packet that carried it, `Meters::on_data_delivered`).
#[inline]
fn receiver_events(rcv: &mut AnyEndpoint, meters: &mut Meters, now: Time, flow: usize) -> u64 {
    let meter = &mut meters.flows[flow];
    let mut goodput = 0;
    while let Some(ev) = rcv.poll_event() {
        match ev {
            EndpointEvent::Delivered { goodput_bytes } => goodput += goodput_bytes,
            ev => meter.on_event(now, &ev),
        }
    }
    goodput
}
