//! Wiring and the event loop.
//!
//! Topology (a dumbbell; each direction has its own bottleneck):
//!
//! ```text
//! sender_i --fwd--> [loss] -> [forward link: qdisc + serializer] -> [delay_i (rtt/2, jitter)] --> receiver_i
//! sender_i <--rev-- [delay_i' (rtt/2)] <- [reverse link] <- [loss] <------------------------------ receiver_i
//! ```
//!
//! Elements live in one arena; each flow has a route (element indices) per direction, and an
//! element may appear on both directions' routes (middleboxes). Packets move between elements
//! within the same instant without events; only timers (link serialization, delay release,
//! endpoint timers, flow start/stop) go through the event queue.

use crate::event::{Event, EventQueue, TimerSlot};
use crate::metrics::{CcSample, EngineStats, Meters, RunOutput};
use crate::summary;
use rtclab_cc::{AnyController, CongestionController, Cubic, Reno};
use rtclab_core::{Direction, FlowId, Packet, PacketKind, SeedTree, Time, TimeDelta};
use rtclab_media::receiver::{feedback_wire_size, MediaReceiver};
use rtclab_media::sender::{MediaFeedback, MediaSender};
use rtclab_net::{AnyElement, DelayLine, ElementOutput, Link, LossElement, NetElement};
use rtclab_scenario::{CcSpec, FlowKindSpec, MediaCcSpec, MediaSpec, Scenario};
use rtclab_transport::{
    CbrConfig, CbrSender, TcpReceiver, TcpReceiverConfig, TcpSender, TcpSenderConfig,
};
use std::collections::BTreeMap;
use std::collections::VecDeque;

// Endpoints are few (one per flow) and accessed in place: the size difference is harmless.
#[allow(clippy::large_enum_variant)]
enum Endpoint {
    Tcp { sender: TcpSender, receiver: TcpReceiver },
    Cbr { sender: CbrSender },
    Media { sender: Box<MediaSender>, receiver: Box<MediaReceiver> },
}

struct FlowState {
    ep: Endpoint,
    snd_timer: TimerSlot,
    rcv_timer: TimerSlot,
}

/// Which link meter an element feeds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    Plain,
    ForwardLink,
    ReverseLink,
}

pub struct Simulation {
    scenario: Scenario,
    seed: u64,
    now: Time,
    end: Time,
    queue: EventQueue,
    elements: Vec<AnyElement>,
    roles: Vec<Role>,
    el_timers: Vec<TimerSlot>,
    flows: Vec<FlowState>,
    routes: Vec<[Vec<u32>; 2]>,
    out: ElementOutput,
    work: VecDeque<Packet>,
    meters: Meters,
    fwd_link: usize,
    rev_link: Option<usize>,
    events: u64,
    /// Content of media feedback packets in flight, by the id their packet carries.
    feedback: BTreeMap<u32, MediaFeedback>,
    next_feedback_id: u32,
}

impl Simulation {
    pub fn new(scenario: Scenario, seed: u64) -> Self {
        let seeds = SeedTree::new(seed);
        let end = Time::ZERO + scenario.duration;
        let mut elements: Vec<AnyElement> = Vec::new();
        let mut roles = Vec::new();
        let mut push = |e: AnyElement, r: Role, roles: &mut Vec<Role>| {
            elements.push(e);
            roles.push(r);
            (elements.len() - 1) as u32
        };
        // Shared elements.
        let mut fwd_shared = Vec::new();
        if let Some(m) = scenario.forward.loss {
            fwd_shared.push(push(
                AnyElement::Loss(LossElement::new(m, seeds.stream("link.loss"))),
                Role::Plain,
                &mut roles,
            ));
        }
        let fwd_link = push(
            AnyElement::Link(Box::new(scenario.forward.build_link())),
            Role::ForwardLink,
            &mut roles,
        );
        fwd_shared.push(fwd_link);
        let mut rev_shared = Vec::new();
        let mut rev_link = None;
        if let Some(r) = &scenario.reverse {
            if let Some(m) = r.loss {
                rev_shared.push(push(
                    AnyElement::Loss(LossElement::new(m, seeds.stream("reverse_link.loss"))),
                    Role::Plain,
                    &mut roles,
                ));
            }
            let idx =
                push(AnyElement::Link(Box::new(r.build_link())), Role::ReverseLink, &mut roles);
            rev_shared.push(idx);
            rev_link = Some(idx as usize);
        }
        // Per-flow delay lines and endpoints.
        let mut flows = Vec::new();
        let mut routes = Vec::new();
        for f in &scenario.flows {
            let half = TimeDelta::from_nanos(f.rtt.as_nanos() / 2);
            let rest = f.rtt - half;
            let fwd_delay = push(
                AnyElement::Delay(DelayLine::new(
                    half,
                    f.jitter,
                    seeds.stream(&format!("flow{}.jitter", f.id)),
                )),
                Role::Plain,
                &mut roles,
            );
            let rev_delay = push(
                AnyElement::Delay(DelayLine::new(
                    rest,
                    TimeDelta::ZERO,
                    seeds.stream(&format!("flow{}.rev", f.id)),
                )),
                Role::Plain,
                &mut roles,
            );
            let mut fwd = fwd_shared.clone();
            fwd.push(fwd_delay);
            let mut rev = rev_shared.clone();
            rev.push(rev_delay);
            routes.push([fwd, rev]);
            let id = FlowId(f.id);
            let ep = match &f.kind {
                FlowKindSpec::Tcp { cc, packet_size, ack_every, app_rate } => {
                    let cc = window_controller(cc, &seeds, f.id);
                    let scfg = TcpSenderConfig {
                        packet_size: *packet_size,
                        app_rate: *app_rate,
                        ..Default::default()
                    };
                    let rcfg = TcpReceiverConfig { ack_every: *ack_every, ..Default::default() };
                    Endpoint::Tcp {
                        sender: TcpSender::new(id, scfg, cc),
                        receiver: TcpReceiver::new(id, rcfg),
                    }
                }
                FlowKindSpec::Cbr { rate, packet_size } => Endpoint::Cbr {
                    sender: CbrSender::new(
                        id,
                        CbrConfig { rate: *rate, packet_size: *packet_size },
                    ),
                },
                FlowKindSpec::Media(m) => {
                    let (sender, receiver) = media_endpoints(f.id, m, &seeds);
                    Endpoint::Media { sender: Box::new(sender), receiver: Box::new(receiver) }
                }
            };
            flows.push(FlowState {
                ep,
                snd_timer: TimerSlot::default(),
                rcv_timer: TimerSlot::default(),
            });
        }
        let n = elements.len();
        let mut queue = EventQueue::default();
        for f in &scenario.flows {
            queue.push(f.start, Event::FlowStart { flow: f.id });
            if f.stop < end {
                queue.push(f.stop, Event::FlowStop { flow: f.id });
            }
        }
        let meters = Meters::new(
            scenario.flows.len(),
            scenario.metrics.bin,
            Time::ZERO + scenario.metrics.warmup,
        );
        Simulation {
            scenario,
            seed,
            now: Time::ZERO,
            end,
            queue,
            elements,
            roles,
            el_timers: vec![TimerSlot::default(); n],
            flows,
            routes,
            out: ElementOutput::default(),
            work: VecDeque::new(),
            meters,
            fwd_link: fwd_link as usize,
            rev_link,
            events: 0,
            feedback: BTreeMap::new(),
            next_feedback_id: 0,
        }
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
    pub fn stats(&self) -> EngineStats {
        EngineStats { events: self.events, ..self.meters.stats }
    }

    /// Packets held inside network elements (queues, serializers, delay lines), by kind:
    /// (data, acks).
    pub fn packets_in_network(&self) -> (u64, u64) {
        let mut held = (0, 0);
        for e in &self.elements {
            let (d, a) = match e {
                AnyElement::Link(l) => l.held_by_kind(),
                AnyElement::Delay(d) => d.held_by_kind(),
                AnyElement::Loss(_) | AnyElement::Custom(_) => (0, 0),
            };
            held.0 += d;
            held.1 += a;
        }
        held
    }

    /// Media feedback contents held for packets still in flight (for leak checks).
    pub fn pending_feedback(&self) -> usize {
        self.feedback.len()
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

    /// Puts `element` on every flow's route in front of the forward bottleneck link and/or
    /// in front of the reverse path's delay line, so that one element sees data going one way
    /// and feedback coming back (a middlebox, e.g. a wireless access point). Call before the
    /// run starts. Returns the element's index.
    pub fn attach_middlebox(&mut self, element: AnyElement, forward: bool, reverse: bool) -> usize {
        assert!(self.now == Time::ZERO && self.events == 0, "attach middleboxes before running");
        self.elements.push(element);
        self.roles.push(Role::Plain);
        self.el_timers.push(TimerSlot::default());
        let idx = (self.elements.len() - 1) as u32;
        let fwd_link = self.fwd_link as u32;
        for route in &mut self.routes {
            if forward {
                let at = route[0].iter().position(|&e| e == fwd_link).expect("route has the link");
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
        let fwd_bits = self.link(self.fwd_link).capacity().bits_between(b_start, b_end);
        let rev_bits =
            self.rev_link.map_or(0.0, |i| self.link(i).capacity().bits_between(b_start, b_end));
        let flows = &self.flows;
        self.meters.close_bin(fwd_bits, rev_bits, |i| {
            let mut c = CcSample::default();
            match &flows[i].ep {
                Endpoint::Tcp { sender, .. } => {
                    c.cwnd_packets = sender.controller().target().cwnd_bytes.unwrap_or(0) as f64
                        / self.scenario.flows[i].kind.packet_size() as f64;
                    c.srtt_ms = sender.rtt().srtt().map_or(f64::NAN, |d| d.as_millis_f64());
                    if let AnyController::Copa(k) = sender.controller() {
                        c.velocity = k.velocity();
                    }
                }
                Endpoint::Cbr { .. } => {}
                Endpoint::Media { sender, receiver } => {
                    let cc = sender.controller();
                    c.target_mbps = cc.target().target_rate.map_or(f64::NAN, |r| r.as_mbps_f64());
                    match cc {
                        AnyController::Gcc(g) => {
                            c.state = g.detector_state().code();
                            c.delay_gradient = g.trendline().modified_trend();
                            c.threshold = g.trendline().threshold();
                            c.delay_based_mbps = g.delay_based_bps() / 1e6;
                            c.loss_based_mbps = g.loss_based_bps() / 1e6;
                            c.alr = g.in_alr() as u8 as f64;
                            c.pushback_mbps = g.pushback_bps() / 1e6;
                        }
                        AnyController::GccPaper(g) => {
                            c.loss_based_mbps = g.loss_based_bps() / 1e6;
                            if let Some(r) = receiver.remb_estimator() {
                                c.state = r.state().code();
                                c.delay_gradient = r.delay_gradient();
                                c.threshold = r.detector().threshold();
                                c.delay_based_mbps = r.estimate_bps() / 1e6;
                            }
                        }
                        _ => {}
                    }
                }
            }
            c
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
                    match &mut self.flows[flow as usize].ep {
                        Endpoint::Tcp { sender, .. } => sender.handle_timeout(now),
                        Endpoint::Media { sender, .. } => sender.handle_timeout(now),
                        Endpoint::Cbr { .. } => {}
                    }
                    self.pump_sender(flow as usize);
                    self.drain_work();
                }
            }
            Event::Receiver { flow, gen } => {
                if self.flows[flow as usize].rcv_timer.fire(gen) {
                    match &mut self.flows[flow as usize].ep {
                        Endpoint::Tcp { receiver, .. } => receiver.handle_timeout(now),
                        Endpoint::Media { receiver, .. } => receiver.handle_timeout(now),
                        Endpoint::Cbr { .. } => {}
                    }
                    self.pump_receiver(flow as usize);
                    self.drain_work();
                }
            }
            Event::FlowStart { flow } => {
                match &mut self.flows[flow as usize].ep {
                    Endpoint::Tcp { sender, .. } => sender.start(now),
                    Endpoint::Cbr { sender } => sender.start(now),
                    Endpoint::Media { sender, .. } => sender.start(now),
                }
                self.pump_sender(flow as usize);
                self.drain_work();
            }
            Event::FlowStop { flow } => match &mut self.flows[flow as usize].ep {
                Endpoint::Tcp { sender, .. } => sender.stop(),
                Endpoint::Cbr { sender } => sender.stop(),
                Endpoint::Media { sender, .. } => sender.stop(),
            },
        }
    }

    /// Routes what element `idx` produced, records drops and link departures, re-arms its timer.
    #[inline]
    fn after_element(&mut self, idx: usize) {
        let now = self.now;
        let role = self.roles[idx];
        if !self.out.drops.is_empty() {
            for d in self.out.drops.drain(..) {
                self.meters.on_drop(now, &d.pkt, d.reason);
                if let rtclab_core::PacketInfo::Feedback { id } = d.pkt.info {
                    self.feedback.remove(&id);
                }
            }
        }
        for m in self.out.marks.drain(..) {
            self.meters.on_mark(now, &m.pkt);
        }
        self.out.dequeues.clear(); // no dequeue observers yet
        for mut p in self.out.packets.drain(..) {
            match role {
                Role::ForwardLink if p.dir == Direction::Forward => {
                    self.meters.on_fwd_departure(now, &p)
                }
                Role::ReverseLink if p.dir == Direction::Reverse => {
                    self.meters.on_rev_departure(now, &p)
                }
                _ => {}
            }
            p.hop += 1;
            self.work.push_back(p);
        }
        match role {
            Role::ForwardLink => {
                let b = self.link(idx).backlog();
                self.meters.fwd.on_backlog(now, b);
            }
            Role::ReverseLink => {
                let b = self.link(idx).backlog();
                self.meters.rev.on_backlog(now, b);
            }
            Role::Plain => {}
        }
        let want = self.elements[idx].poll_timeout();
        self.el_timers[idx]
            .arm(&mut self.queue, want, |gen| Event::Element { idx: idx as u32, gen });
    }

    fn drain_work(&mut self) {
        let now = self.now;
        while let Some(pkt) = self.work.pop_front() {
            let route = &self.routes[pkt.flow.0 as usize][pkt.dir.index()];
            if let Some(&e) = route.get(pkt.hop as usize) {
                self.elements[e as usize].handle_packet(now, pkt.dir, pkt, &mut self.out);
                self.after_element(e as usize);
            } else {
                self.deliver(pkt);
            }
        }
    }

    fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        let flow = pkt.flow.0 as usize;
        match (pkt.dir, pkt.kind) {
            (Direction::Forward, PacketKind::Data) => {
                let goodput = match &mut self.flows[flow].ep {
                    Endpoint::Tcp { receiver, .. } => receiver.handle_data(now, &pkt),
                    Endpoint::Cbr { .. } => pkt.size as u64,
                    Endpoint::Media { receiver, .. } => {
                        if let Some(delay) = receiver.handle_data(now, &pkt) {
                            self.meters.on_frame(now, flow, delay);
                        }
                        pkt.size as u64
                    }
                };
                self.meters.on_data_delivered(now, &pkt, goodput);
                self.pump_receiver(flow);
            }
            (Direction::Reverse, PacketKind::Ack) => {
                self.meters.stats.delivered_acks += 1;
                match &mut self.flows[flow].ep {
                    Endpoint::Tcp { sender, .. } => sender.handle_ack(now, &pkt),
                    Endpoint::Media { sender, .. } => {
                        if let rtclab_core::PacketInfo::Feedback { id } = pkt.info {
                            if let Some(fb) = self.feedback.remove(&id) {
                                sender.handle_feedback(now, &fb);
                            }
                        }
                    }
                    Endpoint::Cbr { .. } => {}
                }
                self.pump_sender(flow);
            }
            _ => {}
        }
    }

    fn pump_sender(&mut self, flow: usize) {
        let now = self.now;
        let st = &mut self.flows[flow];
        loop {
            let p = match &mut st.ep {
                Endpoint::Tcp { sender, .. } => sender.poll_transmit(now),
                Endpoint::Cbr { sender } => sender.poll_transmit(now),
                Endpoint::Media { sender, .. } => sender.poll_transmit(now),
            };
            let Some(p) = p else { break };
            self.meters.on_sent(now, &p);
            self.work.push_back(p);
        }
        let want = match &st.ep {
            Endpoint::Tcp { sender, .. } => sender.poll_timeout(),
            Endpoint::Cbr { sender } => sender.poll_timeout(),
            Endpoint::Media { sender, .. } => sender.poll_timeout(),
        };
        st.snd_timer.arm(&mut self.queue, want, |gen| Event::Sender { flow: flow as u32, gen });
    }

    fn pump_receiver(&mut self, flow: usize) {
        let now = self.now;
        let st = &mut self.flows[flow];
        let want = match &mut st.ep {
            Endpoint::Tcp { receiver, .. } => {
                while let Some(ack) = receiver.poll_transmit(now) {
                    self.meters.stats.sent_acks += 1;
                    self.work.push_back(ack);
                }
                receiver.poll_timeout()
            }
            Endpoint::Media { receiver, .. } => {
                while let Some(fb) = receiver.poll_feedback(now) {
                    let id = self.next_feedback_id;
                    self.next_feedback_id = self.next_feedback_id.wrapping_add(1);
                    let size = feedback_wire_size(&fb);
                    let mut p = Packet::ack(FlowId(flow as u32), id as u64, now, size, now);
                    p.info = rtclab_core::PacketInfo::Feedback { id };
                    self.feedback.insert(id, fb);
                    self.meters.stats.sent_acks += 1;
                    self.work.push_back(p);
                }
                receiver.poll_timeout()
            }
            Endpoint::Cbr { .. } => None,
        };
        st.rcv_timer.arm(&mut self.queue, want, |gen| Event::Receiver { flow: flow as u32, gen });
    }

    /// Builds the summary and time series; call once the run has finished.
    pub fn finish(&self) -> RunOutput {
        let flows = &self.scenario.flows;
        let flow_cols =
            self.meters.flow_columns(|i, t0, t1| flows[i].start < t1 && flows[i].stop > t0);
        let link_cols = self.meters.link_columns();
        let fairness = summary::fairness_columns(&self.scenario, &self.meters);
        let sender_stats: Vec<_> = self
            .flows
            .iter()
            .map(|f| match &f.ep {
                Endpoint::Tcp { sender, .. } => Some(sender.stats),
                Endpoint::Cbr { .. } | Endpoint::Media { .. } => None,
            })
            .collect();
        let media: Vec<Option<summary::MediaSummary>> = self
            .flows
            .iter()
            .map(|f| match &f.ep {
                Endpoint::Media { sender, receiver } => Some(summary::MediaSummary {
                    stalls: receiver.frames.stats.stalls,
                    stall_time_s: receiver.frames.stats.stall_time.as_secs_f64(),
                    incomplete_frames: receiver.frames.stats.incomplete,
                    frames_dropped_by_sender: sender.frames_dropped(),
                    padding_bytes: sender.stats.padding_bytes,
                    probe_clusters: sender.stats.probe_clusters,
                    bytes_sent: sender.stats.bytes_sent,
                    fec_bytes: sender.stats.fec_bytes,
                    rtx_bytes: sender.stats.rtx_bytes,
                }),
                _ => None,
            })
            .collect();
        let summary = summary::build(
            &self.scenario,
            self.seed,
            &self.meters,
            self.link(self.fwd_link).capacity(),
            &sender_stats,
            &media,
            &fairness,
            self.stats(),
        );
        RunOutput { summary, flows: flow_cols, link: link_cols, fairness, stats: self.stats() }
    }
}

/// A window-based controller for a tcp flow, or a media flow driven by one.
/// A media flow's sender and receiver as the scenario describes them (both engines use this).
pub fn media_endpoints(flow: u32, m: &MediaSpec, seeds: &SeedTree) -> (MediaSender, MediaReceiver) {
    let cc = match &m.cc {
        MediaCcSpec::Gcc(c) => AnyController::Gcc(Box::new(rtclab_cc::gcc::Gcc::new(*c))),
        MediaCcSpec::GccPaper(c) => {
            AnyController::GccPaper(Box::new(rtclab_cc::gcc::GccPaper::new(*c)))
        }
        MediaCcSpec::Window(c) => window_controller(c, seeds, flow),
        MediaCcSpec::ZoomLike(c) => {
            AnyController::ZoomLike(Box::new(rtclab_cc::ZoomLike::new(c.clone())))
        }
    };
    let rng = seeds.stream(&format!("flow{flow}.encoder"));
    (
        MediaSender::new(FlowId(flow), m.sender.clone(), cc, rng),
        MediaReceiver::new(m.feedback.clone(), None),
    )
}

fn window_controller(cc: &CcSpec, seeds: &SeedTree, flow: u32) -> AnyController {
    match cc {
        CcSpec::Reno(c) => AnyController::Reno(Reno::new(*c)),
        CcSpec::Cubic(c) => AnyController::Cubic(Box::new(Cubic::new(*c))),
        CcSpec::Copa(c) => AnyController::Copa(Box::new(rtclab_cc::Copa::new(*c))),
        CcSpec::Qlibra(c) => AnyController::Qlibra(Box::new(rtclab_cc::Qlibra::new(*c))),
        CcSpec::Bbr(c) => {
            let mut rng = seeds.stream(&format!("flow{}.cc", flow));
            let seed = rng.next_u64();
            AnyController::Bbr(Box::new(rtclab_cc::Bbr::new(rtclab_cc::BbrConfig { seed, ..*c })))
        }
    }
}
