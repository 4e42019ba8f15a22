//! The interface between a controller factory and the engines: what a factory gets for one
//! flow ([`ControllerArgs`]) and what it returns ([`BoxedController`]). Built-in controllers
//! built through the generic path (`capabilities::BUILTIN`) and registered ones
//! (`registry`) share it.

use crate::CongestionController;
use rtclab_core::params::Value;
use std::sync::Arc;

/// A controller built by a factory.
pub type BoxedController = Box<dyn CongestionController + Send + Sync>;

/// The flows a controller serves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A TCP-like sender: the controller answers a window and/or a pacing rate.
    Window,
    /// A media sender: the controller answers a target rate.
    Media,
}

/// What a factory gets for one flow.
#[derive(Clone, Copy, Debug)]
pub struct ControllerArgs<'a> {
    pub flow: u32,
    pub role: Role,
    /// Bytes on the wire per full packet.
    pub packet_size: u32,
    /// Initial window in packets (window role).
    pub initial_window: u32,
    /// `[flows.params]` as given (the factory rejects names it does not know).
    pub params: &'a [(String, Value)],
    /// A seed from the flow's own random stream (`flow<N>.cc`), for controllers that draw.
    pub seed: u64,
    /// A media flow's encoder range and ECN setting (None for tcp flows).
    pub media: Option<MediaArgs>,
}

/// What a media controller may take from its flow's `media` table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MediaArgs {
    /// `media.min_bitrate`, `start_bitrate`, `max_bitrate`, bit/s.
    pub min_bps: f64,
    pub start_bps: f64,
    pub max_bps: f64,
    /// `media.ecn`: the packets' ECN field.
    pub ecn: rtclab_core::Ecn,
}

pub type Factory = Arc<dyn Fn(&ControllerArgs) -> Result<BoxedController, String> + Send + Sync>;
