//! rtclab network elements, sans-IO: every element takes `now` as an argument and reports its
//! next wake-up through `poll_timeout`. The same objects run in the simulator and the emulator.
//!
//! Invariants: conservation — every packet handed to an element is, at any time, either held by
//! it, forwarded, or reported dropped with a reason; no element reorders packets of one flow
//! (delay jitter is applied without reordering).

pub mod accounting;
pub mod any_element;
pub mod any_qdisc;
pub mod capacity;
pub mod conditions;
pub mod delay;
pub mod element;
pub mod link;
pub mod loss;
pub mod middleboxes;
pub mod qdisc;
pub mod queues;
pub mod trace_file;
pub mod wifi;

pub use any_element::AnyElement;
pub use any_qdisc::AnyQdisc;
pub use capacity::CapacityModel;
pub use conditions::{ConditionsLine, PathTrace};
pub use delay::DelayLine;
pub use element::{DequeueRecord, Dropped, ElementOutput, Marked, NetElement};
pub use link::Link;
pub use loss::{LossElement, LossModel};
pub use qdisc::{Backlog, Dequeued, DropReason, Qdisc, QueueLimit};
pub use queues::droptail::DropTail;
pub use trace_file::{parse_bandwidth_trace, parse_mahimahi_trace, TraceError};
pub use wifi::{WifiConfig, WifiMac, WifiStats};
