//! A scenario's topology as elements and routes.
//!
//! Per link (in scenario order), per direction that has one: `[loss] -> link (queue +
//! serializer) -> [propagation delay]`; the reverse direction without a bottleneck is only its
//! propagation delay (if any). Per flow, a forward route
//!
//! ```text
//! for hop in path:          [middleboxes at hop] [hop's forward elements]   then the flow's access delay (rtt/2, jitter)
//! for hop in reverse_path:  [hop's reverse elements] [middleboxes at hop]   then the flow's access delay (rtt/2)
//! ```
//!
//! so a middlebox at a hop sits on the sender's side of that link: it sees data before the
//! link and feedback after the link's reverse direction. A reversed flow (`direction =
//! "reverse"`: media from the far end) mirrors both routes: its data crosses the hops' reverse
//! elements from the last hop to the first, its feedback their forward elements. The `[link]` shorthand gives exactly
//! the dumbbell rtclab always had (`[loss] -> link -> flow delay`, the same random-stream
//! labels), so results do not move.
//!
//! Flows whose access delay in a direction is equal and has no jitter share that delay line:
//! one FIFO releases each packet when its own line would have (only the order of events at
//! the same instant can differ).

use rtclab_core::{Direction, SeedTree, TimeDelta};
use rtclab_net::middleboxes::MiddleboxArgs;
use rtclab_net::{AnyElement, ConditionsLine, DelayLine, LossElement};
use rtclab_scenario::{LinkSpec, Scenario};

/// One direction of one link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct HopRef {
    pub link: u32,
    pub dir: Direction,
}

impl HopRef {
    /// Index into per-(link, direction) tables: `2 * link + dir`.
    pub fn index(self) -> usize {
        self.link as usize * 2 + self.dir.index()
    }
}

/// What an element is, for the meters and the dequeue observers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Random loss at a link's entrance.
    Loss(HopRef),
    /// A link's queue and serializer.
    Link(HopRef),
    /// A link's propagation delay.
    LinkDelay(HopRef),
    /// A middlebox attached at a link.
    Middlebox { at: u32 },
    /// A flow's access delay.
    FlowDelay,
}

/// The middlebox elements among `roles`, in element order: the first of them are the scenario's
/// `[[middleboxes]]` in file order (`Network::build` makes them first).
pub fn middlebox_elements(roles: &[Role]) -> impl Iterator<Item = usize> + '_ {
    (0..roles.len()).filter(|&e| matches!(roles[e], Role::Middlebox { .. }))
}

impl Role {
    /// The link direction whose counters a drop here belongs to.
    pub fn hop(self, dir: Direction) -> Option<HopRef> {
        match self {
            Role::Loss(h) | Role::Link(h) | Role::LinkDelay(h) => Some(h),
            Role::Middlebox { at } => Some(HopRef { link: at, dir }),
            Role::FlowDelay => None,
        }
    }
}

/// No meter (`MeterInfo` fields).
pub const NO_HOP: u32 = u32::MAX;

/// Per element, what the link meters need on the hot path (one record per element).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MeterInfo {
    /// The meter (`HopRef::index`) of the link direction the element belongs to (drops and
    /// marks; departures for links); for a middlebox the forward meter of its hop.
    pub hop: u32,
    /// The meter of the link direction this element is the entry of (offered packets).
    pub entry: u32,
    pub is_link: bool,
    /// A link carrying both directions (a Wi-Fi channel with `uplink`): its packets are
    /// metered by their own direction (`hop_for`, `entry_for`).
    pub both_ways: bool,
    /// For such a link, the reverse direction's meter it is the entry of (or `NO_HOP`).
    pub entry_rev: u32,
}

impl MeterInfo {
    /// The meter of a packet travelling `dir` through this element (departures).
    #[inline]
    pub fn hop_for(self, dir: Direction) -> u32 {
        if self.both_ways {
            (self.hop & !1) | dir.index() as u32
        } else {
            self.hop
        }
    }

    /// The meter a packet travelling `dir` is offered to here, or `NO_HOP`.
    #[inline]
    pub fn entry_for(self, dir: Direction) -> u32 {
        if self.both_ways && dir == Direction::Reverse {
            self.entry_rev
        } else {
            self.entry
        }
    }

    /// The meter a drop of a packet travelling `dir` belongs to: a middlebox's drops count in
    /// the packet's direction.
    #[inline]
    pub fn drop_hop(self, dir: Direction) -> Option<usize> {
        (self.hop != NO_HOP).then(|| (self.hop as usize & !1) | dir.index())
    }
}

pub struct Network {
    pub elements: Vec<AnyElement>,
    pub roles: Vec<Role>,
    /// Per flow: element indices crossed, `[forward, reverse]`.
    pub routes: Vec<[Vec<u32>; 2]>,
    /// Per (link, direction) (`HopRef::index`): the link element, if that direction has one.
    pub link_elements: Vec<Option<u32>>,
    /// Per (link, direction): the first element a packet meets there (where it is offered).
    pub entries: Vec<Option<u32>>,
    /// Per link: middleboxes to tell of the forward link's dequeues.
    pub observers: Vec<Vec<u32>>,
    /// Some flow sends its data through links' reverse direction (`direction = "reverse"`).
    pub any_reversed: bool,
}

impl Network {
    /// Builds the scenario's network. Fails only for a middlebox that cannot be built (the
    /// scenario layer has already checked kinds and parameters).
    pub fn build(s: &Scenario, seeds: &SeedTree) -> Result<Network, crate::BuildError> {
        let mut n = Network {
            elements: Vec::new(),
            roles: Vec::new(),
            routes: Vec::new(),
            link_elements: vec![None; s.links.len() * 2],
            entries: vec![None; s.links.len() * 2],
            observers: vec![Vec::new(); s.links.len()],
            any_reversed: s.flows.iter().any(|f| f.reversed),
        };
        // Per (link, direction): its elements in order.
        let mut hop_elements: Vec<Vec<u32>> = vec![Vec::new(); s.links.len() * 2];
        for (li, l) in s.links.iter().enumerate() {
            for (dir, spec, label) in [
                (Direction::Forward, Some(&l.forward), &l.label),
                (Direction::Reverse, l.reverse.as_ref(), &l.reverse_label),
            ] {
                let h = HopRef { link: li as u32, dir };
                // A Wi-Fi channel with `uplink`: the reverse direction crosses the forward
                // link element (its stations), then the propagation delay.
                let shared = (dir == Direction::Reverse)
                    .then(|| n.link_elements[li * 2])
                    .flatten()
                    .filter(|_| l.forward.wifi.as_ref().is_some_and(|w| w.uplink));
                let mut els = match shared {
                    Some(link) => {
                        n.link_elements[h.index()] = Some(link);
                        let mut e = vec![link];
                        e.extend(n.hop_elements(h, None, l.delay, label, seeds));
                        e
                    }
                    None => n.hop_elements(h, spec, l.delay, label, seeds),
                };
                if let Some(trace) = &l.conditions {
                    // Replayed delay (both directions) and loss (forward) after the link.
                    let rng = seeds.stream(&format!("{label}.conditions"));
                    let line = ConditionsLine::new(trace.clone(), dir == Direction::Forward, rng);
                    els.push(n.push(AnyElement::Custom(Box::new(line)), Role::LinkDelay(h)));
                }
                n.entries[h.index()] = els.first().copied();
                hop_elements[h.index()] = els;
            }
        }
        let mut at_hop: Vec<Vec<u32>> = vec![Vec::new(); s.links.len()];
        for (i, m) in s.middleboxes.iter().enumerate() {
            let rng = seeds.stream(&format!("middleboxes[{i}]"));
            // The entry the scenario layer found and checked: no second lookup.
            let el = (m.entry.build)(MiddleboxArgs { params: &m.params, rng })
                .map_err(|error| crate::BuildError::Middlebox { index: i, error })?;
            let idx = n.push(AnyElement::Custom(el), Role::Middlebox { at: m.at as u32 });
            at_hop[m.at].push(idx);
            n.observers[m.at].push(idx);
        }
        for (li, obs) in n.observers.iter().enumerate() {
            if let (false, Some(e)) = (obs.is_empty(), n.link_elements[li * 2]) {
                if let AnyElement::Link(link) = &mut n.elements[e as usize] {
                    link.set_observed(true);
                }
            }
        }
        // Flows whose access delay in a direction is the same and has no jitter share one
        // delay line: with a constant delay the release times are arrival + delay, so one FIFO
        // releases every packet when its own line would have, and with many flows served in
        // turn (fair queueing) the engine reads one buffer in order instead of a different
        // flow's buffer per packet (docs/benchmarks.md, "Queue disciplines with 1,000 flows").
        let mut shared: std::collections::BTreeMap<(usize, i64), u32> = Default::default();
        for f in &s.flows {
            let half = TimeDelta::from_nanos(f.rtt.as_nanos() / 2);
            let mut access = |route: usize, base: TimeDelta, jitter: TimeDelta, label: String| {
                let make = |n: &mut Self| {
                    let rng = seeds.stream(&label);
                    n.push(AnyElement::Delay(DelayLine::new(base, jitter, rng)), Role::FlowDelay)
                };
                if jitter > TimeDelta::ZERO {
                    make(&mut n)
                } else {
                    *shared.entry((route, base.as_nanos())).or_insert_with(|| make(&mut n))
                }
            };
            let fwd_delay = access(0, half, f.jitter, format!("flow{}.jitter", f.id));
            let rev_delay = access(1, f.rtt - half, TimeDelta::ZERO, format!("flow{}.rev", f.id));
            // A reversed flow's data takes the links' reverse direction (the path's hops in
            // reverse order, as feedback would), its feedback their forward direction. In the
            // forward direction a hop's middleboxes come before its elements, in the reverse
            // direction after them.
            let route = |hops: &[usize], dir: usize| {
                let mut r = Vec::new();
                let ordered: Vec<usize> =
                    if f.reversed { hops.iter().rev().copied().collect() } else { hops.to_vec() };
                for hop in ordered {
                    if dir == 0 {
                        r.extend(&at_hop[hop]);
                        r.extend(&hop_elements[hop * 2]);
                    } else {
                        r.extend(&hop_elements[hop * 2 + 1]);
                        r.extend(&at_hop[hop]);
                    }
                }
                r
            };
            let (data_dir, fb_dir) = if f.reversed { (1, 0) } else { (0, 1) };
            let mut fwd = route(&f.path, data_dir);
            fwd.push(fwd_delay);
            let mut rev = route(&f.reverse_path, fb_dir);
            rev.push(rev_delay);
            n.routes.push([fwd, rev]);
        }
        // A link carrying both directions tells them apart by the flows' orientation.
        let reversed: Vec<bool> = s.flows.iter().map(|f| f.reversed).collect();
        for li in 0..s.links.len() {
            if let (Some(f), Some(r)) = (n.link_elements[li * 2], n.link_elements[li * 2 + 1]) {
                if let (true, AnyElement::Link(link)) = (f == r, &mut n.elements[f as usize]) {
                    link.set_reversed_flows(reversed.clone());
                }
            }
        }
        Ok(n)
    }

    /// Per element: the middleboxes to tell of its dequeues (non-empty only for the forward
    /// link of a hop with middleboxes).
    pub fn observers_by_element(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.elements.len()];
        for (li, obs) in self.observers.iter().enumerate() {
            if let Some(e) = self.link_elements[li * 2] {
                out[e as usize] = obs.clone();
            }
        }
        out
    }

    /// Per element: which link meters it feeds.
    pub fn meter_info(&self) -> Vec<MeterInfo> {
        let mut info: Vec<MeterInfo> = self
            .roles
            .iter()
            .map(|r| MeterInfo {
                hop: match r {
                    Role::Loss(h) | Role::Link(h) | Role::LinkDelay(h) => h.index() as u32,
                    Role::Middlebox { at } => at * 2,
                    Role::FlowDelay => NO_HOP,
                },
                entry: NO_HOP,
                is_link: matches!(r, Role::Link(_)),
                both_ways: false,
                entry_rev: NO_HOP,
            })
            .collect();
        for (h, e) in self.entries.iter().enumerate() {
            if let Some(e) = e {
                info[*e as usize].entry = h as u32;
            }
        }
        for li in 0..self.link_elements.len() / 2 {
            if let (Some(f), Some(r)) = (self.link_elements[li * 2], self.link_elements[li * 2 + 1])
            {
                if f == r {
                    let i = &mut info[f as usize];
                    i.both_ways = true;
                    i.entry_rev = (li * 2 + 1) as u32;
                    i.entry =
                        if self.entries[li * 2] == Some(f) { (li * 2) as u32 } else { NO_HOP };
                }
            }
        }
        info
    }

    fn push(&mut self, e: AnyElement, r: Role) -> u32 {
        self.elements.push(e);
        self.roles.push(r);
        (self.elements.len() - 1) as u32
    }

    fn hop_elements(
        &mut self,
        h: HopRef,
        spec: Option<&LinkSpec>,
        delay: TimeDelta,
        label: &str,
        seeds: &SeedTree,
    ) -> Vec<u32> {
        let mut els = Vec::new();
        if let Some(spec) = spec {
            if let Some(m) = spec.loss {
                let rng = seeds.stream(&format!("{label}.loss"));
                els.push(self.push(AnyElement::Loss(LossElement::new(m, rng)), Role::Loss(h)));
            }
            let queue_seed = seeds.stream(&format!("{label}.queue")).next_u64();
            let wifi_seed = seeds.stream(&format!("{label}.wifi")).next_u64();
            let link = spec.build_link(queue_seed, wifi_seed);
            let link = self.push(AnyElement::Link(Box::new(link)), Role::Link(h));
            self.link_elements[h.index()] = Some(link);
            els.push(link);
        }
        if delay > TimeDelta::ZERO {
            let rng = seeds.stream(&format!("{label}.delay"));
            let d = DelayLine::new(delay, TimeDelta::ZERO, rng);
            els.push(self.push(AnyElement::Delay(d), Role::LinkDelay(h)));
        }
        els
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(extra: &str) -> Scenario {
        let text = format!(
            "duration = \"5s\"\n[link]\ncapacity = \"10Mbps\"\n[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\n{extra}"
        );
        rtclab_scenario::from_toml_str(&text, std::path::Path::new(".")).unwrap()
    }

    #[test]
    fn a_middlebox_sits_before_its_link_forward_and_after_it_in_reverse() {
        let s = scenario("[[middleboxes]]\nkind = \"ack_aggregation\"\nat = \"bottleneck\"\n");
        let n = Network::build(&s, &SeedTree::new(1)).unwrap();
        let roles = |r: &[u32]| r.iter().map(|&e| n.roles[e as usize]).collect::<Vec<_>>();
        let hop = HopRef { link: 0, dir: Direction::Forward };
        assert_eq!(
            roles(&n.routes[0][0]),
            vec![Role::Middlebox { at: 0 }, Role::Link(hop), Role::FlowDelay]
        );
        assert_eq!(roles(&n.routes[0][1]), vec![Role::Middlebox { at: 0 }, Role::FlowDelay]);
        assert_eq!(n.observers[0].len(), 1);
        // Meters: the link is its hop's entry and meter; the flow's delay feeds none.
        let n = Network::build(&scenario(""), &SeedTree::new(1)).unwrap();
        let info = n.meter_info();
        let fwd = &n.routes[0][0];
        assert_eq!(
            info[fwd[0] as usize],
            MeterInfo { hop: 0, entry: 0, is_link: true, both_ways: false, entry_rev: NO_HOP }
        );
        assert_eq!(info[fwd[1] as usize].hop, NO_HOP);
    }

    #[test]
    fn flows_with_the_same_constant_access_delay_share_one_delay_line() {
        let extra = "[[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\n\
                     [[flows]]\nkind = \"tcp\"\nrtt = \"30ms\"\n\
                     [[flows]]\nkind = \"tcp\"\nrtt = \"20ms\"\njitter = \"1ms\"\n";
        let n = Network::build(&scenario(extra), &SeedTree::new(1)).unwrap();
        let access = |f: usize, d: usize| *n.routes[f][d].last().unwrap();
        // Flows 0 and 1 (20 ms, no jitter): one line per direction, not one for both.
        assert_eq!(access(0, 0), access(1, 0));
        assert_eq!(access(0, 1), access(1, 1));
        assert_ne!(access(0, 0), access(0, 1));
        // Another delay, or jitter (random per flow), keeps a line of its own.
        assert_ne!(access(2, 0), access(0, 0));
        assert_ne!(access(3, 0), access(0, 0));
        // Flow 3's reverse delay has no jitter: shared with flows 0 and 1.
        assert_eq!(access(3, 1), access(0, 1));
        let delays = n.roles.iter().filter(|r| matches!(r, Role::FlowDelay)).count();
        assert_eq!(delays, 5);
    }
}
