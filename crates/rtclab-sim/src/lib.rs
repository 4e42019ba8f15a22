//! The discrete-event simulator: one thread, integer-nanosecond virtual time, events ordered
//! by (time, insertion sequence), timers cancelled by generation counters.
//!
//! It wires a [`rtclab_scenario::Scenario`] into a dumbbell of sans-IO network elements
//! (loss -> bottleneck link -> per-flow delay, each direction) and sans-IO endpoints, runs it,
//! and collects streaming metrics. Same scenario + same seed => bit-identical results.

pub mod event;
pub mod metrics;
pub mod simulation;

pub use metrics::{Columns, RunOutput};
pub use simulation::{media_endpoints, Simulation};
