//! `AnyQdisc`: drop-tail without a virtual call, every other registered discipline boxed. In
//! its own file (as `AnyElement`), so that the `Qdisc` trait's file does not import the
//! disciplines that implement it.

use crate::element::ElementOutput;
use crate::qdisc::{Backlog, Dequeued, Qdisc};
use crate::queues::droptail::DropTail;
use rtclab_core::{Packet, Time};

pub enum AnyQdisc {
    DropTail(DropTail),
    /// Any other registered discipline.
    Other(Box<dyn Qdisc + Send + Sync>),
}

impl std::fmt::Debug for AnyQdisc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnyQdisc::DropTail(q) => q.fmt(f),
            AnyQdisc::Other(_) => f.write_str("AnyQdisc::Other"),
        }
    }
}

macro_rules! each {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::Other($q) => $e,
        }
    };
}

impl Qdisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, now: Time, pkt: Packet, out: &mut ElementOutput) {
        each!(self, q => q.enqueue(now, pkt, out))
    }
    #[inline]
    fn dequeue(&mut self, now: Time, out: &mut ElementOutput) -> Option<Dequeued> {
        each!(self, q => q.dequeue(now, out))
    }
    #[inline]
    fn backlog(&self) -> Backlog {
        each!(self, q => q.backlog())
    }
    fn held_by_kind(&self) -> (u64, u64) {
        each!(self, q => q.held_by_kind())
    }
    #[inline]
    fn poll_timeout(&self) -> Option<Time> {
        match self {
            AnyQdisc::DropTail(_) => None,
            AnyQdisc::Other(q) => q.poll_timeout(),
        }
    }
    fn handle_timeout(&mut self, now: Time, out: &mut ElementOutput) {
        each!(self, q => q.handle_timeout(now, out))
    }
    fn flow_class(&self, flow: rtclab_core::FlowId) -> Option<u8> {
        match self {
            AnyQdisc::DropTail(_) => None,
            AnyQdisc::Other(q) => q.flow_class(flow),
        }
    }
}

impl From<DropTail> for AnyQdisc {
    fn from(q: DropTail) -> Self {
        AnyQdisc::DropTail(q)
    }
}
