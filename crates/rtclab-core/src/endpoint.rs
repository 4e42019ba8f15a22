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

/// The stages of a displayed frame's end-to-end delay, in pipeline order (the dissertation's
/// latency decomposition, seed 004 ch. 3): encoder, sender's pacer queue, waits for
/// retransmission, network queues, propagation and serialization, jitter buffer, the queue in
/// front of the decoder, decoding. Display is immediate (no vsync model), so it has no stage.
pub const FRAME_STAGES: [&str; 8] = [
    "encode",
    "pacing",
    "retransmission",
    "queue",
    "propagation",
    "jitter_buffer",
    "decoder_queue",
    "decode",
];

/// Where one frame's end-to-end delay went, stage by stage ([`FRAME_STAGES`] order). Built
/// from consecutive instants of the frame's life, so the stages sum to capture → display
/// exactly. The retransmission stage is two spans: the completing packet's wait for its own
/// resend, and the complete frame's wait in the frame buffer for an earlier frame's.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameStages(pub [TimeDelta; 8]);

impl FrameStages {
    /// From the frame's instants in pipeline order: capture, encoded, completing packet's
    /// first transmission, its transmission, that + its queueing, frame complete, released in
    /// order by the frame buffer, released by the jitter buffer, decode start, display. An
    /// instant out of order (a measurement that overtook the next) is clamped between its
    /// neighbours, so the stages stay non-negative and still sum to display − capture.
    pub fn from_instants(t: [Time; 10]) -> Self {
        let mut b = t;
        b[9] = b[9].max(b[0]);
        for i in 1..9 {
            b[i] = b[i].clamp(b[i - 1], b[9]);
        }
        let d = |i: usize| b[i + 1] - b[i];
        FrameStages([d(0), d(1), d(2) + d(5), d(3), d(4), d(6), d(7), d(8)])
    }
    pub fn total(&self) -> TimeDelta {
        self.0.iter().fold(TimeDelta::ZERO, |a, &d| a + d)
    }
}

/// What an endpoint tells the meters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EndpointEvent {
    /// Payload newly delivered to the application, in order (bytes).
    Delivered { goodput_bytes: u64 },
    /// A media frame completed at the receiver, `delay` after capture.
    FrameComplete { delay: TimeDelta },
    /// A media frame was shown, `delay` after capture (after jitter buffer and decoder), and
    /// where that time went (the stages sum to `delay` exactly).
    FrameDisplayed { delay: TimeDelta, stages: FrameStages },
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
    /// The sender's current target media rate, if a controller sets one (sampled into the
    /// `target_mbps` series of endpoints the harness does not know otherwise).
    fn target_rate(&self) -> Option<crate::Rate> {
        None
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

    #[test]
    fn frame_stages_sum_to_the_delay_even_with_instants_out_of_order() {
        let ms = Time::from_millis;
        // In order: each stage is the gap to the next instant.
        let t = [ms(0), ms(5), ms(9), ms(9), ms(30), ms(50), ms(52), ms(60), ms(61), ms(70)];
        let s = FrameStages::from_instants(t);
        let want = [5, 4, 2, 21, 20, 8, 1, 9].map(TimeDelta::from_millis);
        assert_eq!(s.0, want);
        assert_eq!(s.total(), TimeDelta::from_millis(70));
        // A send time after the arrival (clocks of another host) is clamped: still 70 ms.
        let t = [ms(0), ms(5), ms(80), ms(90), ms(30), ms(50), ms(50), ms(60), ms(61), ms(70)];
        let s = FrameStages::from_instants(t);
        assert_eq!(s.total(), TimeDelta::from_millis(70));
        assert!(s.0.iter().all(|d| *d >= TimeDelta::ZERO));
    }
}
