//! Network elements and their dispatch enum.
//!
//! An element receives packets with `handle_packet(now, dir, pkt, out)`, releases packets it
//! holds when the engine calls `handle_timeout(now, out)` at or after `poll_timeout()`, and
//! reports drops in `out`. An element may sit on both directions of a path (a middlebox that
//! sees data one way and feedback the other): it is told the direction of every packet.
//! Spurious wake-ups (a `handle_timeout` before anything is due) must be harmless.

use crate::delay::DelayLine;
use crate::link::Link;
use crate::loss::LossElement;
use crate::qdisc::DropReason;
use rtclab_core::{Direction, Packet, Time};

#[derive(Clone, Copy, Debug)]
pub struct Dropped {
    pub pkt: Packet,
    pub reason: DropReason,
}

/// What an element produced in one call; the engine drains it after every call.
#[derive(Debug, Default)]
pub struct ElementOutput {
    pub packets: Vec<Packet>,
    pub drops: Vec<Dropped>,
}

impl ElementOutput {
    pub fn clear(&mut self) {
        self.packets.clear();
        self.drops.clear();
    }
}

pub trait NetElement {
    fn handle_packet(&mut self, now: Time, dir: Direction, pkt: Packet, out: &mut ElementOutput);
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput);
    fn poll_timeout(&self) -> Option<Time>;
}

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
}
