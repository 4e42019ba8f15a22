//! Learned bandwidth estimators for media flows: what the agent sees, an agent driven from
//! outside (the Gymnasium environment `rtclab/BandwidthEstimation-v0`), and a decision tree
//! from Metis driving a flow on its own (`cc = "tree"`).
//!
//! - [`obs`]: the observation of one step, from the per-packet transport feedback in the
//!   manner of the OpenNetLab gym (receive rate, delays, loss, the last estimate).
//! - [`agent`]: a controller whose estimate is set from outside between steps, with an
//!   optional shadow controller (e.g. GCC) fed the same feedback as a teacher.
//! - [`tree`]: a controller that evaluates a regression tree on the observation every step.

/// The estimate becomes the encoder's target; the pacer runs at 2.5 × the estimate, as
/// libwebrtc paces whatever its bandwidth estimator says (`kDefaultPaceMultiplier`; AlphaRTC's
/// learned estimators take GCC's place in the same pipeline).
pub const PACING_FACTOR: f64 = 2.5;

pub mod agent;
pub mod obs;
pub mod tree;
