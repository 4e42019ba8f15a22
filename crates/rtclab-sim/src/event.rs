//! Event queue: binary min-heaps on (time, sequence). The sequence number makes the order of
//! simultaneous events the order in which they were scheduled, so runs are deterministic.
//!
//! Two heaps, one order: network elements' timers (a link's next departure, a delay line's next
//! release: most events, from a handful of elements) in one, endpoints' timers and flow
//! start/stop (one or two per flow, mostly far ahead: retransmission timeouts) in the other;
//! `pop` takes the smaller (time, sequence) of the two tops, so events come out in exactly the
//! order one heap would give. With 1,000 flows one heap holds ~2,000 entries and every pop sifts
//! through all its levels; the element heap holds a few (docs/benchmarks.md).
//!
//! Cancellation is by generation: a timer slot bumps its generation when re-armed, and a
//! popped event whose generation is stale is ignored.

use rtclab_core::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    Element { idx: u32, gen: u32 },
    Sender { flow: u32, gen: u32 },
    Receiver { flow: u32, gen: u32 },
    FlowStart { flow: u32 },
    FlowStop { flow: u32 },
}

/// One scheduled event: ordered by (time, insertion sequence).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    time: u64,
    seq: u64,
    ev: Event,
}

impl Entry {
    /// The order key as one integer (built in registers: one compare).
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.time as u128) << 64) | self.seq as u128
    }
    fn time(&self) -> Time {
        Time::from_nanos(self.time)
    }
}

/// A binary min-heap of entries on their key. Written for this queue rather than
/// `std::collections::BinaryHeap` because of how the entry moves: std's `push` stores the
/// entry into the vector and reads it back whole to sift it up, and its `pop` sifts a hole to
/// the bottom and back; both read 16-byte halves of an entry just written in smaller pieces,
/// which the processor cannot forward from its store buffer (a stall on most pushes and pops;
/// removing it took 6-9 % off the loop's wall time, docs/benchmarks.md). Here the moving entry
/// stays in registers and is written once, where it lands. The order is the same: keys are unique,
/// so any correct heap pops the same sequence.
#[derive(Debug, Default)]
struct MinHeap {
    v: Vec<Entry>,
}

impl MinHeap {
    #[inline]
    fn peek(&self) -> Option<&Entry> {
        self.v.first()
    }

    #[inline(always)]
    fn push(&mut self, e: Entry) {
        let key = e.key();
        let mut i = self.v.len();
        self.v.push(e);
        while i > 0 {
            let parent = (i - 1) / 2;
            let p = self.v[parent];
            if p.key() <= key {
                break;
            }
            self.v[i] = p;
            i = parent;
        }
        self.v[i] = e;
    }

    #[inline(always)]
    fn pop(&mut self) -> Option<Entry> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else { return Some(last) };
        // Sift `last` down from the root's place.
        let n = self.v.len();
        let key = last.key();
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.v[r].key() < self.v[l].key() { r } else { l };
            let child = self.v[c];
            if key <= child.key() {
                break;
            }
            self.v[i] = child;
            i = c;
        }
        self.v[i] = last;
        Some(top)
    }

    fn len(&self) -> usize {
        self.v.len()
    }
    fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    /// Network elements' timers.
    elements: MinHeap,
    /// Endpoints' timers, flow start and stop.
    endpoints: MinHeap,
    seq: u64,
}

impl EventQueue {
    #[inline]
    pub fn push(&mut self, time: Time, ev: Event) {
        self.seq += 1;
        let e = Entry { time: time.as_nanos(), seq: self.seq, ev };
        match ev {
            Event::Element { .. } => self.elements.push(e),
            _ => self.endpoints.push(e),
        }
    }
    /// The entry that comes first: the smaller of the two tops (keys are unique: the sequence
    /// differs), and whether it is the endpoints' heap's.
    #[inline]
    fn top(&self) -> Option<(&Entry, bool)> {
        match (self.elements.peek(), self.endpoints.peek()) {
            (Some(a), Some(b)) if b.key() < a.key() => Some((b, true)),
            (Some(a), _) => Some((a, false)),
            (None, b) => b.map(|b| (b, true)),
        }
    }
    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.top().map(|(e, _)| e.time())
    }
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, Event)> {
        let (_, endpoints) = self.top()?;
        let heap = if endpoints { &mut self.endpoints } else { &mut self.elements };
        heap.pop().map(|e| (e.time(), e.ev))
    }
    pub fn len(&self) -> usize {
        self.elements.len() + self.endpoints.len()
    }
    pub fn is_empty(&self) -> bool {
        self.elements.is_empty() && self.endpoints.is_empty()
    }
}

/// One armed-or-not timer of a component.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerSlot {
    scheduled: Option<Time>,
    gen: u32,
}

impl TimerSlot {
    /// Makes sure an event fires no later than `want`. Keeps an earlier pending event (the
    /// component then sees a harmless early wake-up and re-arms).
    #[inline]
    pub fn arm(&mut self, q: &mut EventQueue, want: Option<Time>, make: impl FnOnce(u32) -> Event) {
        if let Some(t) = want {
            if self.scheduled.is_none_or(|s| t < s) {
                self.gen = self.gen.wrapping_add(1);
                self.scheduled = Some(t);
                q.push(t, make(self.gen));
            }
        }
    }

    /// Called when an event for this slot pops: true if it is current (then the slot is free).
    #[inline]
    pub fn fire(&mut self, gen: u32) -> bool {
        if gen == self.gen && self.scheduled.is_some() {
            self.scheduled = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simultaneous_events_keep_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time::from_millis(5), Event::FlowStart { flow: 2 });
        q.push(Time::from_millis(1), Event::FlowStart { flow: 1 });
        q.push(Time::from_millis(5), Event::FlowStart { flow: 3 });
        q.push(Time::from_millis(5), Event::FlowStart { flow: 0 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(
            order,
            vec![
                Event::FlowStart { flow: 1 },
                Event::FlowStart { flow: 2 },
                Event::FlowStart { flow: 3 },
                Event::FlowStart { flow: 0 }
            ]
        );
    }

    #[test]
    fn the_two_heaps_pop_in_one_time_then_insertion_order() {
        // Element and endpoint events interleaved, with pops between pushes and many equal
        // times: the order must be that of sorting (time, insertion) — one heap's order.
        let mut q = EventQueue::default();
        let mut pending: Vec<(u64, u32)> = Vec::new();
        let (mut popped, mut want) = (Vec::new(), Vec::new());
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let id = |e: Event| match e {
            Event::Element { idx, .. } => idx,
            Event::Sender { flow, .. } => flow,
            _ => unreachable!(),
        };
        for i in 0..4000u32 {
            let t = next() % 50;
            let ev = if next() % 2 == 0 {
                Event::Element { idx: i, gen: 0 }
            } else {
                Event::Sender { flow: i, gen: 0 }
            };
            q.push(Time::from_nanos(t), ev);
            pending.push((t, i));
            if next() % 3 == 0 {
                let peek = q.peek_time().unwrap();
                let (t, e) = q.pop().unwrap();
                assert_eq!(peek, t);
                popped.push((t, id(e)));
                pending.sort();
                let (wt, wi) = pending.remove(0);
                want.push((Time::from_nanos(wt), wi));
            }
        }
        while let Some((t, e)) = q.pop() {
            popped.push((t, id(e)));
        }
        pending.sort();
        want.extend(pending.into_iter().map(|(t, i)| (Time::from_nanos(t), i)));
        assert_eq!(popped, want);
        assert!(q.is_empty());
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn rearming_earlier_cancels_the_later_event() {
        let mut q = EventQueue::default();
        let mut slot = TimerSlot::default();
        slot.arm(&mut q, Some(Time::from_millis(10)), |g| Event::Sender { flow: 0, gen: g });
        slot.arm(&mut q, Some(Time::from_millis(20)), |g| Event::Sender { flow: 0, gen: g });
        assert_eq!(q.len(), 1);
        slot.arm(&mut q, Some(Time::from_millis(5)), |g| Event::Sender { flow: 0, gen: g });
        let (t, Event::Sender { gen, .. }) = q.pop().unwrap() else { panic!() };
        assert_eq!(t, Time::from_millis(5));
        assert!(slot.fire(gen));
        let (_, Event::Sender { gen, .. }) = q.pop().unwrap() else { panic!() };
        assert!(!slot.fire(gen), "the stale 10 ms event is ignored");
    }
}
