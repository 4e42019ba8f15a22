//! The one endpoint interface both engines drive (the sans-IO shape of quinn-proto's
//! `Connection` and str0m's `Rtc`): inputs at `now` (a packet, a timer), outputs polled
//! (packets to transmit, the next timeout, events for the meters).
//!
//! Contract: after any input the engine drains `poll_transmit` and `poll_event` until they
//! return None, then asks `poll_timeout` and calls `handle_timeout` at (or after) that time.
//! Spurious `handle_timeout` calls must be harmless. An endpoint never reads a clock.
//!
//! A packet's content that is not in `Packet` travels as a [`Payload`] next to it: encoded
//! bytes, or a structured value in the simulator (media feedback). Network elements reach it
//! through [`Payloads`] by the id in `PacketInfo::Payload`.

use crate::packet::Packet;
use crate::time::{Time, TimeDelta};
use std::any::Any;

/// What a packet carries beyond its header fields: encoded bytes (`Vec<u8>`, e.g. an RTCP
/// compound packet) or a structured value (the simulator's media feedback); readers downcast.
/// One pointer wide, so `Option<Payload>` costs packets without one next to nothing.
pub struct Payload(Box<dyn Any + Send + Sync>);

impl Payload {
    pub fn structured<T: Any + Send + Sync>(v: T) -> Self {
        Payload(Box::new(v))
    }
    pub fn bytes(b: Vec<u8>) -> Self {
        Payload(Box::new(b))
    }
    /// The value, if it is a `T` (`Vec<u8>` for bytes).
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.0.downcast_ref()
    }
    pub fn downcast_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.0.downcast_mut()
    }
}

impl std::fmt::Debug for Payload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.downcast_ref::<Vec<u8>>() {
            Some(b) => write!(f, "Payload({} bytes)", b.len()),
            None => f.write_str("Payload(structured)"),
        }
    }
}

/// A packet to send, with its payload if it has one.
#[derive(Debug)]
pub struct Transmit {
    pub pkt: Packet,
    pub payload: Option<Payload>,
}

impl From<Packet> for Transmit {
    fn from(pkt: Packet) -> Self {
        Transmit { pkt, payload: None }
    }
}

/// What an endpoint tells the meters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndpointEvent {
    /// Payload newly delivered to the application, in order (bytes).
    Delivered { goodput_bytes: u64 },
    /// A media frame completed at the receiver, `delay` after capture.
    FrameComplete { delay: TimeDelta },
    /// A media frame was shown, `delay` after capture (after jitter buffer and decoder).
    FrameDisplayed { delay: TimeDelta },
    /// The display froze: no frame for longer than the freeze threshold (WebRTC's
    /// max(3 × mean inter-frame gap, mean + 150 ms)) since the last one shown.
    FreezeStart,
    /// The display froze for `duration` (reported when the freeze ends with a new frame).
    Freeze { duration: TimeDelta },
    /// Frames stopped completing for `duration` (a gap between completed frames longer than
    /// the stall threshold), reported with the frame that ends it.
    Stall { duration: TimeDelta },
    /// The sender's target media rate changed (bit/s).
    TargetRate { bps: u64 },
}

pub trait Endpoint {
    /// The flow begins (senders start sending).
    fn start(&mut self, _now: Time) {}
    /// The flow ends (senders stop offering new data).
    fn stop(&mut self) {}
    fn handle_packet(&mut self, now: Time, pkt: &Packet, payload: Option<Payload>);
    fn handle_timeout(&mut self, now: Time);
    fn poll_transmit(&mut self, now: Time) -> Option<Transmit>;
    fn poll_timeout(&self) -> Option<Time>;
    fn poll_event(&mut self) -> Option<EndpointEvent> {
        None
    }
    /// Named figures of the whole run for the summary (`flows[].metrics`, sender's then
    /// receiver's); none by default.
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Payloads of packets in flight, by id (a slab: ids are reused in a deterministic order).
#[derive(Debug, Default)]
pub struct Payloads {
    slots: Vec<Option<Payload>>,
    free: Vec<u32>,
}

impl Payloads {
    /// Stores `p`; the id goes into the packet's `PacketInfo::Payload`.
    pub fn insert(&mut self, p: Payload) -> u32 {
        match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(p);
                id
            }
            None => {
                self.slots.push(Some(p));
                (self.slots.len() - 1) as u32
            }
        }
    }
    pub fn get(&self, id: u32) -> Option<&Payload> {
        self.slots.get(id as usize).and_then(Option::as_ref)
    }
    /// For elements that rewrite what a packet carries.
    pub fn get_mut(&mut self, id: u32) -> Option<&mut Payload> {
        self.slots.get_mut(id as usize).and_then(Option::as_mut)
    }
    /// Removes the payload (the packet was delivered or dropped).
    pub fn take(&mut self, id: u32) -> Option<Payload> {
        let p = self.slots.get_mut(id as usize)?.take();
        if p.is_some() {
            self.free.push(id);
        }
        p
    }
    /// Payloads held (for leak checks).
    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_slots_are_reused_and_downcast() {
        let mut p = Payloads::default();
        let a = p.insert(Payload::structured(7u32));
        let b = p.insert(Payload::bytes(vec![1, 2]));
        assert_eq!(p.get(a).and_then(|x| x.downcast_ref::<u32>()), Some(&7));
        assert!(p.get(b).unwrap().downcast_ref::<u32>().is_none());
        *p.get_mut(a).unwrap().downcast_mut::<u32>().unwrap() = 9;
        assert_eq!(p.take(a).unwrap().downcast_ref::<u32>(), Some(&9));
        assert!(p.take(a).is_none());
        assert_eq!(p.len(), 1);
        assert_eq!(p.get(b).unwrap().downcast_ref::<Vec<u8>>(), Some(&vec![1, 2]));
        assert_eq!(p.insert(Payload::bytes(vec![])), a);
    }
}
