//! The real-time media path, sans-IO. Components take `now` and return what to do; engines
//! (simulator, emulator) move the packets.
//!
//! - [`encoder::VideoEncoder`]: frames at a fixed rate whose sizes follow the target bitrate
//!   with encoder lag, size variation and periodic key frames, capped at a maximum bitrate.
//!   [`libvpx_rate`], [`bitrate_adjuster`], [`quality_scaler`] and [`resolution`] make it a
//!   real stack's (libvpx VP8 rate control, libwebrtc's bitrate adjuster and its resolution
//!   adaptation under `MAINTAIN_FRAMERATE`).
//! - [`packetizer`]: frames into RTP-sized packets.
//! - [`pacer::Pacer`]: a leaky bucket at the pacing rate (optionally in 5 ms bursts) that
//!   also runs probe clusters, with padding when there is no media.
//! - [`history::SendHistory`]: transport-wide sequence numbers → send time, size and probe
//!   cluster; turns feedback into per-packet results and tracks the bytes in flight.
//! - [`feedback::TwccGenerator`]: receiver-side transport-wide feedback at a fixed cadence.
//! - [`ccfb`]: RFC 8888 feedback, generator (receiver) and adapter (sender).
//! - [`rtx::Retransmitter`]: resends media packets the feedback reports lost (NACK + RTX)
//!   while the RTT is short enough.
//! - [`protection`]: the sender's loss protection policy (FEC amount, retransmission), chosen
//!   in the scenario, separate from congestion control.
//! - [`playout`]: the receiver's stages after assembly — jitter buffer, decoder, display —
//!   with a playout policy and a decoder model as hooks, and each shown frame's latency
//!   breakdown.
//! - [`jitter_estimator`]: WebRTC's jitter estimate and the adaptive playout delay.
//! - [`quality`]: a documented picture-quality proxy from bitrate and resolution.
//! - [`rtp_codec`]: media packets and feedback as RTP/RTCP bytes (the emulator's wire).
//! - [`window`]: window-based controllers (NewReno, CUBIC, Copa, BBR, QLibra) on media flows.
//! - [`frames::FrameAssembler`]: frames completed at the receiver, their end-to-end delay,
//!   the received frame rate and stalls.

pub mod abc;
pub mod afr;
pub mod bitrate_adjuster;
pub mod ccfb;
pub mod decoder;
pub mod encoder;
pub mod fec_bytes;
pub mod feedback;
pub mod feedback_access;
pub mod frames;
pub mod history;
pub mod jitter_estimator;
pub mod libvpx_rate;
pub mod middleboxes;
pub mod pacer;
pub mod packetizer;
pub mod playout;
pub mod protection;
pub mod quality;
pub mod quality_scaler;
pub mod receiver;
pub mod resolution;
pub mod rtp_codec;
pub mod rtx;
pub mod sender;
pub mod table_protection;
pub mod window;
pub mod zhuge;
