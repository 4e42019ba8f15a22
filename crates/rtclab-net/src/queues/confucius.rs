//! Confucius, fair and smooth queue management for real-time flows.
//!
//! Lineage: Z. Meng et al., *Confucius: Achieving Consistent Low Latency with Practical Queue
//! Management for Real-Time Communications* (arXiv 2310.18030), chapter 8 of Meng Zili's
//! dissertation (2023); spec `shared/specs/afr-hairpin-confucius.md` §4. No code was released;
//! where the dissertation is silent this follows the hints the spec lists (§4.13) and says so.
//!
//! A new flow (one the discipline has not seen, or has forgotten after `idle_ms` without
//! packets) enters the new-flow class Q0 with weight
//! `w = min(max(1, |F_old|) / |Q_new| · 2^(λ·age), 1)` (eq. 8.2, recomputed every `tick_ms`
//! from the current counts and quantised down to 1/128; the floor of 1 on |F_old| is the
//! fix of pitfall §4.14.1). When its weight reaches 1 it graduates into the old-flow class
//! whose occupancy target is closest to its mean backlog since arrival. Old flows have
//! weight one. Classes Q0..Q3 are served by deficit round robin with a quantum of `W_Q · quantum`
//! bytes, W_Q the sum of the weights of its flows that are backlogged or sent within the last
//! reclassification period. Inside a class the flow whose head packet arrived first is served
//! (the "virtual class" of §4.7), so moving a flow never reorders its packets.
//!
//! Every `reclassify_ms` (100 ms) each old flow's mean backlog over the period is compared with
//! its class's: a share at least `1/n + α` of the class's backlog promotes it, at most `1/n − α`
//! demotes it (eq. 8.9-8.10, α = 0.1, classes with two or more flows); then a class whose mean
//! length left the band between its neighbours' targets moves all its flows one level (Fig 8.10);
//! a class that changed is left alone for the next period (spec §4.13).
//!
//! Occupancy targets (the dissertation gives only the clusters < 20 %, between, > 80 %):
//! `target1..3` as fractions of `queue.limit` (defaults 1/8, 1/4, 1/2, the prototype's) and
//! Q0's 1/16. "The target is also the class's maximum length" (§4.6) is read as the
//! prototype does (§4.13): when the discipline is over `queue.limit`, the head packet of the
//! earliest flow of the class most above its target is dropped. (A hard cap at the target
//! would keep every class below its upper neighbour's target, so the band check of Fig 8.10
//! could never promote a class.)
//!
//! Graduation choice (pitfall §4.14.2): the ratio |F_old|/|Q_new| is recomputed each tick, so
//! a graduation raises the weights of the remaining new flows, but for flows of equal age the
//! share of Q0 against the old flows stays 2^(λ·age).

use crate::element::{Dropped, ElementOutput};
use crate::any_qdisc::AnyQdisc;
use crate::qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
use crate::queues::{describe, QdiscArgs, QdiscKind, QdiscMaker};
use rtclab_core::params::{ms, param, Param};
use rtclab_core::{FlowId, Packet, Time, TimeDelta};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

pub static KIND: QdiscKind = QdiscKind {
    name: "confucius",
    help: "Confucius (Meng et al. 2023): new flows ramp up at 2^(λt) in their own class; old flows in three occupancy classes",
    params: || describe(CONFUCIUS_PARAMS, &ConfuciusConfig::default()),
    prepare: |a: &QdiscArgs| {
        let mut c = ConfuciusConfig { mtu: a.mtu, ..ConfuciusConfig::default() };
        a.apply(CONFUCIUS_PARAMS, &mut c)?;
        if !(c.targets[0] < c.targets[1] && c.targets[1] < c.targets[2]) {
            return Err(rtclab_core::params::SettingsError::Inconsistent(format!(
                "target1 < target2 < target3 is required, got {}, {}, {}",
                c.targets[0], c.targets[1], c.targets[2]
            )));
        }
        let limit = a.limit;
        Ok(QdiscMaker::new(move |_seed| AnyQdisc::Other(Box::new(Confucius::new(limit, c)))))
    },
};

/// Number of old-flow classes.
pub const OLD_CLASSES: usize = 3;
const CLASSES: usize = OLD_CLASSES + 1;
/// Weights are multiples of 1/128 (§4.7).
const WEIGHT_UNIT: f64 = 1.0 / 128.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConfuciusConfig {
    /// λ, per millisecond (0.004: new flows double their weight every 250 ms).
    pub lambda_per_ms: f64,
    /// Hysteresis α of the intra-class check (0.1).
    pub alpha: f64,
    /// Re-weighting period (prototype: 10 ms; kernel: 250 ms).
    pub tick: TimeDelta,
    /// Reclassification period (100 ms).
    pub reclassify: TimeDelta,
    /// Flows without packets for this long are forgotten (prototype: 1 s).
    pub idle: TimeDelta,
    /// Old classes' occupancy targets and maximum lengths, fractions of the limit.
    pub targets: [f64; OLD_CLASSES],
    /// DWRR bytes per unit of weight (one MTU, 1514).
    pub quantum: u32,
    /// Bytes per packet when the limit is in packets.
    pub mtu: u32,
}

impl Default for ConfuciusConfig {
    fn default() -> Self {
        ConfuciusConfig {
            lambda_per_ms: 0.004,
            alpha: 0.1,
            tick: TimeDelta::from_millis(10),
            reclassify: TimeDelta::from_millis(100),
            idle: TimeDelta::from_secs(1),
            targets: [0.125, 0.25, 0.5],
            quantum: 1514,
            mtu: 1500,
        }
    }
}

pub static CONFUCIUS_PARAMS: &[Param<ConfuciusConfig>] = &[
    param!(ConfuciusConfig, "lambda_per_ms", "λ: new flows double their weight every 1/λ ms (0.004)", Real, 1e-6, 10.0,
        |c| c.lambda_per_ms, |c, v| c.lambda_per_ms = v),
    param!(ConfuciusConfig, "alpha", "hysteresis of the intra-class check (0.1)", Real, 0.0, 1.0,
        |c| c.alpha, |c, v| c.alpha = v),
    param!(ConfuciusConfig, "tick_ms", "re-weighting period, ms (10)", Real, 0.1, 10_000.0,
        |c| c.tick.as_millis_f64(), |c, v| c.tick = ms(v)),
    param!(ConfuciusConfig, "reclassify_ms", "reclassification period, ms (100)", Real, 1.0, 100_000.0,
        |c| c.reclassify.as_millis_f64(), |c, v| c.reclassify = ms(v)),
    param!(ConfuciusConfig, "idle_ms", "flows without packets this long are forgotten, ms (1000)", Real, 1.0, 1_000_000.0,
        |c| c.idle.as_millis_f64(), |c, v| c.idle = ms(v)),
    param!(ConfuciusConfig, "target1", "Q1's occupancy target, fraction of the limit; on overflow the class furthest above its target loses packets (0.125)", Real, 0.001, 1.0,
        |c| c.targets[0], |c, v| c.targets[0] = v),
    param!(ConfuciusConfig, "target2", "Q2's occupancy target, fraction of the limit; on overflow the class furthest above its target loses packets (0.25)", Real, 0.001, 1.0,
        |c| c.targets[1], |c, v| c.targets[1] = v),
    param!(ConfuciusConfig, "target3", "Q3's occupancy target, fraction of the limit; on overflow the class furthest above its target loses packets (0.5)", Real, 0.001, 1.0,
        |c| c.targets[2], |c, v| c.targets[2] = v),
    param!(ConfuciusConfig, "quantum", "round-robin bytes per unit of class weight (1514)", Integer, 64.0, 1_000_000.0,
        |c| c.quantum as f64, |c, v| c.quantum = v as u32),
];

#[derive(Debug)]
struct Flow {
    /// (arrival number, arrival time, packet).
    fifo: VecDeque<(u64, Time, Packet)>,
    bytes: u64,
    class: usize,
    arrived: Time,
    last_seen: Time,
    weight: f64,
    /// Backlog samples (bytes) this period, and since arrival while new.
    occ_sum: f64,
    occ_n: u32,
    /// Mean backlog of the last complete period, bytes.
    occ: f64,
    known: bool,
}

impl Flow {
    fn new(now: Time) -> Self {
        Flow {
            fifo: VecDeque::new(),
            bytes: 0,
            class: 0,
            arrived: now,
            last_seen: now,
            weight: 0.0,
            occ_sum: 0.0,
            occ_n: 0,
            occ: 0.0,
            known: true,
        }
    }
    fn mean_occupancy(&self) -> f64 {
        if self.occ_n == 0 {
            self.bytes as f64
        } else {
            self.occ_sum / self.occ_n as f64
        }
    }
}

#[derive(Debug, Default)]
struct Class {
    /// (head arrival number, flow) of flows with packets; stale entries are skipped.
    heads: BinaryHeap<Reverse<(u64, u32)>>,
    backlog: Backlog,
    weight: f64,
    deficit: f64,
    active: bool,
    changed_last_round: bool,
}

/// What the report and tests read: each class's flows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClassView {
    pub flows: Vec<u32>,
    pub weight: f64,
}

#[derive(Debug)]
pub struct Confucius {
    limit: QueueLimit,
    cfg: ConfuciusConfig,
    flows: Vec<Flow>,
    /// Known flow ids, in first-seen order.
    known: Vec<u32>,
    classes: [Class; CLASSES],
    active: VecDeque<usize>,
    total: Backlog,
    arrivals: u64,
    next_tick: Option<Time>,
    next_reclassify: Time,
}

impl Confucius {
    pub fn new(limit: QueueLimit, cfg: ConfuciusConfig) -> Self {
        Confucius {
            limit,
            cfg,
            flows: Vec::new(),
            known: Vec::new(),
            classes: Default::default(),
            active: VecDeque::new(),
            total: Backlog::default(),
            arrivals: 0,
            next_tick: None,
            next_reclassify: Time::ZERO + cfg.reclassify,
        }
    }

    /// The class (0 = new, 1..=3 old) and weight of `flow`, if known.
    pub fn flow_state(&self, flow: FlowId) -> Option<(usize, f64)> {
        let f = self.flows.get(flow.0 as usize).filter(|f| f.known)?;
        Some((f.class, f.weight))
    }

    /// Each class's known flows and weight.
    pub fn classes(&self) -> Vec<ClassView> {
        let mut v: Vec<ClassView> = self
            .classes
            .iter()
            .map(|c| ClassView { flows: Vec::new(), weight: c.weight })
            .collect();
        for &id in &self.known {
            v[self.flows[id as usize].class].flows.push(id);
        }
        v
    }

    fn limit_bytes(&self) -> f64 {
        match self.limit {
            QueueLimit::Packets(n) => n as f64 * self.cfg.mtu as f64,
            QueueLimit::Bytes(b) => b as f64,
        }
    }

    /// Class `c`'s occupancy target in bytes (Q0: half of Q1's).
    fn target(&self, c: usize) -> f64 {
        let frac = if c == 0 { self.cfg.targets[0] / 2.0 } else { self.cfg.targets[c - 1] };
        frac * self.limit_bytes()
    }

    fn over_limit(&self) -> bool {
        self.limit.exceeded_by(self.total)
    }

    fn push_head(&mut self, id: u32) {
        let f = &self.flows[id as usize];
        if let Some(&(n, _, _)) = f.fifo.front() {
            self.classes[f.class].heads.push(Reverse((n, id)));
        }
    }

    fn counts_now(&self, f: &Flow, now: Time) -> bool {
        f.bytes > 0 || now - f.last_seen < self.cfg.reclassify
    }

    fn activate(&mut self, c: usize) {
        if !self.classes[c].active && self.classes[c].backlog.packets > 0 {
            self.classes[c].active = true;
            self.classes[c].deficit = self.class_quantum(c);
            self.active.push_back(c);
        }
    }

    fn class_quantum(&self, c: usize) -> f64 {
        self.classes[c].weight.max(WEIGHT_UNIT) * self.cfg.quantum as f64
    }

    /// Moves flow `id` (and its backlog) to class `to`; its packets stay where they are.
    fn move_flow(&mut self, id: u32, to: usize) {
        let f = &mut self.flows[id as usize];
        let from = f.class;
        if from == to {
            return;
        }
        let (p, b) = (f.fifo.len() as u32, f.bytes);
        f.class = to;
        self.classes[from].backlog.packets -= p;
        self.classes[from].backlog.bytes -= b;
        self.classes[to].backlog.packets += p;
        self.classes[to].backlog.bytes += b;
        self.push_head(id);
        self.activate(to);
    }

    /// Pops the head packet of class `c`'s earliest flow.
    fn pop_class(&mut self, c: usize, now: Time) -> Option<Dequeued> {
        while let Some(Reverse((n, id))) = self.classes[c].heads.pop() {
            let f = &mut self.flows[id as usize];
            if f.class != c || f.fifo.front().map(|x| x.0) != Some(n) {
                continue; // moved, or already served: stale
            }
            let (_, t, pkt) = f.fifo.pop_front().expect("head checked");
            f.bytes -= pkt.size as u64;
            self.classes[c].backlog.packets -= 1;
            self.classes[c].backlog.bytes -= pkt.size as u64;
            self.total.packets -= 1;
            self.total.bytes -= pkt.size as u64;
            self.push_head(id);
            return Some(Dequeued { pkt, sojourn: now - t });
        }
        None
    }

    /// The class most above its target (by bytes over target), for overflow drops.
    fn most_over_target(&self) -> usize {
        (0..CLASSES)
            .filter(|&c| self.classes[c].backlog.packets > 0)
            .max_by(|&a, &b| {
                let oa = self.classes[a].backlog.bytes as f64 - self.target(a);
                let ob = self.classes[b].backlog.bytes as f64 - self.target(b);
                oa.total_cmp(&ob).then(b.cmp(&a))
            })
            .expect("something is queued")
    }

    fn new_weight(&self, f: &Flow, now: Time, old: usize, new: usize) -> f64 {
        let age_ms = (now - f.arrived).as_millis_f64();
        let w = (old.max(1) as f64 / new.max(1) as f64) * (self.cfg.lambda_per_ms * age_ms).exp2();
        // (the small margin keeps exact powers of two from rounding down a step)
        let q = (w.min(1.0) / WEIGHT_UNIT + 1e-9).floor() * WEIGHT_UNIT;
        q.max(WEIGHT_UNIT)
    }

    /// Re-weighting (every tick): occupancy samples, new-flow weights, graduation, forgetting
    /// idle flows.
    fn tick(&mut self, now: Time) {
        let mut old = 0;
        let mut new = 0;
        for &id in &self.known {
            let f = &self.flows[id as usize];
            if !self.counts_now(f, now) {
                continue;
            }
            if f.class == 0 {
                new += 1;
            } else {
                old += 1;
            }
        }
        let known = std::mem::take(&mut self.known);
        let mut keep = Vec::with_capacity(known.len());
        let mut graduates = Vec::new();
        for id in known {
            let idle = {
                let f = &self.flows[id as usize];
                f.bytes == 0 && now - f.last_seen >= self.cfg.idle
            };
            if idle {
                self.flows[id as usize].known = false;
                continue;
            }
            keep.push(id);
            let w = if self.flows[id as usize].class == 0 {
                Some(self.new_weight(&self.flows[id as usize], now, old, new))
            } else {
                None
            };
            let f = &mut self.flows[id as usize];
            f.occ_sum += f.bytes as f64;
            f.occ_n += 1;
            if let Some(w) = w {
                f.weight = w;
                if w >= 1.0 {
                    graduates.push(id);
                }
            }
        }
        self.known = keep;
        for id in graduates {
            let q = self.flows[id as usize].mean_occupancy();
            let to = (1..CLASSES)
                .min_by(|&a, &b| (q - self.target(a)).abs().total_cmp(&(q - self.target(b)).abs()))
                .expect("old classes");
            let f = &mut self.flows[id as usize];
            f.weight = 1.0;
            f.occ = q;
            f.occ_sum = 0.0;
            f.occ_n = 0;
            self.move_flow(id, to);
        }
    }

    /// Class weights W_Q: the weights of each class's flows that count now.
    fn recompute_weights(&mut self, now: Time) {
        let mut weights = [0.0; CLASSES];
        for &id in &self.known {
            let f = &self.flows[id as usize];
            if self.counts_now(f, now) {
                weights[f.class] += f.weight;
            }
        }
        for (c, w) in weights.into_iter().enumerate() {
            self.classes[c].weight = w;
        }
    }

    /// Reclassification (every period): intra-class shares, then class bands.
    fn reclassify(&mut self) {
        let mut members: [Vec<u32>; CLASSES] = Default::default();
        for &id in &self.known {
            let f = &mut self.flows[id as usize];
            if f.class > 0 {
                f.occ = if f.occ_n > 0 { f.occ_sum / f.occ_n as f64 } else { f.bytes as f64 };
                f.occ_sum = 0.0;
                f.occ_n = 0;
                members[f.class].push(id);
            }
        }
        let mut moves: Vec<(u32, usize)> = Vec::new();
        let mut changed = [false; CLASSES];
        for (c, m) in members.iter().enumerate().skip(1) {
            if m.len() < 2 || self.classes[c].changed_last_round {
                continue;
            }
            let sum: f64 = m.iter().map(|&id| self.flows[id as usize].occ).sum();
            if sum <= 0.0 {
                continue;
            }
            let fair = 1.0 / m.len() as f64;
            let ups: Vec<u32> = m
                .iter()
                .copied()
                .filter(|&id| c < OLD_CLASSES && self.flows[id as usize].occ / sum >= fair + self.cfg.alpha)
                .collect();
            if !ups.is_empty() {
                // A promotion out of a class cancels its demotions this round (§4.13).
                moves.extend(ups.into_iter().map(|id| (id, c + 1)));
            } else if c > 1 {
                moves.extend(
                    m.iter()
                        .copied()
                        .filter(|&id| self.flows[id as usize].occ / sum <= fair - self.cfg.alpha)
                        .map(|id| (id, c - 1)),
                );
            }
        }
        for &(id, to) in &moves {
            changed[self.flows[id as usize].class] = true;
            changed[to] = true;
            self.move_flow(id, to);
        }
        // Class bands (Fig 8.10): a class's mean length outside its neighbours' targets.
        for c in 1..CLASSES {
            if changed[c] || self.classes[c].changed_last_round || members[c].is_empty() {
                continue;
            }
            let len: f64 = members[c]
                .iter()
                .filter(|&&id| self.flows[id as usize].class == c)
                .map(|&id| self.flows[id as usize].occ)
                .sum();
            let to = if c < OLD_CLASSES && len > self.target(c + 1) {
                c + 1
            } else if c > 1 && len < self.target(c - 1) {
                c - 1
            } else {
                continue;
            };
            for &id in &members[c] {
                if self.flows[id as usize].class == c {
                    self.move_flow(id, to);
                }
            }
            changed[c] = true;
            changed[to] = true;
        }
        for (c, ch) in changed.into_iter().enumerate() {
            self.classes[c].changed_last_round = ch;
        }
    }
}

impl Qdisc for Confucius {
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        let id = pkt.flow.0;
        let idx = id as usize;
        if idx >= self.flows.len() {
            self.flows.resize_with(idx + 1, || Flow { known: false, ..Flow::new(now) });
        }
        if !self.flows[idx].known {
            debug_assert!(self.flows[idx].fifo.is_empty());
            self.flows[idx] = Flow::new(now);
            self.known.push(id);
            self.next_tick.get_or_insert(now);
        }
        let n = self.arrivals;
        self.arrivals += 1;
        let f = &mut self.flows[idx];
        f.last_seen = now;
        let was_empty = f.fifo.is_empty();
        f.fifo.push_back((n, now, pkt));
        f.bytes += pkt.size as u64;
        let c = f.class;
        self.classes[c].backlog.packets += 1;
        self.classes[c].backlog.bytes += pkt.size as u64;
        self.total.packets += 1;
        self.total.bytes += pkt.size as u64;
        if was_empty {
            self.push_head(id);
        }
        if self.classes[c].weight == 0.0 {
            // A class with no counted weight yet (before the first tick) still gets served.
            self.classes[c].weight = WEIGHT_UNIT;
        }
        self.activate(c);
        while self.over_limit() {
            let victim = self.most_over_target();
            let Some(d) = self.pop_class(victim, now) else { break };
            out.drops.push(Dropped { pkt: d.pkt, reason: DropReason::QueueOverflow });
        }
    }

    fn dequeue(&mut self, now: Time, _out: &mut ElementOutput) -> Option<Dequeued> {
        loop {
            let c = *self.active.front()?;
            if self.classes[c].backlog.packets == 0 {
                self.classes[c].active = false;
                self.active.pop_front();
                continue;
            }
            let head = self.peek_size(c);
            if head as f64 <= self.classes[c].deficit {
                self.classes[c].deficit -= head as f64;
                let d = self.pop_class(c, now).expect("backlogged class");
                if self.classes[c].backlog.packets == 0 {
                    self.classes[c].active = false;
                    self.active.pop_front();
                }
                return Some(d);
            }
            self.classes[c].deficit += self.class_quantum(c);
            self.active.rotate_left(1);
        }
    }

    fn backlog(&self) -> Backlog {
        self.total
    }

    fn held_by_kind(&self) -> (u64, u64) {
        crate::qdisc::count_kinds(self.flows.iter().flat_map(|f| f.fifo.iter().map(|x| &x.2)))
    }

    fn poll_timeout(&self) -> Option<Time> {
        self.next_tick
    }

    fn flow_class(&self, flow: FlowId) -> Option<u8> {
        self.flow_state(flow).map(|(c, _)| c as u8)
    }

    fn handle_timeout(&mut self, now: Time, _out: &mut ElementOutput) {
        while let Some(t) = self.next_tick.filter(|&t| t <= now) {
            self.tick(t);
            if t >= self.next_reclassify {
                self.reclassify();
                self.next_reclassify += self.cfg.reclassify;
            }
            self.recompute_weights(t);
            self.next_tick = if self.known.is_empty() { None } else { Some(t + self.cfg.tick) };
        }
    }
}

impl Confucius {
    /// Size of the packet class `c` would send next (drops stale heap entries on the way).
    fn peek_size(&mut self, c: usize) -> u32 {
        loop {
            let Reverse((n, id)) = *self.classes[c].heads.peek().expect("backlogged class has heads");
            let f = &self.flows[id as usize];
            match f.fifo.front() {
                Some(&(m, _, pkt)) if f.class == c && m == n => return pkt.size,
                _ => {
                    self.classes[c].heads.pop();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32, seq: u64) -> Packet {
        Packet::data(FlowId(flow), seq, 1500, Time::ZERO)
    }

    /// Drives the discipline like a link serving one 1500 B packet every `service` and firing
    /// its timers; `arrive(now)` returns the packets arriving at `now`. Returns per-flow bytes
    /// dequeued in each window of `window`.
    fn run(
        q: &mut Confucius,
        service: TimeDelta,
        until: Time,
        mut arrive: impl FnMut(Time) -> Vec<Packet>,
        mut on_dequeue: impl FnMut(Time, &Dequeued),
    ) {
        let mut out = ElementOutput::default();
        let mut now = Time::ZERO;
        while now < until {
            for p in arrive(now) {
                q.enqueue(now, p, &mut out);
            }
            if q.poll_timeout().is_some_and(|t| t <= now) {
                q.handle_timeout(now, &mut out);
            }
            if let Some(d) = q.dequeue(now, &mut out) {
                on_dequeue(now, &d);
            }
            now += service;
        }
    }

    #[test]
    fn spec_vector_one_old_flow_and_eight_new_ones() {
        // §4.15: one old flow, eight new flows at t = 0 (here: the old flow has been there for
        // 2 s). Weights 1/8 at once, 1/4 after 250 ms, 1/2 after 500 ms, graduation at 750 ms;
        // the old flow's share of service C/(1 + 2^(λt)): 1/2, 1/3, 1/5, then 1/9.
        let mut q = Confucius::new(QueueLimit::Packets(1000), ConfuciusConfig::default());
        let t0 = Time::from_secs(2);
        let mut seq = 0;
        let mut windows: std::collections::BTreeMap<i64, (u64, u64)> = Default::default();
        run(
            &mut q,
            TimeDelta::from_micros(10),
            t0 + TimeDelta::from_millis(1000),
            |now| {
                // Keep every flow backlogged: flow 0 always; flows 1..=8 from t0.
                let mut v = Vec::new();
                if now.as_nanos() % 10_000 == 0 {
                    seq += 1;
                    v.push(pkt(0, seq));
                    if now >= t0 {
                        for f in 1..=8 {
                            v.push(pkt(f, seq));
                        }
                    }
                }
                v
            },
            |now, d| {
                if now >= t0 {
                    let w = (now - t0).as_nanos() / 1_000_000 / 50; // 50 ms windows
                    let e = windows.entry(w).or_default();
                    if d.pkt.flow.0 == 0 {
                        e.0 += 1;
                    } else {
                        e.1 += 1;
                    }
                }
            },
        );
        let share = |w: i64| {
            let (a, b) = windows[&w];
            a as f64 / (a + b) as f64
        };
        // Windows [0, 50), [250, 300), [500, 550) ms after the arrival, and after graduation.
        // Weights are set every 10 ms, so each window sees the last tick's weight.
        for (w, expect) in [(0, 0.5), (5, 1.0 / 3.0), (10, 0.2), (16, 1.0 / 9.0), (19, 1.0 / 9.0)] {
            let got = share(w);
            // Within 50 ms the weight grows by 2^(0.2) = 15 %; compare with the window's
            // mean of 1 / (1 + 2^(λt)), quantised as the discipline does.
            let lo = expect * 0.8;
            assert!(got >= lo && got <= expect * 1.02, "window {w}: share {got}, expected about {expect}");
        }
        // Every new flow graduated into an old class at 750 ms.
        let classes = q.classes();
        assert!(classes[0].flows.is_empty(), "{classes:?}");
        for f in 1..=8 {
            assert_eq!(q.flow_state(FlowId(f)).unwrap().1, 1.0);
        }
    }

    #[test]
    fn weights_follow_eq_8_2() {
        let q = Confucius::new(QueueLimit::Packets(1000), ConfuciusConfig::default());
        let f = Flow::new(Time::ZERO);
        for (ms, old, new, expect) in [
            (0, 1, 8, 0.125),
            (250, 1, 8, 0.25),
            (500, 1, 8, 0.5),
            (750, 1, 8, 1.0),
            (0, 0, 4, 0.25), // |F_old| floored at 1 (pitfall 1)
            (0, 10, 1, 1.0), // a lone newcomer among many old flows: its fair share at once
            (100, 1, 3, 0.4375), // (1/3) · 2^0.4 = 0.4387, quantised down to 56/128
        ] {
            let w = q.new_weight(&f, Time::from_millis(ms), old, new);
            assert_eq!(w, expect, "t = {ms} ms, old {old}, new {new}");
        }
    }

    #[test]
    fn flows_settle_in_classes_by_occupancy_and_moves_never_reorder() {
        // A link of one packet per ms, a 400-packet buffer (targets 50, 100, 200 packets).
        // Flow 0 sends 0.3 packets per ms (a sparse, delay-friendly flow), flow 1 one per ms
        // (more than its share: it fills the buffer). Both start in Q0 and graduate into Q1;
        // sharing one FIFO class, flow 1 holds most of Q1's backlog and is promoted, then its
        // class's length passes Q3's target and it moves on to Q3. Flow 0 stays in Q1. Within
        // each flow the sequence numbers leave in order through every move.
        let mut q = Confucius::new(QueueLimit::Packets(400), ConfuciusConfig::default());
        let mut last = [0u64; 2];
        let mut seqs = [0u64; 2];
        let mut acc = 0.0;
        run(
            &mut q,
            TimeDelta::from_millis(1),
            Time::from_secs(5),
            |now| {
                let mut v = Vec::new();
                acc += 0.3;
                if acc >= 1.0 {
                    acc -= 1.0;
                    seqs[0] += 1;
                    v.push(pkt(0, seqs[0]));
                }
                if now >= Time::from_millis(50) {
                    seqs[1] += 1;
                    v.push(pkt(1, seqs[1]));
                }
                v
            },
            |_, d| {
                let f = d.pkt.flow.0 as usize;
                assert!(d.pkt.seq > last[f], "flow {f} reordered");
                last[f] = d.pkt.seq;
            },
        );
        let (c0, _) = q.flow_state(FlowId(0)).unwrap();
        let (c1, _) = q.flow_state(FlowId(1)).unwrap();
        assert_eq!((c0, c1), (1, 3), "{:?}", q.classes());
    }

    #[test]
    fn overflow_drops_from_the_class_most_above_its_target_and_idle_flows_are_forgotten() {
        let mut q = Confucius::new(QueueLimit::Packets(100), ConfuciusConfig::default());
        let mut out = ElementOutput::default();
        for s in 0..120 {
            q.enqueue(Time::ZERO, pkt(3, s), &mut out);
        }
        assert_eq!(out.drops.len(), 20);
        // Head drops: the oldest packets went.
        assert_eq!(out.drops[0].pkt.seq, 0);
        assert_eq!(q.backlog().packets, 100);
        let (d, _) = q.held_by_kind();
        assert_eq!(d, 100);
        // Drain, wait past the idle time: forgotten, and new again on its next packet.
        while q.dequeue(Time::ZERO, &mut out).is_some() {}
        q.handle_timeout(Time::from_millis(1500), &mut out);
        assert!(q.flow_state(FlowId(3)).is_none());
        assert_eq!(q.poll_timeout(), None);
    }

    #[test]
    fn bad_targets_are_rejected() {
        let p = [("target1".to_string(), rtclab_core::params::Value::Num(0.6))];
        let a = QdiscArgs { limit: QueueLimit::Packets(10), params: &p, mtu: 1500, seed: 0 };
        let e = crate::queues::build("confucius", &a).unwrap_err().to_string();
        assert!(e.contains("target1 < target2 < target3"), "{e}");
    }
}
