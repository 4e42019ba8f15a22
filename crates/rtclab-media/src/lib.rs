//! The real-time media path, sans-IO. Components take `now` and return what to do; engines
//! (simulator, emulator) move the packets.
//!
//! - [`encoder::VideoEncoder`]: frames at a fixed rate whose sizes follow the target bitrate
//!   with encoder lag, size variation and periodic key frames, capped at a maximum bitrate.
//! - [`packetizer`]: frames into RTP-sized packets.
//! - [`pacer::Pacer`]: a leaky bucket at the pacing rate.
//! - [`history::SendHistory`]: transport-wide sequence numbers → send time and size; turns
//!   TWCC feedback into per-packet results for the controller.
//! - [`feedback::TwccGenerator`]: receiver-side transport-wide feedback at a fixed cadence.
//! - [`frames::FrameAssembler`]: frames completed at the receiver, their end-to-end delay,
//!   the received frame rate and stalls.

pub mod encoder;
pub mod feedback;
pub mod frames;
pub mod history;
pub mod pacer;
pub mod packetizer;
pub mod receiver;
pub mod sender;
