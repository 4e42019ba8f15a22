//! rtclab core types shared by every algorithm crate and both engines.
//!
//! Invariants: no clock is read here (time is always an argument), no ambient randomness
//! (every random stream derives from a run's root seed and a stable label).

pub mod endpoint;
pub mod histogram;
pub mod packet;
pub mod params;
pub mod ranges;
pub mod rng;
pub mod time;
pub mod units;

pub use endpoint::{
    Endpoint, EndpointEvent, FrameStages, Payload, Payloads, Transmit, FRAME_STAGES,
};
pub use histogram::LogHistogram;
pub use packet::{Direction, Ecn, FlowId, Packet, PacketInfo, PacketKind, SackBlocks};
pub use rng::{RngStream, SeedTree};
pub use time::{earliest, Time, TimeDelta};
pub use units::{DataSize, Rate};
