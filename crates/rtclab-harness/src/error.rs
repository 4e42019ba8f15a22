//! What can fail when a resolved scenario is built into elements and endpoints: only the
//! parts that come from outside the scenario layer's checks (a middlebox's or a registered
//! flow kind's or controller's factory), each with where it happened. Both engines return it
//! (`Simulation::try_new`, the emulator's `EmuError::Build`).

/// A failure to build a checked scenario, with its place.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// The `index`-th `[[middleboxes]]` entry's factory refused its settings.
    #[error("middleboxes[{index}]: {error}")]
    Middlebox { index: usize, error: rtclab_core::params::SettingsError },
    /// A registered flow kind's factory failed for flow `flow` (its name).
    #[error("flow {flow:?}: {message}")]
    FlowKind { flow: String, message: String },
    /// A registered controller's factory failed for flow `flow` (its id).
    #[error("flow {flow}: controller {name:?}: {error}")]
    Controller { flow: u32, name: &'static str, error: rtclab_cc::registry::ControllerError },
    /// The media flow's frame-rate control (AFR or a baseline) refused its settings.
    #[error("flow {flow}: frame_rate_control: {message}")]
    FrameRateControl { flow: u32, message: String },
}
