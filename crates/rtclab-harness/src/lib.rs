//! The engine-neutral layer between the algorithm crates and the two engines.
//!
//! A resolved [`Scenario`](rtclab_scenario::Scenario) is turned here, once, into what both
//! engines run: the network elements of every link and middlebox with each flow's route per
//! direction ([`network::Network`]), and each flow's endpoints and controllers
//! ([`endpoints`]). Random streams are labelled here, so the simulator and the emulator draw
//! the same numbers for the same scenario and seed. Nothing here reads a clock or does I/O.

pub mod endpoints;
pub mod error;
pub mod flow_meter;
pub mod flow_table;
pub mod link_meter;
pub mod measure;
pub mod media_meter;
pub mod network;
pub mod rfc8868;
pub mod summarize;
pub mod summary;

pub use error::BuildError;
pub use network::{HopRef, MeterInfo, Network, Role, NO_HOP};
