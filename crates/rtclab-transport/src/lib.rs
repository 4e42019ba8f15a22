//! Sans-IO transport endpoints: a TCP-like reliable bulk sender/receiver (packet-numbered,
//! cumulative ACKs, NewReno loss recovery, RFC 6298 RTO) and a constant-bitrate UDP source.
//!
//! Shape (str0m / quinn-proto style): inputs `handle_*(now, ...)`, outputs `poll_transmit`,
//! next wake-up `poll_timeout`. Engines drain `poll_transmit` after every input.

pub mod cbr;
pub mod flows;
pub mod hairpin;
pub mod rtt;
pub mod tcp_receiver;
pub mod tcp_sender;
pub mod tcp_video;

pub use cbr::{CbrConfig, CbrSender, DatagramSink};
pub use rtt::RttEstimator;
pub use tcp_receiver::{TcpReceiver, TcpReceiverConfig};
pub use tcp_sender::{TcpSender, TcpSenderConfig, TcpSenderStats};
pub use tcp_video::{TcpVideoApp, TcpVideoConfig};
