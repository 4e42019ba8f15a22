//! `AnyElement`: the built-in network elements (link, delay line, loss) and a boxed slot for
//! any other `NetElement`, dispatched without a virtual call on the hot path. Kept apart from the
//! trait (`element.rs`) so the element files import the contract and only this file imports them.

use crate::delay::DelayLine;
use crate::element::{DequeueRecord, ElementOutput, MadeAbsorbed, NetElement};
use crate::link::Link;
use crate::loss::LossElement;
use rtclab_core::{Direction, Packet, Time};

/// Built-in elements plus a boxed slot for experiments.
pub enum AnyElement {
    Link(Box<Link>),
    Delay(DelayLine),
    Loss(LossElement),
    Custom(Box<dyn NetElement + Send + Sync>),
}

impl NetElement for AnyElement {
    #[inline]
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput) {
        match self {
            AnyElement::Link(e) => e.handle_packet(now, dir, pkt, out),
            AnyElement::Delay(e) => e.handle_packet(now, dir, pkt, out),
            AnyElement::Loss(e) => e.handle_packet(now, dir, pkt, out),
            AnyElement::Custom(e) => e.handle_packet(now, dir, pkt, out),
        }
    }
    #[inline]
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        match self {
            AnyElement::Link(e) => e.handle_timeout(now, out),
            AnyElement::Delay(e) => e.handle_timeout(now, out),
            AnyElement::Loss(e) => e.handle_timeout(now, out),
            AnyElement::Custom(e) => e.handle_timeout(now, out),
        }
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        match self {
            AnyElement::Link(e) => e.poll_timeout(),
            AnyElement::Delay(e) => e.poll_timeout(),
            AnyElement::Loss(e) => e.poll_timeout(),
            AnyElement::Custom(e) => e.poll_timeout(),
        }
    }
    fn observe_dequeue(&mut self, now: Time, rec: &DequeueRecord) {
        if let AnyElement::Custom(e) = self {
            e.observe_dequeue(now, rec)
        }
    }
    fn observe_drop(
        &mut self,
        now: Time,
        pkt: &rtclab_core::Packet,
        payloads: &rtclab_core::Payloads,
    ) {
        if let AnyElement::Custom(e) = self {
            e.observe_drop(now, pkt, payloads)
        }
    }
    fn metrics(&self) -> Vec<(&'static str, f64)> {
        match self {
            AnyElement::Custom(e) => e.metrics(),
            _ => Vec::new(),
        }
    }
    fn made_and_absorbed(&self) -> MadeAbsorbed {
        match self {
            AnyElement::Custom(e) => e.made_and_absorbed(),
            _ => MadeAbsorbed::default(),
        }
    }
    fn held_by_kind(&self) -> (u64, u64) {
        match self {
            AnyElement::Link(e) => e.held_by_kind(),
            AnyElement::Delay(e) => e.held_by_kind(),
            AnyElement::Loss(e) => e.held_by_kind(),
            AnyElement::Custom(e) => e.held_by_kind(),
        }
    }
}
