//! The built-in decoder models a media receiver is given (`media.decode_time`): none, a fixed
//! time per frame, or a device class's decode-time process from the AFR chapter
//! (`afr/clients.rs`). Apart from `playout.rs`, which only knows the [`DecoderModel`] contract,
//! so that the receiver's pipeline does not import the AFR paper's client categories.

use crate::afr::clients::{ClientCategory, DeviceDecoder};
use crate::playout::{AssembledFrame, DecoderModel};
use rtclab_core::{Time, TimeDelta};

/// Built-in decoder models.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DecodeTime {
    Zero,
    Fixed(TimeDelta),
    /// A device class's decode-time process (AFR chapter, `crate::afr::clients`).
    Device(ClientCategory),
}

/// A constant decode time.
struct ConstantDecoder(TimeDelta);

impl DecoderModel for ConstantDecoder {
    fn decode_time(&mut self, _now: Time, _f: &AssembledFrame) -> TimeDelta {
        self.0
    }
}

impl DecodeTime {
    /// The decoder model (`rng`: the draws of a device class).
    pub fn model(self, rng: rtclab_core::RngStream) -> Box<dyn DecoderModel> {
        match self {
            DecodeTime::Zero => Box::new(ConstantDecoder(TimeDelta::ZERO)),
            DecodeTime::Fixed(d) => Box::new(ConstantDecoder(d)),
            DecodeTime::Device(c) => Box::new(DeviceDecoder::new(c, rng)),
        }
    }
}
